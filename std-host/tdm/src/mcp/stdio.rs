//! `tdm mcp` over stdio: one session, newline-delimited JSON-RPC on stdin and stdout (read with
//! a bound on each message), tdm's own lines on stderr. stdin is read on a thread of its own so
//! a signal is seen while no line comes; its end, SIGINT or SIGTERM cancels the calls in flight,
//! waits for them, and the server exits 0.

use super::server::Server;
use super::session::McpSession;
use super::wire::{self, code, Line, Outbox};
use crate::terminal::errln;
use serde_json::{json, Value};
use std::io::BufReader;
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::sync::Arc;
use tdm_sdk::environment::CANCEL_POLL;

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
        if let Some(signal) = server.signalled() {
            errln!("tdm mcp: {signal}: cancelling the calls in flight");
            break;
        }
        let line = match incoming.recv_timeout(CANCEL_POLL) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let sent = match line {
            Ok(Line::Message(bytes)) => session.handle(wire::classify(&bytes), &outbox),
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
    session.calls.cancel_all_and_wait();
    session.end_listeners();
}
