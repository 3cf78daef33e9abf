//! `--json` prints JSON for every command, with one documented shape each (one document, or
//! JSON lines for the audit stream), errors included (on stderr for `exec`, whose stdout is the
//! command's), through the built binary.

#[path = "support/tdm.rs"]
mod support;

use serde_json::Value;
use support::{echo, json, package, repo, stderr, tdm, text, write, OK};

/// Every stdout line parsed as JSON.
fn lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?} is not JSON: {e}")))
        .collect()
}

#[test]
fn every_command_prints_one_json_document() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let ws_text = ws.display().to_string();
    let pkg = package(dir.path(), "pkg", "ok", OK, &[("ping", "answers ok")], "");
    let pkg = pkg.display().to_string();
    let hub = support::repo().join("examples/hub").display().to_string();
    let echo = echo();
    let steps: Vec<(Vec<&str>, &str, &str)> = vec![
        (vec!["hub", "list", "--hub", &hub, "--json"], "plugins", ""),
        (vec!["install", "--allow-unsigned", &pkg, "--json"], "status", "installed"),
        (vec!["approve", "ok", "--yes", "--json"], "status", "approved"),
        (vec!["call", "ok", "ping", "--json"], "status", "completed"),
        (vec!["workspace", "status", "--json", "--workspace", &ws_text], "plugins", ""),
        (vec!["inspect", &echo, "--json"], "verdict", "accepted"),
        (vec!["run", &echo, "greet", "--json"], "status", "completed"),
        (vec!["revoke", "ok", "--json"], "status", "revoked"),
        (vec!["uninstall", "ok", "--json"], "status", "uninstalled"),
    ];
    for (args, key, value) in steps {
        let out = tdm(&ws, &args, b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        let document = json(&out);
        assert!(document.get(key).is_some(), "{args:?}: {document}");
        if !value.is_empty() {
            assert_eq!(document[key], value, "{args:?}: {document}");
        }
    }
    let hub_list = json(&tdm(&ws, &["hub", "list", "--hub", &hub, "--json"], b""));
    assert_eq!(hub_list["plugins"][0]["intents"][0]["name"], "greet", "{hub_list}");
    assert_eq!(hub_list["plugins"][0]["intents"][0]["description"], "Returns the params it was given.");
}

#[test]
fn errors_with_json_are_json_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["inspect", "/nonexistent.wasm", "--json"],
        vec!["run", "/nonexistent.wasm", "x", "--json"],
        vec!["call", "ghost.wat", "x", "--json"],
        vec!["install", "--allow-unsigned", "nothing-here", "--json"],
        vec!["approve", "ghost", "--yes", "--json"],
        vec!["revoke", "ghost", "--json"],
        vec!["hub", "list", "--hub", "/nonexistent", "--json"],
        vec!["run", "x.wasm", "m", "--fuel", "0", "--json"],
        vec!["inspect", "--json"],
        vec!["run", "x.wasm", "m", "--bogus", "--json"],
        vec!["run", "x.wasm", "", "--json"],
        vec!["call", "x", "", "--json"],
    ];
    for args in cases {
        let out = tdm(dir.path(), &args, b"");
        assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}: {}", text(&out));
        let error = json(&out);
        assert_eq!(error["status"], "error", "{args:?}: {error}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{args:?}: {error}");
        assert!(matches!(error["error"].as_str(), Some("usage" | "io" | "refused")), "{args:?}: {error}");
        assert!(!stderr(&out).is_empty(), "the text goes to stderr too: {args:?}");
    }
}

#[test]
fn exec_errors_with_json_are_one_json_line_on_stderr_whoever_finds_them() {
    // exec's stdout is the command's: tdm's own errors, clap's included, go to stderr.
    let dir = tempfile::tempdir().unwrap();
    let command = write(dir.path(), "cmd.wat", r#"(module (memory (export "memory") 1) (func (export "_start")))"#);
    let cases: Vec<Vec<&str>> = vec![
        vec!["exec", "--env", "=x", "--json", &command],
        vec!["exec", "--bogus", "--json", &command],
        vec!["exec", "--json"],
        vec!["-q", "exec", "--fuel", "0", "--json", &command],
        vec!["exec", "--dir", "/nonexistent", "--json", &command],
        vec!["exec", "/nonexistent.wasm", "--json"],
    ];
    for args in cases {
        let out = tdm(dir.path(), &args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(out.stdout.is_empty(), "{args:?}: stdout is the command's: {}", text(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{args:?}: one JSON line: {err}");
        let error: Value = serde_json::from_str(&err).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {err}"));
        // A module that is not there is an I/O error; the flags' mistakes are usage errors.
        let kind = if args.contains(&"/nonexistent.wasm") { "io" } else { "usage" };
        assert_eq!((error["status"].as_str(), error["error"].as_str()), (Some("error"), Some(kind)), "{args:?}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{args:?}: {error}");
    }
    // A missing argument is named.
    let missing = stderr(&tdm(dir.path(), &["exec", "--json"], b""));
    assert!(missing.contains("<MODULE>"), "{missing}");
}

#[test]
fn stats_json_is_one_object_on_stderr_and_audit_json_is_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = tdm(dir.path(), &["run", &echo(), "greet", "--stats", "--json"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["status"], "completed");
    let stats: Value = stderr(&out)
        .lines()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .unwrap_or_else(|| panic!("no JSON line on stderr: {}", stderr(&out)));
    for key in ["fuelUsed", "launchFuel", "peakMemoryBytes", "elapsedUs", "hostCalls"] {
        assert!(stats["stats"][key].is_u64(), "{key}: {stats}");
    }
    let text_stats = tdm(dir.path(), &["run", &echo(), "greet", "--stats"], b"");
    assert!(stderr(&text_stats).contains("tdm: fuel_used="), "{}", stderr(&text_stats));

    let spin = write(
        dir.path(),
        "exit3.wat",
        r#"(module (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
        (memory (export "memory") 1) (func (export "_start") (call $exit (i32.const 3))))"#,
    );
    let out = tdm(dir.path(), &["exec", "--stats", "--json", &spin], b"");
    assert_eq!(out.status.code(), Some(3));
    let stats: Value = serde_json::from_str(stderr(&out).trim()).expect("exec's stats are one JSON line on stderr");
    assert!(stats["stats"]["fuelUsed"].is_u64(), "{stats}");

    let audit =
        write(dir.path(), "audit.jsonl", "{\"plugin\":\"a\",\"granted\":true}\n{\"plugin\":\"b\",\"granted\":false}\n");
    let out = tdm(dir.path(), &["audit", "--audit", &audit, "--json"], b"");
    assert_eq!(lines(&out).len(), 2, "one JSON line per decision");
}

#[test]
fn approve_json_without_a_terminal_prints_only_the_error_document_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let pkg = package(dir.path(), "pkg", "ok", OK, &[("ping", "answers ok")], "");
    let installed = tdm(&ws, &["install", "--allow-unsigned", &pkg.display().to_string(), "--json"], b"");
    assert_eq!(installed.status.code(), Some(0), "{}", text(&installed));
    // No --yes, stdin not a terminal: refused. The summary of what would be approved is for
    // the operator's eyes (stderr); stdout is the one JSON document.
    let out = tdm(&ws, &["approve", "ok", "--json"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let error = json(&out);
    assert_eq!(error["status"], "error", "{error}");
    assert!(stderr(&out).contains("permissions:"), "{}", stderr(&out));
}

#[test]
fn a_module_that_is_not_there_is_an_io_error_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    for args in [vec!["run", "nosuch.wasm", "greet", "--json"], vec!["inspect", "nosuch.wasm", "--json"]] {
        let out = tdm(dir.path(), &args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let error = json(&out);
        assert_eq!(error["error"], "io", "{args:?}: {error}");
        let hint = error["hint"].as_str().unwrap_or_default();
        assert!(hint.contains("check the path"), "{args:?}: {error}");
    }
}

#[test]
fn a_hub_folder_or_package_that_is_not_there_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["hub", "list", "--hub", "/nonexistent-hub", "--json"],
        vec!["install", "--allow-unsigned", "echo", "--hub", "/nonexistent-hub", "--json"],
    ] {
        let out = tdm(dir.path(), &args, b"");
        assert_eq!(out.status.code(), Some(2), "exit 2 like any path that cannot be read: {args:?}: {}", text(&out));
        assert_eq!(json(&out)["error"], "usage", "{args:?}");
    }
}

#[test]
fn a_one_off_run_says_where_it_audits() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let forward = repo().join("std-host/fixtures/forward.wat").display().to_string();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"log","params":{"level":"info","message":"hi"}}"#;
    let out = tdm(&ws, &["run", &forward, "forward", "--params", call], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let audit = ws.join("audit.jsonl");
    assert!(audit.exists(), "the default audit log is the workspace's");
    let notice: Vec<String> = stderr(&out).lines().filter(|l| l.starts_with("tdm: audit:")).map(String::from).collect();
    assert_eq!(notice.len(), 1, "{}", stderr(&out));
    assert!(notice[0].contains(&audit.display().to_string()) && notice[0].contains("--audit FILE"), "{notice:?}");
    // With --json the notice is a JSON line; with --audit FILE (chosen) or -q there is none.
    let out = tdm(&ws, &["run", &forward, "forward", "--params", call, "--json"], b"");
    let line = stderr(&out).lines().find(|l| l.contains("\"audit\"")).map(String::from).unwrap_or_default();
    let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_eq!(value["audit"]["file"], audit.display().to_string());
    let chosen = dir.path().join("mine.jsonl").display().to_string();
    for extra in [vec!["--audit", chosen.as_str()], vec!["-q"]] {
        let mut args = vec!["run", forward.as_str(), "forward", "--params", call];
        args.extend(extra);
        assert!(!stderr(&tdm(&ws, &args, b"")).contains("audit"), "{args:?}");
    }
}
