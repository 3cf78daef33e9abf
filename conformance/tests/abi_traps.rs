//! Traps and exits inside an intent (docs/ABI.md section 2): a trap is `plugin_trap`, a WASI
//! `proc_exit` is `plugin_exited` with its code in `output.exitCode`; either ends only that
//! intent, and the next one runs in a fresh instance.

use contour_conformance::{completed_output, fixture, outcome_json, sandbox};
use contour_core::BlockedReason;
use contour_core::{IntentReport, Policy, Sandbox};
use serde_json::json;

fn misbehave() -> Sandbox {
    sandbox(&fixture("misbehave"), Policy::default())
}

/// Runs `method` as the second intent of a fresh misbehave sandbox, checks it failed with
/// `reason` (and a detail containing `detail`) and that the intent after it runs in a fresh
/// instance.
fn fails_with(method: &str, reason: &str, detail: &str) -> IntentReport {
    let mut sandbox = misbehave();
    assert_eq!(completed_output(&sandbox.execute("count", &json!({}))), json!([1]));
    let report = sandbox.execute(method, &json!({}));
    assert_eq!(report.outcome.blocked_reason_text(), Some(reason), "{method}: {}", report.outcome.json);
    let failure = report.outcome.host_failure().expect("a host failure");
    assert!(failure.detail.contains(detail), "{method}: {}", failure.detail);
    assert!(!sandbox.is_live());
    assert_eq!(completed_output(&sandbox.execute("count", &json!({}))), json!([1]), "{method}");
    report
}

#[test]
fn unreachable_is_a_plugin_trap() {
    let report = fails_with("unreachable", "plugin_trap", "unreachable");
    assert_eq!(outcome_json(&report)["output"], json!({"retryable": false}));
}

#[test]
fn an_out_of_bounds_load_is_a_plugin_trap() {
    fails_with("oob", "plugin_trap", "out of bounds memory access");
}

#[test]
fn division_by_zero_is_a_plugin_trap() {
    fails_with("divide", "plugin_trap", "divide by zero");
}

#[test]
fn proc_exit_is_plugin_exited_with_its_code() {
    let report = fails_with("xit", "plugin_exited", "Exit code 3");
    let outcome = outcome_json(&report);
    assert_eq!(outcome["output"]["exitCode"], 3, "{outcome}");
    assert_eq!(outcome["output"]["retryable"], false);
    assert_eq!(report.outcome.host_failure().and_then(|f| f.exit_code), Some(3));
}

#[test]
fn a_launch_that_fails_reports_what_it_wrote_and_the_memory_it_had() {
    // `_initialize` prints a line, grows memory to two pages, then traps: the intent that
    // launched it fails with what the launch wrote and had, for the operator to see why.
    let wasm = wat::parse_str(
        r#"(module
          (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (data (i32.const 0) "initializing\n")
          (func (export "_initialize")
            (i32.store (i32.const 32) (i32.const 0))
            (i32.store (i32.const 36) (i32.const 13))
            (drop (call $fd_write (i32.const 1) (i32.const 32) (i32.const 1) (i32.const 40)))
            (drop (memory.grow (i32.const 1)))
            unreachable)
          (func (export "tdm_alloc") (param i32) (result i32) (i32.const 1024))
          (func (export "tdm_free") (param i32 i32))
          (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) (i32.const 0)))"#,
    )
    .unwrap();
    let report = sandbox(&wasm, Policy::default()).execute("x", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::PluginTrap), "{}", report.outcome.json);
    assert_eq!(String::from_utf8_lossy(&report.stdout), "initializing\n");
    assert_eq!(report.peak_memory_bytes, 2 * 65_536);
    assert!(report.launch_fuel > 0 && report.fuel_used == report.launch_fuel);
}
