//! SIGINT during a long intent, through the built `tdm`: `tdm run` and `tdm call` stop the
//! intent, print its cancelled outcome and exit 1 like any failed intent (an exit code, not a
//! death by signal); `tdm exec` stops the command, reports it and exits 130 (tdm's own exit,
//! what a shell shows for Ctrl-C); `tdm repl` on a terminal stops the intent, the prompt comes
//! back and the next entries work; piped (no terminal) it stops the intent, whose line is the
//! cancelled outcome, and the next lines run, and a SIGINT while it waits for input ends the
//! session as the end of the input does, writing a `:record` in progress. The signal is sent to
//! the process alone (`kill -INT PID`), not through the terminal, so what is proven is tdm's
//! handler. The intents loop forever; `run` and the REPL under a deadline and a budget far past
//! the test's patience, so only the signal can end them, and the outcome must say it was
//! cancelled (not a deadline or the budget).

#[path = "support/tdm.rs"]
mod support;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::{install_approved, package, write, SPIN};

/// How long the test waits for tdm to get into the intent, or to end after the signal, before
/// it calls it a hang (a guard, not a speed check).
const PATIENCE: Duration = Duration::from_secs(60);

/// A field of /proc/PID/stat after the command name (`index` 0 is the state).
fn stat_field(pid: u32, index: usize) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(index)?.parse().ok()
}

/// Whether process `pid` catches SIGINT (bit 2 of SigCgt in /proc/PID/status).
fn catches_sigint(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:")).map(str::trim).unwrap_or("0");
    u64::from_str_radix(mask, 16).is_ok_and(|m| m & (1 << (2 - 1)) != 0)
}

/// Waits until `child` catches SIGINT and has spent 30 clock ticks of CPU (its intent is
/// spinning), then sends it SIGINT with `kill -INT`.
fn interrupt_when_spinning(child: &mut Child) {
    let pid = child.id();
    let waited = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("tdm ended before the signal: {status}");
        }
        // utime and stime are fields 11 and 12 after the state.
        let cpu = stat_field(pid, 11).unwrap_or(0) + stat_field(pid, 12).unwrap_or(0);
        if catches_sigint(pid) && cpu >= 30 {
            break;
        }
        assert!(
            waited.elapsed() < PATIENCE,
            "tdm never spun with a SIGINT handler (catches SIGINT: {}, CPU ticks: {cpu})",
            catches_sigint(pid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill").args(["-INT", &pid.to_string()]).status().expect("kill runs");
    assert!(kill.success());
}

/// Waits for `child` to end (killing it after `PATIENCE`); its exit code, stdout and stderr.
fn finish(mut child: Child) -> (Option<i32>, String, String) {
    let waited = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if waited.elapsed() > PATIENCE {
            let _ = child.kill();
            panic!("tdm did not end after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn spawn(ws: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .args(["--stats", "--json"])
        .env("TDM_WORKSPACE", ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdm starts")
}

/// The cancelled outcome on stdout and the figures on stderr of a `--stats --json` run.
fn check_cancelled(code: Option<i32>, stdout: &str, stderr: &str) {
    assert_eq!(code, Some(1), "an exit code (None: killed by the signal); stdout {stdout} stderr {stderr}");
    let outcome: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(outcome["status"], "failed", "{outcome}");
    assert_eq!(outcome["blockedReason"], "cancelled", "its own reason, not a timeout: {outcome}");
    assert_eq!(outcome["output"]["retryable"], true, "{outcome}");
    assert!(outcome["message"].as_str().unwrap().contains("cancelled (Ctrl-C)"), "{outcome}");
    assert!(outcome["recoveryHint"].as_str().unwrap().contains("again"), "{outcome}");
    let stats: Value = stderr.lines().find_map(|l| serde_json::from_str(l).ok()).expect("the stats line");
    assert_eq!(stats["stats"]["cancelled"], true, "{stderr}");
    assert!(stats["stats"]["fuelUsed"].as_u64().unwrap() > 0, "stopped while running: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn sigint_stops_the_intent_of_tdm_run_which_exits_with_its_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let module = write(dir.path(), "spin.wat", SPIN);
    let args = ["run", &module, "spin", "--timeout", "600", "--fuel", "100_000_000_000_000"];
    let mut child = spawn(dir.path(), &args);
    interrupt_when_spinning(&mut child);
    let (code, stdout, stderr) = finish(child);
    check_cancelled(code, &stdout, &stderr);
}

#[test]
fn sigint_stops_the_intent_of_tdm_call_which_exits_with_its_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    // An installed plugin runs within its approval, at most the default limits (5 s, 2e9 fuel,
    // over a second of this loop): CPU time, not wall time, runs the budget down, and the
    // signal comes after 0.3 s of it.
    install_approved(&ws, &package(dir.path(), "pkg", "spin", SPIN, &[("spin", "never ends")], ""));
    let mut child = spawn(&ws, &["call", "spin", "spin"]);
    interrupt_when_spinning(&mut child);
    let (code, stdout, stderr) = finish(child);
    check_cancelled(code, &stdout, &stderr);
}

/// The REPL's counter plugin with a `spin` intent that loops forever (its trap replaced by a
/// loop), written in `dir`; its path.
fn spinning_counter(dir: &Path) -> String {
    let counter = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/repl_counter.wat");
    let wat = std::fs::read_to_string(counter).unwrap();
    let spinning = wat
        .replace(r#""\"method\":\"trap\"""#, r#""\"method\":\"spin\"""#)
        .replace("(then (unreachable))", "(then (loop (br 0)))");
    assert!(spinning.contains("(loop (br 0))"));
    write(dir, "counter.wat", spinning)
}

/// `tdm repl MODULE` with stdin, stdout and stderr piped (the piped mode), under a deadline and
/// a budget only the signal can end `spin` within.
fn spawn_piped_repl(dir: &Path, module: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["repl", module, "--timeout", "600", "--fuel", "100_000_000_000_000"])
        .env("TDM_WORKSPACE", dir.join("ws"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdm starts")
}

fn parse_lines(stdout: &str) -> Vec<Value> {
    stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}"))).collect()
}

/// `tdm replay TRACE --json` (workspace under `dir`), parsed.
fn replay_json(trace: &Path, dir: &Path) -> Value {
    let replayed = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["replay", &trace.display().to_string(), "--json"])
        .env("TDM_WORKSPACE", dir.join("ws"))
        .output()
        .unwrap();
    serde_json::from_slice(&replayed.stdout).unwrap()
}

#[test]
fn sigint_stops_the_intent_of_the_piped_repl_which_reads_on() {
    let dir = tempfile::tempdir().unwrap();
    let module = spinning_counter(dir.path());
    let trace = dir.path().join("cancelled.trace");
    let mut child = spawn_piped_repl(dir.path(), &module);
    // All lines are in the pipe, and it is closed: after `spin` the REPL reads `count`, then
    // the end of the input, which writes the recording.
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, ":record {}\nspin\ncount", trace.display()).unwrap();
    drop(stdin);
    interrupt_when_spinning(&mut child);
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, Some(0), "the session ends at the end of the input (None: killed by the signal): {stderr}");
    let lines = parse_lines(&stdout);
    assert_eq!(lines.len(), 3, "one line per input line: {stdout}");
    assert_eq!(lines[0]["status"], "ok", "{stdout}");
    assert_eq!(lines[1]["status"], "failed", "{stdout}");
    assert_eq!(lines[1]["blockedReason"], "cancelled", "{stdout}");
    assert!(lines[1]["message"].as_str().unwrap().contains("cancelled (Ctrl-C)"), "{stdout}");
    assert_eq!(lines[2]["status"], "completed", "{stdout}");
    assert_eq!(lines[2]["output"]["count"], 1, "a fresh instance: {stdout}");
    assert!(stderr.contains("line 2: fuel_used=") && stderr.contains(" cancelled"), "{stderr}");
    assert!(!stderr.contains("interrupted"), "the signal was the intent's, not the wait's: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The recording replays the cancel where it happened, as a cancel: identical.
    assert!(stderr.contains("recorded 2 intent(s)"), "{stderr}");
    let report = replay_json(&trace, dir.path());
    assert_eq!((report["intents"].as_u64(), report["identical"].as_bool()), (Some(2), Some(true)), "{report}");
}

#[test]
fn sigint_while_the_piped_repl_waits_ends_the_session_and_writes_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let module = spinning_counter(dir.path());
    let trace = dir.path().join("session.trace");
    let mut child = spawn_piped_repl(dir.path(), &module);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, ":record {}\ncount", trace.display()).unwrap();
    // Both answers read: the REPL is waiting for the next line, stdin still open.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = String::new();
    for _ in 0..2 {
        stdout.read_line(&mut answers).unwrap();
    }
    let lines = parse_lines(&answers);
    assert_eq!(lines[0]["status"], "ok", "{answers}");
    assert_eq!(lines[1]["output"]["count"], 1, "{answers}");
    // The handler is installed before the first line is read, so it is there by now.
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(kill.success());
    let (code, rest, stderr) = finish(child);
    drop(stdin);
    let mut after = String::new();
    stdout.read_to_string(&mut after).unwrap();
    assert_eq!(code, Some(0), "ended as at the end of the input (None: killed by the signal): {stderr}");
    assert!(rest.is_empty() && after.is_empty(), "no line without an entry: {after}");
    assert!(stderr.contains("interrupted (SIGINT) while waiting for input"), "{stderr}");
    assert!(stderr.contains("recorded 1 intent(s)"), "{stderr}");
    let report = replay_json(&trace, dir.path());
    assert_eq!((report["intents"].as_u64(), report["identical"].as_bool()), (Some(1), Some(true)), "{report}");
}

#[test]
fn sigint_stops_the_intent_of_the_repl_and_the_prompt_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let module = spinning_counter(dir.path());
    let mut command = Command::new(env!("CARGO_BIN_EXE_tdm"));
    command.args(["repl", &module, "--timeout", "600", "--fuel", "100_000_000_000_000"]);
    command.env("TDM_WORKSPACE", dir.path().join("ws")).env("TERM", "xterm");
    let mut p = rexpect::session::spawn_command(command, Some(30_000)).expect("tdm repl starts in a pty");
    p.exp_string("counter> ").unwrap();
    p.send_line("count").unwrap();
    p.exp_string("\"count\": 1").unwrap();
    p.exp_string("counter> ").unwrap();
    p.send_line("spin").unwrap();
    // The intent is running once the entry is echoed and a moment has passed.
    p.exp_string("spin").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    p.process_mut().signal(rexpect::process::Signal::SIGINT).expect("SIGINT is sent to tdm alone");
    p.exp_string("cancelled (Ctrl-C)").expect("the intent is reported as cancelled");
    p.exp_string("counter> ").expect("the prompt comes back");
    p.send_line(":stats").unwrap();
    p.exp_string("intents run: 2 (1 failed, 1 cancelled)").unwrap();
    p.exp_string("counter> ").unwrap();
    p.send_line("count").unwrap();
    p.exp_string("\"count\": 1").expect("the next intent runs, in a fresh instance");
    p.exp_string("counter> ").unwrap();
    p.send_line(":quit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn sigint_stops_the_start_of_tdm_exec_which_exits_130_after_reporting() {
    let dir = tempfile::tempdir().unwrap();
    let command = r#"(module
        (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
        (memory (export "memory") 1)
        (func (export "_start") (loop (br 0))))"#;
    let module = write(dir.path(), "spin-command.wat", command);
    let args = ["exec", "--timeout", "600", "--fuel", "100_000_000_000_000", &module];
    let mut child = spawn(dir.path(), &args);
    interrupt_when_spinning(&mut child);
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, Some(130), "tdm's own exit code, not a death by signal; stderr {stderr}");
    assert!(stdout.is_empty(), "stdout is the command's: {stdout}");
    let lines: Vec<Value> = stderr.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let stats = lines.iter().find(|l| l.get("stats").is_some()).expect("the stats line");
    assert_eq!(stats["stats"]["cancelled"], true, "{stderr}");
    assert!(stats["stats"]["fuelUsed"].as_u64().unwrap() > 0, "stopped while running: {stderr}");
    let report = lines.iter().find(|l| l.get("status").is_some()).expect("the report line");
    assert_eq!(report["status"], "cancelled", "{stderr}");
    assert_eq!(report["blockedReason"], "cancelled", "{stderr}");
    assert_eq!(report["message"], "The command was cancelled (Ctrl-C) before it finished.", "{stderr}");
    assert!(report["hint"].as_str().is_some_and(|h| h.contains("tdm exec again")), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
