//! A module whose function body is invalid: rejected at load by default (every body is
//! validated), and with the opt-in `Lazy` compilation it loads but the intent that calls the
//! invalid body ends with `invalid_module`, never a host panic.

use contour_core::BlockedReason;
use contour_core::{Compilation, Plugin, Policy, Sandbox, VirtualEnvironment};
use std::sync::Arc;

/// A plugin whose `broken` function returns an i64 where it declares i32, called by the intent.
const BROKEN: &str = r#"(module
  (memory (export "memory") 1)
  (func $broken (result i32) i64.const 1)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) call $broken))"#;

#[test]
fn an_invalid_function_body_is_rejected_at_load_by_default() {
    let wasm = wat::parse_str(BROKEN).expect("the text parses");
    for compilation in [Compilation::LazyTranslation, Compilation::Eager] {
        let policy = Policy { compilation, ..Policy::default() };
        let failure = Plugin::load(&wasm, policy).err().expect("an invalid body does not load");
        assert_eq!(failure.reason.as_str(), "invalid_module", "{compilation:?}");
    }
    assert_eq!(Policy::default().compilation, Compilation::LazyTranslation);
}

#[test]
fn lazy_compilation_reports_an_invalid_body_when_it_is_called() {
    let wasm = wat::parse_str(BROKEN).expect("the text parses");
    let policy = Policy { compilation: Compilation::Lazy, ..Policy::default() };
    let plugin = Arc::new(Plugin::load(&wasm, policy).expect("Lazy defers body validation"));
    let mut sandbox = Sandbox::new(plugin, Box::new(VirtualEnvironment::new(1)));
    let report = sandbox.execute("x", &serde_json::json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::InvalidModule), "{}", report.outcome.json);
}
