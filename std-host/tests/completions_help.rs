//! Shell completions generate for bash, zsh and fish; `--help` shows defaults and examples;
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
        for expected in [
            "--fuel",
            "--timeout",
            "--max-memory",
            "--stats",
            "[default: 2_000_000_000",
            "[default: 5s",
            "[default: 64MiB",
            "Examples:",
        ] {
            assert!(help.contains(expected), "{subcommand} --help lacks {expected}:\n{help}");
        }
    }
    let run = String::from_utf8(tdm(dir.path(), &["run", "--help"], b"").stdout).unwrap();
    assert!(run.contains("@FILE") && run.contains("[default: {}]"), "{run}");
    let top = String::from_utf8(tdm(dir.path(), &["--help"], b"").stdout).unwrap();
    assert!(top.contains("Examples:") && top.contains("completions"), "{top}");
}

#[test]
fn every_version_flag_says_tdm() {
    let dir = tempfile::tempdir().unwrap();
    for args in [vec!["--version"], vec!["run", "--version"], vec!["hub", "list", "--version"]] {
        let out = tdm(dir.path(), &args, b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("tdm {}\n", env!("CARGO_PKG_VERSION")), "{args:?}");
    }
    assert!(stderr(&tdm(dir.path(), &["frobnicate"], b"")).contains("frobnicate"));
}

#[test]
fn every_subcommand_shows_examples() {
    let dir = tempfile::tempdir().unwrap();
    let subcommands: [&[&str]; 14] = [
        &["run"],
        &["call"],
        &["repl"],
        &["exec"],
        &["inspect"],
        &["hub", "list"],
        &["install"],
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
