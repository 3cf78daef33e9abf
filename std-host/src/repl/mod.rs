//! `tdm repl`: explore a plugin interactively. An entry is `METHOD [JSON params]`,
//! `METHOD @FILE`, or a raw JSON-RPC request (starting with `{`, sent verbatim), and may span
//! lines while its JSON brackets are open; `:`-commands inspect and steer the session.
//!
//! On a terminal the line editor is rustyline ([`editor`]: history, Tab completion of commands
//! and declared intents, multi-line entries) and each outcome is printed as pretty JSON
//! followed by its figures; Ctrl-C cancels the running intent and the session goes on. With
//! piped stdin there is no prompt and stdout carries exactly one line of compact JSON per
//! entry: an outcome (`"status":"completed"|"failed"`), a command's result (`"status":"ok"`)
//! or the error of a bad entry (`"status":"error"`); figures, command text and the plugin's own
//! output go to stderr. Blank lines print nothing. A failed or trapping intent never ends the
//! session: the next intent runs in a fresh instance. In piped mode a SIGINT cancels the
//! running intent (its line is the cancelled outcome) and the session goes on; one while tdm
//! waits for input ends the session as the end of the input would ([`piped`]).

mod commands;
mod editor;
pub mod line;
mod piped;

pub use piped::run_lines;

use crate::hints::Front;
use crate::limits::format_size;
use crate::params;
use crate::session::{Ran, Request, Session, SessionError};
use crate::terminal::{self, textln, Layout};
use contour_core::{Record, Sandbox};
use line::{parse_line, Line};
use serde_json::{json, Value};
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Runs the session; returns the process exit code (0 on :quit / EOF). When stdin and stdout
/// are both a terminal it uses the line editor (history in `history`); otherwise it reads
/// stdin through [`piped`], so output to a file or a pipe is one JSON line per entry.
pub fn run(session: Session, history: Option<PathBuf>) -> Result<u8, String> {
    if !io::stdin().is_terminal() || !io::stdout().is_terminal() {
        return Ok(piped::run_stdin(session));
    }
    editor::interactive(session, history)
}

/// What the loop does after an entry.
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
    cancelled: u64,
    total_fuel: u64,
    total_time: Duration,
    last_peak_memory: Option<u64>,
}

/// A running session.
struct Repl {
    session: Session,
    /// `None` until the first intent, and after the plugin or its host changed.
    sandbox: Option<Sandbox>,
    stats: Stats,
    /// Terminal mode: pretty outcomes, figures and command output on stdout.
    terminal: bool,
    /// The first line of the entry being handled (for messages in piped mode).
    line_no: u64,
    front: Front,
    /// The file `:record` writes to, while recording.
    recording: Option<PathBuf>,
}

impl Repl {
    fn new(session: Session, terminal: bool) -> Self {
        let front = session.repl_front();
        Self { session, sandbox: None, stats: Stats::default(), terminal, line_no: 0, front, recording: None }
    }

    /// Stops a running recording and writes its trace; what happened, for the user (`None`
    /// when nothing was being recorded).
    fn end_recording(&mut self) -> Option<Result<String, String>> {
        let path = self.recording.take()?;
        let stopped = self.sandbox.as_mut().and_then(Sandbox::stop_recording);
        let written = match stopped {
            Some(Ok(trace)) => {
                crate::traces::write_trace(&path, &trace).map(|()| trace.intents.len()).map_err(|e| e.to_string())
            }
            Some(Err(e)) => Err(format!("{}: {e}", path.display())),
            None => Ok(0),
        };
        Some(written.map(|n| format!("recorded {n} intent(s) to {} (tdm replay {0})", path.display())))
    }

    /// The sandbox, made on first use.
    fn sandbox(&mut self) -> Result<&mut Sandbox, SessionError> {
        if self.sandbox.is_none() {
            self.sandbox = Some(self.session.sandbox()?);
        }
        self.sandbox.as_mut().ok_or_else(|| SessionError::Usage("no sandbox".into()))
    }

    /// Reports a problem with the entry: on stderr (`error: ...`), and in piped mode as the
    /// entry's one stdout line.
    fn error(&self, out: &mut dyn Write, err: &mut dyn Write, message: &str) -> io::Result<()> {
        if self.terminal {
            return textln!(err, "error: {message}");
        }
        textln!(err, "tdm repl: line {}: error: {message}", self.line_no)?;
        let line = json!({"status": "error", "line": self.line_no, "message": message}).to_string();
        terminal::write_json(out, &line, Layout::Line)
    }

    /// Handles one entry.
    fn handle(&mut self, entry: &str, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Flow> {
        match parse_line(entry) {
            Err(message) => self.error(out, err, &message).map(|()| Flow::Continue),
            Ok(Line::Blank) => Ok(Flow::Continue),
            Ok(Line::Command(command)) => self.command(command, out, err),
            Ok(Line::Intent { method, params }) => {
                self.intent(&Request::Intent { method, params }, out, err).map(|()| Flow::Continue)
            }
            Ok(Line::IntentFromFile { method, path }) => {
                let limit = u64::from(self.session.policy().max_request_bytes);
                let source = params::ParamsSource::File(PathBuf::from(path));
                match params::read(&source, limit, io::empty()) {
                    Ok(params) => self.intent(&Request::Intent { method, params }, out, err),
                    Err(e) => self.error(out, err, &e.to_string()),
                }
                .map(|()| Flow::Continue)
            }
            Ok(Line::Raw(text)) => self.intent(&Request::Raw(text), out, err).map(|()| Flow::Continue),
        }
    }

    /// Runs an intent and prints its outcome and figures.
    fn intent(&mut self, request: &Request, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<()> {
        // A SIGINT that came at the prompt is not meant for this intent.
        if let Some(cancel) = self.session.cancel() {
            cancel.clear();
        }
        let ran = match self.sandbox() {
            Ok(_) => {
                let (session, sandbox) = (&self.session, self.sandbox.as_mut());
                match sandbox {
                    Some(sandbox) => session.run(sandbox, request),
                    None => return self.error(out, err, "the sandbox could not be made"),
                }
            }
            Err(e) => return self.error(out, err, &e.to_string()),
        };
        self.count(&ran);
        self.session.write_plugin_output(&ran.report, err)?;
        let layout = if self.terminal { Layout::Pretty } else { Layout::Line };
        terminal::write_json(out, &ran.outcome_json(self.front), layout)?;
        self.figures(&ran, out, err)?;
        out.flush()
    }

    fn count(&mut self, ran: &Ran) {
        let stats = &mut self.stats;
        stats.intents += 1;
        stats.failed += u64::from(!ran.report.outcome.is_completed());
        stats.cancelled += u64::from(ran.cancelled);
        stats.total_fuel = stats.total_fuel.saturating_add(ran.report.fuel_used);
        stats.total_time += ran.elapsed;
        stats.last_peak_memory = Some(ran.report.peak_memory_bytes);
    }

    /// The figures line: on stdout under a terminal's pretty outcome, else on stderr.
    fn figures(&self, ran: &Ran, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<()> {
        let micros = ran.elapsed.as_micros();
        if self.terminal {
            let mut notes = String::new();
            if ran.cancelled {
                notes.push_str(" | cancelled (Ctrl-C)");
            }
            if ran.discarded {
                notes.push_str(" | instance discarded: the next intent starts a fresh one");
            }
            return textln!(
                out,
                "-- fuel {} | peak memory {} | {}.{:03} ms{notes}",
                ran.report.fuel_used,
                memory(ran.report.peak_memory_bytes),
                micros / 1000,
                micros % 1000
            );
        }
        textln!(
            err,
            "tdm repl: line {}: fuel_used={} peak_memory_bytes={} elapsed_us={micros}{}{}",
            self.line_no,
            ran.report.fuel_used,
            ran.report.peak_memory_bytes,
            if ran.cancelled { " cancelled" } else { "" },
            if ran.discarded { " instance_discarded" } else { "" }
        )
    }

    /// A command's JSON line in piped mode (nothing on a terminal).
    fn done(&self, out: &mut dyn Write, command: &str, mut fields: Value) -> io::Result<()> {
        if self.terminal {
            return Ok(());
        }
        if let Value::Object(map) = &mut fields {
            map.insert("status".into(), Value::from("ok"));
            map.insert("command".into(), Value::from(command));
        }
        terminal::write_json(out, &fields.to_string(), Layout::Line)
    }
}

/// Memory in bytes, with KiB or MiB.
fn memory(bytes: u64) -> String {
    if bytes >= 1024 {
        format!("{bytes} bytes ({})", format_size(bytes))
    } else {
        format!("{bytes} bytes")
    }
}

impl Drop for Repl {
    /// Leaving the REPL while recording writes the trace, as `:stop` would.
    fn drop(&mut self) {
        match self.end_recording() {
            Some(Ok(message)) => crate::terminal::err_line(&format!("tdm repl: {message}")),
            Some(Err(message)) => {
                crate::terminal::err_line(&format!("tdm repl: error: the recording was lost: {message}"))
            }
            None => {}
        }
    }
}
