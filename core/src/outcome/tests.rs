//! The outcome's reading and rendering: response shapes, failures, unreadable JSON parts.

use super::*;
use alloc::format;
use serde_json::Value;

/// The outcome shape read from a JSON tree: what the one-pass reader must agree with.
fn by_the_tree(text: &str) -> Result<(Status, Option<String>), ()> {
    let value: Value = serde_json::from_str(text).map_err(|_| ())?;
    let object = value.as_object().ok_or(())?;
    match object.get("status").and_then(Value::as_str) {
        Some("completed") if object.contains_key("output") => Ok((Status::Completed, None)),
        Some("failed") => {
            let strings = ["message", "blockedReason", "recoveryHint"];
            if !strings.iter().all(|f| object.get(*f).is_some_and(Value::is_string)) {
                return Err(());
            }
            if !object.get("output").and_then(|o| o.get("retryable")).is_some_and(Value::is_boolean) {
                return Err(());
            }
            Ok((Status::Failed, object.get("blockedReason").and_then(Value::as_str).map(String::from)))
        }
        _ => Err(()),
    }
}

fn read(text: &str) -> Result<(Status, Option<String>), Failure> {
    Outcome::from_response(text.as_bytes().to_vec()).map(|o| {
        let reason = o.blocked_reason_text().map(String::from);
        (o.status, reason)
    })
}

#[test]
fn the_one_pass_reader_agrees_with_the_tree_on_every_shape() {
    let failed = r#""message":"m","blockedReason":"r","recoveryHint":"h""#;
    let cases = [
        String::from(r#"{"status":"completed","output":{}}"#),
        String::from(r#"{"status":"completed","output":null}"#),
        String::from(r#"{"status":"completed","output":[1,{"a":[true,null]}],"extra":"x"}"#),
        String::from(r#"{"output":{"deep":{"er":[[[{"x":"\u00e9\n"}]]]}},"status":"completed"}"#),
        String::from(r#"{"status":"completed"}"#),
        String::from(r#"{"status":"done","output":{}}"#),
        String::from(r#"{"status":7,"output":{}}"#),
        String::from(r#"{"status":"c\u006fmpleted","output":1}"#),
        format!(r#"{{"status":"failed",{failed},"output":{{"retryable":true}}}}"#),
        format!(r#"{{"status":"failed",{failed},"output":{{"retryable":false,"more":[1]}}}}"#),
        format!(r#"{{"status":"failed",{failed},"output":{{"retryable":"yes"}}}}"#),
        format!(r#"{{"status":"failed",{failed},"output":{{}}}}"#),
        format!(r#"{{"status":"failed",{failed},"output":[true]}}"#),
        format!(r#"{{"status":"failed",{failed}}}"#),
        String::from(
            r#"{"status":"failed","message":1,"blockedReason":"r","recoveryHint":"h","output":{"retryable":true}}"#,
        ),
        String::from(r#"{"status":"failed","message":"m","recoveryHint":"h","output":{"retryable":true}}"#),
        String::from(r#"[{"status":"completed","output":{}}]"#),
        String::from(r#""completed""#),
        String::from("null"),
        String::from("12"),
        String::from(r#"{"status":"completed","output":{}} x"#),
        String::from(r#"{"status":"completed","output":{}"#),
        String::from(r#"{"status":"completed","output":{"a":01}}"#),
        String::from(r#"{"status":"completed","output":"\x"}"#),
        String::from(""),
        String::from(r#"{"status":"completed","output":"\ud800"}"#),
        String::from(r#"{"status":"completed","output":1e400}"#),
        String::from(r#"{"status":"completed","output":"\ud83d\ude00 1e400","n":-1.5E+300}"#),
    ];
    for case in &cases {
        let tree = by_the_tree(case);
        let one_pass = read(case);
        match (&tree, &one_pass) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{case}"),
            (Err(()), Err(failure)) => assert_eq!(failure.reason, BlockedReason::InvalidResponse, "{case}"),
            _ => panic!("{case}: the tree says {tree:?}, the one-pass reader {one_pass:?}"),
        }
    }
}

#[test]
fn a_duplicate_member_of_the_shape_is_refused() {
    // Two readers may take the first or the last `status`; the host takes neither.
    for case in [
        r#"{"status":"failed","status":"completed","output":{}}"#,
        r#"{"status":"completed","output":{},"output":{}}"#,
        r#"{"status":"failed","message":"m","blockedReason":"a","blockedReason":"b","recoveryHint":"h","output":{"retryable":true}}"#,
        r#"{"status":"failed","message":"m","blockedReason":"a","recoveryHint":"h","output":{"retryable":true,"retryable":false}}"#,
    ] {
        let failure = read(case).err().unwrap_or_else(|| panic!("{case} was accepted"));
        assert!(failure.message().contains("duplicate key"), "{case}: {failure}");
        assert!(!failure.message().contains(" at line "), "{failure}");
    }
    // Duplicates inside the output are the plugin's business: it is passed on verbatim.
    assert!(read(r#"{"status":"completed","output":{"a":1,"a":2}}"#).is_ok());
}

/// Known from an earlier fuzzing attempt (the `response_bytes` target checks it): serde_json
/// skips the values the shape does not name without checking them, so these responses were
/// accepted and then refused by every embedder that reads the outcome into a tree.
#[test]
fn lone_surrogate_escapes_and_numbers_beyond_f64_are_a_bad_response() {
    let lone = [r#""\ud800""#, r#""\udc00""#, r#""a\ud800b""#, r#""\ud800\u0041""#, r#""\ud800\ud800""#];
    let huge = [
        "1e400",
        "-1e309",
        "[1,2e999]",
        r#"{"k":179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792}"#,
    ];
    for (value, why) in lone.iter().map(|v| (v, "lone UTF-16 surrogate")).chain(huge.iter().map(|v| (v, "too large"))) {
        for text in [
            format!(r#"{{"status":"completed","output":{value}}}"#),
            format!(r#"{{"status":"completed","output":{{}},"extra":{value}}}"#),
            format!(
                r#"{{"status":"failed","message":"m","blockedReason":"r","recoveryHint":"h","output":{{"retryable":true,"x":{value}}}}}"#
            ),
        ] {
            let failure = read(&text).err().unwrap_or_else(|| panic!("{text} was accepted"));
            assert_eq!(failure.reason, BlockedReason::InvalidResponse, "{text}");
            assert!(failure.message().contains(why), "{text}: {failure}");
        }
    }
    for fine in [r#""\ud83d\ude00""#, r#""\u00e9\\ud800""#, "1.7976931348623157e308", "1e-400", "-0", r#""1e400""#] {
        let text = format!(r#"{{"status":"completed","output":{fine}}}"#);
        assert!(read(&text).is_ok(), "{text}");
    }
}

#[test]
fn shape_errors_say_what_is_wrong() {
    let message = |text: &str| read(text).err().map(|f| f.message()).unwrap_or_default();
    assert!(message("[1]").contains("not an outcome: it is not a JSON object"), "{}", message("[1]"));
    assert!(message(r#"{"status":"completed"}"#).contains("needs `output`"));
    assert!(message(r#"{"status":"x","output":{}}"#).contains("`status` must be"));
    assert!(message(r#"{"status":"completed""#).contains("not JSON"));
}

/// The one-pass reader's verdict on `text` agrees with the full reader's: when it vouches for
/// a completed outcome, the full reader reads the same outcome with the same `output` range.
fn one_pass_agrees(text: &str) -> bool {
    let Some(range) = scan::completed(text) else { return true };
    let full = Outcome::read_response(String::from(text));
    matches!(&full, Ok(o) if o.status == Status::Completed && o.blocked.is_none() && o.output_at == Some(range))
}

#[test]
fn the_one_pass_reader_vouches_only_for_what_the_full_reader_reads_alike() {
    let deep =
        |levels: usize| format!(r#"{{"status":"completed","output":{}{}}}"#, "[".repeat(levels), "]".repeat(levels));
    let vouched = [
        String::from(r#"{"status":"completed","output":{}}"#),
        String::from(
            " {\n \"status\" : \"completed\" ,\t\"output\" : { \"a\" : [ 1 , 2.5e3 , -0.1 , 0 , true , false , null , \
             \"x\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\" ] , \"k\\u0041\" : {} } , \"extra\" : {\"k\": 1} } \r\n",
        ),
        String::from(r#"{"message":"ok","output":"h\u00e9llo \u00e9","status":"completed","blockedReason":null}"#),
        String::from(r#"{"status":"completed","output": "x" ,"message":"done","extra":[1,{"b":2}]}"#),
        String::from(r#"{"status":"completed","output":[1e308,-1.7976931348623157e308,1E-400,{"x":[[],{}]}]}"#),
        deep(63),
    ];
    for text in &vouched {
        assert!(scan::completed(text).is_some(), "the one-pass reader should vouch for {text}");
        assert!(one_pass_agrees(text), "{text}");
    }
    let left = [
        String::from(r#"{"status":"completed","status":"completed","output":1}"#),
        String::from(r#"{"status":"completed","output":1,"output":2}"#),
        String::from(r#"{"status":"completed","output":1,"status":"completed"}"#),
        String::from(r#"{"status":"completed","output": {"a":1},"status":"failed"}"#),
        String::from(r#"{"status":"completed","output":1,"message":1,"message":2}"#),
        String::from(r#"{"st\u0061tus":"completed","output":1}"#),
        String::from(r#"{"status":"compl\u0065ted","output":1}"#),
        String::from(r#"{"status":"completed","output":1,"message":{"retryable":1,"retryable":2}}"#),
        String::from(r#"{"status":"completed","output":"\ud83d"}"#),
        String::from(r#"{"status":"completed","output":"\ude00\ud83d"}"#),
        String::from(r#"{"status":"completed","output":1e309}"#),
        format!(r#"{{"status":"completed","output":{}}}"#, "9".repeat(400)),
        String::from(r#"{"status":"completed","output":1} x"#),
        String::from(r#"{"status":"completed","output":[1,]}"#),
        String::from(r#"{"status":"completed","output":01}"#),
        String::from("{\"status\":\"completed\",\"output\":\"a\u{1}b\"}"),
        String::from(
            r#"{"status":"failed","message":"m","blockedReason":"r","recoveryHint":"h","output":{"retryable":false}}"#,
        ),
        String::from(r#"{"status":"completed"}"#),
        String::from(r#"[{"status":"completed","output":1}]"#),
        deep(65),
    ];
    for text in &left {
        assert!(scan::completed(text).is_none(), "the one-pass reader must leave {text} to the full reader");
    }
    // Every edit of one byte of each: the two readers never disagree.
    let bytes = [
        b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b'9', b'e', b'-', b'.', b' ', b'\n', 1, b'u', b'd', b'a',
    ];
    let mut vouched_edits = 0;
    for text in vouched.iter().chain(&left) {
        let original = text.as_bytes();
        for at in 0..=original.len() {
            let mut edits = Vec::new();
            if at < original.len() {
                edits.push([&original[..at], &original[at + 1..]].concat());
            }
            for &byte in &bytes {
                edits.push([&original[..at], &[byte], &original[at..]].concat());
                if at < original.len() {
                    edits.push([&original[..at], &[byte], &original[at + 1..]].concat());
                }
            }
            for edit in edits {
                let Ok(edit) = String::from_utf8(edit) else { continue };
                assert!(one_pass_agrees(&edit), "the readers disagree on {edit}");
                vouched_edits += usize::from(scan::completed(&edit).is_some());
            }
        }
    }
    assert!(vouched_edits > 1_000, "the edits exercise the one-pass reader: {vouched_edits}");
}
