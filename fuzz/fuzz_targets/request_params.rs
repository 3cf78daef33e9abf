//! Target 4: `--params` text into a request run by the adversarial plugin.
//! The body and its oracles: `contour_fuzz_oracles::targets::request_params` (stable, also run on
//! `fuzz/regressions/request_params/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::request_params(data));
