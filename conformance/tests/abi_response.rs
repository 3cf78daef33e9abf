//! The response rules (docs/ABI.md section 2, steps 4-6): the host reads `[u32 LE length][JSON]`,
//! frees the request and the framed response, and accepts only UTF-8 JSON of the outcome
//! shape; anything else is `invalid_response`. A plugin's own valid outcome, failed or
//! completed, passes through byte for byte; its own `blockedReason` is a bounded name.

use contour_conformance::{completed_output, fixture, outcome_json, responder, sandbox};
use contour_core::BlockedReason;
use contour_core::{IntentReport, Policy};
use serde_json::{json, Value};

fn answer(body: &[u8]) -> IntentReport {
    sandbox(&responder(body), Policy::default()).execute("respond", &json!({}))
}

fn assert_invalid(body: &[u8]) {
    let report = answer(body);
    assert_eq!(
        report.outcome.blocked_reason(),
        Some(BlockedReason::InvalidResponse),
        "{:?}: {}",
        String::from_utf8_lossy(body),
        report.outcome.json
    );
    assert!(report.outcome.host_failure().is_some(), "the host blocked it");
}

#[test]
fn a_response_that_is_not_utf8_is_invalid() {
    assert_invalid(b"{\"status\":\"completed\",\"output\":\"\xff\xfe\"}");
    assert_invalid(b"\xc3\x28");
}

#[test]
fn a_response_that_is_not_json_is_invalid() {
    for body in
        [&b""[..], b"ok", b"{", b"{\"status\":\"completed\",\"output\":1", b"{\"status\":\"completed\",\"output\":1}x"]
    {
        assert_invalid(body);
    }
}

#[test]
fn a_response_of_the_wrong_shape_is_invalid() {
    let bodies: [&[u8]; 12] = [
        br#"{"status":"ok"}"#,
        br#"[1]"#,
        br#""completed""#,
        br#"null"#,
        br#"{}"#,
        br#"{"output":1}"#,
        br#"{"status":"completed"}"#,
        br#"{"status":"COMPLETED","output":1}"#,
        br#"{"status":1,"output":1}"#,
        br#"{"status":"failed","message":"m","recoveryHint":"h","output":{"retryable":false}}"#,
        br#"{"status":"failed","message":"m","blockedReason":"x","recoveryHint":"h","output":{}}"#,
        br#"{"status":"failed","message":"m","blockedReason":"x","recoveryHint":"h","output":{"retryable":"no"}}"#,
    ];
    for body in bodies {
        assert_invalid(body);
    }
    // A failed outcome with a non-string blockedReason or message.
    assert_invalid(
        br#"{"status":"failed","message":"m","blockedReason":7,"recoveryHint":"h","output":{"retryable":false}}"#,
    );
    assert_invalid(br#"{"status":"failed","blockedReason":"x","recoveryHint":"h","output":{"retryable":false}}"#);
}

/// Known from an earlier fuzzing attempt (the `response_bytes` fuzz target checks it): JSON
/// grammar allows a lone UTF-16 surrogate escape and a number beyond f64, but a reader into a
/// tree refuses both, so the host refuses them rather than hand an embedder an outcome it cannot
/// read.
#[test]
fn a_lone_surrogate_escape_or_a_number_beyond_f64_is_invalid() {
    for body in [
        &br#"{"status":"completed","output":"\ud800"}"#[..],
        br#"{"status":"completed","output":{"a":["x\udfff"]}}"#,
        br#"{"status":"completed","output":1e400}"#,
        br#"{"status":"completed","output":{},"extra":-1e309}"#,
        br#"{"status":"failed","message":"m","blockedReason":"x","recoveryHint":"h","output":{"retryable":false,"n":9e999}}"#,
    ] {
        assert_invalid(body);
    }
    let report = answer(br#"{"status":"completed","output":"\ud83d\ude00 1.7976931348623157e308"}"#);
    assert!(report.outcome.is_completed(), "a surrogate pair is one character: {}", report.outcome.json);
}

#[test]
fn a_plugins_reason_is_a_bounded_name() {
    // A reason is kept (a workspace's last call) and shown: never blank, huge or a carrier of
    // control characters.
    let long = "r".repeat(129);
    for reason in ["", " ", "\\u001b[2J", "a\\nb", "\\u0000", long.as_str()] {
        let body = format!(
            r#"{{"status":"failed","message":"m","blockedReason":"{reason}","recoveryHint":"h","output":{{"retryable":false}}}}"#
        );
        assert_invalid(body.as_bytes());
    }
    // Anything else passes through byte for byte, a host reason a plugin forwards included.
    let longest = "r".repeat(128);
    for reason in ["quota_exceeded", "Invalid params (v2)", "é", "permission_denied", longest.as_str()] {
        let body = format!(
            r#"{{"status":"failed","message":"m","blockedReason":"{reason}","recoveryHint":"h","output":{{"retryable":false}}}}"#
        );
        let report = answer(body.as_bytes());
        assert_eq!(report.outcome.blocked_reason_text(), Some(reason), "{}", report.outcome.json);
        assert_eq!(report.outcome.json, body, "passed through byte for byte");
    }
}

#[test]
fn a_plugin_policy_rejection_passes_through_intact() {
    let expected = r#"{"status":"failed","message":"Request rejected by plugin policy.","blockedReason":"plugin_policy_rejected","recoveryHint":"Review the plugin policy and retry manually.","output":{"retryable":false}}"#;
    let mut sandbox = sandbox(&fixture("policy_rejected"), Policy::default());
    let report = sandbox.execute("anything", &json!({}));
    assert_eq!(report.outcome.blocked_reason_text(), Some("plugin_policy_rejected"));
    assert_eq!(report.outcome.json, expected, "the exact bytes the plugin wrote");
    assert!(report.outcome.host_failure().is_none(), "the plugin, not the host, failed it");
    // A plugin's own failure is not a host failure: the instance stays live.
    assert!(sandbox.is_live());
}

#[test]
fn a_completed_outcome_is_kept_byte_for_byte() {
    // Whitespace, key order and extra fields are the plugin's business.
    let body = "{ \"output\" : {\"b\":1,\"a\":[true,null]},\n \"status\":\"completed\", \"extra\":\"é\" }";
    let report = answer(body.as_bytes());
    assert!(report.outcome.is_completed());
    assert_eq!(report.outcome.json, body);
}

#[test]
fn echo_returns_the_request_params() {
    let params = json!({"text": "hello", "n": 42, "nested": {"list": [1, 2.5, null, "ü"]}});
    let mut sandbox = sandbox(&fixture("echo"), Policy::default());
    let output = completed_output(&sandbox.execute("echo", &params));
    assert_eq!(output["params"], params);
    assert_eq!(output["method"], "echo");
    assert_eq!(output["jsonrpc"], "2.0");
    assert_eq!(output["id"], 1);
    // The next intent on the same instance gets the next id.
    let output = completed_output(&sandbox.execute("again", &json!([])));
    assert_eq!(output["id"], 2);
    assert_eq!(output["params"], json!([]));
}

#[test]
fn echo_handles_a_request_larger_than_its_initial_memory() {
    // 200 KiB of params: tdm_alloc grows memory from 1 page for the request and the response.
    let params = json!({"blob": "z".repeat(200 * 1024)});
    let mut sandbox = sandbox(&fixture("echo"), Policy::default());
    let report = sandbox.execute("echo", &params);
    assert_eq!(completed_output(&report)["params"], params);
    assert!(report.peak_memory_bytes > 400 * 1024, "{}", report.peak_memory_bytes);
    // The arena is reset once the host freed both regions, so memory does not grow further.
    let peak = report.peak_memory_bytes;
    for _ in 0..3 {
        let report = sandbox.execute("echo", &params);
        assert_eq!(completed_output(&report)["params"], params);
        assert_eq!(report.peak_memory_bytes, peak);
    }
}

#[test]
fn the_host_allocates_the_request_and_frees_both_regions() {
    let mut sandbox = sandbox(&fixture("free_recorder"), Policy::default());
    let first_request = contour_core::intent_request(1, "first", &json!({"k": "v"}));
    let first = sandbox.execute("first", &json!({"k": "v"}));
    let seen: Vec<u64> = as_numbers(&completed_output(&first));
    let len = first_request.len() as u64;
    // [allocs, last alloc size, frees, free0 ptr, free0 size, free1 ptr, free1 size, req, len]
    assert_eq!(seen, [1, len, 0, 0, 0, 0, 0, 16384, len]);
    let second = sandbox.execute("second", &json!({}));
    let seen = as_numbers(&completed_output(&second));
    let second_len = contour_core::intent_request(2, "second", &json!({})).len() as u64;
    let first_response = first.outcome.json.len() as u64;
    assert_eq!(seen, [2, second_len, 2, 16384, len, 8192, 4 + first_response, 16384, second_len]);
}

fn as_numbers(output: &Value) -> Vec<u64> {
    output.as_array().expect("an array").iter().map(|n| n.as_u64().expect("a number")).collect()
}

#[test]
fn a_host_failure_has_the_documented_shape() {
    let report = answer(b"nope");
    let outcome = outcome_json(&report);
    let object = outcome.as_object().expect("an object");
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["blockedReason", "message", "output", "recoveryHint", "status"]);
    assert_eq!(outcome["status"], "failed");
    assert_eq!(outcome["blockedReason"], "invalid_response");
    assert!(outcome["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("The plugin's response breaks the TDM IPC ABI.")));
    assert_eq!(outcome["recoveryHint"], "Report the input to the plugin's author.");
    assert_eq!(outcome["output"], json!({"retryable": false}));
}
