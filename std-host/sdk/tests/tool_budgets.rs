//! A nested `tool.invoke` spends its caller's budgets, never fresh ones: fuel (launch and intent
//! together), host calls and bytes, log count and bytes, audit records, captured output. A
//! fan-out of tool calls that each log and call again is bounded by the caller's limits; a
//! tool's output arrives intact at any depth the response limit allows.

use contour_core::BlockedReason;
use contour_core::{Permissions, Plugin, Policy, Sandbox, VirtualEnvironment};
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tdm_sdk::intents::audit::{read_entries, AuditLog};
use tdm_sdk::intents::context::Context;
use tdm_sdk::intents::dist::Dist;
use tdm_sdk::intents::log::Log;
use tdm_sdk::intents::tool::Tools;
use tdm_sdk::intents::{net, vault, Notices, PluginIdentity, StdIntents};

/// A plugin whose every intent writes `stdout` to fd 1, then makes the host call `request`
/// `times` times (ignoring the answers), then answers `{"status":"completed","output":1}`.
fn repeater(request: &serde_json::Value, times: u32, stdout: &str) -> String {
    let request = request.to_string();
    let escape = |text: &str| text.bytes().map(|b| format!("\\{b:02x}")).collect::<String>();
    format!(
        r#"(module
  (import "tdm" "tdm_host_call" (func $call (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 16) "\21\00\00\00{{\"status\":\"completed\",\"output\":1}}")
  (data (i32.const 4096) "{request}")
  (data (i32.const 32768) "{stdout}")
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 65536)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) (local $i i32)
    (i32.store (i32.const 512) (i32.const 32768))
    (i32.store (i32.const 516) (i32.const {stdout_len}))
    (drop (call $fd_write (i32.const 1) (i32.const 512) (i32.const 1) (i32.const 520)))
    (loop $again
      (drop (call $call (i32.const 4096) (i32.const {len})))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const {times}))))
    i32.const 16))"#,
        request = escape(&request),
        len = request.len(),
        stdout = escape(stdout),
        stdout_len = stdout.len(),
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn rpc(method: &str, params: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

struct Caller {
    sandbox: Sandbox,
    log_lines: Notices,
    audit: PathBuf,
}

/// A caller plugin (`module`, id "caller", granted `tool:*` for every registered tool) whose
/// host intents log into a captured sink (at most 100 messages) and audit into `dir`.
fn caller(dir: &Path, module: &Path, registry: HashMap<String, PathBuf>, policy: Policy) -> Caller {
    let wasm = tdm_sdk::read_module(module).expect("the caller compiles");
    let grants: Vec<String> = registry.keys().map(|id| format!("tool:{id}")).collect();
    let grants = Permissions::parse_all(grants.iter().map(String::as_str)).unwrap();
    let audit = dir.join("audit.jsonl");
    let log_lines = Notices::default();
    let mut tools = Tools::new(registry.clone(), vec!["caller".into()], 4).with_audit(Some(audit.clone()));
    for id in registry.keys() {
        // Every tool may call every tool (cycles are still refused by the chain).
        let all: Vec<String> = registry.keys().map(|t| format!("tool:{t}")).collect();
        tools = tools.with_grants(id.clone(), Permissions::parse_all(all.iter().map(String::as_str)).unwrap());
    }
    let intents = StdIntents {
        identity: PluginIdentity { id: "caller".into(), hash: "00".into() },
        dist: Dist::new(None, 0),
        log: Log::new(100, 1 << 16).with_sink(Arc::clone(&log_lines)),
        net: net::Net::new(1 << 20),
        vault: vault::Vault::default(),
        context: Context::default(),
        tools,
        audit: AuditLog::new(Some(audit.clone())),
        grants: grants.clone(),
    };
    let plugin = Arc::new(Plugin::load(&wasm, policy).expect("the caller loads"));
    let sandbox = Sandbox::new(plugin, Box::new(VirtualEnvironment::new(1))).with_host(Box::new(intents), grants);
    Caller { sandbox, log_lines, audit }
}

#[test]
fn a_fan_out_of_tool_calls_is_bounded_by_the_callers_budgets() {
    let dir = tempfile::tempdir().unwrap();
    // The tool prints a line and logs 1,000 times; the caller invokes it 10,000 times.
    let log = rpc("log", json!({"level": "info", "message": "x".repeat(200)}));
    let tool = write(dir.path(), "logger.wat", &repeater(&log, 1_000, "tool says hello\n"));
    let invoke = rpc("tool.invoke", json!({"tool": "logger", "intent": "x", "params": {}}));
    let module = write(dir.path(), "caller.wat", &repeater(&invoke, 10_000, ""));
    let registry = HashMap::from([("logger".to_string(), tool)]);
    let policy = Policy::default();
    let max_calls = policy.max_host_calls as usize;
    let mut caller = caller(dir.path(), &module, registry, policy);
    let report = caller.sandbox.execute("fan", &json!({}));
    assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::HostCallLimitExceeded), "{}", report.outcome.json);
    assert!(report.host_calls as usize <= max_calls + 1, "host calls {}", report.host_calls);
    let lines = caller.log_lines.lock().unwrap().len();
    assert_eq!(lines, 100, "every nested log spent the caller's 100 messages");
    let audited = read_entries(&caller.audit, None).unwrap().len();
    assert!(audited <= max_calls + 1, "{audited} audit records for a limit of {max_calls} calls");
    // The tool's own output reached the caller's capture, within the caller's bound.
    let stdout = String::from_utf8_lossy(&report.stdout);
    assert!(stdout.starts_with("tool says hello\n"), "{stdout}");
    assert!(report.stdout.len() <= Policy::default().max_output_bytes);
}

#[test]
fn nested_launch_and_intent_spend_the_callers_fuel() {
    let dir = tempfile::tempdir().unwrap();
    // A tool whose `_initialize` spins: its launch must be charged to the caller too.
    let spinner = r#"(module (memory (export "memory") 1)
      (func (export "_initialize") (local $i i32)
        (loop $again (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $again (i32.lt_u (local.get $i) (i32.const 200000)))))
      (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
      (func (export "tdm_free") (param i32 i32))
      (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16)
      (data (i32.const 16) "\21\00\00\00{\"status\":\"completed\",\"output\":1}"))"#;
    let tool = write(dir.path(), "spinner.wat", spinner);
    let invoke = rpc("tool.invoke", json!({"tool": "spinner", "intent": "x", "params": {}}));
    let module = write(dir.path(), "caller.wat", &repeater(&invoke, 1, ""));
    let registry = HashMap::from([("spinner".to_string(), tool.clone())]);
    let roomy = caller(dir.path(), &module, registry.clone(), Policy::default()).sandbox.execute("x", &json!({}));
    assert!(roomy.outcome.is_completed(), "{}", roomy.outcome.json);
    let alone = Sandbox::new(
        Arc::new(Plugin::load(&tdm_sdk::read_module(&tool).unwrap(), Policy::default()).unwrap()),
        Box::new(VirtualEnvironment::new(1)),
    )
    .execute("x", &json!({}));
    assert!(alone.launch_fuel > 900_000, "{}", alone.launch_fuel);
    assert!(roomy.fuel_used > alone.fuel_used, "the caller paid for the tool's launch and intent");
    // Half the tool's launch fuel left: the nested launch runs out, and the caller is charged
    // no more than its budget.
    let budget = roomy.fuel_used - alone.fuel_used / 2;
    let tight = Policy { fuel_per_intent: budget, ..Policy::default() };
    let report = caller(dir.path(), &module, registry, tight).sandbox.execute("x", &json!({}));
    assert!(report.fuel_used <= budget, "{} > {budget}", report.fuel_used);
}

#[test]
fn a_tools_deep_output_arrives_intact() {
    let dir = tempfile::tempdir().unwrap();
    // A tool answering an output nested 200 deep (deeper than serde_json's default limit).
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let body = format!(r#"{{"status":"completed","output":{deep}}}"#);
    let framed: String =
        (body.len() as u32).to_le_bytes().iter().chain(body.as_bytes()).map(|b| format!("\\{b:02x}")).collect();
    let tool = write(
        dir.path(),
        "deep.wat",
        &format!(
            r#"(module (memory (export "memory") 1)
      (func (export "tdm_alloc") (param i32) (result i32) i32.const 4096)
      (func (export "tdm_free") (param i32 i32))
      (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16)
      (data (i32.const 16) "{framed}"))"#
        ),
    );
    let forward = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/forward.wat");
    let registry = HashMap::from([("deep".to_string(), tool)]);
    let mut caller = caller(dir.path(), &forward, registry, Policy::default());
    let request = rpc("tool.invoke", json!({"tool": "deep", "intent": "x", "params": {}}));
    let report = caller.sandbox.execute("forward", &request);
    assert!(report.outcome.is_completed(), "{}", report.outcome.json);
    let expected = format!(r#"{{"status":"completed","output":{{"status":"completed","output":{deep}}}}}"#);
    assert_eq!(report.outcome.json, expected);
}
