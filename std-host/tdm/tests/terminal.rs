//! No string a plugin, a package, a hub index or the state file chose reaches the operator's
//! terminal raw: every `tdm` printer is driven through the built binary with escape sequences
//! (OSC 52 clipboard writes, cursor-up + erase-line, CR, 8-bit CSI, bidi overrides) and its
//! stdout and stderr are searched for any control character. JSON output stays JSON with the
//! same value, one line. `tdm exec` alone passes its module's stdout through byte for byte.

use serde_json::Value;
use sha2::Digest;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Writes the clipboard (OSC 52 "rm -rf ~" in base64), then rings the bell that ends it.
const OSC52: &str = "\u{1b}]52;c;cm0gLXJmIH4=\u{7}";
const OSC52_SHOWN: &str = "\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}";
/// Cursor up one line, erase it: hides the line printed before.
const UP_ERASE: &str = "\u{1b}[1A\u{1b}[2K";
const UP_ERASE_SHOWN: &str = "\\u{1b}[1A\\u{1b}[2K";
/// A JSON key (escaped in the file, as raw control characters are not JSON) that a strict
/// reader refuses by name, so its error message quotes the decoded controls.
const UNKNOWN_KEY: &str = r#""\u001b]52;c;cm0gLXJmIH4=\u0007\u202e\u007f""#;
const UNKNOWN_KEY_SHOWN: &str = "\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}\\u{202e}\\u{7f}";

/// Runs `tdm ARGS` in workspace `ws` with `stdin`.
fn tdm(ws: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .env("TDM_WORKSPACE", ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdm starts");
    let mut input = child.stdin.take().expect("stdin is piped");
    input.write_all(stdin).expect("stdin takes the input");
    drop(input);
    child.wait_with_output().expect("tdm runs")
}

/// Whether `c` drives a terminal: C0 (but the newline ending each line), DEL, C1, and the
/// Unicode controls that reorder or hide text. Spelled out here, not taken from the crate.
fn drives_the_terminal(c: char) -> bool {
    c != '\n'
        && matches!(c,
            '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{61c}' | '\u{200b}'..='\u{200f}' | '\u{2028}' | '\u{2029}'
            | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// stdout and stderr as text, after checking neither holds a control that drives the terminal.
fn safe(out: &Output) -> (String, String) {
    let mut texts = Vec::new();
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8(bytes.clone()).unwrap_or_else(|e| panic!("{name} is not UTF-8: {e}"));
        if let Some(c) = text.chars().find(|&c| drives_the_terminal(c)) {
            panic!("{name} holds the raw control U+{:04X}: {text:?}", u32::from(c));
        }
        texts.push(text);
    }
    let stderr = texts.pop().unwrap_or_default();
    (texts.pop().unwrap_or_default(), stderr)
}

/// `bytes` as a WAT string literal's contents.
fn wat_bytes(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("\\{b:02x}")).collect()
}

/// A plugin whose every intent writes `stdout` and `stderr` through WASI and answers `response`.
fn plugin(stdout: &str, stderr: &str, response: &str) -> String {
    let len = u32::try_from(response.len()).unwrap().to_le_bytes();
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 4096) "{}")
  (data (i32.const 8192) "{}")
  (data (i32.const 12288) "{}{}")
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 32768)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (i32.store (i32.const 0) (i32.const 4096)) (i32.store (i32.const 4) (i32.const {}))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))
    (i32.store (i32.const 0) (i32.const 8192)) (i32.store (i32.const 4) (i32.const {}))
    (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 16)))
    i32.const 12288))"#,
        wat_bytes(stdout.as_bytes()),
        wat_bytes(stderr.as_bytes()),
        wat_bytes(&len),
        wat_bytes(response.as_bytes()),
        stdout.len(),
        stderr.len()
    )
}

/// A response with raw C1, bidi and DEL characters in its strings and raw CR/LF between tokens.
const SNEAKY_RESPONSE: &str = "{\"status\":\"completed\",\r\"output\":{\"csi\":\"\u{9b}31mred\",\"rlo\":\"\u{202e}txt.exe\",\r\n\"del\":\"a\u{7f}b\",\"esc\":\"\\u001b[2J\",\"quote\":\"\\\"\\\\\"}\r}";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the temp file is written");
    path.display().to_string()
}

#[test]
fn run_escapes_the_plugins_output_lines() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = format!("{OSC52}copied\rverdict: accepted\n");
    let stderr = format!("{UP_ERASE}\u{202e}gnp.exe\u{8}\u{9b}2J\n");
    let module = write(dir.path(), "noisy.wat", &plugin(&stdout, &stderr, r#"{"status":"completed","output":1}"#));
    let out = tdm(dir.path(), &["run", &module, "go"], b"");
    assert_eq!(out.status.code(), Some(0));
    let (_, err) = safe(&out);
    assert!(err.contains(&format!("[plugin stdout] {OSC52_SHOWN}copied\\u{{d}}verdict: accepted\n")), "{err}");
    assert!(err.contains(&format!("[plugin stderr] {UP_ERASE_SHOWN}\\u{{202e}}gnp.exe\\u{{8}}\\u{{9b}}2J\n")), "{err}");
}

#[test]
fn run_escapes_the_plugins_log_lines() {
    // The library hands a `log` line over as data; tdm escapes it where it prints it.
    let dir = tempfile::tempdir().unwrap();
    let forward = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/forward.wat").display().to_string();
    let message = format!("{OSC52}one\n[plugin forward error] forged{UP_ERASE}");
    let request = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "log",
        "params": {"level": "warn", "message": message}});
    let out = tdm(dir.path(), &["run", &forward, "forward", "--params", &request.to_string()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, err) = safe(&out);
    let shown =
        format!("[plugin forward warn] {OSC52_SHOWN}one\\u{{a}}[plugin forward error] forged{UP_ERASE_SHOWN}\n");
    assert!(err.contains(&shown), "{err}");
    assert_eq!(err.matches("[plugin forward").count(), 2, "one line, not a forged second one: {err}");
}

#[test]
fn run_prints_the_outcome_as_one_line_of_the_same_json() {
    let dir = tempfile::tempdir().unwrap();
    let module = write(dir.path(), "sneaky.wat", &plugin("", "", SNEAKY_RESPONSE));
    let out = tdm(dir.path(), &["run", &module, "go"], b"");
    assert_eq!(out.status.code(), Some(0));
    let (stdout, _) = safe(&out);
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    let printed: Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    let returned: Value = serde_json::from_str(SNEAKY_RESPONSE).expect("the response is JSON");
    assert_eq!(printed, returned);
    assert!(stdout.contains(r#""csi":"\u009b31mred","rlo":"\u202etxt.exe","del":"a\u007fb""#), "{stdout}");
}

#[test]
fn the_repl_escapes_outcomes_the_plugins_output_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let module = write(dir.path(), "sneaky.wat", &plugin(&format!("{OSC52}\r\n"), "", SNEAKY_RESPONSE));
    let input = format!("go\n:nope{UP_ERASE}\ngo {{\"x\": \"{}\"}}\n", "\u{202e}");
    let out = tdm(dir.path(), &["repl", &module], input.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let (stdout, stderr) = safe(&out);
    let returned: Value = serde_json::from_str(SNEAKY_RESPONSE).expect("the response is JSON");
    let lines: Vec<Value> =
        stdout.lines().map(|line| serde_json::from_str(line).expect("each stdout line is JSON")).collect();
    assert_eq!(lines.len(), 3, "one line per entry: {stdout:?}");
    assert_eq!((&lines[0], &lines[2]), (&returned, &returned));
    assert_eq!(lines[1]["status"], "error");
    assert_eq!(lines[1]["message"], format!("unknown command `:nope{UP_ERASE}` (:help lists the commands)"));
    assert!(stderr.contains(&format!("[plugin stdout] {OSC52_SHOWN}\n")), "{stderr}");
    assert!(stderr.contains(&format!("unknown command `:nope{UP_ERASE_SHOWN}`")), "{stderr}");
}

#[test]
fn inspect_escapes_import_names_in_text_and_keeps_json_intact() {
    let dir = tempfile::tempdir().unwrap();
    let module_name = format!("{OSC52}env");
    let name = format!("{UP_ERASE}\rverdict: accepted\u{202e}\u{9b}");
    let wat = format!(
        "(module (import \"{}\" \"{}\" (func)) (memory (export \"memory\") 1))",
        wat_bytes(module_name.as_bytes()),
        wat_bytes(name.as_bytes())
    );
    let module = write(dir.path(), "imports.wat", &wat);

    let text = tdm(dir.path(), &["inspect", &module], b"");
    assert_eq!(text.status.code(), Some(1));
    let (stdout, _) = safe(&text);
    let shown = format!("{OSC52_SHOWN}env.{UP_ERASE_SHOWN}\\u{{d}}verdict: accepted\\u{{202e}}\\u{{9b}}");
    assert!(stdout.contains(&shown), "{stdout}");
    assert!(stdout.lines().any(|line| line == "verdict: rejected"), "{stdout}");

    let json = tdm(dir.path(), &["inspect", &module, "--json"], b"");
    assert_eq!(json.status.code(), Some(1));
    let (stdout, _) = safe(&json);
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    let report: Value = serde_json::from_str(&stdout).expect("inspect --json is JSON");
    assert_eq!(report["verdict"], "rejected");
    assert_eq!(report["imports"][0]["module"], module_name.as_str());
    assert_eq!(report["imports"][0]["name"], name.as_str());
}

#[test]
fn error_messages_quoting_a_file_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let module = write(dir.path(), "bad.wat", &format!("(module {OSC52} {UP_ERASE}\u{202e})"));
    let out = tdm(dir.path(), &["inspect", &module], b"");
    assert_eq!(out.status.code(), Some(1), "a module that does not compile is rejected, as in `run`");
    let (_, stderr) = safe(&out);
    assert!(stderr.starts_with("tdm: error: "), "{stderr}");
    assert!(stderr.contains("\\u{1b}"), "{stderr}");
    let missing = dir.path().join(format!("{UP_ERASE}missing.wasm")).display().to_string();
    let out = tdm(dir.path(), &["inspect", &missing], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(safe(&out).1.contains(&format!("{UP_ERASE_SHOWN}missing.wasm")));
}

fn hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes a package folder `DIR/pkg` whose manifest's `name` and `description` are `label`.
fn package(dir: &Path, id: &str, label: &str) -> String {
    let root = dir.join("pkg");
    std::fs::create_dir_all(root.join("dist")).unwrap();
    let module = plugin("", "", r#"{"status":"completed","output":1}"#);
    std::fs::write(root.join("dist/plugin.wat"), &module).unwrap();
    let toml_string = |s: &str| serde_json::to_string(s).unwrap();
    let manifest = format!(
        "id = {}\nversion = \"1.0.0\"\nname = {}\ndescription = {}\nmodule = \"dist/plugin.wat\"\nsha256 = \"{}\"\npermissions = [\"vault:read\"]\n",
        toml_string(id),
        toml_string(label),
        toml_string(label),
        hex(module.as_bytes())
    );
    std::fs::write(root.join("plugin.toml"), manifest).unwrap();
    root.display().to_string()
}

#[test]
fn approve_shows_the_package_escaped_so_no_line_can_be_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let label = format!("{UP_ERASE}{UP_ERASE}harmless{OSC52}");
    let pkg = package(dir.path(), "sneaky", &label);
    let ws = dir.path().join("ws");
    let installed = tdm(&ws, &["install", "--allow-unsigned", &pkg], b"");
    assert_eq!(installed.status.code(), Some(0), "{:?}", safe(&installed));
    let out = tdm(&ws, &["approve", "sneaky", "--yes"], b"");
    assert_eq!(out.status.code(), Some(0));
    let (stdout, _) = safe(&out);
    assert!(stdout.contains(&format!("({UP_ERASE_SHOWN}{UP_ERASE_SHOWN}harmless{OSC52_SHOWN})")), "{stdout}");
    assert!(stdout.contains("\npermissions: vault:read\n"), "{stdout}");
}

#[test]
fn install_refusals_quoting_the_manifest_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = package(dir.path(), &format!("evil{UP_ERASE}"), "x");
    let out = tdm(&dir.path().join("ws"), &["install", "--allow-unsigned", &pkg], b"");
    assert_ne!(out.status.code(), Some(0));
    let (_, stderr) = safe(&out);
    assert!(stderr.contains(&format!("evil{UP_ERASE_SHOWN}")), "{stderr}");
}

#[test]
fn hub_list_escapes_the_index_in_text_and_keeps_json_intact() {
    let hub = tempfile::tempdir().unwrap();
    let id = format!("{OSC52}evil");
    let version = "1.0\r2.0\u{202e}".to_string();
    let path = format!("{UP_ERASE}pkg");
    let sha256 = format!("\u{9b}31m{}", "a".repeat(60));
    let entry = serde_json::json!({"id": id, "version": version, "sha256": sha256, "price": "free", "path": path});
    std::fs::write(hub.path().join("index.json"), serde_json::json!({"plugins": [entry]}).to_string()).unwrap();
    let hub_dir = hub.path().display().to_string();

    let text = tdm(hub.path(), &["hub", "list", "--hub", &hub_dir], b"");
    let (stdout, stderr) = safe(&text);
    if text.status.code() == Some(0) {
        assert!(stdout.contains(&format!("{OSC52_SHOWN}evil")), "{stdout}");
        assert!(stdout.contains("1.0\\u{d}2.0\\u{202e}") && stdout.contains("sha256:\\u{9b}31maaaaaaaa"), "{stdout}");
    } else {
        // A stricter index check may refuse these entries: its message is escaped all the same.
        assert!(stderr.starts_with("tdm: "), "{stderr}");
    }

    let json = tdm(hub.path(), &["hub", "list", "--hub", &hub_dir, "--json"], b"");
    let (stdout, _) = safe(&json);
    if json.status.code() == Some(0) {
        assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
        let listed: Value = serde_json::from_str(&stdout).expect("hub list --json is JSON");
        assert_eq!(
            (&listed["id"], &listed["version"], &listed["path"]),
            (&entry["id"], &entry["version"], &entry["path"])
        );
        assert_eq!(listed["sha256"], entry["sha256"]);
    }
}

#[test]
fn a_hub_index_refused_by_name_is_reported_escaped() {
    // An index that does not parse is refused with the parser's words, which quote the key.
    let hub = tempfile::tempdir().unwrap();
    let hub_dir = hub.path().display().to_string();
    std::fs::write(hub.path().join("index.json"), format!("{{\"plugins\": [], {UNKNOWN_KEY}: 1}}")).unwrap();
    let out = tdm(hub.path(), &["hub", "list", "--hub", &hub_dir], b"");
    assert_ne!(out.status.code(), Some(0));
    assert!(safe(&out).1.contains(UNKNOWN_KEY_SHOWN), "{out:?}");
}

#[test]
fn audit_escapes_a_plugin_chosen_method_name() {
    let dir = tempfile::tempdir().unwrap();
    let forward = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/forward.wat").display().to_string();
    let audit = dir.path().join("audit.jsonl").display().to_string();
    let method = format!("{OSC52}\u{1b}[31mFORGED\r\u{202e}\u{9b}");
    let request = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}).to_string();
    let run = tdm(dir.path(), &["run", &forward, "forward", "--params", &request, "--audit", &audit], b"");
    assert_eq!(run.status.code(), Some(0), "{run:?}");

    let text = tdm(dir.path(), &["audit", "--audit", &audit], b"");
    assert_eq!(text.status.code(), Some(0));
    let (stdout, _) = safe(&text);
    assert!(stdout.contains(&format!("{OSC52_SHOWN}\\u{{1b}}[31mFORGED\\u{{d}}\\u{{202e}}\\u{{9b}}")), "{stdout}");
    assert!(stdout.contains("DENIED"), "{stdout}");

    let json = tdm(dir.path(), &["audit", "--audit", &audit, "--json"], b"");
    let (stdout, _) = safe(&json);
    let entries: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).expect("an audit line is JSON")).collect();
    assert_eq!(entries.len(), 1, "{stdout}");
    assert_eq!(entries[0]["method"], method.as_str());
}

/// A state file whose every string a tamperer could choose holds an escape.
fn sneaky_state() -> Value {
    serde_json::json!({"version": 1, "plugins": {format!("{UP_ERASE}evil"): {
        "version": "1.0\u{202e}",
        "sha256": format!("\u{9b}{}", "b".repeat(63)),
        "path": "packages/none",
        "requested": [format!("vault:read{OSC52}")],
        "price": "free\r",
        "approval": null,
        "revoked": false,
        "last_call": {"method": format!("m{UP_ERASE}"), "status": "completed", "blocked_reason": null,
            "fuel_used": 1, "peak_memory_bytes": 2, "duration_us": 3, "at_ms": 4},
    }}})
}

#[test]
fn workspace_status_escapes_the_state_file_in_text_and_keeps_json_intact() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("packages")).unwrap();
    let state = sneaky_state();
    std::fs::write(ws.path().join("state.json"), state.to_string()).unwrap();

    let text = tdm(ws.path(), &["workspace", "status"], b"");
    let (stdout, stderr) = safe(&text);
    if text.status.code() == Some(0) {
        assert!(stdout.contains(&format!("{UP_ERASE_SHOWN}evil")), "{stdout}");
        assert!(stdout.contains("1.0\\u{202e}") && stdout.contains("\\u{9b}bbbbbbbbbbb "), "{stdout}");
        assert!(stdout.contains(&format!("vault:read{OSC52_SHOWN}")) && stdout.contains(&format!("m{UP_ERASE_SHOWN}")));
    } else {
        // A stricter state check may refuse these strings: its message is escaped all the same.
        assert!(stderr.starts_with("tdm: "), "{stderr}");
    }

    let json = tdm(ws.path(), &["workspace", "status", "--json"], b"");
    let (stdout, _) = safe(&json);
    if json.status.code() == Some(0) {
        assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
        let status: Value = serde_json::from_str(&stdout).expect("status --json is JSON");
        let row = &status["plugins"][0];
        let plugin = &state["plugins"][format!("{UP_ERASE}evil")];
        assert_eq!(row["id"], format!("{UP_ERASE}evil").as_str());
        assert_eq!((&row["version"], &row["hash"]), (&plugin["version"], &plugin["sha256"]));
        assert_eq!(row["requested"], plugin["requested"]);
        assert_eq!(row["lastCall"]["method"], plugin["last_call"]["method"]);
    }
}

#[test]
fn a_state_file_refused_by_name_is_reported_escaped() {
    // A state that does not parse is reported with the parser's words, which quote the key.
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("state.json"), format!("{{\"version\": 1, \"plugins\": {{}}, {UNKNOWN_KEY}: 0}}"))
        .unwrap();
    let out = tdm(ws.path(), &["workspace", "status"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(safe(&out).1.contains(UNKNOWN_KEY_SHOWN), "{out:?}");
}

#[test]
fn exec_passes_the_modules_stdout_through_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = format!("{OSC52}{UP_ERASE}\r\u{9b}\n");
    let wat = format!(
        r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "{}")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 64)) (i32.store (i32.const 4) (i32.const {}))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))"#,
        wat_bytes(bytes.as_bytes()),
        bytes.len()
    );
    let module = write(dir.path(), "cmd.wat", &wat);
    let out = tdm(dir.path(), &["exec", &module], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(out.stdout, bytes.as_bytes());
}
