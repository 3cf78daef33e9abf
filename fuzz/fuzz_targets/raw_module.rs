//! Target 1: any bytes as a module, through load -> launch -> two intents under a small policy.
//! An input that starts with `(module` is WebAssembly text, compiled first: the conformance
//! plugins (`conformance/fixtures/*.wat`) are its seeds, and their mutations reach the sandbox
//! as valid modules far more often than mutated binaries do.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.starts_with(b"(module") {
        if let Ok(wasm) = wat::parse_bytes(data) {
            contour_fuzz::run_module(&wasm);
        }
        return;
    }
    contour_fuzz::run_module(data);
});
