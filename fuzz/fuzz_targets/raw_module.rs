//! Target 1: any bytes as a module, through load -> launch -> two intents under a small policy.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    contour_fuzz::run_module(data);
});
