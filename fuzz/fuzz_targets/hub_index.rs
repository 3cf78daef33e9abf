//! Target 9: a hub's `index.json` bytes.
//! The body and its oracles: `contour_fuzz_oracles::targets::hub_index` (stable, also run on
//! `fuzz/regressions/hub_index/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::hub_index(data));
