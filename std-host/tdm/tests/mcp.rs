//! `tdm mcp` through the built binary, driven over stdio as an agent's client would: the
//! handshake and its order, the tools (only approved plugins' declared intents), calls run as
//! `tdm call` runs them, a revoke in another shell seen at once, cancellation and the bound on
//! calls in flight, and bad input of every kind answered with an error while the server goes
//! on. Every wait is bounded (30 s), so a server that hangs fails the test.

#[path = "support/mcp_stdio.rs"]
mod mcp_stdio;
#[path = "support/tdm.rs"]
mod support;

use mcp_stdio::{error_code, initialize, Mcp};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use support::{install_approved, package, repo, tdm, text, SPIN};

/// A workspace with echo (approved), `spin` (approved) and `pending` (installed only).
fn workspace(dir: &Path) -> PathBuf {
    let ws = dir.join("ws");
    let echo = std::fs::read_to_string(repo().join("examples/echo/echo.wat")).unwrap();
    install_approved(&ws, &package(dir, "echo-pkg", "echo", &echo, &[("greet", "Returns its params.")], ""));
    install_approved(&ws, &package(dir, "spin-pkg", "spin", SPIN, &[("spin", "Never ends.")], ""));
    let pending = package(dir, "pending-pkg", "pending", &echo, &[("greet", "Not approved.")], "");
    let out = tdm(&ws, &["install", "--allow-unsigned", &pending.display().to_string()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    ws
}

#[test]
fn the_handshake_negotiates_a_revision_and_comes_first() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    for (asked, given) in [
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),
    ] {
        let mut mcp = Mcp::start(&ws, &[]);
        assert_eq!(mcp.request(1, "ping", json!({}))["result"], json!({}), "ping needs no handshake");
        // A probe that names no revision is told which are served.
        let probe = mcp.request(2, "server/discover", json!({}));
        assert_eq!(error_code(&probe), -32022, "{probe}");
        assert_eq!(probe["error"]["data"]["supported"][3], "2026-07-28", "{probe}");
        assert_eq!(error_code(&mcp.request(3, "tools/list", json!({}))), -32600, "before initialize");
        let answer = mcp.request(4, "initialize", initialize(asked));
        assert_eq!(answer["result"]["protocolVersion"], given, "{answer}");
        assert_eq!(answer["result"]["capabilities"]["tools"]["listChanged"], true, "{answer}");
        assert_eq!(error_code(&mcp.request(5, "initialize", initialize(asked))), -32600, "a second initialize");
        assert_eq!(error_code(&mcp.request(6, "no/such/method", json!({}))), -32601);
        let (code, _) = mcp.close();
        assert_eq!(code, Some(0));
    }
}

#[test]
fn tools_are_the_approved_intents_and_calls_run_as_tdm_call_runs_them() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let mut mcp = Mcp::initialized(&ws, &[]);
    let listed = mcp.request(1, "tools/list", json!({}));
    let names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["echo__greet", "spin__spin"], "the installed-only plugin is not listed: {listed}");
    let greet = &listed["result"]["tools"][0];
    assert_eq!(greet["description"], "Returns its params.");
    assert_eq!(greet["inputSchema"], json!({"type": "object"}));
    assert_eq!(greet["annotations"]["openWorldHint"], false);

    let answer = mcp.call(2, "echo__greet", json!({"name": "Ada"}));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(answer["result"]["structuredContent"], json!({"name": "Ada"}), "{answer}");
    let text_block: Value = serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text_block, json!({"name": "Ada"}));

    // Arguments that are not an object are refused before the plugin runs.
    let refused = mcp.call(3, "echo__greet", json!([1, 2]));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(refused["result"]["structuredContent"]["blockedReason"], "invalid_params", "{refused}");
    // The installed-only plugin's intent is refused as not approved, a nameless one as unknown.
    let pending = mcp.call(4, "pending__greet", json!({}));
    assert_eq!(pending["result"]["structuredContent"]["blockedReason"], "not_approved", "{pending}");
    assert!(pending["result"]["content"][0]["text"].as_str().unwrap().contains("tdm approve"), "{pending}");
    assert_eq!(error_code(&mcp.call(5, "nosuch__tool", json!({}))), -32602);
    let (code, _) = mcp.close();
    assert_eq!(code, Some(0));
    // As `tdm call` does, the call's figures are kept in the workspace.
    let status = tdm(&ws, &["workspace", "status", "--json"], b"");
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    let echo = status["plugins"].as_array().unwrap().iter().find(|p| p["id"] == "echo").unwrap().clone();
    assert!(echo["lastCall"].is_object(), "{echo}");
}

#[test]
fn a_revoke_in_another_shell_changes_the_list_and_refuses_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let mut mcp = Mcp::initialized(&ws, &["--plugin", "echo"]);
    let listed = mcp.request(1, "tools/list", json!({}));
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 1, "--plugin narrows: {listed}");
    let out = tdm(&ws, &["revoke", "echo"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    mcp.wait_for("tools/list_changed", |m| m["method"] == "notifications/tools/list_changed");
    let answer = mcp.call(2, "echo__greet", json!({}));
    assert_eq!(answer["result"]["structuredContent"]["blockedReason"], "not_approved", "{answer}");
    assert_eq!(mcp.request(3, "tools/list", json!({}))["result"]["tools"], json!([]));
    mcp.close();
}

#[test]
fn a_cancelled_call_stops_others_go_on_and_calls_in_flight_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    // One worker: four calls may be held, the fifth is refused.
    let mut mcp = Mcp::initialized(&ws, &["--workers", "1"]);
    mcp.send_request(10, "tools/call", json!({"name": "spin__spin", "arguments": {}}));
    for id in 11..14 {
        mcp.send_request(id, "tools/call", json!({"name": "echo__greet", "arguments": {"n": id}}));
    }
    let busy = mcp.request(14, "tools/call", json!({"name": "echo__greet", "arguments": {}}));
    assert_eq!(error_code(&busy), -32000, "{busy}");
    assert!(busy["error"]["message"].as_str().unwrap().contains("in flight"), "{busy}");
    // Reusing the id of a call in flight is refused.
    assert_eq!(error_code(&mcp.request(10, "tools/call", json!({"name": "echo__greet"}))), -32600);
    // The spin holds the one worker until it is cancelled; then the queued calls run.
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10}}).to_string());
    let mut answered: Vec<u64> = (0..3)
        .map(|_| mcp.wait_for("a queued call's answer", |m| m.get("result").is_some()))
        .map(|m| m["result"]["structuredContent"]["n"].as_u64().unwrap_or_else(|| panic!("{m}")))
        .collect();
    answered.sort_unstable();
    assert_eq!(answered, [11, 12, 13]);
    assert_eq!(mcp.request(15, "ping", json!({}))["result"], json!({}));
    // A spin that stdin's end cancels is answered `cancelled`, not `deadline_exceeded` (5 s).
    mcp.send_request(16, "tools/call", json!({"name": "spin__spin", "arguments": {}}));
    std::thread::sleep(Duration::from_millis(200));
    let (code, rest, seen) = mcp.close_and_see();
    assert_eq!(code, Some(0));
    assert!(
        seen.iter().all(|m| m["id"] != 10 || m.get("error").is_some()),
        "a cancelled call is not answered: {seen:?}"
    );
    let last = rest.iter().find(|m| m["id"] == 16).unwrap_or_else(|| panic!("call 16 answered: {rest:?}"));
    assert_eq!(last["result"]["structuredContent"]["blockedReason"], "cancelled", "{last}");
}

#[test]
fn bad_input_gets_an_error_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let mut mcp = Mcp::initialized(&ws, &[]);
    let deep = format!("{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo__greet\",\"arguments\":{{\"a\":{}1{}}}}}}}", "[".repeat(100_000), "]".repeat(100_000));
    let cases: Vec<(Vec<u8>, i64)> = vec![
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":".to_vec(), -32700),
        (b"not json at all".to_vec(), -32700),
        (b"\xff\xfe\x00garbage".to_vec(), -32700),
        (b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]".to_vec(), -32600),
        (b"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}".to_vec(), -32600),
        (
            format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{}\",\"method\":\"ping\"}}", "i".repeat(100_000)).into_bytes(),
            -32600,
        ),
        (vec![b'x'; 5 * 1024 * 1024], -32600),
        (deep.into_bytes(), -32700),
    ];
    for (line, code) in cases {
        let stdin = mcp.stdin.as_mut().unwrap();
        stdin.write_all(&line).unwrap();
        stdin.write_all(b"\n").unwrap();
        let answer = mcp.wait_for("an error", |m| m.get("error").is_some());
        assert_eq!(error_code(&answer), code, "{}: {answer}", String::from_utf8_lossy(&line[..line.len().min(60)]));
    }
    let long_name = "t".repeat(100_000);
    let answer = mcp.call(20, &long_name, json!({}));
    assert_eq!(error_code(&answer), -32602);
    assert!(answer["error"]["message"].as_str().unwrap().len() < 1000, "the name is not echoed whole");
    assert_eq!(
        mcp.call(21, "echo__greet", json!({"still": "serving"}))["result"]["structuredContent"]["still"],
        "serving"
    );
    let (code, _) = mcp.close();
    assert_eq!(code, Some(0));
}

#[test]
fn a_call_is_audited_with_the_client_and_its_log_lines_reach_it_at_its_level() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let forward = std::fs::read_to_string(repo().join("std-host/fixtures/forward.wat")).unwrap();
    install_approved(
        &ws,
        &package(dir.path(), "fwd-pkg", "fwd", &forward, &[("forward", "Forwards a host call.")], ""),
    );
    let traces = dir.path().join("traces");
    let mut mcp = Mcp::initialized(&ws, &["--record-dir", traces.to_str().unwrap()]);
    let log = |id: u64, level: &str| json!({"jsonrpc": "2.0", "id": id, "method": "log", "params": {"level": level, "message": format!("line {id}")}});
    assert_eq!(mcp.call(1, "fwd__forward", log(1, "info"))["result"]["isError"], false);
    // The call's log lines come before its answer.
    let message = mcp.seen.borrow().iter().find(|m| m["method"] == "notifications/message").cloned();
    let message = message.expect("the plugin's log line reached the client");
    assert_eq!(
        (message["params"]["level"].as_str(), message["params"]["data"].as_str()),
        (Some("info"), Some("line 1"))
    );
    // Below the level the client set, nothing is sent.
    assert_eq!(mcp.request(2, "logging/setLevel", json!({"level": "error"}))["result"], json!({}));
    mcp.call(3, "fwd__forward", log(3, "info"));
    assert_eq!(error_code(&mcp.request(4, "logging/setLevel", json!({"level": "loud"}))), -32602);
    let (_, _, seen) = mcp.close_and_see();
    assert_eq!(seen.iter().filter(|m| m["method"] == "notifications/message").count(), 1, "{seen:?}");
    let audit = std::fs::read_to_string(ws.join("audit.jsonl")).unwrap();
    // The host-call decisions (the operator's install and approve records come first).
    let entries: Vec<Value> =
        audit.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|e| e["kind"] != "operator").collect();
    assert_eq!(entries.len(), 2, "{audit}");
    assert!(entries.iter().all(|e| e["caller"] == "mcp:mcp-test" && e["method"] == "log"), "{audit}");
    // Each call was recorded to a trace of its own, which its audit entries name and which
    // replays bit for bit.
    let mut recorded: Vec<PathBuf> = std::fs::read_dir(&traces).unwrap().map(|e| e.unwrap().path()).collect();
    recorded.sort();
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    for (entry, trace) in entries.iter().zip(&recorded) {
        assert_eq!(entry["trace"], trace.display().to_string(), "{audit}");
        let replayed = tdm(&ws, &["replay", &trace.display().to_string(), "--json"], b"");
        let report: Value = serde_json::from_slice(&replayed.stdout).unwrap_or_else(|_| panic!("{}", text(&replayed)));
        assert_eq!((report["intents"].as_u64(), report["identical"].as_bool()), (Some(1), Some(true)), "{report}");
    }
}

/// `_meta` of a 2026-07-28 request.
fn modern(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-test", "version": "1"},
    });
    if let (Some(meta), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        meta.extend(extra);
    }
    meta
}

#[test]
fn the_stateless_revision_needs_no_handshake_and_carries_its_own_log_level() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let forward = std::fs::read_to_string(repo().join("std-host/fixtures/forward.wat")).unwrap();
    install_approved(
        &ws,
        &package(dir.path(), "fwd-pkg", "fwd", &forward, &[("forward", "Forwards a host call.")], ""),
    );
    let mut mcp = Mcp::start(&ws, &[]);
    let discovered = mcp.request(1, "server/discover", json!({"_meta": modern(json!({}))}));
    let result = &discovered["result"];
    assert_eq!(
        result["supportedVersions"],
        json!(["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]),
        "{discovered}"
    );
    assert_eq!(result["resultType"], "complete", "{discovered}");
    // No initialize: each request says its revision.
    let listed = mcp.request(2, "tools/list", json!({"_meta": modern(json!({}))}));
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(3), "{listed}");
    assert_eq!(
        (listed["result"]["resultType"].as_str(), listed["result"]["ttlMs"].as_u64()),
        (Some("complete"), Some(0))
    );
    let log = json!({"jsonrpc": "2.0", "id": 1, "method": "log", "params": {"level": "info", "message": "hi"}});
    // Without a log level in `_meta`, no log lines; with one, they come before the answer.
    let quiet =
        mcp.request(3, "tools/call", json!({"name": "fwd__forward", "arguments": log, "_meta": modern(json!({}))}));
    assert_eq!(
        (quiet["result"]["isError"].as_bool(), quiet["result"]["resultType"].as_str()),
        (Some(false), Some("complete"))
    );
    let meta = modern(json!({"io.modelcontextprotocol/logLevel": "debug"}));
    mcp.request(4, "tools/call", json!({"name": "fwd__forward", "arguments": log, "_meta": meta}));
    let older =
        mcp.request(5, "tools/list", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}));
    assert_eq!(error_code(&older), -32022, "{older}");
    assert_eq!(older["error"]["data"]["requested"], "2099-01-01");
    let (code, _, seen) = mcp.close_and_see();
    assert_eq!(code, Some(0));
    let logs: Vec<&Value> = seen.iter().filter(|m| m["method"] == "notifications/message").collect();
    assert_eq!(logs.len(), 1, "only the call that asked for log lines got them: {seen:?}");
    let audit = std::fs::read_to_string(ws.join("audit.jsonl")).unwrap();
    let host = audit.lines().filter(|l| !l.contains("\"kind\":\"operator\""));
    assert!(
        host.clone().count() > 0 && host.into_iter().all(|l| l.contains("\"caller\":\"mcp:stateless-test\"")),
        "{audit}"
    );
}

#[test]
fn each_call_runs_in_a_fresh_instance_unless_its_plugin_is_warm() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let counter = std::fs::read_to_string(repo().join("std-host/fixtures/repl_counter.wat")).unwrap();
    install_approved(
        &ws,
        &package(dir.path(), "counter-pkg", "counter", &counter, &[("count", "Counts its calls.")], ""),
    );
    let count = |mcp: &mut Mcp, id: u64| {
        mcp.call(id, "counter__count", json!({}))["result"]["structuredContent"]["count"].clone()
    };
    // By default no state of one call reaches the next.
    let mut mcp = Mcp::initialized(&ws, &[]);
    assert_eq!((count(&mut mcp, 1), count(&mut mcp, 2)), (json!(1), json!(1)));
    mcp.close();
    // A plugin named by --warm keeps its instance; a warm call is still cancelled by the
    // session's end (`cancelled`, not its 5 s deadline).
    let mut mcp = Mcp::initialized(&ws, &["--warm", "counter", "--warm", "spin"]);
    assert_eq!((count(&mut mcp, 1), count(&mut mcp, 2), count(&mut mcp, 3)), (json!(1), json!(2), json!(3)));
    mcp.send_request(4, "tools/call", json!({"name": "spin__spin", "arguments": {}}));
    std::thread::sleep(Duration::from_millis(200));
    let (code, rest) = mcp.close();
    assert_eq!(code, Some(0));
    let spin = rest.iter().find(|m| m["id"] == 4).unwrap_or_else(|| panic!("{rest:?}"));
    assert_eq!(spin["result"]["structuredContent"]["blockedReason"], "cancelled", "{spin}");
    // A recorded call must replay alone, so --warm and --record-dir do not go together.
    let out = tdm(&ws, &["mcp", "--warm", "counter", "--record-dir", "x"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn sigterm_cancels_the_calls_in_flight_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let mut mcp = Mcp::initialized(&ws, &[]);
    mcp.send_request(1, "tools/call", json!({"name": "spin__spin", "arguments": {}}));
    std::thread::sleep(Duration::from_millis(300));
    let pid = mcp.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let answer = mcp.answer(1);
    // Drained: the spin was cancelled (not left to its 5 s deadline) and answered.
    assert_eq!(answer["result"]["structuredContent"]["blockedReason"], "cancelled", "{answer}");
    let (code, _) = mcp.close();
    assert_eq!(code, Some(0), "SIGTERM ends tdm mcp with 0");
}

#[test]
fn a_stateless_client_hears_of_tool_changes_on_its_subscription() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let mut mcp = Mcp::start(&ws, &[]);
    let listen = |tools: bool| json!({"notifications": {"toolsListChanged": tools}, "_meta": modern(json!({}))});
    // A filter asking for nothing this server sends is acknowledged empty and ends at once.
    mcp.send_request("quiet", "subscriptions/listen", listen(false));
    let ack = mcp.wait_for("an acknowledgment", |m| m["method"] == "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"], json!({}), "{ack}");
    assert_eq!(mcp.answer("quiet")["result"]["resultType"], "complete");
    mcp.send_request("sub", "subscriptions/listen", listen(true));
    let ack = mcp.wait_for("an acknowledgment", |m| m["method"] == "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}), "{ack}");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub", "{ack}");
    let out = tdm(&ws, &["revoke", "spin"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let changed = mcp.wait_for("a change", |m| m["method"] == "notifications/tools/list_changed");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub", "{changed}");
    // A handshake-era session has no such method: it gets list_changed on the session.
    let mut old = Mcp::initialized(&ws, &[]);
    let refused = old.request(1, "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    assert_eq!(error_code(&refused), -32601, "{refused}");
    old.close();
    // The stream's result comes when the server ends.
    let (code, _, seen) = mcp.close_and_see();
    assert_eq!(code, Some(0));
    let ended = seen.iter().find(|m| m["id"] == "sub" && m.get("result").is_some());
    assert!(ended.is_some(), "{seen:?}");
}

#[test]
fn a_fresh_instance_prepared_ahead_never_outlives_its_approval() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let mut mcp = Mcp::initialized(&ws, &[]);
    let first = mcp.call(1, "echo__greet", json!({"name": "Ada"}));
    assert_eq!(first["result"]["structuredContent"], json!({"name": "Ada"}), "{first}");
    // After a call, the server prepares the next call's instance of echo 1.0.0 (well within
    // this pause); a new version is installed and approved meanwhile.
    std::thread::sleep(Duration::from_secs(1));
    let v2 = package(dir.path(), "echo-v2", "echo", support::OK, &[("greet", "Answers ok.")], "");
    let manifest = std::fs::read_to_string(v2.join("plugin.toml")).unwrap();
    std::fs::write(v2.join("plugin.toml"), manifest.replace("version = \"1.0.0\"", "version = \"2.0.0\"")).unwrap();
    install_approved(&ws, &v2);
    let second = mcp.call(2, "echo__greet", json!({"name": "Ada"}));
    assert_eq!(second["result"]["structuredContent"], json!({"ok": true}), "the approved version runs: {second}");
    // The same for a revoke: the instance prepared for 2.0.0 is refused with it.
    std::thread::sleep(Duration::from_secs(1));
    let out = tdm(&ws, &["revoke", "echo"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let third = mcp.call(3, "echo__greet", json!({}));
    assert_eq!(third["result"]["structuredContent"]["blockedReason"], "not_approved", "{third}");
    mcp.close();
}

#[test]
fn a_call_reopened_after_its_prepared_instance_went_stale_is_still_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let mut mcp = Mcp::initialized(&ws, &[]);
    let spin_state = |ws: &Path| {
        let status: Value = serde_json::from_slice(&tdm(ws, &["workspace", "status", "--json"], b"").stdout).unwrap();
        status["plugins"].as_array().unwrap().iter().find(|p| p["id"] == "spin").unwrap()["lastCall"].clone()
    };
    // A first call, cancelled: the server then prepares spin's next instance.
    mcp.send_request(1, "tools/call", json!({"name": "spin__spin", "arguments": {}}));
    std::thread::sleep(Duration::from_millis(200));
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}).to_string());
    std::thread::sleep(Duration::from_secs(1));
    let first = spin_state(&ws);
    assert_eq!(first["blockedReason"], "cancelled", "{first}");
    // Approved again: the prepared instance is stale, the call opens spin afresh, and the
    // cancel must reach that session.
    for command in [&["revoke", "spin"][..], &["approve", "spin", "--yes"]] {
        let out = tdm(&ws, command, b"");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    mcp.send_request(2, "tools/call", json!({"name": "spin__spin", "arguments": {}}));
    std::thread::sleep(Duration::from_millis(300));
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}).to_string());
    let start = Instant::now();
    loop {
        let now = spin_state(&ws);
        if now != first {
            assert_eq!(now["blockedReason"], "cancelled", "not at its 5 s deadline: {now}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(4), "the second call was not cancelled: {now}");
        std::thread::sleep(Duration::from_millis(50));
    }
    mcp.close();
}
