//! A plugin's module file replaced (other bytes, another hash) while a `tdm repl` holds it,
//! through the built binary: the session goes on running the bytes it loaded and checked, also
//! in the fresh instance launched after a trap discarded the old one (a relaunch never reads
//! the file again). `:reload` is the only way to the new bytes: a module file is read again,
//! an installed plugin's swapped module is refused (its approval binds the old hash) and the
//! approved bytes keep running; `tdm call` refuses it as well. The file is replaced the way
//! an editor or a package update does it: a new file renamed over the old one.

#[path = "support/tdm.rs"]
mod support;

use std::path::Path;
use support::{install_approved, package, tdm, text, write, Repl, OK};

/// The REPL counter: `count` answers {"count": N} (N from 1 in each instance), `trap` traps.
fn counter() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/repl_counter.wat")).unwrap()
}

/// Replaces `path` by a new file with `contents` (write beside it, rename over it).
fn replace(path: &Path, contents: &str) {
    let new = path.with_extension("new");
    std::fs::write(&new, contents).unwrap();
    std::fs::rename(&new, path).unwrap();
}

#[test]
fn a_repl_on_a_module_file_keeps_its_bytes_until_reload() {
    let dir = tempfile::tempdir().unwrap();
    let module = write(dir.path(), "p.wat", counter());
    let mut repl = Repl::start(&dir.path().join("ws"), &module);
    assert_eq!(repl.next("count")["output"]["count"], 1);
    replace(Path::new(&module), OK);
    assert_eq!(repl.next("count")["output"]["count"], 2, "the same instance goes on");
    // A trap discards the instance; the next intent launches a fresh one from the loaded bytes.
    assert_eq!(repl.next("trap")["blockedReason"], "plugin_trap");
    assert_eq!(repl.next("count")["output"]["count"], 1, "a fresh instance of the old module");
    let reloaded = repl.next(":reload");
    assert_eq!((reloaded["status"].as_str(), reloaded["changed"].as_bool()), (Some("ok"), Some(true)), "{reloaded}");
    assert_eq!(repl.next("count")["output"]["ok"], true, "after :reload the new module runs");
    repl.finish();
}

#[test]
fn a_repl_on_an_installed_plugin_refuses_a_swapped_module_and_keeps_the_approved_one() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    install_approved(&ws, &package(dir.path(), "pkg", "c", &counter(), &[("count", "counts"), ("trap", "traps")], ""));
    let mut repl = Repl::start(&ws, "c");
    assert_eq!(repl.next("count")["output"]["count"], 1);
    replace(&ws.join("packages/c/1.0.0/dist/plugin.wat"), OK);
    assert_eq!(repl.next("trap")["blockedReason"], "plugin_trap");
    assert_eq!(repl.next("count")["output"]["count"], 1, "a fresh instance of the approved bytes");
    let refused = repl.next(":reload");
    assert_eq!(refused["status"], "error", "{refused}");
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("not reloaded") && message.contains("approval"), "{refused}");
    assert_eq!(repl.next("count")["output"]["count"], 2, "the approved module keeps running, same instance");
    repl.finish();

    let out = tdm(&ws, &["call", "c", "count"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("not_approved"), "{}", text(&out));
}

#[test]
fn a_changed_approval_stops_an_open_repl_at_its_next_intent() {
    for change in ["revoke", "uninstall", "install", "approve"] {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let pkg = package(dir.path(), "pkg", "ok", OK, &[("ping", "answers ok")], "");
        install_approved(&ws, &pkg);
        let mut repl = Repl::start(&ws, "ok");
        assert_eq!(repl.next("ping")["output"]["ok"], true);
        // A new package (here with lower limits: still approved) or a new approval changes what
        // is approved; a revoke or an uninstall withdraws it.
        let lower =
            package(dir.path(), "lower", "ok", OK, &[("ping", "answers ok")], "[policy]\nfuel_per_intent = 1000000");
        let target = if change == "install" { lower.display().to_string() } else { "ok".to_string() };
        let mut args = vec![change, target.as_str()];
        if change == "install" {
            args.push("--allow-unsigned");
        }
        if change == "approve" {
            args.push("--yes");
        }
        let out = tdm(&ws, &args, b"");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        // The session still holds what it opened, which may no longer be what is approved.
        let refused = repl.next("ping");
        assert_eq!(refused["blockedReason"], "not_approved", "{change}: {refused}");
        assert!(refused["message"].as_str().unwrap().contains(":reload"), "{refused}");
        if matches!(change, "install" | "approve") {
            // Still approved: :reload opens what is approved now, and it runs.
            assert_eq!(repl.next(":reload")["status"], "ok", "{change}");
            assert_eq!(repl.next("ping")["output"]["ok"], true, "{change}");
        }
        repl.finish();
    }
}
