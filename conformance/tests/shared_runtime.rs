//! Plugins loaded on one shared `Runtime` (one engine and linker, as a host keeps for all its
//! plugins) get the same load checks and the same isolation as plugins loaded alone: a counter in
//! one sandbox is not seen by another, a forbidden import is still refused, and a policy asking
//! for other engine settings than the runtime's is refused rather than silently ignored.

use contour_core::{Compilation, Plugin, Policy, Profile, Runtime, Sandbox, VirtualEnvironment};
use std::sync::Arc;

/// Counts its intents in a global and answers `{"status":"completed","output":{"n":<count>}}`
/// (one digit, enough for the test).
const COUNTER: &str = r#"(module
  (memory (export "memory") 1)
  (global $n (mut i32) (i32.const 0))
  (data (i32.const 16) "\27\00\00\00{\"status\":\"completed\",\"output\":{\"n\":0}}")
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (global.set $n (i32.add (global.get $n) (i32.const 1)))
    (i32.store8 (i32.const 56) (i32.add (i32.const 48) (global.get $n)))
    i32.const 16))"#;

fn count_of(sandbox: &mut Sandbox) -> String {
    let report = sandbox.execute("count", &serde_json::json!({}));
    assert!(report.outcome.is_completed(), "{}", report.outcome.json);
    report.outcome.json
}

#[test]
fn sandboxes_on_one_runtime_keep_their_own_state() {
    let runtime = Arc::new(Runtime::new(&Policy::default()).expect("the default policy is usable"));
    let wasm = wat::parse_str(COUNTER).expect("the text parses");
    let load = || {
        let plugin = Plugin::load_on(&runtime, &wasm, Policy::default(), Profile::Marketplace).expect("it loads");
        Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(1)))
    };
    let (mut first, mut second) = (load(), load());
    assert_eq!(count_of(&mut first), r#"{"status":"completed","output":{"n":1}}"#);
    assert_eq!(count_of(&mut first), r#"{"status":"completed","output":{"n":2}}"#);
    assert_eq!(count_of(&mut second), r#"{"status":"completed","output":{"n":1}}"#);
}

#[test]
fn a_shared_runtime_runs_the_same_load_checks() {
    let runtime = Arc::new(Runtime::new(&Policy::default()).expect("the default policy is usable"));
    let forbidden = wat::parse_str(
        r#"(module (import "wasi_snapshot_preview1" "path_open"
             (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
           (memory (export "memory") 1))"#,
    )
    .expect("the text parses");
    let alone = Plugin::load(&forbidden, Policy::default()).err().expect("refused alone");
    let shared = Plugin::load_on(&runtime, &forbidden, Policy::default(), Profile::Marketplace)
        .err()
        .expect("refused on a shared runtime");
    assert_eq!(shared, alone);
    assert_eq!(shared.reason.as_str(), "import_not_allowed");
}

#[test]
fn a_policy_the_runtime_does_not_fit_is_refused() {
    let runtime = Arc::new(Runtime::new(&Policy::default()).expect("the default policy is usable"));
    let wasm = wat::parse_str(COUNTER).expect("the text parses");
    for policy in [
        Policy { compilation: Compilation::Eager, ..Policy::default() },
        Policy { max_call_depth: 10, ..Policy::default() },
    ] {
        assert!(!runtime.fits(&policy));
        let failure = Plugin::load_on(&runtime, &wasm, policy, Profile::Marketplace).err().expect("refused");
        // The module is fine; the policy is what cannot be honoured here.
        assert_eq!(failure.reason.as_str(), "invalid_policy", "{failure}");
        assert!(failure.message().contains("runtime"), "{failure}");
    }
}

#[test]
fn an_unusable_policy_is_refused_on_a_shared_runtime_and_by_inspect() {
    let runtime = Arc::new(Runtime::new(&Policy::default()).expect("the default policy is usable"));
    let wasm = wat::parse_str(COUNTER).expect("the text parses");
    let unusable = Policy { fuel_per_intent: 0, ..Policy::default() };
    assert!(runtime.fits(&unusable), "the engine settings match; only a limit is unusable");
    let failure = Plugin::load_on(&runtime, &wasm, unusable.clone(), Profile::Marketplace).err().expect("refused");
    assert_eq!(failure.reason.as_str(), "invalid_policy");
    assert!(failure.message().contains("fuel_per_intent"), "{failure}");
    let failure = Plugin::inspect(&wasm, &unusable, Profile::Marketplace).expect_err("refused");
    assert_eq!(failure.reason.as_str(), "invalid_policy");
    assert!(failure.message().contains("fuel_per_intent"), "{failure}");
    assert_eq!(Runtime::new(&unusable).err().map(|f| f.reason.as_str()), Some("invalid_policy"));
}
