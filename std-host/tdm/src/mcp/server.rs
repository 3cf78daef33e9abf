//! What one `tdm mcp` server serves (a workspace, the plugins named), what its sessions' calls
//! share, and what ends it: SIGINT, SIGTERM, or its own end (which stops the watcher).

use super::calls::Shared;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tdm_sdk::environment::Cancel;
use tdm_sdk::workspace::Workspace;

/// What a server serves, on what, and what ends it (SIGINT, SIGTERM, or its own end, which
/// stops the watcher).
pub struct Server {
    /// Set by SIGINT.
    pub sigint: Option<Cancel>,
    /// Set by SIGTERM.
    pub sigterm: Arc<AtomicBool>,
    /// Set when the server is done.
    pub ended: Arc<AtomicBool>,
    /// The workspace served.
    pub workspace: Workspace,
    /// The plugins served (all when empty).
    pub only: Vec<String>,
    /// Where each call's trace goes (`--record-dir`).
    pub record_dir: Option<PathBuf>,
    /// What every session's calls share: the workers, the compiled modules, the warm instances.
    pub calls: Shared,
    /// Calls one session may hold in flight.
    pub max_in_flight: usize,
}

impl Server {
    /// The signal that asked the server to stop, if one did.
    pub fn signalled(&self) -> Option<&'static str> {
        if self.sigint.as_ref().is_some_and(Cancel::is_set) {
            Some("interrupted (SIGINT)")
        } else if self.sigterm.load(Ordering::Relaxed) {
            Some("terminated (SIGTERM)")
        } else {
            None
        }
    }
}
