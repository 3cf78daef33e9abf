//! Every file tdm reads, through the built binary (and `DirFs` itself): a FIFO is refused at
//! once instead of blocking, a file over its bound is refused from its metadata without being
//! read (1 GiB sparse files), `.wat` errors name the file and are truncated, the audit log is
//! streamed with a per-line bound, and `exec --dir` reports real inode numbers.

use contour_core::{errors::FsError, HostFs, NodeKind};
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tdm_sdk::dirfs::{DirFs, PreopenDir};

/// How long a command may take before it counts as blocked (generous: the point is that it stops).
const BLOCKED_AFTER: Duration = Duration::from_secs(60);

/// Runs `tdm ARGS` with its own workspace; kills it and fails if it has not ended in time.
fn tdm(workspace: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .env("TDM_WORKSPACE", workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdm runs");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BLOCKED_AFTER {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tdm {args:?} blocked for {BLOCKED_AFTER:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() }
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures").join(name).display().to_string()
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A 1 GiB file that takes no disk space (and would take 1 GiB of memory to read).
fn sparse_gib(path: &Path) {
    std::fs::File::create(path).unwrap().set_len(1 << 30).unwrap();
}

#[test]
fn dist_read_of_a_fifo_is_a_failed_answer_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    mkfifo(&dist.join("pipe"));
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"dist.read","params":{"path":"pipe"}}"#;
    let dist = dist.display().to_string();
    let out = tdm(tmp.path(), &["run", &fixture("forward.wat"), "forward", "--params", call, "--dist", &dist]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["output"]["blockedReason"], "host_intent_failed", "{outcome}");
    assert!(outcome["output"]["message"].as_str().unwrap().contains("named pipe"), "{outcome}");
}

#[test]
fn an_exec_preopen_never_blocks_on_a_fifo() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    mkfifo(&root.join("pipe"));
    let root = root.display().to_string();
    let out = tdm(tmp.path(), &["exec", "--dir", &root, &fixture("files.wat"), "cat", "pipe"]);
    const EPERM: i32 = 63;
    assert_eq!(out.status.code(), Some(EPERM), "{}", text(&out));
}

/// Opens `path` in `fs` on another thread: a blocked open fails the test instead of hanging it.
fn open_in_time(mut fs: DirFs, root: u64, path: &'static str) -> (DirFs, Result<u64, FsError>) {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let opened = fs.open(root, path, true);
        let _ = send.send((fs, opened));
    });
    receive.recv_timeout(BLOCKED_AFTER).unwrap_or_else(|_| panic!("opening {path} blocked"))
}

#[test]
fn dirfs_stats_and_lists_a_fifo_and_refuses_to_read_it() {
    let tmp = tempfile::tempdir().unwrap();
    mkfifo(&tmp.path().join("pipe"));
    let fs =
        DirFs::open(&[PreopenDir { host: tmp.path().to_path_buf(), guest: "/".to_string(), writable: false }]).unwrap();
    let root = fs.preopens()[0].0;
    let (mut fs, node) = open_in_time(fs, root, "pipe");
    let node = node.expect("a FIFO can be opened to stat it");
    let stat = fs.stat(node).unwrap();
    assert_eq!(stat.kind, NodeKind::Other);
    assert_ne!(stat.ino, 0);
    assert_eq!(fs.read_at(node, 0, &mut [0; 16]), Err(FsError::AccessDenied));
    let listed = fs.read_dir(root).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].name.as_str(), listed[0].ino), ("pipe", stat.ino));
}

#[test]
fn dirfs_reports_real_inodes_in_stat_and_listings() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a"), "a").unwrap();
    std::fs::write(tmp.path().join("b"), "b").unwrap();
    std::fs::hard_link(tmp.path().join("a"), tmp.path().join("a-link")).unwrap();
    std::fs::create_dir(tmp.path().join("sub")).unwrap();
    let mut fs =
        DirFs::open(&[PreopenDir { host: tmp.path().to_path_buf(), guest: "/".to_string(), writable: false }]).unwrap();
    let root = fs.preopens()[0].0;
    let mut ino = |path: &str| {
        let node = fs.open(root, path, true).unwrap();
        let stat = fs.stat(node).unwrap();
        fs.close(node);
        (stat.dev, stat.ino, stat.nlink)
    };
    let (a, a_again, b, link, sub) = (ino("a"), ino("a"), ino("b"), ino("a-link"), ino("sub"));
    assert_ne!(a.1, 0);
    assert_ne!(a.1, b.1, "different files have different inodes");
    assert_ne!(a.1, sub.1);
    assert_eq!(a, a_again, "the same file keeps its inode");
    assert_eq!(a.1, link.1, "a hard link is the same file");
    assert_eq!(a.2, 2, "two links");
    assert_eq!(a.0, b.0, "one device");
    let listed = fs.read_dir(root).unwrap();
    let of = |name: &str| listed.iter().find(|e| e.name == name).map(|e| e.ino);
    assert_eq!(of("a"), Some(a.1));
    assert_eq!(of("b"), Some(b.1));
    assert_eq!(of("sub"), Some(sub.1));
}

#[test]
fn a_module_over_its_bound_is_refused_without_being_read() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big.wasm");
    sparse_gib(&big);
    let big = big.display().to_string();
    for args in [vec!["run", big.as_str(), "x"], vec!["inspect", big.as_str()], vec!["exec", big.as_str()]] {
        let out = tdm(tmp.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let shown = text(&out);
        assert!(shown.contains("1073741824 bytes") && shown.contains("limit is 33554432"), "{shown}");
        assert!(shown.contains("it was not read"), "{shown}");
    }
}

#[test]
fn a_fifo_as_module_vault_context_or_audit_log_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let pipe = tmp.path().join("pipe.wasm");
    mkfifo(&pipe);
    let pipe = pipe.display().to_string();
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/echo/echo.wat").display().to_string();
    let cases: [Vec<&str>; 5] = [
        vec!["run", &pipe, "x"],
        vec!["inspect", &pipe],
        vec!["run", &echo, "echo", "--vault", &pipe],
        vec!["run", &echo, "echo", "--context", &pipe],
        vec!["audit", "--audit", &pipe],
    ];
    for args in cases {
        let out = tdm(tmp.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("named pipe"), "{args:?}: {}", text(&out));
    }
}

#[test]
fn a_vault_or_context_over_its_bound_is_refused_without_being_read() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big.json");
    sparse_gib(&big);
    let big = big.display().to_string();
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/echo/echo.wat").display().to_string();
    for flag in ["--vault", "--context"] {
        let out = tdm(tmp.path(), &["run", &echo, "echo", flag, &big]);
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", text(&out));
        assert!(text(&out).contains("the limit is 1048576 bytes; it was not read"), "{flag}: {}", text(&out));
    }
}

#[test]
fn a_wat_error_names_the_file_and_is_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    // The error is near the start of a 2 MB line, which the wat crate quotes whole.
    let path: PathBuf = tmp.path().join("broken.wat");
    std::fs::write(&path, format!("(module (bogus {}))", "a ".repeat(1_000_000))).unwrap();
    let shown_path = path.display().to_string();
    let run = tdm(tmp.path(), &["run", &shown_path, "x"]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let outcome: Value = serde_json::from_slice(&run.stdout).unwrap();
    let message = outcome["message"].as_str().unwrap_or_default().to_string();
    assert_eq!(outcome["blockedReason"], "invalid_module", "{outcome}");
    // The outcome names FILE:LINE:COL; stderr also shows the source line, cut.
    let inspect_stderr = String::from_utf8_lossy(&tdm(tmp.path(), &["inspect", &shown_path]).stderr).into_owned();
    let run_stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    for message in [message, inspect_stderr.clone(), run_stderr.clone()] {
        // Only the start of a message that may be megabytes long is shown on failure.
        let head: String = message.chars().take(600).collect();
        assert!(message.len() < 4096, "{} bytes: {head}", message.len());
        assert!(message.contains("broken.wat:1:10: ") && !message.contains("<anon>"), "{head}");
    }
    for stderr in [inspect_stderr, run_stderr] {
        assert!(stderr.contains("  1 | (module (bogus a a a") && stderr.contains("more bytes cut"), "{stderr}");
    }
}

#[test]
fn the_audit_log_is_streamed_with_a_per_line_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let audit = tmp.path().join("audit.jsonl");
    let good = r#"{"time":"t","plugin":"p","method":"log","granted":true}"#;
    std::fs::write(&audit, format!("{good}\n{}\n{good}\n", "x".repeat(200_000))).unwrap();
    let out = tdm(tmp.path(), &["audit", "--audit", &audit.display().to_string(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["plugin"], "p");
    assert_eq!(lines[1]["malformed"], true);
    assert_eq!(lines[1]["line"], 2);
    assert!(lines[1]["error"].as_str().unwrap().contains("longer than 65536 bytes"), "{}", lines[1]);
    assert_eq!(lines[2]["plugin"], "p");
    // The table says what the line is, never a denial that did not happen.
    std::fs::write(
        &audit,
        format!("{good}\ngarbage{{\n{}\n", r#"{"time":"t","plugin":"q","method":"log","granted":false}"#),
    )
    .unwrap();
    let out = tdm(tmp.path(), &["audit", "--audit", &audit.display().to_string()]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(table.matches("DENIED").count(), 1, "{table}");
    assert!(table.contains("(line 2 of the log is not an audit record: "), "{table}");
}

#[test]
fn a_fifo_as_audit_log_or_state_lock_is_never_waited_on() {
    let tmp = tempfile::tempdir().unwrap();
    let audit = tmp.path().join("audit.fifo");
    mkfifo(&audit);
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"log","params":{"level":"info","message":"m"}}"#;
    let audit = audit.display().to_string();
    let out = tdm(tmp.path(), &["run", &fixture("forward.wat"), "forward", "--params", call, "--audit", &audit]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("cannot append to the audit log"), "{}", text(&out));

    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    mkfifo(&ws.join("state.lock"));
    let out = tdm(&ws, &["revoke", "p"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("state.lock"), "{}", text(&out));
}
