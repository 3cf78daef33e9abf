//! The REPL without a terminal: entries read from stdin (or any reader), one JSON line on
//! stdout per entry. On the process's stdin, SIGINT (Ctrl-C at a terminal feeding a pipe,
//! `kill -INT`) sets the session's cancel flag: during an intent the intent stops at its next
//! deadline check and its line is the cancelled outcome, then the session reads on; while the
//! REPL waits for input it ends the session as the end of the input does (a `:record` in
//! progress is written); a second SIGINT while the first is pending exits 130 at once.

use super::line::{Gather, Step};
use super::{Flow, Repl};
use crate::environment::{Cancel, CANCEL_POLL};
use crate::exit::EXIT_USAGE;
use crate::session::Session;
use crate::terminal::textln;
use std::io::{self, BufRead, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};

/// What waiting for the next line gave.
enum Waited {
    /// The line is in the buffer (an empty buffer is the end of the input).
    Line,
    /// A SIGINT came while nothing ran.
    Interrupted,
}

/// The non-terminal REPL: reads entries from `input` until EOF or `:quit`, without a prompt,
/// and writes exactly one JSON line on `out` per entry (see the module doc); everything else
/// goes to `err`. Returns 0, or 2 when `input` or `out` fails.
pub fn run_lines(session: Session, mut input: impl BufRead, out: &mut impl Write, err: &mut impl Write) -> u8 {
    run_from(session, |buf| input.read_until(b'\n', buf).map(|_| Waited::Line), out, err)
}

/// The piped REPL on the process's stdin and stdout, with SIGINT handled as the module doc says.
pub(super) fn run_stdin(session: Session) -> u8 {
    let (mut out, mut err) = (io::stdout().lock(), io::stderr().lock());
    let cancel = session.cancel().cloned();
    if let Some(cancel) = &cancel {
        if let Err(e) = cancel.watch_sigint() {
            let _ = textln!(
                &mut err,
                "tdm repl: warning: Ctrl-C cannot cancel an intent here ({e}): it would end the REPL"
            );
        }
    }
    match stdin_lines() {
        Ok(lines) => run_from(session, |buf| next_line(&lines, cancel.as_ref(), buf), &mut out, &mut err),
        Err(e) => {
            // Without the reader thread a SIGINT at the wait is only seen once a line comes.
            let _ = textln!(&mut err, "tdm repl: warning: reading stdin on its own thread failed ({e})");
            run_lines(session, io::stdin().lock(), &mut out, &mut err)
        }
    }
}

/// Stdin's lines, read on a thread of their own so the REPL can wait for one and for a SIGINT
/// at once. The channel holds no line: the thread reads one ahead at most. It ends after the
/// end of the input or an error, or when the REPL has gone.
fn stdin_lines() -> io::Result<Receiver<io::Result<Vec<u8>>>> {
    let (send, receive) = mpsc::sync_channel(0);
    std::thread::Builder::new().name("tdm-repl-stdin".into()).spawn(move || {
        let mut stdin = io::stdin().lock();
        loop {
            let mut line = Vec::new();
            let read = stdin.read_until(b'\n', &mut line);
            let last = !matches!(read, Ok(n) if n > 0);
            if send.send(read.map(|_| line)).is_err() || last {
                break;
            }
        }
    })?;
    Ok(receive)
}

/// Waits for the next line from `lines` into `buf`, looking at `cancel` meanwhile.
fn next_line(lines: &Receiver<io::Result<Vec<u8>>>, cancel: Option<&Cancel>, buf: &mut Vec<u8>) -> io::Result<Waited> {
    loop {
        if cancel.is_some_and(Cancel::is_set) {
            return Ok(Waited::Interrupted);
        }
        match lines.recv_timeout(CANCEL_POLL) {
            Ok(line) => {
                *buf = line?;
                return Ok(Waited::Line);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                buf.clear();
                return Ok(Waited::Line);
            }
        }
    }
}

/// The loop of [`run_lines`], reading through `next` (which fills the cleared buffer).
fn run_from(
    session: Session,
    mut next: impl FnMut(&mut Vec<u8>) -> io::Result<Waited>,
    out: &mut impl Write,
    err: &mut impl Write,
) -> u8 {
    let mut repl = Repl::new(session, false);
    let mut gather = Gather::default();
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        buf.clear();
        let steps: Vec<Step> = match next(&mut buf) {
            Ok(Waited::Interrupted) => {
                let _ = textln!(
                    err,
                    "tdm repl: interrupted (SIGINT) while waiting for input: the session ends as at the end \
                     of the input (a second Ctrl-C exits at once)"
                );
                buf.clear();
                gather.finish().into_iter().collect()
            }
            Ok(Waited::Line) if buf.is_empty() => gather.finish().into_iter().collect(),
            Ok(Waited::Line) => {
                number += 1;
                gather.push(number, std::str::from_utf8(&buf).ok())
            }
            Err(e) => {
                let _ = textln!(err, "tdm repl: error: reading the input failed: {e}");
                return EXIT_USAGE;
            }
        };
        let mut flow = Ok(if buf.is_empty() { Flow::Quit } else { Flow::Continue });
        for step in steps {
            let done = match step {
                Step::Entry { line, text } => {
                    repl.line_no = line;
                    repl.handle(&text, out, err)
                }
                Step::Error { line, message } => {
                    repl.line_no = line;
                    repl.error(out, err, &message).map(|()| Flow::Continue)
                }
            };
            if !matches!(done, Ok(Flow::Continue)) {
                flow = done;
                break;
            }
        }
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
