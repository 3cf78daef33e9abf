//! The REPL on a terminal: rustyline with a history file, Tab completion of commands and the
//! declared intents, entries that go on over lines while their JSON brackets are open, and
//! Ctrl-C: at the prompt it clears the line; while an intent runs, a SIGINT handler sets the
//! session's cancel flag, the intent ends at its next deadline check and the prompt returns.

use super::line::{complete, continues};
use super::{Flow, Repl};
use crate::terminal::{self, errln, outln};
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{History, MemHistory, SearchDirection};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{CompletionType, Config, Editor, Helper};
use std::io;
use std::path::PathBuf;
use tdm_sdk::history;
use tdm_sdk::session::Session;

/// The rustyline helper: completion and multi-line entries.
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

impl Validator for Completion {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if continues(ctx.input()) { ValidationResult::Incomplete } else { ValidationResult::Valid(None) })
    }
}

impl Helper for Completion {}

/// The declared intent names Tab offers: as they are, so a name that would need escaping is
/// not offered.
fn completable(session: &Session) -> Vec<String> {
    session.declared().names().into_iter().filter(|name| !name.contains(terminal::is_unsafe)).collect()
}

/// Runs the terminal REPL until `:quit`, Ctrl-D or a failing terminal.
pub(super) fn interactive(session: Session, history: Option<PathBuf>) -> Result<u8, String> {
    // The label is a file stem or a plugin id, and rustyline writes the prompt as it is.
    let prompt = format!("{}> ", terminal::escape(&session.identity.id));
    let config = Config::builder()
        .max_history_size(1000)
        .map_err(|e| format!("cannot configure the line editor: {e}"))?
        .auto_add_history(false)
        .completion_type(CompletionType::List)
        .build();
    let kept = MemHistory::with_config(&config);
    let mut editor: Editor<Completion, MemHistory> =
        Editor::with_history(config, kept).map_err(|e| format!("cannot start the line editor: {e}"))?;
    let intents = session.declared().names().into_iter().filter(|name| !name.contains(terminal::is_unsafe)).collect();
    editor.set_helper(Some(Completion { intents }));
    if let Some(path) = &history {
        match history::load(path) {
            Ok(entries) => {
                for entry in entries {
                    let _ = editor.add_history_entry(entry);
                }
            }
            Err(e) => errln!("tdm repl: warning: the history was not read ({e}); starting without it"),
        }
    }
    // While an intent runs the terminal is in cooked mode and Ctrl-C is SIGINT: it only sets
    // the cancel flag (signal-hook's handler does nothing else), so the session goes on; a
    // second one while the first is still pending exits at once (130), as when piped.
    if let Some(cancel) = session.cancel() {
        if let Err(e) = cancel.watch_sigint() {
            errln!("tdm repl: warning: Ctrl-C cannot cancel an intent here ({e}): it would end the REPL");
        }
    }
    let mut repl = Repl::new(session, true);
    outln!(
        "Contour REPL for {}: type METHOD [JSON params] or a JSON-RPC request; :help lists the commands, \
         :intents the plugin's intents; Ctrl-C cancels a running intent.",
        repl.session.identity.id
    );
    let (mut out, mut err) = (io::stdout(), io::stderr());
    let result = loop {
        match editor.readline(&prompt) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                }
                match repl.handle(&line, &mut out, &mut err) {
                    Ok(Flow::Continue) => {
                        // `:reload` may have brought other intents.
                        if let Some(helper) = editor.helper_mut() {
                            helper.intents = completable(&repl.session);
                        }
                    }
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
        let kept = editor.history();
        let entries: Vec<String> = (0..kept.len())
            .filter_map(|i| kept.get(i, SearchDirection::Forward).ok().flatten().map(|found| found.entry.into_owned()))
            .collect();
        if let Err(e) = history::save(path, &entries) {
            errln!("tdm repl: warning: the history was not saved ({e})");
        }
    }
    result
}
