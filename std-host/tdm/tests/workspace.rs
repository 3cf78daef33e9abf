//! The operator's workflow through the built `tdm` binary: hub install (verified, never run),
//! approval bound to hash and permissions, call, revoke, update, status, uninstall, and a state
//! file that survives concurrent writers and processes killed mid-write.

use serde_json::Value;
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn tdm(workspace: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .arg("--workspace")
        .arg(workspace)
        .stdin(Stdio::null())
        .output()
        .expect("tdm runs")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// A plugin whose start function prints MARKER and logs MARKER through a host call, and whose
/// intents answer `{"ok":true}`: if install ran any plugin code, the marker would show.
const MARKED: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "tdm" "tdm_host_call" (func $host_call (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "MARKER-START-RAN\n")
  (data (i32.const 64) "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"log\",\"params\":{\"level\":\"info\",\"message\":\"MARKER-START-RAN\"}}")
  (data (i32.const 256) "\2b\00\00\00{\"status\":\"completed\",\"output\":{\"ok\":true}}")
  (func $start
    (i32.store (i32.const 200) (i32.const 0)) (i32.store (i32.const 204) (i32.const 17))
    (drop (call $fd_write (i32.const 1) (i32.const 200) (i32.const 1) (i32.const 208)))
    (drop (call $host_call (i32.const 64) (i32.const 94))))
  (start $start)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 4096)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 256))"#;

fn hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes a package folder `DIR/NAME` with a WAT module; returns its hash.
fn package(dir: &Path, name: &str, id: &str, version: &str, module: &str, permissions: &[&str], extra: &str) -> String {
    let root = dir.join(name);
    std::fs::create_dir_all(root.join("dist")).unwrap();
    std::fs::write(root.join("dist/plugin.wat"), module).unwrap();
    let hash = hex(module.as_bytes());
    let perms: Vec<String> = permissions.iter().map(|p| format!("\"{p}\"")).collect();
    let manifest = format!(
        "id = \"{id}\"\nversion = \"{version}\"\nname = \"{id}\"\ndescription = \"test plugin\"\nmodule = \"dist/plugin.wat\"\nsha256 = \"{hash}\"\npermissions = [{}]\n{extra}\n[[intents]]\nname = \"ping\"\ndescription = \"answers ok\"\n",
        perms.join(", ")
    );
    std::fs::write(root.join("plugin.toml"), manifest).unwrap();
    hash
}

struct Hub {
    dir: tempfile::TempDir,
    entries: Vec<Value>,
}

impl Hub {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap(), entries: Vec::new() }
    }
    fn add(&mut self, id: &str, version: &str, module: &str, permissions: &[&str], price: Value) -> String {
        let name = format!("{id}-{version}");
        let hash = package(self.dir.path(), &name, id, version, module, permissions, "");
        self.entries
            .push(serde_json::json!({"id": id, "version": version, "sha256": hash, "price": price, "path": name}));
        std::fs::write(self.dir.path().join("index.json"), serde_json::json!({"plugins": self.entries}).to_string())
            .unwrap();
        hash
    }
    fn path(&self) -> String {
        self.dir.path().display().to_string()
    }
}

fn status(workspace: &Path) -> Value {
    let out = tdm(workspace, &["workspace", "status", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    serde_json::from_slice(&out.stdout).expect("status is JSON")
}

fn state_of(workspace: &Path, id: &str) -> String {
    let status = status(workspace);
    let plugins = status["plugins"].as_array().cloned().unwrap_or_default();
    plugins.iter().find(|p| p["id"] == id).map_or("absent".into(), |p| p["state"].as_str().unwrap_or("").to_string())
}

fn call(workspace: &Path, id: &str) -> (Output, Value) {
    let out = tdm(workspace, &["call", id, "ping"]);
    let outcome = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, outcome)
}

#[test]
fn install_approve_call_revoke_and_uninstall() {
    let mut hub = Hub::new();
    hub.add("marked", "1.0.0", MARKED, &[], "free".into());
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path();

    let listed = Command::new(env!("CARGO_BIN_EXE_tdm")).args(["hub", "list", "--hub", &hub.path()]).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("marked"));

    let installed = tdm(ws, &["install", "--allow-unsigned", "marked", "--hub", &hub.path()]);
    assert_eq!(installed.status.code(), Some(0), "{}", text(&installed));
    assert!(!text(&installed).contains("MARKER"), "install ran plugin code");
    assert_eq!(state_of(ws, "marked"), "installed");
    assert!(ws.join("packages/marked/1.0.0/plugin.toml").is_file());

    let (out, outcome) = call(ws, "marked");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(outcome["blockedReason"], "not_approved");
    assert!(!text(&out).contains("MARKER"), "a refused call ran plugin code");
    assert!(
        !ws.join("audit.jsonl").exists() || !std::fs::read_to_string(ws.join("audit.jsonl")).unwrap().contains("log")
    );

    let refused = tdm(ws, &["approve", "marked"]);
    assert_eq!(refused.status.code(), Some(2), "no terminal and no --yes: {}", text(&refused));
    assert_eq!(state_of(ws, "marked"), "installed");

    let approved = tdm(ws, &["approve", "marked", "--yes"]);
    assert_eq!(approved.status.code(), Some(0), "{}", text(&approved));
    assert!(text(&approved).contains("sha256"));
    assert_eq!(state_of(ws, "marked"), "approved");

    let (out, outcome) = call(ws, "marked");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(outcome["output"]["ok"], true);
    assert!(text(&out).contains("MARKER-START-RAN"), "the launch runs the start function (the marker works)");
    let row = &status(ws)["plugins"][0];
    assert_eq!(row["lastCall"]["status"], "completed");
    assert!(row["lastCall"]["fuelUsed"].as_u64().unwrap() > 0);
    assert!(status(ws)["auditLogBytes"].as_u64().unwrap() > 0, "the start function's log call was audited");

    assert_eq!(tdm(ws, &["revoke", "marked"]).status.code(), Some(0));
    assert_eq!(state_of(ws, "marked"), "revoked");
    assert_eq!(call(ws, "marked").1["blockedReason"], "not_approved");

    let audit_before = std::fs::read(ws.join("audit.jsonl")).unwrap();
    assert_eq!(tdm(ws, &["uninstall", "marked"]).status.code(), Some(0));
    assert_eq!(state_of(ws, "marked"), "absent");
    assert!(!ws.join("packages/marked").exists());
    let audit_after = std::fs::read(ws.join("audit.jsonl")).unwrap();
    assert!(audit_after.starts_with(&audit_before), "the audit log is kept");
    // Every operator action and refused launch was recorded beside the host calls, in order.
    let actions: Vec<String> = String::from_utf8(audit_after)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["kind"] == "operator")
        .map(|e| format!("{}{}", e["action"].as_str().unwrap(), if e["granted"] == false { ":refused" } else { "" }))
        .collect();
    assert_eq!(
        actions,
        ["install", "refused_launch:refused", "approve", "revoke", "refused_launch:refused", "uninstall"],
        "{actions:?}"
    );
    // tdm audit filters them: operator records only, refusals only (both kinds), since a time.
    let operator = text(&tdm(ws, &["audit", "--operator"]));
    assert!(
        operator.contains("approve") && operator.contains("REFUSED") && !operator.contains("granted"),
        "{operator}"
    );
    let denied = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["audit", "--denied", "--json", "--workspace"])
        .arg(ws)
        .output()
        .unwrap();
    let denied: Vec<Value> =
        String::from_utf8(denied.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(denied.len(), 2, "{denied:?}");
    assert!(denied.iter().all(|e| e["granted"] == false && e["reason"] == "not_approved"), "{denied:?}");
    let host = text(&tdm(ws, &["audit", "--host"]));
    assert!(!host.contains("REFUSED") && host.contains("granted"), "{host}");
    let later = tdm(ws, &["audit", "--since", "9999"]);
    assert!(text(&later).contains("no audit record matches the filters"), "{}", text(&later));
}

#[test]
fn a_tampered_module_is_refused_and_nothing_is_written() {
    let mut hub = Hub::new();
    hub.add("victim", "1.0.0", MARKED, &[], "free".into());
    std::fs::write(hub.dir.path().join("victim-1.0.0/dist/plugin.wat"), MARKED.replace("MARKER", "EVILER")).unwrap();
    let ws = tempfile::tempdir().unwrap();
    let out = tdm(ws.path(), &["install", "--allow-unsigned", "victim", "--hub", &hub.path()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("hash mismatch"), "{}", text(&out));
    assert!(!ws.path().join("state.json").exists());
    assert_eq!(std::fs::read_dir(ws.path().join("packages")).unwrap().count(), 0);
}

#[test]
fn a_new_version_or_wider_permissions_void_the_approval() {
    let mut hub = Hub::new();
    hub.add("p", "1.0.0", MARKED, &["context:read"], "free".into());
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path();
    assert_eq!(tdm(ws, &["install", "--allow-unsigned", "p@1.0.0", "--hub", &hub.path()]).status.code(), Some(0));
    assert_eq!(tdm(ws, &["approve", "p", "--yes"]).status.code(), Some(0));
    assert_eq!(status(ws)["plugins"][0]["granted"], serde_json::json!(["context:read"]));

    // The same package again keeps the approval.
    assert_eq!(tdm(ws, &["install", "--allow-unsigned", "p@1.0.0", "--hub", &hub.path()]).status.code(), Some(0));
    assert_eq!(state_of(ws, "p"), "approved");

    // A new module voids it.
    hub.add("p", "1.1.0", &MARKED.replace("ok", "OK"), &["context:read"], "free".into());
    let out = tdm(ws, &["install", "--allow-unsigned", "p@1.1.0", "--hub", &hub.path()]);
    assert!(text(&out).contains("approve it again"), "{}", text(&out));
    assert_eq!(state_of(ws, "p"), "installed");
    assert_eq!(call(ws, "p").1["blockedReason"], "not_approved");

    // Approve, then a package asking for one more permission voids it too.
    assert_eq!(tdm(ws, &["approve", "p", "--yes"]).status.code(), Some(0));
    let dir = tempfile::tempdir().unwrap();
    package(dir.path(), "wider", "p", "1.1.0", &MARKED.replace("ok", "OK"), &["context:read", "vault:read"], "");
    let out = tdm(ws, &["install", "--allow-unsigned", &dir.path().join("wider").display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(state_of(ws, "p"), "installed");
}

#[test]
fn status_shows_a_module_changed_on_disk_as_modified() {
    let mut hub = Hub::new();
    hub.add("s", "1.0.0", MARKED, &[], "free".into());
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path();
    tdm(ws, &["install", "--allow-unsigned", "s", "--hub", &hub.path()]);
    tdm(ws, &["approve", "s", "--yes"]);
    let before = status(ws);
    assert!(before["plugins"][0]["limits"]["fuelPerIntent"].is_u64(), "{before}");
    std::fs::write(ws.join("packages/s/1.0.0/dist/plugin.wat"), MARKED.replace("ok", "ko")).unwrap();
    assert_eq!(state_of(ws, "s"), "modified");
    // The package no longer verifies: no limits or intents are shown for it (never the
    // defaults, which could read as more than was approved).
    let after = status(ws);
    assert!(after["plugins"][0]["limits"].is_null() && after["plugins"][0]["intents"].is_null(), "{after}");
    let table = String::from_utf8_lossy(&tdm(ws, &["workspace", "status"]).stdout).into_owned();
    assert!(table.contains("modified"), "{table}");
    assert!(!table.contains("fuel=2000000000"), "{table}");
    let (out, outcome) = call(ws, "s");
    assert_eq!(outcome["blockedReason"], "not_approved");
    assert!(!text(&out).contains("MARKER"));
}

#[test]
fn a_paid_plugin_needs_the_price_accepted_and_still_waits_for_approval() {
    let mut hub = Hub::new();
    hub.add("paid", "1.0.0", MARKED, &[], serde_json::json!({"amount": "4.99", "currency": "USD"}));
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path();
    let out = tdm(ws, &["install", "--allow-unsigned", "paid", "--hub", &hub.path()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("4.99 USD"), "{}", text(&out));
    assert_eq!(state_of(ws, "paid"), "absent");
    let out = tdm(ws, &["install", "--allow-unsigned", "paid", "--hub", &hub.path(), "--accept-price"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!text(&out).contains("MARKER"));
    assert_eq!(state_of(ws, "paid"), "installed");
}

#[test]
fn manifests_are_parsed_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &str, &str); 4] = [
        ("unknown", &[], "homepage = \"x\"", "unknown field"),
        ("badperm", &["network:"], "", "invalid permission"),
        ("toomuch", &[], "[policy]\nmax_memory_bytes = 134217728", "above the default"),
        ("fine", &[], "[policy]\nmax_memory_bytes = 1048576", ""),
    ];
    for (name, perms, extra, expected) in cases {
        package(dir.path(), name, name, "1.0.0", MARKED, perms, extra);
        let out = tdm(ws.path(), &["install", "--allow-unsigned", &dir.path().join(name).display().to_string()]);
        if expected.is_empty() {
            assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out));
            let row = &status(ws.path())["plugins"][0];
            assert_eq!(row["limits"]["maxMemoryBytes"], 1_048_576);
        } else {
            assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out));
            assert!(text(&out).contains(expected), "{name}: {}", text(&out));
        }
    }
    std::fs::remove_file(dir.path().join("fine/dist/plugin.wat")).unwrap();
    let out = tdm(ws.path(), &["install", "--allow-unsigned", &dir.path().join("fine").display().to_string()]);
    assert!(text(&out).contains("is missing"), "{}", text(&out));
}

#[test]
fn a_state_file_that_does_not_parse_is_reported_and_kept() {
    let mut hub = Hub::new();
    hub.add("x", "1.0.0", MARKED, &[], "free".into());
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("state.json"), "{ not json").unwrap();
    let out = tdm(ws.path(), &["install", "--allow-unsigned", "x", "--hub", &hub.path()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("does not parse"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(ws.path().join("state.json")).unwrap(), "{ not json");
}

fn parsed_state(ws: &Path) -> Option<Value> {
    let bytes = std::fs::read(ws.join("state.json")).ok()?;
    Some(serde_json::from_slice(&bytes).expect("the state file always parses"))
}

#[test]
fn concurrent_installs_leave_a_valid_state() {
    let mut hub = Hub::new();
    let ids: Vec<String> = (0..8).map(|i| format!("c{i}")).collect();
    for id in &ids {
        hub.add(id, "1.0.0", MARKED, &[], "free".into());
    }
    let ws = tempfile::tempdir().unwrap();
    let children: Vec<_> = ids
        .iter()
        .map(|id| {
            Command::new(env!("CARGO_BIN_EXE_tdm"))
                .args(["install", "--allow-unsigned", id, "--hub", &hub.path(), "--workspace"])
                .arg(ws.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let state = parsed_state(ws.path()).expect("a state was written");
    for id in &ids {
        assert!(state["plugins"].get(id).is_some(), "{id} lost by a concurrent writer");
    }
}

#[test]
fn a_process_killed_while_writing_never_leaves_a_corrupt_state() {
    let mut hub = Hub::new();
    for i in 0..4 {
        hub.add(&format!("k{i}"), "1.0.0", MARKED, &[], "free".into());
    }
    let ws = tempfile::tempdir().unwrap();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..40 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
            .args(["install", "--allow-unsigned", &format!("k{}", round % 4), "--hub", &hub.path(), "--workspace"])
            .arg(ws.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros(seed % 20_000));
        let _ = child.kill();
        let _ = child.wait();
        if let Some(state) = parsed_state(ws.path()) {
            assert!(state["plugins"].is_object(), "round {round}: {state}");
        }
    }
    // The workspace still works after all that.
    let out = tdm(ws.path(), &["install", "--allow-unsigned", "k0", "--hub", &hub.path()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(state_of(ws.path(), "k0"), "installed");
}

#[test]
fn call_of_an_unknown_plugin_runs_nothing_and_says_it_is_not_installed() {
    let ws = tempfile::tempdir().unwrap();
    let (out, outcome) = call(ws.path(), "ghost");
    assert_eq!(out.status.code(), Some(2), "an id that names nothing is a usage error");
    assert!(outcome.is_null(), "no outcome: nothing ran");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no plugin `ghost` is installed"));
    let _ = PathBuf::new();
}

#[test]
fn the_repl_runs_an_approved_plugin_from_piped_stdin() {
    use std::io::Write;
    let mut hub = Hub::new();
    hub.add("r", "1.0.0", MARKED, &[], "free".into());
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path();
    tdm(ws, &["install", "--allow-unsigned", "r", "--hub", &hub.path()]);
    let refused = tdm(ws, &["repl", "r"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stdout).contains("not_approved"));

    tdm(ws, &["approve", "r", "--yes"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["repl", "r", "--workspace"])
        .arg(ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"ping {}\n:intents\n:reset\nping\n:quit\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    assert_eq!(lines.len(), 5, "one line per entry: {}", text(&out));
    assert!([&lines[0], &lines[3]].iter().all(|l| l["output"]["ok"] == true));
    assert_eq!(lines[1]["intents"][0]["name"], "ping", "intents from plugin.toml are listed");
    assert_eq!(lines[1]["intents"][0]["description"], "answers ok");
}

#[test]
fn commands_that_only_read_a_workspace_never_create_it() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo-dir");
    for args in [
        vec!["workspace", "status"],
        vec!["workspace", "status", "--json"],
        vec!["call", "ghost", "ping"],
        vec!["approve", "ghost", "--yes"],
        vec!["revoke", "ghost"],
        vec!["uninstall", "ghost"],
    ] {
        let out = tdm(&typo, &args);
        // 0 for status, 2 for an id that names nothing: never a crash.
        assert!(matches!(out.status.code(), Some(0 | 2)), "{args:?}: {out:?}");
        assert!(!typo.exists(), "{args:?} created the workspace folder");
    }
}

#[test]
fn the_default_workspace_is_the_platform_data_folder_and_the_variable_shows_in_help() {
    let home = tempfile::tempdir().unwrap();
    let where_is = |envs: &[(&str, &str)]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tdm"));
        command.args(["workspace", "status", "--json"]).env_remove("TDM_WORKSPACE").env_remove("XDG_DATA_HOME");
        command.env("HOME", home.path());
        for (name, value) in envs {
            command.env(name, value);
        }
        let out = command.stdin(Stdio::null()).output().expect("tdm runs");
        let status: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
        PathBuf::from(status["workspace"].as_str().unwrap())
    };
    // Linux's rule (XDG): $XDG_DATA_HOME/tdm, else ~/.local/share/tdm.
    assert_eq!(where_is(&[]), home.path().join(".local/share/tdm"));
    let xdg = home.path().join("data");
    assert_eq!(where_is(&[("XDG_DATA_HOME", xdg.to_str().unwrap())]), xdg.join("tdm"));
    // TDM_WORKSPACE is clap's, and an empty one is unset.
    assert_eq!(where_is(&[("TDM_WORKSPACE", "/tmp/elsewhere")]), PathBuf::from("/tmp/elsewhere"));
    assert_eq!(where_is(&[("TDM_WORKSPACE", "")]), home.path().join(".local/share/tdm"));
    for command in [
        &["call", "--help"][..],
        &["workspace", "status", "--help"],
        &["mcp", "--help"],
        &["install", "--allow-unsigned", "--help"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tdm")).args(command).output().expect("tdm runs");
        assert!(text(&out).contains("[env: TDM_WORKSPACE"), "{command:?}: {}", text(&out));
    }
}

#[test]
fn approve_after_an_update_shows_what_changed_since_the_last_approval() {
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path();
    let dir = tempfile::tempdir().unwrap();
    package(dir.path(), "v1", "p", "1.0.0", MARKED, &["context:read"], "[policy]\nfuel_per_intent = 1000000\n");
    assert_eq!(
        tdm(ws, &["install", "--allow-unsigned", &dir.path().join("v1").display().to_string()]).status.code(),
        Some(0)
    );
    let first = text(&tdm(ws, &["approve", "p", "--yes"]));
    assert!(!first.contains("changed since"), "a first approval has nothing to compare: {first}");
    // Version 2: another module, one more permission, one more intent, the default fuel.
    let pong = "[[intents]]\nname = \"pong\"\ndescription = \"answers ok too\"\n";
    let v2 = MARKED.replace("ok", "OK");
    package(dir.path(), "v2", "p", "2.0.0", &v2, &["context:read", "vault:read"], pong);
    let out = tdm(ws, &["install", "--allow-unsigned", &dir.path().join("v2").display().to_string()]);
    assert!(text(&out).contains("`tdm approve p` shows what changed"), "{}", text(&out));
    // Installed again before an approval: the voided approval stays the base.
    assert_eq!(
        tdm(ws, &["install", "--allow-unsigned", &dir.path().join("v2").display().to_string()]).status.code(),
        Some(0)
    );
    let card = text(&tdm(ws, &["approve", "p", "--yes"]));
    let diff: Vec<&str> = card
        .lines()
        .skip_while(|l| !l.starts_with("changed since"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(diff.len(), 4, "{card}");
    assert_eq!(diff[0], "  + permission vault:read  (widens)");
    assert_eq!(diff[1], "  + intent pong  (widens)");
    assert!(diff[2].starts_with("  ~ module sha256 ") && diff[2].ends_with("(widens)"), "{card}");
    assert_eq!(diff[3], "  ~ limit fuel_per_intent: 1000000 -> the default  (widens)");
    // Approved: nothing has changed since.
    let again = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["approve", "p", "--yes", "--json", "--workspace"])
        .arg(ws)
        .output()
        .unwrap();
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["changes"], serde_json::json!([]), "{again}");
    // A narrower version: what it drops is shown, and does not widen.
    package(dir.path(), "v3", "p", "3.0.0", &v2, &["context:read"], "");
    assert_eq!(
        tdm(ws, &["install", "--allow-unsigned", &dir.path().join("v3").display().to_string()]).status.code(),
        Some(0)
    );
    let narrower = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["approve", "p", "--yes", "--json", "--workspace"])
        .arg(ws)
        .output()
        .unwrap();
    let narrower: Value = serde_json::from_slice(&narrower.stdout).unwrap();
    let changes: Vec<(String, bool)> = narrower["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["change"].as_str().unwrap().to_string(), c["widens"].as_bool().unwrap()))
        .collect();
    assert!(changes.contains(&("- permission vault:read".into(), false)), "{changes:?}");
    assert!(changes.contains(&("- intent pong".into(), false)), "{changes:?}");
}
