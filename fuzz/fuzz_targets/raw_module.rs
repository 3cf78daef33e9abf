//! Target 1: any bytes as a module, through load -> launch -> two intents under a small policy.
//! Input that is WebAssembly text is compiled first (binary input passes through `wat` as it
//! is): the conformance plugins (`conformance/fixtures/*.wat`) are its seeds, and their mutations
//! reach the sandbox as valid modules far more often than mutated binaries do. Anything else goes
//! to the sandbox as raw bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match wat::parse_bytes(data) {
        Ok(wasm) => contour_fuzz::run_module(&wasm),
        Err(_) => contour_fuzz::run_module(data),
    };
});
