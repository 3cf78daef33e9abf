//! The wasm-smith configuration of targets 2 and 12 and of the cross-architecture cases: modules
//! that export the TDM ABI, with only the features wasmi and Contour take.

/// The exports every generated module has, with the ABI's types (wasm-smith's `exports`). The
/// memory is the module's only one, its maximum the small policy's 1 MiB.
const ABI_EXPORTS: &str = r#"(module
  (memory (export "memory") 1 16)
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

/// Which modules [`smith_module`] generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmithKind {
    /// May import from [`ALLOWED_IMPORTS`] and have a start function.
    Plugin,
    /// No imports, no start function, memories and tables with a declared maximum within
    /// [`small_policy`] (the differential target's modules).
    Closed,
}

/// A wasm-smith module exporting the TDM ABI, with only the features wasmi and Contour take
/// (no SIMD, threads, GC, exceptions, memory64, custom page sizes, wide arithmetic, compact
/// imports; one memory).
pub fn smith_module(u: &mut arbitrary::Unstructured<'_>, kind: SmithKind) -> arbitrary::Result<Vec<u8>> {
    let mut config: wasm_smith::Config = u.arbitrary()?;
    config.exports = Some(wat::parse_str(ABI_EXPORTS).expect("fixed WAT"));
    // The exported memory is generated on top of `max_memories`, and Contour takes one memory.
    config.max_memories = 0;
    config.max_memory32_bytes = 1 << 20;
    // wasmi's parser predates the compact import section encoding.
    config.compact_imports_enabled = false;
    config.memory64_enabled = false;
    config.threads_enabled = false;
    config.shared_everything_threads_enabled = false;
    config.simd_enabled = false;
    config.relaxed_simd_enabled = false;
    config.gc_enabled = false;
    config.exceptions_enabled = false;
    config.custom_page_sizes_enabled = false;
    config.wide_arithmetic_enabled = false;
    match kind {
        SmithKind::Plugin => config.available_imports = Some(wat::parse_str(ALLOWED_IMPORTS).expect("fixed WAT")),
        SmithKind::Closed => {
            config.max_imports = 0;
            config.allow_start_export = false;
            config.memory_max_size_required = true;
            config.max_tables = 2;
            config.max_table_elements = 1_000;
            config.table_max_size_required = true;
        }
    }
    Ok(wasm_smith::Module::new(config, u)?.to_bytes())
}
