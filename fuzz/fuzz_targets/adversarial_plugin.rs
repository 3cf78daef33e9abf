//! Target 3: the adversarial plugin with the input as its request bytes.
//! The body and its oracles: `contour_fuzz_oracles::targets::adversarial_plugin_target` (stable, also run on
//! `fuzz/regressions/adversarial_plugin/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::adversarial_plugin_target(data));
