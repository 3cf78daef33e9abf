//! Host intents: the plugin's only way out of the sandbox.
//!
//! Each function sends one JSON-RPC request through `tdm_host_call`, collects the answer with
//! `tdm_host_response` and returns its `output`, typed. A refused or failed call is an answer,
//! not a trap: it comes back as [`HostError::Failed`] with the host's `blockedReason`
//! (`permission_denied`, `host_intent_failed`, ...), and the plugin keeps running. `?` turns it
//! into the plugin's own [`Failure`](crate::Failure) with the same fields.

use crate::{abi, json};
use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a host call gave no `output`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostError {
    /// `tdm_host_call` could not read the request (`-1` outside memory, `-2` too large, `-3`
    /// not JSON-RPC).
    Call(i32),
    /// `tdm_host_response` could not copy the answer (`-1` outside memory, `-4` nothing
    /// pending, `-5` buffer too small).
    Response(i32),
    /// The host answered with a failed outcome (refused, or its side failed).
    Failed {
        /// The host's `blockedReason`, e.g. `permission_denied`.
        blocked_reason: String,
        /// The host's message.
        message: String,
        /// The host's recovery hint.
        recovery_hint: String,
        /// Whether the same call may succeed later.
        retryable: bool,
    },
    /// The answer did not have the expected shape (or the request did not serialize).
    Decode(String),
}

impl HostError {
    /// The host's `blockedReason` when the host answered with a failed outcome.
    pub fn blocked_reason(&self) -> Option<&str> {
        match self {
            HostError::Failed { blocked_reason, .. } => Some(blocked_reason),
            _ => None,
        }
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Call(code) => write!(f, "tdm_host_call refused the request (code {code})"),
            HostError::Response(code) => write!(f, "tdm_host_response failed (code {code})"),
            HostError::Failed { blocked_reason, message, .. } => write!(f, "{blocked_reason}: {message}"),
            HostError::Decode(detail) => write!(f, "unexpected host answer: {detail}"),
        }
    }
}

/// Ids of this instance's host requests.
static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// The host's outcome, read for its status first.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    status: Cow<'a, str>,
}

/// A failed host outcome.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Failed {
    #[serde(default)]
    message: String,
    #[serde(default)]
    blocked_reason: String,
    #[serde(default)]
    recovery_hint: String,
    #[serde(default)]
    output: Option<Retry>,
}

#[derive(Deserialize)]
struct Retry {
    #[serde(default)]
    retryable: bool,
}

#[derive(Deserialize)]
struct Completed<R> {
    output: R,
}

/// Calls host method `method` with `params` and returns the answer's `output` as `R`.
pub fn call<P: Serialize + ?Sized, R: DeserializeOwned>(method: &str, params: &P) -> Result<R, HostError> {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    // Written as serde_json writes `{jsonrpc, id, method, params}`.
    let mut request = Vec::with_capacity(64);
    request.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    json::ser::write_u64(&mut request, id.into());
    request.extend_from_slice(br#","method":"#);
    json::ser::write_str(&mut request, method);
    request.extend_from_slice(br#","params":"#);
    json::ser::write(&mut request, params)
        .map_err(|e| HostError::Decode(alloc::format!("the request does not serialize: {e}")))?;
    request.push(b'}');
    let answer = abi::host_call(&request)?;
    read_answer(&answer)
}

/// The `output` of a completed host outcome as `R`, or the failure of a failed one.
fn read_answer<R: DeserializeOwned>(answer: &[u8]) -> Result<R, HostError> {
    let decode = |e: json::Error| HostError::Decode(alloc::format!("{e}"));
    let head: Head<'_> = json::de::from_slice(answer).map_err(decode)?;
    match head.status.as_ref() {
        "completed" => json::de::from_slice::<Completed<R>>(answer).map(|c| c.output).map_err(decode),
        "failed" => {
            let failed: Failed = json::de::from_slice(answer).map_err(decode)?;
            Err(HostError::Failed {
                blocked_reason: failed.blocked_reason,
                message: failed.message,
                recovery_hint: failed.recovery_hint,
                retryable: failed.output.is_some_and(|o| o.retryable),
            })
        }
        other => Err(HostError::Decode(alloc::format!("unknown status `{other}`"))),
    }
}

/// Calls host method `method` and returns the answer's `output` as JSON.
pub fn call_value<P: Serialize + ?Sized>(method: &str, params: &P) -> Result<Value, HostError> {
    call(method, params)
}

/// A file of the plugin's own `dist/` folder, as `dist.read` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DistFile {
    /// The path asked for (relative to `dist/`).
    pub path: String,
    /// The file's size in bytes.
    pub size: u64,
    /// The file's text (assets are UTF-8 text).
    pub text: String,
}

/// `dist.read {path}`: reads a text file of the plugin's own `dist/` folder (read-only; `..`
/// and absolute paths are refused with `forbidden`: no grant lifts that).
pub fn dist_read(path: &str) -> Result<DistFile, HostError> {
    #[derive(Serialize)]
    struct Params<'a> {
        path: &'a str,
    }
    call("dist.read", &Params { path })
}

/// The level of a `log` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `warn`
    Warn,
    /// `error`
    Error,
}

impl Level {
    /// The level's name in the `log` request.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// `log {level, message}`: one line on the host's log (bounded in count and bytes per sandbox).
pub fn log(level: Level, message: &str) -> Result<(), HostError> {
    #[derive(Serialize)]
    struct Params<'a> {
        level: &'a str,
        message: &'a str,
    }
    call::<_, IgnoredAny>("log", &Params { level: level.as_str(), message }).map(|_| ())
}

/// A `net.fetch` request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FetchRequest {
    /// An `http://` or `https://` URL; its host must be granted (`network:<host>`).
    pub url: String,
    /// The HTTP method (`GET` by default).
    pub method: String,
    /// Request headers; a value `{{vault:NAME}}` is filled in by the host with that secret,
    /// only for hosts the secret's policy allows.
    pub headers: BTreeMap<String, String>,
    /// The request body, if any.
    pub body: Option<String>,
}

impl FetchRequest {
    /// A `GET` of `url` with no headers and no body.
    pub fn get(url: impl Into<String>) -> Self {
        Self { url: url.into(), method: "GET".into(), headers: BTreeMap::new(), body: None }
    }
}

/// A `net.fetch` answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FetchResponse {
    /// The HTTP status code.
    pub status: u16,
    /// Response headers (repeated headers joined with `, `).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The response body (as text).
    pub body: String,
}

/// `net.fetch {url, method, headers, body}`: needs `network:<host>` (or `network:*.<domain>`).
pub fn net_fetch(request: &FetchRequest) -> Result<FetchResponse, HostError> {
    call("net.fetch", request)
}

/// A secret's metadata, as `vault.read` answers it: never its value.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VaultEntry {
    /// The secret's name.
    pub name: String,
    /// Whether the vault holds it.
    pub exists: bool,
    /// When it was created, if known.
    #[serde(default)]
    pub created: Option<String>,
    /// When it was last rotated, if known.
    #[serde(default)]
    pub last_rotated: Option<String>,
    /// The hosts the secret may be sent to.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
}

/// `vault.read {name}`: a secret's metadata; needs `vault:read`.
pub fn vault_read(name: &str) -> Result<VaultEntry, HostError> {
    #[derive(Serialize)]
    struct Params<'a> {
        name: &'a str,
    }
    call("vault.read", &Params { name })
}

/// `tool.invoke {tool, intent, params}`: runs another plugin's intent in its own sandbox and
/// returns its `output`; needs `tool:<plugin-id>`.
pub fn tool_invoke<P: Serialize + ?Sized, R: DeserializeOwned>(
    tool: &str,
    intent: &str,
    params: &P,
) -> Result<R, HostError> {
    #[derive(Serialize)]
    struct Params<'a, P: ?Sized> {
        tool: &'a str,
        intent: &'a str,
        params: &'a P,
    }
    call("tool.invoke", &Params { tool, intent, params })
}

/// An operator context entry, as `context.read` answers it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ContextEntry {
    /// The key asked for.
    pub key: String,
    /// Whether the context holds it.
    pub exists: bool,
    /// Its value (`null` when it does not exist).
    #[serde(default)]
    pub value: Value,
}

/// `context.read {key}`: one entry of the operator's context; needs `context:read`.
pub fn context_read(key: &str) -> Result<ContextEntry, HostError> {
    #[derive(Serialize)]
    struct Params<'a> {
        key: &'a str,
    }
    call("context.read", &Params { key })
}
