//! Target 5: plugin response bytes through core's framing and outcome reader.
//! The body and its oracles: `contour_fuzz_oracles::targets::response_bytes` (stable, also run on
//! `fuzz/regressions/response_bytes/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::response_bytes(data));
