//! A state file or hub index that could be read two ways is refused, never read as whichever
//! copy came last: a `state.json` naming one plugin twice (the next write used to drop one
//! copy and its approval without a word), a state of an unknown format version (it was read as
//! the current one), a hub index listing one id and version twice (whichever came last was
//! installed) or of an unknown format version. Each message says which entry and how to fix
//! it, and no command rewrites the state while it is refused.

#[path = "support/tdm.rs"]
mod support;

use std::path::Path;
use support::{install_approved, package, stderr, tdm, text, OK};

/// A workspace with `a` (approved) and `b` installed; returns the state file's path.
fn workspace(dir: &Path) -> std::path::PathBuf {
    let ws = dir.join("ws");
    install_approved(&ws, &package(dir, "a-pkg", "a", OK, &[("x", "")], ""));
    let out = tdm(
        &ws,
        &["install", "--allow-unsigned", &package(dir, "b-pkg", "b", OK, &[("x", "")], "").display().to_string()],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    ws.join("state.json")
}

/// The commands that read the state, and those that would write it.
fn every_command_refuses(ws: &Path, state: &Path, expected: &[&str]) {
    let before = std::fs::read(state).unwrap();
    let commands: [&[&str]; 5] = [
        &["workspace", "status"],
        &["call", "a", "x"],
        &["approve", "b", "--yes"],
        &["revoke", "a"],
        &["uninstall", "b"],
    ];
    for args in commands {
        let out = tdm(ws, args, b"");
        assert_ne!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        let err = stderr(&out);
        for part in expected {
            assert!(err.contains(part), "{args:?}: {part:?} in {err}");
        }
        assert_eq!(std::fs::read(state).unwrap(), before, "{args:?} left the state as it was");
    }
}

#[test]
fn a_state_naming_a_plugin_twice_is_refused_and_never_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let state = workspace(dir.path());
    let ws = dir.path().join("ws");
    let original = std::fs::read_to_string(&state).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&original).unwrap();
    assert!(parsed["plugins"]["a"]["approval"].is_object(), "{original}");
    // `a` again after `b`, without its approval: read as "last wins", the next write would
    // have dropped the approval.
    let mut unapproved = parsed["plugins"]["a"].clone();
    unapproved["approval"] = serde_json::Value::Null;
    let twice = format!(
        "{{\"version\": 1, \"plugins\": {{\"a\": {}, \"b\": {}, \"a\": {}}}}}",
        parsed["plugins"]["a"], parsed["plugins"]["b"], unapproved
    );
    std::fs::write(&state, twice).unwrap();
    every_command_refuses(&ws, &state, &["plugin `a` is listed twice", "remove one of the two entries"]);
}

#[test]
fn a_state_of_an_unknown_format_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = workspace(dir.path());
    let ws = dir.path().join("ws");
    let original = std::fs::read_to_string(&state).unwrap();
    let mut parsed: serde_json::Value = serde_json::from_str(&original).unwrap();
    parsed["version"] = 2.into();
    std::fs::write(&state, serde_json::to_string_pretty(&parsed).unwrap()).unwrap();
    every_command_refuses(&ws, &state, &["format version is 2", "reads version 1 only"]);
}

/// A hub folder holding the example echo package, with `index` as its index.
fn hub(dir: &Path, index: &str) -> String {
    let hub = dir.join("hub");
    let from = support::repo().join("examples/hub/echo-1.0.0");
    std::fs::create_dir_all(hub.join("echo-1.0.0/dist")).unwrap();
    for name in ["plugin.toml", "plugin.toml.minisig", "dist/echo.wat"] {
        if from.join(name).exists() {
            std::fs::copy(from.join(name), hub.join("echo-1.0.0").join(name)).unwrap();
        }
    }
    std::fs::write(hub.join("index.json"), index).unwrap();
    hub.display().to_string()
}

#[test]
fn a_hub_index_listing_a_version_twice_or_of_an_unknown_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(support::repo().join("examples/hub/index.json")).unwrap();
    let example: serde_json::Value = serde_json::from_str(&example).unwrap();
    let entry = example["plugins"][0].clone();
    let mut other = entry.clone();
    other["sha256"] = "0".repeat(64).into();
    let twice = serde_json::json!({"plugins": [entry, other]}).to_string();
    let hub_dir = hub(dir.path(), &twice);
    let ws = dir.path().join("ws");
    for args in [vec!["install", "--allow-unsigned", "echo", "--hub", &hub_dir], vec!["hub", "list", "--hub", &hub_dir]]
    {
        let out = tdm(&ws, &args, b"");
        assert_ne!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        let err = stderr(&out);
        assert!(err.contains("entries 1 and 2 both list `echo@1.0.0`"), "{args:?}: {err}");
        assert!(err.contains("list each version once"), "{err}");
    }
    assert!(!ws.join("state.json").exists(), "nothing was installed");

    let newer = serde_json::json!({"version": 3, "plugins": [example["plugins"][0].clone()]}).to_string();
    let hub_dir = hub(dir.path(), &newer);
    let out = tdm(&ws, &["install", "--allow-unsigned", "echo", "--hub", &hub_dir], b"");
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert!(stderr(&out).contains("format version is 3"), "{}", stderr(&out));
    // Version 1, named or not, is read.
    let named = serde_json::json!({"version": 1, "plugins": [example["plugins"][0].clone()]}).to_string();
    let hub_dir = hub(dir.path(), &named);
    let out = tdm(&ws, &["hub", "list", "--hub", &hub_dir], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
