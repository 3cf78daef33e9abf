//! Running the built `tdm` in a workspace of the test's own, and building packages and hubs.
#![allow(dead_code)] // Each test file uses part of it.

use serde_json::Value;
use sha2::Digest;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `tdm ARGS` with `TDM_WORKSPACE=ws` and `stdin` piped in (tables unbounded: no
/// `COLUMNS` from the test's environment).
pub fn tdm(ws: &Path, args: &[&str], stdin: &[u8]) -> Output {
    tdm_columns(ws, args, stdin, None)
}

/// Runs `tdm ARGS` as [`tdm`] does, with `COLUMNS=columns` when given.
pub fn tdm_columns(ws: &Path, args: &[&str], stdin: &[u8], columns: Option<usize>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tdm"));
    match columns {
        Some(columns) => command.env("COLUMNS", columns.to_string()),
        None => command.env_remove("COLUMNS"),
    };
    let mut child = command
        .args(args)
        .env("TDM_WORKSPACE", ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdm starts");
    let mut input = child.stdin.take().expect("stdin is piped");
    // tdm may exit before reading all of stdin (an error): a broken pipe is not the test's.
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().expect("tdm runs")
}

/// stdout, then stderr, as text.
pub fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// stdout parsed as exactly one JSON document on one line.
pub fn json(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "stdout must be one JSON line: {stdout:?} / {}", stderr(out));
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}"))
}

/// The bundled echo plugin.
pub fn echo() -> String {
    repo().join("examples/echo/echo.wat").display().to_string()
}

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// sha256 in hex.
pub fn hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `dir/name` and returns its path as text.
pub fn write(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("the test file is written");
    path.display().to_string()
}

/// Writes a package folder `dir/name` for plugin `id` with a WAT module and the intents
/// `(name, description)`; `extra` is appended to plugin.toml. Returns the folder.
pub fn package(dir: &Path, name: &str, id: &str, module: &str, intents: &[(&str, &str)], extra: &str) -> PathBuf {
    let root = dir.join(name);
    std::fs::create_dir_all(root.join("dist")).unwrap();
    std::fs::write(root.join("dist/plugin.wat"), module).unwrap();
    let mut manifest = format!(
        "id = \"{id}\"\nversion = \"1.0.0\"\nname = \"{id}\"\ndescription = \"test plugin\"\nmodule = \"dist/plugin.wat\"\nsha256 = \"{}\"\npermissions = []\n{extra}\n",
        hex(module.as_bytes())
    );
    for (intent, description) in intents {
        manifest.push_str(&format!("[[intents]]\nname = \"{intent}\"\ndescription = \"{description}\"\n"));
    }
    std::fs::write(root.join("plugin.toml"), manifest).unwrap();
    root
}

/// Installs and approves the package folder `pkg` in `ws`.
pub fn install_approved(ws: &Path, pkg: &Path) {
    let out = tdm(ws, &["install", "--allow-unsigned", &pkg.display().to_string()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let id = std::fs::read_to_string(pkg.join("plugin.toml")).unwrap();
    let id = id.lines().next().unwrap().trim_start_matches("id = \"").trim_end_matches('"').to_string();
    let out = tdm(ws, &["approve", &id, "--yes"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// A plugin whose every intent loops forever.
pub const SPIN: &str = r#"(module (memory (export "memory") 1)
    (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
    (func (export "tdm_free") (param i32 i32))
    (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) (loop (br 0)) i32.const 0))"#;

/// A plugin answering `{"status":"completed","output":{"ok":true}}` to every intent.
pub const OK: &str = r#"(module (memory (export "memory") 1)
    (data (i32.const 256) "\2b\00\00\00{\"status\":\"completed\",\"output\":{\"ok\":true}}")
    (func (export "tdm_alloc") (param i32) (result i32) i32.const 4096)
    (func (export "tdm_free") (param i32 i32))
    (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 256))"#;

/// A piped `tdm repl` driven one entry at a time (so files can change between entries); each
/// answer is waited for at most 30 s, so a REPL that prints nothing fails the test.
pub struct Repl {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Repl {
    /// Starts `tdm repl TARGET` with `TDM_WORKSPACE=ws`.
    pub fn start(ws: &std::path::Path, target: &str) -> Self {
        Self::start_with(ws, &["repl", target])
    }

    /// Starts `tdm ARGS` (a `repl` command line) with `TDM_WORKSPACE=ws`.
    pub fn start_with(ws: &std::path::Path, args: &[&str]) -> Self {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
            .args(args)
            .env("TDM_WORKSPACE", ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, stdin, lines }
    }

    /// Sends one entry; its stdout line, parsed.
    pub fn next(&mut self, entry: &str) -> Value {
        writeln!(self.stdin, "{entry}").unwrap();
        self.stdin.flush().unwrap();
        let answer = self.lines.recv_timeout(std::time::Duration::from_secs(30));
        let answer = answer.unwrap_or_else(|_| {
            let _ = self.child.kill();
            panic!("no stdout line for {entry:?}")
        });
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{answer:?}: {e}"))
    }

    /// Ends stdin; the REPL must exit 0.
    pub fn finish(mut self) {
        drop(self.stdin);
        assert_eq!(self.child.wait().unwrap().code(), Some(0));
    }
}
