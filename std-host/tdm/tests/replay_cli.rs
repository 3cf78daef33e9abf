//! Record and replay through the `tdm` binary: `--record` on run and call, the REPL's
//! `:record`/`:stop`, `tdm replay` (identical, a divergence at the right intent with exit 1, a
//! changed module refused unless `--plugin`), `--show`, `--json`, and host answers replayed with
//! no host at all.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn tdm_in(workspace: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .env("TDM_WORKSPACE", workspace)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdm runs");
    if let Some(text) = stdin {
        child.stdin.take().expect("piped").write_all(text.as_bytes()).expect("stdin takes the entries");
    }
    child.wait_with_output().expect("tdm ends")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn echo() -> String {
    repo().join("examples/echo/echo.wat").display().to_string()
}

/// A plugin answering with a random u64 it reads (so only its recorded input replays it).
const RANDOM: &str = r#"(module
  (import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "\1f\00\00\00{\"status\":\"completed\",\"output\":\"")
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 4096)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) (local $i i32)
    (drop (call $random (i32.const 512) (i32.const 8)))
    ;; 16 hex digits of the 8 random bytes at 52 (after the 32-byte prefix at 20), then `"}`.
    (loop $hex
      (i32.store8 (i32.add (i32.const 52) (i32.mul (local.get $i) (i32.const 2)))
        (i32.add (i32.const 97) (i32.shr_u (i32.load8_u (i32.add (i32.const 512) (local.get $i))) (i32.const 4))))
      (i32.store8 (i32.add (i32.const 53) (i32.mul (local.get $i) (i32.const 2)))
        (i32.add (i32.const 97) (i32.and (i32.load8_u (i32.add (i32.const 512) (local.get $i))) (i32.const 15))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $hex (i32.lt_u (local.get $i) (i32.const 8))))
    (i32.store16 (i32.const 68) (i32.const 0x7d22))
    (i32.store (i32.const 16) (i32.const 50))
    i32.const 16))"#;

#[test]
fn run_record_then_replay_is_identical_and_an_edit_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let plugin = dir.path().join("random.wat");
    std::fs::write(&plugin, RANDOM).unwrap();
    let trace = dir.path().join("random.trace");
    let out =
        tdm_in(&ws, &["run", &plugin.display().to_string(), "roll", "--record", &trace.display().to_string()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let first: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(first["output"].as_str().is_some_and(|s| s.len() == 16), "{first}");
    // The real OS entropy was recorded: the replay gives the same bytes, so the same outcome.
    let out = tdm_in(&ws, &["replay", &trace.display().to_string()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("replayed 1 intents: identical"), "{}", text(&out));
    let out = tdm_in(&ws, &["replay", &trace.display().to_string(), "--json"], None);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["identical"], true, "{report}");
    // --show names the input and the outcome.
    let out = tdm_in(&ws, &["replay", &trace.display().to_string(), "--show"], None);
    let shown = text(&out);
    assert!(shown.contains("random_get(8 bytes)") && shown.contains(first["output"].as_str().unwrap()), "{shown}");
    // Another module (the echo) is refused by hash, and replayed when given on purpose.
    let out = tdm_in(&ws, &["replay", &trace.display().to_string(), "--plugin", &echo()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("diverged at intent 1"), "{}", text(&out));
    // For scripts: the kind and the two sides, beside the sentence.
    let args = ["replay", &trace.display().to_string(), "--plugin", &echo(), "--json"].map(str::to_string);
    let out = tdm_in(&ws, &args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let divergence = &report["divergence"];
    assert_eq!(divergence["intent"], 1, "{report}");
    assert!(divergence["kind"].is_string() && divergence["what"].is_string(), "{report}");
    assert!(divergence.get("recorded").is_some() || divergence["kind"] == "output", "{report}");
    std::fs::write(&plugin, RANDOM.replace("(i32.const 97)", "(i32.const 65)")).unwrap();
    let out = tdm_in(&ws, &["replay", &trace.display().to_string()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("is not the module the trace recorded"), "{}", text(&out));
    // Damaged trace bytes are a clear error, not a panic.
    let mut bytes = std::fs::read(&trace).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&trace, bytes).unwrap();
    let out = tdm_in(&ws, &["replay", &trace.display().to_string()], None);
    assert_eq!(out.status.code(), Some(2), "a trace that cannot be read (README): {}", text(&out));
    assert!(text(&out).contains("truncated"), "{}", text(&out));
    let out = tdm_in(&ws, &["replay", &trace.display().to_string(), "--show"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    std::fs::write(&trace, b"not a trace at all").unwrap();
    let out = tdm_in(&ws, &["replay", &trace.display().to_string(), "--json"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["status"], "error", "{error}");
}

#[test]
fn the_repl_records_between_record_and_stop() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let trace = dir.path().join("repl.trace");
    let entries = format!(
        "greet {{\"name\":\"before\"}}\n:record {}\ngreet {{\"name\":\"Ada\"}}\ngreet {{\"name\":\"Grace\"}}\n:stop\ngreet {{}}\n",
        trace.display()
    );
    let out = tdm_in(&ws, &["repl", &echo(), "--seed", "3"], Some(&entries));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("recorded 2 intent(s)"), "{}", text(&out));
    let out = tdm_in(&ws, &["replay", &trace.display().to_string()], None);
    assert!(text(&out).contains("replayed 2 intents: identical"), "{}", text(&out));
    // Leaving while recording writes the trace too.
    let entries = format!(":record {}\ngreet {{\"name\":\"Lin\"}}\n", trace.display());
    let out = tdm_in(&ws, &["repl", &echo()], Some(&entries));
    assert!(text(&out).contains("recorded 1 intent(s)"), "{}", text(&out));
    let out = tdm_in(&ws, &["replay", &trace.display().to_string()], None);
    assert!(text(&out).contains("replayed 1 intents: identical"), "{}", text(&out));
}

#[test]
fn a_repl_reset_ends_the_recording_and_a_grant_that_changes_nothing_does_not() {
    // A counter: its instance remembers. A reset the trace did not see made the replay diverge.
    let counter = repo().join("std-host/fixtures/repl_counter.wat").display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let trace = dir.path().join("c.trace").display().to_string();
    let entries =
        format!(":grant vault:read\n:record {trace}\ncount\n:grant vault:read\ncount\n:reset\ncount\n:stop\n");
    let out = tdm_in(&ws, &["repl", &counter], Some(&entries));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[3]["recordingStopped"], false, "an unchanged grant: {}", lines[3]);
    assert_eq!(lines[5]["recordingStopped"], true, "the reset: {}", lines[5]);
    assert!(text(&out).contains("recorded 2 intent(s)"), "{}", text(&out));
    let out = tdm_in(&ws, &["replay", &trace], None);
    assert!(text(&out).contains("replayed 2 intents: identical"), "{}", text(&out));
}

/// Installs and approves the hub's echo plugin in `ws`.
fn install_echo(ws: &Path) {
    let hub = repo().join("examples/hub").display().to_string();
    let ws_arg = ws.display().to_string();
    for args in [vec!["install", "--allow-unsigned", "echo", "--hub", &hub], vec!["approve", "echo", "--yes"]] {
        let mut all = args.clone();
        all.extend(["--workspace", &ws_arg]);
        let out = tdm_in(ws, &all, None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
}

#[test]
fn call_records_an_installed_plugin_and_replay_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    install_echo(&ws);
    let trace = dir.path().join("call.trace").display().to_string();
    let out = tdm_in(&ws, &["call", "echo", "greet", "--params", r#"{"name":"Ada"}"#, "--record", &trace], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = tdm_in(&ws, &["replay", &trace], None);
    assert!(text(&out).contains("replayed 1 intents: identical"), "{}", text(&out));
    // The trace's policy is the installed plugin's Lazy mode, which validates a function only
    // when it is called: another module given on purpose is validated whole first, so one with
    // an invalid function it never calls is refused, not "identical".
    let echo_text = std::fs::read_to_string(echo()).unwrap();
    let end = echo_text.rfind(')').unwrap();
    let bad = format!("{}  (func $bad (result i32) i64.const 0)\n)", &echo_text[..end]);
    let bad_path = dir.path().join("echo_bad.wat");
    std::fs::write(&bad_path, bad).unwrap();
    let out = tdm_in(&ws, &["replay", &trace, "--plugin", &bad_path.display().to_string()], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("type mismatch"), "{}", text(&out));
}

#[test]
fn a_net_fetch_replays_with_no_server_running() {
    use std::io::{BufRead, BufReader};
    use std::net::TcpListener;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap_or(0) > 2 {
            line.clear();
        }
        let body = "served once";
        let mut stream = stream;
        write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
    });
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let forward = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/forward.wat").display().to_string();
    let trace = dir.path().join("fetch.trace").display().to_string();
    let request =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"net.fetch","params":{{"url":"http://127.0.0.1:{port}/x"}}}}"#);
    let out = tdm_in(
        &ws,
        &["run", &forward, "forward", "--params", &request, "--grant", "network:127.0.0.1", "--record", &trace],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("served once"), "{}", text(&out));
    server.join().unwrap();
    // The server is gone and replay grants nothing on the command line: the answer comes from
    // the trace.
    let out = tdm_in(&ws, &["replay", &trace], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("replayed 1 intents: identical"), "{}", text(&out));
}

/// A plugin whose intent never ends on its own: only fuel (or a deadline) stops it.
const SPIN: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 4096)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (loop $spin (br $spin))
    i32.const 0))"#;

#[test]
fn a_forged_trace_naming_an_endless_budget_is_stopped_by_the_replay_limit() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let plugin = dir.path().join("spin.wat");
    std::fs::write(&plugin, SPIN).unwrap();
    let trace = dir.path().join("spin.trace");
    let recorded = tdm_in(
        &ws,
        &["run", &plugin.display().to_string(), "spin", "--fuel", "100000", "--record", &trace.display().to_string()],
        None,
    );
    assert_eq!(recorded.status.code(), Some(1), "{}", text(&recorded));
    assert!(text(&recorded).contains("fuel_exhausted"), "{}", text(&recorded));
    // The trace as a forger would write it: a budget no replay could spend, a deadline of days.
    let mut forged = contour_core::Trace::decode(&std::fs::read(&trace).unwrap()).unwrap();
    forged.header.policy.fuel_per_intent = u64::MAX;
    forged.header.policy.timeout_ms = 86_400_000;
    std::fs::write(&trace, forged.encode().unwrap()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["replay", &trace.display().to_string(), "--timeout", "0.5"])
        .env("TDM_WORKSPACE", &ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdm runs");
    // A hang guard only: without the replay limit the replay would spin for u64::MAX fuel.
    let mut waited = 0;
    while child.try_wait().expect("tdm can be waited for").is_none() {
        if waited >= 600 {
            let _ = child.kill();
            panic!("tdm replay of a forged trace was still running after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
    let out = child.wait_with_output().expect("tdm ends");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("the replay was stopped after 0.5 s, during intent 1"), "{}", text(&out));
    assert!(text(&out).contains("--timeout"), "{}", text(&out));
}

/// A plugin that grows its table by two billion elements (refused at the policy's 100,000).
const TABLE_GROW: &str = r#"(module
  (memory (export "memory") 1)
  (table 0 funcref)
  (data (i32.const 0) "\22\00\00\00{\"status\":\"completed\",\"output\":1}")
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (drop (table.grow (ref.null func) (i32.const 2000000000)))
    i32.const 0))"#;

/// A change made to a trace's policy record.
type Forge = fn(&mut contour_core::PolicyRecord);

#[test]
fn a_forged_trace_naming_limits_above_the_hosts_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let plugin = dir.path().join("grow.wat");
    std::fs::write(&plugin, TABLE_GROW).unwrap();
    let trace = dir.path().join("grow.trace");
    let trace_arg = trace.display().to_string();
    let recorded = tdm_in(&ws, &["run", &plugin.display().to_string(), "grow", "--record", &trace_arg], None);
    assert_eq!(recorded.status.code(), Some(1), "{}", text(&recorded));
    assert!(text(&recorded).contains("resource_limit_exceeded"), "{}", text(&recorded));
    let replayed = tdm_in(&ws, &["replay", &trace_arg], None);
    assert_eq!(replayed.status.code(), Some(0), "the honest trace replays: {}", text(&replayed));
    let honest = std::fs::read(&trace).unwrap();
    // Each forgery would make the replay allocate or run what `tdm run` never allows: a table of
    // 4e9 elements (about 32 GB), a start function run in one piece for u64::MAX fuel, a fuel
    // slice that never reaches the stop check.
    let forgeries: [(&str, Forge); 3] = [
        ("max_table_elements", |p| p.max_table_elements = 4_000_000_000),
        ("start_fuel", |p| p.start_fuel = u64::MAX),
        ("fuel_slice", |p| p.fuel_slice = u64::MAX),
    ];
    for (field, forge) in forgeries {
        let mut forged = contour_core::Trace::decode(&honest).unwrap();
        forge(&mut forged.header.policy);
        std::fs::write(&trace, forged.encode().unwrap()).unwrap();
        let out = tdm_in(&ws, &["replay", &trace_arg], None);
        assert_eq!(out.status.code(), Some(1), "{field}: {}", text(&out));
        assert!(text(&out).contains(&format!("policy field `{field}`")), "{field}: {}", text(&out));
        assert!(text(&out).contains("above the"), "{field}: {}", text(&out));
    }
    // Memory above the replay's ceiling is refused with the flag that allows it.
    let mut forged = contour_core::Trace::decode(&honest).unwrap();
    forged.header.policy.max_memory_bytes = 1 << 30;
    std::fs::write(&trace, forged.encode().unwrap()).unwrap();
    let out = tdm_in(&ws, &["replay", &trace_arg], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("--max-memory 1073741824"), "{}", text(&out));
    let allowed = tdm_in(&ws, &["replay", &trace_arg, "--max-memory", "1GiB"], None);
    // The recorded run had 64 MiB: the module loads, its intent replays the same outcome.
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed));
}

#[test]
fn a_record_path_that_cannot_be_written_is_one_error_before_the_plugin_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    install_echo(&ws);
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let missing = dir.path().join("missing/x.trace").display().to_string();
    let (folder, fifo) = (dir.path().display().to_string(), fifo.display().to_string());
    let echo = echo();
    let runs: [(&[&str], &str, &str); 4] = [
        (&["run", &echo, "greet"], &missing, "does not exist"),
        (&["call", "echo", "greet"], &missing, "does not exist"),
        (&["run", &echo, "greet"], &folder, "it is a folder"),
        // Refused from its metadata: opening a FIFO with no reader could block.
        (&["run", &echo, "greet"], &fifo, "not a regular file"),
    ];
    for (command, record, why) in runs {
        let mut args = command.to_vec();
        args.extend(["--record", record, "--json"]);
        let out = tdm_in(&ws, &args, None);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert_eq!(stdout.lines().count(), 1, "one JSON document, not an outcome and an error: {stdout}");
        let error: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!((&error["status"], &error["error"]), (&Value::from("error"), &Value::from("usage")), "{error}");
        assert!(error["message"].as_str().unwrap().contains(why), "{args:?}: {error}");
        assert!(!text(&out).contains("[plugin stdout]"), "the plugin must not run: {}", text(&out));
    }
    assert!(!Path::new(&missing).exists() && !dir.path().join("missing").exists());
    // The REPL refuses `:record` at once, not at `:stop` after the session's intents ran.
    let entries = format!(":record {missing}\ngreet\n:stop\n");
    let out = tdm_in(&ws, &["repl", &echo], Some(&entries));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "{}", text(&out));
    assert_eq!(lines[0]["status"], "error", "{}", text(&out));
    assert!(lines[0]["message"].as_str().unwrap().contains("does not exist"), "{}", text(&out));
    assert_eq!(lines[1]["status"], "completed");
    assert!(lines[2]["message"].as_str().unwrap().contains("not recording"), "{}", text(&out));
    assert!(!text(&out).contains("recording was lost"), "{}", text(&out));
}

#[test]
fn a_record_path_naming_a_file_that_is_not_a_trace_never_overwrites_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    install_echo(&ws);
    let module = dir.path().join("echo.wat");
    std::fs::copy(echo(), &module).unwrap();
    let before = std::fs::read(&module).unwrap();
    let audit = dir.path().join("audit.jsonl");
    std::fs::write(&audit, "{}\n").unwrap();
    let (module_arg, audit_arg) = (module.display().to_string(), audit.display().to_string());
    for record in [&module_arg, &audit_arg, &ws.join("state.json").display().to_string()] {
        let original = std::fs::read(record).unwrap();
        let run = vec!["run", &module_arg, "greet", "--audit", &audit_arg];
        for command in [run, vec!["call", "echo", "greet"]] {
            let mut args = command.clone();
            args.extend(["--record", record.as_str()]);
            let out = tdm_in(&ws, &args, None);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
            // Refused as another output of the command (the audit log, the state) or as a
            // file that is not a trace (the module).
            let refused = ["is not a trace, so it is not overwritten", "another output of this command"];
            assert!(refused.iter().any(|why| text(&out).contains(why)), "{}", text(&out));
            assert!(!text(&out).contains("[plugin stdout]"), "the plugin must not run: {}", text(&out));
        }
        assert_eq!(std::fs::read(record).unwrap(), original, "{record} is as it was");
    }
    assert_eq!(std::fs::read(&module).unwrap(), before);
    // A trace is overwritten by a new recording, as before.
    let trace = dir.path().join("t.trace").display().to_string();
    for _ in 0..2 {
        let out = tdm_in(&ws, &["run", &module_arg, "greet", "--record", &trace], None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
}

/// `tdm ARGS` run in the folder `cwd`, stdin empty.
fn tdm_at(cwd: &Path, workspace: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(args)
        .current_dir(cwd)
        .env("TDM_WORKSPACE", workspace)
        .stdin(Stdio::null())
        .output()
        .expect("tdm runs")
}

#[test]
fn a_trace_recorded_in_another_folder_finds_its_module_from_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::copy(echo(), sub.join("e.wat")).unwrap();
    let out = tdm_at(&sub, &ws, &["run", "e.wat", "greet", "--record", "../rel.trace", "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let trace = dir.path().join("rel.trace");
    let recorded = contour_core::Trace::decode(&std::fs::read(&trace).unwrap()).unwrap();
    assert_eq!(recorded.header.module, "sub/e.wat", "the path from the trace's folder");
    // From the trace's folder, from the recording folder and from a third one.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    for (cwd, trace_arg) in
        [(dir.path(), "rel.trace"), (sub.as_path(), "../rel.trace"), (other.as_path(), "../rel.trace")]
    {
        let out = tdm_at(cwd, &ws, &["replay", trace_arg, "--json"]);
        assert_eq!(out.status.code(), Some(0), "from {}: {}", cwd.display(), text(&out));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((&report["identical"], &report["moduleIsRecorded"]), (&Value::from(true), &Value::from(true)));
    }
    // A trace of before, holding the path as typed in the recording folder, still replays from
    // there, even with another module of that name beside the trace: the recorded hash decides.
    let mut old = recorded.clone();
    old.header.module = "e.wat".into();
    std::fs::write(&trace, old.encode().unwrap()).unwrap();
    std::fs::write(dir.path().join("e.wat"), RANDOM).unwrap();
    let out = tdm_at(&sub, &ws, &["replay", "../rel.trace", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&report["identical"], &report["module"]), (&Value::from(true), &Value::from("e.wat")), "{report}");
    // A module found nowhere: the error says where it looked and how to name it.
    let out = tdm_at(dir.path(), &ws, &["replay", "rel.trace", "--json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let error: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(out.status.code(), Some(1), "the e.wat beside the trace is not the recorded one: {error}");
    std::fs::remove_file(dir.path().join("e.wat")).unwrap();
    let out = tdm_at(&other, &ws, &["replay", "../rel.trace", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(error["message"].as_str().unwrap().contains("cannot read e.wat: no such file"), "{error}");
    assert!(error["hint"].as_str().unwrap().contains("--plugin PATH"), "{error}");
}
