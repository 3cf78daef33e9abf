//! What `tdm install`, the hub index and the state file accept, through the built binary: a
//! package holds regular files and directories only, within its limits, checked before anything
//! is copied or read (1 GiB sparse files are refused at once and nothing is left behind); a hub
//! entry and a state entry are validated before any of their values is used.

use serde_json::{json, Value};
use sha2::Digest;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a command may take before it counts as blocked (generous: the point is that it stops).
const BLOCKED_AFTER: Duration = Duration::from_secs(60);

/// Runs `tdm ARGS` in workspace `WS`; kills it and fails if it has not ended in time.
fn tdm(workspace: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .env("TDM_WORKSPACE", workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdm runs");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BLOCKED_AFTER {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tdm {args:?} blocked for {BLOCKED_AFTER:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() }
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

const MODULE: &str = r#"(module
  (memory (export "memory") 1)
  (data (i32.const 256) "\2b\00\00\00{\"status\":\"completed\",\"output\":{\"ok\":true}}")
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 4096)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 256))"#;

fn hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes a package in `dir` whose module file `dist/NAME` holds `module` (hash `sha256`).
fn package_with(dir: &Path, name: &str, module: &[u8], sha256: &str) {
    std::fs::create_dir_all(dir.join("dist")).unwrap();
    std::fs::write(dir.join("dist").join(name), module).unwrap();
    let manifest = format!(
        "id = \"p\"\nversion = \"1.0.0\"\nname = \"p\"\ndescription = \"test\"\nmodule = \"dist/{name}\"\nsha256 = \"{sha256}\"\n"
    );
    std::fs::write(dir.join("plugin.toml"), manifest).unwrap();
}

fn package(dir: &Path) {
    package_with(dir, "plugin.wat", MODULE.as_bytes(), &hex(MODULE.as_bytes()));
}

fn install(ws: &Path, dir: &Path) -> Output {
    tdm(ws, &["install", "--allow-unsigned", &dir.display().to_string()])
}

/// Nothing of a refused install is left in the workspace.
fn assert_nothing_installed(ws: &Path) {
    assert!(!ws.join("state.json").exists(), "a state was written");
    let left: Vec<_> = std::fs::read_dir(ws.join("packages")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left in packages/: {left:?}");
}

fn refused(ws: &Path, dir: &Path, expected: &str) {
    let out = install(ws, dir);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains(expected), "expected {expected:?} in {}", text(&out));
    assert!(text(&out).contains("nothing was installed") || text(&out).contains("not read"), "{}", text(&out));
    assert_nothing_installed(ws);
}

#[test]
fn a_sparse_1_gib_module_is_refused_without_being_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pkg");
    package_with(&dir, "plugin.wasm", b"", &"0".repeat(64));
    std::fs::File::create(dir.join("dist/plugin.wasm")).unwrap().set_len(1 << 30).unwrap();
    let ws = tmp.path().join("ws");
    refused(&ws, &dir, "1073741824 bytes; the limit is 33554432 bytes; it was not read");
}

#[test]
fn a_sparse_1_gib_extra_file_is_refused_before_anything_is_copied() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pkg");
    package(&dir);
    std::fs::File::create(dir.join("dist/huge.bin")).unwrap().set_len(1 << 30).unwrap();
    let ws = tmp.path().join("ws");
    refused(&ws, &dir, "the limit is 134217728");
}

#[test]
fn fifos_symlinks_and_deep_trees_refuse_the_install() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");

    let fifo = tmp.path().join("fifo");
    package(&fifo);
    assert!(Command::new("mkfifo").arg(fifo.join("dist/pipe")).status().unwrap().success());
    refused(&ws, &fifo, "named pipe");

    let link = tmp.path().join("link");
    package(&link);
    std::os::unix::fs::symlink("plugin.wat", link.join("dist/alias.wat")).unwrap();
    refused(&ws, &link, "symbolic link");

    let deep = tmp.path().join("deep");
    package(&deep);
    std::fs::create_dir_all(deep.join("dist").join(["d"; 20].join("/"))).unwrap();
    refused(&ws, &deep, "directory levels");

    // The same package without the extra entries installs.
    let fine = tmp.path().join("fine");
    package(&fine);
    std::fs::write(fine.join("dist/asset.txt"), "asset").unwrap();
    let out = install(&ws, &fine);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(ws.join("packages/p/1.0.0/dist/asset.txt")).unwrap(), "asset");
}

#[test]
fn a_symlinked_module_is_refused_at_read() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside.wat");
    std::fs::write(&outside, MODULE).unwrap();
    let dir = tmp.path().join("pkg");
    package(&dir);
    std::fs::remove_file(dir.join("dist/plugin.wat")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("dist/plugin.wat")).unwrap();
    let ws = tmp.path().join("ws");
    refused(&ws, &dir, "symbolic link");
}

#[test]
fn a_wat_error_in_a_package_names_the_file_and_is_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pkg");
    let broken = format!("(module (bogus {}))", "a ".repeat(500_000));
    package_with(&dir, "plugin.wat", broken.as_bytes(), &hex(broken.as_bytes()));
    let ws = tmp.path().join("ws");
    let out = install(&ws, &dir);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let shown = text(&out);
    // Only the start of a message that may be megabytes long is shown on failure.
    let head: String = shown.chars().take(600).collect();
    assert!(shown.len() < 4096, "{} bytes: {head}", shown.len());
    assert!(shown.contains("plugin.wat:1:10: ") && !shown.contains("<anon>"), "{head}");
    assert_nothing_installed(&ws);
}

fn hub_with(entry: Value) -> tempfile::TempDir {
    let hub = tempfile::tempdir().unwrap();
    package(&hub.path().join("p"));
    std::fs::write(hub.path().join("index.json"), json!({ "plugins": [entry] }).to_string()).unwrap();
    hub
}

#[test]
fn hub_entries_are_validated_at_open_and_never_panic() {
    let good = json!({"id": "p", "version": "1.0.0", "sha256": hex(MODULE.as_bytes()), "price": "free", "path": "p"});
    let cases = [
        ("sha256", json!("ééééééééééééé"), "is not 64 hex digits"),
        ("sha256", json!("abc"), "is not 64 hex digits"),
        ("path", json!("../p"), "must be relative, inside the hub"),
        ("path", json!("/etc"), "must be relative, inside the hub"),
        ("id", json!("../../x"), "the id is not letters"),
        ("version", json!("1.0/../.."), "the version is not a plain version"),
    ];
    let ws = tempfile::tempdir().unwrap();
    for (field, value, expected) in cases {
        let mut entry = good.clone();
        entry[field] = value;
        let hub = hub_with(entry);
        let hub = hub.path().display().to_string();
        for args in [vec!["hub", "list", "--hub", &hub], vec!["install", "--allow-unsigned", "p", "--hub", &hub]] {
            let out = tdm(ws.path(), &args);
            assert_eq!(out.status.code(), Some(1), "{field} {args:?}: {}", text(&out));
            assert!(text(&out).contains("entry 1") && text(&out).contains(expected), "{field}: {}", text(&out));
        }
    }
    let hub = hub_with(good);
    let out = tdm(ws.path(), &["hub", "list", "--hub", &hub.path().display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn hub_list_reads_each_packages_manifest_and_never_its_module() {
    // Listing shows what each package says about itself; reading (and hashing) modules for it
    // made a hub of thousands of entries naming one large module list for many minutes. A
    // FIFO as the module shows that it is never opened: opening it would block or refuse.
    let tmp = tempfile::tempdir().unwrap();
    let hub = tmp.path().join("hub");
    let pkg = hub.join("p");
    package(&pkg);
    std::fs::remove_file(pkg.join("dist/plugin.wat")).unwrap();
    assert!(Command::new("mkfifo").arg(pkg.join("dist/plugin.wat")).status().unwrap().success());
    let manifest = std::fs::read_to_string(pkg.join("plugin.toml")).unwrap();
    std::fs::write(pkg.join("plugin.toml"), manifest + "[[intents]]\nname = \"greet\"\ndescription = \"hi\"\n")
        .unwrap();
    // Each version listed once (an index listing one twice is refused), all in one package.
    let entry = |i: usize| json!({"id": "p", "version": format!("1.0.{i}"), "sha256": hex(MODULE.as_bytes()), "price": "free", "path": "p"});
    let entries: Vec<Value> = (0..2_000).map(entry).collect();
    std::fs::write(hub.join("index.json"), json!({ "plugins": entries }).to_string()).unwrap();
    let out = tdm(&tmp.path().join("ws"), &["hub", "list", "--hub", &hub.display().to_string(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let plugins = listed["plugins"].as_array().unwrap();
    assert_eq!(plugins.len(), 2_000);
    assert!(plugins.iter().all(|p| p["intents"][0]["name"] == "greet"), "{}", plugins[0]);
    // A package of many intents is listed by its first ones: entries x intents stays bounded.
    let manifest = std::fs::read_to_string(pkg.join("plugin.toml")).unwrap();
    let many: String = (0..40).map(|i| format!("[[intents]]\nname = \"i{i}\"\ndescription = \"d\"\n")).collect();
    std::fs::write(
        pkg.join("plugin.toml"),
        manifest.replace("[[intents]]\nname = \"greet\"\ndescription = \"hi\"\n", &many),
    )
    .unwrap();
    let out = tdm(&tmp.path().join("ws"), &["hub", "list", "--hub", &hub.display().to_string(), "--json"]);
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &listed["plugins"][0];
    assert_eq!((first["intents"].as_array().unwrap().len(), &first["intentsNotListed"]), (32, &json!(8)), "{first}");
}

#[test]
fn a_hub_package_folder_reached_through_a_symlink_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    // The entry's folder is a link to a package outside the hub: the hub's path check passed
    // on the name, so the package is opened from the hub folder without following any link.
    let outside = tmp.path().join("outside");
    package(&outside);
    let hub = tmp.path().join("hub");
    std::fs::create_dir_all(hub.join("sub")).unwrap();
    std::os::unix::fs::symlink(&outside, hub.join("sub/p")).unwrap();
    let entry =
        json!({"id": "p", "version": "1.0.0", "sha256": hex(MODULE.as_bytes()), "price": "free", "path": "sub/p"});
    std::fs::write(hub.join("index.json"), json!({ "plugins": [entry] }).to_string()).unwrap();
    let ws = tmp.path().join("ws");
    let out = tdm(&ws, &["install", "--allow-unsigned", "p", "--hub", &hub.display().to_string()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("is a symbolic link; a package folder must be a directory inside the hub"),
        "{}",
        text(&out)
    );
    assert!(!ws.join("state.json").exists(), "a state was written");

    // The same package in a real folder of the hub installs.
    std::fs::remove_file(hub.join("sub/p")).unwrap();
    package(&hub.join("sub/p"));
    let out = tdm(&ws, &["install", "--allow-unsigned", "p", "--hub", &hub.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn state_entries_are_validated_and_never_used_as_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let hash = "a".repeat(64);
    let entry = |version: &str, path: &str, sha256: &str| {
        json!({"version": version, "sha256": sha256, "path": path, "requested": [], "price": "free",
               "approval": null, "revoked": false, "last_call": null})
    };
    let cases = [
        ("..", entry("1.0.0", "packages/../1.0.0", &hash), "entry `..`"),
        ("p", entry("1.0.0", "../../victim", &hash), "is not `packages/p/1.0.0`"),
        ("p", entry("../..", "packages/p/../..", &hash), "is not a plain version"),
        ("p", entry("1.0.0", "packages/p/1.0.0", "é"), "is not 64 lower-case hex digits"),
    ];
    for (id, plugin, expected) in cases {
        std::fs::create_dir_all(ws.join("packages")).unwrap();
        std::fs::write(ws.join("marker"), "keep").unwrap();
        let state = json!({"version": 1, "plugins": { id: plugin }}).to_string();
        std::fs::write(ws.join("state.json"), &state).unwrap();
        for args in [vec!["uninstall", id], vec!["workspace", "status"], vec!["call", id, "ping"]] {
            let out = tdm(&ws, &args);
            assert_eq!(out.status.code(), Some(2), "{id} {args:?}: {}", text(&out));
            assert!(text(&out).contains(expected), "{id} {args:?}: {}", text(&out));
        }
        assert!(ws.join("marker").exists(), "uninstall removed the workspace");
        assert_eq!(std::fs::read_to_string(ws.join("state.json")).unwrap(), state, "the state is kept as it is");
    }
}
