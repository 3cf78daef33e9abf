//! The cross-architecture differential's cases: a recording holds the inputs the module read and
//! replays here to its own digest, and the generated cases are the same for the same seed.

use contour_core::{recorded_digest, replay_bytes, Trace};
use contour_fuzz_oracles::cross::{case, record};

/// Reads the clock and 8 random bytes, makes a host call, and answers a fixed outcome.
const READS_INPUTS: &str = r#"(module
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))
  (import "tdm" "tdm_host_call" (func $call (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (data (i32.const 16) "\21\00\00\00{\"status\":\"completed\",\"output\":1}")
  (data (i32.const 64) "{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":{\"level\":\"info\",\"message\":\"hi\"}}")
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (drop (call $clock (i32.const 0) (i64.const 0) (i32.const 512)))
    (drop (call $random (i32.const 520) (i32.const 8)))
    (drop (call $call (i32.const 64) (i32.const 73)))
    i32.const 16))"#;

#[test]
fn a_recorded_case_holds_its_inputs_and_replays_to_its_digest() {
    let module = wat::parse_str(READS_INPUTS).expect("WAT");
    let case = record(String::from("reads"), module, 7).expect("recorded");
    assert_eq!(case.inputs, 6, "a clock read, random bytes and a host call in each of two intents");
    let trace = Trace::decode(&case.trace).expect("decodes");
    let report = replay_bytes(&case.trace, &case.module).expect("replays");
    assert_eq!(report.divergence, None);
    assert_eq!(report.digest, recorded_digest(&trace));
}

#[test]
fn the_same_seed_gives_the_same_cases() {
    for index in 0..4 {
        let (a, b) = (case(3, index).map(|c| (c.module, c.trace)), case(3, index).map(|c| (c.module, c.trace)));
        assert_eq!(a.ok(), b.ok(), "case {index}");
    }
    assert_ne!(case(3, 0).ok().map(|c| c.module), case(4, 0).ok().map(|c| c.module));
}
