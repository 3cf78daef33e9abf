//! `tdm mcp`: an MCP server over stdio whose tools are the approved plugins' intents
//! (docs/mcp.md). Newline-delimited JSON-RPC on stdin and stdout, tdm's own lines on stderr
//! only. The handshake revisions 2025-03-26, 2025-06-18 and 2025-11-25; tools from
//! `tdm_sdk::catalogue`, listed in pages and re-read on every request, so an approval or a
//! revoke in another shell counts at once (and `notifications/tools/list_changed` says so);
//! calls run as `tdm call` runs them ([`calls`]). A closed stdin or SIGINT cancels the calls
//! in flight, waits for them, and exits 0.

mod calls;
mod wire;

use crate::cli::args::{GlobalArgs, WorkspaceArg};
use crate::exit::EXIT_COMPLETED;
use crate::terminal::errln;
use calls::{Calls, NotStarted, LEVELS};
use clap::Args;
use serde_json::{json, Map, Value};
use std::io::BufReader;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tdm_sdk::catalogue::{approved_tools, Catalogue, Tool};
use tdm_sdk::environment::{Cancel, CANCEL_POLL};
use tdm_sdk::files::truncated;
use tdm_sdk::workspace::{workspace_dir, Workspace, STATE_FILE};
use wire::{code, Incoming, Line, Outbox};

/// The protocol revisions served, oldest first; the last is offered to a client asking for
/// another.
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];
/// The most bytes of a client's text (a method, a tool name) quoted back in a message.
const QUOTED_BYTES: usize = 128;
/// Tools per `tools/list` page.
pub const PAGE_SIZE: usize = 100;
/// How often the workspace state is looked at for `notifications/tools/list_changed`.
const WATCH_EVERY: Duration = Duration::from_millis(250);

const EXAMPLES: &str = "\
Examples:
  tdm mcp                        (serves every approved plugin's intents over stdio)
  tdm mcp --plugin echo          (only echo's)
  claude mcp add contour -- tdm mcp   (see docs/mcp.md for Claude Desktop, VS Code, Cursor)";

/// `tdm mcp`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct McpArgs {
    /// Serve only this installed plugin's intents (repeatable)
    #[arg(long = "plugin", value_name = "ID")]
    plugins: Vec<String>,
    /// Calls run at once [default: one per core]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    workers: Option<u16>,
    #[command(flatten)]
    ws: WorkspaceArg,
}

/// The session's state.
struct Server {
    workspace: Workspace,
    only: Vec<String>,
    outbox: Outbox,
    calls: Calls,
    initialized: Arc<AtomicBool>,
}

/// Runs `tdm mcp`; the exit code.
pub fn main(args: &McpArgs, _global: &GlobalArgs) -> u8 {
    let dir = workspace_dir(args.ws.workspace.as_deref());
    let outbox = Outbox::new(Box::new(std::io::stdout()));
    let workers = args.workers.map_or_else(|| std::thread::available_parallelism().map_or(1, usize::from), usize::from);
    let server = Server {
        workspace: Workspace::existing(dir.clone()),
        only: args.plugins.clone(),
        outbox: outbox.clone(),
        calls: Calls::new(dir.clone(), outbox.clone(), workers, workers * 4),
        initialized: Arc::new(AtomicBool::new(false)),
    };
    let sigint = Cancel::on_sigint().map_err(|e| errln!("tdm mcp: warning: Ctrl-C cannot stop the server ({e})")).ok();
    let stop = Arc::new(AtomicBool::new(false));
    watch_tools(&server, Arc::clone(&stop));
    errln!("tdm mcp: serving the approved plugins of {} over stdio", dir.display());
    // stdin is read on a thread of its own, so a signal is seen while no line comes.
    let (lines, incoming) = sync_channel::<std::io::Result<Line>>(1);
    let _ = std::thread::Builder::new().name("tdm-mcp-stdin".into()).spawn(move || {
        let mut input = BufReader::new(std::io::stdin());
        loop {
            let line = wire::read_line(&mut input);
            let last = !matches!(line, Ok(Line::Message(_) | Line::TooLong));
            if lines.send(line).is_err() || last {
                return;
            }
        }
    });
    loop {
        if sigint.as_ref().is_some_and(Cancel::is_set) {
            errln!("tdm mcp: interrupted (SIGINT): cancelling the calls in flight");
            break;
        }
        let line = match incoming.recv_timeout(CANCEL_POLL) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let sent = match line {
            Ok(Line::Message(bytes)) => server.handle(wire::classify(&bytes)),
            Ok(Line::TooLong) => {
                let why = format!("Invalid request: a message is at most {} bytes.", wire::MAX_MESSAGE_BYTES);
                outbox.error(&Value::Null, code::INVALID_REQUEST, &why)
            }
            Ok(Line::End) => break,
            Err(e) => {
                errln!("tdm mcp: stdin cannot be read: {e}");
                break;
            }
        };
        if let Err(e) = sent {
            errln!("tdm mcp: the client is gone ({e})");
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    server.calls.cancel_all_and_wait();
    EXIT_COMPLETED
}

impl Server {
    /// Handles one message; an error means the client is gone.
    fn handle(&self, incoming: Incoming) -> std::io::Result<()> {
        match incoming {
            Incoming::Request { id, method, params } => self.request(id, &method, &params),
            Incoming::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    self.calls.cancel(&params["requestId"]);
                }
                Ok(())
            }
            Incoming::Response => Ok(()),
            Incoming::Refused { id, code, message } => self.outbox.error(&id, code, &message),
        }
    }

    fn request(&self, id: Value, method: &str, params: &Value) -> std::io::Result<()> {
        let known = ["initialize", "ping", "tools/list", "tools/call", "logging/setLevel"];
        if !known.contains(&method) {
            let why = format!("Method not found: `{}`.", truncated(method, QUOTED_BYTES));
            return self.outbox.error(&id, code::METHOD_NOT_FOUND, &why);
        }
        let initialized = self.initialized.load(Ordering::Relaxed);
        match method {
            "ping" => self.outbox.result(&id, json!({})),
            "initialize" if initialized => {
                self.outbox.error(&id, code::INVALID_REQUEST, "Invalid request: the session is already initialized.")
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
                self.outbox.result(
                    &id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                        "serverInfo": {"name": "tdm", "title": "Contour", "version": env!("CARGO_PKG_VERSION")},
                        "instructions": "Each tool is one intent of a WebAssembly plugin an operator approved; it runs sandboxed within its approved limits and permissions, and every host call is audited.",
                    }),
                )
            }
            _ if !initialized => {
                self.outbox.error(&id, code::INVALID_REQUEST, "Invalid request: send `initialize` first.")
            }
            "logging/setLevel" => match LEVELS.iter().position(|l| params["level"] == *l) {
                Some(rank) => {
                    self.calls.log_level.store(rank as u8, Ordering::Relaxed);
                    self.outbox.result(&id, json!({}))
                }
                None => {
                    self.outbox.error(&id, code::INVALID_PARAMS, "Invalid params: `level` is not an MCP log level.")
                }
            },
            "tools/list" => self.list(id, params),
            _ => self.call(id, params),
        }
    }

    fn catalogue(&self) -> Result<Catalogue, String> {
        approved_tools(&self.workspace, &self.only).map_err(|e| format!("The workspace cannot be read: {e}."))
    }

    fn list(&self, id: Value, params: &Value) -> std::io::Result<()> {
        let start = match &params["cursor"] {
            Value::Null => Some(0),
            Value::String(cursor) => cursor.parse::<usize>().ok(),
            _ => None,
        };
        let Some(start) = start else {
            return self.outbox.error(&id, code::INVALID_PARAMS, "Invalid params: the cursor is not one tdm gave.");
        };
        let catalogue = match self.catalogue() {
            Ok(catalogue) => catalogue,
            Err(why) => return self.outbox.error(&id, -32603, &why),
        };
        let page: Vec<Value> = catalogue.tools.iter().skip(start).take(PAGE_SIZE).map(tool_json).collect();
        let mut result = json!({"tools": page});
        if start + PAGE_SIZE < catalogue.tools.len() {
            result["nextCursor"] = json!((start + PAGE_SIZE).to_string());
        }
        self.outbox.result(&id, result)
    }

    fn call(&self, id: Value, params: &Value) -> std::io::Result<()> {
        let Some(name) = params["name"].as_str() else {
            return self.outbox.error(&id, code::INVALID_PARAMS, "Invalid params: `name` (a string) is missing.");
        };
        let catalogue = match self.catalogue() {
            Ok(catalogue) => catalogue,
            Err(why) => return self.outbox.error(&id, -32603, &why),
        };
        if let Some(why) = catalogue.refusal(name) {
            let refused = calls::failed(
                &format!("The plugin has no valid operator approval. {why}"),
                "not_approved",
                "Ask an operator to review and approve the plugin (tdm approve).",
                false,
            );
            return self.outbox.result(&id, refused);
        }
        let Some(tool) = catalogue.find(name).cloned() else {
            let why = format!("Unknown tool: `{}` (tools/list names the tools).", truncated(name, QUOTED_BYTES));
            return self.outbox.error(&id, code::INVALID_PARAMS, &why);
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
                return self.outbox.result(&id, refused);
            }
        };
        match self.calls.start(id.clone(), tool, arguments) {
            Ok(()) => Ok(()),
            Err(NotStarted::Busy(bound)) => self.outbox.error(
                &id,
                code::BUSY,
                &format!(
                    "Server busy: {bound} calls are in flight, the most one session may hold; retry when one ends."
                ),
            ),
            Err(NotStarted::IdInUse) => {
                self.outbox.error(&id, code::INVALID_REQUEST, "Invalid request: a call with this id is in flight.")
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

/// Watches the workspace state, and once the client is initialized sends
/// `notifications/tools/list_changed` whenever the tool names change.
fn watch_tools(server: &Server, stop: Arc<AtomicBool>) {
    let state = server.workspace.dir.join(STATE_FILE);
    let (workspace, only) = (Workspace::existing(server.workspace.dir.clone()), server.only.clone());
    let (outbox, initialized) = (server.outbox.clone(), Arc::clone(&server.initialized));
    let names = move || -> Vec<String> {
        approved_tools(&workspace, &only).map(|c| c.tools.into_iter().map(|t| t.name).collect()).unwrap_or_default()
    };
    let stamp = move || -> Option<(SystemTime, u64)> {
        let meta = std::fs::symlink_metadata(&state).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    };
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
            if now_names != seen_names && initialized.load(Ordering::Relaxed) {
                let _ = outbox.notify("notifications/tools/list_changed", json!({}));
            }
            seen_names = now_names;
        }
    });
}
