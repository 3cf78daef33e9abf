//! What `tdm` prints besides outcomes, through the built binary: `-q` and `--log-level`
//! decide which plugin lines reach stderr; tables have headers and columns that line up in
//! display width whatever the content; with stdout not a terminal the REPL prints one JSON
//! line per entry.

#[path = "support/tdm.rs"]
mod support;

use support::{echo, install_approved, package, stderr, tdm, text, OK};
use unicode_width::UnicodeWidthStr;

#[test]
fn quiet_and_log_level_choose_the_plugin_lines_shown() {
    let dir = tempfile::tempdir().unwrap();
    let loud = tdm(dir.path(), &["run", &echo(), "greet"], b"");
    assert!(stderr(&loud).contains("[plugin stdout] echo: answering one intent"), "{}", stderr(&loud));
    for flags in [vec!["-q"], vec!["--quiet"]] {
        let mut args = vec!["run", echo().leak() as &str, "greet"];
        args.extend(flags);
        let quiet = tdm(dir.path(), &args, b"");
        assert_eq!(quiet.status.code(), Some(0));
        assert!(stderr(&quiet).is_empty(), "{}", stderr(&quiet));
        assert_eq!(quiet.stdout, loud.stdout, "the outcome is the same");
    }
    let out = tdm(dir.path(), &["run", &echo(), "greet", "--log-level", "loud"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("debug, info, warn, error or off"), "{}", stderr(&out));
}

#[test]
fn status_columns_line_up_in_display_width() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    install_approved(&ws, &package(dir.path(), "a", "wide", OK, &[("挨拶", "greets"), ("ping", "ok")], ""));
    install_approved(&ws, &package(dir.path(), "b", "x", OK, &[("p", "ok")], ""));
    let out = tdm(&ws, &["workspace", "status"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let shown = String::from_utf8(out.stdout).unwrap();
    let table: Vec<&str> = shown.lines().skip_while(|l| !l.starts_with("ID ")).collect();
    assert_eq!(table.len(), 3, "a header and two rows: {shown}");
    // The REQUESTED column starts at the same display column on every line.
    let column = |line: &str, text: &str| {
        let at = line.find(text).unwrap_or_else(|| panic!("{text} in {line}"));
        line[..at].width()
    };
    let header = column(table[0], "REQUESTED");
    for row in &table[1..] {
        let after_intents = row.find(if row.starts_with("wide") { "挨拶,ping" } else { " p " }).unwrap();
        let rest = &row[after_intents..];
        let dash = after_intents + rest.find("  -").unwrap() + 2;
        assert_eq!(row[..dash].width(), header, "{shown}");
    }
}

#[test]
fn the_repl_writes_json_lines_when_stdout_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let out = tdm(dir.path(), &["repl", &echo()], b"greet {\"a\": 1}\n:stats\n");
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    assert_eq!(lines.len(), 2);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Contour REPL"), "no banner in piped mode");
}

/// 120 `log` calls of 600 control characters each (a line grows to ~3.6 KB once escaped, so
/// ~430 KB in all: more than a pipe holds), then a completed outcome.
const LOG_FLOOD: &str = r#"(module
  (import "tdm" "tdm_host_call" (func $host_call (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "\26\00\00\00{\"status\":\"completed\",\"output\":\"done\"}")
  (data (i32.const 64) "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"log\",\"params\":{\"level\":\"info\",\"message\":\"")
  (func (export "tdm_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (local $i i32) (local $at i32)
    ;; 600 x `\u0001` (6 bytes each) after the 75-byte prefix at 64, then `"}}`.
    (local.set $at (i32.const 139))
    (loop $fill
      (i64.store (local.get $at) (i64.const 0x31303030755c))
      (local.set $at (i32.add (local.get $at) (i32.const 6)))
      (br_if $fill (i32.lt_u (local.get $at) (i32.const 3739))))
    (i32.store (i32.const 3739) (i32.const 0x007d7d22))
    (loop $again
      (drop (call $host_call (i32.const 64) (i32.const 3678)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 120))))
    (i32.const 0)))"#;

#[test]
fn plugin_log_lines_never_hold_an_intent_past_its_deadline() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("log-flood.wat");
    std::fs::write(&module, LOG_FLOOD).unwrap();
    // Nobody reads stderr for 2 s, twice the deadline: a log line written from inside the host
    // call blocked the intent on the full pipe until it was cut with `deadline_exceeded`.
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["run", &module.display().to_string(), "x", "--timeout", "1"])
        .env("TDM_WORKSPACE", dir.path().join("ws"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let mut err = Vec::new();
    child.stderr.take().unwrap().read_to_end(&mut err).unwrap();
    let out = child.wait_with_output().unwrap();
    let outcome = String::from_utf8_lossy(&out.stdout);
    let head: String = String::from_utf8_lossy(&err).chars().take(300).collect();
    assert_eq!(outcome.trim(), r#"{"status":"completed","output":"done"}"#, "stderr begins: {head}");
    let lines = String::from_utf8_lossy(&err).lines().filter(|l| l.starts_with("[plugin log-flood info] ")).count();
    assert_eq!(lines, 100, "the log's message limit, every line written after the intent");
}
