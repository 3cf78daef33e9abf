//! Params nested past `Policy::max_request_depth` (128 levels by default) are refused with
//! `request_too_deep` before anything reads them: an intent's params before the instance is
//! launched or written to, a host call's params before the embedder is asked to serve it (the
//! plugin is answered and goes on running). Depth is found by one scan, so 100,000 levels cost
//! no stack.

use contour_conformance::{fixture, load, wat, SEED};
use contour_core::{
    AuditRecord, BlockedReason, CallContext, HostAnswer, HostCall, HostIntents, Permissions, Policy, Sandbox,
    VirtualEnvironment,
};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// The default limit, which a policy names.
const DEPTH: usize = contour_core::DEFAULT_MAX_REQUEST_DEPTH;

/// Params `levels` deep: nested arrays as text (a `Value` this deep could not be dropped).
fn nested(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

fn raw(text: String) -> Box<serde_json::value::RawValue> {
    serde_json::value::RawValue::from_string(text).expect("nested arrays are JSON")
}

#[test]
fn intent_params_past_the_depth_are_refused_before_the_plugin_runs() {
    assert_eq!(Policy::default().max_request_depth, 128);
    let plugin = load(&fixture("echo"), Policy::default());
    let mut sandbox = Sandbox::new(plugin, Box::new(VirtualEnvironment::new(SEED)));
    let fine = sandbox.execute_raw_params("echo", &raw(nested(DEPTH)));
    assert!(fine.outcome.is_completed(), "{} levels are allowed: {}", DEPTH, fine.outcome.json);
    for levels in [DEPTH + 1, 100_000] {
        let report = sandbox.execute_raw_params("echo", &raw(nested(levels)));
        assert_eq!(
            report.outcome.blocked_reason(),
            Some(BlockedReason::RequestTooDeep),
            "{levels}: {}",
            report.outcome.json
        );
        assert_eq!(report.fuel_used, 0, "{levels}: the plugin never ran");
        assert!(!sandbox.is_live(), "{levels}: no instance is left after a refusal");
    }
    // Brackets inside strings are text, not depth.
    let text = format!("{{\"s\":\"{}\"}}", "[".repeat(100_000));
    assert!(sandbox.execute_raw_params("echo", &raw(text)).outcome.is_completed());
    // A raw JSON-RPC request counts its envelope as one level more.
    let request = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{}}}", nested(DEPTH + 1));
    let report = sandbox.execute_request(request.as_bytes());
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::RequestTooDeep), "{}", report.outcome.json);
    // The bound is the policy's.
    let shallow = Policy { max_request_depth: 2, ..Policy::default() };
    let mut sandbox = Sandbox::new(load(&fixture("echo"), shallow), Box::new(VirtualEnvironment::new(SEED)));
    assert!(sandbox.execute("echo", &json!({"a": [1]})).outcome.is_completed());
    let report = sandbox.execute("echo", &json!({"a": [[1]]}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::RequestTooDeep));
    assert_eq!(BlockedReason::from_name("request_too_deep"), Some(BlockedReason::RequestTooDeep));
}

/// What the embedder was asked to serve, and what was audited.
#[derive(Default)]
struct Seen {
    calls: usize,
    audits: Vec<AuditRecord>,
}

struct ServesEverything(Arc<Mutex<Seen>>);

impl HostIntents for ServesEverything {
    fn call(&mut self, call: &HostCall, _: &CallContext) -> HostAnswer {
        self.0.lock().expect("not poisoned").calls += 1;
        HostAnswer::ok(json!({"served": call.method().as_str()}))
    }

    fn audit(&mut self, record: &AuditRecord) {
        self.0.lock().expect("not poisoned").audits.push(record.clone());
    }
}

/// Runs the `deep_host_call` fixture making a host call whose params nest `levels + 1` deep;
/// returns the host's answer to it and what the embedder saw.
fn deep_host_call(levels: u32) -> (Value, Seen) {
    let text = std::fs::read_to_string(contour_conformance::fixture_path("deep_host_call")).unwrap();
    let text = text.replace("(i32.const 100000))", &format!("(i32.const {levels}))"));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let plugin = load(&wat(&text), Policy::default());
    let mut sandbox = Sandbox::new(plugin, Box::new(VirtualEnvironment::new(SEED)))
        .with_host(Box::new(ServesEverything(Arc::clone(&seen))), Permissions::default());
    let report = sandbox.execute("go", &json!({}));
    assert!(report.outcome.is_completed(), "the plugin goes on running: {}", report.outcome.json);
    let outcome: Value = serde_json::from_str(&report.outcome.json).unwrap();
    drop(sandbox);
    let seen = Arc::try_unwrap(seen).ok().expect("the sandbox is gone").into_inner().unwrap();
    (outcome["output"].clone(), seen)
}

#[test]
fn a_host_call_past_the_depth_is_answered_request_too_deep_and_never_served() {
    // `deep` holds 127 levels: the params nest 128, the limit, and the call is served.
    let (answer, seen) = deep_host_call(DEPTH as u32 - 1);
    assert_eq!(answer["status"], "completed", "{answer}");
    assert_eq!(seen.calls, 1);
    for levels in [DEPTH as u32, 100_000] {
        let (answer, seen) = deep_host_call(levels);
        assert_eq!(answer["status"], "failed", "{levels}: {answer}");
        assert_eq!(answer["blockedReason"], "request_too_deep", "{levels}: {answer}");
        assert_eq!(seen.calls, 0, "{levels}: the embedder was never asked");
        // The refusal is audited under the method the envelope names.
        assert_eq!(seen.audits.len(), 1, "{levels}");
        assert_eq!(seen.audits[0].method, "log", "{levels}");
        assert_eq!(seen.audits[0].reason, Some(BlockedReason::RequestTooDeep), "{levels}");
    }
}
