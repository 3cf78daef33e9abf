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
