//! Target 7: permission strings, URL hosts and the limit flags.
//! The body and its oracles: `contour_fuzz_oracles::targets::permissions` (stable, also run on
//! `fuzz/regressions/permissions/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::permissions(data));
