//! Fixtures for the peer benchmarks (`benches/peers.rs`, `make bench-peers`): the Extism echo plugin, and the
//! check that a fixture uses only WebAssembly 1.0 (MVP) features, which is all wasm3 0.3.1 runs.

use crate::ECHO_OUTCOME;

/// The name of the Extism echo plugin's exported function.
pub const EXTISM_ECHO_FUNCTION: &str = "echo";

/// Where the Extism echo plugin keeps [`ECHO_OUTCOME`] in its own memory.
const EXTISM_OUTCOME_AT: usize = 16;

/// The Extism echo plugin's WAT: its `echo` function answers [`ECHO_OUTCOME`] to any input without reading it,
/// through Extism's kernel imports (`extism:host/env`): `alloc` a block of the outcome's length, copy the outcome
/// into it with `store_u64` (whole words) and `store_u8` (the rest), `output_set` it, and return 0.
pub fn extism_echo_wat() -> String {
    let escaped: String = ECHO_OUTCOME.bytes().map(|b| format!("\\{b:02x}")).collect();
    let len = ECHO_OUTCOME.len();
    let words = len / 8 * 8;
    format!(
        r#"(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (data (i32.const {EXTISM_OUTCOME_AT}) "{escaped}")
  (func (export "{EXTISM_ECHO_FUNCTION}") (result i32)
    (local $out i64) (local $i i32)
    (local.set $out (call $alloc (i64.const {len})))
    (block $words_done
      (loop $words
        (br_if $words_done (i32.ge_u (local.get $i) (i32.const {words})))
        (call $store_u64 (i64.add (local.get $out) (i64.extend_i32_u (local.get $i)))
                         (i64.load offset={EXTISM_OUTCOME_AT} (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $words)))
    (block $bytes_done
      (loop $bytes
        (br_if $bytes_done (i32.ge_u (local.get $i) (i32.const {len})))
        (call $store_u8 (i64.add (local.get $out) (i64.extend_i32_u (local.get $i)))
                        (i32.load8_u offset={EXTISM_OUTCOME_AT} (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bytes)))
    (call $output_set (local.get $out) (i64.const {len}))
    (i32.const 0))
)
"#
    )
}

/// The Extism echo plugin's bytes.
pub fn extism_echo_wasm() -> Vec<u8> {
    wat::parse_str(extism_echo_wat()).expect("the Extism echo WAT is valid")
}

/// An Extism plugin of `wasm` as every peer row builds one: no WASI, and wasmtime's compilation cache off (nothing
/// written to the home directory). `what` names it in the panic when it does not build.
#[cfg(feature = "peers")]
pub fn extism_plugin(wasm: Vec<u8>, what: &str) -> extism::Plugin {
    extism::PluginBuilder::new(extism::Manifest::new([extism::Wasm::data(wasm)]))
        .with_wasi(false)
        .with_cache_disabled()
        .build()
        .unwrap_or_else(|e| panic!("the Extism {what} plugin builds: {e}"))
}

/// Checks that `wasm` validates with every post-MVP proposal off (bulk memory, sign extension, multi-value,
/// reference types, non-trapping float-to-int, mutable-global imports and exports, tail calls, extended
/// constants, multi-memory), so wasm3 0.3.1 (wasm3 0.4.7) can run it unchanged. The error says what failed.
pub fn check_mvp(wasm: &[u8]) -> Result<(), String> {
    let mut config = wasmi::Config::default();
    config
        .wasm_mutable_global(false)
        .wasm_sign_extension(false)
        .wasm_saturating_float_to_int(false)
        .wasm_multi_value(false)
        .wasm_multi_memory(false)
        .wasm_bulk_memory(false)
        .wasm_reference_types(false)
        .wasm_tail_call(false)
        .wasm_extended_const(false)
        .wasm_custom_page_sizes(false)
        .wasm_wide_arithmetic(false);
    wasmi::Module::validate(&wasmi::Engine::new(&config), wasm).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The section id of a data count section, which `wat` emits only for bulk-memory instructions.
    const DATA_COUNT_SECTION: u8 = 12;

    /// The ids of a module's top-level sections.
    fn section_ids(wasm: &[u8]) -> Vec<u8> {
        let mut ids = Vec::new();
        let mut at = 8;
        while at < wasm.len() {
            ids.push(wasm[at]);
            at += 1;
            let (mut size, mut shift) = (0usize, 0);
            loop {
                let byte = wasm[at];
                at += 1;
                size |= usize::from(byte & 0x7f) << shift;
                shift += 7;
                if byte & 0x80 == 0 {
                    break;
                }
            }
            at += size;
        }
        ids
    }

    #[test]
    fn the_fixtures_are_mvp_only_so_wasm3_runs_them_unchanged() {
        let fixtures = [
            ("echo", crate::echo_wasm()),
            ("fib", crate::fib_wasm()),
            ("loop", crate::loop_wasm()),
            ("large", crate::large_wasm()),
            ("extism echo", extism_echo_wasm()),
        ];
        for (name, wasm) in &fixtures {
            check_mvp(wasm).unwrap_or_else(|error| panic!("the {name} fixture is not MVP: {error}"));
            assert!(!section_ids(wasm).contains(&DATA_COUNT_SECTION), "the {name} fixture has a data count section");
        }
    }

    #[test]
    fn the_mvp_check_refuses_bulk_memory() {
        let wasm =
            wat::parse_str(r#"(module (memory 1) (func (memory.copy (i32.const 0) (i32.const 8) (i32.const 8))))"#)
                .expect("valid WAT");
        assert!(check_mvp(&wasm).is_err());
    }

    #[test]
    fn the_extism_echo_plugin_imports_only_the_kernel() {
        let engine = wasmi::Engine::default();
        let module = wasmi::Module::new(&engine, extism_echo_wasm()).expect("the Extism echo plugin compiles");
        assert!(module.imports().all(|import| import.module() == "extism:host/env"));
        assert!(module.exports().any(|export| export.name() == EXTISM_ECHO_FUNCTION));
    }
}
