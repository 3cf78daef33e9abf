//! Promise 8 on every path: host work a guest asks for is priced in fuel at wasmi's bulk-memory
//! rate and bounded by the deadline; the start function, `_initialize` and the intent share one
//! run; sleeps never pass the deadline; every host-call attempt counts. Each plugin here floods
//! one host function and is shown stopped.

use contour_conformance::{framed, load, sandbox, wat, wat_data, ScriptedWall, WallScript};
use contour_core::BlockedReason;
use contour_core::DEFAULT_START_FUEL;
use contour_core::{fuel_for_bytes, BYTES_PER_FUEL};
use contour_core::{AuditRecord, HostIntents, IntentReport, Permissions, Policy, Sandbox, Slept, VirtualEnvironment};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// A plugin of `pages` pages whose intent runs `body` (in a function of its own, with `$i` and
/// `$n` i32 locals) and answers `{"status":"completed","output":1}`. `tdm_alloc` returns 1024;
/// work buffers belong at 65536 and above.
fn plugin(imports: &str, pages: u32, body: &str, extra: &str) -> Vec<u8> {
    wat(&format!(
        r#"(module
  {imports}
  (memory (export "memory") {pages})
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func $work (local $i i32) (local $n i32) {body})
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) (call $work) i32.const 16)
  {extra}
  (data (i32.const 16) "{}"))"#,
        wat_data(&framed(br#"{"status":"completed","output":1}"#))
    ))
}

const RANDOM: &str = r#"(import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))"#;
const FD_WRITE: &str =
    r#"(import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))"#;
const POLL: &str =
    r#"(import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))"#;
const HOST_CALL: &str = r#"(import "tdm" "tdm_host_call" (func $host_call (param i32 i32) (result i32)))"#;

fn run(wasm: &[u8], policy: Policy) -> IntentReport {
    sandbox(wasm, policy).execute("work", &json!({}))
}

/// The fuel of one intent that completed.
fn fuel_of(wasm: &[u8]) -> u64 {
    let report = run(wasm, Policy::default());
    assert!(report.outcome.is_completed(), "{}", report.outcome.json);
    report.fuel_used
}

#[test]
fn random_get_costs_one_fuel_per_64_bytes() {
    let none = fuel_of(&plugin(RANDOM, 17, "(drop (call $random (i32.const 65536) (i32.const 0)))", ""));
    let mib = fuel_of(&plugin(RANDOM, 17, "(drop (call $random (i32.const 65536) (i32.const 1048576)))", ""));
    assert_eq!(mib - none, 1_048_576 / BYTES_PER_FUEL);
}

#[test]
fn a_random_get_flood_is_stopped_by_fuel() {
    // 200 calls of 1 MiB would cost 200 * 16,384 fuel: more than the 1,000,000 budget.
    let body = r#"(loop $again
        (drop (call $random (i32.const 65536) (i32.const 1048576)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $again (i32.lt_u (local.get $i) (i32.const 200))))"#;
    let policy = Policy { fuel_per_intent: 1_000_000, ..Policy::default() };
    let report = run(&plugin(RANDOM, 17, body, ""), policy);
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted), "{}", report.outcome.json);
    assert!(report.fuel_used <= 1_000_000, "{}", report.fuel_used);
}

#[test]
fn fd_write_pays_for_every_iovec() {
    // A million empty iovecs (zeroed memory is (0, 0) pairs) at 65536.
    let write =
        |n: u32| format!("(drop (call $fd_write (i32.const 1) (i32.const 65536) (i32.const {n}) (i32.const 512)))");
    let none = fuel_of(&plugin(FD_WRITE, 200, &write(0), ""));
    let million = fuel_of(&plugin(FD_WRITE, 200, &write(1_000_000), ""));
    assert_eq!(million - none, fuel_for_bytes(1_000_000 * 8));
}

#[test]
fn poll_oneoff_pays_for_every_subscription_and_event() {
    // Zeroed subscriptions are relative clock waits of 0 ns: every one fires at once.
    let poll =
        |n: u32| format!("(drop (call $poll (i32.const 65536) (i32.const 5000000) (i32.const {n}) (i32.const 512)))");
    let one = fuel_of(&plugin(POLL, 130, &poll(1), ""));
    let many = fuel_of(&plugin(POLL, 130, &poll(100_000), ""));
    assert_eq!(many - one, fuel_for_bytes(100_000 * 80) - fuel_for_bytes(80));
}

#[test]
fn host_call_request_bytes_are_priced_even_when_unreadable() {
    // 64 KiB of zero bytes is no JSON-RPC request (-3), but the host read all of it.
    let call = |len: u32| format!("(drop (call $host_call (i32.const 65536) (i32.const {len})))");
    let none = fuel_of(&plugin(HOST_CALL, 3, &call(0), ""));
    let big = fuel_of(&plugin(HOST_CALL, 3, &call(65_536), ""));
    assert_eq!(big - none, 65_536 / BYTES_PER_FUEL);
}

/// Records every audit record.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<AuditRecord>>>);

impl HostIntents for Recorder {
    fn audit(&mut self, record: &AuditRecord) {
        self.0.lock().unwrap().push(record.clone());
    }
}

#[test]
fn every_host_call_attempt_counts_and_is_audited_readable_or_not() {
    // Calls with a pointer past memory (-1): unreadable, but each one counts.
    let body = r#"(loop $again
        (drop (call $host_call (i32.const -16) (i32.const 8)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $again (i32.lt_u (local.get $i) (i32.const 10))))"#;
    let recorder = Recorder::default();
    let policy = Policy { max_host_calls: 3, ..Policy::default() };
    let mut sandbox =
        sandbox(&plugin(HOST_CALL, 1, body, ""), policy).with_host(Box::new(recorder.clone()), Permissions::default());
    let report = sandbox.execute("work", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::HostCallLimitExceeded), "{}", report.outcome.json);
    let records = recorder.0.lock().unwrap().clone();
    assert_eq!(records.len(), 4, "three calls and the one past the limit: {records:?}");
    assert!(records.iter().all(|r| !r.granted && r.method == contour_core::UNREADABLE), "{records:?}");
    assert_eq!(records[0].reason, Some(BlockedReason::InvalidHostRequest));
    assert_eq!(records[3].reason, Some(BlockedReason::HostCallLimitExceeded));
}

/// A simulated wall clock: reading it costs nothing, and sleeps move it (only as far as the
/// deadline, like a real one).
#[derive(Default)]
struct SimulatedWall {
    wall_ns: u64,
}

impl WallScript for SimulatedWall {
    fn read(&mut self) -> Option<u64> {
        Some(self.wall_ns)
    }
    fn sleep(&mut self, ns: u64, left: Option<u64>) -> (u64, Slept) {
        let slept = left.map_or(ns, |left| ns.min(left));
        self.wall_ns += slept;
        (slept, if slept < ns { Slept::CutAtDeadline } else { Slept::Full })
    }
}

/// One relative clock subscription of `ns` at 65536, polled by the body.
fn sleeper(ns: u64, forever: bool) -> Vec<u8> {
    let mut sub = vec![0u8; 48];
    sub[24..32].copy_from_slice(&ns.to_le_bytes());
    let poll = "(drop (call $poll (i32.const 65536) (i32.const 70000) (i32.const 1) (i32.const 512)))";
    let body = if forever { format!("(loop $again {poll} (br $again))") } else { poll.to_string() };
    plugin(POLL, 2, &body, &format!("(data (i32.const 65536) \"{}\")", wat_data(&sub)))
}

#[test]
fn sleeps_never_pass_the_deadline() {
    let policy = Policy { timeout_ms: 300, ..Policy::default() };
    // A 1 ms sleep in a loop: each sleep costs little fuel, so only the deadline can end it.
    let plugin_loop = load(&sleeper(1_000_000, true), policy.clone());
    let mut sandbox = Sandbox::new(plugin_loop, Box::new(ScriptedWall::new(0, SimulatedWall::default())));
    let report = sandbox.execute("work", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::DeadlineExceeded), "{}", report.outcome.json);
    // One 10 s sleep is cut at the deadline, not slept.
    let plugin_once = load(&sleeper(10_000_000_000, false), policy.clone());
    let mut sandbox = Sandbox::new(plugin_once, Box::new(ScriptedWall::new(0, SimulatedWall::default())));
    let report = sandbox.execute("work", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::DeadlineExceeded), "{}", report.outcome.json);
    // On a virtual clock alone (no wall clock, no deadline) the same sleep just advances time.
    let report = Sandbox::new(load(&sleeper(10_000_000_000, false), policy), Box::new(VirtualEnvironment::new(1)))
        .execute("work", &json!({}));
    assert!(report.outcome.is_completed(), "{}", report.outcome.json);
}

#[test]
fn a_looping_start_function_gets_a_fixed_slice_not_the_whole_budget() {
    let wasm = contour_conformance::fixture("start_loop");
    let policy = Policy { fuel_per_intent: 100_000_000, ..Policy::default() };
    let report = run(&wasm, policy);
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted), "{}", report.outcome.json);
    assert!(report.fuel_used <= DEFAULT_START_FUEL, "{}", report.fuel_used);
    assert!(
        report.outcome.json.contains("_initialize"),
        "the message says where set-up belongs: {}",
        report.outcome.json
    );
}

#[test]
fn the_launch_and_the_first_intent_share_one_budget() {
    // `_initialize` and the intent each spin 100,000 times (about 500,000 fuel each).
    let spin = r#"(loop $again
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $again (i32.lt_u (local.get $i) (i32.const 100000))))"#;
    let wasm = plugin("", 1, spin, &format!(r#"(func (export "_initialize") (local $i i32) {spin})"#));
    let mut roomy = sandbox(&wasm, Policy::default());
    let first = roomy.execute("work", &json!({}));
    let second = roomy.execute("work", &json!({}));
    assert!(first.outcome.is_completed() && second.outcome.is_completed());
    assert_eq!(second.launch_fuel, 0);
    assert!(first.launch_fuel > 400_000, "{}", first.launch_fuel);
    assert_eq!(first.fuel_used, first.launch_fuel + second.fuel_used, "the first intent paid for its launch");
    // A budget that holds either alone, not both: the first intent runs out.
    let tight = Policy { fuel_per_intent: second.fuel_used + first.launch_fuel / 2, ..Policy::default() };
    let report = sandbox(&wasm, tight).execute("work", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted), "{}", report.outcome.json);
}
