//! Target 13: bytes as a minisign signature, public key and secret key.
//! The body and its oracles: `contour_fuzz_oracles::targets::minisign` (stable, also run on
//! `fuzz/regressions/minisign/` by `make test`; seeded by
//! `fuzz/oracles/tests/minisign_seeds.rs`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::minisign(data));
