//! `tdm repl`: explore a plugin interactively. A line is `METHOD [JSON params]` or a raw JSON-RPC
//! request (a line starting with `{`, sent verbatim); `:`-commands inspect and steer the session.
//!
//! On a terminal the line editor is rustyline (history file, tab completion of intent names and
//! commands) and each outcome is printed as pretty JSON followed by its fuel, peak memory and
//! time. With piped stdin there is no prompt: stdout carries exactly one line of compact JSON
//! per intent line, and everything else (figures, command output, errors, the plugin's own
//! output) goes to stderr, so scripts can parse stdout line by line. A failed or trapping intent
//! never ends the session: the sandbox relaunches on the next intent.

use crate::cli::EXIT_USAGE;
use crate::terminal::{self, errln, outln, textln, Layout};
use contour_core::policy::Policy;
use contour_core::{Environment, HostIntents, IntentReport, Permission, Permissions, Plugin, Sandbox};
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{CompletionType, Config, Editor, Helper};
use serde_json::Value;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Everything a REPL session needs.
pub struct ReplSession {
    /// Shown in the prompt, e.g. the file stem or the plugin id.
    pub label: String,
    /// The loaded plugin.
    pub plugin: Arc<Plugin>,
    /// The module bytes `plugin` was loaded from (with `Plugin::load`); `:fuel` reloads them
    /// under the new budget, since a plugin's policy is fixed at load.
    pub bytes: Vec<u8>,
    /// The initial grants.
    pub grants: Permissions,
    /// Whether `:grant` is allowed (file plugins only; an installed plugin keeps its approval).
    pub allow_grant: bool,
    /// Intent names for tab completion and `:intents` (may be empty).
    pub intents: Vec<String>,
    /// The history file (in the workspace); `None` keeps no history.
    pub history: Option<PathBuf>,
    /// Makes the environment of a new sandbox (after `:fuel`, and the first one).
    pub make_env: Box<dyn Fn() -> Box<dyn Environment>>,
    /// Makes the host intents for a set of grants (the first sandbox, and after `:grant`).
    #[allow(clippy::type_complexity)] // The type is the documented interface, spelled out.
    pub make_host: Box<dyn Fn(&Permissions) -> Box<dyn HostIntents>>,
}

/// Runs the session; returns the process exit code (0 on :quit / EOF). On a terminal it uses
/// the line editor; otherwise it reads stdin through [`run_lines`].
pub fn run(session: ReplSession) -> Result<u8, String> {
    if !io::stdin().is_terminal() {
        let stdin = io::stdin();
        return Ok(run_lines(session, stdin.lock(), &mut io::stdout().lock(), &mut io::stderr().lock()));
    }
    interactive(session)
}

/// The non-terminal REPL: reads lines from `input` until EOF or `:quit`, without a prompt.
/// Each intent line prints its outcome as one line of compact JSON on `out`; its figures, the
/// plugin's output, command output and errors go to `err`. Blank lines are ignored; a bad line
/// is reported on `err` and the next one is read. Returns 0, or 2 when `input` or `out` fails.
pub fn run_lines(session: ReplSession, mut input: impl BufRead, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let mut repl = Repl::new(session, false);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                let _ = textln!(err, "tdm repl: error: reading the input failed: {e}");
                return EXIT_USAGE;
            }
        }
        let flow = match std::str::from_utf8(&buf) {
            Ok(line) => repl.handle(line, out, err),
            Err(_) => {
                repl.line_no += 1;
                repl.error(err, "the line is not UTF-8").map(|()| Flow::Continue)
            }
        };
        match flow {
            Ok(Flow::Continue) => {}
            Ok(Flow::Quit) => break,
            Err(e) => {
                let _ = textln!(err, "tdm repl: error: writing the output failed: {e}");
                return EXIT_USAGE;
            }
        }
    }
    if let Err(e) = out.flush() {
        let _ = textln!(err, "tdm repl: error: writing the output failed: {e}");
        return EXIT_USAGE;
    }
    0
}

/// The terminal REPL: rustyline with history and completion.
fn interactive(session: ReplSession) -> Result<u8, String> {
    let history = session.history.clone();
    // The label is a file stem or a plugin id, and rustyline writes the prompt as it is.
    let prompt = format!("{}> ", terminal::escape(&session.label));
    let config = Config::builder()
        .max_history_size(1000)
        .map_err(|e| format!("cannot configure the line editor: {e}"))?
        .auto_add_history(false)
        .completion_type(CompletionType::List)
        .build();
    let mut editor: Editor<Completion, DefaultHistory> =
        Editor::with_config(config).map_err(|e| format!("cannot start the line editor: {e}"))?;
    // Completion lists candidates as they are: a name that would need escaping is not offered.
    let intents = session.intents.iter().filter(|name| !name.contains(terminal::is_unsafe)).cloned().collect();
    editor.set_helper(Some(Completion { intents }));
    if let Some(path) = history.as_ref().filter(|p| p.exists()) {
        if let Err(e) = editor.load_history(path) {
            errln!("tdm repl: warning: cannot read the history {}: {e}", path.display());
        }
    }
    let mut repl = Repl::new(session, true);
    outln!(
        "Contour REPL for {}: type METHOD [JSON params] or a JSON-RPC request; :help lists the commands.",
        repl.label
    );
    let (mut out, mut err) = (io::stdout(), io::stderr());
    let result = loop {
        match editor.readline(&prompt) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                }
                match repl.handle(&line, &mut out, &mut err) {
                    Ok(Flow::Continue) => {}
                    Ok(Flow::Quit) => break Ok(0),
                    Err(e) => break Err(format!("writing the output failed: {e}")),
                }
            }
            Err(ReadlineError::Interrupted) => outln!("(:quit or Ctrl-D leaves)"),
            Err(ReadlineError::Eof) => break Ok(0),
            Err(e) => break Err(format!("reading the line failed: {e}")),
        }
    };
    if let Some(path) = &history {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Err(e) = editor.save_history(path) {
            errln!("tdm repl: warning: cannot save the history {}: {e}", path.display());
        }
    }
    result
}

/// The REPL commands and their one-line help, in `:help` order.
const COMMANDS: [(&str, &str); 11] = [
    (":help", "this list"),
    (":intents", "the plugin's intents"),
    (":limits", "the policy the plugin runs under"),
    (":fuel", ":fuel N sets the fuel budget of each following intent (reloads: fresh instance)"),
    (":grant", ":grant PERM grants a permission (file plugins only; fresh instance)"),
    (":stats", "intents run, total fuel, last peak memory"),
    (":reset", "discard the instance; the next intent starts a fresh one"),
    (":record", ":record FILE saves a replay trace (not available yet)"),
    (":stop", "stops recording (not available yet)"),
    (":quit", "leave (Ctrl-D too)"),
    (":q", "same as :quit"),
];

/// The permission forms `:grant` completes.
const PERMISSION_FORMS: [&str; 4] = ["network:", "tool:", "vault:read", "context:read"];

/// One parsed input line.
#[derive(Debug, Clone, PartialEq)]
enum Line {
    /// Nothing to do.
    Blank,
    /// A `:`-command.
    Command(Command),
    /// `METHOD [JSON params]`; params default to `{}`.
    Intent { method: String, params: Value },
    /// A raw JSON-RPC request, sent as is.
    Raw(String),
}

/// A `:`-command.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Command {
    Help,
    Intents,
    Limits,
    /// `:fuel N`, or `:fuel` alone to show the budget.
    Fuel(Option<u64>),
    Grant(String),
    Stats,
    Reset,
    Record(String),
    Stop,
    Quit,
}

/// Parses one line; a malformed line is an error message.
fn parse_line(line: &str) -> Result<Line, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(Line::Blank);
    }
    if line.starts_with('{') {
        return Ok(Line::Raw(line.to_string()));
    }
    if let Some(command) = line.strip_prefix(':') {
        return parse_command(command).map(Line::Command);
    }
    let (method, rest) = split_word(line);
    let params = if rest.is_empty() {
        Value::Object(serde_json::Map::new())
    } else {
        serde_json::from_str(rest).map_err(|e| format!("the params of `{method}` are not valid JSON: {e}"))?
    };
    Ok(Line::Intent { method: method.to_string(), params })
}

/// Splits off the first whitespace-separated word; the rest is trimmed.
fn split_word(text: &str) -> (&str, &str) {
    match text.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (text, ""),
    }
}

/// Parses a command without its `:`.
fn parse_command(text: &str) -> Result<Command, String> {
    let (name, arg) = split_word(text);
    let no_arg = |command: Command| {
        if arg.is_empty() {
            Ok(command)
        } else {
            Err(format!("`:{name}` takes no argument"))
        }
    };
    match name {
        "help" => no_arg(Command::Help),
        "intents" => no_arg(Command::Intents),
        "limits" => no_arg(Command::Limits),
        "stats" => no_arg(Command::Stats),
        "reset" => no_arg(Command::Reset),
        "stop" => no_arg(Command::Stop),
        "quit" | "q" => no_arg(Command::Quit),
        "fuel" if arg.is_empty() => Ok(Command::Fuel(None)),
        "fuel" => match arg.replace('_', "").parse::<u64>() {
            Ok(0) => Err("the fuel budget must be greater than zero".to_string()),
            Ok(n) => Ok(Command::Fuel(Some(n))),
            Err(_) => Err(format!("`{arg}` is not a fuel budget (usage: :fuel N, N a positive whole number)")),
        },
        "grant" if arg.is_empty() => Err("usage: :grant PERM (e.g. :grant network:api.example.com)".to_string()),
        "grant" => Ok(Command::Grant(arg.to_string())),
        "record" if arg.is_empty() => Err("usage: :record FILE".to_string()),
        "record" => Ok(Command::Record(arg.to_string())),
        _ => Err(format!("unknown command `:{name}` (:help lists the commands)")),
    }
}

/// Tab completion: `(start, candidates)` for the text before the cursor. The first word
/// completes to a command (after `:`) or an intent name; the argument of `:grant` to a
/// permission form.
fn complete(intents: &[String], before: &str) -> (usize, Vec<String>) {
    if !before.contains(char::is_whitespace) {
        let candidates: Vec<String> = if before.starts_with(':') {
            COMMANDS.iter().map(|(name, _)| name.to_string()).filter(|name| name.starts_with(before)).collect()
        } else {
            intents.iter().filter(|name| name.starts_with(before)).cloned().collect()
        };
        return (0, candidates);
    }
    if let Some(arg) = before.strip_prefix(":grant ") {
        let start = before.len() - arg.trim_start().len();
        let arg = arg.trim_start();
        if !arg.contains(char::is_whitespace) {
            let forms = PERMISSION_FORMS.iter().filter(|form| form.starts_with(arg)).map(|f| f.to_string()).collect();
            return (start, forms);
        }
    }
    (0, Vec::new())
}

/// The rustyline helper: completion only.
struct Completion {
    intents: Vec<String>,
}

impl Completer for Completion {
    type Candidate = String;

    fn complete(&self, line: &str, pos: usize, _: &rustyline::Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(complete(&self.intents, line.get(..pos).unwrap_or(line)))
    }
}

impl Hinter for Completion {
    type Hint = String;
}

impl Highlighter for Completion {}

impl Validator for Completion {}

impl Helper for Completion {}

/// What the loop does after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// Figures over the whole session.
#[derive(Debug, Default)]
struct Stats {
    intents: u64,
    failed: u64,
    total_fuel: u64,
    total_time: Duration,
    last_peak_memory: Option<u64>,
}

/// How a session makes host intents for a set of grants.
type MakeHost = Box<dyn Fn(&Permissions) -> Box<dyn HostIntents>>;

/// A running session.
struct Repl {
    label: String,
    plugin: Arc<Plugin>,
    bytes: Vec<u8>,
    /// `None` only while the host is being replaced.
    sandbox: Option<Sandbox>,
    grants: Permissions,
    allow_grant: bool,
    intents: Vec<String>,
    make_env: Box<dyn Fn() -> Box<dyn Environment>>,
    make_host: MakeHost,
    stats: Stats,
    /// Terminal mode: pretty outcomes, figures and command output on stdout.
    terminal: bool,
    /// The number of the line being handled (for messages in piped mode).
    line_no: u64,
}

impl Repl {
    fn new(session: ReplSession, terminal: bool) -> Self {
        let mut repl = Self {
            label: session.label,
            plugin: session.plugin,
            bytes: session.bytes,
            sandbox: None,
            grants: session.grants,
            allow_grant: session.allow_grant,
            intents: session.intents,
            make_env: session.make_env,
            make_host: session.make_host,
            stats: Stats::default(),
            terminal,
            line_no: 0,
        };
        repl.sandbox = Some(repl.new_sandbox());
        repl
    }

    /// A sandbox for the current plugin and grants, with a new environment.
    fn new_sandbox(&self) -> Sandbox {
        build_sandbox(&self.plugin, &self.make_env, &self.make_host, &self.grants)
    }

    fn sandbox(&mut self) -> &mut Sandbox {
        let (plugin, make_env, make_host, grants) = (&self.plugin, &self.make_env, &self.make_host, &self.grants);
        self.sandbox.get_or_insert_with(|| build_sandbox(plugin, make_env, make_host, grants))
    }

    /// Reports a problem with the line on stderr and carries on.
    fn error(&self, err: &mut dyn Write, message: &str) -> io::Result<()> {
        if self.terminal {
            textln!(err, "error: {message}")
        } else {
            textln!(err, "tdm repl: line {}: error: {message}", self.line_no)
        }
    }

    /// Handles one line.
    fn handle<'w>(&mut self, line: &str, out: &'w mut dyn Write, err: &'w mut dyn Write) -> io::Result<Flow> {
        self.line_no += 1;
        match parse_line(line) {
            Err(message) => self.error(err, &message).map(|()| Flow::Continue),
            Ok(Line::Blank) => Ok(Flow::Continue),
            Ok(Line::Command(command)) => self.command(command, out, err),
            Ok(line) => self.intent(&line, out, err).map(|()| Flow::Continue),
        }
    }

    /// Runs an intent line and prints its outcome and figures.
    fn intent<'w>(&mut self, line: &Line, out: &'w mut dyn Write, err: &'w mut dyn Write) -> io::Result<()> {
        let started = Instant::now();
        let sandbox = self.sandbox();
        let report = match line {
            Line::Intent { method, params } => sandbox.execute(method, params),
            Line::Raw(request) => sandbox.execute_request(request.as_bytes()),
            Line::Blank | Line::Command(_) => return Ok(()),
        };
        let elapsed = started.elapsed();
        let discarded = !sandbox.is_live();
        self.stats.intents += 1;
        self.stats.failed += u64::from(!report.outcome.is_completed());
        self.stats.total_fuel = self.stats.total_fuel.saturating_add(report.fuel_used);
        self.stats.total_time += elapsed;
        self.stats.last_peak_memory = Some(report.peak_memory_bytes);
        forward_plugin_output(&report, err)?;
        let layout = if self.terminal { Layout::Pretty } else { Layout::Line };
        terminal::write_json(out, &report.outcome.json, layout)?;
        let figures = if self.terminal { &mut *out } else { &mut *err };
        let micros = elapsed.as_micros();
        if self.terminal {
            textln!(
                figures,
                "-- fuel {} | peak memory {} | {}.{:03} ms{}",
                report.fuel_used,
                memory(report.peak_memory_bytes),
                micros / 1000,
                micros % 1000,
                if discarded { " | instance discarded: the next intent starts a fresh one" } else { "" }
            )?;
        } else {
            textln!(
                figures,
                "tdm repl: line {}: fuel_used={} peak_memory_bytes={} elapsed_us={micros}{}",
                self.line_no,
                report.fuel_used,
                report.peak_memory_bytes,
                if discarded { " instance_discarded" } else { "" }
            )?;
        }
        out.flush()
    }

    /// Runs a command.
    fn command<'w>(&mut self, command: Command, out: &'w mut dyn Write, err: &'w mut dyn Write) -> io::Result<Flow> {
        let info: &mut dyn Write = if self.terminal { out } else { err };
        match command {
            Command::Help => {
                textln!(info, "METHOD [JSON params]   run an intent (params default to {{}})")?;
                textln!(info, "{{...}}                  send a raw JSON-RPC request as is")?;
                for (name, help) in COMMANDS {
                    textln!(info, "{name:<22} {help}")?;
                }
            }
            Command::Intents if self.intents.is_empty() => {
                textln!(info, "(no intents declared; any METHOD is sent to the plugin as is)")?;
            }
            Command::Intents => {
                for name in &self.intents {
                    textln!(info, "{name}")?;
                }
            }
            Command::Limits => write_limits(info, self.plugin.policy())?,
            Command::Fuel(None) => textln!(info, "fuel per intent: {}", self.plugin.policy().fuel_per_intent)?,
            Command::Fuel(Some(fuel)) => {
                let mut policy = self.plugin.policy().clone();
                policy.fuel_per_intent = fuel;
                match Plugin::load(&self.bytes, policy) {
                    Ok(plugin) => {
                        self.plugin = Arc::new(plugin);
                        self.sandbox = Some(self.new_sandbox());
                        textln!(
                            info,
                            "fuel per intent: {fuel} (plugin reloaded; the next intent starts a fresh instance)"
                        )?;
                    }
                    Err(failure) => {
                        let message = format!("cannot reload the plugin with the new budget: {failure}");
                        self.error(info, &message)?;
                    }
                }
            }
            Command::Grant(_) if !self.allow_grant => {
                self.error(
                    info,
                    ":grant works on a plugin file only; an installed plugin runs with its approved permissions",
                )?;
            }
            Command::Grant(text) => match self.grant(&text) {
                Ok(message) => textln!(info, "{message}")?,
                Err(message) => self.error(info, &message)?,
            },
            Command::Stats => {
                let stats = &self.stats;
                let micros = stats.total_time.as_micros();
                textln!(
                    info,
                    "intents run: {} ({} failed) | total fuel: {} | last peak memory: {} | total time: {}.{:03} ms",
                    stats.intents,
                    stats.failed,
                    stats.total_fuel,
                    stats.last_peak_memory.map_or_else(|| "-".to_string(), memory),
                    micros / 1000,
                    micros % 1000
                )?;
            }
            Command::Reset => {
                self.sandbox().discard();
                textln!(info, "instance discarded: the next intent starts a fresh one")?;
            }
            Command::Record(_) | Command::Stop => {
                self.error(info, "recording is not available yet: replay traces arrive with the replay issue")?;
            }
            Command::Quit => return Ok(Flow::Quit),
        }
        Ok(Flow::Continue)
    }

    /// Adds a permission and rebuilds the host; the confirmation, or why it was refused.
    fn grant(&mut self, text: &str) -> Result<String, String> {
        let permission = Permission::parse(text).map_err(|e| e.to_string())?;
        if self.grants.contains(&permission) {
            return Ok(format!("{permission} is already granted"));
        }
        let mut all: Vec<String> = self.grants.iter().map(ToString::to_string).collect();
        all.push(permission.to_string());
        self.grants = Permissions::parse_all(all.iter().map(String::as_str)).map_err(|e| e.to_string())?;
        let host = (self.make_host)(&self.grants);
        self.sandbox = Some(match self.sandbox.take() {
            Some(sandbox) => sandbox.with_host(host, self.grants.clone()),
            None => self.new_sandbox(),
        });
        let now: Vec<String> = self.grants.iter().map(ToString::to_string).collect();
        Ok(format!("granted {permission} (now: {}); the next intent starts a fresh instance", now.join(", ")))
    }
}

/// A sandbox for `plugin` with a new environment and the host intents for `grants`.
fn build_sandbox(
    plugin: &Arc<Plugin>,
    make_env: &dyn Fn() -> Box<dyn Environment>,
    make_host: &dyn Fn(&Permissions) -> Box<dyn HostIntents>,
    grants: &Permissions,
) -> Sandbox {
    Sandbox::new(plugin.clone(), make_env()).with_host(make_host(grants), grants.clone())
}

/// Memory in bytes, with KiB or MiB when whole.
fn memory(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{bytes} bytes ({} MiB)", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{bytes} bytes ({} KiB)", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// Every field of the policy, one per line.
fn write_limits(out: &mut dyn Write, policy: &Policy) -> io::Result<()> {
    let fields: [(&str, String); 16] = [
        ("max_memory_bytes", memory(policy.max_memory_bytes)),
        ("fuel_per_intent", policy.fuel_per_intent.to_string()),
        ("timeout_ms", policy.timeout_ms.to_string()),
        ("max_call_depth", policy.max_call_depth.to_string()),
        ("max_request_bytes", policy.max_request_bytes.to_string()),
        ("max_response_bytes", policy.max_response_bytes.to_string()),
        ("max_output_bytes", policy.max_output_bytes.to_string()),
        ("max_module_bytes", policy.max_module_bytes.to_string()),
        ("max_table_elements", policy.max_table_elements.to_string()),
        ("max_tables", policy.max_tables.to_string()),
        ("max_instances", policy.max_instances.to_string()),
        ("fuel_slice", policy.fuel_slice.to_string()),
        ("max_host_calls", policy.max_host_calls.to_string()),
        ("max_host_bytes", policy.max_host_bytes.to_string()),
        ("max_host_request_bytes", policy.max_host_request_bytes.to_string()),
        ("compilation", format!("{:?}", policy.compilation)),
    ];
    for (name, value) in fields {
        textln!(out, "{name:<24} {value}")?;
    }
    Ok(())
}

/// Forwards the plugin's captured output, each line marked as the plugin's (as `tdm run` does).
fn forward_plugin_output(report: &IntentReport, err: &mut dyn Write) -> io::Result<()> {
    for (stream, bytes) in [("stdout", &report.stdout), ("stderr", &report.stderr)] {
        for line in String::from_utf8_lossy(bytes).lines() {
            textln!(err, "[plugin {stream}] {line}")?;
        }
    }
    if report.output_dropped > 0 {
        textln!(err, "[plugin] {} bytes of output dropped (capture limit)", report.output_dropped)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use contour_core::{NoHostIntents, VirtualEnvironment};
    use serde_json::json;

    /// Answers every intent with `{"status":"completed","output":1}`.
    const ONE: &str = r#"(module (memory (export "memory") 1)
        (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
        (func (export "tdm_free") (param i32 i32))
        (data (i32.const 16) "\21\00\00\00{\"status\":\"completed\",\"output\":1}")
        (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16))"#;

    fn new_repl(allow_grant: bool) -> Repl {
        repl_of(ONE, allow_grant)
    }

    fn repl_of(wat: &str, allow_grant: bool) -> Repl {
        let bytes = wat::parse_str(wat).expect("valid WAT");
        let plugin = Arc::new(Plugin::load(&bytes, Policy::default()).expect("loads"));
        let session = ReplSession {
            label: "one".into(),
            plugin,
            bytes,
            grants: Permissions::default(),
            allow_grant,
            intents: vec!["greet".into(), "get".into()],
            history: None,
            make_env: Box::new(|| Box::new(VirtualEnvironment::new(1))),
            make_host: Box::new(|_| Box::new(NoHostIntents)),
        };
        Repl::new(session, false)
    }

    /// Handles `line`; returns the flow, stdout and stderr.
    fn handle(repl: &mut Repl, line: &str) -> (Flow, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let flow = repl.handle(line, &mut out, &mut err).expect("in-memory writes succeed");
        (flow, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
    }

    #[test]
    fn parses_intent_lines() {
        assert_eq!(parse_line("greet"), Ok(Line::Intent { method: "greet".into(), params: json!({}) }));
        assert_eq!(
            parse_line("  greet   {\"name\": \"Ada\"}  \n"),
            Ok(Line::Intent { method: "greet".into(), params: json!({"name": "Ada"}) })
        );
        assert_eq!(parse_line("sum [1, 2]"), Ok(Line::Intent { method: "sum".into(), params: json!([1, 2]) }));
        assert_eq!(parse_line("\t\n"), Ok(Line::Blank));
        assert_eq!(parse_line(""), Ok(Line::Blank));
        let error = parse_line("greet {oops").expect_err("bad JSON");
        assert!(error.contains("not valid JSON"), "{error}");
    }

    #[test]
    fn a_line_starting_with_a_brace_is_a_raw_request() {
        let raw = r#"{"jsonrpc":"2.0","id":9,"method":"x","params":{}}"#;
        assert_eq!(parse_line(&format!(" {raw}\n")), Ok(Line::Raw(raw.into())));
        // Raw requests go to the plugin unchecked, even when they are not JSON.
        assert_eq!(parse_line("{not json"), Ok(Line::Raw("{not json".into())));
    }

    #[test]
    fn parses_commands() {
        let cases = [
            (":help", Command::Help),
            (":intents", Command::Intents),
            (":limits", Command::Limits),
            (":fuel", Command::Fuel(None)),
            (":fuel 5000", Command::Fuel(Some(5000))),
            (":fuel 1_000_000", Command::Fuel(Some(1_000_000))),
            (":grant vault:read", Command::Grant("vault:read".into())),
            (":stats", Command::Stats),
            (":reset", Command::Reset),
            (":record trace.jsonl", Command::Record("trace.jsonl".into())),
            (":stop", Command::Stop),
            (":quit", Command::Quit),
            (":q", Command::Quit),
        ];
        for (line, command) in cases {
            assert_eq!(parse_line(line), Ok(Line::Command(command)), "{line}");
        }
    }

    #[test]
    fn refuses_malformed_commands() {
        for (line, expected) in [
            (":fuel 0", "greater than zero"),
            (":fuel -3", "not a fuel budget"),
            (":fuel lots", "not a fuel budget"),
            (":fuel 99999999999999999999999", "not a fuel budget"),
            (":grant", "usage: :grant PERM"),
            (":record", "usage: :record FILE"),
            (":quit now", "takes no argument"),
            (":nope", "unknown command `:nope`"),
            (":", "unknown command"),
        ] {
            let error = parse_line(line).expect_err(line);
            assert!(error.contains(expected), "{line}: {error}");
        }
    }

    #[test]
    fn completes_commands_intents_and_permissions() {
        let intents = vec!["greet".to_string(), "get".to_string(), "sum".to_string()];
        assert_eq!(complete(&intents, "g"), (0, vec!["greet".to_string(), "get".to_string()]));
        assert_eq!(complete(&intents, ""), (0, intents.clone()));
        assert_eq!(complete(&intents, ":st"), (0, vec![":stats".to_string(), ":stop".to_string()]));
        assert_eq!(complete(&intents, ":grant v"), (7, vec!["vault:read".to_string()]));
        assert_eq!(complete(&intents, ":grant  ne"), (8, vec!["network:".to_string()]));
        assert_eq!(complete(&intents, "greet {"), (0, Vec::new()));
    }

    #[test]
    fn runs_intents_and_counts_them() {
        let mut repl = new_repl(true);
        let (flow, out, err) = handle(&mut repl, "greet {\"x\":1}");
        assert_eq!(flow, Flow::Continue);
        assert_eq!(out, "{\"status\":\"completed\",\"output\":1}\n");
        assert!(err.contains("fuel_used="), "{err}");
        handle(&mut repl, "get");
        let (_, out, err) = handle(&mut repl, ":stats");
        assert!(out.is_empty(), "piped command output goes to stderr: {out}");
        assert!(err.contains("intents run: 2 (0 failed)"), "{err}");
        assert_eq!(repl.stats.intents, 2);
        assert!(repl.stats.total_fuel > 0);
    }

    #[test]
    fn fuel_reloads_the_plugin_with_the_new_budget() {
        let mut repl = new_repl(true);
        let (_, _, err) = handle(&mut repl, ":fuel 12345");
        assert!(err.contains("fuel per intent: 12345"), "{err}");
        assert_eq!(repl.plugin.policy().fuel_per_intent, 12345);
        let (_, _, err) = handle(&mut repl, ":limits");
        assert!(err.contains("fuel_per_intent          12345"), "{err}");
        assert!(err.contains("max_memory_bytes"), "{err}");
        let (_, out, _) = handle(&mut repl, "greet");
        assert!(out.contains("completed"), "{out}");
        let (_, _, err) = handle(&mut repl, ":fuel 0");
        assert!(err.contains("line 4: error: the fuel budget must be greater than zero"), "{err}");
    }

    #[test]
    fn grant_checks_the_permission_and_the_plugin_kind() {
        let mut repl = new_repl(true);
        let (_, _, err) = handle(&mut repl, ":grant network:");
        assert!(err.contains("error: invalid permission `network:`: missing host"), "{err}");
        let (_, _, err) = handle(&mut repl, ":grant network:api.example.com");
        assert!(err.contains("granted network:api.example.com"), "{err}");
        assert!(repl.grants.contains(&Permission::Network("api.example.com".into())));
        let (_, _, err) = handle(&mut repl, ":grant network:API.example.com");
        assert!(err.contains("already granted"), "{err}");
        let (_, out, _) = handle(&mut repl, "greet");
        assert!(out.contains("completed"), "{out}");

        let mut installed = new_repl(false);
        let (_, _, err) = handle(&mut installed, ":grant vault:read");
        assert!(err.contains("plugin file only"), "{err}");
        assert!(!installed.grants.contains(&Permission::VaultRead));
    }

    #[test]
    fn other_commands() {
        let mut repl = new_repl(true);
        let (_, _, err) = handle(&mut repl, ":record trace.jsonl");
        assert!(err.contains("not available yet"), "{err}");
        let (_, _, err) = handle(&mut repl, ":stop");
        assert!(err.contains("not available yet"), "{err}");
        let (_, _, err) = handle(&mut repl, ":intents");
        assert_eq!(err, "greet\nget\n");
        let (_, _, err) = handle(&mut repl, ":help");
        assert!(err.contains(":reset") && err.contains(":grant"), "{err}");
        handle(&mut repl, "greet");
        assert!(repl.sandbox().is_live());
        let (_, _, err) = handle(&mut repl, ":reset");
        assert!(err.contains("fresh one"), "{err}");
        assert!(!repl.sandbox().is_live());
        assert_eq!(handle(&mut repl, ":quit").0, Flow::Quit);
    }

    #[test]
    fn terminal_mode_prints_pretty_outcomes_and_figures_on_stdout() {
        let mut repl = new_repl(true);
        repl.terminal = true;
        let (_, out, err) = handle(&mut repl, "greet");
        assert!(out.starts_with("{\n  \"status\": \"completed\",\n  \"output\": 1\n}\n-- fuel "), "{out}");
        assert!(err.is_empty(), "{err}");
        let (_, _, err) = handle(&mut repl, ":bogus");
        assert_eq!(err, "error: unknown command `:bogus` (:help lists the commands)\n");
    }

    #[test]
    fn terminal_mode_escapes_the_pretty_outcome() {
        let response = "{\"status\":\"completed\",\r\"output\":{\"csi\":\"\u{9b}31m\",\"rlo\":\"\u{202e}x\"}\r}";
        let mut data: String =
            u32::try_from(response.len()).unwrap().to_le_bytes().iter().map(|b| format!("\\{b:02x}")).collect();
        data.extend(response.bytes().map(|b| format!("\\{b:02x}")));
        let mut repl = repl_of(&ONE.replace(r#"\21\00\00\00{\"status\":\"completed\",\"output\":1}"#, &data), true);
        repl.terminal = true;
        let (_, out, _) = handle(&mut repl, "greet");
        let outcome = out.split("\n-- fuel").next().unwrap_or_default();
        assert_eq!(outcome, "{\n  \"status\": \"completed\",\n  \"output\": {\n    \"csi\": \"\\u009b31m\",\n    \"rlo\": \"\\u202ex\"\n  }\n}");
        assert_eq!(serde_json::from_str::<Value>(outcome).ok(), serde_json::from_str::<Value>(response).ok());
    }
}
