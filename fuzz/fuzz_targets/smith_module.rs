//! Target 2: wasm-smith modules that export the TDM ABI and may import off the allowlist.
//! The body and its oracles: `contour_fuzz_oracles::targets::smith_module_target` (stable, also run on
//! `fuzz/regressions/smith_module/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::smith_module_target(data));
