//! SIMD through the real sandbox (docs/ABI.md section 7a): the conformance plugin runs with the
//! default policy, a policy with `simd` off refuses it at load saying why (never running it),
//! and relaxed SIMD is refused whatever the policy says.

use contour_core::{BlockedReason, Plugin, Policy, Sandbox, VirtualEnvironment};
use std::sync::Arc;

fn simd_plugin() -> Vec<u8> {
    wat::parse_file(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/trace_simd.wat")).expect("the fixture compiles")
}

#[test]
fn the_simd_plugin_runs_where_simd_is_on() {
    let plugin = Plugin::load(&simd_plugin(), Policy::default()).expect("loads with SIMD on");
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(1)));
    let report = sandbox.execute("lanes", &serde_json::json!({}));
    assert!(report.outcome.is_completed(), "{}", report.outcome.json);
    // The first result: i8x16.add of the two input vectors, low half, wrapping per lane.
    let value: serde_json::Value = serde_json::from_str(&report.outcome.json).unwrap();
    let a = [0x00u8, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x10, 0x20];
    let b = [0xf0u8, 0x0f, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66];
    let sum: [u8; 8] = std::array::from_fn(|i| a[i].wrapping_add(b[i]));
    assert_eq!(value["output"][0], u64::from_le_bytes(sum));
}

#[test]
fn a_policy_with_simd_off_refuses_it_at_load_and_says_why() {
    let failure = Plugin::load(&simd_plugin(), Policy { simd: false, ..Policy::default() }).err().expect("refused");
    assert_eq!(failure.reason, BlockedReason::InvalidModule);
    assert!(
        failure.message().ends_with("It uses SIMD (v128 instructions), which the policy turns off."),
        "{}",
        failure.message()
    );
    // The embedded profile turns it off too.
    assert!(Plugin::load(&simd_plugin(), Policy::embedded()).is_err());
}
