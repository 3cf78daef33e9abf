//! Target 2: wasm-smith modules that export the TDM ABI (memory, tdm_alloc, tdm_free,
//! tdm_plugin_execute_intent) and may import WASI and host functions off the allowlist, through
//! load -> launch -> two intents.
#![no_main]
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

/// The exports every generated module has, with the ABI's types.
const ABI_EXPORTS: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) unreachable)
  (func (export "tdm_free") (param i32 i32) unreachable)
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) unreachable))"#;

/// Imports a generated module may use: a few of the allowlist, with their exact types.
const ALLOWED_IMPORTS: &str = r#"(module
  (import "tdm" "tdm_host_call" (func (param i32 i32) (result i32)))
  (import "tdm" "tdm_host_response" (func (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func (param i32))))"#;

fn module(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    let mut config: wasm_smith::Config = u.arbitrary()?;
    config.exports = Some(wat::parse_str(ABI_EXPORTS).expect("fixed WAT"));
    config.available_imports = Some(wat::parse_str(ALLOWED_IMPORTS).expect("fixed WAT"));
    config.max_memories = 1;
    config.max_memory32_bytes = 1 << 20;
    config.memory64_enabled = false;
    config.threads_enabled = false;
    config.shared_everything_threads_enabled = false;
    config.simd_enabled = false;
    config.relaxed_simd_enabled = false;
    config.gc_enabled = false;
    config.exceptions_enabled = false;
    config.custom_page_sizes_enabled = false;
    config.wide_arithmetic_enabled = false;
    Ok(wasm_smith::Module::new(config, u)?.to_bytes())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    if let Ok(wasm) = module(&mut u) {
        contour_fuzz::run_module(&wasm);
    }
});
