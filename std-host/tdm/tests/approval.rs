//! Approval fails closed and binds to the bytes that run, through the built binary: a package
//! that cannot be read after approval is `unverifiable` and never runs, and module bytes
//! swapped on disk while `tdm call` checks them never run (the bytes hashed are the bytes run).

use serde_json::Value;
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// A plugin whose start function prints `MARKER-<tag>` and whose intents answer `{"ok":true}`.
fn marked(tag: &str) -> String {
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "MARKER-{tag}\n")
  (data (i32.const 256) "\2b\00\00\00{{\"status\":\"completed\",\"output\":{{\"ok\":true}}}}")
  (func $start
    (i32.store (i32.const 200) (i32.const 0)) (i32.store (i32.const 204) (i32.const {len}))
    (drop (call $fd_write (i32.const 1) (i32.const 200) (i32.const 1) (i32.const 208))))
  (start $start)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 4096)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 256))"#,
        len = "MARKER-".len() + tag.len() + 1
    )
}

fn hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn manifest(module: &str) -> String {
    format!(
        "id = \"p\"\nversion = \"1.0.0\"\nname = \"p\"\ndescription = \"test\"\nmodule = \"dist/plugin.wat\"\nsha256 = \"{}\"\n[[intents]]\nname = \"ping\"\ndescription = \"ok\"\n",
        hex(module.as_bytes())
    )
}

/// Installs and approves `p` (module `marked("A")`); returns its folder in the workspace.
fn approved(ws: &Path) -> PathBuf {
    let source = ws.join("source");
    std::fs::create_dir_all(source.join("dist")).unwrap();
    let module = marked("A");
    std::fs::write(source.join("dist/plugin.wat"), &module).unwrap();
    std::fs::write(source.join("plugin.toml"), manifest(&module)).unwrap();
    let out = tdm(ws, &["install", "--allow-unsigned", &source.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = tdm(ws, &["approve", "p", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    ws.join("packages/p/1.0.0")
}

fn state_of(ws: &Path) -> String {
    let out = tdm(ws, &["workspace", "status", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    status["plugins"][0]["state"].as_str().unwrap_or_default().to_string()
}

fn call(ws: &Path) -> (Output, Value) {
    let out = tdm(ws, &["call", "p", "ping"]);
    let outcome = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, outcome)
}

#[test]
fn a_package_that_cannot_be_read_after_approval_is_not_approved() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let dir = approved(ws);
    assert_eq!(state_of(ws), "approved");
    assert_eq!(call(ws).1["output"]["ok"], true);

    // A missing manifest, then a missing module, then a module that is a FIFO.
    let manifest = std::fs::read(dir.join("plugin.toml")).unwrap();
    std::fs::remove_file(dir.join("plugin.toml")).unwrap();
    assert_eq!(state_of(ws), "unverifiable");
    let (out, outcome) = call(ws);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(outcome["blockedReason"], "not_approved", "{outcome}");
    assert!(!text(&out).contains("MARKER"));

    std::fs::write(dir.join("plugin.toml"), manifest).unwrap();
    assert_eq!(state_of(ws), "approved");
    std::fs::remove_file(dir.join("dist/plugin.wat")).unwrap();
    assert_eq!(state_of(ws), "unverifiable");
    assert_eq!(call(ws).1["blockedReason"], "not_approved");

    assert!(Command::new("mkfifo").arg(dir.join("dist/plugin.wat")).status().unwrap().success());
    assert_eq!(state_of(ws), "unverifiable");
    assert_eq!(call(ws).1["blockedReason"], "not_approved");
}

#[test]
fn a_module_and_manifest_swapped_on_disk_after_approval_are_not_approved() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let dir = approved(ws);
    let evil = marked("B");
    std::fs::write(dir.join("dist/plugin.wat"), &evil).unwrap();
    std::fs::write(dir.join("plugin.toml"), manifest(&evil)).unwrap();
    // Not what was installed: approving cannot fix it, so the state and the refusal say so.
    assert_eq!(state_of(ws), "modified");
    let (out, outcome) = call(ws);
    assert_eq!(outcome["blockedReason"], "not_approved", "{outcome}");
    assert!(outcome["message"].as_str().unwrap().contains("reinstall the package"), "{outcome}");
    assert!(!text(&out).contains("MARKER-B"), "{}", text(&out));
}

/// Writes `bytes` to `path` atomically (a temporary file renamed over it).
fn replace(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("swap");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn bytes_swapped_while_a_call_checks_them_never_run() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let dir = approved(ws);
    let (good, evil) = (marked("A"), marked("B"));
    let stop = Arc::new(AtomicBool::new(false));
    // Flip the whole package between the approved one and a consistent evil one (its manifest
    // names its hash), as fast as possible, while calls run.
    let flipper = {
        let stop = Arc::clone(&stop);
        let dir = dir.clone();
        std::thread::spawn(move || {
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for module in [&evil, &good] {
                    replace(&dir.join("dist/plugin.wat"), module.as_bytes());
                    replace(&dir.join("plugin.toml"), manifest(module).as_bytes());
                }
                flips += 1;
            }
            replace(&dir.join("dist/plugin.wat"), good.as_bytes());
            replace(&dir.join("plugin.toml"), manifest(&good).as_bytes());
            flips
        })
    };
    let mut ran = 0;
    for _ in 0..150 {
        let (out, outcome) = call(ws);
        let shown = text(&out);
        if shown.contains("MARKER-B") {
            stop.store(true, Ordering::Relaxed);
            panic!("swapped bytes ran: {shown}");
        }
        if outcome["output"]["ok"] == true {
            assert!(shown.contains("MARKER-A"), "{shown}");
            ran += 1;
        } else {
            assert_eq!(outcome["blockedReason"], "not_approved", "{outcome}");
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(flips > 0);
    eprintln!("{ran} of 150 calls ran the approved bytes; {flips} flips");
    assert_eq!(call(ws).1["output"]["ok"], true, "the approved package still runs");
}
