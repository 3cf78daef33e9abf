//! Every file `tdm` opens goes through the one path (`std-host/sdk/src/files.rs` for reading,
//! `std-host/sdk/src/files/output.rs` for writing): bounded, never blocking, regular files only, and
//! never through a symlink planted in the workspace. The sources are searched for any other
//! way to open a file (outside unit tests), and every workspace file tdm opens is tried, through
//! the built binary, as a FIFO, as a link to `/dev/zero` and as a link to a file outside the
//! workspace: each is refused at once with a message naming it, nothing outside is written, and
//! the REPL still starts when its history is one of them.

#[path = "support/tdm.rs"]
mod support;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{echo, tdm, text};

/// The ways to open a file that only `files.rs` and `files/output.rs` may use.
const OPENERS: [&str; 12] = [
    "File::open",
    "File::create",
    "OpenOptions",
    "fs::read(",
    "fs::read_to_string",
    "fs::write",
    "fs::copy",
    ".open_with(",
    "load_history",
    "save_history",
    "append_history",
    "File::options",
];

/// The `.rs` files under `dir`, recursively.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn no_source_opens_a_file_outside_the_one_path() {
    // Both crates of the host: the binary (tdm) and the library (tdm-sdk) it calls.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sdk = here.join("../sdk/src");
    let mut files = Vec::new();
    sources(&here.join("src"), &mut files);
    sources(&sdk, &mut files);
    assert!(files.len() > 40, "the sources were found: {}", files.len());
    let one_path = [sdk.join("files.rs"), sdk.join("files/output.rs")];
    let mut offenders = Vec::new();
    // Unit-test modules (`tests.rs`, `#[cfg(test)] mod tests;`) set up their files as they like.
    for file in files.iter().filter(|f| !one_path.contains(f) && !f.ends_with("tests.rs")) {
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests (`#[cfg(test)]`, `#[cfg(all(test, ...))]`) set up their files as they like.
        let code = text.lines().take_while(|l| !(l.starts_with("#[cfg(") && l.contains("test"))).collect::<Vec<_>>();
        for (n, line) in code.iter().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            if let Some(opener) = OPENERS.iter().find(|opener| line.contains(*opener)) {
                offenders.push(format!("{}:{}: {opener}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(offenders.is_empty(), "files opened outside files.rs and files/output.rs:\n{}", offenders.join("\n"));
    // The search finds what it looks for.
    let output = std::fs::read_to_string(&one_path[1]).unwrap();
    assert!(OPENERS.iter().any(|opener| output.contains(opener)));
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// The three hostile things a workspace file may be: a FIFO, a link to `/dev/zero`, a link to
/// a file outside the workspace (which holds `outside`'s text).
fn plant(path: &Path, how: &str, outside: &Path) {
    let _ = std::fs::remove_file(path);
    match how {
        "fifo" => mkfifo(path),
        "dev-zero" => symlink("/dev/zero", path).unwrap(),
        "outside" => symlink(outside, path).unwrap(),
        _ => unreachable!(),
    }
}

const HOW: [&str; 3] = ["fifo", "dev-zero", "outside"];

#[test]
fn the_workspace_state_and_its_lock_are_never_read_or_written_through_a_fifo_or_a_link() {
    for how in HOW {
        for name in ["state.json", "state.lock"] {
            let dir = tempfile::tempdir().unwrap();
            let ws = dir.path().join("ws");
            std::fs::create_dir_all(&ws).unwrap();
            // A state that would read fine: followed, the link would be taken for the state.
            let outside = dir.path().join("outside.json");
            let foreign = "{\"version\": 1, \"plugins\": {}}";
            std::fs::write(&outside, foreign).unwrap();
            plant(&ws.join(name), how, &outside);
            let pkg = support::package(dir.path(), "pkg", "p", support::OK, &[("x", "")], "");
            // Reads the state (status) and writes it under the lock (install).
            for args in [vec!["workspace", "status"], vec!["install", "--allow-unsigned", pkg.to_str().unwrap()]] {
                if name == "state.lock" && args[0] == "workspace" {
                    continue; // status takes no lock
                }
                let out = tdm(&ws, &args, b"");
                assert_ne!(out.status.code(), Some(0), "{name} as {how}: {args:?}: {}", text(&out));
                let said = text(&out);
                assert!(said.contains(name), "{name} as {how}: the message names it: {said}");
            }
            assert_eq!(std::fs::read_to_string(&outside).unwrap(), foreign, "{name} as {how}");
        }
    }
}

#[test]
fn the_audit_log_is_never_written_through_a_fifo_or_a_link() {
    let forward = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/forward.wat").display().to_string();
    let log = r#"{"jsonrpc":"2.0","id":1,"method":"log","params":{"message":"hi"}}"#;
    for how in HOW {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "NOT YOURS").unwrap();
        plant(&ws.join("audit.jsonl"), how, &outside);
        let out = tdm(&ws, &["run", &forward, "log", "--params", log], b"");
        // The intent runs; the audit log is refused with a warning naming it.
        assert_eq!(out.status.code(), Some(0), "{how}: {}", text(&out));
        assert!(text(&out).contains("audit.jsonl"), "{how}: {}", text(&out));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "NOT YOURS", "{how}");
    }
}

#[test]
fn the_repl_history_as_a_fifo_or_a_link_is_refused_and_the_repl_starts() {
    for how in HOW {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "NOT YOURS\n").unwrap();
        let history = ws.join("repl_history");
        plant(&history, how, &outside);
        let mut command = Command::new(env!("CARGO_BIN_EXE_tdm"));
        command.args(["repl", &echo()]).env("TDM_WORKSPACE", &ws).env("TERM", "xterm");
        // A FIFO or /dev/zero read as history would hang the REPL before its prompt, or fill
        // memory with one endless line: the prompt must come within the session's patience.
        let mut p = rexpect::session::spawn_command(command, Some(30_000)).expect("tdm repl starts in a pty");
        p.exp_string("the history was not read").unwrap_or_else(|e| panic!("{how}: {e}"));
        p.exp_string("echo> ").unwrap_or_else(|e| panic!("{how}: the REPL starts: {e}"));
        p.send_line("greet {}").unwrap();
        p.exp_string("\"status\": \"completed\"").unwrap();
        p.exp_string("echo> ").unwrap();
        p.send_line(":quit").unwrap();
        p.exp_string("the history was not saved").unwrap_or_else(|e| panic!("{how}: {e}"));
        p.exp_eof().unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "NOT YOURS\n", "{how}: the file outside is untouched");
        let meta = std::fs::symlink_metadata(&history).unwrap();
        assert!(!meta.is_file(), "{how}: the planted entry is still what it was");
    }
    // A plain history is read and written as before.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("repl_history"), "#V2\ngreet {\"old\":1}\n").unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_tdm"));
    command.args(["repl", &echo()]).env("TDM_WORKSPACE", &ws).env("TERM", "xterm");
    let mut p = rexpect::session::spawn_command(command, Some(30_000)).unwrap();
    p.exp_string("echo> ").unwrap();
    p.send_line("greet {\"new\":2}").unwrap();
    p.exp_string("echo> ").unwrap();
    p.send_line(":quit").unwrap();
    p.exp_eof().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let saved = std::fs::read_to_string(ws.join("repl_history")).unwrap();
    assert_eq!(saved, "#V2\ngreet {\"old\":1}\ngreet {\"new\":2}\n:quit\n", "{saved}");
}
