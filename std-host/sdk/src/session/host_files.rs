//! Where a session's host intents find their data (vault, context, audit log, tools, the
//! workspace), and what a command run with them writes besides a recording.

use crate::files::output::Outputs;
use crate::workspace::{workspace_dir, AUDIT_FILE, HISTORY_FILE, LOCK_FILE, STATE_FILE};
use std::path::PathBuf;

/// Where the host intents find their data (flags; `None`: the default).
#[derive(Debug, Clone, Default)]
pub struct HostFiles {
    /// `dist/` for `dist.read` (default: `dist/` next to the module).
    pub dist: Option<PathBuf>,
    /// The vault file (default: the workspace's, when there is one).
    pub vault: Option<PathBuf>,
    /// The context file (default: the workspace's, when there is one).
    pub context: Option<PathBuf>,
    /// The audit log (default: the workspace's).
    pub audit: Option<PathBuf>,
    /// Plugins `tool.invoke` may run: id and module file.
    pub tools: Vec<(String, PathBuf)>,
    /// The workspace folder (default: [`crate::workspace::default_workspace`]).
    pub workspace: Option<PathBuf>,
}

/// What a command run with `host` writes besides a recording, whether or not it exists yet:
/// stdout and stderr, the audit log (`--audit`, else the workspace's), the workspace state and
/// its lock, the REPL history. A recording is refused when it is any of them.
pub fn outputs_of(host: &HostFiles) -> Outputs {
    let workspace = workspace_dir(host.workspace.as_deref());
    Outputs::of_command()
        .with("the audit log", host.audit.clone().unwrap_or_else(|| workspace.join(AUDIT_FILE)))
        .with("the workspace state", workspace.join(STATE_FILE))
        .with("the workspace lock", workspace.join(LOCK_FILE))
        .with("the REPL history", workspace.join(HISTORY_FILE))
}
