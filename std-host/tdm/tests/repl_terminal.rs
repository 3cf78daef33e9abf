//! `tdm repl` on a real terminal (a pseudo-terminal driven with rexpect): Ctrl-C cancels a
//! looping intent, reports it as cancelled and keeps the session (the next entries work);
//! Tab completes the intents the module declares; an entry with open JSON brackets goes on
//! over lines.

use std::path::Path;
use std::process::Command;

/// The REPL counter fixture, changed so that `spin` loops forever (instead of `trap`
/// trapping), and declaring its intents in a `tdm.intents` section.
fn spinning_counter(dir: &Path) -> String {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/repl_counter.wat");
    let wat = std::fs::read_to_string(fixture).unwrap();
    let wat = wat
        .replace(r#""\"method\":\"trap\"""#, r#""\"method\":\"spin\"""#)
        .replace("(then (unreachable))", "(then (loop (br 0)))")
        .replacen(
            "(module",
            r#"(module (@custom "tdm.intents" "[{\"name\":\"count\"},{\"name\":\"spin\",\"description\":\"never ends\"}]")"#,
            1,
        );
    assert!(wat.contains("(loop (br 0))") && wat.contains("\\\"method\\\":\\\"spin\\\""));
    let path = dir.join("counter.wat");
    std::fs::write(&path, wat).unwrap();
    path.display().to_string()
}

fn repl(dir: &Path, module: &str) -> rexpect::session::PtySession {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tdm"));
    // A deadline and a budget far past the test's patience: only Ctrl-C can end `spin` here.
    command.args(["repl", module, "--timeout", "600", "--fuel", "100_000_000_000_000"]);
    command.env("TDM_WORKSPACE", dir.join("ws")).env("TERM", "xterm");
    let mut session = rexpect::session::spawn_command(command, Some(30_000)).expect("tdm repl starts in a pty");
    session.exp_string("counter> ").expect("the prompt");
    session
}

#[test]
fn ctrl_c_cancels_the_running_intent_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let module = spinning_counter(dir.path());
    let mut p = repl(dir.path(), &module);
    p.send_line("count").unwrap();
    p.exp_string("\"count\": 1").unwrap();
    p.exp_string("counter> ").unwrap();
    p.send_line("spin").unwrap();
    // Let the intent get going, then interrupt it.
    std::thread::sleep(std::time::Duration::from_millis(500));
    p.send_control('c').unwrap();
    p.exp_string("cancelled (Ctrl-C)").expect("the intent is reported as cancelled");
    p.exp_string("counter> ").expect("the session goes on");
    p.send_line(":stats").unwrap();
    p.exp_string("intents run: 2 (1 failed, 1 cancelled)").unwrap();
    p.exp_string("counter> ").unwrap();
    // The cancelled intent's instance was discarded: the next one starts at 1 again.
    p.send_line("count").unwrap();
    p.exp_string("\"count\": 1").unwrap();
    p.exp_string("counter> ").unwrap();
    p.send_line(":quit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn tab_completes_declared_intents_and_entries_go_on_over_lines() {
    let dir = tempfile::tempdir().unwrap();
    let module = spinning_counter(dir.path());
    let mut p = repl(dir.path(), &module);
    // Tab completes "co" to the declared "count"; Enter runs it.
    p.send("co").unwrap();
    p.send("\t").unwrap();
    p.send_line("").unwrap();
    p.exp_string("\"count\": 1").expect("Tab completed `count`");
    p.exp_string("counter> ").unwrap();
    // An open bracket continues the entry on the next line.
    p.send_line("count {").unwrap();
    p.send_line("  \"a\": [1,").unwrap();
    p.send_line("  2]}").unwrap();
    p.exp_string("\"count\": 2").expect("the three lines ran as one intent");
    p.exp_string("counter> ").unwrap();
    p.send_line(":quit").unwrap();
    p.exp_eof().unwrap();
}
