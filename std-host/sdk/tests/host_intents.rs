//! Host intents through the real sandbox: permission checks, `dist.read` confinement, `log`
//! bounds, `context.read`, the audit log, `tool.invoke` (cycles, depth, nested fuel) and abuse
//! of the two host imports.

use contour_core::BlockedReason;
use contour_core::{Permissions, Plugin, Policy, Sandbox, VirtualEnvironment};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tdm_sdk::intents::audit::{read_entries, AuditLog};
use tdm_sdk::intents::context::Context;
use tdm_sdk::intents::dist::Dist;
use tdm_sdk::intents::log::Log;
use tdm_sdk::intents::tool::{sha256_hex, Tools};
use tdm_sdk::intents::{net, vault, Notices, PluginIdentity, StdIntents};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures").join(name)
}

fn echo_module() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/echo/echo.wat")
}

/// Everything one test sandbox is built from.
struct Host {
    id: &'static str,
    module: PathBuf,
    policy: Policy,
    dist: Dist,
    log: Log,
    context: Context,
    tools: Tools,
    audit: Option<PathBuf>,
    grants: Vec<&'static str>,
}

impl Host {
    fn new(module: PathBuf) -> Self {
        Self {
            id: "forward",
            module,
            policy: Policy::default(),
            dist: Dist::new(None, 1 << 20),
            log: Log::new(100, 1 << 16),
            context: Context::default(),
            tools: Tools::default(),
            audit: None,
            grants: Vec::new(),
        }
    }

    fn build(self) -> Sandbox {
        let wasm = tdm_sdk::read_module(&self.module).expect("fixture compiles");
        let grants = Permissions::parse_all(self.grants.iter().copied()).expect("grants parse");
        let intents = StdIntents {
            identity: PluginIdentity { id: self.id.into(), hash: sha256_hex(&wasm) },
            dist: self.dist,
            log: self.log,
            net: net::Net::new(1 << 20),
            vault: vault::Vault::default(),
            context: self.context,
            tools: self.tools,
            audit: AuditLog::new(self.audit),
            grants: grants.clone(),
        };
        let plugin = Plugin::load(&wasm, self.policy).expect("fixture loads");
        Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(1))).with_host(Box::new(intents), grants)
    }
}

/// A JSON-RPC host request.
fn rpc(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

/// Runs the forward fixture's intent with `request` as its host call; the intent must complete.
/// Returns the host's outcome for that call and the intent's fuel.
fn forward_with_fuel(sandbox: &mut Sandbox, request: &Value) -> (Value, u64) {
    let report = sandbox.execute("forward", request);
    assert!(report.outcome.is_completed(), "the plugin did not answer: {}", report.outcome.json);
    let outcome: Value = serde_json::from_str(&report.outcome.json).unwrap();
    (outcome["output"].clone(), report.fuel_used)
}

fn forward(sandbox: &mut Sandbox, method: &str, params: Value) -> Value {
    forward_with_fuel(sandbox, &rpc(method, params)).0
}

fn assert_failed(outcome: &Value, reason: &str, fragment: &str) {
    assert_eq!(outcome["status"], "failed", "{outcome}");
    assert_eq!(outcome["blockedReason"], reason, "{outcome}");
    // A refusal no grant lifts never sends the reader to an operator for one.
    let hint = outcome["recoveryHint"].as_str().unwrap_or_default();
    assert!(reason != "forbidden" || !hint.contains("Ask an operator"), "{outcome}");
    let message = outcome["message"].as_str().unwrap();
    assert!(message.contains(fragment), "`{message}` does not mention `{fragment}`");
}

#[test]
fn each_method_without_its_grant_is_denied_and_the_plugin_goes_on() {
    let mut sandbox = Host::new(fixture("forward.wat")).build();
    let cases = [
        ("net.fetch", json!({"url": "https://example.com/x"}), "network:example.com"),
        ("tool.invoke", json!({"tool": "summarizer", "intent": "run", "params": {}}), "tool:summarizer"),
        ("vault.read", json!({"name": "api-key"}), "vault:read"),
        ("context.read", json!({"key": "user"}), "context:read"),
    ];
    for (method, params, permission) in cases {
        let outcome = forward(&mut sandbox, method, params);
        assert_failed(&outcome, "permission_denied", permission);
        assert!(sandbox.is_live(), "a denied call must not end the instance");
    }
    let outcome = forward(&mut sandbox, "log", json!({"level": "info", "message": "still here"}));
    assert_eq!(outcome, json!({"status": "completed", "output": {"logged": true}}));
}

fn dist_sandbox(dist: Dist) -> Sandbox {
    Host { dist, ..Host::new(fixture("forward.wat")) }.build()
}

#[test]
fn dist_read_serves_a_real_file() {
    let root = tempfile::tempdir().unwrap();
    let dist = root.path().join("dist");
    std::fs::create_dir_all(dist.join("sub")).unwrap();
    std::fs::write(dist.join("sub/hello.txt"), "héllo assets").unwrap();
    let mut sandbox = dist_sandbox(Dist::new(Some(dist), 1024));
    let outcome = forward(&mut sandbox, "dist.read", json!({"path": "sub/hello.txt"}));
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(outcome["output"], json!({"path": "sub/hello.txt", "size": 13, "text": "héllo assets"}));
}

#[cfg(unix)]
#[test]
fn dist_read_refuses_escapes_and_never_leaks_outside_files() {
    let root = tempfile::tempdir().unwrap();
    let dist = root.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    let secret = root.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-OUTSIDE").unwrap();
    std::os::unix::fs::symlink(&secret, dist.join("link")).unwrap();
    std::os::unix::fs::symlink("../secret.txt", dist.join("relative-link")).unwrap();
    std::os::unix::fs::symlink("..", dist.join("up")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dist.join("passwd")).unwrap();
    let mut sandbox = dist_sandbox(Dist::new(Some(dist), 1024));
    for path in
        ["../secret.txt", "/etc/passwd", "sub/../../secret.txt", "link", "relative-link", "up/secret.txt", "passwd"]
    {
        let outcome = forward(&mut sandbox, "dist.read", json!({ "path": path }));
        assert_failed(&outcome, "forbidden", path);
        let text = outcome.to_string();
        assert!(!text.contains("TOP-SECRET") && !text.contains("root:"), "{path} leaked: {text}");
    }
}

#[test]
fn dist_read_fails_clearly_on_missing_large_binary_and_absent_folder() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("big.txt"), "x".repeat(100)).unwrap();
    std::fs::write(root.path().join("bin.dat"), [0xff, 0xfe, 0x00]).unwrap();
    let mut sandbox = dist_sandbox(Dist::new(Some(root.path().to_path_buf()), 16));
    let outcome = forward(&mut sandbox, "dist.read", json!({"path": "big.txt"}));
    assert_failed(&outcome, "host_intent_failed", "the cap is 16 bytes");
    let outcome = forward(&mut sandbox, "dist.read", json!({"path": "bin.dat"}));
    assert_failed(&outcome, "host_intent_failed", "not UTF-8 text");
    let outcome = forward(&mut sandbox, "dist.read", json!({"path": "missing.txt"}));
    assert_failed(&outcome, "host_intent_failed", "no such file");
    // A path through a file names nothing either (not the OS's "Not a directory (os error 20)").
    let outcome = forward(&mut sandbox, "dist.read", json!({"path": "bin.dat/"}));
    assert_failed(&outcome, "host_intent_failed", "`bin.dat/`: no such file.");
    let mut sandbox = dist_sandbox(Dist::new(None, 16));
    let outcome = forward(&mut sandbox, "dist.read", json!({"path": "a.txt"}));
    assert_failed(&outcome, "host_intent_failed", "no dist/ folder");
}

#[test]
fn log_writes_lines_and_is_bounded_in_count_and_bytes() {
    let sink = Notices::default();
    let log = Log::new(2, 1000).with_sink(sink.clone());
    let mut sandbox = Host { log, ..Host::new(fixture("forward.wat")) }.build();
    let ok = json!({"status": "completed", "output": {"logged": true}});
    assert_eq!(forward(&mut sandbox, "log", json!({"level": "info", "message": "one"})), ok);
    let outcome = forward(&mut sandbox, "log", json!({"level": "shout", "message": "bad level"}));
    assert_failed(&outcome, "invalid_host_request", "invalid level");
    assert_eq!(forward(&mut sandbox, "log", json!({"level": "error", "message": "two\nforged"})), ok);
    let outcome = forward(&mut sandbox, "log", json!({"level": "info", "message": "three"}));
    assert_failed(&outcome, "host_call_limit_exceeded", "2 messages");
    // Kept as data; tdm escapes the line when it prints it (tdm/tests/terminal.rs).
    assert_eq!(lines(&sink), "[plugin forward info] one\n[plugin forward error] two\nforged\n");

    let sink = Notices::default();
    let log = Log::new(100, 10).with_sink(sink.clone());
    let mut sandbox = Host { log, ..Host::new(fixture("forward.wat")) }.build();
    assert_eq!(forward(&mut sandbox, "log", json!({"level": "debug", "message": "0123456789"})), ok);
    let outcome = forward(&mut sandbox, "log", json!({"level": "debug", "message": "x"}));
    assert_failed(&outcome, "host_call_limit_exceeded", "10 bytes");
    assert_eq!(lines(&sink), "[plugin forward debug] 0123456789\n");
}

/// The log lines in `sink` as tdm prints them (before escaping).
fn lines(sink: &Notices) -> String {
    sink.lock().unwrap().iter().map(|line| format!("{line}\n")).collect()
}

#[test]
fn context_read_with_its_grant_returns_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("context.json");
    std::fs::write(&path, r#"{"user": {"name": "ada"}, "locale": "en"}"#).unwrap();
    let context = Context::load(Some(&path)).unwrap();
    let mut sandbox = Host { context, grants: vec!["context:read"], ..Host::new(fixture("forward.wat")) }.build();
    let outcome = forward(&mut sandbox, "context.read", json!({"key": "user"}));
    assert_eq!(outcome["output"], json!({"key": "user", "value": {"name": "ada"}, "exists": true}));
    let outcome = forward(&mut sandbox, "context.read", json!({"key": "missing"}));
    assert_eq!(outcome["output"], json!({"key": "missing", "value": null, "exists": false}));

    std::fs::write(&path, "[1, 2]").unwrap();
    let error = Context::load(Some(&path)).unwrap_err().to_string();
    assert!(error.contains("context.json") && error.contains("object"), "{error}");
    std::fs::write(&path, "{oops").unwrap();
    let error = Context::load(Some(&path)).unwrap_err().to_string();
    assert!(error.contains("context.json") && error.contains("not valid JSON"), "{error}");
    let error = Context::load(Some(&dir.path().join("absent.json"))).unwrap_err().to_string();
    assert!(error.contains("absent.json"), "{error}");
}

#[test]
fn the_audit_log_gets_one_line_per_decision_and_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let dist = Dist::new(Some(dir.path().to_path_buf()), 1 << 20);
    let host =
        Host { audit: Some(audit.clone()), dist, grants: vec!["context:read"], ..Host::new(fixture("forward.wat")) };
    let hash = sha256_hex(&tdm_sdk::read_module(&host.module).unwrap());
    let mut sandbox = host.build();
    forward(&mut sandbox, "log", json!({"level": "info", "message": "hello"}));
    forward(&mut sandbox, "context.read", json!({"key": "k"}));
    forward(&mut sandbox, "vault.read", json!({"name": "api-key"}));
    let headers = json!({"Authorization": "Bearer s3cr3t-value-123"});
    forward(&mut sandbox, "net.fetch", json!({"url": "https://api.example.com/", "headers": headers}));
    forward(&mut sandbox, "no.such.method", json!({}));
    // Needs no permission, but the host refuses the path: the record says refused.
    forward(&mut sandbox, "dist.read", json!({"path": "../audit.jsonl"}));
    // Not a JSON-RPC 2.0 request: unreadable, and still recorded.
    let (answer, _) = forward_with_fuel(&mut sandbox, &json!({"jsonrpc": "1.0", "method": "log"}));
    assert_eq!(answer, json!({"hostCallError": -3}));

    let text = std::fs::read_to_string(&audit).unwrap();
    assert!(!text.contains("s3cr3t"), "a secret reached the audit log: {text}");
    assert_eq!(text.lines().count(), 7, "{text}");
    let entries = read_entries(&audit, Some("forward")).unwrap();
    let summary: Vec<(String, Value, bool, Value)> = entries
        .iter()
        .map(|e| {
            (
                e["method"].as_str().unwrap().to_string(),
                e["permission"].clone(),
                e["granted"] == true,
                e["reason"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("log".into(), Value::Null, true, Value::Null),
            ("context.read".into(), json!("context:read"), true, Value::Null),
            ("vault.read".into(), json!("vault:read"), false, json!("permission_denied")),
            ("net.fetch".into(), json!("network:api.example.com"), false, json!("permission_denied")),
            ("no.such.method".into(), Value::Null, false, json!("unknown_host_method")),
            ("dist.read".into(), Value::Null, false, json!("forbidden")),
            ("(unreadable)".into(), Value::Null, false, json!("invalid_host_request")),
        ]
    );
    for entry in &entries {
        assert_eq!(entry["plugin"], "forward");
        assert_eq!(entry["hash"], hash.as_str());
        assert!(entry["bytes"].as_u64().unwrap() > 0 && entry["fuel"].as_u64().unwrap() > 0, "{entry}");
        assert!(entry["time"].as_str().unwrap().ends_with('Z'), "{entry}");
    }
    assert!(read_entries(&audit, Some("someone-else")).unwrap().is_empty());
}

fn tool_invoke(tool: &str, request: Value) -> Value {
    rpc("tool.invoke", json!({"tool": tool, "intent": "forward", "params": request}))
}

#[test]
fn a_tool_invoking_itself_is_refused_as_a_cycle() {
    let registry =
        HashMap::from([("a".to_string(), fixture("forward.wat")), ("b".to_string(), fixture("forward.wat"))]);
    let log = rpc("log", json!({"level": "info", "message": "x"}));

    let tools = Tools::new(registry.clone(), vec!["a".into()], 4);
    let mut sandbox = Host { id: "a", tools, grants: vec!["tool:a"], ..Host::new(fixture("forward.wat")) }.build();
    let (outcome, _) = forward_with_fuel(&mut sandbox, &tool_invoke("a", log.clone()));
    assert_failed(&outcome, "forbidden", "cycle: a -> a");

    // a -> b -> a: b runs, and its call back into a is refused.
    let tools = Tools::new(registry, vec!["a".into()], 4).with_grants("b", Permissions::parse_all(["tool:a"]).unwrap());
    let mut sandbox = Host { id: "a", tools, grants: vec!["tool:b"], ..Host::new(fixture("forward.wat")) }.build();
    let (outcome, _) = forward_with_fuel(&mut sandbox, &tool_invoke("b", tool_invoke("a", log)));
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_failed(&outcome["output"], "forbidden", "cycle: a -> b -> a");
}

#[test]
fn an_unknown_tool_fails_clearly() {
    let mut sandbox = Host {
        tools: Tools::new(HashMap::new(), vec!["forward".into()], 4),
        grants: vec!["tool:ghost"],
        ..Host::new(fixture("forward.wat"))
    }
    .build();
    let (outcome, _) = forward_with_fuel(&mut sandbox, &tool_invoke("ghost", json!({})));
    assert_failed(&outcome, "host_intent_failed", "No tool `ghost`");
}

#[test]
fn a_tool_chain_is_refused_at_the_depth_limit() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let registry: HashMap<String, PathBuf> = (0..=6).map(|i| (format!("t{i}"), fixture("forward.wat"))).collect();
    let mut tools = Tools::new(registry, vec!["t0".into()], 4).with_audit(Some(audit.clone()));
    for i in 1..=6 {
        tools =
            tools.with_grants(format!("t{i}"), Permissions::parse_all([format!("tool:t{}", i + 1).as_str()]).unwrap());
    }
    // t0 invokes t1, which invokes t2, ... up to t6; the innermost request is a log call.
    let mut request = rpc("log", json!({"level": "info", "message": "deepest"}));
    for i in (1..=6).rev() {
        request = tool_invoke(&format!("t{i}"), request);
    }
    let host = Host {
        id: "t0",
        tools,
        audit: Some(audit.clone()),
        grants: vec!["tool:t1"],
        ..Host::new(fixture("forward.wat"))
    };
    let mut sandbox = host.build();
    let (outcome, _) = forward_with_fuel(&mut sandbox, &request);
    let text = outcome.to_string();
    assert!(text.contains("tool.invoke `t5` refused: depth limit 4 reached."), "{text}");
    // t1..t4 ran (nested, each wrapping the answer below it); t5 never did.
    let mut inner = &outcome;
    for _ in 1..=4 {
        assert_eq!(inner["status"], "completed", "{text}");
        inner = &inner["output"];
    }
    assert_failed(inner, "host_intent_failed", "depth limit 4");
    let plugins: Vec<String> =
        read_entries(&audit, None).unwrap().iter().map(|e| e["plugin"].as_str().unwrap().to_string()).collect();
    assert_eq!(plugins, ["t4", "t3", "t2", "t1", "t0"], "one tool.invoke decision per level, innermost first");
}

#[test]
fn nested_fuel_counts_against_the_caller() {
    let params = json!({"message": "hello world, nested"});
    let registry = HashMap::from([("echo".to_string(), echo_module())]);
    let tools = Tools::new(registry, vec!["forward".into()], 4);
    let mut sandbox = Host { tools, grants: vec!["tool:echo"], ..Host::new(fixture("forward.wat")) }.build();
    let with_call = rpc("tool.invoke", json!({"tool": "echo", "intent": "forward", "params": params}));
    let (outcome, with_fuel) = forward_with_fuel(&mut sandbox, &with_call);
    assert_eq!(outcome, json!({"status": "completed", "output": params}));
    let (_, without_fuel) =
        forward_with_fuel(&mut sandbox, &rpc("log", json!({"level": "info", "message": "hello world, nested"})));

    // The same echo intent on its own: launch plus intent fuel.
    let wasm = tdm_sdk::read_module(&echo_module()).unwrap();
    let mut echo =
        Sandbox::new(Arc::new(Plugin::load(&wasm, Policy::default()).unwrap()), Box::new(VirtualEnvironment::new(1)));
    let launch = echo.launch().unwrap().fuel_used;
    let nested = launch + echo.execute("forward", &params).fuel_used;
    assert!(nested > 0);
    assert!(with_fuel > without_fuel, "{with_fuel} <= {without_fuel}");
    assert!(with_fuel >= without_fuel + nested, "{with_fuel} < {without_fuel} + {nested}");
}

#[test]
fn a_nested_call_cannot_outspend_the_callers_budget() {
    let registry = HashMap::from([("echo".to_string(), echo_module())]);
    let call = rpc("tool.invoke", json!({"tool": "echo", "intent": "x", "params": {"k": "v".repeat(2000)}}));
    let log = rpc("log", json!({"level": "info", "message": "m"}));
    let host = |fuel_per_intent| Host {
        tools: Tools::new(registry.clone(), vec!["forward".into()], 4),
        policy: Policy { fuel_per_intent, fuel_slice: 100, ..Policy::default() },
        grants: vec!["tool:echo"],
        ..Host::new(fixture("forward.wat"))
    };
    let (_, alone) = forward_with_fuel(&mut host(1_000_000).build(), &log);
    let (_, nested) = forward_with_fuel(&mut host(1_000_000).build(), &call);
    assert!(nested > alone + 100, "{nested} vs {alone}");
    // A budget that covers the caller's own work but not the nested intent's.
    let budget = (alone + nested) / 2;
    let mut sandbox = host(budget).build();
    let report = sandbox.execute("forward", &call);
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted), "{}", report.outcome.json);
    assert!(report.fuel_used <= budget, "{} > {budget}", report.fuel_used);
}

#[test]
fn host_abi_abuse_gets_negative_codes_and_the_response_stays_pending() {
    let mut sandbox = Host::new(fixture("intent_abuse.wat")).build();
    let report = sandbox.execute("abuse", &json!({}));
    assert!(report.outcome.is_completed(), "{}", report.outcome.json);
    let output: Value = serde_json::from_str::<Value>(&report.outcome.json).unwrap()["output"].clone();
    let response = json!({"status": "completed", "output": {"logged": true}});
    let n = response.to_string().len() as i64;
    assert_eq!(output["codes"], json!([-1, -1, -2, -3, -3, -4, n, -5, -1, n, -4]), "{output}");
    assert_eq!(output["response"], response);
}

#[test]
fn too_many_host_calls_end_the_intent() {
    let policy = Policy { max_host_calls: 5, ..Policy::default() };
    let mut sandbox = Host { policy, ..Host::new(fixture("intent_flood.wat")) }.build();
    let report = sandbox.execute("flood", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::HostCallLimitExceeded), "{}", report.outcome.json);
    // The host goes on: the next intent runs in a fresh instance and hits the same limit.
    let report = sandbox.execute("flood", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::HostCallLimitExceeded), "{}", report.outcome.json);
}
