//! Ctrl-C (SIGINT, sent to the process alone with `kill -INT`) interrupts every blocking wait
//! inside host work, not only Wasm code: a `net.fetch` whose server accepted the connection and
//! never answers, a `tdm exec` command reading a stdin nobody writes to, and a plugin's sleep.
//! Each runs under a 30 s deadline and must end well before it (the bound checked here is 5 s,
//! far from the deadline and far above the ~20 ms the wait takes to notice: a guard, not a
//! speed check; the time measured is printed). On a terminal, a second SIGINT while the first
//! is still pending ends the REPL at once with 130, as when piped.

#[path = "support/tdm.rs"]
mod support;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::write;

/// The run's deadline: what an uninterrupted wait would last.
const DEADLINE: &str = "30";
/// The most an interrupted wait may take here (far from the deadline).
const BOUND: Duration = Duration::from_secs(5);
/// How long the test waits for tdm to reach its wait before calling it a hang.
const PATIENCE: Duration = Duration::from_secs(60);

/// Whether process `pid` catches SIGINT (bit 2 of SigCgt in /proc/PID/status).
fn catches_sigint(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:")).map(str::trim).unwrap_or("0");
    u64::from_str_radix(mask, 16).is_ok_and(|m| m & (1 << (2 - 1)) != 0)
}

fn spawn(ws: &Path, args: &[&str], stdin: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .env("TDM_WORKSPACE", ws)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdm starts")
}

/// Waits until `ready` holds and `child` catches SIGINT, then sends SIGINT and waits for the
/// end; the exit code, stdout and how long the end took after the signal.
fn interrupt(mut child: Child, what: &str, ready: impl Fn() -> bool) -> (Option<i32>, String, Duration) {
    let waited = Instant::now();
    while !(ready() && catches_sigint(child.id())) {
        assert!(child.try_wait().unwrap().is_none(), "{what}: tdm ended before the signal");
        assert!(waited.elapsed() < PATIENCE, "{what}: tdm never reached its wait");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Into the wait itself, past the set-up around it.
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "{what}: tdm ended before the signal");
    let sent = Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if sent.elapsed() > PATIENCE {
            let _ = child.kill();
            panic!("{what}: tdm did not end after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = sent.elapsed();
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    eprintln!("{what}: ended {} ms after SIGINT (deadline {DEADLINE} s)", took.as_millis());
    assert!(took < BOUND, "{what}: took {took:?} after SIGINT");
    (status.code(), stdout, took)
}

fn forward() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/forward.wat").display().to_string()
}

#[test]
fn ctrl_c_interrupts_a_fetch_the_server_holds_open() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts the connection and holds it, reading nothing and answering nothing.
    let (accepted, held) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            let _ = accepted.send(());
            let _hold = stream;
            std::thread::sleep(Duration::from_secs(120));
        }
    });
    let request =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"net.fetch","params":{{"url":"http://127.0.0.1:{port}/slow"}}}}"#);
    let audit = dir.path().join("audit.jsonl").display().to_string();
    let args = [
        "run",
        &forward(),
        "fetch",
        "--params",
        &request,
        "--grant",
        "network:127.0.0.1",
        "--timeout",
        DEADLINE,
        "--audit",
        &audit,
    ];
    let child = spawn(dir.path(), &args, Stdio::null());
    let connected = std::cell::Cell::new(false);
    let (code, stdout, _) = interrupt(child, "net.fetch", || {
        connected.set(connected.get() || held.try_recv().is_ok());
        connected.get()
    });
    assert_eq!(code, Some(1), "{stdout}");
    let outcome: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(outcome["message"].as_str().unwrap().contains("cancelled (Ctrl-C)"), "{outcome}");
    assert_eq!(outcome["blockedReason"], "cancelled", "{outcome}");
    // The audit says the fetch was cancelled, not that the host failed it.
    let log = std::fs::read_to_string(&audit).unwrap();
    let fetch: serde_json::Value = log.lines().find_map(|l| serde_json::from_str(l).ok()).expect("an audit line");
    assert_eq!((fetch["method"].as_str(), fetch["reason"].as_str()), (Some("net.fetch"), Some("cancelled")), "{log}");
}

#[test]
fn ctrl_c_interrupts_a_command_reading_a_silent_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let cat = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/exec/cat.wat").display().to_string();
    // A pipe whose writer the test keeps open and never writes to.
    let (reader, _writer) = std::io::pipe().unwrap();
    let child = spawn(dir.path(), &["exec", "--timeout", DEADLINE, &cat], Stdio::from(reader));
    let (code, _, _) = interrupt(child, "exec stdin", || true);
    assert_eq!(code, Some(130), "tdm exec reports Ctrl-C as 130");
}

#[test]
fn ctrl_c_interrupts_a_sleep() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/limits/sleep_loop.wat");
    // Each sleep 60 s (0xDF8475800 ns) instead of 1 ms.
    let wat = std::fs::read_to_string(fixture).unwrap().replace(r"\40\42\0f\00\00\00", r"\00\58\47\f8\0d\00");
    assert!(wat.contains(r"\00\58\47\f8\0d\00"));
    let module = write(dir.path(), "sleep.wat", wat);
    let child = spawn(dir.path(), &["run", &module, "nap", "--timeout", DEADLINE], Stdio::null());
    let (code, stdout, _) = interrupt(child, "sleep", || true);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("cancelled (Ctrl-C)"), "{stdout}");
    assert!(stdout.contains(r#""blockedReason":"cancelled""#), "{stdout}");
}

/// A plugin whose intent copies 32 MiB of memory in a loop: a `memory.copy` is one
/// instruction, so the deadline checks between fuel slices come tens of milliseconds apart,
/// and a first SIGINT stays pending that long.
const COPY_LOOP: &str = r#"(module (memory (export "memory") 1024)
    (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
    (func (export "tdm_free") (param i32 i32))
    (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
      (loop (memory.copy (i32.const 0) (i32.const 33554432) (i32.const 33554432)) (br 0))
      i32.const 0))"#;

/// The pid of this test process's child running a command line that mentions `needle`.
fn child_running(needle: &str) -> Option<u32> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let children: Vec<String> = tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .collect();
    children.iter().flat_map(|list| list.split_whitespace()).filter_map(|pid| pid.parse().ok()).find(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
    })
}

/// Whether SIGINT is pending for `pid` (bit 2 of SigPnd or ShdPnd).
fn sigint_pending(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    ["SigPnd:", "ShdPnd:"].iter().any(|field| {
        let mask = status.lines().find_map(|l| l.strip_prefix(field)).map(str::trim).unwrap_or("0");
        u64::from_str_radix(mask, 16).is_ok_and(|m| m & (1 << (2 - 1)) != 0)
    })
}

#[test]
fn a_second_ctrl_c_on_a_terminal_ends_the_repl_with_130() {
    let dir = tempfile::tempdir().unwrap();
    let module = write(dir.path(), "copying.wat", COPY_LOOP);
    let mut command = Command::new(env!("CARGO_BIN_EXE_tdm"));
    command.args(["repl", &module, "--timeout", "600", "--fuel", "100_000_000_000_000"]);
    command.env("TDM_WORKSPACE", dir.path().join("ws")).env("TERM", "xterm");
    let mut p = rexpect::session::spawn_command(command, Some(30_000)).expect("tdm repl starts in a pty");
    p.exp_string("copying> ").expect("the prompt");
    let pid = child_running(&module).expect("the REPL's pid");
    p.send_line("go").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // The first SIGINT sets the cancel flag; once it is delivered, a second one while the
    // intent has not yet reached its next check ends the REPL at once. (Two Ctrl-C typed at
    // once would be one signal: the second is sent once the first was taken.)
    p.process_mut().signal(rexpect::process::Signal::SIGINT).unwrap();
    let sent = Instant::now();
    while sigint_pending(pid) && sent.elapsed() < PATIENCE {
        std::thread::sleep(Duration::from_millis(1));
    }
    p.process_mut().signal(rexpect::process::Signal::SIGINT).unwrap();
    p.exp_eof().expect("the REPL ends");
    match p.process().wait().unwrap() {
        rexpect::process::WaitStatus::Exited(_, code) => assert_eq!(code, 130),
        other => panic!("the REPL did not exit 130: {other:?}"),
    }
}
