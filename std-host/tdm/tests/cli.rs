//! The `tdm` CLI contract, run against the built binary: stdout is one JSON outcome, exit codes
//! 0 / 1 / 2 for `run`, the module's own code (or 125+) for `exec`, and clear errors for every
//! kind of bad input.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tdm(args: &[&str]) -> Output {
    // A workspace of this test process's own, so no run touches the user's data directory.
    let workspace = std::env::temp_dir().join(format!("tdm-cli-tests-{}", std::process::id()));
    Command::new(env!("CARGO_BIN_EXE_tdm")).args(args).env("TDM_WORKSPACE", workspace).output().expect("tdm runs")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn echo() -> String {
    repo().join("examples/echo/echo.wat").display().to_string()
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures").join(name).display().to_string()
}

/// Parses stdout as exactly one JSON object (one line).
fn outcome(output: &Output) -> Value {
    let stdout = String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8");
    assert_eq!(stdout.lines().count(), 1, "stdout must be one outcome line: {stdout:?}");
    let value: Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert!(value.is_object());
    value
}

fn write_temp(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write temp file");
    path.display().to_string()
}

#[test]
fn run_echo_returns_its_params_and_exits_0() {
    let out = tdm(&["run", &echo(), "greet", "--params", r#"{"name":"Ada","n":[1,2]}"#]);
    assert_eq!(out.status.code(), Some(0));
    let value = outcome(&out);
    assert_eq!(value["status"], "completed");
    assert_eq!(value["output"], serde_json::json!({"name": "Ada", "n": [1, 2]}));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[plugin stdout] echo: answering one intent"), "{stderr}");
}

#[test]
fn params_default_to_an_empty_object() {
    let out = tdm(&["run", &echo(), "greet"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(outcome(&out)["output"], serde_json::json!({}));
}

/// A plugin whose intent loops forever.
const SPIN: &str = r#"(module (memory (export "memory") 1)
    (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
    (func (export "tdm_free") (param i32 i32))
    (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) (loop (br 0)) i32.const 0))"#;

#[test]
fn a_failed_intent_prints_the_outcome_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = write_temp(&dir, "spin.wat", SPIN.as_bytes());
    let out = tdm(&["run", &plugin, "spin", "--fuel", "100000"]);
    assert_eq!(out.status.code(), Some(1));
    let value = outcome(&out);
    assert_eq!(value["status"], "failed");
    assert_eq!(value["blockedReason"], "fuel_exhausted");
    assert_eq!(value["output"]["retryable"], false);
    assert!(value["message"].is_string() && value["recoveryHint"].is_string());
}

#[test]
fn the_wall_clock_deadline_stops_an_intent() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = write_temp(&dir, "spin.wat", SPIN.as_bytes());
    let out = tdm(&["run", &plugin, "spin", "--timeout", "0.2", "--fuel", "1000000000000"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(outcome(&out)["blockedReason"], "deadline_exceeded");
}

#[test]
fn load_time_rejections_are_failed_outcomes_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let random: Vec<u8> = (0..256u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let echo_bytes = wat::parse_file(echo()).unwrap();
    let cases = [
        ("empty.wasm", Vec::new(), "invalid_module"),
        ("random.wasm", random, "invalid_module"),
        ("truncated.wasm", echo_bytes[..echo_bytes.len() / 2].to_vec(), "invalid_module"),
        ("bad.wat", b"(module (func $f (result i32)))x".to_vec(), "invalid_module"),
        (
            "import.wat",
            br#"(module (import "env" "system" (func (param i32) (result i32))) (memory (export "memory") 1))"#
                .to_vec(),
            "import_not_allowed",
        ),
        ("noexports.wat", br#"(module (memory (export "memory") 1))"#.to_vec(), "abi_mismatch"),
    ];
    for (name, bytes, reason) in cases {
        let path = write_temp(&dir, name, &bytes);
        let out = tdm(&["run", &path, "x"]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert_eq!(outcome(&out)["blockedReason"], reason, "{name}");
    }
}

#[test]
fn usage_and_io_errors_exit_2_with_a_message() {
    let missing = tdm(&["run", "/nonexistent/plugin.wasm", "x"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(missing.stdout.is_empty());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read /nonexistent/plugin.wasm"));
    let cases: [&[&str]; 7] = [
        &["run", &echo(), "x", "--params", "{not json"],
        &["run", &echo(), "x", "--bogus"],
        &["run", &echo()],
        &["run", &echo(), "x", "--grant", "network:"],
        &["run", &echo(), "x", "--fuel", "lots"],
        &["run", &echo(), "x", "--timeout", "-1"],
        &["frobnicate"],
    ];
    for args in cases {
        let out = tdm(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn a_valid_grant_is_accepted() {
    let out = tdm(&["run", &echo(), "x", "--grant", "network:*.example.com", "--grant", "vault:read"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn seeded_runs_are_reproducible() {
    let a = tdm(&["run", &echo(), "x", "--seed", "7", "--params", r#"{"k":1}"#]);
    let b = tdm(&["run", &echo(), "x", "--seed", "7", "--params", r#"{"k":1}"#]);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn inspect_reports_imports_and_verdict() {
    let out = tdm(&["inspect", &echo(), "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let value = outcome(&out);
    assert_eq!(value["verdict"], "accepted");
    assert_eq!(value["imports"][0]["name"], "fd_write");
    assert_eq!(value["imports"][0]["allowed"], true);

    let dir = tempfile::tempdir().unwrap();
    let wat = r#"(module (import "wasi_snapshot_preview1" "path_open"
        (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
        (import "env" "system" (func (param i32) (result i32))) (memory (export "memory") 1))"#;
    let path = write_temp(&dir, "bad.wat", wat.as_bytes());
    let out = tdm(&["inspect", &path, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let value = outcome(&out);
    assert_eq!(value["verdict"], "rejected");
    let rejected: Vec<&Value> = value["imports"].as_array().unwrap().iter().filter(|i| i["allowed"] == false).collect();
    assert_eq!(rejected.len(), 2);
    let human = tdm(&["inspect", &path]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("REJECTED") && text.contains("verdict: rejected"), "{text}");
}

#[test]
fn inspect_says_whether_a_module_needs_simd_and_run_executes_it() {
    let simd = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/fixtures/trace_simd.wat");
    let simd = simd.to_str().unwrap();
    let out = tdm(&["inspect", simd, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(outcome(&out)["simd"], true);
    let text = String::from_utf8_lossy(&tdm(&["inspect", simd]).stdout).into_owned();
    assert!(text.contains("simd: needed"), "{text}");
    assert_eq!(outcome(&tdm(&["inspect", &echo(), "--json"]))["simd"], false);
    // The std host runs it (the lanes' values are the conformance trace's business).
    let run = tdm(&["run", simd, "lanes"]);
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(outcome(&run)["status"], "completed");
    // `--no-simd` refuses it at load, saying why; it never runs.
    let refused = tdm(&["run", simd, "lanes", "--no-simd"]);
    assert_eq!(refused.status.code(), Some(1));
    let value = outcome(&refused);
    assert_eq!(value["blockedReason"], "invalid_module");
    assert!(
        value["message"].as_str().unwrap().contains("It uses SIMD (v128 instructions), which the policy turns off"),
        "{value}"
    );
}

fn exec_files(root: &Path, args: &[&str]) -> Output {
    let fixture = fixture("files.wat");
    let root = root.display().to_string();
    let mut all = vec!["exec", "--dir", root.as_str(), fixture.as_str()];
    all.extend_from_slice(args);
    tdm(&all)
}

#[test]
fn exec_serves_a_read_only_directory_that_cannot_be_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("a.txt"), "hello file\n").unwrap();
    std::fs::write(tmp.path().join("outside.txt"), "host secret\n").unwrap();
    std::os::unix::fs::symlink(tmp.path().join("outside.txt"), root.join("abs-link")).unwrap();
    std::os::unix::fs::symlink("../outside.txt", root.join("rel-link")).unwrap();

    let cat = exec_files(&root, &["cat", "a.txt"]);
    assert_eq!(cat.status.code(), Some(0));
    assert_eq!(cat.stdout, b"hello file\n");
    assert_eq!(exec_files(&root, &["cat", "sub/../a.txt"]).stdout, b"hello file\n");

    const EPERM: i32 = 63;
    const ENOENT: i32 = 44;
    const EISDIR: i32 = 31;
    for escape in ["../outside.txt", "/etc/passwd", "abs-link", "rel-link", "sub/../../outside.txt"] {
        let out = exec_files(&root, &["cat", escape]);
        assert_eq!(out.status.code(), Some(EPERM), "{escape}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("host secret"), "{escape}");
    }
    assert_eq!(exec_files(&root, &["cat", "missing"]).status.code(), Some(ENOENT));
    assert_eq!(exec_files(&root, &["cat", "sub"]).status.code(), Some(EISDIR));
    assert_eq!(exec_files(&root, &["create", "sub"]).status.code(), Some(EISDIR), "a directory opened to write");
    assert_eq!(exec_files(&root, &["create", "new.txt"]).status.code(), Some(EPERM));
    assert_eq!(exec_files(&root, &["create", "a.txt"]).status.code(), Some(EPERM));
    assert_eq!(exec_files(&root, &["unlink", "a.txt"]).status.code(), Some(EPERM));
    assert!(root.join("a.txt").exists() && !root.join("new.txt").exists());
}

#[test]
fn exec_without_dir_preopens_nothing() {
    const EBADF: i32 = 8;
    let out = tdm(&["exec", &fixture("files.wat"), "--", "cat", "a.txt"]);
    assert_eq!(out.status.code(), Some(EBADF));
}

#[test]
fn exec_exit_codes_follow_the_module() {
    let dir = tempfile::tempdir().unwrap();
    let exit7 = r#"(module (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
        (memory (export "memory") 1) (func (export "_start") (call $exit (i32.const 7))))"#;
    let ok = r#"(module (memory (export "memory") 1) (func (export "_start")))"#;
    let trap = r#"(module (memory (export "memory") 1) (func (export "_start") unreachable))"#;
    let spin = r#"(module (memory (export "memory") 1) (func (export "_start") (loop (br 0))))"#;
    let bad = r#"(module (import "env" "f" (func)) (func (export "_start")))"#;
    assert_eq!(tdm(&["exec", &write_temp(&dir, "exit7.wat", exit7.as_bytes())]).status.code(), Some(7));
    assert_eq!(tdm(&["exec", &write_temp(&dir, "ok.wat", ok.as_bytes())]).status.code(), Some(0));
    let trapped = tdm(&["exec", &write_temp(&dir, "trap.wat", trap.as_bytes())]);
    assert_eq!(trapped.status.code(), Some(126));
    assert!(String::from_utf8_lossy(&trapped.stderr).contains("plugin_trap"));
    let spun = tdm(&["exec", "--fuel", "100000", &write_temp(&dir, "spin.wat", spin.as_bytes())]);
    assert_eq!(spun.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&spun.stderr).contains("fuel_exhausted"));
    let rejected = tdm(&["exec", &write_temp(&dir, "bad.wat", bad.as_bytes())]);
    assert_eq!(rejected.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&rejected.stderr).contains("import_not_allowed"));
}

#[test]
fn run_grants_host_intents_and_audit_prints_every_decision() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "s3cr3t-value-for-cli-test";
    let vault = write_temp(
        &dir,
        "vault.json",
        format!(r#"{{"secrets":{{"API_KEY":{{"value":"{secret}","created":"2026-01-01T00:00:00Z","allowedHosts":["api.example.com"]}}}}}}"#)
            .as_bytes(),
    );
    let audit = dir.path().join("audit.jsonl").display().to_string();
    let forward = fixture("forward.wat");
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"vault.read","params":{"name":"API_KEY"}}"#;
    let base =
        ["run", forward.as_str(), "forward", "--params", call, "--vault", vault.as_str(), "--audit", audit.as_str()];

    let denied = tdm(&base);
    assert_eq!(denied.status.code(), Some(0), "the plugin still answers");
    assert_eq!(outcome(&denied)["output"]["blockedReason"], "permission_denied");

    let mut granted_args = base.to_vec();
    granted_args.extend_from_slice(&["--grant", "vault:read"]);
    let granted = tdm(&granted_args);
    assert_eq!(granted.status.code(), Some(0));
    let value = outcome(&granted);
    assert_eq!(value["output"]["output"]["exists"], true, "{value}");
    assert_eq!(value["output"]["output"]["allowedHosts"][0], "api.example.com");

    let listed = tdm(&["audit", "--audit", &audit, "--json", "--plugin", "forward"]);
    assert_eq!(listed.status.code(), Some(0));
    let lines: Vec<Value> =
        String::from_utf8_lossy(&listed.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "one line per decision");
    assert_eq!(lines[0]["granted"], false);
    assert_eq!(lines[1]["granted"], true);
    assert_eq!(lines[1]["permission"], "vault:read");
    assert_eq!(lines[1]["hash"].as_str().map(str::len), Some(64));
    assert_eq!(tdm(&["audit", "--audit", &audit, "--json", "--plugin", "other"]).stdout, b"");

    let audit_text = std::fs::read_to_string(&audit).unwrap();
    for text in [
        String::from_utf8_lossy(&denied.stdout),
        String::from_utf8_lossy(&denied.stderr),
        String::from_utf8_lossy(&granted.stdout),
        String::from_utf8_lossy(&granted.stderr),
        String::from_utf8_lossy(&listed.stdout),
        audit_text.as_str().into(),
    ] {
        assert!(!text.contains(secret), "the secret leaked: {text}");
    }
}

#[test]
fn inspect_lists_the_host_imports_a_plugin_uses() {
    let out = tdm(&["inspect", &fixture("forward.wat"), "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let value = outcome(&out);
    assert_eq!(value["hostImports"], serde_json::json!(["tdm_host_call", "tdm_host_response"]));
    assert_eq!(outcome(&tdm(&["inspect", &echo(), "--json"]))["hostImports"], serde_json::json!([]));
}
