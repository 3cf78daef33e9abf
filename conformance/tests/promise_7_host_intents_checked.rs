//! Promise 7: network, tool, vault and context access flow only through host intents, each
//! checked against the permissions the operator granted to that plugin.
//!
//! Core alone, no std host: the embedder here answers every call it is given (completed) and
//! records it, so nothing but core's check stands between the plugin and the embedder. The
//! `forward` fixture turns its intent's params into one `tdm_host_call` and answers with the
//! host's outcome. Without a grant, or with a grant for something else (another host, a
//! wildcard that does not cover it, another form of an address, another tool), every call is
//! answered `permission_denied` and the embedder is never called; with the right grant it is.

use contour_conformance::{fixture, load, SEED};
use contour_core::BlockedReason;
use contour_core::{
    AuditRecord, CallContext, HostAnswer, HostCall, HostIntents, Permissions, Policy, Sandbox, VirtualEnvironment,
};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// What the embedder saw: the calls it was asked to serve and every audited decision.
#[derive(Default)]
struct Seen {
    calls: Vec<HostCall>,
    audits: Vec<AuditRecord>,
}

/// An embedder that serves every call it is given, so only core's check can refuse one.
struct ServesEverything(Arc<Mutex<Seen>>);

impl HostIntents for ServesEverything {
    fn call(&mut self, call: &HostCall, _: &CallContext) -> HostAnswer {
        self.0.lock().expect("not poisoned").calls.push(call.clone());
        HostAnswer::ok(json!({"served": call.method().as_str()}))
    }

    fn audit(&mut self, record: &AuditRecord) {
        self.0.lock().expect("not poisoned").audits.push(record.clone());
    }
}

/// Runs one host call with `grants` and returns the host's outcome and what the embedder saw.
fn call_with(grants: &[&str], method: &str, params: Value) -> (Value, Seen) {
    let grants = Permissions::parse_all(grants.iter().copied()).unwrap_or_else(|e| panic!("{e}"));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let plugin = load(&fixture("forward"), Policy::default());
    let mut sandbox = Sandbox::new(plugin, Box::new(VirtualEnvironment::new(SEED)))
        .with_host(Box::new(ServesEverything(Arc::clone(&seen))), grants);
    let report = sandbox.execute("forward", &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    assert!(report.outcome.is_completed(), "the plugin must keep running: {}", report.outcome.json);
    let outcome: Value = serde_json::from_str(&report.outcome.json).expect("the outcome is JSON");
    drop(sandbox);
    let seen = Arc::try_unwrap(seen).ok().expect("the sandbox is gone").into_inner().expect("not poisoned");
    (outcome["output"].clone(), seen)
}

fn fetch(url: &str) -> (&'static str, Value) {
    ("net.fetch", json!({"url": url}))
}

/// Every host method that needs a permission, with params naming what it reaches.
fn calls() -> [(&'static str, Value); 4] {
    [
        fetch("https://b.com/"),
        ("tool.invoke", json!({"tool": "b", "intent": "run", "params": {}})),
        ("vault.read", json!({"name": "API_KEY"})),
        ("context.read", json!({"key": "user"})),
    ]
}

fn assert_denied(grants: &[&str], method: &str, params: Value) {
    let (host, seen) = call_with(grants, method, params.clone());
    let case = format!("{method} {params} with {grants:?}");
    assert_eq!(host["status"], "failed", "{case}: {host}");
    assert_eq!(host["blockedReason"], "permission_denied", "{case}: {host}");
    assert!(seen.calls.is_empty(), "{case}: the embedder was called with {:?}", seen.calls);
    // The refusal is a decision the embedder is told about, naming what was needed.
    assert_eq!(seen.audits.len(), 1, "{case}");
    assert!(!seen.audits[0].granted, "{case}");
    let needed = seen.audits[0].permission.clone().expect("a denied call names its permission");
    assert!(host["message"].as_str().unwrap_or("").contains(&needed), "{case}: {host}");
}

fn assert_served(grants: &[&str], method: &str, params: Value) -> HostCall {
    let (host, mut seen) = call_with(grants, method, params.clone());
    let case = format!("{method} {params} with {grants:?}");
    assert_eq!(host, json!({"status": "completed", "output": {"served": method}}), "{case}");
    assert_eq!(seen.calls.len(), 1, "{case}");
    assert!(seen.audits.len() == 1 && seen.audits[0].granted, "{case}");
    seen.calls.remove(0)
}

#[test]
fn without_a_grant_no_call_reaches_the_embedder() {
    for (method, params) in calls() {
        assert_denied(&[], method, params);
    }
}

#[test]
fn a_grant_for_something_else_reaches_nothing() {
    let every_other_grant = ["network:a.com", "network:*.b.com", "tool:a", "tool:B", "vault:read", "context:read"];
    for (method, params) in calls() {
        let needed: &[&str] = match method {
            "net.fetch" => &["network:a.com", "network:*.b.com"],
            "tool.invoke" => &["tool:a", "tool:B"],
            "vault.read" => &["vault:read"],
            _ => &["context:read"],
        };
        let others: Vec<&str> = every_other_grant.iter().copied().filter(|g| !needed.contains(g)).collect();
        assert_denied(&others, method, params.clone());
    }
    // The near misses of tool ids: ids are compared exactly.
    for grant in ["tool:a", "tool:B", "tool:b.", "tool:bb"] {
        assert_denied(&[grant], "tool.invoke", json!({"tool": "b", "intent": "run"}));
    }
}

#[test]
fn network_grants_do_not_stretch_to_other_hosts() {
    let cases: &[(&str, &str)] = &[
        ("network:a.com", "https://b.com/"),
        ("network:a.com", "https://B.COM./"),
        ("network:a.com", "https://a.com.b.com/"),
        ("network:a.com", "https://x.a.com/"),
        ("network:A.com.", "https://b.com/"),
        ("network:*.a.com", "https://a.com/"),
        ("network:*.a.com", "https://evila.com/"),
        ("network:*.a.com", "https://a.com.evil.com/"),
        ("network:localhost", "http://127.0.0.1/"),
        ("network:127.0.0.2", "http://127.0.0.1/"),
        ("network:127.0.0.2", "http://0x7f.1/"),
        ("network:127.0.0.2", "http://127.0.0.1./"),
        ("network:127.0.0.2", "http://2130706433/"),
        ("network:127.0.0.2", "http://[::ffff:127.0.0.1]/"),
        ("network:[::1]", "http://127.0.0.1/"),
        ("network:127.0.0.1", "http://[::1]/"),
        // Wildcards match host names only, never an address in any form.
        ("network:*.0.0.1.com", "http://127.0.0.1/"),
        ("network:*.0.0.1.com", "http://0.0.1.com/"),
        ("network:*.example.com", "http://[::1]/"),
    ];
    for (grant, url) in cases {
        let (method, params) = fetch(url);
        assert_denied(&[grant], method, params);
    }
}

#[test]
fn a_wildcard_that_reads_as_an_address_cannot_be_granted() {
    for grant in ["network:*.0.0.1", "network:*.1", "network:*.0x7f.1", "network:*.[::1]"] {
        let error = Permissions::parse_all([grant]).expect_err(grant).to_string();
        assert!(error.contains(grant) && error.contains("IP address"), "{error}");
    }
}

#[test]
fn a_host_no_one_can_read_the_same_way_is_refused_before_the_embedder() {
    for url in ["http://1.2.3.4.5/", "http://example.com.127.0.0.1/", "http://a@b.com/", "http://::1/", "ftp://a.com/"]
    {
        let (host, seen) = call_with(&["network:*.example.com", "network:b.com"], "net.fetch", json!({"url": url}));
        assert_eq!(host["blockedReason"], "invalid_host_request", "{url}: {host}");
        assert!(seen.calls.is_empty(), "{url}");
    }
}

#[test]
fn the_right_grant_reaches_the_embedder_with_the_canonical_host() {
    for (method, params) in calls() {
        let grant = match method {
            "net.fetch" => "network:b.com",
            "tool.invoke" => "tool:b",
            "vault.read" => "vault:read",
            _ => "context:read",
        };
        assert_served(&[grant], method, params);
    }
    let cases: &[(&str, &str, &str)] = &[
        ("network:B.com.", "https://b.com/", "b.com"),
        ("network:b.com", "https://B.Com.:8443/x", "b.com"),
        ("network:*.example.com", "https://API.Example.com./", "api.example.com"),
        ("network:127.0.0.1", "http://0x7f.1:8080/", "127.0.0.1"),
        ("network:0177.0.0.1", "http://127.0.0.1./", "127.0.0.1"),
        ("network:127.0.0.1", "http://[::ffff:7f00:1]/", "127.0.0.1"),
        ("network:[::1]", "http://[0:0::1]/", "::1"),
    ];
    for (grant, url, canonical) in cases {
        let (method, params) = fetch(url);
        match assert_served(&[grant], method, params) {
            HostCall::NetFetch { host, .. } => assert_eq!(host, *canonical, "{grant} {url}"),
            other => panic!("{other:?}"),
        }
    }
}

/// An embedder whose answer says serving the call spent `fuel` (a nested tool's launch and
/// intent, say), and which records every audited decision.
struct SpendsFuel {
    fuel: u64,
    audits: Arc<Mutex<Vec<AuditRecord>>>,
}

impl HostIntents for SpendsFuel {
    fn call(&mut self, _: &HostCall, _: &CallContext) -> HostAnswer {
        let mut answer = HostAnswer::ok(json!({"served": true}));
        answer.spent.fuel = self.fuel;
        answer
    }

    fn audit(&mut self, record: &AuditRecord) {
        self.audits.lock().expect("not poisoned").push(record.clone());
    }
}

#[test]
fn a_call_whose_cost_ends_the_run_is_audited_with_the_outcomes_reason() {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tool.invoke",
        "params": {"tool": "b", "intent": "run", "params": {}}});
    let run = |spent: u64| {
        let audits = Arc::new(Mutex::new(Vec::new()));
        let plugin = load(&fixture("forward"), Policy { fuel_per_intent: 1_000_000, ..Policy::default() });
        let host = SpendsFuel { fuel: spent, audits: Arc::clone(&audits) };
        let grants = Permissions::parse_all(["tool:b"]).expect("a grant");
        let mut sandbox =
            Sandbox::new(plugin, Box::new(VirtualEnvironment::new(SEED))).with_host(Box::new(host), grants);
        let report = sandbox.execute("forward", &request);
        drop(sandbox);
        let audits = audits.lock().expect("not poisoned").clone();
        (report, audits)
    };
    // Within the budget: the call is served and audited as granted, answer bytes included.
    let (report, audits) = run(1_000);
    assert!(report.outcome.is_completed(), "{}", report.outcome.json);
    assert_eq!(audits.len(), 1, "{audits:?}");
    assert_eq!(audits[0].reason, None, "{audits:?}");
    let served_bytes = audits[0].bytes;
    // The nested work spent more than the run had left: the run ends with fuel_exhausted, and
    // the audit says so, counting only the request (the plugin never got the answer).
    let (report, audits) = run(10_000_000);
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted), "{}", report.outcome.json);
    assert_eq!(audits.len(), 1, "{audits:?}");
    assert_eq!(
        audits[0].reason,
        Some(BlockedReason::FuelExhausted),
        "the audit says what the outcome says: {audits:?}"
    );
    assert!(audits[0].granted, "{audits:?}");
    assert!(audits[0].bytes < served_bytes, "no answer bytes: {audits:?}");
}
