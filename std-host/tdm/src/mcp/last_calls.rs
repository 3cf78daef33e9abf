//! Each plugin's last call as `tdm workspace status` shows it, kept for `tdm mcp`'s calls and
//! written to the state file at most every [`FLUSH_EVERY`] (and when the server ends), not once
//! per call: a state write takes the workspace lock and two fsyncs, which would cap a server at
//! a few hundred calls a second, hold off other `tdm` commands, and wake every watcher.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tdm_sdk::operator;
use tdm_sdk::workspace::{LastCall, Workspace};

/// How often recorded calls are written.
pub const FLUSH_EVERY: Duration = Duration::from_millis(500);

/// The calls not yet written, by plugin (cheap to clone: one record).
#[derive(Clone, Default)]
pub struct LastCalls(Arc<Mutex<HashMap<String, LastCall>>>);

impl LastCalls {
    /// Records `last` as plugin `id`'s last call.
    pub fn record(&self, id: &str, last: LastCall) {
        if let Ok(mut pending) = self.0.lock() {
            pending.insert(id.to_string(), last);
        }
    }

    /// Writes the calls recorded since the last write, in one state update.
    pub fn flush(&self, workspace: &Workspace) {
        let pending: Vec<(String, LastCall)> = self.0.lock().map(|mut p| p.drain().collect()).unwrap_or_default();
        if pending.is_empty() {
            return;
        }
        if let Err(e) = operator::record_last_calls(workspace, pending) {
            crate::terminal::errln!("tdm mcp: could not record the calls in the workspace: {e}");
        }
    }

    /// Writes recorded calls every [`FLUSH_EVERY`] on a thread of its own until `stop` is set.
    pub fn start(&self, workspace: &Workspace, stop: Arc<AtomicBool>) {
        let (calls, workspace) = (self.clone(), Workspace::existing(workspace.dir.clone()));
        let _ = std::thread::Builder::new().name("tdm-mcp-last-calls".into()).spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(FLUSH_EVERY);
                calls.flush(&workspace);
            }
        });
    }
}
