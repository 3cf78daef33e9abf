//! `tdm exec --dir-rw`, through the built binary: a command edits a writable preopen and the
//! host sees exactly those edits; the same command under `--dir` gets an errno for each and the
//! folder stays byte for byte; an attacker cannot write outside a writable preopen (`..`, an
//! absolute path, planted symlinks, renames across its edge); a write loop ends at its fuel
//! having written no more than its fuel paid for, and a write past the end pays for its gap; `--stats` lists each preopen `ro` or `rw`;
//! the subcommands that run plugins refuse the flag and name `tdm exec`.

#[path = "support/tree.rs"]
mod tree;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tree::{file, snapshot};

/// The bulk-memory rate: bytes one unit of fuel pays for (core's `meter::BYTES_PER_FUEL`).
const BYTES_PER_FUEL: u64 = 64;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/exec").join(name).display().to_string()
}

/// Runs `tdm ARGS` with a workspace of its own below `scratch`.
fn tdm(scratch: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .env("TDM_WORKSPACE", scratch.join("workspace"))
        .output()
        .expect("tdm runs")
}

/// The `NAME NN` lines a fixture prints: each step with its errno.
fn steps(out: &Output) -> Vec<(String, u32)> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let (name, errno) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not a step: {line:?}"));
            (name.to_string(), errno.parse().unwrap())
        })
        .collect()
}

/// The folder `edit_files.wat` edits.
fn editable(dir: &Path) {
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    std::fs::write(dir.join("old.txt"), "old").unwrap();
    std::fs::write(dir.join("gone.txt"), "gone").unwrap();
    std::fs::write(dir.join("trunc.txt"), "0123456789").unwrap();
    std::fs::write(dir.join("size.txt"), "0123456789").unwrap();
}

#[test]
fn a_command_edits_a_writable_preopen_and_the_host_sees_exactly_that() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("rw");
    editable(&dir);
    let out = tdm(scratch.path(), &["exec", "--dir-rw", &dir.display().to_string(), &fixture("edit_files.wat")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let failed: Vec<_> = steps(&out).into_iter().filter(|(_, errno)| *errno != 0).collect();
    assert!(failed.is_empty(), "every edit succeeds: {failed:?}");
    let want: BTreeMap<PathBuf, String> = [
        ("made", "dir".to_string()),
        ("made/moved.txt", file(b"old")),
        ("new.txt", file(b"Jello-more")),
        ("size.txt", file(b"012")),
        ("trunc.txt", file(b"")),
    ]
    .into_iter()
    .map(|(path, what)| (PathBuf::from(path), what))
    .collect();
    assert_eq!(snapshot(&dir), want, "created, appended, overwritten, cut, made, moved, unlinked, removed");
}

#[test]
fn the_same_command_under_a_read_only_preopen_gets_errnos_and_changes_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("ro");
    editable(&dir);
    let before = snapshot(&dir);
    let out = tdm(scratch.path(), &["exec", "--dir", &dir.display().to_string(), &fixture("edit_files.wat")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let steps = steps(&out);
    assert_eq!(steps.len(), 9, "each open and each path call answered, nothing written: {steps:?}");
    for (name, errno) in &steps {
        assert_ne!(*errno, 0, "{name} must be refused under --dir");
    }
    // The edits of existing things are EPERM, as wasmtime answers without mutate permission.
    let perm: Vec<&str> = steps.iter().filter(|(_, e)| *e == 63).map(|(n, _)| n.as_str()).collect();
    assert_eq!(perm, ["create", "truncate", "setsize", "mkdir", "rename", "unlink", "rmdir"]);
    assert_eq!(snapshot(&dir), before, "byte for byte unchanged");
}

#[cfg(unix)]
#[test]
fn a_command_cannot_write_outside_a_writable_preopen() {
    use std::os::unix::fs::symlink;
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("tree");
    let (inside, outside) = (root.join("rw"), root.join("outside"));
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::write(outside.join("victim.txt"), "secret").unwrap();
    std::fs::write(inside.join("a.txt"), "a").unwrap();
    // Planted by someone with access to the folder: a link to a folder outside, a dangling link
    // to a file that does not exist yet outside, a link to a file outside.
    symlink("../outside", inside.join("link")).unwrap();
    symlink("../outside/new.txt", inside.join("dangling")).unwrap();
    symlink("../outside/victim.txt", inside.join("victimlink")).unwrap();
    let before = snapshot(&root);
    let out =
        tdm(scratch.path(), &["exec", "--dir-rw", &inside.display().to_string(), &fixture("escape_attempts.wat")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let steps = steps(&out);
    assert_eq!(steps.len(), 14, "every attempt answered, nothing written: {steps:?}");
    for (name, errno) in &steps {
        assert_ne!(*errno, 0, "{name} must be refused");
    }
    assert_eq!(snapshot(&root), before, "nothing inside or outside changed");
}

#[test]
fn a_write_loop_ends_at_its_fuel_having_written_what_its_fuel_paid_for() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("rw");
    std::fs::create_dir_all(&dir).unwrap();
    let fuel: u64 = 100_000;
    let out = tdm(
        scratch.path(),
        &["exec", "--fuel", &fuel.to_string(), "--dir-rw", &dir.display().to_string(), &fixture("write_loop.wat")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(127), "{stderr}");
    assert!(stderr.contains("fuel_exhausted"), "{stderr}");
    let written = std::fs::metadata(dir.join("out.bin")).unwrap().len();
    assert!(written > 0, "it wrote before its fuel ran out");
    // Every byte is charged at the bulk-memory rate before it is written: the whole budget pays
    // for at most `fuel * BYTES_PER_FUEL` bytes (the loop's own instructions cost fuel too).
    assert!(written <= fuel * BYTES_PER_FUEL, "{written} bytes written on {fuel} fuel");
}

#[test]
fn a_write_past_the_end_pays_for_the_gap_it_would_leave() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("rw");
    std::fs::create_dir_all(&dir).unwrap();
    // One byte at 1 TiB: the gap costs 2^40 / 64 fuel, far past a budget of a million.
    let out = tdm(
        scratch.path(),
        &["exec", "--fuel", "1_000_000", "--dir-rw", &dir.display().to_string(), &fixture("write_far.wat")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(127), "{stderr}");
    assert!(stderr.contains("fuel_exhausted"), "{stderr}");
    assert_eq!(std::fs::metadata(dir.join("far.bin")).unwrap().len(), 0, "nothing was written");
}

#[test]
fn stats_list_each_preopen_read_only_or_writable() {
    let scratch = tempfile::tempdir().unwrap();
    let (ro, rw) = (scratch.path().join("ro"), scratch.path().join("rw"));
    std::fs::create_dir_all(&ro).unwrap();
    std::fs::create_dir_all(&rw).unwrap();
    let (ro_spec, rw_spec) = (format!("{}::/in", ro.display()), format!("{}::/out", rw.display()));
    let module = fixture("argv_env.wat");
    let text = tdm(scratch.path(), &["exec", "--stats", "--dir", &ro_spec, "--dir-rw", &rw_spec, &module]);
    let stderr = String::from_utf8_lossy(&text.stderr);
    assert_eq!(text.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(&format!("tdm: preopen /in ro <- {}\n", ro.display())), "{stderr}");
    assert!(stderr.contains(&format!("tdm: preopen /out rw <- {}\n", rw.display())), "{stderr}");
    let json = tdm(scratch.path(), &["exec", "--stats", "--json", "--dir", &ro_spec, "--dir-rw", &rw_spec, &module]);
    let line = String::from_utf8_lossy(&json.stderr).lines().find(|l| l.contains("\"stats\"")).unwrap().to_string();
    let stats: serde_json::Value = serde_json::from_str(&line).unwrap();
    let access: Vec<(&str, &str)> = stats["stats"]["preopens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["guest"].as_str().unwrap(), p["access"].as_str().unwrap()))
        .collect();
    assert_eq!(access, [("/in", "ro"), ("/out", "rw")]);
}

#[test]
fn the_subcommands_that_run_plugins_refuse_a_writable_preopen() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().display().to_string();
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/echo/echo.wat").display().to_string();
    for args in [
        vec!["run", "--dir-rw", &dir, &echo, "echo"],
        vec!["call", "--dir-rw", &dir, "some.plugin", "echo"],
        vec!["repl", "--dir-rw", &dir, &echo],
    ] {
        let out = tdm(scratch.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("--dir-rw") && stderr.contains("tdm exec"), "{args:?}: {stderr}");
    }
}
