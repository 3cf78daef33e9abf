//! Host intents (docs/ABI.md section 4a), the only way out of the sandbox: the `tdm_host_call` /
//! `tdm_host_response` imports (`call`), the reading of a request into a typed call
//! (`request`), the permission check (done in core, before any embedder code runs, so no
//! embedder can forget it), the audit record of every attempt, and the `HostIntents` trait an
//! embedder implements per method.

mod call;
mod request;

pub(crate) use call::{hostcall, tdm_host_call, tdm_host_response, HostCtx, HostView};
pub use request::{read_request, url_host, ParamsError};

/// The import module of the host intents.
pub const MODULE: &str = "tdm";

use crate::permission::{Permission, Permissions};
use crate::reason::{BlockedReason, Failure};
use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::value::RawValue;
use serde_json::Value;

/// `tdm_host_call`: the request could not be read (pointer or length outside memory).
pub const ERR_BAD_POINTER: i32 = -1;
/// `tdm_host_call`: the request is larger than `Policy::max_host_request_bytes`.
pub const ERR_TOO_LARGE: i32 = -2;
/// `tdm_host_call`: the request is not a JSON-RPC 2.0 request with a string `method`.
pub const ERR_NOT_JSON_RPC: i32 = -3;
/// `tdm_host_response`: nothing is pending.
pub const ERR_NOTHING_PENDING: i32 = -4;
/// `tdm_host_response`: `cap` is smaller than the pending response (it stays pending).
pub const ERR_CAP_TOO_SMALL: i32 = -5;

/// A method the host offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `dist.read {path}`: the plugin's own assets, read-only.
    DistRead,
    /// `log {level, message}`.
    Log,
    /// `net.fetch {url, method, headers, body}`.
    NetFetch,
    /// `tool.invoke {tool, intent, params}`.
    ToolInvoke,
    /// `vault.read {name}`: metadata only.
    VaultRead,
    /// `context.read {key}`.
    ContextRead,
}

impl Method {
    /// Every method.
    pub const ALL: [Method; 6] =
        [Self::DistRead, Self::Log, Self::NetFetch, Self::ToolInvoke, Self::VaultRead, Self::ContextRead];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::DistRead => "dist.read",
            Self::Log => "log",
            Self::NetFetch => "net.fetch",
            Self::ToolInvoke => "tool.invoke",
            Self::VaultRead => "vault.read",
            Self::ContextRead => "context.read",
        }
    }

    /// Parses a wire name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

/// A host call after core parsed its params and checked its permission: what the embedder is
/// asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum HostCall {
    /// Read `path` (relative, as given; the embedder confines it to the plugin's dist/).
    DistRead {
        /// The relative path.
        path: String,
    },
    /// Log `message` at `level`.
    Log {
        /// `debug`, `info`, `warn` or `error`.
        level: String,
        /// The message.
        message: String,
    },
    /// Fetch `url` (its host already matched a `network:` grant).
    NetFetch {
        /// The URL (http or https).
        url: String,
        /// Its canonical host (`permission::Host`): lower-cased, no trailing dot, IP
        /// addresses in their one text form.
        host: String,
        /// The HTTP method (default GET).
        method: String,
        /// Request headers; values may hold `{{vault:NAME}}` for the host to fill in.
        headers: Vec<(String, String)>,
        /// Request body.
        body: Option<String>,
    },
    /// Run `intent` of plugin `tool` with `params`.
    ToolInvoke {
        /// The plugin id (granted as `tool:<id>`).
        tool: String,
        /// The intent.
        intent: String,
        /// Its params.
        params: Value,
    },
    /// Metadata of secret `name`.
    VaultRead {
        /// The secret's name.
        name: String,
    },
    /// Operator context `key`.
    ContextRead {
        /// The key.
        key: String,
    },
}

impl HostCall {
    /// The method of this call.
    pub fn method(&self) -> Method {
        match self {
            Self::DistRead { .. } => Method::DistRead,
            Self::Log { .. } => Method::Log,
            Self::NetFetch { .. } => Method::NetFetch,
            Self::ToolInvoke { .. } => Method::ToolInvoke,
            Self::VaultRead { .. } => Method::VaultRead,
            Self::ContextRead { .. } => Method::ContextRead,
        }
    }

    /// The permission this call needs, if any.
    pub fn permission(&self) -> Option<Permission> {
        match self {
            Self::DistRead { .. } | Self::Log { .. } => None,
            Self::NetFetch { host, .. } => Some(Permission::Network(host.clone())),
            Self::ToolInvoke { tool, .. } => Some(Permission::Tool(tool.clone())),
            Self::VaultRead { .. } => Some(Permission::VaultRead),
            Self::ContextRead { .. } => Some(Permission::ContextRead),
        }
    }

    /// The call as one line of canonical JSON, `{"method":..,"params":{..}}` (how a trace names
    /// it, and how replay checks the plugin asked for the same call).
    pub fn describe(&self) -> String {
        let params = match self {
            Self::DistRead { path } => serde_json::json!({ "path": path }),
            Self::Log { level, message } => serde_json::json!({ "level": level, "message": message }),
            Self::NetFetch { url, host, method, headers, body } => {
                serde_json::json!({ "url": url, "host": host, "method": method, "headers": headers, "body": body })
            }
            Self::ToolInvoke { tool, intent, params } => {
                serde_json::json!({ "tool": tool, "intent": intent, "params": params })
            }
            Self::VaultRead { name } => serde_json::json!({ "name": name }),
            Self::ContextRead { key } => serde_json::json!({ "key": key }),
        };
        alloc::string::ToString::to_string(&serde_json::json!({ "method": self.method().as_str(), "params": params }))
    }

    /// Whether `grants` allow this call.
    pub fn allowed_by(&self, grants: &Permissions) -> bool {
        match self {
            Self::NetFetch { host, .. } => grants.iter().any(|p| p.allows_host(host)),
            other => other.permission().is_none_or(|p| grants.contains(&p)),
        }
    }
}

/// What the embedder knows of the run while it serves a call: what is left of each budget. A
/// nested `tool.invoke` must run within all of them (its use is then charged to the caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallContext {
    /// Nanoseconds left before the run's deadline, when the host has a wall clock.
    pub remaining_ns: Option<u64>,
    /// Fuel left in the run's budget.
    pub fuel_remaining: u64,
    /// Host calls the run may still make (this one already counted).
    pub host_calls_remaining: u32,
    /// Host-call bytes the run may still move (this request already counted).
    pub host_bytes_remaining: u64,
}

/// What the embedder spent on the plugin's behalf while serving a call (a nested sandbox):
/// charged to the caller's budgets, and its output appended to the caller's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spent {
    /// Fuel used (a nested sandbox's launch and intent).
    pub fuel: u64,
    /// Host calls made.
    pub host_calls: u32,
    /// Host-call bytes moved.
    pub host_bytes: u64,
    /// Bytes written to stdout.
    pub stdout: Vec<u8>,
    /// Bytes written to stderr.
    pub stderr: Vec<u8>,
}

/// What an embedder's method produced.
#[derive(Debug, Clone)]
pub struct HostAnswer {
    /// The outcome handed to the plugin: `Ok(output)` (JSON text) becomes a completed outcome,
    /// `Err` a failed one (the plugin keeps running either way). Output travels as text, so a
    /// nested tool's output passes through at any depth without being parsed into a tree.
    pub result: Result<Box<RawValue>, Failure>,
    /// What serving the call spent on the plugin's behalf.
    pub spent: Spent,
}

impl HostAnswer {
    /// A completed answer.
    pub fn ok(output: Value) -> Self {
        match serde_json::value::to_raw_value(&output) {
            Ok(raw) => Self::ok_json(raw),
            Err(e) => Self::failed(BlockedReason::HostFault, format!("The answer cannot be serialized: {e}.")),
        }
    }

    /// A completed answer whose output is JSON text already.
    pub fn ok_json(output: Box<RawValue>) -> Self {
        Self { result: Ok(output), spent: Spent::default() }
    }

    /// A failed answer.
    pub fn failed(reason: BlockedReason, detail: impl Into<String>) -> Self {
        Self { result: Err(Failure::new(reason, detail)), spent: Spent::default() }
    }

    /// The output parsed as JSON (for inspection and tests; `None` for a failed answer).
    pub fn output(&self) -> Option<Value> {
        self.result.as_ref().ok().and_then(|raw| serde_json::from_str(raw.get()).ok())
    }
}

/// The method name recorded for a host call that could not be read.
pub const UNREADABLE: &str = "(unreadable)";

/// One attempt at a host call, for the audit log: every attempt, readable or not, granted or
/// not, is recorded once, and says what the plugin was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    /// The method asked for (the name given when unknown, [`UNREADABLE`] when the request could
    /// not be read).
    pub method: Cow<'static, str>,
    /// The permission it needed, if any.
    pub permission: Option<String>,
    /// Whether the call was allowed and served: false when a permission was missing or the
    /// embedder refused it (`permission_denied`), or the request could not be read.
    pub granted: bool,
    /// Bytes moved: request plus response.
    pub bytes: u64,
    /// Fuel the run had used when the call was made.
    pub fuel_used: u64,
    /// The failure's reason when the call was refused or failed.
    pub reason: Option<BlockedReason>,
}

/// The embedder's side of host intents: one method per host method, each called only after
/// core checked the permission. Defaults answer that the method is not offered by this host.
pub trait HostIntents: Send {
    /// Serves an allowed call.
    fn call(&mut self, call: &HostCall, context: &CallContext) -> HostAnswer {
        let _ = context;
        HostAnswer::failed(
            BlockedReason::UnknownHostMethod,
            format!("This host does not offer `{}`.", call.method().as_str()),
        )
    }

    /// Records one attempt. Called for every host call, readable or not, granted or denied.
    fn audit(&mut self, record: &AuditRecord) {
        let _ = record;
    }
}

/// A host that offers nothing and records nothing (every call is refused).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHostIntents;

impl HostIntents for NoHostIntents {}

/// Per-run host-call state, kept in the store.
pub(crate) struct HostCalls {
    pub(crate) intents: Box<dyn HostIntents>,
    pub(crate) grants: Permissions,
    pub(crate) pending: Option<Vec<u8>>,
    pub(crate) calls: u32,
    pub(crate) bytes: u64,
    pub(crate) max_calls: u32,
    pub(crate) max_bytes: u64,
    pub(crate) max_request_bytes: u32,
    pub(crate) max_request_depth: usize,
}

impl HostCalls {
    /// The host calls of a new instance under `policy`.
    pub(crate) fn new(intents: Box<dyn HostIntents>, grants: Permissions, policy: &crate::Policy) -> Self {
        Self {
            intents,
            grants,
            pending: None,
            calls: 0,
            bytes: 0,
            max_calls: policy.max_host_calls,
            max_bytes: policy.max_host_bytes,
            max_request_bytes: policy.max_host_request_bytes,
            max_request_depth: policy.max_request_depth,
        }
    }

    /// Resets the per-run counters.
    pub(crate) fn start_run(&mut self) {
        self.pending = None;
        self.calls = 0;
        self.bytes = 0;
    }
}
