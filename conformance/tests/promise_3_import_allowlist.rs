//! Promise 3: a plugin cannot call arbitrary host functions. Every import is checked against
//! the allowlist (module, name and exact signature) before instantiation; one bad import
//! rejects the module, and the error lists every offending import.

use contour_conformance::{completed_output, load, load_failure, plugin_with_imports, sandbox, wat};
use contour_core::ImportVerdict;
use contour_core::{Plugin, Policy, Profile};
use serde_json::json;

#[test]
fn an_unknown_host_function_is_rejected() {
    let failure = load_failure(
        &plugin_with_imports(r#"(import "env" "system" (func (param i32) (result i32)))"#),
        Policy::default(),
    );
    assert_eq!(failure.reason.as_str(), "import_not_allowed");
    assert!(failure.detail.contains("env.system"), "{}", failure.detail);
}

#[test]
fn every_offending_import_is_named() {
    let wasm = plugin_with_imports(
        r#"(import "env" "system" (func (param i32) (result i32)))
           (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
           (import "wasi_snapshot_preview1" "path_open" (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
           (import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i64 i32) (result i32)))
           (import "host" "exec" (func))"#,
    );
    let failure = load_failure(&wasm, Policy::default());
    assert_eq!(failure.reason.as_str(), "import_not_allowed");
    let detail = &failure.detail;
    assert!(detail.starts_with("3 rejected"), "{detail}");
    for name in ["env.system", "wasi_snapshot_preview1.path_open", "host.exec"] {
        assert!(detail.contains(name), "{name} missing from: {detail}");
    }
    // The allowed imports are not listed as offenders.
    assert!(!detail.contains("fd_write") && !detail.contains("clock_time_get"), "{detail}");
}

#[test]
fn a_wrong_signature_on_an_allowed_import_is_rejected() {
    // fd_write is (i32, i32, i32, i32) -> i32; each of these differs in params or results.
    for signature in
        ["(param i32 i32 i32) (result i32)", "(param i32 i32 i32 i64) (result i32)", "(param i32 i32 i32 i32)"]
    {
        let wasm = plugin_with_imports(&format!(r#"(import "wasi_snapshot_preview1" "fd_write" (func {signature}))"#));
        let failure = load_failure(&wasm, Policy::default());
        assert_eq!(failure.reason.as_str(), "import_not_allowed", "{signature}");
        assert!(failure.detail.contains("wasi_snapshot_preview1.fd_write"), "{signature}: {}", failure.detail);
        assert!(failure.detail.contains("wrong signature"), "{signature}: {}", failure.detail);
    }
    // proc_exit returns nothing; one that returns a value is not proc_exit.
    let wasm = plugin_with_imports(r#"(import "wasi_snapshot_preview1" "proc_exit" (func (param i32) (result i32)))"#);
    let failure = load_failure(&wasm, Policy::default());
    assert_eq!(failure.reason.as_str(), "import_not_allowed");
    assert!(failure.detail.contains("wasi_snapshot_preview1.proc_exit"), "{}", failure.detail);
}

#[test]
fn non_function_imports_are_rejected() {
    for (name, import) in [
        ("env.table", r#"(import "env" "table" (table 1 funcref))"#),
        ("env.global", r#"(import "env" "global" (global i32))"#),
        ("wasi_snapshot_preview1.fd_write", r#"(import "wasi_snapshot_preview1" "fd_write" (global i32))"#),
    ] {
        let failure = load_failure(&plugin_with_imports(import), Policy::default());
        assert_eq!(failure.reason.as_str(), "import_not_allowed", "{name}");
        assert!(failure.detail.contains(name), "{name}: {}", failure.detail);
    }
    // A host memory handed in as the plugin's own (imported, then exported as `memory`).
    let wasm = wat(r#"(module
      (import "env" "memory" (memory 1))
      (export "memory" (memory 0))
      (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
      (func (export "tdm_free") (param i32 i32))
      (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16))"#);
    let failure = load_failure(&wasm, Policy::default());
    assert_eq!(failure.reason.as_str(), "import_not_allowed");
    assert!(failure.detail.contains("env.memory"), "{}", failure.detail);
}

#[test]
fn the_import_check_comes_before_the_export_check() {
    // A module that is also missing every export is reported for its import first.
    let wasm = wat(r#"(module (import "env" "system" (func (param i32) (result i32))))"#);
    let failure = load_failure(&wasm, Policy::default());
    assert_eq!(failure.reason.as_str(), "import_not_allowed");
    let inspection = Plugin::inspect(&wasm, &Policy::default(), Profile::Marketplace).expect("parses");
    let reasons: Vec<&str> = inspection.failures.iter().map(|f| f.reason.as_str()).collect();
    assert_eq!(reasons, ["import_not_allowed", "abi_mismatch"]);
}

#[test]
fn allowlisted_imports_with_exact_signatures_load_and_run() {
    let wasm = plugin_with_imports(
        r#"(import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
           (import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i64 i32) (result i32)))
           (import "wasi_snapshot_preview1" "random_get" (func (param i32 i32) (result i32)))
           (import "wasi_snapshot_preview1" "proc_exit" (func (param i32)))
           (import "wasi_snapshot_preview1" "sched_yield" (func (result i32)))
           (import "wasi_snapshot_preview1" "poll_oneoff" (func (param i32 i32 i32 i32) (result i32)))"#,
    );
    let plugin = load(&wasm, Policy::default());
    assert_eq!(plugin.inspection().imports.len(), 6);
    assert!(plugin.inspection().imports.iter().all(|i| i.verdict == ImportVerdict::Allowed));
    let mut sandbox = sandbox(&wasm, Policy::default());
    assert_eq!(completed_output(&sandbox.execute("run", &json!({}))), 1);
}
