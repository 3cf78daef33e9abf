//! Target 12: one intent through Contour and through bare wasmi (wasm-smith bytes or a literal module).
//! The body and its oracles: `contour_fuzz_oracles::differential::differential` (stable, also run on
//! `fuzz/regressions/differential/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::differential::differential(data));
