//! Real programs nobody here wrote, through the built `tdm exec`: ripgrep 15.2.0 and jaq 1.5.1
//! (`--no-default-features`) built from crates.io for wasm32-wasip1 by `make real-wasi`, which
//! runs this file (`--ignored`, with `REAL_WASI_BIN` naming the folder holding `rg.wasm` and
//! `jaq.wasm`). File search, a directory walk, stdin filters, args, env and clocks, piped output
//! (and `| head -1`), a write refused under `--dir` and done under `--dir-rw`; each compared
//! with the expected output. It also prints the fuel per second each program used, the figure
//! behind the default command budget.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn program(name: &str) -> String {
    let dir = std::env::var_os("REAL_WASI_BIN").expect("REAL_WASI_BIN names the folder `make real-wasi` built into");
    let path = PathBuf::from(dir).join(name);
    assert!(path.is_file(), "{} is missing: run `make real-wasi`", path.display());
    path.display().to_string()
}

/// A fresh fixture folder: text files, an ignored and a hidden one, JSON, and a big file.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(root.join(".hidden")).unwrap();
    std::fs::write(root.join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(root.join("sub/b.txt"), "beta two\n").unwrap();
    std::fs::write(root.join("sub/ignored.txt"), "beta ignored\n").unwrap();
    std::fs::write(root.join(".ignore"), "sub/ignored.txt\n").unwrap();
    std::fs::write(root.join(".hidden/c.txt"), "beta hidden\n").unwrap();
    std::fs::write(root.join("data.json"), r#"{"name":"contour","tags":["wasm","wasi"],"n":3}"#).unwrap();
    let big: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(root.join("big.txt"), big).unwrap();
    dir
}

/// `tdm exec PROGRAM [--dir ROOT] ARGS...` with `stdin`.
fn exec(name: &str, root: Option<&Path>, tdm_args: &[&str], args: &[&str], stdin: &[u8]) -> Output {
    let mut all = vec!["exec".to_string()];
    if let Some(root) = root {
        all.extend(["--dir".to_string(), root.display().to_string()]);
    }
    all.extend(tdm_args.iter().map(|a| a.to_string()));
    all.push(program(name));
    all.extend(args.iter().map(|a| a.to_string()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(&all)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn check(what: &str, out: &Output, code: i32, stdout: &str) {
    let (got, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(code), "{what}: exit code\n--- stdout\n{got}\n--- stderr\n{err}");
    assert_eq!(got, stdout, "{what}: stdout\n--- stderr\n{err}");
    println!("ok: {what}");
}

#[test]
#[ignore = "needs the programs `make real-wasi` builds"]
fn ripgrep_searches_walks_filters_and_stops_on_a_closed_pipe() {
    let dir = fixture();
    let root = Some(dir.path());
    check("rg file search", &exec("rg.wasm", root, &[], &["-n", "beta", "a.txt"], b""), 0, "2:beta\n");
    check(
        "rg directory walk (.ignore and hidden files skipped, piped format)",
        &exec("rg.wasm", root, &[], &["--sort", "path", "beta"], b""),
        0,
        "a.txt:beta\nsub/b.txt:beta two\n",
    );
    check(
        "rg --files",
        &exec("rg.wasm", root, &[], &["--files", "--sort", "path"], b""),
        0,
        "a.txt\nbig.txt\ndata.json\nsub/b.txt\n",
    );
    check("rg stdin filter", &exec("rg.wasm", None, &[], &["beta", "-"], b"one\nbeta 3\n"), 0, "beta 3\n");
    check("rg no match", &exec("rg.wasm", root, &[], &["nothing-here", "a.txt"], b""), 1, "");
    check("rg count over 200,000 lines", &exec("rg.wasm", root, &[], &["-c", "7$", "big.txt"], b""), 0, "20000\n");

    // `tdm exec rg ... | head -1`: rg sees EPIPE and stops quietly. Its exit code is 1: its
    // search loop breaks on a broken pipe before it records the file's match (ripgrep's own
    // behaviour, crates/core/main.rs `search`, the same natively).
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["exec", "--dir", &dir.path().display().to_string(), &program("rg.wasm"), "-n", "line", "big.txt"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(first, "1:line 0\n");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    println!("ok: rg | head -1 stopped after {:?}", started.elapsed());
}

#[test]
#[ignore = "needs the programs `make real-wasi` builds"]
fn jaq_filters_stdin_and_files_sees_env_and_clock_and_writes_only_when_writable() {
    let dir = fixture();
    let root = Some(dir.path());
    check("jaq stdin filter", &exec("jaq.wasm", None, &[], &[".b[1]"], br#"{"a":1,"b":[2,3]}"#), 0, "3\n");
    check(
        "jaq file filter",
        &exec("jaq.wasm", root, &[], &["-c", ".tags", "data.json"], b""),
        0,
        "[\"wasm\",\"wasi\"]\n",
    );
    check("jaq env", &exec("jaq.wasm", None, &["--env", "FOO=bar"], &["-n", "env.FOO"], b""), 0, "\"bar\"\n");
    check("jaq clock", &exec("jaq.wasm", None, &[], &["-n", "now > 1700000000"], b""), 0, "true\n");
    check("jaq args", &exec("jaq.wasm", None, &[], &["-n", "--arg", "x", "y", "$x"], b""), 0, "\"y\"\n");

    // `jaq -i` writes a temporary file beside the input and renames it over: refused, cleanly.
    let before = std::fs::read(dir.path().join("data.json")).unwrap();
    let names = |d: &Path| -> Vec<_> { std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect() };
    let listed = names(dir.path());
    let out = exec("jaq.wasm", root, &[], &["-i", ".n", "data.json"], b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Operation not permitted (os error 63)"), "{stderr}");
    assert_eq!(std::fs::read(dir.path().join("data.json")).unwrap(), before);
    assert_eq!(names(dir.path()), listed, "no file was left behind");
    println!("ok: jaq -i refused: {}", stderr.trim());

    // With the folder `--dir-rw`, `jaq -i` writes its temporary file, renames it over the input
    // and leaves nothing behind; it then exits 2 because Rust's std on wasm32-wasip1 cannot set
    // permissions (`set_permissions` fails inside the guest with ENOSYS, no WASI call does).
    let writable = dir.path().display().to_string();
    let out = exec("jaq.wasm", None, &["--dir-rw", &writable], &["-i", ".n", "data.json"], b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(std::fs::read_to_string(dir.path().join("data.json")).unwrap(), "3\n", "{stderr}");
    assert_eq!(names(dir.path()), listed, "the temporary file was renamed over the input");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("os error 52"), "{stderr}");
    println!("ok: jaq -i with --dir-rw rewrote data.json, then: {}", stderr.trim());

    // `tdm exec jaq ... | head -1`: jaq sees EPIPE and stops with its error.
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["exec", &program("jaq.wasm"), "-n", "range(100000000)"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(first, "0\n");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Broken pipe (os error 64)"), "{stderr}");
    println!("ok: jaq | head -1: {}", stderr.trim());
}

/// Runs a job with `--stats` and prints the fuel per second of wall time it used.
fn measure(what: &str, name: &str, root: Option<&Path>, args: &[&str]) {
    let out = exec(name, root, &["--stats", "--timeout", "60"], args, b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
    let stats = stderr.lines().find(|l| l.starts_with("tdm: fuel_used=")).unwrap();
    let field = |key: &str| -> f64 { stats.split(' ').find_map(|kv| kv.strip_prefix(key)).unwrap().parse().unwrap() };
    let seconds = Duration::from_micros(field("elapsed_us=") as u64).as_secs_f64();
    println!(
        "fuel rate: {what}: {:.2e} fuel in {seconds:.2} s = {:.2e} fuel/s",
        field("fuel_used="),
        field("fuel_used=") / seconds
    );
}

#[test]
#[ignore = "needs the programs `make real-wasi` builds"]
fn fuel_per_second_of_real_work() {
    let dir = fixture();
    let root = Some(dir.path());
    measure(
        "rg regex over 200,000 lines x5",
        "rg.wasm",
        root,
        &["-c", "-e", "[0-9]+7$", "big.txt", "big.txt", "big.txt", "big.txt", "big.txt"],
    );
    measure("rg literal over 200,000 lines", "rg.wasm", root, &["-c", "line 1999", "big.txt"]);
    measure("jaq arithmetic", "jaq.wasm", None, &["-n", "[range(200000)] | map(. % 7) | add"]);
    measure("jaq strings", "jaq.wasm", None, &["-n", "[range(200000) | tostring] | join(\",\") | length"]);
}
