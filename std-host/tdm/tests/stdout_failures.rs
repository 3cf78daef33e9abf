//! An outcome or a JSON document that never reached stdout is not a success: `tdm run` (text
//! and `--json`, an outcome and an error object), `tdm inspect` (text and `--json`), `hub
//! list --json`, `workspace status --json` and `completions` exit 2 with one line on stderr
//! saying so when stdout is a full disk (`/dev/full`), a pipe whose reader has gone (`EPIPE`)
//! or closed (`>&-`). The same commands with stdout on `/dev/null` still exit 0.

#[path = "support/tdm.rs"]
mod support;

use std::process::{Command, Stdio};
use support::echo;

const MESSAGE: &str = "could not be written to stdout";

/// Where stdout goes.
#[derive(Debug, Clone, Copy)]
enum Sink {
    Full,
    BrokenPipe,
    Closed,
    Null,
}

/// Runs `tdm ARGS` with stdout on `sink`; the exit code and stderr.
fn run(ws: &std::path::Path, args: &[&str], sink: Sink) -> (Option<i32>, String) {
    let tdm = env!("CARGO_BIN_EXE_tdm");
    let mut command = match sink {
        // The shell closes fd 1 and then runs tdm in its place.
        Sink::Closed => {
            let mut sh = Command::new("sh");
            sh.arg("-c").arg("exec \"$0\" \"$@\" >&-").arg(tdm).args(args);
            sh
        }
        _ => {
            let mut direct = Command::new(tdm);
            direct.args(args);
            direct
        }
    };
    command.env("TDM_WORKSPACE", ws).stdin(Stdio::null()).stderr(Stdio::piped());
    match sink {
        Sink::Full => command.stdout(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap()),
        Sink::Null => command.stdout(Stdio::null()),
        Sink::BrokenPipe => {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            command.stdout(writer)
        }
        Sink::Closed => &mut command,
    };
    let out = command.output().expect("tdm runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_lost_outcome_or_json_output_exits_2_with_one_line_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let echo = echo();
    let missing = dir.path().join("missing.wasm").display().to_string();
    let hub = support::repo().join("examples/hub").display().to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["run", &echo, "greet"],
        vec!["run", &echo, "greet", "--json"],
        vec!["run", &missing, "greet", "--json"],
        vec!["inspect", &echo],
        vec!["inspect", &echo, "--json"],
        vec!["hub", "list", "--hub", &hub, "--json"],
        vec!["workspace", "status", "--json"],
        vec!["completions", "bash"],
    ];
    for args in &commands {
        for sink in [Sink::Full, Sink::BrokenPipe, Sink::Closed] {
            let (code, stderr) = run(&ws, args, sink);
            assert_eq!(code, Some(2), "{args:?} to {sink:?}: {stderr}");
            let said: Vec<&str> = stderr.lines().filter(|line| line.contains(MESSAGE)).collect();
            assert_eq!(said.len(), 1, "{args:?} to {sink:?}: one line says so: {stderr}");
            assert!(said[0].starts_with("tdm: error: "), "{stderr}");
        }
        let (code, stderr) = run(&ws, args, Sink::Null);
        assert!(!stderr.contains(MESSAGE), "{args:?} to /dev/null: {stderr}");
        let expected = if args.contains(&missing.as_str()) { 2 } else { 0 };
        assert_eq!(code, Some(expected), "{args:?} to /dev/null: {stderr}");
    }
}
