//! The REPL driven through piped input (`tdm_sdk::repl::run_lines`, the path `tdm repl` takes
//! when stdin is not a terminal) with real plugins: one compact JSON outcome per intent line on
//! stdout, everything else on stderr, and the session survives bad lines and trapping intents.

use contour_core::{NoHostIntents, Permissions, Plugin, Policy, VirtualEnvironment};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use tdm_sdk::repl::{run_lines, ReplSession};

fn session(module: &Path) -> ReplSession {
    let bytes = tdm_sdk::read_module(module).expect("the module reads");
    let plugin = Arc::new(Plugin::load(&bytes, Policy::default()).expect("the module loads"));
    ReplSession {
        label: "test".into(),
        plugin,
        bytes,
        grants: Permissions::default(),
        allow_grant: true,
        intents: vec!["count".into(), "trap".into()],
        history: None,
        make_env: Box::new(|| Box::new(VirtualEnvironment::new(7))),
        make_host: Box::new(|_| Box::new(NoHostIntents)),
    }
}

fn echo() -> ReplSession {
    session(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/echo/echo.wat"))
}

fn counter() -> ReplSession {
    session(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/repl_counter.wat"))
}

/// Runs `input` through the REPL: exit code, stdout lines parsed as JSON, stderr.
fn drive(session: ReplSession, input: &str) -> (u8, Vec<Value>, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_lines(session, input.as_bytes(), &mut out, &mut err);
    let stdout = String::from_utf8(out).expect("stdout is UTF-8");
    let outcomes = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("stdout line {line:?} is not JSON: {e}")))
        .collect();
    (code, outcomes, String::from_utf8(err).expect("stderr is UTF-8"))
}

fn counts(outcomes: &[Value]) -> Vec<Value> {
    outcomes.iter().map(|o| o["output"]["count"].clone()).collect()
}

#[test]
fn echo_outcomes_appear_one_per_line() {
    let input = "greet {\"name\": \"Ada\"}\n\n   \nsum [1, 2, 3]\nping\n";
    let (code, outcomes, err) = drive(echo(), input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(outcomes.len(), 3, "{outcomes:?}");
    assert!(outcomes.iter().all(|o| o["status"] == "completed"), "{outcomes:?}");
    assert_eq!(outcomes[0]["output"], json!({"name": "Ada"}));
    assert_eq!(outcomes[1]["output"], json!([1, 2, 3]));
    assert_eq!(outcomes[2]["output"], json!({}));
    // Figures and the plugin's own output go to stderr, one figures line per intent.
    assert_eq!(err.matches("fuel_used=").count(), 3, "{err}");
    assert!(err.contains("peak_memory_bytes=") && err.contains("elapsed_us="), "{err}");
    assert!(err.contains("[plugin stdout] echo: answering one intent"), "{err}");
}

#[test]
fn a_raw_json_rpc_line_is_sent_verbatim() {
    let input = "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"greet\",\"params\":{\"raw\":true}}\n";
    let (code, outcomes, err) = drive(echo(), input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(outcomes, vec![json!({"status": "completed", "output": {"raw": true}})]);
}

#[test]
fn multi_line_plugin_json_is_printed_on_one_line_in_order() {
    // The counter answers with a newline inside its JSON; stdout still has one line per intent,
    // and the keys keep the plugin's order.
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_lines(counter(), "count\n".as_bytes(), &mut out, &mut err);
    assert_eq!(code, 0);
    assert_eq!(String::from_utf8_lossy(&out), "{\"status\":\"completed\",\"output\":{\"count\":1}}\n");
}

#[test]
fn state_lives_in_the_instance_and_reset_gives_a_fresh_one() {
    let input = "count\ncount\ncount\n:reset\ncount\ncount\n";
    let (code, outcomes, err) = drive(counter(), input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(&outcomes), [json!(1), json!(2), json!(3), json!(1), json!(2)]);
    assert!(err.contains("instance discarded: the next intent starts a fresh one"), "{err}");
}

#[test]
fn a_trapping_intent_leaves_the_repl_running() {
    let input = "count\ncount\ntrap\ncount\n:stats\n";
    let (code, outcomes, err) = drive(counter(), input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(outcomes.len(), 4, "{outcomes:?}");
    assert_eq!(outcomes[2]["status"], "failed");
    assert_eq!(outcomes[2]["blockedReason"], "plugin_trap");
    // The trap discarded the instance: the next intent runs in a fresh one.
    assert_eq!(counts(&outcomes)[3], json!(1));
    assert!(err.contains("line 3: fuel_used=") && err.contains("instance_discarded"), "{err}");
    assert!(err.contains("intents run: 4 (1 failed)"), "{err}");
}

#[test]
fn bad_lines_are_reported_on_stderr_and_the_session_continues() {
    let input = "count {not json\n:frobnicate\n:grant network:\n:fuel nope\ncount\n";
    let (code, outcomes, err) = drive(counter(), input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(&outcomes), [json!(1)]);
    assert!(err.contains("line 1: error: the params of `count` are not valid JSON"), "{err}");
    assert!(err.contains("line 2: error: unknown command `:frobnicate`"), "{err}");
    assert!(err.contains("line 3: error: invalid permission `network:`: missing host"), "{err}");
    assert!(err.contains("line 4: error: `nope` is not a fuel budget"), "{err}");
}

#[test]
fn grant_is_refused_for_an_installed_plugin() {
    let mut session = counter();
    session.allow_grant = false;
    let (code, outcomes, err) = drive(session, ":grant vault:read\ncount\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(&outcomes), [json!(1)]);
    assert!(err.contains("line 1: error: :grant works on a plugin file only"), "{err}");
}

#[test]
fn a_valid_grant_rebuilds_the_host_with_a_fresh_instance() {
    let (code, outcomes, err) = drive(counter(), "count\n:grant network:api.example.com\ncount\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(&outcomes), [json!(1), json!(1)]);
    assert!(err.contains("granted network:api.example.com"), "{err}");
}

#[test]
fn record_says_it_is_not_available_yet() {
    let (code, outcomes, err) = drive(counter(), ":record x\ncount\n:stop\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(&outcomes), [json!(1)]);
    assert!(err.contains("line 1: error: recording is not available yet"), "{err}");
    assert!(err.contains("line 3: error: recording is not available yet"), "{err}");
}

#[test]
fn fuel_sets_the_budget_of_the_following_intents() {
    let input = ":fuel 10\ncount\n:fuel\n:fuel 1000000\ncount\n:limits\n";
    let (code, outcomes, err) = drive(counter(), input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    assert_eq!(outcomes[0]["blockedReason"], "fuel_exhausted");
    assert_eq!(outcomes[1]["output"]["count"], json!(1));
    assert!(err.contains("fuel per intent: 10\n"), "{err}");
    assert!(err.contains("fuel_per_intent          1000000"), "{err}");
}

#[test]
fn quit_stops_reading() {
    let (code, outcomes, err) = drive(counter(), "count\n:quit\ncount\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(&outcomes), [json!(1)]);
}

#[test]
fn a_line_that_is_not_utf8_is_reported() {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_lines(counter(), &b"count\n\xff\xfe\ncount\n"[..], &mut out, &mut err);
    assert_eq!(code, 0);
    assert_eq!(String::from_utf8_lossy(&out).lines().count(), 2);
    assert!(String::from_utf8_lossy(&err).contains("line 2: error: the line is not UTF-8"));
}
