//! Host intents (DESIGN section 4), the only way out of the sandbox: the `tdm_host_call` /
//! `tdm_host_response` imports, their bounds and per-intent limits, the permission check (done
//! here, before any embedder code runs, so no embedder can forget it), the audit record of
//! every decision, and the `HostIntents` trait an embedder implements per method.

use crate::outcome::Outcome;
use crate::permission::{Permission, Permissions};
use crate::reason::{BlockedReason, Failure};
use crate::state::HostState;
use crate::wasi::memory_of;
use crate::wasi::Signature;
use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use wasmi::{Caller, Linker, ValType};

/// The import module of the host intents.
pub const MODULE: &str = "tdm";

/// The two host-intent imports with their exact signatures.
pub const IMPORTS: [Signature; 2] = [
    Signature {
        name: "tdm_host_call",
        params: &[ValType::I32, ValType::I32],
        results: &[ValType::I32],
        plugin_safe: true,
    },
    Signature {
        name: "tdm_host_response",
        params: &[ValType::I32, ValType::I32],
        results: &[ValType::I32],
        plugin_safe: true,
    },
];

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
        /// Its host, lower-cased.
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

    /// Whether `grants` allow this call.
    pub fn allowed_by(&self, grants: &Permissions) -> bool {
        match self {
            Self::NetFetch { host, .. } => grants.iter().any(|p| p.allows_host(host)),
            other => other.permission().is_none_or(|p| grants.contains(&p)),
        }
    }
}

/// What the embedder knows of the intent while it serves a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallContext {
    /// Nanoseconds left before the intent's deadline, when the host has a wall clock.
    pub remaining_ns: Option<u64>,
    /// Fuel left in the intent's budget (a nested `tool.invoke` may use at most this).
    pub fuel_remaining: u64,
}

/// What an embedder's method produced.
#[derive(Debug, Clone, PartialEq)]
pub struct HostAnswer {
    /// The outcome handed to the plugin: `Ok(output)` becomes a completed outcome, `Err` a
    /// failed one (the plugin keeps running either way).
    pub result: Result<Value, Failure>,
    /// Fuel the embedder spent on the plugin's behalf (a nested sandbox), charged to it.
    pub fuel_used: u64,
}

impl HostAnswer {
    /// A completed answer.
    pub fn ok(output: Value) -> Self {
        Self { result: Ok(output), fuel_used: 0 }
    }

    /// A failed answer.
    pub fn failed(reason: BlockedReason, detail: impl Into<String>) -> Self {
        Self { result: Err(Failure::new(reason, detail)), fuel_used: 0 }
    }
}

/// One decision on a host call, for the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    /// The method asked for (or the name given, when unknown).
    pub method: Cow<'static, str>,
    /// The permission it needed, if any.
    pub permission: Option<String>,
    /// Whether it was granted.
    pub granted: bool,
    /// Bytes moved: request plus response.
    pub bytes: u64,
    /// Fuel the intent had used when the call was made.
    pub fuel_used: u64,
    /// The failure's reason when the call was refused or failed.
    pub reason: Option<&'static str>,
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

    /// Records one decision. Called for every host call, granted or denied.
    fn audit(&mut self, record: &AuditRecord) {
        let _ = record;
    }
}

/// A host that offers nothing and records nothing (every call is refused).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHostIntents;

impl HostIntents for NoHostIntents {}

/// Per-intent host-call state, kept in the store.
pub(crate) struct HostCalls {
    pub(crate) intents: Box<dyn HostIntents>,
    pub(crate) grants: Permissions,
    pending: Option<Vec<u8>>,
    calls: u32,
    bytes: u64,
    /// The intent's deadline (start, timeout) on the environment's deadline clock.
    pub(crate) deadline: Option<(u64, u64)>,
    pub(crate) max_calls: u32,
    pub(crate) max_bytes: u64,
    pub(crate) max_request_bytes: u32,
}

impl HostCalls {
    pub(crate) fn new(intents: Box<dyn HostIntents>, grants: Permissions, policy: &crate::Policy) -> Self {
        Self {
            intents,
            grants,
            pending: None,
            calls: 0,
            bytes: 0,
            deadline: None,
            max_calls: policy.max_host_calls,
            max_bytes: policy.max_host_bytes,
            max_request_bytes: policy.max_host_request_bytes,
        }
    }

    /// Resets the per-intent counters at the start of an intent.
    pub(crate) fn start_intent(&mut self, deadline: Option<(u64, u64)>) {
        self.pending = None;
        self.calls = 0;
        self.bytes = 0;
        self.deadline = deadline;
    }
}

fn str_field<'a>(params: &'a Value, field: &str) -> Result<&'a str, String> {
    params.get(field).and_then(Value::as_str).ok_or_else(|| format!("`params.{field}` must be a string"))
}

/// Parses the params of `method` into a typed call. This is the rule; [`parse_call_fast`] only
/// takes its common cases faster.
fn parse_call(method: Method, params: &Value) -> Result<HostCall, String> {
    Ok(match method {
        Method::DistRead => HostCall::DistRead { path: str_field(params, "path")?.to_string() },
        Method::Log => HostCall::Log {
            level: params.get("level").and_then(Value::as_str).unwrap_or("info").to_string(),
            message: str_field(params, "message")?.to_string(),
        },
        Method::NetFetch => {
            let url = str_field(params, "url")?.to_string();
            let host = url_host(&url)?;
            let method = params.get("method").and_then(Value::as_str).unwrap_or("GET").to_ascii_uppercase();
            let mut headers = Vec::new();
            if let Some(map) = params.get("headers") {
                let map = map.as_object().ok_or("`params.headers` must be an object of strings")?;
                for (name, value) in map {
                    let value = value.as_str().ok_or("`params.headers` values must be strings")?;
                    headers.push((name.clone(), value.to_string()));
                }
            }
            let body = match params.get("body") {
                None | Some(Value::Null) => None,
                Some(Value::String(body)) => Some(body.clone()),
                Some(_) => return Err("`params.body` must be a string".into()),
            };
            HostCall::NetFetch { url, host, method, headers, body }
        }
        Method::ToolInvoke => HostCall::ToolInvoke {
            tool: str_field(params, "tool")?.to_string(),
            intent: str_field(params, "intent")?.to_string(),
            params: params.get("params").cloned().unwrap_or(Value::Object(serde_json::Map::new())),
        },
        Method::VaultRead => HostCall::VaultRead { name: str_field(params, "name")?.to_string() },
        Method::ContextRead => HostCall::ContextRead { key: str_field(params, "key")?.to_string() },
    })
}

/// `log` params, borrowed from the request where no escapes need decoding.
#[derive(Deserialize)]
struct LogParams<'a> {
    #[serde(borrow, default)]
    level: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Cow<'a, str>,
}

/// `dist.read` params.
#[derive(Deserialize)]
struct PathParams<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
}

/// `vault.read` params.
#[derive(Deserialize)]
struct NameParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
}

/// `context.read` params.
#[derive(Deserialize)]
struct KeyParams<'a> {
    #[serde(borrow)]
    key: Cow<'a, str>,
}

/// Whether `text` is a JSON object. serde reads a struct from an array too (by position), which
/// the rule refuses; the fast paths take objects only.
fn is_object(text: &[u8]) -> bool {
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Parses the common shapes of params straight into a call, without building a JSON tree:
/// `None` when the params take another shape (or the method is one whose params are rich), and
/// then [`parse_call`] decides, so both paths accept and refuse exactly the same requests.
fn parse_call_fast(method: Method, params: &RawValue) -> Option<HostCall> {
    let text = params.get();
    if !is_object(text.as_bytes()) {
        return None;
    }
    Some(match method {
        Method::Log => {
            let LogParams { level, message } = serde_json::from_str(text).ok()?;
            let level = level.map_or_else(|| String::from("info"), Cow::into_owned);
            HostCall::Log { level, message: message.into_owned() }
        }
        Method::DistRead => {
            let PathParams { path } = serde_json::from_str(text).ok()?;
            HostCall::DistRead { path: path.into_owned() }
        }
        Method::VaultRead => {
            let NameParams { name } = serde_json::from_str(text).ok()?;
            HostCall::VaultRead { name: name.into_owned() }
        }
        Method::ContextRead => {
            let KeyParams { key } = serde_json::from_str(text).ok()?;
            HostCall::ContextRead { key: key.into_owned() }
        }
        Method::NetFetch | Method::ToolInvoke => return None,
    })
}

/// The JSON-RPC 2.0 envelope of a host call, its params left as unparsed text.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// A host-call request: its method name and params.
struct Request<'a> {
    method: Cow<'a, str>,
    params: Params<'a>,
}

/// A request's params: unparsed text (the fast path), a parsed tree, or absent.
enum Params<'a> {
    Raw(&'a RawValue),
    Tree(Value),
}

impl<'a> Request<'a> {
    /// Reads a JSON-RPC 2.0 request with a string `method`, or `None`. The envelope is read
    /// typed and borrowed; anything it cannot read (a duplicate key, say) is read again as a
    /// JSON tree, whose reading is the rule.
    fn parse(bytes: &'a [u8]) -> Option<Self> {
        // JSON text is UTF-8: checked once here, so the readers below need not check each string.
        let text = core::str::from_utf8(bytes).ok()?;
        if let Some(Ok(envelope)) = is_object(bytes).then(|| serde_json::from_str::<Envelope<'a>>(text)) {
            if envelope.jsonrpc != "2.0" {
                return None;
            }
            let params = envelope.params.map_or(Params::Tree(Value::Null), Params::Raw);
            return Some(Self { method: envelope.method, params });
        }
        let mut request = serde_json::from_str::<Value>(text).ok()?;
        let (Some("2.0"), Some(name)) =
            (request.get("jsonrpc").and_then(Value::as_str), request.get("method").and_then(Value::as_str))
        else {
            return None;
        };
        let method = Cow::Owned(name.to_string());
        // The request is ours: move its params out rather than deep-copying them.
        let params = request.get_mut("params").map(Value::take).unwrap_or(Value::Null);
        Some(Self { method, params: Params::Tree(params) })
    }

    /// The typed call, or why the params do not fit the method.
    fn call(&self, method: Method) -> Result<HostCall, String> {
        match &self.params {
            Params::Raw(raw) => match parse_call_fast(method, raw) {
                Some(call) => Ok(call),
                None => {
                    let tree: Value = serde_json::from_str(raw.get()).map_err(|e| format!("params: {e}"))?;
                    parse_call(method, &tree)
                }
            },
            Params::Tree(tree) => parse_call(method, tree),
        }
    }
}

/// The lower-cased host of an `http://` or `https://` URL. Userinfo (`user@host`) is refused,
/// so a URL cannot show one host to the check and another to the client.
pub fn url_host(url: &str) -> Result<String, String> {
    // The canonical host (`permission::Host`), the form every `network:` grant is kept in.
    crate::permission::Host::of_url(url).map(|host| host.bare()).map_err(|error| error.to_string())
}

/// A completed host-call answer as it is written for the plugin.
#[derive(Serialize)]
struct Completed<'a> {
    status: &'static str,
    output: &'a Value,
}

/// The bytes the plugin reads back with `tdm_host_response`: a completed outcome with the
/// output, or the failure in its one shape.
fn outcome_bytes(result: Result<Value, Failure>) -> Vec<u8> {
    match result {
        Ok(output) => serde_json::to_vec(&Completed { status: "completed", output: &output }).unwrap_or_default(),
        Err(failure) => Outcome::from_failure(failure).json.into_bytes(),
    }
}

impl HostState {
    /// Nanoseconds left before the current run's deadline, `deadline_exceeded` once it has
    /// passed, or `None` when this host enforces no wall-clock deadline. The one deadline rule:
    /// the sandbox checks it between fuel slices, host calls before and after each call.
    pub(crate) fn deadline_remaining(&mut self) -> Option<Result<u64, Failure>> {
        let (started, timeout) = self.host.deadline?;
        let now = self.env.deadline_clock_ns().unwrap_or(started);
        let elapsed = now.saturating_sub(started);
        Some(if elapsed > timeout {
            Err(Failure::new(BlockedReason::DeadlineExceeded, format!("The limit is {} ms.", timeout / 1_000_000)))
        } else {
            Ok(timeout - elapsed)
        })
    }
}

/// `tdm_host_call(ptr, len) -> i32`.
fn host_call(mut caller: Caller<'_, HostState>, ptr: u32, len: u32) -> Result<i32, wasmi::Error> {
    let Some(memory) = memory_of(&caller) else {
        return Ok(ERR_BAD_POINTER);
    };
    if len > caller.data().host.max_request_bytes {
        return Ok(ERR_TOO_LARGE);
    }
    let fuel_now = caller.get_fuel().unwrap_or(0);
    // The request is read in place (guest memory and host state are borrowed side by side).
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let Some(end) = crate::abi::region_end(ptr, len, data.len()) else {
        return Ok(ERR_BAD_POINTER);
    };
    let Some(request) = Request::parse(&data[ptr as usize..end]) else {
        return Ok(ERR_NOT_JSON_RPC);
    };
    let account = state.fuel;
    let fuel_used = account.given.saturating_sub(fuel_now);
    let fuel_remaining = account.budget.saturating_sub(account.given).saturating_add(fuel_now);
    state.host.calls += 1;
    state.host.bytes += u64::from(len);
    if state.host.calls > state.host.max_calls || state.host.bytes > state.host.max_bytes {
        let detail =
            format!("The limits are {} calls and {} bytes per intent.", state.host.max_calls, state.host.max_bytes);
        return Err(wasmi::Error::host(Failure::new(BlockedReason::HostCallLimitExceeded, detail)));
    }
    let remaining_ns = match state.deadline_remaining() {
        Some(Err(failure)) => return Err(wasmi::Error::host(failure)),
        Some(Ok(remaining)) => Some(remaining),
        None => None,
    };
    let method = Method::from_name(&request.method);
    let mut record = AuditRecord {
        method: method.map_or_else(|| Cow::Owned(request.method.to_string()), |m| Cow::Borrowed(m.as_str())),
        permission: None,
        granted: false,
        bytes: u64::from(len),
        fuel_used,
        reason: None,
    };
    let name = &request.method;
    let call = match method {
        None => Err(Failure::new(BlockedReason::UnknownHostMethod, format!("`{name}` is not a host method."))),
        Some(method) => request
            .call(method)
            .map_err(|why| Failure::new(BlockedReason::InvalidHostRequest, format!("`{name}`: {why}."))),
    };
    let answer = match call {
        Err(failure) => HostAnswer { result: Err(failure), fuel_used: 0 },
        Ok(call) => {
            record.permission = call.permission().as_ref().map(ToString::to_string);
            if call.allowed_by(&state.host.grants) {
                record.granted = true;
                let context = CallContext { remaining_ns, fuel_remaining };
                state.host.intents.call(&call, &context)
            } else {
                let missing = record.permission.as_deref().unwrap_or_default();
                HostAnswer::failed(BlockedReason::PermissionDenied, format!("`{name}` needs `{missing}`."))
            }
        }
    };
    let HostAnswer { result, fuel_used: nested_fuel } = answer;
    record.reason = result.as_ref().err().map(|f| f.reason.as_str());
    let response = outcome_bytes(result);
    record.bytes += response.len() as u64;
    state.host.bytes += response.len() as u64;
    state.host.intents.audit(&record);
    if let Some(Err(failure)) = state.deadline_remaining() {
        return Err(wasmi::Error::host(failure));
    }
    if state.host.bytes > state.host.max_bytes {
        let detail = format!("The limit is {} bytes moved per intent.", state.host.max_bytes);
        return Err(wasmi::Error::host(Failure::new(BlockedReason::HostCallLimitExceeded, detail)));
    }
    let n = response.len();
    state.host.pending = Some(response);
    if nested_fuel > 0 {
        // A nested sandbox's fuel counts against this intent's budget.
        if nested_fuel > fuel_remaining {
            return Err(wasmi::Error::host(Failure::new(
                BlockedReason::FuelExhausted,
                "A nested tool call used up the caller's fuel.",
            )));
        }
        if nested_fuel <= fuel_now {
            caller.set_fuel(fuel_now - nested_fuel)?;
        } else {
            caller.data_mut().fuel.given += nested_fuel - fuel_now;
            caller.set_fuel(0)?;
        }
    }
    Ok(i32::try_from(n).unwrap_or(i32::MAX))
}

/// `tdm_host_response(ptr, cap) -> i32`.
fn host_response(mut caller: Caller<'_, HostState>, ptr: u32, cap: u32) -> i32 {
    let Some(memory) = memory_of(&caller) else {
        return ERR_BAD_POINTER;
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let Some(pending) = state.host.pending.as_ref() else {
        return ERR_NOTHING_PENDING;
    };
    if (cap as usize) < pending.len() {
        return ERR_CAP_TOO_SMALL;
    }
    let Some(end) = crate::abi::region_end(ptr, pending.len() as u32, data.len()) else {
        return ERR_BAD_POINTER;
    };
    data[ptr as usize..end].copy_from_slice(pending);
    let n = pending.len();
    state.host.pending = None;
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Defines the two host-intent imports on `linker`.
pub fn link(linker: &mut Linker<HostState>) -> Result<(), wasmi::Error> {
    linker.func_wrap(MODULE, "tdm_host_call", host_call)?;
    linker.func_wrap(MODULE, "tdm_host_response", host_response)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule: the request read as a JSON tree, then [`parse_call`].
    fn by_the_rule(bytes: &[u8]) -> Option<(String, Option<Result<HostCall, String>>)> {
        let request: Value = serde_json::from_slice(bytes).ok()?;
        let (Some("2.0"), Some(name)) =
            (request.get("jsonrpc").and_then(Value::as_str), request.get("method").and_then(Value::as_str))
        else {
            return None;
        };
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        Some((name.to_string(), Method::from_name(name).map(|m| parse_call(m, &params))))
    }

    #[test]
    fn the_fast_reading_of_a_request_agrees_with_the_rule() {
        let params = [
            r#"{"level":"warn","message":"hi"}"#,
            r#"{"message":"hi"}"#,
            r#"{"message":"esc\u00e9\n\"q\""}"#,
            r#"{"level":7,"message":"hi"}"#,
            r#"{"level":null,"message":"hi"}"#,
            r#"{"message":"a","message":"b"}"#,
            r#"{"message":1}"#,
            r#"["warn","hi"]"#,
            r#"["a.txt"]"#,
            r#"{"path":"a.txt"}"#,
            r#"{"path":"a.txt","extra":[1,{"x":2}]}"#,
            r#"{"name":"token"}"#,
            r#"{"key":"user"}"#,
            r#"{"key":"a","key":"b"}"#,
            r#"{"url":"https://example.com/","headers":{"a":"b"}}"#,
            r#"{"tool":"t","intent":"i","params":{"n":1}}"#,
            r#"null"#,
            r#""text""#,
            r#"{}"#,
        ];
        let methods = ["log", "dist.read", "vault.read", "context.read", "net.fetch", "tool.invoke", "nope"];
        let mut requests: Vec<String> = Vec::new();
        for method in methods {
            for p in params {
                requests.push(format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{p}}}"#));
                requests.push(format!(r#" {{ "params" : {p} , "method" : "{method}" , "jsonrpc" : "2.0" }}"#));
            }
            requests.push(format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#));
            requests.push(format!(r#"{{"jsonrpc":"1.0","method":"{method}","params":{{}}}}"#));
            requests.push(format!(r#"["2.0","{method}",{{"message":"x"}}]"#));
            requests.push(format!(r#"{{"jsonrpc":"2.0","method":"x","method":"{method}","params":{{"path":"p"}}}}"#));
        }
        let not_utf8: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":{\"message\":\"\xff\"}}";
        assert!(by_the_rule(not_utf8).is_none() && Request::parse(not_utf8).is_none());
        requests.push(String::from(r#"{"jsonrpc":"2.0","method":7}"#));
        requests.push(String::from(r#"{"jsonrpc":"2.0","method":"log","params":{"message":"x"}"#));
        for request in &requests {
            let rule = by_the_rule(request.as_bytes());
            let fast = Request::parse(request.as_bytes())
                .map(|r| (r.method.to_string(), Method::from_name(&r.method).map(|m| r.call(m))));
            match (&rule, &fast) {
                (None, None) => {}
                (Some((rule_name, rule_call)), Some((fast_name, fast_call))) => {
                    assert_eq!(rule_name, fast_name, "{request}");
                    match (rule_call, fast_call) {
                        (None, None) => {}
                        (Some(Ok(a)), Some(Ok(b))) => assert_eq!(a, b, "{request}"),
                        (Some(Err(_)), Some(Err(_))) => {}
                        other => panic!("{request}: the rule gives {:?}, the fast path {:?}", other.0, other.1),
                    }
                }
                _ => panic!("{request}: the rule reads it: {}, the fast path: {}", rule.is_some(), fast.is_some()),
            }
        }
    }

    #[test]
    fn url_hosts_are_parsed_strictly() {
        assert_eq!(url_host("https://API.example.com/x?y").unwrap(), "api.example.com");
        assert_eq!(url_host("http://127.0.0.1:8080/").unwrap(), "127.0.0.1");
        assert_eq!(url_host("http://[::1]:80/").unwrap(), "::1");
        assert!(url_host("ftp://example.com/").is_err());
        assert!(url_host("https://user@evil.com/").is_err());
        assert!(url_host("https://good.com@evil.com/").is_err());
        assert!(url_host("https:///path").is_err());
        assert!(url_host("file:///etc/passwd").is_err());
    }

    #[test]
    fn permission_checks_follow_the_grants() {
        let grants = Permissions::parse_all(["network:*.example.com", "vault:read"]).unwrap();
        let fetch = |host: &str| HostCall::NetFetch {
            url: format!("https://{host}/"),
            host: host.into(),
            method: "GET".into(),
            headers: Vec::new(),
            body: None,
        };
        assert!(fetch("api.example.com").allowed_by(&grants));
        assert!(!fetch("example.org").allowed_by(&grants));
        assert!(HostCall::VaultRead { name: "k".into() }.allowed_by(&grants));
        assert!(!HostCall::ContextRead { key: "k".into() }.allowed_by(&grants));
        assert!(HostCall::Log { level: "info".into(), message: "m".into() }.allowed_by(&Permissions::default()));
    }
}
