//! Target 3: the adversarial plugin (`contour_fuzz::ADVERSARIAL_WAT`) run with the fuzz input
//! as its request bytes, which choose its response pointer and length, its allocator's answer
//! and the arguments of the host and WASI calls it makes. Three intents per input on one
//! sandbox, so a chosen allocation is used by the next one.
#![no_main]
use contour_core::{Sandbox, VirtualEnvironment};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let policy = contour_fuzz::small_policy();
    let mut sandbox = Sandbox::new(contour_fuzz::adversarial_plugin(), Box::new(VirtualEnvironment::new(3)))
        .with_host(Box::new(contour_fuzz::EchoHost), contour_fuzz::all_grants());
    for _ in 0..3 {
        let report = sandbox.execute_request(data);
        contour_fuzz::check_report(&report, &policy);
    }
});
