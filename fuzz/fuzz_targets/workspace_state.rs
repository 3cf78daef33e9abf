//! Target 10: a workspace state file's bytes.
//! The body and its oracles: `contour_fuzz_oracles::targets::workspace_state` (stable, also run on
//! `fuzz/regressions/workspace_state/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::workspace_state(data));
