//! Promise 8 through the `tdm` binary with the real clock: every path guest code or host work
//! takes ends at the deadline (`--timeout 0.3`) however large the fuel budget, and what a
//! module's contents can make tdm print or hold stays bounded.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Far more fuel than any run here can burn before its deadline (near u64::MAX: host work is
/// priced per byte, and a fast machine spent 10^12 in 3 s of zero-length reads): only the
/// deadline can end these runs.
const HUGE_FUEL: &str = "18000000000000000000";
/// How long a run cut at a 0.3 s deadline may take, start-up of a debug build included. The
/// point is that it stops (without the deadline checks these run for minutes), not its speed.
const STOPS_WITHIN: Duration = Duration::from_millis(2_500);

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/limits").join(name).display().to_string()
}

fn tdm(args: &[&str]) -> (Output, Duration) {
    let workspace = std::env::temp_dir().join(format!("tdm-limits-tests-{}", std::process::id()));
    let started = Instant::now();
    let output =
        Command::new(env!("CARGO_BIN_EXE_tdm")).args(args).env("TDM_WORKSPACE", workspace).output().expect("tdm runs");
    (output, started.elapsed())
}

fn outcome(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("stdout is not one outcome ({e}): {stdout}"))
}

fn run_cut_at_deadline(plugin: &str) -> (Value, Duration) {
    let (output, took) = tdm(&["run", &fixture(plugin), "x", "--timeout", "0.3", "--fuel", HUGE_FUEL]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    (outcome(&output), took)
}

#[test]
fn a_looping_initialize_ends_at_the_deadline() {
    let (value, took) = run_cut_at_deadline("initialize_loop.wat");
    assert_eq!(value["blockedReason"], "deadline_exceeded", "{value}");
    assert!(took < STOPS_WITHIN, "took {took:?}");
}

#[test]
fn a_looping_start_function_ends_at_its_fixed_slice() {
    let (value, took) = run_cut_at_deadline("start_loop.wat");
    assert_eq!(value["blockedReason"], "fuel_exhausted", "{value}");
    assert!(value["message"].as_str().is_some_and(|m| m.contains("start function")), "{value}");
    assert!(took < STOPS_WITHIN, "took {took:?}");
}

#[test]
fn a_start_function_sleeping_past_the_deadline_is_cut() {
    let (value, took) = run_cut_at_deadline("start_sleep.wat");
    assert_eq!(value["blockedReason"], "deadline_exceeded", "{value}");
    assert!(took < STOPS_WITHIN, "a 10 s sleep must not be slept: took {took:?}");
}

#[test]
fn a_sleep_loop_ends_at_the_deadline() {
    let (value, took) = run_cut_at_deadline("sleep_loop.wat");
    assert_eq!(value["blockedReason"], "deadline_exceeded", "{value}");
    assert!(took < STOPS_WITHIN, "took {took:?}");
}

fn exec_cut_at_deadline(args: &[&str]) -> (String, Duration) {
    let mut all = vec!["exec", "--timeout", "0.3", "--fuel", HUGE_FUEL];
    all.extend_from_slice(args);
    let (output, took) = tdm(&all);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(127), "{stderr}");
    assert!(output.stdout.is_empty(), "the floods write nothing: {}", String::from_utf8_lossy(&output.stdout));
    (stderr, took)
}

#[test]
fn a_looping_command_ends_at_the_deadline() {
    let (stderr, took) = exec_cut_at_deadline(&[&fixture("command_loop.wat")]);
    assert!(stderr.contains("deadline_exceeded"), "{stderr}");
    assert!(took < STOPS_WITHIN, "took {took:?}");
}

#[test]
fn host_work_floods_end_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..200 {
        std::fs::write(dir.path().join(format!("file-{i:04}.txt")), b"x").unwrap();
    }
    let listed = dir.path().display().to_string();
    let module = fixture("command_flood.wat");
    for (mode, extra) in [("r", None), ("w", None), ("p", None), ("d", Some(listed.as_str()))] {
        let mut args: Vec<&str> = Vec::new();
        if let Some(dir) = extra {
            args.extend(["--dir", dir]);
        }
        args.extend([module.as_str(), "--", mode]);
        let (stderr, took) = exec_cut_at_deadline(&args);
        assert!(stderr.contains("deadline_exceeded"), "{mode}: {stderr}");
        assert!(took < STOPS_WITHIN, "{mode}: took {took:?}");
    }
    // One fd_read of 32 million buffers (one call took 9 s): the deadline is looked at between
    // them. The deadline is 3 s here because a debug build takes about 2 s to launch a 256 MiB
    // instance, and the launch counts against it.
    let reader = fixture("command_read_flood.wat");
    let args = ["exec", "--timeout", "3", "--fuel", HUGE_FUEL, "--max-memory", "256MiB", "--dir", &listed, &reader];
    let (output, took) = tdm(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(127), "{stderr}");
    assert!(stderr.contains("deadline_exceeded"), "fd_read: {stderr}");
    assert!(took < Duration::from_secs(3) + STOPS_WITHIN, "fd_read: took {took:?}");
}

/// A module of `count` passive element segments of 100,000 function references each.
fn element_heavy(count: u32) -> Vec<u8> {
    fn uleb(mut n: u32, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    fn section(id: u8, payload: &[u8], out: &mut Vec<u8>) {
        out.push(id);
        uleb(payload.len() as u32, out);
        out.extend_from_slice(payload);
    }
    let mut module = b"\0asm\x01\0\0\0".to_vec();
    section(1, &[1, 0x60, 0, 0], &mut module);
    section(3, &[1, 0], &mut module);
    let mut elements = Vec::new();
    uleb(count, &mut elements);
    for _ in 0..count {
        elements.extend_from_slice(&[1, 0]);
        uleb(100_000, &mut elements);
        elements.extend(std::iter::repeat_n(0u8, 100_000));
    }
    section(9, &elements, &mut module);
    section(10, &[1, 2, 0, 0x0b], &mut module);
    module
}

#[test]
fn loading_a_module_with_millions_of_element_items_is_refused_before_it_is_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("elements.wasm");
    std::fs::write(&path, element_heavy(30)).unwrap();
    let (output, _) = tdm(&["run", &path.display().to_string(), "x"]);
    let value = outcome(&output);
    assert_eq!(value["blockedReason"], "module_too_large", "{value}");
    assert!(value["message"].as_str().is_some_and(|m| m.contains("element items")), "{value}");
}

#[test]
fn text_over_the_wat_bound_is_refused_before_it_is_parsed() {
    // 2.1 MB of `(block)`s with an error at the end: the parser would hold ~100 MB of it.
    let dir = tempfile::tempdir().unwrap();
    let text = format!("(module (func {} (oops)))", "(block)".repeat(300_000));
    for name in ["blocks.wat", "blocks.wasm"] {
        let path = dir.path().join(name);
        std::fs::write(&path, &text).unwrap();
        let (output, _) = tdm(&["inspect", &path.display().to_string()]);
        let said = String::from_utf8_lossy(&output.stderr);
        // A `.wat` is refused as a file over its bound (exit 2), text in a `.wasm` as a module
        // that does not compile (exit 1, as any `.wat` error).
        let (code, expected) = if name.ends_with(".wat") {
            (2, "the limit is 2097152 bytes; it was not read")
        } else {
            (1, "at most 2097152 bytes")
        };
        assert_eq!(output.status.code(), Some(code), "{name}: {said}");
        assert!(said.contains(expected), "{name}: {said}");
    }
}

#[test]
fn import_names_cannot_make_the_outcome_unbounded() {
    // 300 imports whose names are 3,000 control characters each: the outcome names the
    // offenders, cut, in a bounded message.
    let name = "\\1b".repeat(3_000);
    let imports: String =
        (0..300).map(|i| format!(r#"(import "{name}{i}" "{name}" (func))"#)).collect::<Vec<_>>().join("\n");
    let dir = tempfile::tempdir().unwrap();
    // Binary: the text (5.4 MB) is over the `.wat` bound.
    let path = dir.path().join("names.wasm");
    std::fs::write(&path, wat::parse_str(format!("(module {imports} (memory (export \"memory\") 1))")).unwrap())
        .unwrap();
    let (output, _) = tdm(&["run", &path.display().to_string(), "x"]);
    assert!(output.stdout.len() < 8 * 1024, "the outcome has {} bytes", output.stdout.len());
    let value = outcome(&output);
    assert_eq!(value["blockedReason"], "import_not_allowed", "{value}");
    let message = value["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("The module imports host functions that are not allowed. 300 rejected"), "{message}");
    assert!(message.contains("more bytes)"), "each name is cut: {message}");
}

/// A command that opens `a.txt` in its preopen until `path_open` fails, never closing: it exits
/// 0 when the failure is `EMFILE` after exactly as many opens as the fd limit leaves (the limit
/// less stdio and the preopen), else 100 + the errno.
const OPEN_FOREVER: &str = r#"(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "a.txt")
  (func (export "_start") (local $opened i32) (local $errno i32)
    (loop $again
      (local.set $errno (call $open (i32.const 3) (i32.const 1) (i32.const 1024) (i32.const 5)
        (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 16)))
      (if (i32.eqz (local.get $errno))
        (then (local.set $opened (i32.add (local.get $opened) (i32.const 1))) (br $again))))
    (if (i32.and (i32.eq (local.get $errno) (i32.const 33)) (i32.eq (local.get $opened) (i32.const 1020)))
      (then (call $exit (i32.const 0))))
    (call $exit (i32.add (i32.const 100) (local.get $errno)))))"#;

#[test]
fn a_command_that_opens_without_closing_gets_emfile_at_the_fd_limit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), b"hi").unwrap();
    let module = dir.path().join("open-forever.wat");
    std::fs::write(&module, OPEN_FOREVER).unwrap();
    let (output, _) = tdm(&["exec", "--dir", &root.display().to_string(), &module.display().to_string()]);
    // Without the limit every open holds a host file handle until the process runs out (the
    // guest then sees another errno, after as many opens as the host's own limit allows).
    assert_eq!(
        output.status.code(),
        Some(0),
        "exit 100 + errno otherwise: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_tool_gets_no_more_memory_than_its_caller() {
    // The tool grows its memory to 64 MiB (the default limit) and answers the pages it has.
    let hog = r#"(module
      (memory (export "memory") 1)
      (data (i32.const 0) "\21\00\00\00{\"status\":\"completed\",\"output\":1}")
      (func (export "tdm_alloc") (param i32) (result i32) (i32.const 1024))
      (func (export "tdm_free") (param i32 i32))
      (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
        (drop (memory.grow (i32.const 1023)))
        (if (i32.lt_u (memory.size) (i32.const 1024)) (then unreachable))
        (i32.const 0)))"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hog.wat");
    std::fs::write(&path, hog).unwrap();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tool.invoke","params":{"tool":"hog","intent":"x","params":{}}}"#;
    let tool = format!("hog={}", path.display());
    let forward = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/forward.wat").display().to_string();
    let run = |memory: &str| {
        let (output, _) = tdm(&[
            "run",
            &forward,
            "forward",
            "--params",
            call,
            "--tool",
            &tool,
            "--grant",
            "tool:hog",
            "--max-memory",
            memory,
        ]);
        outcome(&output)
    };
    assert_eq!(run("64MiB")["output"]["output"], serde_json::json!(1), "the tool runs at the default limit");
    let nested = run("1MiB");
    assert_eq!(nested["output"]["blockedReason"], "host_intent_failed", "{nested}");
    let message = nested["output"]["message"].as_str().unwrap();
    assert!(message.contains("`memory_limit_exceeded`") && message.contains("the limit is 1048576 bytes"), "{nested}");
}

#[test]
fn a_seek_past_what_a_signed_offset_holds_is_eoverflow() {
    // Seeks to i64::MAX (fine), then as far again: exits with the errno of the second seek.
    let seeker = r#"(module
      (import "wasi_snapshot_preview1" "path_open"
        (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_seek" (func $seek (param i32 i64 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (memory (export "memory") 1)
      (data (i32.const 16) "a.txt")
      (func (export "_start") (local $fd i32)
        (drop (call $open (i32.const 3) (i32.const 1) (i32.const 16) (i32.const 5)
          (i32.const 0) (i64.const 4) (i64.const 0) (i32.const 0) (i32.const 32)))
        (local.set $fd (i32.load (i32.const 32)))
        (if (call $seek (local.get $fd) (i64.const 0x7fffffffffffffff) (i32.const 0) (i32.const 40))
          (then (call $exit (i32.const 100))))
        (call $exit (call $seek (local.get $fd) (i64.const 0x7fffffffffffffff) (i32.const 1) (i32.const 40)))))"#;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), b"hi").unwrap();
    let module = dir.path().join("seek.wat");
    std::fs::write(&module, seeker).unwrap();
    let (output, _) = tdm(&["exec", "--dir", &root.display().to_string(), &module.display().to_string()]);
    const EOVERFLOW: i32 = 61;
    assert_eq!(output.status.code(), Some(EOVERFLOW), "{}", String::from_utf8_lossy(&output.stderr));
}
