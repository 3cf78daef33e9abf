//! `tdm exec` behaves like `wasmtime run` for a WASI command, through the built binary: stdin
//! reaches the command (and a wait on it stops at the deadline), stdio reports what it is
//! (pipe, file, device), a closed stdout pipe stops a writer with `EPIPE`, a stdout nobody
//! reads does not hold a command past its deadline, `--stats` prints
//! the run's figures, `tdm inspect` judges a command as a command, and the default budget lets
//! a command run to its deadline.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a command may take before it counts as hung (generous: the point is that it stops).
const HUNG_AFTER: Duration = Duration::from_secs(60);

const EPIPE: i32 = 64;
const FILETYPE_UNKNOWN: u8 = 0;
const FILETYPE_CHARACTER_DEVICE: u8 = 2;
const FILETYPE_REGULAR_FILE: u8 = 4;
const RIGHT_FD_SEEK: u64 = 1 << 2;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures").join(name).display().to_string()
}

fn tdm() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tdm"));
    command.env("TDM_WORKSPACE", std::env::temp_dir().join(format!("tdm-exec-tests-{}", std::process::id())));
    command
}

/// Waits for `child`, killing it and failing if it has not ended in `HUNG_AFTER`.
fn wait(child: &mut Child) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > HUNG_AFTER {
            let _ = child.kill();
            panic!("tdm did not stop in {HUNG_AFTER:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `tdm ARGS` with `input` on its stdin (closed after it).
fn with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child =
        tdm().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn stdin_reaches_a_command() {
    let out = with_stdin(&["exec", &fixture("exec/cat.wat")], b"hello\nworld\n");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, b"hello\nworld\n");
}

#[test]
fn a_command_waiting_on_stdin_stops_at_its_deadline() {
    // stdin stays open and empty: the read waits, and the deadline ends it.
    let mut child = tdm()
        .args(["exec", "--timeout", "0.3", &fixture("exec/cat.wat")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let status = wait(&mut child);
    drop(stdin);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(status.code(), Some(127), "{stderr}");
    assert!(stderr.contains("deadline_exceeded"), "{stderr}");
}

#[test]
fn poll_on_stdin_waits_for_input_or_the_clock() {
    let poll = fixture("exec/poll_stdin.wat");
    // An open, empty stdin is not readable: the 200 ms clock fires first.
    let mut child = tdm().args(["exec", &poll]).stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let status = wait(&mut child);
    drop(stdin);
    assert_eq!(status.code(), Some(10), "the clock, not stdin");
    // With bytes waiting, stdin is readable at once.
    assert_eq!(with_stdin(&["exec", &poll], b"x").status.code(), Some(11), "stdin, not the clock");
}

/// The (filetype, rights) of fds 0, 1 and 2 from `fd_fdstat_get`, and the filetypes from
/// `fd_filestat_get`, as `stdio_kinds.wat` wrote them.
fn stdio_report(bytes: &[u8]) -> [(u8, u64, u8); 3] {
    assert_eq!(bytes.len(), 264, "{bytes:?}");
    std::array::from_fn(|fd| {
        let at = fd * 88;
        let rights = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap());
        (bytes[at], rights, bytes[at + 24 + 16])
    })
}

#[test]
fn stdio_reports_pipes_files_and_devices_as_what_they_are() {
    let tmp = tempfile::tempdir().unwrap();
    let err_file = std::fs::File::create(tmp.path().join("stderr")).unwrap();
    // stdin /dev/null, stdout a pipe, stderr a file.
    let out =
        tdm().args(["exec", &fixture("exec/stdio_kinds.wat")]).stdin(Stdio::null()).stderr(err_file).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let [stdin, stdout, stderr] = stdio_report(&out.stdout);
    assert_eq!(stdin.0, FILETYPE_CHARACTER_DEVICE, "/dev/null is a character device");
    assert_ne!(stdin.1 & RIGHT_FD_SEEK, 0, "... that is not a terminal (libc's isatty is false)");
    assert_eq!(stdin.2, FILETYPE_CHARACTER_DEVICE);
    assert_eq!((stdout.0, stdout.2), (FILETYPE_UNKNOWN, FILETYPE_UNKNOWN), "a pipe (Preview1 has no pipe type)");
    assert_eq!((stderr.0, stderr.2), (FILETYPE_REGULAR_FILE, FILETYPE_REGULAR_FILE), "a file");

    // stdout redirected to a file.
    let out_path = tmp.path().join("stdout");
    let status = tdm()
        .args(["exec", &fixture("exec/stdio_kinds.wat")])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let [_, stdout, _] = stdio_report(&std::fs::read(&out_path).unwrap());
    assert_eq!(stdout.0, FILETYPE_REGULAR_FILE);
}

#[test]
fn a_closed_stdout_pipe_stops_a_writer_with_epipe() {
    // `tdm exec yes.wat | head -1`: read one line, close the pipe.
    let mut child = tdm()
        .args(["exec", "--timeout", "30", &fixture("exec/yes.wat")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert_eq!(first, "y\n");
    let status = wait(&mut child);
    assert_eq!(status.code(), Some(EPIPE), "the guest saw EPIPE and exited with it");
}

#[test]
fn a_stdout_nobody_reads_does_not_hold_a_command_past_its_deadline() {
    // `tdm exec flood.wat --timeout 0.3 | sleep 3600`: the pipe fills and stays full, so a
    // write to it blocks; the deadline, not the reader, ends the run.
    let mut child = tdm()
        .args(["exec", "--timeout", "0.3", &fixture("exec/flood.wat")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let unread = child.stdout.take().unwrap();
    let status = wait(&mut child);
    drop(unread);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(status.code(), Some(127), "{stderr}");
    assert!(stderr.contains("deadline_exceeded"), "{stderr}");
}

#[test]
fn exec_stats_prints_fuel_and_time() {
    let out = with_stdin(&["exec", "--stats", &fixture("exec/cat.wat")], b"abc");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"abc", "the command's own output is unchanged");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stats = stderr.lines().find(|l| l.starts_with("tdm: fuel_used=")).unwrap_or_else(|| panic!("{stderr}"));
    let field = |name: &str| -> u64 {
        let value = stats.split(' ').find_map(|kv| kv.strip_prefix(name)).unwrap_or_else(|| panic!("{stats}"));
        value.parse().unwrap()
    };
    assert!(field("fuel_used=") > 0);
    assert!(field("fuel_budget=") >= field("fuel_used="));
    field("elapsed_us=");
}

#[test]
fn inspect_judges_a_command_as_a_command() {
    let out = tdm().args(["inspect", &fixture("exec/cat.wat"), "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["kind"], "command");
    assert_eq!(value["verdict"], "accepted");
    let human = tdm().args(["inspect", &fixture("exec/cat.wat")]).output().unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("kind: command") && text.contains("verdict: accepted"), "{text}");
    // A plugin is still judged as a plugin.
    let echo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/echo/echo.wat");
    let plugin = tdm().args(["inspect", &echo.display().to_string(), "--json"]).output().unwrap();
    let value: serde_json::Value = serde_json::from_slice(&plugin.stdout).unwrap();
    assert_eq!((value["kind"].as_str(), value["verdict"].as_str()), (Some("plugin"), Some("accepted")));
}

#[test]
fn the_default_budget_lets_a_command_run_to_its_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    let spin = tmp.path().join("spin.wat");
    std::fs::write(&spin, r#"(module (memory (export "memory") 1) (func (export "_start") (loop (br 0))))"#).unwrap();
    let out = tdm().args(["exec", "--timeout", "0.5", "--stats", &spin.display().to_string()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(127), "{stderr}");
    assert!(stderr.contains("deadline_exceeded"), "the deadline, not the fuel, ends it: {stderr}");
    // The budget is the documented 1e11 fuel per second of deadline (README, docs/ABI.md).
    assert!(stderr.contains("fuel_budget=50000000000 "), "{stderr}");
}

#[test]
fn every_argument_after_the_module_is_the_modules() {
    // As `wasmtime run`: flags before the module are tdm's, everything after it (flags that
    // tdm has too, `--json`, `--`) is passed through; a first `--` stays optional.
    let module = fixture("exec/argv_env.wat");
    let out =
        tdm().args(["exec", "--fuel", "1_000_000", &module, "a", "--json", "-x", "--", "--fuel"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "argv_env.wat\na\n--json\n-x\n--\n--fuel\n");
    let old = tdm().args(["exec", &module, "--", "b", "c"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&old.stdout), "argv_env.wat\nb\nc\n");
}

#[test]
fn env_name_inherits_tdms_value_and_skips_an_unset_one() {
    let module = fixture("exec/argv_env.wat");
    let out = tdm()
        .env("TDM_TEST_INHERITED", "from tdm")
        .env_remove("TDM_TEST_UNSET")
        .args(["exec", "--env", "TDM_TEST_INHERITED", "--env", "TDM_TEST_UNSET", "--env", "K=v", &module])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // An unset NAME is left out, as `wasmtime run --env NAME` leaves it unset in the guest.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "argv_env.wat\nTDM_TEST_INHERITED=from tdm\nK=v\n");
    let bad = tdm().args(["exec", "--env", "=v", &module]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2), "an empty name is a usage error");
}
