//! Target 1: any bytes as a module (WebAssembly text compiled first), through load -> launch -> two intents.
//! The body and its oracles: `contour_fuzz_oracles::targets::raw_module` (stable, also run on
//! `fuzz/regressions/raw_module/` by `make test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| contour_fuzz_oracles::targets::raw_module(data));
