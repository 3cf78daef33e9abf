//! The REPL driven through piped input ([`run_lines`], the path `tdm repl` takes
//! when stdin is not a terminal) with real plugins: one compact JSON line per entry on stdout
//! (an outcome, a command's result or an entry's error), everything else on stderr, and the
//! session survives bad lines and trapping intents.

use super::piped::run_lines;
use serde_json::{json, Value};
use std::path::Path;
use tdm_sdk::session::{Session, SessionOptions};

fn session(module: &Path) -> Session {
    let bytes = tdm_sdk::read_module(module).expect("the module reads");
    let options = SessionOptions { seed: Some(7), ..SessionOptions::default() };
    Session::from_bytes("test", bytes, options).expect("the module loads")
}

fn echo() -> Session {
    session(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/echo/echo.wat"))
}

fn counter() -> Session {
    session(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/repl_counter.wat"))
}

/// Runs `input` through the REPL: exit code, the outcomes among the stdout lines (each line
/// parsed as JSON), stderr.
fn drive(session: Session, input: &str) -> (u8, Vec<Value>, String) {
    let (code, lines, err) = drive_all(session, input);
    let outcomes = lines.into_iter().filter(|l| l["status"] == "completed" || l["status"] == "failed").collect();
    (code, outcomes, err)
}

/// Runs `input` through the REPL: exit code, every stdout line parsed as JSON, stderr.
fn drive_all(session: Session, input: &str) -> (u8, Vec<Value>, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_lines(session, input.as_bytes(), &mut out, &mut err);
    let stdout = String::from_utf8(out).expect("stdout is UTF-8");
    let lines = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("stdout line {line:?} is not JSON: {e}")))
        .collect();
    (code, lines, String::from_utf8(err).expect("stderr is UTF-8"))
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
    assert!(err.contains("intents run: 4 (1 failed, 0 cancelled)"), "{err}");
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
fn a_line_past_the_entry_bound_is_one_error_line_and_never_held() {
    // 3 MiB on one line (it used to be held whole: 1 GiB took 2 GB), then an entry that runs.
    let input = format!("count {}\ncount\n", "x".repeat(3 * 1024 * 1024));
    let (code, lines, err) = drive_all(counter(), &input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines.len(), 2, "one stdout line per input line: {lines:?}");
    assert_eq!(lines[1]["output"]["count"], json!(1), "{lines:?}");
    assert!(err.contains("line 1: error: the entry is longer than 2097152 bytes"), "{err}");
}

#[test]
fn a_valid_grant_rebuilds_the_host_with_a_fresh_instance() {
    let (code, outcomes, err) = drive(counter(), "count\n:grant network:api.example.com\ncount\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(&outcomes), [json!(1), json!(1)]);
    assert!(err.contains("granted network:api.example.com"), "{err}");
}

#[test]
fn record_and_stop_write_a_trace_and_a_change_of_grants_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("x.trace");
    let input = format!(":stop\n:record {0}\ncount\n:record {0}\n:grant vault:read\ncount\n", trace.display());
    let (code, outcomes, err) = drive(counter(), &input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(&outcomes), [json!(1), json!(1)]);
    assert!(err.contains("line 1: error: not recording"), "{err}");
    assert!(err.contains("line 4: error: already recording"), "{err}");
    assert!(err.contains("recorded 1 intent(s)") && err.contains("recording stopped"), "{err}");
    assert!(trace.is_file());
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
    assert_eq!(String::from_utf8_lossy(&out).lines().count(), 3, "one line per input line");
    assert!(String::from_utf8_lossy(&err).contains("line 2: error: the line is not UTF-8"));
}

#[test]
fn piped_mode_prints_exactly_one_stdout_line_per_entry_bad_ones_included() {
    // Every kind of entry: intents, a bad JSON line, an unknown command, a bad permission, a
    // line that is not UTF-8, a trapping intent, a command, a raw request and a multi-line one.
    let input: &[u8] = b"count\ncount {oops\n:frobnicate\n:grant network:\n\xff\ntrap\n:stats\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"count\"}\ncount {\n  \"a\": [1,\n 2]\n}\n:quit\ncount\n";
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_lines(counter(), input, &mut out, &mut err);
    assert_eq!(code, 0);
    let stdout = String::from_utf8(out).unwrap();
    let lines: Vec<Value> =
        stdout.lines().map(|l| serde_json::from_str(l).expect("every stdout line is JSON")).collect();
    let statuses: Vec<&str> = lines.iter().map(|l| l["status"].as_str().unwrap_or("?")).collect();
    // 10 entries before :quit (the blank line is none), then :quit itself: 11 lines.
    assert_eq!(
        statuses,
        ["completed", "error", "error", "error", "error", "failed", "ok", "completed", "completed", "ok"],
        "{stdout}"
    );
    assert_eq!(lines[1]["line"], 2, "an error names the entry's first line");
    assert!(lines[1]["message"].as_str().unwrap().contains("not valid JSON"));
    assert_eq!(lines[4]["message"], "the line is not UTF-8");
    assert_eq!(lines[6]["command"], "stats");
    assert_eq!(lines[8]["output"]["count"], 2, "the multi-line entry ran as one intent");
    assert_eq!(lines[9]["command"], "quit");
    let err = String::from_utf8(err).unwrap();
    assert!(err.contains("line 10: fuel_used="), "figures name the entry's first line: {err}");
}

#[test]
fn multi_line_json_continues_while_brackets_are_open() {
    let input = "greet {\n  \"name\": \"Ada\",\n  \"tags\": [\"a\",\n    \"b\"]\n}\n{\"jsonrpc\": \"2.0\", \"id\": 3,\n \"method\": \"x\",\n \"params\": {\"raw\": [1, {\"deep\": true}]}}\n";
    let (code, lines, err) = drive_all(echo(), input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["output"], json!({"name": "Ada", "tags": ["a", "b"]}));
    assert_eq!(lines[1]["output"], json!({"raw": [1, {"deep": true}]}));
    // Brackets inside strings don't count; an entry still open at the end is reported once.
    let (_, lines, _) = drive_all(echo(), "greet {\"s\": \"}]\"\n, \"t\": 1}\ngreet {\"open\": [\n");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["output"], json!({"s": "}]", "t": 1}));
    assert_eq!(lines[1]["status"], "error");
    assert!(lines[1]["message"].as_str().unwrap().contains("still open"), "{lines:?}");
}

#[test]
fn params_and_entries_load_from_files() {
    let dir = tempfile::tempdir().unwrap();
    let big: Vec<u32> = (0..150_000).collect();
    let params = serde_json::to_string(&json!({"numbers": big})).unwrap();
    assert!(params.len() > 512 * 1024, "larger than an argument list takes");
    std::fs::write(dir.path().join("big.json"), &params).unwrap();
    std::fs::write(dir.path().join("entry.req"), "greet {\n \"from\": \"file\"\n}\n").unwrap();
    std::fs::write(dir.path().join("huge.json"), vec![b' '; 2 * 1024 * 1024]).unwrap();
    let input = format!(
        "sum @{big}\n:load {entry}\n:load {missing}\nsum @{huge}\n",
        big = dir.path().join("big.json").display(),
        entry = dir.path().join("entry.req").display(),
        missing = dir.path().join("missing").display(),
        huge = dir.path().join("huge.json").display()
    );
    let (code, lines, err) = drive_all(echo(), &input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines.len(), 4, "{err}");
    assert_eq!(lines[0]["output"]["numbers"].as_array().map(Vec::len), Some(150_000));
    assert_eq!(lines[1]["output"], json!({"from": "file"}));
    assert_eq!(lines[2]["status"], "error");
    assert_eq!(lines[3]["status"], "error");
    assert!(lines[3]["message"].as_str().unwrap().contains("at most"), "{lines:?}");
}
