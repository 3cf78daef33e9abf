//! The plugin interface (docs/ABI.md section 1), checked before instantiation: `memory`,
//! `tdm_alloc`, `tdm_free` and `tdm_plugin_execute_intent` with their exact types, and the
//! optional `_initialize`. A missing or mistyped export is `abi_mismatch`, naming the export;
//! `_start` is never called for a plugin.

use contour_conformance::{completed_output, fixture, framed, load_failure, sandbox, wat, wat_data};
use contour_core::{Failure, Policy};
use serde_json::json;

const MEMORY: &str = r#"(memory (export "memory") 1)"#;
const ALLOC: &str = r#"(func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)"#;
const FREE: &str = r#"(func (export "tdm_free") (param i32 i32))"#;
const EXECUTE: &str = r#"(func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16)"#;

/// A plugin from its four parts (any of which a test replaces) and a response at 16; when the
/// memory part does not define one, an unexported memory holds the response.
fn plugin(memory: &str, alloc: &str, free: &str, execute: &str, extra: &str) -> Vec<u8> {
    let own_memory = if memory.contains("(memory") { "" } else { "(memory 1)" };
    wat(&format!(
        r#"(module {memory} {own_memory} {alloc} {free} {execute} {extra}
  (data (i32.const 16) "{}"))"#,
        wat_data(&framed(br#"{"status":"completed","output":1}"#))
    ))
}

fn refused(wasm: &[u8]) -> Failure {
    let failure = load_failure(wasm, Policy::default());
    assert_eq!(failure.reason.as_str(), "abi_mismatch", "{failure}");
    failure
}

#[test]
fn the_complete_interface_loads_and_runs() {
    let report = sandbox(&plugin(MEMORY, ALLOC, FREE, EXECUTE, ""), Policy::default()).execute("x", &json!({}));
    assert_eq!(completed_output(&report), 1);
}

#[test]
fn each_missing_export_is_named() {
    let cases = [
        ("memory", plugin("", ALLOC, FREE, EXECUTE, "")),
        ("tdm_alloc", plugin(MEMORY, "", FREE, EXECUTE, "")),
        ("tdm_free", plugin(MEMORY, ALLOC, "", EXECUTE, "")),
        ("tdm_plugin_execute_intent", plugin(MEMORY, ALLOC, FREE, "", "")),
    ];
    for (name, wasm) in cases {
        let failure = refused(&wasm);
        assert!(failure.detail.contains(&format!("missing export `{name}`")), "{name}: {}", failure.detail);
    }
}

#[test]
fn an_empty_module_is_missing_every_export() {
    let failure = refused(&wat("(module)"));
    for name in ["memory", "tdm_alloc", "tdm_free", "tdm_plugin_execute_intent"] {
        assert!(failure.detail.contains(&format!("missing export `{name}`")), "{name}: {}", failure.detail);
    }
}

#[test]
fn each_mistyped_export_is_named() {
    let cases = [
        (
            "tdm_alloc",
            plugin(MEMORY, r#"(func (export "tdm_alloc") (param i64) (result i32) i32.const 1024)"#, FREE, EXECUTE, ""),
        ),
        ("tdm_alloc", plugin(MEMORY, r#"(func (export "tdm_alloc") (param i32))"#, FREE, EXECUTE, "")),
        ("tdm_alloc", plugin(MEMORY, r#"(global (export "tdm_alloc") i32 (i32.const 1024))"#, FREE, EXECUTE, "")),
        ("tdm_free", plugin(MEMORY, ALLOC, r#"(func (export "tdm_free") (param i32))"#, EXECUTE, "")),
        (
            "tdm_free",
            plugin(
                MEMORY,
                ALLOC,
                r#"(func (export "tdm_free") (param i32 i32) (result i32) i32.const 0)"#,
                EXECUTE,
                "",
            ),
        ),
        (
            "tdm_plugin_execute_intent",
            plugin(
                MEMORY,
                ALLOC,
                FREE,
                r#"(func (export "tdm_plugin_execute_intent") (param i32) (result i32) i32.const 16)"#,
                "",
            ),
        ),
        (
            "tdm_plugin_execute_intent",
            plugin(
                MEMORY,
                ALLOC,
                FREE,
                r#"(func (export "tdm_plugin_execute_intent") (param i32 i32) (result i64) i64.const 16)"#,
                "",
            ),
        ),
        ("memory", plugin(r#"(global (export "memory") i32 (i32.const 0))"#, ALLOC, FREE, EXECUTE, "")),
        ("memory", plugin(r#"(table (export "memory") 1 funcref)"#, ALLOC, FREE, EXECUTE, "")),
        ("memory", plugin(r#"(func (export "memory"))"#, ALLOC, FREE, EXECUTE, "")),
        ("_initialize", plugin(MEMORY, ALLOC, FREE, EXECUTE, r#"(func (export "_initialize") (param i32))"#)),
        (
            "_initialize",
            plugin(MEMORY, ALLOC, FREE, EXECUTE, r#"(func (export "_initialize") (result i32) i32.const 0)"#),
        ),
    ];
    for (name, wasm) in cases {
        let failure = refused(&wasm);
        assert!(failure.detail.contains(&format!("export `{name}` must be")), "{name}: {}", failure.detail);
    }
}

#[test]
fn a_memory_that_is_defined_but_not_exported_is_missing() {
    // `plugin("")` gives the module an unexported memory of its own.
    let failure = refused(&plugin("", ALLOC, FREE, EXECUTE, ""));
    assert!(failure.detail.contains("missing export `memory`"), "{}", failure.detail);
}

#[test]
fn initialize_runs_once_per_instance_and_start_never() {
    // reactor: `_initialize` counts its calls and `_start` traps.
    let mut sandbox = sandbox(&fixture("reactor"), Policy::default());
    assert_eq!(completed_output(&sandbox.execute("a", &json!({}))), json!([1, 1]));
    assert_eq!(completed_output(&sandbox.execute("b", &json!({}))), json!([1, 2]));
    sandbox.launch().expect("relaunches");
    assert_eq!(completed_output(&sandbox.execute("c", &json!({}))), json!([1, 1]));
}
