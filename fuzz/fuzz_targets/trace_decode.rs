//! Target 11: trace bytes decoded, re-encoded and replayed on a fixed plugin.
//! The body and its oracles: `contour_fuzz_oracles::targets::trace_decode` (stable, also run on
//! `fuzz/regressions/trace_decode/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::trace_decode(data));
