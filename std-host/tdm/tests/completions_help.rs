//! Shell completions generate for bash, zsh and fish; `--help` shows defaults and examples, and
//! each subcommand's help says what its shared limit flags do there;
//! every subcommand's `--version` is tdm's; output is plain when stdout is not a terminal.

#[path = "support/tdm.rs"]
mod support;

use support::{stderr, tdm, text};

#[test]
fn completions_generate_for_bash_zsh_and_fish() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, marker) in [("bash", "complete -F"), ("zsh", "#compdef tdm"), ("fish", "complete -c tdm")] {
        let out = tdm(dir.path(), &["completions", shell], b"");
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out));
        let script = String::from_utf8(out.stdout).expect("UTF-8");
        assert!(script.contains(marker), "{shell}");
        for word in ["run", "call", "repl", "inspect", "completions", "max-memory", "params"] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    let out = tdm(dir.path(), &["completions", "tcsh"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_shows_defaults_and_examples() {
    let dir = tempfile::tempdir().unwrap();
    for subcommand in ["run", "call", "repl", "exec"] {
        let help = String::from_utf8(tdm(dir.path(), &[subcommand, "--help"], b"").stdout).unwrap();
        for expected in
            ["--fuel", "--timeout", "--max-memory", "--stats", "[default: 5s", "[default: 64MiB", "Examples:"]
        {
            assert!(help.contains(expected), "{subcommand} --help lacks {expected}:\n{help}");
        }
        // A plugin's default budget; a command's scales with its deadline.
        let plugin_budget = help.contains("[default: 2_000_000_000");
        assert_eq!(plugin_budget, subcommand != "exec", "{subcommand} --help:\n{help}");
    }
    let run = String::from_utf8(tdm(dir.path(), &["run", "--help"], b"").stdout).unwrap();
    assert!(run.contains("@FILE") && run.contains("[default: {}]"), "{run}");
    let top = String::from_utf8(tdm(dir.path(), &["--help"], b"").stdout).unwrap();
    assert!(top.contains("Examples:") && top.contains("completions"), "{top}");
}

/// The help line of `flag` in `help`.
fn flag_line<'a>(help: &'a str, flag: &str) -> &'a str {
    help.lines().find(|l| l.trim_start().starts_with(flag)).unwrap_or_else(|| panic!("no {flag}:\n{help}"))
}

#[test]
fn each_subcommand_describes_the_shared_limit_flags_as_it_applies_them() {
    let dir = tempfile::tempdir().unwrap();
    let exec = String::from_utf8(tdm(dir.path(), &["exec", "--help"], b"").stdout).unwrap();
    // The command default budget (std-host/sdk/src/command.rs), not a plugin's or an approval's.
    let fuel = flag_line(&exec, "--fuel");
    assert!(fuel.contains("100_000_000_000 per second of the deadline"), "{fuel}");
    assert!(!fuel.contains("approved") && !fuel.contains("2_000_000_000,"), "{fuel}");
    assert!(!flag_line(&exec, "--timeout").contains("approved"), "{exec}");
    // exec's --stats prints fuel_used, fuel_budget, peak_memory_bytes, elapsed_us.
    let stats = flag_line(&exec, "--stats");
    assert!(
        stats.contains("fuel budget") && !stats.contains("launch fuel") && !stats.contains("host calls"),
        "{stats}"
    );
    assert!(flag_line(&exec, "--json").contains("stderr"), "{exec}");
    // The REPL has no --json.
    let repl = String::from_utf8(tdm(dir.path(), &["repl", "--help"], b"").stdout).unwrap();
    assert!(!repl.contains("--json"), "{repl}");
    assert!(!flag_line(&repl, "--stats").contains("JSON"), "{repl}");
    // run still says what run's --stats prints.
    let run = String::from_utf8(tdm(dir.path(), &["run", "--help"], b"").stdout).unwrap();
    assert!(flag_line(&run, "--stats").contains("launch fuel"), "{run}");
}

#[test]
fn version_names_the_commit_wasmi_and_its_features() {
    let dir = tempfile::tempdir().unwrap();
    let version = String::from_utf8(tdm(dir.path(), &["--version"], b"").stdout).unwrap();
    // The commit is the checkout's (short hash), or "unknown" where git cannot say.
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    assert!(version.contains(&format!("(commit {commit}, ")), "{version}");
    assert!(version.contains("wasmi 2."), "{version}");
    assert!(version.contains("wasmi features: ") && version.contains("deterministic"), "{version}");
}

#[test]
fn help_opens_with_what_tdm_is() {
    let dir = tempfile::tempdir().unwrap();
    let help = String::from_utf8(tdm(dir.path(), &["--help"], b"").stdout).unwrap();
    let first = help.lines().next().unwrap_or_default();
    assert!(first.starts_with("tdm: run untrusted WebAssembly plugins in a sandbox"), "{help}");
    assert!(!help.contains("std embedding"), "{help}");
}

#[test]
fn every_version_flag_says_tdm() {
    let dir = tempfile::tempdir().unwrap();
    for args in [vec!["--version"], vec!["run", "--version"], vec!["hub", "list", "--version"]] {
        let out = tdm(dir.path(), &args, b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let version = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(version.starts_with(&format!("tdm {} (commit ", env!("CARGO_PKG_VERSION"))), "{args:?}: {version}");
        assert_eq!(version.lines().count(), 1, "{version}");
    }
    assert!(stderr(&tdm(dir.path(), &["frobnicate"], b"")).contains("frobnicate"));
}

#[test]
fn every_subcommand_shows_examples() {
    let dir = tempfile::tempdir().unwrap();
    let subcommands: [&[&str]; 23] = [
        &["run"],
        &["call"],
        &["repl"],
        &["exec"],
        &["inspect"],
        &["hub", "list"],
        &["hub", "add"],
        &["hub", "remove"],
        &["hub", "init"],
        &["hub", "publish"],
        &["new"],
        &["key", "generate"],
        &["pack"],
        &["install"],
        &["outdated"],
        &["upgrade"],
        &["approve"],
        &["revoke"],
        &["uninstall"],
        &["workspace", "status"],
        &["audit"],
        &["replay"],
        &["completions"],
    ];
    for subcommand in subcommands {
        let mut args = subcommand.to_vec();
        args.push("--help");
        let help = String::from_utf8(tdm(dir.path(), &args, b"").stdout).unwrap();
        assert!(help.contains("Examples:\n  tdm "), "{subcommand:?} --help has no examples:\n{help}");
    }
}
