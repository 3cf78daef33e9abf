//! Promise 8: limits hold. Fuel per intent (also for the start function and `_initialize`),
//! the wall-clock deadline, call depth, linear memory, and request/response sizes. Hitting any
//! limit ends that intent with a failed outcome; the host keeps running, and the next intent
//! runs in a fresh instance.

use contour_conformance::{
    completed_output, fixture, framed, load, load_failure, outcome_json, responder, sandbox, stepping_wall, wat,
};
use contour_core::BlockedReason;
use contour_core::{IntentReport, Policy, Sandbox, VirtualEnvironment};
use serde_json::json;
use std::sync::Arc;

/// A small budget (fast in debug builds), handed out in four slices.
const SMALL_FUEL: u64 = 2_000_000;
const TWO_MIB: u64 = 2 * 1024 * 1024;

fn small_fuel() -> Policy {
    Policy { fuel_per_intent: SMALL_FUEL, fuel_slice: SMALL_FUEL / 4, ..Policy::default() }
}

fn run(sandbox: &mut Sandbox, method: &str) -> IntentReport {
    sandbox.execute(method, &json!({}))
}

/// Runs "count", "count", then `method` (which must fail with `reason`), then "count" on one
/// sandbox: the failure ends only its own intent, and the next one gets a fresh instance
/// whose counter starts again at 1.
fn fails_then_recovers(policy: Policy, method: &str, reason: &str) -> IntentReport {
    let mut sandbox = sandbox(&fixture("misbehave"), policy);
    assert_eq!(completed_output(&run(&mut sandbox, "count")), json!([1]));
    assert_eq!(completed_output(&run(&mut sandbox, "count")), json!([2]));
    let report = run(&mut sandbox, method);
    assert_eq!(report.outcome.blocked_reason_text(), Some(reason), "{method}: {}", report.outcome.json);
    let outcome = outcome_json(&report);
    assert_eq!(outcome["status"], "failed");
    assert_eq!(outcome["blockedReason"], reason);
    assert!(!sandbox.is_live(), "{method}: the failed instance is discarded");
    assert_eq!(completed_output(&run(&mut sandbox, "count")), json!([1]), "{method}: fresh instance");
    assert_eq!(completed_output(&run(&mut sandbox, "count")), json!([2]));
    report
}

#[test]
fn an_infinite_loop_runs_out_of_fuel() {
    let report = fails_then_recovers(small_fuel(), "loop", "fuel_exhausted");
    assert!(report.fuel_used <= SMALL_FUEL, "used {} of {SMALL_FUEL}", report.fuel_used);
    assert!(report.fuel_used > SMALL_FUEL / 2, "used {} of {SMALL_FUEL}", report.fuel_used);
    assert_eq!(outcome_json(&report)["output"]["retryable"], false);
}

#[test]
fn every_intent_gets_its_own_fuel_budget() {
    // Two intents that each use about two thirds of the budget (9 fuel per iteration) both
    // complete, using the same fuel.
    let wasm = wat(&format!(
        r#"(module
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (local $i i32)
    (loop $spin
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $spin (i32.lt_u (local.get $i) (i32.const 150000))))
    i32.const 16)
  (data (i32.const 16) "{}"))"#,
        contour_conformance::wat_data(&framed(br#"{"status":"completed","output":1}"#))
    ));
    let mut sandbox = sandbox(&wasm, small_fuel());
    let first = run(&mut sandbox, "spin");
    assert_eq!(completed_output(&first), 1);
    assert!(first.fuel_used > SMALL_FUEL / 2, "the loop should use most of the budget: {}", first.fuel_used);
    let second = run(&mut sandbox, "spin");
    assert_eq!(completed_output(&second), 1);
    assert_eq!(second.fuel_used, first.fuel_used);
}

#[test]
fn an_infinite_loop_in_the_start_function_runs_out_of_fuel() {
    let mut sandbox = sandbox(&fixture("start_loop"), small_fuel());
    let report = run(&mut sandbox, "anything");
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted), "{}", report.outcome.json);
    assert!(!sandbox.is_live());
    // Launching explicitly reports the same; the host keeps running.
    let failure = sandbox.launch().expect_err("the start function cannot finish");
    assert_eq!(failure.reason.as_str(), "fuel_exhausted");
    assert!(sandbox.launch_fuel() <= SMALL_FUEL);
}

#[test]
fn an_infinite_loop_in_initialize_runs_out_of_fuel() {
    let mut sandbox = sandbox(&fixture("initialize_loop"), small_fuel());
    let report = run(&mut sandbox, "anything");
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted), "{}", report.outcome.json);
    let failure = sandbox.launch().expect_err("_initialize cannot finish");
    assert_eq!(failure.reason.as_str(), "fuel_exhausted");
    assert!(!sandbox.is_live());
}

#[test]
fn unbounded_recursion_exhausts_the_stack() {
    fails_then_recovers(Policy::default(), "recurse", "stack_exhausted");
    let report = sandbox(&fixture("recursion"), Policy::default()).execute("down", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::StackExhausted), "{}", report.outcome.json);
}

#[test]
fn the_call_depth_limit_is_the_policys() {
    // A recursion 200 deep passes the default limit (1000) and fails under a limit of 100.
    let wasm = wat(&format!(
        r#"(module
  (memory (export "memory") 1)
  (func $down (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (call $down (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))))
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (drop (call $down (i32.const 200)))
    i32.const 16)
  (data (i32.const 16) "{}"))"#,
        contour_conformance::wat_data(&framed(br#"{"status":"completed","output":1}"#))
    ));
    assert_eq!(completed_output(&sandbox(&wasm, Policy::default()).execute("d", &json!({}))), 1);
    let shallow = Policy { max_call_depth: 100, ..Policy::default() };
    let report = sandbox(&wasm, shallow).execute("d", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::StackExhausted), "{}", report.outcome.json);
}

#[test]
fn memory_growth_stops_at_the_limit() {
    let policy = Policy { max_memory_bytes: TWO_MIB, ..Policy::default() };
    let report = fails_then_recovers(policy, "grow", "memory_limit_exceeded");
    assert_eq!(report.peak_memory_bytes, TWO_MIB, "grown to exactly the limit, not past it");
}

#[test]
fn one_large_memory_grow_past_the_limit_is_a_memory_failure() {
    // A single memory.grow of 1000 pages (62.5 MiB) from 1 page, under a 2 MiB limit. (Core
    // once reported this as resource_limit_exceeded, guessing from the memory's size.)
    let policy = Policy { max_memory_bytes: TWO_MIB, ..Policy::default() };
    fails_then_recovers(policy, "bulk", "memory_limit_exceeded");
}

#[test]
fn the_default_memory_limit_is_64_mib() {
    let policy = Policy::default();
    assert_eq!(policy.max_memory_bytes, 64 * 1024 * 1024);
    let report = fails_then_recovers(policy, "grow", "memory_limit_exceeded");
    assert_eq!(report.peak_memory_bytes, 64 * 1024 * 1024);
}

fn plugin_with_initial_pages(pages: u32) -> Vec<u8> {
    wat(&format!(
        r#"(module
  (memory (export "memory") {pages})
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16)
  (data (i32.const 16) "{}"))"#,
        contour_conformance::wat_data(&framed(br#"{"status":"completed","output":1}"#))
    ))
}

#[test]
fn initial_memory_over_the_limit_is_refused_at_load() {
    let policy = Policy { max_memory_bytes: TWO_MIB, ..Policy::default() };
    let failure = load_failure(&plugin_with_initial_pages(33), policy.clone());
    assert_eq!(failure.reason.as_str(), "memory_limit_exceeded", "{failure}");
    assert!(failure.detail.contains("33"), "{}", failure.detail);
    // Exactly at the limit loads and runs.
    let report = sandbox(&plugin_with_initial_pages(32), policy).execute("x", &json!({}));
    assert_eq!(completed_output(&report), 1);
    // The default limit: 1025 pages is one page over 64 MiB.
    let failure = load_failure(&plugin_with_initial_pages(1025), Policy::default());
    assert_eq!(failure.reason.as_str(), "memory_limit_exceeded", "{failure}");
}

#[test]
fn a_request_over_the_limit_is_refused_before_the_plugin_sees_it() {
    let params = json!({"text": "x".repeat(100)});
    let size = contour_core::intent_request(1, "echo", &params).len() as u32;
    // Exactly at the limit is delivered.
    let at_limit = Policy { max_request_bytes: size, ..Policy::default() };
    let output = completed_output(&sandbox(&fixture("echo"), at_limit).execute("echo", &params));
    assert_eq!(output["params"], params);
    // One byte less is refused; the plugin keeps running (a request failure is host-side,
    // so the instance is discarded and the next intent relaunches it).
    let under = Policy { max_request_bytes: size - 1, ..Policy::default() };
    let mut sandbox = sandbox(&fixture("echo"), under);
    let report = sandbox.execute("echo", &params);
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::RequestTooLarge), "{}", report.outcome.json);
    assert_eq!(report.fuel_used, 0, "the plugin never ran");
    let small = json!({});
    assert_eq!(completed_output(&sandbox.execute("echo", &small))["params"], small);
}

#[test]
fn a_response_over_the_limit_is_refused() {
    let body = br#"{"status":"completed","output":"0123456789"}"#;
    let len = body.len() as u32;
    let at_limit = Policy { max_response_bytes: len, ..Policy::default() };
    let report = sandbox(&responder(body), at_limit).execute("r", &json!({}));
    assert_eq!(completed_output(&report), "0123456789");
    let under = Policy { max_response_bytes: len - 1, ..Policy::default() };
    let report = sandbox(&responder(body), under).execute("r", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::ResponseTooLarge), "{}", report.outcome.json);
    // A length field far over the limit (and past memory) is also response_too_large.
    let mut data = framed(body);
    data[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    let report =
        sandbox(&contour_conformance::pointing_plugin(16, 16, &data), Policy::default()).execute("r", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::ResponseTooLarge), "{}", report.outcome.json);
}

/// The embedded profile (the firmware in embedded-demo/ runs under it): its limits hold through
/// the real sandbox, with memory, fuel and message sizes sized for a board's heap.
#[test]
fn the_embedded_profile_holds_its_smaller_limits() {
    let policy = Policy::embedded();
    assert_eq!(policy.validate(), Ok(()));
    assert!(policy.max_memory_bytes < Policy::default().max_memory_bytes);
    assert!(policy.fuel_per_intent < Policy::default().fuel_per_intent);
    let report = fails_then_recovers(policy.clone(), "grow", "memory_limit_exceeded");
    assert_eq!(report.peak_memory_bytes, 256 * 1024, "grown to exactly the embedded limit");
    let report = fails_then_recovers(policy.clone(), "loop", "fuel_exhausted");
    assert!(report.fuel_used <= 10_000_000 && report.fuel_used > 5_000_000, "used {}", report.fuel_used);
    assert!(report.outcome.json.contains("The budget is 10000000 fuel."), "{}", report.outcome.json);
    let body = format!(r#"{{"status":"completed","output":"{}"}}"#, "x".repeat(4 * 1024));
    // Framed past the request (which the plugin's tdm_alloc puts at 1024).
    let plugin = contour_conformance::pointing_plugin(16_384, 16_384, &framed(body.as_bytes()));
    let report = sandbox(&plugin, policy.clone()).execute("r", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::ResponseTooLarge), "{}", report.outcome.json);
    let big = json!({ "pad": "x".repeat(4 * 1024) });
    let report = sandbox(&fixture("misbehave"), policy).execute("count", &big);
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::RequestTooLarge), "{}", report.outcome.json);
}

#[test]
fn the_wall_clock_deadline_ends_a_long_intent() {
    // Plenty of fuel, small slices, and a wall clock that moves 100 ms per check: the deadline
    // (5 s by default) ends the loop after about 50 slices, well before the fuel does.
    let policy = Policy { fuel_per_intent: 1_000_000_000, fuel_slice: 10_000, ..Policy::default() };
    let env = stepping_wall(0, 100_000_000);
    let mut sandbox = Sandbox::new(load(&fixture("misbehave"), policy.clone()), Box::new(env));
    let report = run(&mut sandbox, "loop");
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::DeadlineExceeded), "{}", report.outcome.json);
    assert!(report.fuel_used < 1_000_000, "stopped after a few slices: {}", report.fuel_used);
    assert_eq!(outcome_json(&report)["output"]["retryable"], true);
    assert_eq!(completed_output(&run(&mut sandbox, "count")), json!([1]));
    // The same loop with the same slices but no wall clock only stops at the fuel budget.
    let plugin = load(&fixture("misbehave"), Policy { fuel_per_intent: SMALL_FUEL, ..policy });
    let report = Sandbox::new(Arc::clone(&plugin), Box::new(VirtualEnvironment::new(0))).execute("loop", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted), "{}", report.outcome.json);
}

/// Found by the `differential` fuzz target (a stack overflow under AddressSanitizer only, whose
/// instrumented frames keep wasmi's tail-call dispatch from becoming jumps): an endless
/// `return_call` loop, in an intent or in a start function, is ended by fuel with its whole
/// budget used, never by the host's stack.
#[test]
fn an_endless_tail_call_loop_ends_by_fuel() {
    let module = |start: &str| {
        wat(&format!(
            r#"(module
              (memory (export "memory") 1 16)
              (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
              (func (export "tdm_free") (param i32 i32))
              (func $spin (param i64) (result i32) (return_call $spin (i64.extend_i32_u (memory.size))))
              (func $start (drop (call $spin (i64.const 0))))
              {start}
              (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
                (return_call $spin (i64.const 0))))"#
        ))
    };
    let report = run(&mut sandbox(&module(""), small_fuel()), "spin");
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted), "{}", report.outcome.json);
    // All of it but what the next block would need (wasmi charges a block before running it).
    assert!(SMALL_FUEL - report.fuel_used < 16, "{} of {SMALL_FUEL}", report.fuel_used);
    let policy = Policy { start_fuel: SMALL_FUEL / 2, ..small_fuel() };
    let report = run(&mut sandbox(&module("(start $start)"), policy), "spin");
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted), "{}", report.outcome.json);
    assert!(report.outcome.json.contains("The start function may use at most"), "{}", report.outcome.json);
    assert!(SMALL_FUEL / 2 - report.launch_fuel < 16, "{} of {}", report.launch_fuel, SMALL_FUEL / 2);
}
