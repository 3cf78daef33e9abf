//! The std host's answers to host intents: one module per method (dist, log, net, vault,
//! context, tool) plus the audit log, wired into core's `HostIntents` by `StdIntents`. Core has
//! already checked the permission when any of these runs.

pub mod audit;
pub mod context;
pub mod dist;
pub mod log;
pub mod net;
pub mod redaction;
pub mod tool;
pub mod vault;

use contour_core::{AuditRecord, CallContext, HostAnswer, HostCall, HostIntents, Permissions};
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Something the host intents have to tell the operator while a plugin runs, as data: the
/// front end decides where it goes and escapes it there (a plugin chose the text). Nothing in
/// this crate writes to a terminal, and a host call never blocks on a full stderr pipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A plugin's `log` line, at or above the level shown.
    Log {
        /// The plugin's id.
        id: String,
        /// `debug`, `info`, `warn` or `error`.
        level: String,
        /// The message, as the plugin wrote it.
        message: String,
    },
    /// The audit log could not be appended to (said once per log; the plugin goes on).
    AuditUnwritable {
        /// The audit file.
        path: PathBuf,
        /// Why.
        error: String,
    },
}

impl Notice {
    /// Whether the text is the plugin's own (a `log` line) rather than the host's.
    pub fn is_plugin_line(&self) -> bool {
        matches!(self, Self::Log { .. })
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Log { id, level, message } => write!(f, "[plugin {id} {level}] {message}"),
            Self::AuditUnwritable { path, error } => {
                write!(f, "cannot append to the audit log {}: {error} (further errors are not shown)", path.display())
            }
        }
    }
}

/// Where notices collect until the front end takes them (shared by a sandbox's host intents
/// and the tools they invoke).
pub type Notices = Arc<Mutex<Vec<Notice>>>;

/// Takes the notices collected so far, oldest first.
pub fn take_notices(notices: &Notices) -> Vec<Notice> {
    notices.lock().map(|mut held| std::mem::take(&mut *held)).unwrap_or_default()
}

/// Who is calling: the plugin's id and the sha256 of its module (hex), for the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginIdentity {
    /// The plugin id (file stem for `tdm run`, manifest id in a workspace).
    pub id: String,
    /// sha256 of the module bytes, lower-case hex.
    pub hash: String,
}

/// The std host intents of one plugin's sandbox.
pub struct StdIntents {
    /// The calling plugin.
    pub identity: PluginIdentity,
    /// `dist.read`.
    pub dist: dist::Dist,
    /// `log`.
    pub log: log::Log,
    /// `net.fetch`.
    pub net: net::Net,
    /// `vault.read` and `{{vault:NAME}}` substitution.
    pub vault: vault::Vault,
    /// `context.read`.
    pub context: context::Context,
    /// `tool.invoke`.
    pub tools: tool::Tools,
    /// The audit log every decision is appended to.
    pub audit: audit::AuditLog,
    /// The plugin's grants (core checks them; `net.fetch` re-checks redirect targets).
    pub grants: Permissions,
}

impl HostIntents for StdIntents {
    fn call(&mut self, call: &HostCall, context: &CallContext) -> HostAnswer {
        match call {
            HostCall::DistRead { path } => self.dist.read(path),
            HostCall::Log { level, message } => self.log.log(&self.identity, level, message),
            HostCall::NetFetch { .. } => self.net.fetch(call, context, &self.grants, &self.vault),
            HostCall::VaultRead { name } => self.vault.metadata(name),
            HostCall::ContextRead { key } => self.context.read(key),
            HostCall::ToolInvoke { tool, intent, params } => {
                self.tools.invoke(tool, intent, params, context, &self.log)
            }
        }
    }

    fn audit(&mut self, record: &AuditRecord) {
        self.audit.append(&self.identity, record);
    }
}
