//! An installed plugin was validated in full at install and its approval binds its hash, so
//! `tdm call` launches it without validating it again (wasmi's lazy mode), with the same fuel
//! as `tdm run` of the same module, which validates it in full.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tdm_sdk::session::{Session, SessionOptions};
use tdm_sdk::workspace::Workspace;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tdm(workspace: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .env("TDM_WORKSPACE", workspace)
        .stdin(Stdio::null())
        .output()
        .expect("tdm runs")
}

fn fuel(output: &Output) -> u64 {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.lines().find(|l| l.contains("fuel_used=")).unwrap_or_else(|| panic!("no stats: {stderr}"));
    let value = line.split("fuel_used=").nth(1).and_then(|rest| rest.split(' ').next()).unwrap_or_default();
    value.parse().unwrap_or_else(|_| panic!("fuel_used in {line}"))
}

#[test]
fn an_installed_plugin_launches_lazily_with_the_same_fuel() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let hub = repo().join("examples/hub").display().to_string();
    assert!(tdm(ws, &["install", "--allow-unsigned", "echo", "--hub", &hub]).status.success());
    assert!(tdm(ws, &["approve", "echo", "--yes"]).status.success());
    let workspace = Workspace::open(ws.to_path_buf()).unwrap();
    let session = Session::open_installed(&workspace, "echo", SessionOptions::default()).expect("approved");
    assert_eq!(session.policy().compilation, contour_core::Compilation::Lazy);
    let params = r#"{"name":"Ada"}"#;
    let called = tdm(ws, &["call", "echo", "greet", "--params", params, "--stats", "--seed", "1"]);
    assert!(called.status.success(), "{}", String::from_utf8_lossy(&called.stderr));
    let module = repo().join("examples/hub/echo-1.0.0/dist/echo.wat").display().to_string();
    let ran = tdm(ws, &["run", &module, "greet", "--params", params, "--stats", "--seed", "1"]);
    assert!(ran.status.success());
    assert_eq!(fuel(&called), fuel(&ran), "lazy and full validation give the same fuel");
    let a: Value = serde_json::from_slice(&called.stdout).unwrap();
    let b: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(a, b);
}
