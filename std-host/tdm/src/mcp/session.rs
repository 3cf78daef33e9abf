//! One MCP session (stdio has one, `--http` one per `Mcp-Session-Id` and one for all stateless
//! requests): the handshake and its order, or the 2026-07-28 request's own `_meta`; the tools
//! listed from `tdm_sdk::catalogue` (re-read on every request, so an approval or a revoke in
//! another shell counts at once); `logging/setLevel`; and calls handed to [`Calls`].
//! Every answer goes to the outbox of the message that asked.

use super::calls::{self, Asker, Calls, NotStarted, LEVELS};
use super::server::Server;
use super::wire::{code, Incoming, Outbox};
use crate::terminal::errln;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tdm_sdk::catalogue::{approved_tools, tool_named, Tool};
use tdm_sdk::files::truncated;
use tdm_sdk::workspace::Workspace;

/// The handshake revisions served, oldest first; the last is offered to a client asking for
/// another.
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];
/// The stateless revision served: each request names it in `_meta`.
pub const STATELESS_VERSION: &str = "2026-07-28";
/// The `_meta` keys of a 2026-07-28 request.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";
/// The most `subscriptions/listen` streams one session keeps open.
pub const MAX_LISTENERS: usize = 16;
/// What the server says of itself.
const INSTRUCTIONS: &str = "Each tool is one intent of a WebAssembly plugin an operator approved; it runs sandboxed within its approved limits and permissions, and every host call is audited.";

/// Every revision served, for `server/discover` and the unsupported-version error.
pub fn supported_versions() -> Vec<&'static str> {
    PROTOCOL_VERSIONS.iter().copied().chain([STATELESS_VERSION]).collect()
}

/// The -32022 error answering a request for a revision not served.
fn unsupported_version(id: &Value, asked: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": code::UNSUPPORTED_VERSION,
        "message": format!("Unsupported protocol version `{}`.", truncated(asked, QUOTED_BYTES)),
        "data": {"supported": supported_versions(), "requested": truncated(asked, QUOTED_BYTES)},
    }})
}

/// The message of an internal error: the workspace could not be read.
fn unreadable(error: &dyn std::fmt::Display) -> String {
    format!("The workspace cannot be read: {error}.")
}

/// The `server/discover` result.
fn discover() -> Value {
    json!({
        "supportedVersions": supported_versions(),
        "capabilities": {"tools": {"listChanged": true}},
        "instructions": INSTRUCTIONS,
        "cacheScope": "public",
        "ttlMs": 0,
        "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
    })
}

fn server_info() -> Value {
    json!({"name": "tdm", "title": "Contour", "version": env!("CARGO_PKG_VERSION")})
}

/// A response with `resultType` added to its result, as 2026-07-28 requires.
fn with_result_type(mut message: Value) -> Value {
    if let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) {
        result.insert("resultType".into(), json!("complete"));
    }
    message
}
/// The most bytes of a client's text (a method, a tool name) quoted back in a message.
pub const QUOTED_BYTES: usize = 128;
/// Tools per `tools/list` page.
pub const PAGE_SIZE: usize = 100;

/// The most tools a session remembers by name.
const MAX_FOUND: usize = 1024;

/// Tools found by name, and the state file's stamp (modification time, length) they were found
/// under.
#[derive(Default)]
struct Found {
    stamp: Option<(std::time::SystemTime, u64)>,
    tools: HashMap<String, Tool>,
}

/// One client's session.
pub struct McpSession {
    workspace: Workspace,
    only: Vec<String>,
    /// Its calls.
    pub calls: Calls,
    initialized: AtomicBool,
    /// The tools calls named, while the state file is unchanged.
    found: Mutex<Found>,
    /// The open `subscriptions/listen` streams (2026-07-28) that asked for tool changes: the
    /// request's id and where its stream goes.
    listeners: Mutex<Vec<(Value, Outbox)>>,
}

impl McpSession {
    /// A session of `server`: its workspace's approved plugins (those it names, when it does),
    /// its calls on the server's workers.
    pub fn new(server: &Server) -> Self {
        let mut calls = Calls::new(server.workspace.dir.clone(), server.calls.clone(), server.max_in_flight);
        calls.record_dir.clone_from(&server.record_dir);
        Self {
            workspace: Workspace::existing(server.workspace.dir.clone()),
            only: server.only.clone(),
            calls,
            initialized: AtomicBool::new(false),
            listeners: Mutex::default(),
            found: Mutex::default(),
        }
    }

    /// The tool `name` names: remembered while the state file keeps its modification time and
    /// length (an install, approval, revoke or uninstall rewrites it), else looked up in the
    /// workspace (the state and one manifest read). What a call runs is checked again when its
    /// session opens or runs, so a remembered tool never runs what is not approved.
    fn tool(&self, name: &str) -> Result<Option<Tool>, tdm_sdk::workspace::WorkspaceError> {
        let stamp = super::watch::state_stamp(&self.workspace);
        if let Ok(found) = self.found.lock() {
            if stamp.is_some() && found.stamp == stamp {
                if let Some(tool) = found.tools.get(name) {
                    return Ok(Some(tool.clone()));
                }
            }
        }
        let tool = tool_named(&self.workspace, &self.only, name)?;
        if let (Some(tool), Ok(mut found)) = (&tool, self.found.lock()) {
            if found.stamp != stamp || found.tools.len() >= MAX_FOUND {
                *found = Found { stamp, tools: HashMap::new() };
            }
            found.tools.insert(name.to_string(), tool.clone());
        }
        Ok(tool)
    }

    /// Tells each open `subscriptions/listen` stream that the tools changed; a stream whose
    /// client is gone is dropped.
    pub fn tools_changed(&self) {
        if let Ok(mut listeners) = self.listeners.lock() {
            listeners.retain(|(id, outbox)| {
                let meta = json!({"_meta": {META_SUBSCRIPTION: id}});
                outbox.notify("notifications/tools/list_changed", meta).is_ok()
            });
        }
    }

    /// Ends every open `subscriptions/listen` stream gracefully (its request's result).
    pub fn end_listeners(&self) {
        let ended: Vec<(Value, Outbox)> = self.listeners.lock().map(|mut l| l.drain(..).collect()).unwrap_or_default();
        for (id, outbox) in ended {
            let _ = outbox.result(&id, json!({}));
        }
    }

    /// `subscriptions/listen`: acknowledged at once with what is honored (tool changes only:
    /// the server has no prompts or resources), then kept open; the answer comes when the
    /// server ends, or never when the client cancels it.
    fn listen(&self, id: Value, params: &Value, outbox: &Outbox) -> std::io::Result<()> {
        let wants_tools = params["notifications"]["toolsListChanged"] == true;
        let honored = if wants_tools { json!({"toolsListChanged": true}) } else { json!({}) };
        if wants_tools {
            let Ok(mut listeners) = self.listeners.lock() else {
                return outbox.error(&id, code::INTERNAL, "Internal error: the listeners cannot be reached.");
            };
            if listeners.len() >= MAX_LISTENERS {
                let why =
                    format!("Server busy: {MAX_LISTENERS} subscriptions are open, the most one session may hold.");
                return outbox.error(&id, code::BUSY, &why);
            }
            listeners.push((id.clone(), outbox.clone()));
        }
        let ack = json!({"notifications": honored, "_meta": {META_SUBSCRIPTION: id}});
        outbox.notify("notifications/subscriptions/acknowledged", ack)?;
        if !wants_tools {
            // Nothing to hear of: the stream ends at once.
            return outbox.result(&id, json!({}));
        }
        Ok(())
    }

    /// Whether `id` names an open `subscriptions/listen` stream, which a cancel then closes.
    fn stop_listening(&self, id: &Value) -> bool {
        let Ok(mut listeners) = self.listeners.lock() else { return false };
        let before = listeners.len();
        listeners.retain(|(listening, _)| listening != id);
        listeners.len() != before
    }

    /// Whether `initialize` was answered.
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Relaxed)
    }

    /// Handles one message; an error means the client is gone.
    pub fn handle(&self, incoming: Incoming, outbox: &Outbox) -> std::io::Result<()> {
        match incoming {
            Incoming::Request { id, method, params } => self.request(id, &method, &params, outbox),
            Incoming::Notification { method, params } => {
                if method == "notifications/cancelled" && !self.stop_listening(&params["requestId"]) {
                    self.calls.cancel(&params["requestId"]);
                }
                Ok(())
            }
            Incoming::Response => Ok(()),
            Incoming::Refused { id, code, message } => outbox.error(&id, code, &message),
        }
    }

    fn request(&self, id: Value, method: &str, params: &Value, outbox: &Outbox) -> std::io::Result<()> {
        let known = [
            "initialize",
            "ping",
            "tools/list",
            "tools/call",
            "logging/setLevel",
            "server/discover",
            "subscriptions/listen",
        ];
        if !known.contains(&method) {
            let why = format!("Method not found: `{}`.", truncated(method, QUOTED_BYTES));
            return outbox.error(&id, code::METHOD_NOT_FOUND, &why);
        }
        // The stateless revision: the request says its version (and who asks, and the log level
        // it wants) in its own `_meta`; no handshake, no session state.
        let meta = &params["_meta"];
        if let Some(asked) = meta[META_VERSION].as_str() {
            if asked != STATELESS_VERSION {
                return outbox.send(&unsupported_version(&id, asked));
            }
            let outbox = outbox.map(with_result_type);
            let asker = Asker {
                log_level: meta[META_LOG_LEVEL].as_str().and_then(|level| LEVELS.iter().position(|l| *l == level)),
                client: meta[META_CLIENT_INFO]["name"].as_str().map(|name| truncated(name, QUOTED_BYTES)),
            };
            return match method {
                "server/discover" => outbox.result(&id, discover()),
                "tools/list" => self.list(id, params, &outbox, true),
                "tools/call" => self.call(id, params, &outbox, Some(asker)),
                "subscriptions/listen" => self.listen(id, params, &outbox),
                _ => {
                    let why = format!("Method not found: `{method}` is not part of MCP {STATELESS_VERSION}.");
                    outbox.error(&id, code::METHOD_NOT_FOUND, &why)
                }
            };
        }
        let initialized = self.is_initialized();
        match method {
            // A handshake-era client's probe (no version in `_meta`): say what is served.
            "server/discover" => outbox.send(&unsupported_version(&id, "")),
            "ping" => outbox.result(&id, json!({})),
            "initialize" if initialized => {
                outbox.error(&id, code::INVALID_REQUEST, "Invalid request: the session is already initialized.")
            }
            "initialize" => {
                let asked = params["protocolVersion"].as_str().unwrap_or_default();
                let version = PROTOCOL_VERSIONS.iter().find(|v| **v == asked).unwrap_or(&PROTOCOL_VERSIONS[2]);
                let client = params["clientInfo"]["name"].as_str().unwrap_or("an unnamed client");
                errln!("tdm mcp: {} connected (protocol {version})", truncated(client, QUOTED_BYTES));
                if let Ok(mut named) = self.calls.client.lock() {
                    *named = Some(truncated(client, QUOTED_BYTES));
                }
                self.initialized.store(true, Ordering::Relaxed);
                outbox.result(
                    &id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                        "serverInfo": server_info(),
                        "instructions": INSTRUCTIONS,
                    }),
                )
            }
            _ if !initialized => outbox.error(&id, code::INVALID_REQUEST, "Invalid request: send `initialize` first."),
            "logging/setLevel" => match LEVELS.iter().position(|l| params["level"] == *l) {
                Some(rank) => {
                    self.calls.log_level.store(rank as u8, Ordering::Relaxed);
                    outbox.result(&id, json!({}))
                }
                None => outbox.error(&id, code::INVALID_PARAMS, "Invalid params: `level` is not an MCP log level."),
            },
            "tools/list" => self.list(id, params, outbox, false),
            "subscriptions/listen" => {
                let why = format!("Method not found: `subscriptions/listen` is part of MCP {STATELESS_VERSION}; this session handshook an older revision, whose notifications/tools/list_changed it gets.");
                outbox.error(&id, code::METHOD_NOT_FOUND, &why)
            }
            _ => self.call(id, params, outbox, None),
        }
    }

    /// `tools/list`; `stateless`: the result carries the caching hints 2026-07-28 requires.
    fn list(&self, id: Value, params: &Value, outbox: &Outbox, stateless: bool) -> std::io::Result<()> {
        let start = match &params["cursor"] {
            Value::Null => Some(0),
            Value::String(cursor) => cursor.parse::<usize>().ok(),
            _ => None,
        };
        let Some(start) = start else {
            return outbox.error(&id, code::INVALID_PARAMS, "Invalid params: the cursor is not one tdm gave.");
        };
        let tools = match approved_tools(&self.workspace, &self.only) {
            Ok(tools) => tools,
            Err(e) => return outbox.error(&id, code::INTERNAL, &unreadable(&e)),
        };
        let page: Vec<Value> = tools.iter().skip(start).take(PAGE_SIZE).map(tool_json).collect();
        let mut result = json!({"tools": page});
        if stateless {
            // The catalogue follows the workspace: a client must ask again, not cache it.
            result["cacheScope"] = json!("private");
            result["ttlMs"] = json!(0);
        }
        if start + PAGE_SIZE < tools.len() {
            result["nextCursor"] = json!((start + PAGE_SIZE).to_string());
        }
        outbox.result(&id, result)
    }

    /// `tools/call`; `asker`: who asks and the log level wanted, when the request says so
    /// itself (2026-07-28), else the session's.
    fn call(&self, id: Value, params: &Value, outbox: &Outbox, asker: Option<Asker>) -> std::io::Result<()> {
        let Some(name) = params["name"].as_str() else {
            return outbox.error(&id, code::INVALID_PARAMS, "Invalid params: `name` (a string) is missing.");
        };
        let tool = match self.tool(name) {
            Ok(Some(tool)) => tool,
            Ok(None) => {
                let why = format!("Unknown tool: `{}` (tools/list names the tools).", truncated(name, QUOTED_BYTES));
                return outbox.error(&id, code::INVALID_PARAMS, &why);
            }
            Err(e) => return outbox.error(&id, code::INTERNAL, &unreadable(&e)),
        };
        let arguments = match &params["arguments"] {
            Value::Null => Map::new(),
            Value::Object(arguments) => arguments.clone(),
            _ => {
                let refused = calls::failed(
                    "The arguments do not match the tool's input schema: they must be an object.",
                    "invalid_params",
                    "Send the arguments as a JSON object.",
                    false,
                );
                return outbox.result(&id, refused);
            }
        };
        match self.calls.start(id.clone(), tool, arguments, outbox, asker) {
            Ok(()) => Ok(()),
            Err(NotStarted::Busy(bound)) => outbox.error(
                &id,
                code::BUSY,
                &format!(
                    "Server busy: {bound} calls are in flight, the most one session may hold; retry when one ends."
                ),
            ),
            Err(NotStarted::IdInUse) => {
                outbox.error(&id, code::INVALID_REQUEST, "Invalid request: a call with this id is in flight.")
            }
        }
    }
}

/// A tool as `tools/list` lists it: its title and description as declared (or made from its
/// plugin and intent), its declared params schema as `inputSchema` (MCP passes arguments as an
/// object: `{"type": "object"}` when none is declared, and `"type": "object"` added to a
/// declared one that names no type), its declared result schema as `outputSchema` when that
/// describes objects (what MCP's `structuredContent` is).
fn tool_json(tool: &Tool) -> Value {
    let description = if tool.description.is_empty() {
        format!("Intent `{}` of plugin {} {}.", tool.intent, tool.plugin, tool.version)
    } else {
        tool.description.clone()
    };
    let title = tool.title.clone().unwrap_or_else(|| format!("{} ({} {})", tool.intent, tool.plugin, tool.version));
    let input = match &tool.params {
        Some(Value::Object(schema)) if !schema.contains_key("type") => {
            let mut schema = schema.clone();
            schema.insert("type".into(), json!("object"));
            Value::Object(schema)
        }
        Some(schema @ Value::Object(_)) => schema.clone(),
        _ => json!({"type": "object"}),
    };
    let mut listed = json!({
        "name": tool.name,
        "title": title,
        "description": description,
        "inputSchema": input,
        "annotations": {"openWorldHint": tool.open_world},
    });
    if let Some(output) = tool.result.as_ref().filter(|schema| schema.get("type") == Some(&json!("object"))) {
        listed["outputSchema"] = output.clone();
    }
    listed
}
