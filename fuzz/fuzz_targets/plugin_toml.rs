//! Target 8: `plugin.toml` text, its permissions and policy.
//! The body and its oracles: `contour_fuzz_oracles::targets::plugin_toml` (stable, also run on
//! `fuzz/regressions/plugin_toml/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::plugin_toml(data));
