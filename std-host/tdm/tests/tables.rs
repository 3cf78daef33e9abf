//! `tdm`'s tables fit the terminal's width (`COLUMNS` here) by eliding their widest column,
//! stay aligned with their header, the audit table has a reason column, and an audit filter
//! that matches nothing says so, through the built binary.

#[path = "support/tdm.rs"]
mod support;

use support::{install_approved, package, stderr, tdm, tdm_columns, text, write, OK};
use unicode_width::UnicodeWidthStr;

/// An audit log with a long permission and a long plugin id.
fn audit_log(dir: &std::path::Path) -> String {
    let long = "network:a-very-long-host-name.subdomain.example.com";
    let lines = [
        format!(r#"{{"time":"2026-12-03T04:00:00.000Z","plugin":"echo","hash":"ab","method":"net.fetch","permission":"{long}","granted":false,"bytes":120,"fuel":3000,"reason":"permission_denied"}}"#),
        r#"{"time":"2026-12-03T04:00:01.000Z","plugin":"a-plugin-with-a-long-id","hash":"cd","method":"log","permission":null,"granted":true,"bytes":40,"fuel":100,"reason":null}"#.to_string(),
    ];
    write(dir, "audit.jsonl", lines.join("\n") + "\n")
}

/// The display column where `word` starts in `line`.
fn column(line: &str, word: &str) -> usize {
    line[..line.find(word).unwrap_or_else(|| panic!("{word} not in {line:?}"))].width()
}

#[test]
fn the_audit_table_has_a_reason_column_aligned_and_fitted() {
    let dir = tempfile::tempdir().unwrap();
    let audit = audit_log(dir.path());
    // Unbounded (not a terminal, no COLUMNS): whole cells, every column under its header.
    let out = tdm(dir.path(), &["audit", "--audit", &audit], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let table = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].contains("REASON"), "{table}");
    assert!(lines[1].contains("network:a-very-long-host-name.subdomain.example.com"), "{table}");
    assert!(lines[2].contains("a-plugin-with-a-long-id"), "{table}");
    assert_eq!(column(lines[0], "VERDICT"), column(lines[1], "DENIED"), "{table}");
    assert_eq!(column(lines[0], "VERDICT"), column(lines[2], "granted"), "{table}");
    assert_eq!(column(lines[0], "REASON"), column(lines[1], "permission_denied"), "{table}");
    assert_eq!(column(lines[0], "BYTES"), column(lines[1], "120"), "{table}");
    assert_eq!(column(lines[0], "FUEL"), column(lines[1], "3000"), "{table}");
    assert_eq!(column(lines[0], "FUEL"), column(lines[2], "100"), "{table}");
    // 100 columns: every line fits, the widest cell is elided, the columns still line up.
    let out = tdm_columns(dir.path(), &["audit", "--audit", &audit], b"", Some(100));
    let table = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    for line in &lines {
        assert!(line.width() <= 100, "{} columns: {line:?}", line.width());
    }
    assert!(lines[1].contains('…'), "{table}");
    assert_eq!(column(lines[0], "VERDICT"), column(lines[1], "DENIED"), "{table}");
    assert_eq!(column(lines[0], "REASON"), column(lines[1], "permission_"), "{table}");
    assert_eq!(column(lines[0], "FUEL"), column(lines[1], "3000"), "{table}");
    assert_eq!(column(lines[0], "FUEL"), column(lines[2], "100"), "{table}");
}

#[test]
fn an_audit_filter_that_matches_nothing_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let audit = audit_log(dir.path());
    let out = tdm(dir.path(), &["audit", "--audit", &audit, "--plugin", "nosuch"], b"");
    assert_eq!(out.status.code(), Some(0), "an empty result is not an error: {}", text(&out));
    assert!(stderr(&out).contains("no audit record of plugin `nosuch`"), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1, "the header only");
    let out = tdm(dir.path(), &["audit", "--audit", &audit, "--plugin", "nosuch", "--json"], b"");
    assert!(out.stdout.is_empty() && stderr(&out).contains("no audit record"), "{}", text(&out));
    let out = tdm(dir.path(), &["audit", "--audit", &audit, "--plugin", "echo"], b"");
    assert!(!stderr(&out).contains("no audit record"), "{}", text(&out));
}

#[test]
fn workspace_status_fits_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    install_approved(&ws, &package(dir.path(), "pkg", "echo", OK, &[("greet", "answers ok")], ""));
    let wide = String::from_utf8(tdm(&ws, &["workspace", "status"], b"").stdout).unwrap();
    assert!(wide.lines().any(|l| l.width() > 80), "the status rows are wider than 80 unbounded: {wide}");
    let out = tdm_columns(&ws, &["workspace", "status"], b"", Some(80));
    let table = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("ID") || l.starts_with("echo")).collect();
    assert_eq!(rows.len(), 2, "{table}");
    for line in &rows {
        assert!(line.width() <= 80, "{} columns: {line:?}", line.width());
    }
    assert_eq!(column(rows[0], "STATE"), column(rows[1], "approved"), "{table}");
}
