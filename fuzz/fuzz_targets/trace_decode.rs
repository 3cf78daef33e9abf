//! Target 11: trace bytes through core's decoder (`Trace::decode`), and a decoded trace
//! re-encoded and replayed on a fixed small plugin loaded under the trace's own policy.
//! Oracles: no panic; decode(encode(trace)) is the trace; replay ends (it never hangs: the
//! fixed plugin spins at most 65,535 times, whatever the trace's inputs and policy say).
#![no_main]
use contour_core::{replay, Trace};
use contour_core::Plugin;
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

/// A plugin that reads the clock, spins as many times as the low 16 bits of the reading say
/// (so a trace's recorded inputs steer its fuel, up to about a million), and answers a fixed
/// completed outcome.
const FIXED_WAT: &str = r#"(module
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (data (i32.const 16) "\21\00\00\00{\"status\":\"completed\",\"output\":1}")
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (local $n i32)
    (drop (call $clock (i32.const 0) (i64.const 0) (i32.const 512)))
    (local.set $n (i32.and (i32.load (i32.const 512)) (i32.const 0xffff)))
    (block $done (loop $spin
      (br_if $done (i32.eqz (local.get $n)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $spin)))
    i32.const 16))"#;

fn fixed_module() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| wat::parse_str(FIXED_WAT).expect("fixed WAT"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(trace) = Trace::decode(data) else { return };
    let bytes = trace.encode().expect("a decoded trace encodes");
    assert_eq!(Trace::decode(&bytes).expect("an encoded trace decodes").encode().ok(), Some(bytes));
    let Ok(policy) = trace.policy() else { return };
    let Ok(plugin) = Plugin::load(fixed_module(), policy) else { return };
    let _ = replay(&trace, Arc::new(plugin));
});
