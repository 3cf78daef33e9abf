//! `tdm mcp` over stdio: one session, newline-delimited JSON-RPC on stdin and stdout (read with
//! a bound on each message), tdm's own lines on stderr. stdin is read and its messages handled
//! on a thread of its own, so a signal is seen while no line comes; its end, SIGINT or SIGTERM
//! cancels the calls in flight, waits for them, and the server exits 0.

use super::server::Server;
use super::session::McpSession;
use super::wire::{self, code, Line, Outbox};
use crate::terminal::errln;
use serde_json::{json, Value};
use std::io::{BufReader, Stdin};
use std::sync::mpsc::{sync_channel, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use tdm_sdk::environment::CANCEL_POLL;

/// Who reads stdin: the session its messages go to, where answers go, and how the end is told.
struct Reader {
    session: Arc<McpSession>,
    outbox: Outbox,
    ended: SyncSender<()>,
}

impl Reader {
    /// Reads and handles messages until the input ends, the client is gone, or a message starts
    /// a call: then the reading goes on on another thread and this one runs the call.
    fn read(self, mut input: BufReader<Stdin>) {
        loop {
            let sent = match wire::read_line(&mut input) {
                Ok(Line::Message(bytes)) => self.session.handle(wire::classify(&bytes), &self.outbox),
                Ok(Line::TooLong) => {
                    let why = format!("Invalid request: a message is at most {} bytes.", wire::MAX_MESSAGE_BYTES);
                    self.outbox.error(&Value::Null, code::INVALID_REQUEST, &why)
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
            if let Some(call) = self.session.calls.take_ready() {
                let calls = Arc::clone(&self.session);
                let next = Reader {
                    session: Arc::clone(&self.session),
                    outbox: self.outbox.clone(),
                    ended: self.ended.clone(),
                };
                if calls.calls.spawn("tdm-mcp-stdin", Box::new(move || next.read(input))).is_err() {
                    errln!("tdm mcp: no thread to read stdin on");
                    call();
                    break;
                }
                call();
                return;
            }
        }
        let _ = self.ended.send(());
    }
}

/// Serves `session` on stdin and stdout until the input ends or `stop` says so.
pub fn serve(session: &Arc<McpSession>, server: &Server) {
    let outbox = Outbox::new(Box::new(std::io::stdout()));
    let notified = (Arc::clone(session), outbox.clone());
    super::watch::watch_tools(&server.workspace, &server.only, Arc::clone(&server.ended), move || {
        if notified.0.is_initialized() {
            let _ = notified.1.notify("notifications/tools/list_changed", json!({}));
        }
        notified.0.tools_changed();
    });
    // stdin is read, and each message handled, on a thread of its own; this one waits for
    // its end or a signal. The thread that reads a call runs it and hands the reading on to
    // another, so no call waits for a thread to wake before it runs.
    let (ended, end) = sync_channel::<()>(1);
    let reader = Reader { session: Arc::clone(session), outbox: outbox.clone(), ended };
    let input = BufReader::new(std::io::stdin());
    let _ = std::thread::Builder::new().name("tdm-mcp-stdin".into()).spawn(move || reader.read(input));
    loop {
        if let Some(signal) = server.signalled() {
            errln!("tdm mcp: {signal}: cancelling the calls in flight");
            break;
        }
        match end.recv_timeout(CANCEL_POLL) {
            Err(RecvTimeoutError::Timeout) => continue,
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    session.calls.cancel_all_and_wait();
    session.end_listeners();
}
