//! One MCP session (stdio has one, `--http` one per `Mcp-Session-Id`): the handshake and its
//! order, the tools listed from `tdm_sdk::catalogue` (re-read on every request, so an approval or
//! a revoke in another shell counts at once), `logging/setLevel`, and calls handed to [`Calls`].
//! Every answer goes to the outbox of the message that asked.

use super::calls::{self, Calls, NotStarted, LEVELS};
use super::wire::{code, Incoming, Outbox};
use super::Server;
use crate::terminal::errln;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tdm_sdk::catalogue::{approved_tools, Catalogue, Tool};
use tdm_sdk::files::truncated;
use tdm_sdk::workspace::Workspace;

/// The protocol revisions served, oldest first; the last is offered to a client asking for
/// another.
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];
/// The most bytes of a client's text (a method, a tool name) quoted back in a message.
pub const QUOTED_BYTES: usize = 128;
/// Tools per `tools/list` page.
pub const PAGE_SIZE: usize = 100;

/// One client's session.
pub struct McpSession {
    workspace: Workspace,
    only: Vec<String>,
    /// Its calls.
    pub calls: Calls,
    initialized: AtomicBool,
}

impl McpSession {
    /// A session of `server`: its workspace's approved plugins (those it names, when it does),
    /// its calls on the server's workers.
    pub fn new(server: &Server) -> Self {
        let mut calls = Calls::new(server.workspace.dir.clone(), Arc::clone(&server.workers), server.max_in_flight);
        calls.record_dir.clone_from(&server.record_dir);
        Self {
            workspace: Workspace::existing(server.workspace.dir.clone()),
            only: server.only.clone(),
            calls,
            initialized: AtomicBool::new(false),
        }
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
                if method == "notifications/cancelled" {
                    self.calls.cancel(&params["requestId"]);
                }
                Ok(())
            }
            Incoming::Response => Ok(()),
            Incoming::Refused { id, code, message } => outbox.error(&id, code, &message),
        }
    }

    fn request(&self, id: Value, method: &str, params: &Value, outbox: &Outbox) -> std::io::Result<()> {
        let known = ["initialize", "ping", "tools/list", "tools/call", "logging/setLevel"];
        if !known.contains(&method) {
            let why = format!("Method not found: `{}`.", truncated(method, QUOTED_BYTES));
            return outbox.error(&id, code::METHOD_NOT_FOUND, &why);
        }
        let initialized = self.is_initialized();
        match method {
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
                        "serverInfo": {"name": "tdm", "title": "Contour", "version": env!("CARGO_PKG_VERSION")},
                        "instructions": "Each tool is one intent of a WebAssembly plugin an operator approved; it runs sandboxed within its approved limits and permissions, and every host call is audited.",
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
            "tools/list" => self.list(id, params, outbox),
            _ => self.call(id, params, outbox),
        }
    }

    fn catalogue(&self) -> Result<Catalogue, String> {
        approved_tools(&self.workspace, &self.only).map_err(|e| format!("The workspace cannot be read: {e}."))
    }

    fn list(&self, id: Value, params: &Value, outbox: &Outbox) -> std::io::Result<()> {
        let start = match &params["cursor"] {
            Value::Null => Some(0),
            Value::String(cursor) => cursor.parse::<usize>().ok(),
            _ => None,
        };
        let Some(start) = start else {
            return outbox.error(&id, code::INVALID_PARAMS, "Invalid params: the cursor is not one tdm gave.");
        };
        let catalogue = match self.catalogue() {
            Ok(catalogue) => catalogue,
            Err(why) => return outbox.error(&id, -32603, &why),
        };
        let page: Vec<Value> = catalogue.tools.iter().skip(start).take(PAGE_SIZE).map(tool_json).collect();
        let mut result = json!({"tools": page});
        if start + PAGE_SIZE < catalogue.tools.len() {
            result["nextCursor"] = json!((start + PAGE_SIZE).to_string());
        }
        outbox.result(&id, result)
    }

    fn call(&self, id: Value, params: &Value, outbox: &Outbox) -> std::io::Result<()> {
        let Some(name) = params["name"].as_str() else {
            return outbox.error(&id, code::INVALID_PARAMS, "Invalid params: `name` (a string) is missing.");
        };
        let catalogue = match self.catalogue() {
            Ok(catalogue) => catalogue,
            Err(why) => return outbox.error(&id, -32603, &why),
        };
        if let Some(why) = catalogue.refusal(name) {
            let refused = calls::failed(
                &format!("The plugin has no valid operator approval. {why}"),
                "not_approved",
                "Ask an operator to review and approve the plugin (tdm approve).",
                false,
            );
            return outbox.result(&id, refused);
        }
        let Some(tool) = catalogue.find(name).cloned() else {
            let why = format!("Unknown tool: `{}` (tools/list names the tools).", truncated(name, QUOTED_BYTES));
            return outbox.error(&id, code::INVALID_PARAMS, &why);
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
        match self.calls.start(id.clone(), tool, arguments, outbox) {
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

/// A tool as `tools/list` lists it.
fn tool_json(tool: &Tool) -> Value {
    let description = if tool.description.is_empty() {
        format!("Intent `{}` of plugin {} {}.", tool.intent, tool.plugin, tool.version)
    } else {
        tool.description.clone()
    };
    json!({
        "name": tool.name,
        "title": format!("{} ({} {})", tool.intent, tool.plugin, tool.version),
        "description": description,
        "inputSchema": {"type": "object"},
        "annotations": {"openWorldHint": tool.open_world},
    })
}
