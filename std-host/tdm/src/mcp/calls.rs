//! The MCP server's tool calls: each runs as `tdm call` runs an intent (the approved-launch
//! check first, then its approved limits and host intents, audited, its figures kept in the
//! workspace), in a fresh instance on a thread of its own, at most `workers` at once and
//! `max_in_flight` held, each with the cancel handle `notifications/cancelled` sets.

use super::wire::Outbox;
use crate::terminal::errln;
use contour_core::BlockedReason;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use tdm_sdk::catalogue::Tool;
use tdm_sdk::environment::{Cancel, CANCEL_POLL};
use tdm_sdk::intents::audit::Tag;
use tdm_sdk::intents::Notice;
use tdm_sdk::operator;
use tdm_sdk::params::Params;
use tdm_sdk::schema::Mismatch;
use tdm_sdk::session::{outputs_of, HostFiles, ModuleCache, Request, Session, SessionOptions};
use tdm_sdk::traces::write_trace;
use tdm_sdk::workspace::Workspace;

/// MCP's log levels, lowest first (`logging/setLevel`, `notifications/message`).
pub const LEVELS: [&str; 8] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// A call in flight: its cancel handle, and whether its answer is withheld (the client
/// cancelled it, so it expects none).
struct Flight {
    cancel: Cancel,
    withheld: bool,
}

/// Who asks for one call and the log level they want, when a request says so itself (MCP
/// 2026-07-28) rather than the session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Asker {
    /// The lowest level of log lines sent (index into [`LEVELS`]); `None`: none are.
    pub log_level: Option<usize>,
    /// The client's name.
    pub client: Option<String>,
}

/// Why a call was not started.
#[derive(Debug, PartialEq, Eq)]
pub enum NotStarted {
    /// `max_in_flight` calls are held already.
    Busy(usize),
    /// A call with the same id is in flight.
    IdInUse,
}

/// Free worker slots, shared by every session of a server: at most that many calls run at once.
pub type Workers = Arc<(Mutex<usize>, Condvar)>;

/// `count` free worker slots.
pub fn workers(count: usize) -> Workers {
    Arc::new((Mutex::new(count.max(1)), Condvar::new()))
}

/// Warm sessions kept between calls, by plugin id and the client they were opened for.
type Pool = Arc<Mutex<HashMap<(String, Option<String>), Vec<Session>>>>;

/// What every session's calls share: the worker slots, the compiled modules (so a fresh
/// instance does not compile again), and the warm instances of the plugins named by `--warm`.
#[derive(Clone)]
pub struct Shared {
    workers: Workers,
    modules: ModuleCache,
    warm: Arc<Vec<String>>,
    pool: Pool,
}

impl Shared {
    /// Calls on `workers`; the plugins in `warm` reuse instances between calls.
    pub fn new(workers: Workers, warm: Vec<String>) -> Self {
        Self { workers, modules: ModuleCache::new(), warm: Arc::new(warm), pool: Pool::default() }
    }

    /// A warm session of `plugin` opened for `caller`, if one is idle.
    fn take_warm(&self, plugin: &str, caller: &Option<String>) -> Option<Session> {
        let mut pool = self.pool.lock().ok()?;
        pool.get_mut(&(plugin.to_string(), caller.clone()))?.pop()
    }

    /// Keeps `session` for the next call of `plugin` by `caller` (at most
    /// [`MAX_WARM_PER_PLUGIN`] idle ones).
    fn keep_warm(&self, plugin: &str, caller: &Option<String>, session: Session) {
        if let Ok(mut pool) = self.pool.lock() {
            let idle = pool.entry((plugin.to_string(), caller.clone())).or_default();
            if idle.len() < MAX_WARM_PER_PLUGIN {
                idle.push(session);
            }
        }
    }
}

/// Idle warm instances kept per plugin and client.
const MAX_WARM_PER_PLUGIN: usize = 4;

/// The calls of one session.
pub struct Calls {
    in_flight: Arc<Mutex<HashMap<String, Flight>>>,
    shared: Shared,
    max_in_flight: usize,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// The lowest MCP log level the client wants (index into [`LEVELS`]).
    pub log_level: Arc<AtomicU8>,
    workspace: PathBuf,
    /// The client's name (from `initialize`), named in the audit of every call.
    pub client: Arc<Mutex<Option<String>>>,
    /// Where each call's trace is written (`--record-dir`), if anywhere.
    pub record_dir: Option<PathBuf>,
}

impl Calls {
    /// Calls on `workspace`, `workers` at once (shared with other sessions through
    /// `shared`), `max_in_flight` held.
    pub fn new(workspace: PathBuf, shared: Shared, max_in_flight: usize) -> Self {
        Self {
            in_flight: Arc::default(),
            shared,
            max_in_flight,
            threads: Mutex::default(),
            log_level: Arc::new(AtomicU8::new(1)),
            workspace,
            client: Arc::default(),
            record_dir: None,
        }
    }

    /// Starts `tool` with `arguments` as request `id`; its answer goes to `outbox` when it ends.
    pub fn start(
        &self,
        id: Value,
        tool: Tool,
        arguments: Map<String, Value>,
        outbox: &Outbox,
        asker: Option<Asker>,
    ) -> Result<(), NotStarted> {
        let key = id.to_string();
        let cancel = Cancel::new();
        {
            let mut in_flight = self.in_flight.lock().map_err(|_| NotStarted::Busy(self.max_in_flight))?;
            if in_flight.contains_key(&key) {
                return Err(NotStarted::IdInUse);
            }
            if in_flight.len() >= self.max_in_flight {
                return Err(NotStarted::Busy(self.max_in_flight));
            }
            in_flight.insert(key.clone(), Flight { cancel: cancel.clone(), withheld: false });
        }
        let call = Call {
            id,
            key,
            tool,
            arguments,
            cancel,
            in_flight: Arc::clone(&self.in_flight),
            shared: self.shared.clone(),
            log_level: match &asker {
                Some(asker) => asker.log_level,
                None => Some(usize::from(self.log_level.load(Ordering::Relaxed))),
            },
            workspace: self.workspace.clone(),
            outbox: outbox.clone(),
            caller: match asker {
                Some(asker) => asker.client,
                None => self.client.lock().ok().and_then(|client| client.clone()),
            },
            record_dir: self.record_dir.clone(),
        };
        let key = call.key.clone();
        let spawned = std::thread::Builder::new().name("tdm-mcp-call".into()).spawn(move || call.run());
        match spawned {
            Ok(handle) => {
                if let Ok(mut threads) = self.threads.lock() {
                    threads.retain(|t| !t.is_finished());
                    threads.push(handle);
                }
                Ok(())
            }
            Err(_) => {
                // No thread, no call: its place in flight is given back.
                if let Ok(mut in_flight) = self.in_flight.lock() {
                    in_flight.remove(&key);
                }
                Err(NotStarted::Busy(self.max_in_flight))
            }
        }
    }

    /// Cancels the call with request id `id` (if it is in flight); its answer is withheld.
    pub fn cancel(&self, id: &Value) {
        if let Ok(mut in_flight) = self.in_flight.lock() {
            if let Some(flight) = in_flight.get_mut(&id.to_string()) {
                flight.withheld = true;
                flight.cancel.set();
            }
        }
    }

    /// Cancels every call in flight and waits for them to end (the session is over).
    pub fn cancel_all_and_wait(&self) {
        if let Ok(in_flight) = self.in_flight.lock() {
            for flight in in_flight.values() {
                flight.cancel.set();
            }
        }
        let threads = self.threads.lock().map(|mut t| std::mem::take(&mut *t)).unwrap_or_default();
        for thread in threads {
            let _ = thread.join();
        }
    }
}

/// One call, on its own thread.
struct Call {
    id: Value,
    key: String,
    tool: Tool,
    arguments: Map<String, Value>,
    cancel: Cancel,
    in_flight: Arc<Mutex<HashMap<String, Flight>>>,
    shared: Shared,
    /// The lowest level of log lines sent (`None`: none are).
    log_level: Option<usize>,
    workspace: PathBuf,
    outbox: Outbox,
    caller: Option<String>,
    record_dir: Option<PathBuf>,
}

impl Call {
    fn run(self) {
        let result = if self.take_worker() {
            let result = self.execute();
            self.give_worker();
            result
        } else {
            failed("The call was cancelled before it started.", "cancelled", "Call the tool again.", true)
        };
        let withheld = self.in_flight.lock().ok().and_then(|mut f| f.remove(&self.key)).is_some_and(|f| f.withheld);
        if !withheld {
            let _ = self.outbox.result(&self.id, result);
        }
    }

    /// Waits for a free worker; false when the call was cancelled first.
    fn take_worker(&self) -> bool {
        let (free, freed) = &*self.shared.workers;
        let Ok(mut free) = free.lock() else { return false };
        while *free == 0 {
            if self.cancel.is_set() {
                return false;
            }
            free = match freed.wait_timeout(free, CANCEL_POLL) {
                Ok((free, _)) => free,
                Err(_) => return false,
            };
        }
        *free -= 1;
        true
    }

    fn give_worker(&self) {
        let (free, freed) = &*self.shared.workers;
        if let Ok(mut free) = free.lock() {
            *free += 1;
            freed.notify_one();
        }
    }

    /// Runs the intent in a fresh session of the installed plugin (or an idle warm one, for a
    /// plugin named by `--warm`); the `tools/call` result.
    fn execute(&self) -> Value {
        let workspace = Workspace::existing(self.workspace.clone());
        let trace = self.record_dir.as_ref().map(|dir| trace_path(dir, &self.tool.name));
        let warm = self.shared.warm.contains(&self.tool.plugin);
        let audit = Tag {
            caller: self.caller.as_ref().map(|client| format!("mcp:{client}")),
            trace: trace.as_ref().map(|path| path.display().to_string()),
        };
        let options = SessionOptions {
            // A warm session outlives the call: it gets a cancel flag of its own, which the
            // call takes over while it runs.
            cancel: Some(if warm { Cancel::new() } else { self.cancel.clone() }),
            host: HostFiles { workspace: Some(self.workspace.clone()), ..HostFiles::default() },
            quiet: true,
            audit,
            modules: Some(self.shared.modules.clone()),
            ..SessionOptions::default()
        };
        let idle = if warm { self.shared.take_warm(&self.tool.plugin, &self.caller) } else { None };
        let opened = match idle {
            Some(session) => Ok(session),
            None => Session::open_installed(&workspace, &self.tool.plugin, options),
        };
        let mut session = match opened {
            Ok(session) => session,
            Err(e) => {
                return match e.failure() {
                    Some(failure) => outcome_result(&contour_core::Outcome::from_failure(failure).json, None),
                    None => {
                        failed(&e.to_string(), "host_fault", "Check the workspace with `tdm workspace status`.", true)
                    }
                }
            }
        };
        let text = Value::Object(self.arguments.clone()).to_string();
        let params = match Params::from_text(&text) {
            Ok(params) => params,
            Err(e) => return failed(&format!("The arguments cannot be passed on: {e}."), "invalid_params", "", false),
        };
        if let Some(path) = &trace {
            if let Err(e) = session.start_recording(path) {
                errln!("tdm mcp: the call cannot be recorded to {}: {e}", path.display());
            }
        }
        if warm {
            self.adopt_cancel(session.cancel());
        }
        let request = Request::Intent { method: self.tool.intent.clone(), params };
        let ran = match session.run(&request) {
            Ok(ran) => ran,
            Err(e) => return failed(&e.to_string(), "host_fault", "Call the tool again.", true),
        };
        if let Some(path) = &trace {
            let outputs = outputs_of(&HostFiles { workspace: Some(self.workspace.clone()), ..HostFiles::default() });
            match session.stop_recording() {
                Some(Ok(recorded)) => {
                    if let Err(e) = write_trace(path, &recorded, &outputs) {
                        errln!("tdm mcp: {e}");
                    }
                }
                Some(Err(e)) => errln!("tdm mcp: the call's trace was not kept: {e}"),
                None => {}
            }
        }
        if let Err(e) = operator::record_last_call(&workspace, &self.tool.plugin, ran.last_call(&self.tool.intent)) {
            errln!("tdm mcp: could not record the call in the workspace: {e}");
        }
        self.send_notices(&ran.notices);
        let result = match self.result_mismatch(&session, &ran.report.outcome) {
            Some(mismatch) => failed(
                &format!(
                    "The plugin's output does not match the result schema `{}` declares: {mismatch}.",
                    self.tool.intent
                ),
                BlockedReason::InvalidResponse.as_str(),
                BlockedReason::InvalidResponse.recovery_hint(),
                false,
            ),
            None => outcome_result(&ran.report.outcome.json, ran.report.outcome.output_json()),
        };
        if warm {
            self.shared.keep_warm(&self.tool.plugin, &self.caller, session);
        }
        result
    }

    /// Why a completed `outcome`'s output breaks the result schema the approved declaration
    /// gives the intent, if it does (a client checks `structuredContent` against the
    /// `outputSchema` it was shown).
    fn result_mismatch(&self, session: &Session, outcome: &contour_core::Outcome) -> Option<Mismatch> {
        let intent = session.declared().intents().iter().find(|intent| intent.name == self.tool.intent)?;
        let schema = intent.result_schema()?;
        let output: Value = serde_json::from_str(outcome.output_json()?).ok()?;
        schema.validate(&output).err()
    }

    /// Makes `cancel` (a warm session's own flag) the one `notifications/cancelled` sets for this
    /// call, set at once if the call was cancelled while it waited.
    fn adopt_cancel(&self, cancel: Option<&Cancel>) {
        let Some(cancel) = cancel else { return };
        if let Ok(mut in_flight) = self.in_flight.lock() {
            if let Some(flight) = in_flight.get_mut(&self.key) {
                if flight.cancel.is_set() {
                    cancel.set();
                }
                flight.cancel = cancel.clone();
            }
        }
    }

    /// The plugin's log lines at or above the client's level, as `notifications/message`;
    /// the host's notices on stderr.
    fn send_notices(&self, notices: &[Notice]) {
        let wanted = self.log_level.unwrap_or(usize::MAX);
        for notice in notices {
            match notice {
                Notice::Log { id, level, message } => {
                    let rank = match level.as_str() {
                        "debug" => 0,
                        "info" => 1,
                        "warn" => 3,
                        _ => 4,
                    };
                    if rank >= wanted {
                        let params = json!({"level": LEVELS[rank], "logger": format!("plugin {id}"), "data": message});
                        let _ = self.outbox.notify("notifications/message", params);
                    }
                }
                other => errln!("tdm mcp: {other}"),
            }
        }
    }
}

/// Calls recorded so far by this process (a trace's name is unique even within a millisecond).
static RECORDED: AtomicU64 = AtomicU64::new(0);

/// A new trace file in `dir` for a call of `tool`: `UNIXMS-N-TOOL.trace` (a tool name is made
/// of letters, digits, `-` and `_` only, so it is a safe file name).
fn trace_path(dir: &std::path::Path, tool: &str) -> PathBuf {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let n = RECORDED.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{ms}-{n}-{tool}.trace"))
}

/// The `tools/call` result of an outcome (`json`; `output`: a completed one's output text as
/// the plugin wrote it): the output as a text block, and as `structuredContent` when it is an
/// object; a failed outcome is `isError` with its fields, never a protocol error.
pub fn outcome_result(json: &str, output: Option<&str>) -> Value {
    let value: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    if value["status"] == "completed" {
        let structured = value.get("output").filter(|o| o.is_object()).cloned();
        let text = output.map_or_else(|| value["output"].to_string(), str::to_string);
        let mut result = json!({"content": [{"type": "text", "text": text}], "isError": false});
        if let Some(structured) = structured {
            result["structuredContent"] = structured;
        }
        return result;
    }
    let text = |key: &str| value[key].as_str().unwrap_or_default().to_string();
    let retryable = value["output"]["retryable"].as_bool().unwrap_or(false);
    failed(&text("message"), &text("blockedReason"), &text("recoveryHint"), retryable)
}

/// A failed `tools/call` result.
pub fn failed(message: &str, reason: &str, hint: &str, retryable: bool) -> Value {
    let mut text = format!("{message} ({reason})");
    if !hint.is_empty() {
        text.push(' ');
        text.push_str(hint);
    }
    json!({
        "content": [{"type": "text", "text": text}],
        "isError": true,
        "structuredContent": {"status": "failed", "message": message, "blockedReason": reason, "recoveryHint": hint, "retryable": retryable},
    })
}
