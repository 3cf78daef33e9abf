//! Target 2: wasm-smith modules that export the TDM ABI (memory, tdm_alloc, tdm_free,
//! tdm_plugin_execute_intent) and may import WASI and host functions off the allowlist
//! (`contour_fuzz::smith_module`), through load -> launch -> two intents.
#![no_main]
use contour_fuzz::{smith_module, SmithKind};
use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(wasm) = smith_module(&mut Unstructured::new(data), SmithKind::Plugin) {
        contour_fuzz::run_module(&wasm);
    }
});
