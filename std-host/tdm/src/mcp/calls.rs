//! The MCP server's tool calls: each runs as `tdm call` runs an intent (the approved-launch
//! check first, then its approved limits and host intents, audited, its figures kept in the
//! workspace), in a fresh instance on a thread of its own, at most `workers` at once and
//! `max_in_flight` held, each with the cancel handle `notifications/cancelled` sets.

use super::last_calls::LastCalls;
use super::threads::{Job, Threads};
use super::wire::Outbox;
use crate::terminal::errln;
use contour_core::BlockedReason;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use tdm_sdk::catalogue::Tool;
use tdm_sdk::environment::{Cancel, CANCEL_POLL};
use tdm_sdk::intents::audit::Tag;
use tdm_sdk::intents::Notice;
use tdm_sdk::params::Params;
use tdm_sdk::schema::Mismatch;
use tdm_sdk::session::{outputs_of, HostFiles, ModuleCache, Request, RunReport, Session, SessionOptions, Spares};
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

/// A session's calls in flight by request id, and the signal that one ended.
type InFlight = Arc<(Mutex<HashMap<String, Flight>>, Condvar)>;

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
/// instance does not compile again), the fresh instances prepared ahead of calls, and the warm
/// instances of the plugins named by `--warm`.
#[derive(Clone)]
pub struct Shared {
    workers: Workers,
    modules: ModuleCache,
    spares: Spares,
    warm: Arc<Vec<String>>,
    pool: Pool,
    /// The calls' figures, written to the workspace together.
    pub last_calls: LastCalls,
    /// The threads calls run on.
    threads: Threads,
}

impl Shared {
    /// Calls on `workers`; the plugins in `warm` reuse instances between calls.
    pub fn new(workers: Workers, warm: Vec<String>) -> Self {
        Self {
            workers,
            modules: ModuleCache::new(),
            spares: Spares::new(),
            warm: Arc::new(warm),
            pool: Pool::default(),
            last_calls: LastCalls::default(),
            threads: Threads::default(),
        }
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
    in_flight: InFlight,
    shared: Shared,
    max_in_flight: usize,
    /// The lowest MCP log level the client wants (index into [`LEVELS`]).
    pub log_level: Arc<AtomicU8>,
    workspace: PathBuf,
    /// The client's name (from `initialize`), named in the audit of every call.
    pub client: Arc<Mutex<Option<String>>>,
    /// Where each call's trace is written (`--record-dir`), if anywhere.
    pub record_dir: Option<PathBuf>,
    /// Whether a started call waits in [`Calls::take_ready`] for its reader to run it (stdio:
    /// the thread that read the call runs it, and hands the reading on) instead of going to a
    /// thread of its own.
    pub inline: bool,
    ready: Mutex<Option<Job>>,
}

impl Calls {
    /// Calls on `workspace`, `workers` at once (shared with other sessions through
    /// `shared`), `max_in_flight` held.
    pub fn new(workspace: PathBuf, shared: Shared, max_in_flight: usize) -> Self {
        Self {
            in_flight: Arc::default(),
            shared,
            max_in_flight,
            log_level: Arc::new(AtomicU8::new(1)),
            workspace,
            client: Arc::default(),
            record_dir: None,
            inline: false,
            ready: Mutex::default(),
        }
    }

    /// The call the last message started, to run on this thread (when [`Calls::inline`]).
    pub fn take_ready(&self) -> Option<Job> {
        self.ready.lock().ok()?.take()
    }

    /// Runs `job` on one of the calls' threads (`name`d when it is a new one).
    pub fn spawn(&self, name: &str, job: Job) -> std::io::Result<()> {
        self.shared.threads.run(name, job)
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
            let mut in_flight = self.in_flight.0.lock().map_err(|_| NotStarted::Busy(self.max_in_flight))?;
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
        if self.inline {
            if let Ok(mut ready) = self.ready.lock() {
                *ready = Some(Box::new(move || call.run()));
                return Ok(());
            }
            return Err(NotStarted::Busy(self.max_in_flight));
        }
        if self.shared.threads.run("tdm-mcp-call", Box::new(move || call.run())).is_err() {
            // No thread, no call: its place in flight is given back.
            if let Ok(mut in_flight) = self.in_flight.0.lock() {
                in_flight.remove(&key);
            }
            return Err(NotStarted::Busy(self.max_in_flight));
        }
        Ok(())
    }

    /// Cancels the call with request id `id` (if it is in flight); its answer is withheld.
    pub fn cancel(&self, id: &Value) {
        if let Ok(mut in_flight) = self.in_flight.0.lock() {
            if let Some(flight) = in_flight.get_mut(&id.to_string()) {
                flight.withheld = true;
                flight.cancel.set();
            }
        }
    }

    /// Cancels every call in flight and waits for them to end (the session is over).
    pub fn cancel_all_and_wait(&self) {
        let (calls, ended) = &*self.in_flight;
        let Ok(mut in_flight) = calls.lock() else { return };
        for flight in in_flight.values() {
            flight.cancel.set();
        }
        while !in_flight.is_empty() {
            in_flight = match ended.wait(in_flight) {
                Ok(in_flight) => in_flight,
                Err(_) => return,
            };
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
    in_flight: InFlight,
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
        let (calls, ended) = &*self.in_flight;
        let withheld = calls.lock().ok().and_then(|f| f.get(&self.key).map(|f| f.withheld)).unwrap_or(true);
        if !withheld {
            let _ = self.outbox.result(&self.id, result);
        }
        // Answered: the call is no longer in flight (a session ending waits for this).
        if let Ok(mut calls) = calls.lock() {
            calls.remove(&self.key);
        }
        ended.notify_all();
        self.prepare_spare();
    }

    /// Whether this call's plugin gets fresh instances prepared ahead: not a warm one, and not
    /// when calls are recorded (a trace must hold its instance's launch).
    fn spares_serve(&self) -> bool {
        self.record_dir.is_none() && !self.shared.warm.contains(&self.tool.plugin)
    }

    /// After the answer: prepares the next call's fresh instance of this plugin, when a worker
    /// is free at once (preparing never makes a call wait).
    fn prepare_spare(&self) {
        if !self.spares_serve() || self.cancel.is_set() || !self.try_take_worker() {
            return;
        }
        let workspace = Workspace::existing(self.workspace.clone());
        // A plugin that cannot be prepared is left to the next call, which opens it itself and
        // answers whatever refuses it.
        let _ = self.shared.spares.prepare(&workspace, &self.tool.plugin, self.options(Cancel::new(), None));
        self.give_worker();
    }

    /// The options of a session for this call.
    fn options(&self, cancel: Cancel, trace: Option<&PathBuf>) -> SessionOptions {
        SessionOptions {
            cancel: Some(cancel),
            host: HostFiles { workspace: Some(self.workspace.clone()), ..HostFiles::default() },
            quiet: true,
            audit: Tag {
                caller: self.caller.as_ref().map(|client| format!("mcp:{client}")),
                trace: trace.map(|path| path.display().to_string()),
            },
            modules: Some(self.shared.modules.clone()),
            ..SessionOptions::default()
        }
    }

    /// Takes a worker if one is free now.
    fn try_take_worker(&self) -> bool {
        let (free, _) = &*self.shared.workers;
        let Ok(mut free) = free.lock() else { return false };
        if *free == 0 {
            return false;
        }
        *free -= 1;
        true
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
        let caller = self.caller.as_ref().map(|client| format!("mcp:{client}"));
        // A warm session outlives the call, and a spare was opened before it: each has a
        // cancel flag of its own, which the call takes over while it runs.
        let kept = if warm {
            self.shared.take_warm(&self.tool.plugin, &self.caller)
        } else if self.spares_serve() {
            self.shared.spares.take(&self.tool.plugin, &caller)
        } else {
            None
        };
        let owns_cancel = warm || kept.is_some();
        let opened = match kept {
            Some(session) => Ok(session),
            None => Session::open_installed(
                &workspace,
                &self.tool.plugin,
                self.options(self.own_cancel(warm), trace.as_ref()),
            ),
        };
        let mut session = match opened {
            Ok(session) => session,
            Err(e) => return open_refusal(&e),
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
        if owns_cancel {
            self.adopt_cancel(session.cancel());
        }
        let request = Request::Intent { method: self.tool.intent.clone(), params };
        let mut ran = match session.run(&request) {
            Ok(ran) => ran,
            Err(e) => return failed(&e.to_string(), "host_fault", "Call the tool again.", true),
        };
        if !warm && owns_cancel && withdrawn(&ran) {
            // The spare was opened under an approval that changed since (a revoke, a new
            // version): the call opens what is approved now, as it would have without it.
            session = match Session::open_installed(
                &workspace,
                &self.tool.plugin,
                self.options(self.own_cancel(false), None),
            ) {
                Ok(session) => session,
                Err(e) => return open_refusal(&e),
            };
            // A cancel now stops this session, not the spare.
            self.adopt_cancel(session.cancel());
            ran = match session.run(&request) {
                Ok(ran) => ran,
                Err(e) => return failed(&e.to_string(), "host_fault", "Call the tool again.", true),
            };
        }
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
        self.shared.last_calls.record(&self.tool.plugin, ran.last_call(&self.tool.intent));
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

    /// The cancel flag of a session opened for this call: the call's own, or a new one for a
    /// warm session (which outlives the call).
    fn own_cancel(&self, warm: bool) -> Cancel {
        if warm {
            Cancel::new()
        } else {
            self.cancel.clone()
        }
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
        if let Ok(mut in_flight) = self.in_flight.0.lock() {
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

/// Whether `ran` was refused because the session's approval changed after it opened.
fn withdrawn(ran: &RunReport) -> bool {
    !ran.undeclared
        && ran.report.fuel_used == 0
        && ran.report.outcome.blocked_reason() == Some(BlockedReason::NotApproved)
}

/// The `tools/call` result of a plugin that could not be opened.
fn open_refusal(e: &tdm_sdk::session::SessionError) -> Value {
    match e.failure() {
        Some(failure) => outcome_result(&contour_core::Outcome::from_failure(failure).json, None),
        None => failed(&e.to_string(), "host_fault", "Check the workspace with `tdm workspace status`.", true),
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
