//! Target 4: params text through the `--params` reader (tdm_sdk::params::parse) and, when it
//! is accepted, into a JSON-RPC request (contour_core::intent_request_raw) run by the adversarial
//! plugin. Oracle: the request is JSON that holds the params text byte for byte, and the run's
//! report satisfies the common oracles.
#![no_main]
use contour_core::{Sandbox, VirtualEnvironment};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(params) = tdm_sdk::params::parse(data, "fuzz") else { return };
    let request = contour_core::intent_request_raw(1, "fuzz", params.raw());
    let expected = format!(r#"{{"id":1,"jsonrpc":"2.0","method":"fuzz","params":{}}}"#, params.text());
    assert_eq!(request, expected.as_bytes(), "the params changed on the way");
    let whole = serde_json::from_slice::<Box<serde_json::value::RawValue>>(&request);
    assert!(whole.is_ok(), "the request is not JSON: {whole:?}");
    let policy = contour_fuzz::small_policy();
    let mut sandbox = Sandbox::new(contour_fuzz::adversarial_plugin(), Box::new(VirtualEnvironment::new(3)));
    contour_fuzz::check_report(&sandbox.execute_request(&request), &policy);
});
