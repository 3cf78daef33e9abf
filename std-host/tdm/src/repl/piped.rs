//! The REPL without a terminal: entries read from stdin (or any reader), one JSON line on
//! stdout per entry. On the process's stdin, SIGINT (Ctrl-C at a terminal feeding a pipe,
//! `kill -INT`) sets the session's cancel flag: during an intent the intent stops at its next
//! deadline check and its line is the cancelled outcome, then the session reads on; while the
//! REPL waits for input it ends the session as the end of the input does (a `:record` in
//! progress is written); a second SIGINT while the first is pending exits 130 at once.

use super::line::{Gather, Step, MAX_ENTRY_BYTES};
use super::{Flow, Repl};
use crate::exit::EXIT_USAGE;
use crate::terminal::textln;
use std::io::{self, BufRead, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use tdm_sdk::environment::{Cancel, CANCEL_POLL};
use tdm_sdk::session::Session;

/// What waiting for the next line gave.
enum Waited {
    /// The line is in the buffer (an empty buffer is the end of the input).
    Line,
    /// The line was longer than [`MAX_ENTRY_BYTES`]: none of it was kept.
    TooLong,
    /// A SIGINT came while nothing ran.
    Interrupted,
}

/// What the stdin thread hands over: how reading went, and the line.
type Piece = io::Result<(Waited, Vec<u8>)>;

/// The lines of a reader, each kept only up to [`MAX_ENTRY_BYTES`]: the rest of a longer line
/// is read and dropped, so a line without an end (`/dev/zero`) holds no more memory than that.
struct BoundedLines<R> {
    input: R,
    /// The line in progress is too long: read on to its end without keeping it.
    skipping: bool,
}

impl<R: BufRead> BoundedLines<R> {
    fn new(input: R) -> Self {
        Self { input, skipping: false }
    }

    /// The next line into the cleared `buf` (with its `\n`; empty at the end of the input), or
    /// [`Waited::TooLong`] as soon as it passes the bound.
    fn next(&mut self, buf: &mut Vec<u8>) -> io::Result<Waited> {
        buf.clear();
        loop {
            let available = self.input.fill_buf()?;
            if available.is_empty() {
                self.skipping = false;
                return Ok(Waited::Line);
            }
            let end = available.iter().position(|&b| b == b'\n');
            let take = end.map_or(available.len(), |at| at + 1);
            let mut passed = false;
            if !self.skipping {
                if buf.len() + take > MAX_ENTRY_BYTES + 1 {
                    buf.clear();
                    passed = true;
                } else {
                    buf.extend_from_slice(&available[..take]);
                }
            }
            self.input.consume(take);
            if end.is_some() {
                let was_skipping = std::mem::replace(&mut self.skipping, false);
                if passed {
                    return Ok(Waited::TooLong);
                }
                if !was_skipping {
                    return Ok(Waited::Line);
                }
            } else if passed {
                self.skipping = true;
                return Ok(Waited::TooLong);
            }
        }
    }
}

/// The non-terminal REPL: reads entries from `input` until EOF or `:quit`, without a prompt,
/// and writes exactly one JSON line on `out` per entry (see the module doc); everything else
/// goes to `err`. Returns 0, or 2 when `input` or `out` fails.
pub fn run_lines(session: Session, input: impl BufRead, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let mut lines = BoundedLines::new(input);
    run_from(session, |buf| lines.next(buf), out, err)
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
fn stdin_lines() -> io::Result<Receiver<Piece>> {
    let (send, receive) = mpsc::sync_channel(0);
    std::thread::Builder::new().name("tdm-repl-stdin".into()).spawn(move || {
        let mut stdin = BoundedLines::new(io::stdin().lock());
        loop {
            let mut line = Vec::new();
            let read = stdin.next(&mut line);
            let last = match &read {
                Ok(Waited::Line) => line.is_empty(),
                Ok(_) => false,
                Err(_) => true,
            };
            if send.send(read.map(|waited| (waited, line))).is_err() || last {
                break;
            }
        }
    })?;
    Ok(receive)
}

/// Waits for the next line from `lines` into `buf`, looking at `cancel` meanwhile.
fn next_line(lines: &Receiver<Piece>, cancel: Option<&Cancel>, buf: &mut Vec<u8>) -> io::Result<Waited> {
    loop {
        if cancel.is_some_and(Cancel::is_set) {
            return Ok(Waited::Interrupted);
        }
        match lines.recv_timeout(CANCEL_POLL) {
            Ok(read) => {
                let (waited, line) = read?;
                *buf = line;
                return Ok(waited);
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
            Ok(Waited::TooLong) => {
                number += 1;
                // Not the end of the input: the buffer holds a line's end in place of the line.
                buf.push(b'\n');
                gather.push_too_long(number)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every piece `BoundedLines` reads from `input` through a reader of `capacity` bytes:
    /// `Some(line)`, or `None` for a line too long.
    fn pieces(input: &[u8], capacity: usize) -> Vec<Option<Vec<u8>>> {
        let mut lines = BoundedLines::new(io::BufReader::with_capacity(capacity, input));
        let mut buf = Vec::new();
        let mut found = Vec::new();
        loop {
            match lines.next(&mut buf).unwrap() {
                Waited::Line if buf.is_empty() => return found,
                Waited::Line => found.push(Some(buf.clone())),
                Waited::TooLong => found.push(None),
                Waited::Interrupted => unreachable!(),
            }
        }
    }

    #[test]
    fn a_line_past_the_bound_is_reported_and_never_kept() {
        let longest = [vec![b'x'; MAX_ENTRY_BYTES], b"\n".to_vec()].concat();
        let mut input = b"a\n".to_vec();
        input.extend(vec![b'y'; 3 * MAX_ENTRY_BYTES]);
        input.extend(b"\nb\n");
        input.extend(&longest);
        input.extend(vec![b'z'; MAX_ENTRY_BYTES + 2]);
        for capacity in [7, 8 * 1024, 4 * MAX_ENTRY_BYTES] {
            let found = pieces(&input, capacity);
            let expected = vec![Some(b"a\n".to_vec()), None, Some(b"b\n".to_vec()), Some(longest.clone()), None];
            assert!(
                found == expected,
                "capacity {capacity}: {:?}",
                found.iter().map(|p| p.as_ref().map(Vec::len)).collect::<Vec<_>>()
            );
        }
    }
}
