//! The bodies and oracles of Contour's fuzz targets, on the stable toolchain: each target is one
//! function of bytes here ([`targets`]), called by its libFuzzer binary (`fuzz/fuzz_targets/`,
//! nightly) and by the stable replay of the regression corpus (`fuzz/regressions/TARGET/`,
//! [`regressions`]), so a finding replayed by `make test` meets the very oracle that found it.
//! This file holds what the targets share: the small policy every execution runs under (so one
//! input runs in milliseconds), a host that answers every granted host call, and the run of one
//! module through load -> launch -> intent with the oracles every run must satisfy.

pub mod adversarial;
pub mod cross;
pub mod differential;
pub mod regressions;
pub mod smith;
pub mod targets;

pub use adversarial::{adversarial_plugin, ADVERSARIAL_WAT};
pub use smith::{smith_module, SmithKind};

use contour_core::{
    CallContext, HostAnswer, HostCall, HostIntents, IntentReport, Permissions, Plugin, Policy, Sandbox,
    VirtualEnvironment,
};
use std::sync::Arc;

/// The limits of every fuzzed execution: little fuel, 1 MiB of memory, a short deadline.
pub fn small_policy() -> Policy {
    Policy {
        max_memory_bytes: 1024 * 1024,
        fuel_per_intent: 200_000,
        start_fuel: 50_000,
        timeout_ms: 2_000,
        max_call_depth: 200,
        max_module_bytes: 1024 * 1024,
        fuel_slice: 20_000,
        max_request_bytes: 64 * 1024,
        max_response_bytes: 64 * 1024,
        max_output_bytes: 4 * 1024,
        max_host_calls: 16,
        max_host_bytes: 256 * 1024,
        max_host_request_bytes: 16 * 1024,
        ..Policy::default()
    }
}

/// Grants for every permission kind, so a host call reaches the embedder.
pub fn all_grants() -> Permissions {
    Permissions::parse_all(["network:example.com", "tool:echo", "vault:read", "context:read"])
        .expect("fixed grants parse")
}

/// A host that answers every call with a small JSON object naming it.
pub struct EchoHost;

impl HostIntents for EchoHost {
    fn call(&mut self, call: &HostCall, _context: &CallContext) -> HostAnswer {
        HostAnswer::ok(serde_json::json!({ "call": call.describe() }))
    }
}

/// Asserts that `text` is JSON a std reader takes into a tree (what every embedder does with an
/// outcome); only nesting past serde_json's depth limit is allowed, since an outcome's output
/// passes on at any depth the response limit allows.
pub fn assert_tree_json(text: &str) -> Option<serde_json::Value> {
    match serde_json::from_str(text) {
        Ok(value) => Some(value),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => None,
        Err(e) => panic!("a std reader refuses it ({e}): {text:?}"),
    }
}

/// The oracles of every intent, whatever the module did: the outcome is one JSON object with
/// a `status`, and fuel, memory and captured output stay within the policy.
pub fn check_report(report: &IntentReport, policy: &Policy) {
    if let Some(value) = assert_tree_json(&report.outcome.json) {
        assert!(value.get("status").is_some_and(serde_json::Value::is_string), "no status: {value}");
    }
    assert!(report.fuel_used <= policy.fuel_per_intent, "fuel {} over the budget", report.fuel_used);
    assert!(report.launch_fuel <= report.fuel_used, "launch fuel over the intent's");
    assert!(report.peak_memory_bytes <= policy.max_memory_bytes, "memory {} over the limit", report.peak_memory_bytes);
    assert!(report.stdout.len() <= policy.max_output_bytes && report.stderr.len() <= policy.max_output_bytes);
}

/// Loads `wasm` under [`small_policy`] and, when it loads, runs two intents through one sandbox
/// (the first launches it), checking every report. Returns the reports.
pub fn run_module(wasm: &[u8]) -> Vec<IntentReport> {
    let policy = small_policy();
    let Ok(plugin) = Plugin::load(wasm, policy.clone()) else { return Vec::new() };
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(7)))
        .with_host(Box::new(EchoHost), all_grants());
    let mut reports = Vec::new();
    for n in 0..2 {
        let report = sandbox.execute("fuzz", &serde_json::json!({ "n": n }));
        check_report(&report, &policy);
        reports.push(report);
    }
    reports
}
