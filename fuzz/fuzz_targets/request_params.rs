//! Target 4: params text through the `--params` reader (tdm_sdk::params::parse) and, when it
//! is accepted, into a JSON-RPC request (contour_core::abi::request) run by the adversarial
//! plugin. Oracle: the request is JSON that holds the params unchanged, and the run's report
//! satisfies the common oracles.
#![no_main]
use contour_core::{Sandbox, VirtualEnvironment};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(params) = tdm_sdk::params::parse(data, "fuzz") else { return };
    let request = contour_core::abi::request(1, "fuzz", &params);
    let value: serde_json::Value = serde_json::from_slice(&request).expect("the request is JSON");
    assert_eq!(value.get("params"), Some(&params), "the params changed on the way");
    let policy = contour_fuzz::small_policy();
    let mut sandbox = Sandbox::new(contour_fuzz::adversarial_plugin(), Box::new(VirtualEnvironment::new(3)));
    contour_fuzz::check_report(&sandbox.execute("fuzz", &params), &policy);
});
