//! Watching the workspace for `notifications/tools/list_changed`: the state file is looked at
//! every [`WATCH_EVERY`]; when it changed and the tool names it yields changed, `changed` runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tdm_sdk::catalogue::approved_tools;
use tdm_sdk::workspace::{Workspace, STATE_FILE};

/// How often the workspace state is looked at.
pub const WATCH_EVERY: Duration = Duration::from_millis(250);

/// The state file's stamp (modification time, length): an install, approval, revoke or
/// uninstall rewrites the file, so an unchanged stamp means an unchanged catalogue.
pub fn state_stamp(workspace: &Workspace) -> Option<(SystemTime, u64)> {
    let meta = std::fs::symlink_metadata(workspace.dir.join(STATE_FILE)).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Watches `workspace` (the plugins in `only`, when not empty) on a thread of its own until
/// `stop` is set, running `changed` whenever the tool names change.
pub fn watch_tools(workspace: &Workspace, only: &[String], stop: Arc<AtomicBool>, changed: impl Fn() + Send + 'static) {
    let (workspace, only) = (Workspace::existing(workspace.dir.clone()), only.to_vec());
    let watched = Workspace::existing(workspace.dir.clone());
    let names = move || -> Vec<String> {
        approved_tools(&workspace, &only).map(|tools| tools.into_iter().map(|t| t.name).collect()).unwrap_or_default()
    };
    let stamp = move || state_stamp(&watched);
    let _ = std::thread::Builder::new().name("tdm-mcp-watch".into()).spawn(move || {
        let (mut seen_stamp, mut seen_names) = (stamp(), names());
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(WATCH_EVERY);
            let now = stamp();
            if now == seen_stamp {
                continue;
            }
            seen_stamp = now;
            let now_names = names();
            if now_names != seen_names {
                changed();
            }
            seen_names = now_names;
        }
    });
}
