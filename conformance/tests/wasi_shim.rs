//! The WASI Preview1 shim (docs/ABI.md section 5): empty args and environ, stdout/stderr captured
//! in bounded buffers, `EBADF` for other fds and for `fd_prestat_get` (nothing is preopened),
//! a virtual monotonic clock, seeded `random_get`, `sched_yield`, `poll_oneoff` on clock
//! subscriptions, and `proc_exit` codes of commands.

use contour_conformance::{completed_output, fixture, run_once, sandbox};
use contour_core::{run_command, CommandExit, Plugin, Policy, Profile, VirtualEnvironment, WasiConfig};
use serde_json::json;

// Indices into the output of fixtures/wasi_probe.wat.
const ENVIRON_ERRNO: usize = 0;
const ENV_COUNT: usize = 1;
const ENV_BYTES: usize = 2;
const ARGS_ERRNO: usize = 3;
const ARG_COUNT: usize = 4;
const ARG_BYTES: usize = 5;
const STDOUT_ERRNO: usize = 6;
const STDOUT_WRITTEN: usize = 7;
const STDERR_ERRNO: usize = 8;
const FD9_ERRNO: usize = 9;
const FD0_WRITE_ERRNO: usize = 10;
const PRESTAT_ERRNO: usize = 11;
const CLOCK_ERRNO: usize = 12;
const CLOCK_FIRST: usize = 13;
const CLOCK_SECOND: usize = 14;
const CLOCK_RES_ERRNO: usize = 15;
const CLOCK_RES: usize = 16;
const RANDOM_ERRNO: usize = 17;
const RANDOM_NONZERO: usize = 18;
const RANDOM_WORD: usize = 19;
const RANDOM_EMPTY_ERRNO: usize = 20;
const SCHED_YIELD: usize = 21;
const POLL_ERRNO: usize = 22;
const POLL_NEVENTS: usize = 23;
const POLL_USERDATA: usize = 24;
const POLL_EVENT_ERROR: usize = 25;
const POLL_EVENT_TYPE: usize = 26;
const POLL_ADVANCE: usize = 27;
const STDIN_ERRNO: usize = 28;
const STDIN_READ: usize = 29;
const SEEK_ERRNO: usize = 30;
const REALTIME_ERRNO: usize = 31;
const REALTIME: usize = 32;

const EBADF: u64 = 8;
const ESPIPE: u64 = 70;

fn probe() -> (Vec<u64>, contour_core::IntentReport) {
    let report = run_once(&fixture("wasi_probe"));
    let output = completed_output(&report);
    let values: Vec<u64> = output.as_array().expect("an array").iter().map(|v| v.as_u64().expect("u64")).collect();
    assert_eq!(values.len(), 33, "{output}");
    (values, report)
}

#[test]
fn args_and_environ_are_empty() {
    let (v, _) = probe();
    assert_eq!([v[ENVIRON_ERRNO], v[ENV_COUNT], v[ENV_BYTES]], [0, 0, 0]);
    assert_eq!([v[ARGS_ERRNO], v[ARG_COUNT], v[ARG_BYTES]], [0, 0, 0]);
}

#[test]
fn fd_write_to_stdout_and_stderr_is_captured() {
    let (v, report) = probe();
    assert_eq!(v[STDOUT_ERRNO], 0);
    assert_eq!(v[STDOUT_WRITTEN], 9);
    assert_eq!(v[STDERR_ERRNO], 0);
    assert_eq!(report.stdout, b"out:hello");
    assert_eq!(report.stderr, b"err:hello");
    assert_eq!(report.output_dropped, 0);
}

#[test]
fn fd_write_to_another_fd_is_ebadf() {
    let (v, _) = probe();
    assert_eq!(v[FD9_ERRNO], EBADF);
    assert_eq!(v[FD0_WRITE_ERRNO], EBADF, "stdin is not writable");
}

#[test]
fn nothing_is_preopened() {
    let (v, _) = probe();
    assert_eq!(v[PRESTAT_ERRNO], EBADF);
}

#[test]
fn the_monotonic_clock_does_not_go_back() {
    let (v, _) = probe();
    assert_eq!(v[CLOCK_ERRNO], 0);
    assert!(v[CLOCK_SECOND] >= v[CLOCK_FIRST], "{} then {}", v[CLOCK_FIRST], v[CLOCK_SECOND]);
    assert_eq!(v[CLOCK_RES_ERRNO], 0);
    assert!(v[CLOCK_RES] > 0);
    // The realtime clock is virtual too: it starts at 2024-01-01T00:00:00Z.
    assert_eq!(v[REALTIME_ERRNO], 0);
    assert!(v[REALTIME] >= contour_core::VIRTUAL_EPOCH_NS, "{}", v[REALTIME]);
}

#[test]
fn random_get_fills_the_buffer_and_accepts_zero_length() {
    let (v, _) = probe();
    assert_eq!(v[RANDOM_ERRNO], 0);
    // 16 bytes from a seeded generator; the chance of 8 or more zero bytes is negligible.
    assert!(v[RANDOM_NONZERO] > 8, "only {} of 16 bytes are non-zero", v[RANDOM_NONZERO]);
    assert_ne!(v[RANDOM_WORD], 0);
    assert_eq!(v[RANDOM_EMPTY_ERRNO], 0);
}

#[test]
fn sched_yield_succeeds() {
    let (v, _) = probe();
    assert_eq!(v[SCHED_YIELD], 0);
}

#[test]
fn poll_oneoff_waits_for_a_relative_clock_on_the_virtual_clock() {
    let (v, _) = probe();
    assert_eq!(v[POLL_ERRNO], 0);
    assert_eq!(v[POLL_NEVENTS], 1);
    assert_eq!(v[POLL_USERDATA], 0xABCD);
    assert_eq!(v[POLL_EVENT_ERROR], 0);
    assert_eq!(v[POLL_EVENT_TYPE], 0, "eventtype clock");
    assert!(v[POLL_ADVANCE] >= 1_000_000, "the clock advanced {} ns for a 1 ms timeout", v[POLL_ADVANCE]);
}

#[test]
fn stdin_is_at_end_of_file_and_stdio_cannot_seek() {
    let (v, _) = probe();
    assert_eq!([v[STDIN_ERRNO], v[STDIN_READ]], [0, 0]);
    assert_eq!(v[SEEK_ERRNO], ESPIPE);
}

#[test]
fn captured_output_is_bounded_and_the_rest_counted() {
    // flood writes 1000 bytes to stdout and 30 to stderr per intent.
    let policy = Policy { max_output_bytes: 256, ..Policy::default() };
    let mut sandbox = sandbox(&fixture("flood"), policy);
    for _ in 0..2 {
        let report = sandbox.execute("flood", &json!({}));
        assert_eq!(completed_output(&report), 1);
        assert_eq!(report.stdout, vec![b'A'; 256]);
        assert_eq!(report.stderr, vec![b'E'; 30]);
        assert_eq!(report.output_dropped, 1000 - 256, "counted per intent");
    }
    // With no room at all nothing is kept, and what was dropped is still counted and handed
    // over: the sandbox asks a capture for its output when it holds dropped bytes only.
    let mut silent =
        contour_conformance::sandbox(&fixture("flood"), Policy { max_output_bytes: 0, ..Policy::default() });
    for _ in 0..2 {
        let report = silent.execute("flood", &json!({}));
        assert!(report.stdout.is_empty() && report.stderr.is_empty());
        assert_eq!(report.output_dropped, 1030, "counted per intent");
    }
    // Under the default bound (64 KiB) nothing is dropped.
    let report = contour_conformance::sandbox(&fixture("flood"), Policy::default()).execute("flood", &json!({}));
    assert_eq!(report.stdout.len(), 1000);
    assert_eq!(report.output_dropped, 0);
}

fn command(name: &str) -> Plugin {
    Plugin::load_as(&fixture(name), Policy::default(), Profile::Command).expect("loads as a command")
}

fn run(plugin: &Plugin, args: &[&str], environ: &[&str]) -> CommandExit {
    let wasi = WasiConfig {
        args: args.iter().map(|s| (*s).to_string()).collect(),
        environ: environ.iter().map(|s| (*s).to_string()).collect(),
        ..WasiConfig::plugin()
    };
    run_command(plugin, Box::new(VirtualEnvironment::new(0)), wasi).exit
}

#[test]
fn a_command_that_returns_exits_zero() {
    assert_eq!(run(&command("command_return"), &[], &[]), CommandExit::Exited(0));
}

#[test]
fn a_command_exits_with_its_proc_exit_code() {
    assert_eq!(run(&command("command_exit"), &[], &[]), CommandExit::Exited(42));
}

#[test]
fn a_command_sees_exactly_the_args_and_environ_it_was_given() {
    let plugin = command("command_args");
    // envc * 1000000 + argc * 1000 + argv bytes (NUL-terminated).
    assert_eq!(run(&plugin, &[], &[]), CommandExit::Exited(0));
    assert_eq!(run(&plugin, &["tool.wasm"], &[]), CommandExit::Exited(1_010));
    assert_eq!(run(&plugin, &["tool.wasm", "-v"], &["A=1"]), CommandExit::Exited(1_002_013));
}

#[test]
fn a_command_needs_start() {
    let failure = Plugin::load_as(&fixture("echo"), Policy::default(), Profile::Command).err().expect("refused");
    assert_eq!(failure.reason.as_str(), "abi_mismatch");
    assert!(failure.detail.contains("missing export `_start`"), "{}", failure.detail);
}

#[test]
fn a_command_that_loops_runs_out_of_fuel() {
    let wasm = contour_conformance::wat(r#"(module (func (export "_start") (loop $l (br $l))))"#);
    let policy = Policy { fuel_per_intent: 1_000_000, ..Policy::default() };
    let plugin = Plugin::load_as(&wasm, policy, Profile::Command).expect("loads");
    match run(&plugin, &[], &[]) {
        CommandExit::Failed(failure) => assert_eq!(failure.reason.as_str(), "fuel_exhausted"),
        other => panic!("expected fuel_exhausted, got {other:?}"),
    }
}
