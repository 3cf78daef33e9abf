//! Params nested past the policy's `max_request_depth` (128 levels) never reach the plugin:
//! `tdm run` with params 100,000 levels deep (a file, standard input, the REPL's piped lines)
//! answers `request_too_deep` with a hint naming the bound; 128 levels still run.

#[path = "support/tdm.rs"]
mod support;

use support::{echo, json, tdm, write};

/// `levels` nested arrays as JSON text.
fn nested(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn params_past_the_depth_are_refused_and_128_levels_run() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(dir.path(), "deep.json", nested(100_000));
    let out = tdm(dir.path(), &["run", &echo(), "greet", "--params", &format!("@{deep}")], b"");
    let outcome = json(&out);
    assert_eq!(outcome["blockedReason"], "request_too_deep", "{outcome}");
    assert_ne!(out.status.code(), Some(0), "a refused intent is a failed run");
    let hint = outcome["recoveryHint"].as_str().unwrap();
    assert!(hint.contains("128"), "the hint names the bound: {hint}");

    let out = tdm(dir.path(), &["run", &echo(), "greet", "--params", "-"], nested(129).as_bytes());
    assert_eq!(json(&out)["blockedReason"], "request_too_deep");

    let fine = nested(128);
    let out = tdm(dir.path(), &["run", &echo(), "greet", "--params", &fine], b"");
    // The echo comes back 129 levels deep: past what the test's own JSON reader takes.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("{\"status\":\"completed\"") && stdout.contains(&fine), "{stdout}");
    assert_eq!(out.status.code(), Some(0));

    // The REPL (piped: one JSON line per entry) refuses it too, and the session goes on.
    let lines = format!("greet {}\ngreet {{\"a\":1}}\n", nested(5_000));
    let out = tdm(dir.path(), &["repl", &echo()], lines.as_bytes());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answers: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 2, "{stdout}");
    assert_eq!(answers[0]["blockedReason"], "request_too_deep", "{stdout}");
    assert_eq!(answers[1]["status"], "completed", "{stdout}");
}
