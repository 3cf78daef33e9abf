//! The C host (examples/c-host/contour-run, built by `make c-host` with plain cc against
//! libcontour.a) prints on stdout exactly what `tdm run` prints for the same module and params,
//! with the same fuel; its recording replays to the same bytes and fuel, in the C host and in
//! `tdm replay`; its exit codes are 0 completed, 1 failed (a load refusal included), 2 usage.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("c-api has a parent").to_path_buf()
}

/// Builds the C host and the WAT modules once (`make c-host c-host-modules`) and `tdm`.
fn built() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let make = Command::new("make")
            .args(["-s", "c-host", "c-host-modules"])
            .current_dir(root())
            .output()
            .expect("make runs");
        assert!(make.status.success(), "make c-host failed: {}", String::from_utf8_lossy(&make.stderr));
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| String::from("cargo"));
        let tdm =
            Command::new(cargo).args(["build", "-q", "-p", "tdm"]).current_dir(root()).output().expect("cargo runs");
        assert!(tdm.status.success(), "cargo build -p tdm failed: {}", String::from_utf8_lossy(&tdm.stderr));
        root().join("target/c-host")
    })
}

fn contour_run(args: &[&str]) -> Output {
    Command::new(built().join("contour-run")).args(args).current_dir(root()).output().expect("contour-run runs")
}

fn tdm(args: &[&str]) -> Output {
    Command::new(root().join("target/debug/tdm")).args(args).current_dir(root()).output().expect("tdm runs")
}

/// The `fuel_used=N` line contour-run prints on stderr.
fn c_fuel(output: &Output) -> u64 {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.lines().find_map(|line| line.strip_prefix("fuel_used=")).expect("a fuel_used line");
    line.parse().expect("a number")
}

/// `fuelUsed` of `tdm run --stats --json` (a `{"stats":{...}}` line on stderr).
fn tdm_fuel(output: &Output) -> u64 {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stats = stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|value| value["stats"]["fuelUsed"].as_u64());
    stats.expect("tdm printed its stats")
}

/// contour-run and `tdm run --stats --json` on `module` agree on stdout, fuel and exit code.
fn same_as_tdm(module: &str, intent: &str, params: &str) {
    let c = contour_run(&[module, intent, params]);
    let t = tdm(&["run", module, intent, "--params", params, "--stats", "--json"]);
    assert_eq!(
        String::from_utf8_lossy(&c.stdout),
        String::from_utf8_lossy(&t.stdout),
        "stdout differs for {module}; contour-run stderr: {}",
        String::from_utf8_lossy(&c.stderr)
    );
    assert_eq!(c.stdout, t.stdout, "byte for byte");
    assert_eq!(c_fuel(&c), tdm_fuel(&t), "fuel differs for {module}");
    assert_eq!(c.status.code(), t.status.code(), "exit code differs for {module}");
}

#[test]
fn the_echo_prints_what_tdm_prints() {
    let echo = built().join("echo.wasm");
    same_as_tdm(echo.to_str().expect("UTF-8 path"), "greet", r#"{"name":"Ada"}"#);
    same_as_tdm(echo.to_str().expect("UTF-8 path"), "greet", r#"{"b":[1,2.5,"\u00e9"],"a":{"z":null}}"#);
}

#[test]
fn the_rust_hello_prints_what_tdm_prints() {
    let hello = root().join("target/plugins/hello.wasm");
    assert!(hello.exists(), "{} is missing: run `make rust-examples` first", hello.display());
    same_as_tdm("target/plugins/hello.wasm", "greet", r#"{"name":"Ada"}"#);
    // A failed outcome of the plugin's own.
    same_as_tdm("target/plugins/hello.wasm", "greet", r#"{"nom":"Ada"}"#);
}

#[test]
fn a_module_refused_at_load_prints_tdms_outcome_and_exits_1() {
    let dir = built().join("tests");
    std::fs::create_dir_all(&dir).expect("a folder");
    let refused = dir.join("system.wasm");
    let wasm = wat::parse_str(r#"(module (import "env" "system" (func)) (memory (export "memory") 1))"#).unwrap();
    std::fs::write(&refused, wasm).expect("written");
    let module = refused.to_str().expect("UTF-8 path");
    let c = contour_run(&[module, "greet"]);
    let t = tdm(&["run", module, "greet"]);
    assert_eq!(c.status.code(), Some(1));
    assert_eq!(c.stdout, t.stdout, "{}", String::from_utf8_lossy(&c.stdout));
    assert!(String::from_utf8_lossy(&c.stdout).contains("import_not_allowed"));
}

#[test]
fn a_recording_replays_to_the_same_bytes_and_fuel_in_c_and_in_tdm() {
    let dir = built().join("tests");
    std::fs::create_dir_all(&dir).expect("a folder");
    for (name, module) in [("echo", built().join("echo.wasm")), ("hello", root().join("target/plugins/hello.wasm"))] {
        let trace = dir.join(format!("{name}.trace"));
        let _ = std::fs::remove_file(&trace);
        let module = module.to_str().expect("UTF-8 path").to_string();
        let trace_arg = trace.to_str().expect("UTF-8 path");
        let recorded = contour_run(&[&module, "greet", r#"{"name":"Grace"}"#, "--record", trace_arg]);
        assert_eq!(recorded.status.code(), Some(0), "{}", String::from_utf8_lossy(&recorded.stderr));
        let replayed = contour_run(&[&module, "greet", "--replay", trace_arg]);
        assert_eq!(replayed.status.code(), Some(0), "{}", String::from_utf8_lossy(&replayed.stderr));
        assert_eq!(recorded.stdout, replayed.stdout);
        assert_eq!(c_fuel(&recorded), c_fuel(&replayed));
        // The trace is core's format: tdm replays it too.
        let t = tdm(&["replay", trace_arg]);
        assert!(t.status.success(), "tdm replay: {}", String::from_utf8_lossy(&t.stderr));
        assert!(String::from_utf8_lossy(&t.stdout).contains("identical"), "{}", String::from_utf8_lossy(&t.stdout));
        // Against another module the replay is refused (exit 1), never a crash.
        let other = if name == "echo" { root().join("target/plugins/hello.wasm") } else { built().join("echo.wasm") };
        let wrong = contour_run(&[other.to_str().expect("UTF-8 path"), "greet", "--replay", trace_arg]);
        assert_eq!(wrong.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&wrong.stderr).contains("sha256"));
    }
}

#[test]
fn usage_and_io_errors_exit_2() {
    assert_eq!(contour_run(&[]).status.code(), Some(2));
    assert_eq!(contour_run(&["only-a-module.wasm"]).status.code(), Some(2));
    assert_eq!(contour_run(&["examples/echo/echo.wat", "greet"]).status.code(), Some(2));
    assert_eq!(contour_run(&["target/c-host/no-such.wasm", "greet"]).status.code(), Some(2));
    let echo = built().join("echo.wasm");
    let echo = echo.to_str().expect("UTF-8 path");
    assert_eq!(contour_run(&[echo, "greet", "{not json"]).status.code(), Some(2));
    assert_eq!(contour_run(&[echo, "greet", "--record"]).status.code(), Some(2));
    assert_eq!(contour_run(&[echo, "greet", "--replay", "target/c-host/no-such.trace"]).status.code(), Some(2));
}
