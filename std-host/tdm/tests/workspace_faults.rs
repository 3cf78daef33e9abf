//! Real file-system faults under the operator commands, through the built `tdm`: a read-only
//! workspace and a full disk while `install`, `approve`, `revoke` and `uninstall` run. Each
//! must fail with a clear error and a non-zero exit (never a panic or a signal), leave the
//! state file byte for byte as it was, and leave no half-written state copy behind.
//!
//! The faults are real. A read-only workspace is `chmod 0555` when that stops this user's
//! writes; as root (which `chmod` does not stop) it is a read-only bind mount of the workspace
//! in a private mount namespace (`unshare -m`, or `unshare -r -m` as a user). A full disk is a
//! 256 KiB tmpfs in such a namespace, holding a copy of the workspace, filled with `dd` before
//! `tdm` runs. Where neither namespace can be made (a container without the capability), the
//! namespace cases are skipped with a line saying why.

#[path = "support/tdm.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{install_approved, package, tdm, text, OK};

/// A workspace with `a` installed and approved, `b` installed only; and the package folder of
/// `c`, not installed. Returns (workspace, folder of c).
fn prepared(dir: &Path) -> (PathBuf, PathBuf) {
    let ws = dir.join("ws");
    install_approved(&ws, &package(dir, "pkg-a", "a", OK, &[("x", "ok")], ""));
    let out = tdm(
        &ws,
        &["install", "--allow-unsigned", &package(dir, "pkg-b", "b", OK, &[("x", "ok")], "").display().to_string()],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    (ws, package(dir, "pkg-c", "c", OK, &[("x", "ok")], ""))
}

/// The four operator commands, each of which writes the state.
fn operations(c: &Path) -> Vec<Vec<String>> {
    let c = c.display().to_string();
    [
        vec!["install", "--allow-unsigned", c.as_str()],
        vec!["approve", "b", "--yes"],
        vec!["revoke", "a"],
        vec!["uninstall", "a"],
    ]
    .into_iter()
    .map(|args| args.into_iter().map(str::to_string).collect())
    .collect()
}

/// Checks what a command under a fault did: a clear error naming `os_error`, exit 1 or 2,
/// no panic.
fn check_refused(args: &[String], out: &Output, os_error: &str) {
    let all = text(out);
    let code = out.status.code();
    assert!(matches!(code, Some(1 | 2)), "tdm {args:?}: exit {:?} (a signal is None): {all}", out.status);
    assert!(all.contains("tdm: error:") && all.contains(os_error), "tdm {args:?}: the error says why: {all}");
    assert!(!all.contains("panicked"), "tdm {args:?} panicked: {all}");
}

/// Files in `ws` (not below) whose name starts with `state.json.` (a temporary state copy).
fn leftovers(listing: &str) -> Vec<String> {
    listing.lines().filter(|name| name.starts_with("state.json.")).map(str::to_string).collect()
}

/// `unshare` flags under which `probe` (a shell script) succeeds, or why none does.
fn namespace(probe: &str, env: &[(&str, &Path)]) -> Result<Vec<&'static str>, String> {
    let mut why = Vec::new();
    for flags in [vec!["-m"], vec!["-r", "-m"]] {
        let mut command = Command::new("unshare");
        command.args(&flags).args(["sh", "-c", probe]);
        for (key, value) in env {
            command.env(key, value);
        }
        match command.output() {
            Ok(out) if out.status.success() => return Ok(flags),
            Ok(out) => {
                why.push(format!("unshare {}: {}", flags.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
            }
            Err(e) => why.push(format!("unshare {}: {e}", flags.join(" "))),
        }
    }
    Err(why.join("; "))
}

/// Runs `tdm ARGS` in a private mount namespace (`flags`) after `setup` (a shell script that
/// sees `$WS`, `$MNT`, `$OUT`), with `TDM_WORKSPACE=$MNT`; then copies `$MNT/state.json` to
/// `$OUT/after` and lists `$MNT` into `$OUT/listing`, and exits with tdm's code.
fn in_namespace(flags: &[&str], setup: &str, paths: &[(&str, &Path)], args: &[String]) -> Output {
    let script = format!(
        "set -e\n{setup}\nset +e\nTDM_WORKSPACE=\"$MNT\" \"$TDM\" \"$@\"\ncode=$?\n\
         cp \"$MNT/state.json\" \"$OUT/after\"\nls -a \"$MNT\" > \"$OUT/listing\"\nexit $code"
    );
    let mut command = Command::new("unshare");
    command.args(flags).args(["sh", "-c", &script, "sh"]).args(args).env("TDM", env!("CARGO_BIN_EXE_tdm"));
    for (key, value) in paths {
        command.env(key, value);
    }
    command.output().expect("unshare runs")
}

#[test]
fn a_read_only_workspace_refuses_every_operator_command_and_keeps_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let (ws, c) = prepared(dir.path());
    let state = std::fs::read(ws.join("state.json")).unwrap();
    let set_mode = |mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        for folder in [ws.clone(), ws.join("packages")] {
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    };
    // chmod stops this user's writes unless it is root (CAP_DAC_OVERRIDE).
    set_mode(0o555);
    let chmod_blocks = std::fs::write(ws.join("probe"), b"").is_err();
    if !chmod_blocks {
        let _ = std::fs::remove_file(ws.join("probe"));
        set_mode(0o755);
    }
    for args in operations(&c) {
        let (out, after, listing) = if chmod_blocks {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = tdm(&ws, &args, b"");
            let listing: Vec<String> = std::fs::read_dir(&ws)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            (out, std::fs::read(ws.join("state.json")).unwrap(), listing.join("\n"))
        } else {
            // As root: a read-only bind mount of the workspace over itself, in a namespace of its own.
            let out_dir = tempfile::tempdir().unwrap();
            let setup =
                "mount --bind \"$WS\" \"$MNT\"\nmount -o remount,bind,ro \"$MNT\"\n! touch \"$MNT/probe\" 2>/dev/null";
            let paths = [("WS", ws.as_path()), ("MNT", ws.as_path()), ("OUT", out_dir.path())];
            let flags = match namespace(setup, &paths) {
                Ok(flags) => flags,
                Err(why) => {
                    eprintln!("SKIPPED: running as root (chmod does not stop writes) and no read-only mount can be made: {why}");
                    return;
                }
            };
            let out = in_namespace(&flags, setup, &paths, &args);
            let after = std::fs::read(out_dir.path().join("after")).unwrap_or_default();
            (out, after, std::fs::read_to_string(out_dir.path().join("listing")).unwrap_or_default())
        };
        check_refused(&args, &out, if chmod_blocks { "Permission denied" } else { "Read-only file system" });
        assert!(after == state, "tdm {args:?} changed the state file");
        assert_eq!(leftovers(&listing), Vec::<String>::new(), "tdm {args:?}");
    }
    if chmod_blocks {
        set_mode(0o755);
    }
    assert!(ws.join("packages/a/1.0.0/plugin.toml").is_file(), "uninstall removed nothing");
    assert!(!ws.join("packages/c").exists(), "install copied nothing");
}

#[test]
fn a_full_disk_refuses_every_operator_command_and_keeps_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let (ws, c) = prepared(dir.path());
    let state = std::fs::read(ws.join("state.json")).unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    // A 256 KiB tmpfs holding a copy of the workspace, then filled to the last block.
    let setup = "mount -t tmpfs -o size=256k tmpfs \"$MNT\"\ncp -a \"$WS\"/. \"$MNT\"/\n\
                 dd if=/dev/zero of=\"$MNT/fill\" bs=4096 2>/dev/null || true\n\
                 ! dd if=/dev/zero of=\"$MNT/probe\" bs=4096 count=1 2>/dev/null";
    for args in operations(&c) {
        let out_dir = tempfile::tempdir().unwrap();
        let paths = [("WS", ws.as_path()), ("MNT", mnt.as_path()), ("OUT", out_dir.path())];
        let flags = match namespace(setup, &paths) {
            Ok(flags) => flags,
            Err(why) => {
                eprintln!("SKIPPED: no private mount namespace with a tmpfs can be made here: {why}");
                return;
            }
        };
        let out = in_namespace(&flags, setup, &paths, &args);
        check_refused(&args, &out, "No space left on device");
        let after = std::fs::read(out_dir.path().join("after")).expect("the state file is still there");
        assert!(after == state, "tdm {args:?} changed the state file");
        let listing = std::fs::read_to_string(out_dir.path().join("listing")).unwrap();
        assert_eq!(leftovers(&listing), Vec::<String>::new(), "tdm {args:?} left a temporary state copy");
    }
}
