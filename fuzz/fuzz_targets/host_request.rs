//! Target 6: host-call request bytes through core's reader.
//! The body and its oracles: `contour_fuzz_oracles::targets::host_request` (stable, also run on
//! `fuzz/regressions/host_request/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::host_request(data));
