//! No two outputs of one command are the same file or stream: a recording (`--record`,
//! `:record`) is refused when its path is, or will be, the audit log (an `--audit` file, or the
//! workspace's `audit.jsonl` not written yet), stdout (`/dev/stdout`, `/proc/self/fd/1`, the
//! file stdout was sent to), the workspace state or the REPL history; and checked again where
//! the trace is opened, so a path swapped for a link to the audit log during the session leaves
//! the audit log as it was.

#[path = "support/tdm.rs"]
mod support;

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use support::{echo, stderr, tdm, text};

/// Runs `tdm ARGS` in `dir` with `TDM_WORKSPACE=ws` and stdout sent to the file `stdout`.
fn tdm_to_file(dir: &Path, args: &[&str], stdout: &Path, stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .current_dir(dir)
        .env("TDM_WORKSPACE", dir.join("ws"))
        .stdin(Stdio::piped())
        .stdout(File::create(stdout).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn is_trace(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|bytes| bytes.starts_with(&contour_core::TRACE_MAGIC))
}

#[test]
fn a_recording_over_the_audit_log_the_state_or_the_history_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let echo = echo();
    let audit = dir.path().join("a.log").display().to_string();
    let cases: [(Vec<String>, &str); 5] = [
        // The workspace's audit log, not written yet: the run would create it.
        (vec!["--record".into(), ws.join("audit.jsonl").display().to_string()], "the audit log"),
        (vec!["--audit".into(), audit.clone(), "--record".into(), audit.clone()], "the audit log"),
        // The same file by another spelling.
        (
            vec!["--audit".into(), audit.clone(), "--record".into(), format!("{}/../a.log", ws.display())],
            "the audit log",
        ),
        (vec!["--record".into(), ws.join("state.json").display().to_string()], "the workspace state"),
        (vec!["--record".into(), ws.join("repl_history").display().to_string()], "the REPL history"),
    ];
    for (flags, what) in cases {
        let mut args = vec!["run", &echo, "greet"];
        args.extend(flags.iter().map(String::as_str));
        let out = tdm(&ws, &args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(stderr(&out).contains(&format!("it is {what}, another output of this command")), "{}", stderr(&out));
        assert!(out.stdout.is_empty(), "nothing ran: {}", text(&out));
    }
    for path in [ws.join("audit.jsonl"), dir.path().join("a.log"), ws.join("state.json"), ws.join("repl_history")] {
        assert!(!is_trace(&path), "{} holds no trace", path.display());
    }
}

#[test]
fn a_recording_to_stdout_is_refused_whatever_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let echo = echo();
    let out_file = dir.path().join("out.json");
    let out_name = out_file.display().to_string();
    for record in [out_name.as_str(), "/dev/stdout", "/proc/self/fd/1"] {
        let out = tdm_to_file(dir.path(), &["run", &echo, "greet", "--record", record], &out_file, b"");
        assert_eq!(out.status.code(), Some(2), "{record}: {}", stderr(&out));
        assert!(stderr(&out).contains("it is stdout, another output of this command"), "{}", stderr(&out));
        assert!(!is_trace(&out_file), "{record}: stdout holds no trace");
    }
    // The piped REPL: `:record /dev/stdout` is an error line; stdout stays JSON lines.
    let lines = b"greet {}\n:record /dev/stdout\ngreet {}\n:stop\n";
    let out = tdm_to_file(dir.path(), &["repl", &echo], &out_file, lines);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = std::fs::read(&out_file).unwrap();
    let stdout = String::from_utf8(stdout).expect("stdout is text, no trace bytes in it");
    let answers: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 4, "{stdout}");
    assert!(answers[1]["message"].as_str().unwrap().contains("it is stdout"), "{stdout}");
}

#[test]
fn a_trace_path_swapped_for_the_audit_log_is_refused_where_it_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let forward = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/forward.wat");
    let audit = dir.path().join("audit.log");
    let trace = dir.path().join("session.trace");
    let mut repl = support::Repl::start_with(
        &ws,
        &["repl", &forward.display().to_string(), "--audit", &audit.display().to_string()],
    );
    let recording = repl.next(&format!(":record {}", trace.display()));
    assert!(recording["recording"].is_string(), "{recording}");
    let call = r#"forward {"jsonrpc":"2.0","id":1,"method":"log","params":{"message":"hi"}}"#;
    assert_eq!(repl.next(call)["status"], "completed");
    let logged = std::fs::read(&audit).unwrap();
    assert!(!logged.is_empty(), "the host call was audited");
    // The trace's path now leads to the audit log.
    let _ = std::fs::remove_file(&trace);
    std::os::unix::fs::symlink(&audit, &trace).unwrap();
    let stopped = repl.next(":stop");
    assert_eq!(stopped["status"], "error", "{stopped}");
    assert!(stopped["message"].as_str().unwrap().contains("it is the audit log"), "{stopped}");
    assert_eq!(std::fs::read(&audit).unwrap(), logged, "the audit log is as it was");
    repl.finish();
}
