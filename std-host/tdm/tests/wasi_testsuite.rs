//! The official WASI Preview1 test suite (WebAssembly/wasi-testsuite, prebuilt: rust, c and
//! assemblyscript programs with JSON specs) run through the built `tdm exec`, each program on a
//! fresh copy of its fixture folder with the args, env and preopens its spec gives.
//!
//! Programs that only read must pass (exit code and stdout as the spec says). Programs that
//! write under the preopen (listed in `WRITERS`, with the guest's own report of the refusal)
//! must be refused cleanly under `--dir`: a non-zero exit the guest chose (its own exit or
//! abort, not a tdm limit, usage error or panic, not a signal), the WASI error visible in what
//! the guest printed, and the fixture folder byte-for-byte unchanged. Run again with their
//! folders preopened `--dir-rw`, the writers must pass, but for those `STILL_REFUSED_RW` lists
//! (they make links or set times, which no preopen allows), which must still be refused
//! cleanly. docs/wasi.md lists the judgement behind each program and the ones that are
//! debatable.
//!
//! Where the suite is: `$WASI_TESTSUITE`, else `../shared/wasi-testsuite` beside the repo. An
//! absent suite FAILS this test with instructions (CI must never pass without running it);
//! `WASI_TESTSUITE=skip` skips it on a machine that has no copy, saying so on stderr.

#[path = "support/tree.rs"]
mod tree;

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SUITES: [&str; 3] = ["assemblyscript", "c", "rust"];

/// The programs that write under their preopen, each with what the guest prints when the
/// sandbox refuses the write (EPERM: Rust's `Errno { code: 63 ... }`; C's failed assertion on
/// the descriptor `open` did not give).
const WRITERS: &[(&str, &str)] = &[
    ("c/pwrite-with-access", "Assertion failed: fd > 0"),
    ("c/pwrite-with-append", "Assertion failed: fd != -1"),
    ("rust/dangling_fd", RUST_EPERM),
    ("rust/directory_seek", RUST_EPERM),
    ("rust/fd_advise", RUST_EPERM),
    ("rust/fd_fdstat_set_rights", RUST_EPERM),
    ("rust/fd_filestat_set", RUST_EPERM),
    ("rust/fd_flags_set", RUST_EPERM),
    ("rust/fd_readdir", RUST_EPERM),
    ("rust/file_allocate", RUST_EPERM),
    ("rust/file_pread_pwrite", RUST_EPERM),
    ("rust/file_seek_tell", RUST_EPERM),
    ("rust/file_truncation", RUST_EPERM),
    ("rust/file_unbuffered_write", RUST_EPERM),
    ("rust/fstflags_validate", RUST_EPERM),
    ("rust/interesting_paths", RUST_EPERM),
    ("rust/isatty", RUST_EPERM),
    ("rust/nofollow_errors", RUST_EPERM),
    ("rust/overwrite_preopen", RUST_EPERM),
    ("rust/path_exists", RUST_EPERM),
    ("rust/path_filestat", RUST_EPERM),
    ("rust/path_link", RUST_EPERM),
    ("rust/path_open_create_existing", RUST_EPERM),
    ("rust/path_open_dirfd_not_dir", RUST_EPERM),
    ("rust/path_open_missing", RUST_EPERM),
    ("rust/path_open_read_write", RUST_EPERM),
    ("rust/path_rename", RUST_EPERM),
    ("rust/path_rename_dir_trailing_slashes", RUST_EPERM),
    ("rust/path_symlink_trailing_slashes", RUST_EPERM),
    ("rust/readlink", RUST_EPERM),
    ("rust/remove_directory_trailing_slashes", RUST_EPERM),
    ("rust/remove_nonempty_directory", RUST_EPERM),
    ("rust/renumber", RUST_EPERM),
    ("rust/stdio", RUST_EPERM),
    ("rust/symlink_create", RUST_EPERM),
    ("rust/symlink_filestat", RUST_EPERM),
    ("rust/symlink_loop", RUST_EPERM),
    ("rust/truncation_rights", RUST_EPERM),
    ("rust/unlink_file_trailing_slashes", RUST_EPERM),
];

/// The writers that still fail with their folders preopened writable, and why: no preopen
/// lets a command make a symlink or hard link (one could point anywhere on the host) or set
/// file times.
const STILL_REFUSED_RW: &[(&str, &str)] = &[
    ("rust/fd_filestat_set", "sets a file's times"),
    ("rust/fstflags_validate", "sets a file's times"),
    ("rust/nofollow_errors", "makes a symlink"),
    ("rust/path_exists", "makes a symlink"),
    ("rust/path_filestat", "sets a file's times"),
    ("rust/path_link", "makes a hard link"),
    ("rust/path_symlink_trailing_slashes", "makes a symlink"),
    ("rust/readlink", "makes a symlink"),
    ("rust/symlink_create", "makes a symlink"),
    ("rust/symlink_filestat", "makes a symlink"),
];

/// How a Rust test program reports an `EPERM` it did not expect.
const RUST_EPERM: &str = r#"Errno { code: 63, name: "PERM""#;

/// tdm's own exit codes, which a refusal must not be: usage or I/O error, a Rust panic of
/// tdm itself, rejected at load, a limit hit.
const TDM_CODES: [i32; 4] = [2, 101, 125, 127];

/// Where the suite is, or why this run has none.
fn suite_root() -> Option<PathBuf> {
    let configured = std::env::var_os("WASI_TESTSUITE");
    if configured.as_deref() == Some("skip".as_ref()) {
        let _ = writeln!(std::io::stderr(), "wasi-testsuite: SKIPPED (WASI_TESTSUITE=skip)");
        return None;
    }
    let root = configured
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/wasi-testsuite"), PathBuf::from);
    assert!(
        SUITES.iter().any(|suite| suite_dir(&root, suite).is_dir()),
        "the WASI test suite is not at {}: set WASI_TESTSUITE to a folder holding its prebuilt \
         programs (rust/, c/, assemblyscript/; or a clone of WebAssembly/wasi-testsuite's branch \
         prod/testsuite-base), or WASI_TESTSUITE=skip to skip it (see docs/wasi.md)",
        root.display()
    );
    Some(root)
}

/// A suite's folder: `<root>/<suite>` (the shared copy) or, in a clone of the upstream branch,
/// `<root>/tests/<suite>/testsuite/wasm32-wasip1`.
fn suite_dir(root: &Path, suite: &str) -> PathBuf {
    let flat = root.join(suite);
    if flat.is_dir() {
        flat
    } else {
        root.join("tests").join(suite).join("testsuite/wasm32-wasip1")
    }
}

/// One program's spec (`<name>.json`; absent: exit 0, nothing else).
#[derive(Debug, Default)]
struct Spec {
    args: Vec<String>,
    env: Vec<(String, String)>,
    dirs: Vec<String>,
    root: Option<String>,
    exit_code: i32,
    stdout: Option<String>,
}

fn read_spec(path: &Path) -> Spec {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Spec::default();
    };
    let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let object = value.as_object().unwrap_or_else(|| panic!("{}: not an object", path.display()));
    for key in object.keys() {
        let known = ["args", "env", "dirs", "root", "exit_code", "stdout"];
        assert!(known.contains(&key.as_str()), "{}: key `{key}` is not understood by this runner", path.display());
    }
    let strings = |key: &str| -> Vec<String> {
        value[key].as_array().map_or_else(Vec::new, |a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
    };
    Spec {
        args: strings("args"),
        env: value["env"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect())
            .unwrap_or_default(),
        dirs: strings("dirs"),
        root: value["root"].as_str().map(str::to_string),
        exit_code: value["exit_code"].as_i64().map_or(0, |c| i32::try_from(c).unwrap()),
        stdout: value["stdout"].as_str().map(str::to_string),
    }
}

/// Copies a fixture folder, writable (so only the sandbox stands between a guest and a write).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

/// Runs one program through `tdm exec` as its spec says, on fresh copies of its folders
/// preopened with `flag` (`--dir` or `--dir-rw`). Returns the output and the folders whose
/// copy changed.
fn run(suite: &Path, name: &str, spec: &Spec, flag: &str) -> (Output, Vec<String>) {
    let scratch = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec!["exec".into()];
    for (key, value) in &spec.env {
        args.extend(["--env".into(), format!("{key}={value}")]);
    }
    let mut copies = Vec::new();
    let preopens = spec.dirs.iter().map(|d| (d, d.clone())).chain(spec.root.iter().map(|d| (d, "/".to_string())));
    for (dir, guest) in preopens {
        let copy = scratch.path().join(dir);
        copy_tree(&suite.join(dir), &copy);
        args.extend([flag.into(), format!("{}::{guest}", copy.display())]);
        copies.push((suite.join(dir), copy));
    }
    // tdm's flags first; everything after the module is the module's.
    args.push(suite.join(format!("{name}.wasm")).display().to_string());
    args.extend(spec.args.iter().cloned());
    let output = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(&args)
        .env("TDM_WORKSPACE", scratch.path().join("workspace"))
        .stdin(Stdio::null())
        .output()
        .expect("tdm runs");
    let changed = copies
        .iter()
        .filter(|(original, copy)| tree::snapshot(original) != tree::snapshot(copy))
        .map(|(original, _)| original.display().to_string())
        .collect();
    (output, changed)
}

/// Why a program did not do what it must, if it did not.
fn judge(output: &Output, changed: &[String], spec: &Spec, writer: Option<&str>) -> Option<String> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let Some(code) = output.status.code() else {
        return Some(format!("ended by a signal ({:?})", output.status));
    };
    if !changed.is_empty() {
        return Some(format!("changed its fixture {changed:?}"));
    }
    match writer {
        None if code != spec.exit_code => Some(format!("exit code {code}, expected {}", spec.exit_code)),
        None => spec
            .stdout
            .as_ref()
            .filter(|want| **want != stdout)
            .map(|want| format!("stdout {stdout:?}, expected {want:?}")),
        Some(_) if code == 0 || TDM_CODES.contains(&code) => Some(format!("not refused cleanly: exit code {code}")),
        Some(marker) if !stderr.contains(marker) => Some(format!("no WASI error `{marker}` in what the guest printed")),
        Some(_) => None,
    }
    .map(|why| format!("{why}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"))
}

#[test]
fn every_program_of_the_wasi_testsuite_passes_or_is_refused_cleanly() {
    let Some(root) = suite_root() else {
        return;
    };
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    let mut writers_seen = Vec::new();
    for suite_name in SUITES {
        let suite = suite_dir(&root, suite_name);
        let mut names: Vec<String> = std::fs::read_dir(&suite)
            .unwrap_or_else(|e| panic!("{}: {e}", suite.display()))
            .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".wasm").map(str::to_string))
            .collect();
        names.sort();
        let (mut passed, mut refused) = (0, 0);
        for name in &names {
            let id = format!("{suite_name}/{name}");
            let writer = WRITERS.iter().find(|(w, _)| *w == id).map(|(_, marker)| *marker);
            if writer.is_some() {
                writers_seen.push(id.clone());
            }
            let spec = read_spec(&suite.join(format!("{name}.json")));
            let (output, changed) = run(&suite, name, &spec, "--dir");
            match judge(&output, &changed, &spec, writer) {
                Some(why) => failures.push(format!("{id}: {why}")),
                None if writer.is_some() => refused += 1,
                None => passed += 1,
            }
        }
        summary.push(format!(
            "wasi-testsuite {suite_name}: {passed} passed, {refused} refused cleanly, {} failed, of {}",
            names.len() - passed - refused,
            names.len()
        ));
    }
    // Written to the stderr handle, not through `eprintln!`, so it shows without --nocapture.
    let _ = writeln!(std::io::stderr(), "{}", summary.join("\n"));
    let missing: Vec<&str> = WRITERS.iter().map(|(w, _)| *w).filter(|w| !writers_seen.iter().any(|s| s == w)).collect();
    assert!(missing.is_empty(), "programs listed in WRITERS are not in the suite: {missing:?}");
    assert!(failures.is_empty(), "{} program(s) failed:\n\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn the_writers_pass_with_their_folders_writable_but_for_links_and_times() {
    let Some(root) = suite_root() else {
        return;
    };
    let mut failures = Vec::new();
    for (id, _) in WRITERS {
        let (suite_name, name) = id.split_once('/').unwrap();
        let suite = suite_dir(&root, suite_name);
        let spec = read_spec(&suite.join(format!("{name}.json")));
        let (output, _) = run(&suite, name, &spec, "--dir-rw");
        let why = match STILL_REFUSED_RW.iter().find(|(refused, _)| refused == id) {
            // It wrote what it could before the refusal: only how it ended is judged.
            Some((_, what)) => match output.status.code() {
                Some(code) if code != 0 && !TDM_CODES.contains(&code) => None,
                code => Some(format!("{what}, yet not refused cleanly: exit code {code:?}")),
            },
            None => judge(&output, &[], &spec, None),
        };
        if let Some(why) = why {
            let stderr = String::from_utf8_lossy(&output.stderr);
            failures.push(format!("{id} with --dir-rw: {why}\n--- stderr\n{stderr}"));
        }
    }
    let passed = WRITERS.len() - STILL_REFUSED_RW.len() - failures.len();
    let _ = writeln!(
        std::io::stderr(),
        "wasi-testsuite writers with --dir-rw: {passed} passed, {} refused (links, times), of {}",
        STILL_REFUSED_RW.len(),
        WRITERS.len()
    );
    assert!(failures.is_empty(), "{} writer(s) failed:\n\n{}", failures.len(), failures.join("\n\n"));
}
