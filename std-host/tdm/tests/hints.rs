//! Errors that read the user's mind, through the built binary: every misreading the CLI issue
//! lists gets a message naming what the user most likely meant and the command to run, every
//! flag a hint names exists on that subcommand, and a `.wat` error shows FILE:LINE:COL and
//! the source line with the same exit code in every subcommand; a command `tdm exec` stopped at
//! a limit gets the flag that raises it.

#[path = "support/tdm.rs"]
mod support;

use std::path::Path;
use support::{echo, install_approved, json, package, stderr, tdm, text, write, OK, SPIN};

/// Every `--flag` named in `text` is a flag of `tdm SUBCOMMAND` (by its `--help`).
fn flags_exist(ws: &Path, subcommand: &[&str], text: &str) {
    let mut args = subcommand.to_vec();
    args.push("--help");
    let help = String::from_utf8_lossy(&tdm(ws, &args, b"").stdout).into_owned();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        if let Some(flag) = word.strip_prefix("--").filter(|f| !f.is_empty()) {
            assert!(help.contains(&format!("--{flag}")), "`--{flag}` (in {text:?}) is not a flag of {subcommand:?}");
        }
    }
}

/// A workspace with the OK plugin installed (and approved) as `echo`.
fn workspace_with_echo(dir: &Path) -> std::path::PathBuf {
    let ws = dir.join("ws");
    install_approved(&ws, &package(dir, "pkg", "echo", OK, &[("greet", "answers ok")], ""));
    ws
}

#[test]
fn a_module_file_given_where_an_id_goes_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace_with_echo(dir.path());

    // `tdm repl missing.wasm`: no such file (not "not approved").
    let out = tdm(&ws, &["repl", "missing.wasm"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("cannot read missing.wasm: no such file"), "{}", text(&out));
    assert!(!text(&out).contains("not_approved"), "{}", text(&out));

    // `tdm call echo.wat greet`: a file is run with `tdm run`.
    let out = tdm(&ws, &["call", &echo(), "greet"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains(&format!("tdm run {} greet", echo())), "{}", text(&out));
    assert!(!text(&out).contains("not_approved"), "{}", text(&out));

    // `tdm run echo greet` for an installed id: use `tdm call`.
    let out = tdm(&ws, &["run", "echo", "greet"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("cannot read echo"), "{}", text(&out));
    assert!(
        stderr(&out).contains("`echo` is an installed plugin, not a module file: run it with `tdm call echo greet`")
    );

    // `tdm call ghost greet`: not installed; where to look (not "not approved", which would
    // send the operator to `tdm approve ghost`, refused for an id that is not installed).
    let out = tdm(&ws, &["call", "ghost", "greet"], b"");
    assert_eq!(out.status.code(), Some(2), "an id that names nothing is a usage error");
    assert!(stderr(&out).contains("no plugin `ghost` is installed"), "{}", text(&out));
    assert!(stderr(&out).contains("`tdm workspace status` lists the installed plugins"), "{}", text(&out));
    assert!(stderr(&out).contains("tdm run FILE greet"), "{}", text(&out));
    assert!(!text(&out).contains("not_approved") && !text(&out).contains("tdm approve"), "{}", text(&out));
    let out = tdm(&ws, &["call", "ghost", "greet", "--json"], b"");
    assert_eq!(json(&out)["error"], "usage", "{}", text(&out));
    // The REPL: the same, and a module file is opened by its path.
    let out = tdm(&ws, &["repl", "ghost"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no plugin `ghost` is installed"), "{}", text(&out));
    assert!(stderr(&out).contains("./ghost.wasm"), "{}", text(&out));
    assert!(!text(&out).contains("not_approved"), "{}", text(&out));
}

#[test]
fn install_of_a_hub_id_without_hub_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = tdm(dir.path(), &["install", "--allow-unsigned", "echo"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("`tdm install echo --hub NAME`"), "{}", text(&out));
    assert!(!stderr(&out).contains("plugin.toml"), "{}", text(&out));
    flags_exist(dir.path(), &["install"], &stderr(&out));
}

#[test]
fn a_command_given_to_run_and_a_plugin_given_to_exec_name_the_other_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let command = write(dir.path(), "cmd.wat", r#"(module (memory (export "memory") 1) (func (export "_start")))"#);
    let out = tdm(dir.path(), &["run", &command, "x"], b"");
    assert_eq!(out.status.code(), Some(1));
    let outcome = json(&out);
    assert_eq!(outcome["blockedReason"], "abi_mismatch");
    assert!(outcome["recoveryHint"].as_str().unwrap().contains("run it with `tdm exec FILE`"), "{outcome}");

    let out = tdm(dir.path(), &["exec", &echo()], b"");
    assert_eq!(out.status.code(), Some(125));
    assert!(
        stderr(&out).contains(&format!("run one of its intents with `tdm run {} METHOD`", echo())),
        "{}",
        stderr(&out)
    );

    let out = tdm(dir.path(), &["inspect", &command], b"");
    assert!(String::from_utf8_lossy(&out.stdout).contains("run it with `tdm exec"), "{}", text(&out));
    // Exec's own words for a plugin: not the plugin ABI's.
    let out = tdm(dir.path(), &["exec", &echo()], b"");
    assert!(stderr(&out).contains("The module is not a WASI command. missing export `_start`"), "{}", stderr(&out));

    // A command that also reads files: refused for its imports first, and still sent to exec.
    let reader = write(
        dir.path(),
        "reader.wat",
        r#"(module (import "wasi_snapshot_preview1" "path_open"
             (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
           (memory (export "memory") 1) (func (export "_start")))"#,
    );
    let outcome = json(&tdm(dir.path(), &["run", &reader, "x"], b""));
    assert_eq!(outcome["blockedReason"], "import_not_allowed", "{outcome}");
    assert!(outcome["recoveryHint"].as_str().unwrap().contains("run it with `tdm exec FILE`"), "{outcome}");
    // An Extism plugin: another ABI, said so.
    let extism = write(
        dir.path(),
        "extism.wat",
        r#"(module (import "extism:host/env" "input_length" (func (result i64)))
           (memory (export "memory") 1) (func (export "greet") (result i32) (i32.const 0)))"#,
    );
    let outcome = json(&tdm(dir.path(), &["run", &extism, "greet"], b""));
    assert!(outcome["recoveryHint"].as_str().unwrap().contains("This is an Extism plugin"), "{outcome}");
}

#[test]
fn hints_name_only_knobs_that_exist_where_the_user_is() {
    let dir = tempfile::tempdir().unwrap();
    let spin = write(dir.path(), "spin.wat", SPIN);
    // run: --fuel, --timeout, --max-memory exist, and the hint says so.
    let out = tdm(dir.path(), &["run", &spin, "x", "--fuel", "1000"], b"");
    let hint = json(&out)["recoveryHint"].as_str().unwrap().to_string();
    assert!(hint.contains("--fuel"), "{hint}");
    flags_exist(dir.path(), &["run"], &hint);

    // A request over the limit: no "raise the limit" (there is no such flag).
    let huge = write(dir.path(), "huge.json", format!("\"{}\"", "x".repeat(1024 * 1024 - 10)));
    let out = tdm(dir.path(), &["run", &echo(), "x", "--params", &format!("@{huge}")], b"");
    let outcome = json(&out);
    assert_eq!(outcome["blockedReason"], "request_too_large", "{outcome}");
    let hint = outcome["recoveryHint"].as_str().unwrap();
    assert!(!hint.contains("raise") && hint.contains("fixed"), "{hint}");

    // A memory limit below what the module declares: raise --max-memory, not "a smaller input".
    let big_memory =
        write(dir.path(), "mem.wat", OK.replace("(memory (export \"memory\") 1)", "(memory (export \"memory\") 4)"));
    let out = tdm(dir.path(), &["run", &big_memory, "x", "--max-memory", "128KiB"], b"");
    let outcome = json(&out);
    assert_eq!(outcome["blockedReason"], "memory_limit_exceeded", "{outcome}");
    let hint = outcome["recoveryHint"].as_str().unwrap();
    assert!(hint.contains("--max-memory") && !hint.contains("smaller input"), "{hint}");
    flags_exist(dir.path(), &["run"], hint);

    // The REPL: `:fuel`, not a flag it lacks.
    let out = tdm(dir.path(), &["repl", &spin, "--fuel", "1000"], b"x\n");
    let hint = json(&out)["recoveryHint"].as_str().unwrap().to_string();
    assert!(hint.contains(":fuel N") && !hint.contains("--fuel"), "{hint}");

    // call: an installed plugin's budget is its approval, and --fuel can only lower it.
    let ws = dir.path().join("ws");
    install_approved(&ws, &package(dir.path(), "pkg", "spin", SPIN, &[("x", "spins")], ""));
    let out = tdm(&ws, &["call", "spin", "x", "--fuel", "1000"], b"");
    let hint = json(&out)["recoveryHint"].as_str().unwrap().to_string();
    assert!(hint.contains("approved"), "{hint}");
    flags_exist(&ws, &["call"], &hint);
}

#[test]
fn a_command_stopped_at_a_limit_gets_the_exec_hint_and_is_called_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let spin = write(
        dir.path(),
        "spin.wat",
        r#"(module (memory (export "memory") 1) (func (export "_start") (loop (br 0))))"#,
    );
    // Fuel, as text on stderr.
    let out = tdm(dir.path(), &["exec", "--fuel", "1000", &spin], b"");
    assert_eq!(out.status.code(), Some(127), "{}", text(&out));
    let err = stderr(&out);
    assert!(err.contains("stopped: The command used up its fuel budget."), "{err}");
    let hint = err.lines().find_map(|l| l.strip_prefix("tdm: hint: ")).unwrap_or_else(|| panic!("no hint: {err}"));
    assert!(hint.contains("--fuel"), "{hint}");
    flags_exist(dir.path(), &["exec"], hint);
    // The deadline, as a JSON line on stderr.
    let out = tdm(dir.path(), &["exec", "--timeout", "200ms", "--json", &spin], b"");
    assert_eq!(out.status.code(), Some(127), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    assert_eq!(report["blockedReason"], "deadline_exceeded", "{report}");
    assert!(report["message"].as_str().unwrap().starts_with("The command ran past"), "{report}");
    let hint = report["hint"].as_str().unwrap_or_else(|| panic!("no hint: {report}"));
    assert!(hint.contains("--timeout"), "{hint}");
    flags_exist(dir.path(), &["exec"], hint);
    // Memory the module needs at start: raise --max-memory.
    let big = write(dir.path(), "big.wat", r#"(module (memory (export "memory") 4) (func (export "_start")))"#);
    let out = tdm(dir.path(), &["exec", "--max-memory", "128KiB", "--json", &big], b"");
    assert_eq!(out.status.code(), Some(125), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    assert_eq!(report["blockedReason"], "memory_limit_exceeded", "{report}");
    assert!(report["hint"].as_str().is_some_and(|h| h.contains("--max-memory")), "{report}");
}

#[test]
fn bad_flag_values_say_what_is_wanted() {
    let dir = tempfile::tempdir().unwrap();
    for (flags, expected) in [
        (["--fuel", "0"], "the fuel budget must be at least 1"),
        (["--fuel", "-1"], "`-1` is negative"),
        (["--max-memory", "1"], "at least 64KiB"),
        (["--max-memory", "64XB"], "e.g. 64MiB, 512KiB, 1GiB"),
        (["--timeout", "-1"], "more than 0"),
    ] {
        let mut args = vec!["run", echo().leak() as &str, "x"];
        args.extend_from_slice(&flags);
        let out = tdm(dir.path(), &args, b"");
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let err = stderr(&out);
        assert!(err.contains(expected), "{flags:?}: {err}");
        assert!(!err.contains("fuel_per_intent") && !err.contains("-- -1"), "{flags:?}: {err}");
    }
    // A file a flag names must be there, the vault's as the context's.
    for flag in ["--vault", "--context"] {
        let out = tdm(dir.path(), &["run", &echo(), "x", flag, "/nonexistent/file.json"], b"");
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", text(&out));
        assert!(stderr(&out).contains(&format!("{flag} /nonexistent/file.json: no such file")), "{}", stderr(&out));
    }
    // A --tool path that is there but is no module file says what it is.
    let out = tdm(dir.path(), &["run", &echo(), "x", "--tool", &format!("a={}", dir.path().display())], b"");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains(": a directory, not a regular file"), "{}", stderr(&out));
    #[cfg(unix)]
    {
        let fifo = dir.path().join("tool.fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let out = tdm(dir.path(), &["run", &echo(), "x", "--tool", &format!("a={}", fifo.display())], b"");
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(stderr(&out).contains(": a named pipe (FIFO), not a regular file"), "{}", stderr(&out));
    }
    let out = tdm(dir.path(), &["run", &echo(), "x", "--tool", "a=/nonexistent/tool.wasm"], b"");
    assert!(stderr(&out).contains("--tool a=/nonexistent/tool.wasm: no such file"), "{}", stderr(&out));
    // Sizes with units are taken.
    let out = tdm(dir.path(), &["run", &echo(), "x", "--max-memory", "64MiB", "--timeout", "500ms"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_wat_error_shows_file_line_column_and_the_line_with_one_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.wat", "(module\n  (memory (export \"memory\") 1)\n  (func oops)\n)\n");
    for args in [vec!["run", bad.as_str(), "x"], vec!["inspect", bad.as_str()], vec!["repl", bad.as_str()]] {
        let out = tdm(dir.path(), &args, b"");
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        let err = stderr(&out);
        assert!(err.contains(&format!("tdm: error: {bad}:3:9: ")), "{args:?}: {err}");
        assert!(err.contains("  3 |   (func oops)\n") && err.contains("    |         ^\n"), "{args:?}: {err}");
    }
    // The outcome's hint is about the text, not about rebuilding a binary.
    let outcome = json(&tdm(dir.path(), &["run", &bad, "x"], b""));
    let hint = outcome["recoveryHint"].as_str().unwrap();
    assert!(hint.contains("line and column") && !hint.contains("Rebuild"), "{outcome}");
    let out = tdm(dir.path(), &["exec", &bad], b"");
    assert_eq!(out.status.code(), Some(125), "exec keeps its own code for a module rejected at load");
    assert!(stderr(&out).contains(&format!("{bad}:3:9: ")), "{}", stderr(&out));
}

#[test]
fn inspect_json_of_a_broken_wat_is_json() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.wat", "(module\n  (func oops)\n)\n");
    let out = tdm(dir.path(), &["inspect", &bad, "--json"], b"");
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    assert_eq!(report["verdict"], "rejected");
    let failure = &report["failures"][0];
    assert_eq!(failure["blockedReason"], "invalid_module");
    assert_eq!((failure["line"].as_u64(), failure["column"].as_u64()), (Some(2), Some(9)));
    assert_eq!(failure["sourceLine"], "  (func oops)");
    assert_eq!(failure["file"], bad.as_str());
    for key in ["exports", "imports", "hostImports", "intents", "memory", "module"] {
        assert!(report.get(key).is_some(), "{key} is always there: {report}");
    }
}

#[test]
fn a_missing_wasm_beside_its_wat_names_the_wat() {
    let dir = tempfile::tempdir().unwrap();
    let wat = write(dir.path(), "echo.wat", std::fs::read_to_string(echo()).unwrap());
    let wasm = wat.replace("echo.wat", "echo.wasm");
    for args in [vec!["run", &wasm, "greet"], vec!["inspect", &wasm], vec!["exec", &wasm], vec!["repl", &wasm]] {
        let out = tdm(dir.path(), &args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(stderr(&out).contains(&format!("did you mean {wat}?")), "{args:?}: {}", text(&out));
    }
}

/// The `forward` fixture: the plugin sends its params as one host call and answers the host's
/// answer as its output.
fn forward() -> String {
    support::repo().join("std-host/fixtures/forward.wat").display().to_string()
}

#[test]
fn a_refusal_no_grant_lifts_never_sends_the_user_to_an_operator_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir(&dist).unwrap();
    write(dir.path(), "secret.txt", "outside");
    let audit = dir.path().join("audit.jsonl").display().to_string();
    for path in ["../secret.txt", "/etc/passwd"] {
        let call = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"dist.read","params":{{"path":"{path}"}}}}"#);
        let args =
            ["run", &forward(), "forward", "--params", &call, "--dist", dist.to_str().unwrap(), "--audit", &audit];
        let out = tdm(dir.path(), &args, b"");
        assert_eq!(out.status.code(), Some(0), "the plugin answers: {}", text(&out));
        let answer = &json(&out)["output"];
        assert_eq!(answer["blockedReason"], "forbidden", "{path}: {answer}");
        let hint = answer["recoveryHint"].as_str().unwrap();
        assert!(!hint.contains("Ask an operator") && !hint.contains("--grant"), "{path}: {hint}");
        let message = answer["message"].as_str().unwrap();
        assert!(message.contains("dist/") && !message.contains("outside\""), "{path}: {message}");
    }
    // A permission that exists still says who can grant it.
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"vault.read","params":{"name":"K"}}"#;
    let out = tdm(dir.path(), &["run", &forward(), "forward", "--params", call], b"");
    let answer = &json(&out)["output"];
    assert_eq!(answer["blockedReason"], "permission_denied", "{answer}");
    assert!(answer["recoveryHint"].as_str().unwrap().contains("grant"), "{answer}");
    // The audit says the refusals were not granted, for the reason the plugin was told.
    let log = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<serde_json::Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let reads: Vec<_> = lines.iter().filter(|l| l["method"] == "dist.read").collect();
    assert_eq!(reads.len(), 2, "{log}");
    assert!(reads.iter().all(|l| l["granted"] == false && l["reason"] == "forbidden"), "{log}");
}
