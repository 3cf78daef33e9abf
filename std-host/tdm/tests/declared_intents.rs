//! Where users look for a plugin's intents, through the built binary: a bare module's
//! `tdm.intents` section in `inspect` (text and JSON) and the REPL; a package's `[[intents]]`
//! in `approve`, `hub list`, `workspace status` and the REPL. An installed plugin runs only
//! the intents its plugin.toml declares and never above its approved limits; `:reload` picks
//! up a changed file and refuses an installed module changed without approval.

#[path = "support/tdm.rs"]
mod support;

use serde_json::{json, Value};
use support::{install_approved, json, package, stderr, tdm, text, write, Repl, OK};

/// OK with a `tdm.intents` section declaring greet and sum.
fn declared_module() -> String {
    OK.replacen(
        "(module",
        r#"(module (@custom "tdm.intents" "[{\"name\":\"greet\",\"description\":\"Says hello \u{65e5}\u{672c}\"},{\"name\":\"sum\",\"description\":\"Adds numbers\"}]")"#,
        1,
    )
}

/// Every stdout line of `out` as JSON.
fn lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect()
}

#[test]
fn inspect_and_the_repl_show_a_modules_declared_intents() {
    let dir = tempfile::tempdir().unwrap();
    let module = write(dir.path(), "declared.wat", declared_module());
    let out = tdm(dir.path(), &["inspect", &module, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = json(&out);
    assert_eq!(report["intents"]["source"], "tdm.intents section");
    assert_eq!(report["intents"]["declared"][0], json!({"name": "greet", "description": "Says hello 日本"}));
    assert_eq!(report["intents"]["declared"][1]["name"], "sum");

    let out = tdm(dir.path(), &["inspect", &module], b"");
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(shown.contains("intents (declared in the tdm.intents section):"), "{shown}");
    let greet = shown.lines().find(|l| l.contains("greet")).unwrap();
    let sum = shown.lines().find(|l| l.contains("  sum")).unwrap();
    assert_eq!(greet.find("Says"), sum.find("Adds"), "descriptions align:\n{shown}");

    let out = tdm(dir.path(), &["repl", &module], b":intents\nother\n");
    let lines = lines(&out);
    assert_eq!(lines[0]["intents"][1], json!({"name": "sum", "description": "Adds numbers"}));
    assert_eq!(lines[1]["status"], "completed", "a module file still runs any METHOD");

    let malformed =
        write(dir.path(), "bad.wat", OK.replacen("(module", r#"(module (@custom "tdm.intents" "{oops")"#, 1));
    let report = json(&tdm(dir.path(), &["inspect", &malformed, "--json"], b""));
    assert!(report["intents"]["problem"].as_str().unwrap().contains("not JSON"), "{report}");
    assert_eq!(report["verdict"], "accepted", "a bad declaration never refuses a module");
}

#[test]
fn a_packages_intents_show_wherever_an_operator_looks() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let pkg = package(dir.path(), "pkg", "ok", OK, &[("ping", "Answers ok"), ("status", "Reports the state")], "");
    let out = tdm(&ws, &["install", "--allow-unsigned", &pkg.display().to_string()], b"");
    assert!(String::from_utf8_lossy(&out.stdout).contains("intents: ping, status"), "{}", text(&out));
    let out = tdm(&ws, &["approve", "ok", "--yes"], b"");
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(shown.contains("  ping    Answers ok") && shown.contains("  status  Reports the state"), "{shown}");
    let status = json(&tdm(&ws, &["workspace", "status", "--json"], b""));
    assert_eq!(status["plugins"][0]["intents"][1]["description"], "Reports the state");
    let table = String::from_utf8_lossy(&tdm(&ws, &["workspace", "status"], b"").stdout).into_owned();
    assert!(table.contains("INTENTS") && table.contains("ping,status"), "{table}");
    let out = tdm(&ws, &["repl", "ok"], b":intents\n");
    assert_eq!(lines(&out)[0]["intents"][0], json!({"name": "ping", "description": "Answers ok"}));
    assert!(stderr(&out).contains("Reports the state"), "{}", stderr(&out));

    let hub = support::repo().join("examples/hub").display().to_string();
    let listed = String::from_utf8_lossy(&tdm(&ws, &["hub", "list", "--hub", &hub], b"").stdout).into_owned();
    assert!(listed.contains("\nID ") && listed.contains("INTENTS") && listed.contains("greet"), "{listed}");
}

#[test]
fn an_installed_plugin_runs_only_its_declared_intents() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    install_approved(&ws, &package(dir.path(), "pkg", "ok", OK, &[("ping", "Answers ok")], ""));
    let out = tdm(&ws, &["call", "ok", "ping"], b"");
    assert_eq!(json(&out)["output"]["ok"], true);
    let out = tdm(&ws, &["call", "ok", "steal"], b"");
    assert_eq!(out.status.code(), Some(1));
    let outcome = json(&out);
    assert_eq!(outcome["blockedReason"], "not_approved");
    assert!(outcome["message"].as_str().unwrap().contains("it declares: ping"), "{outcome}");
    // The plugin is approved: the outcome says the intent is outside the approval, not that
    // there is none, and does not send the operator to approve it again.
    assert!(!outcome["message"].as_str().unwrap().contains("no valid operator approval"), "{outcome}");
    assert!(outcome["recoveryHint"].as_str().unwrap().contains("declared intents"), "{outcome}");
    // The REPL refuses it the same way, raw requests included.
    let input = "steal\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"steal\",\"params\":{}}\nping\n";
    let statuses: Vec<Value> =
        lines(&tdm(&ws, &["repl", "ok"], input.as_bytes())).into_iter().map(|l| l["blockedReason"].clone()).collect();
    assert_eq!(statuses, [json!("not_approved"), json!("not_approved"), Value::Null]);

    let none = dir.path().join("ws2");
    install_approved(&none, &package(dir.path(), "pkg2", "bare", OK, &[], ""));
    let outcome = json(&tdm(&none, &["call", "bare", "ping"], b""));
    assert!(outcome["message"].as_str().unwrap().contains("declares no intents"), "{outcome}");
}

#[test]
fn an_installed_plugins_limits_never_exceed_its_approval() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let policy = "[policy]\nfuel_per_intent = 1000000\nmax_memory_bytes = 1048576\n";
    install_approved(&ws, &package(dir.path(), "pkg", "ok", OK, &[("ping", "ok")], policy));
    for (flag, value) in [("--fuel", "1000001"), ("--max-memory", "2MiB"), ("--timeout", "10")] {
        for command in [vec!["call", "ok", "ping"], vec!["repl", "ok"]] {
            let mut args = command.clone();
            args.extend_from_slice(&[flag, value]);
            let out = tdm(&ws, &args, b"ping\n");
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
            assert!(stderr(&out).contains("is above what the approval allows"), "{args:?}: {}", stderr(&out));
        }
    }
    let out = tdm(&ws, &["call", "ok", "ping", "--fuel", "500000", "--max-memory", "512KiB"], b"");
    assert_eq!(out.status.code(), Some(0), "lower is fine: {}", text(&out));
    let out = tdm(&ws, &["repl", "ok"], b":fuel 2000000\n:fuel\n:fuel 10\n:fuel\nping\n");
    let lines = lines(&out);
    assert_eq!(lines[0]["status"], "error", "{lines:?}");
    assert!(lines[0]["message"].as_str().unwrap().contains(":fuel 2000000 is above what the approval allows"));
    assert_eq!(lines[1]["fuelPerIntent"], 1_000_000, "{lines:?}");
    assert_eq!(lines[3]["fuelPerIntent"], 10, "lower is fine: {lines:?}");
    assert_eq!(lines[4]["status"], "completed", "{lines:?}");
}

#[test]
fn reload_reads_a_changed_file_and_refuses_an_unapproved_change() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("p.wat");
    std::fs::write(&module, OK).unwrap();
    let changed = OK.replace(
        "\\2b\\00\\00\\00{\\\"status\\\":\\\"completed\\\",\\\"output\\\":{\\\"ok\\\":true}}",
        "\\2c\\00\\00\\00{\\\"status\\\":\\\"completed\\\",\\\"output\\\":{\\\"ok\\\":false}}",
    );
    assert_ne!(changed, OK);
    let mut repl = Repl::start(dir.path(), &module.display().to_string());
    assert_eq!(repl.next("x")["output"]["ok"], true);
    std::fs::write(&module, &changed).unwrap();
    assert_eq!(repl.next("x")["output"]["ok"], true, "the session keeps the module it loaded");
    let reloaded = repl.next(":reload");
    assert_eq!((reloaded["status"].as_str(), reloaded["changed"].as_bool()), (Some("ok"), Some(true)), "{reloaded}");
    assert_eq!(repl.next("x")["output"]["ok"], false, "after :reload the new module runs");
    repl.finish();

    // Installed: the module changed on disk without a new approval: refused, the old one runs.
    let ws = dir.path().join("ws");
    install_approved(&ws, &package(dir.path(), "pkg", "ok", OK, &[("x", "ok")], ""));
    let mut repl = Repl::start(&ws, "ok");
    assert_eq!(repl.next("x")["output"]["ok"], true);
    std::fs::write(ws.join("packages/ok/1.0.0/dist/plugin.wat"), &changed).unwrap();
    let refused = repl.next(":reload");
    assert_eq!(refused["status"], "error", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("approval"), "{refused}");
    assert_eq!(repl.next("x")["output"]["ok"], true, "the approved module keeps running");
    repl.finish();
}
