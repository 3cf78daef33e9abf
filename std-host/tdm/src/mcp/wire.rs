//! The MCP server's wire: newline-delimited JSON-RPC 2.0 read with a bound on each message
//! (a longer line is skipped as it streams, never held), sorted into requests, notifications
//! and what is refused, and the JSON-RPC answers written one line at a time.

use serde_json::{json, Value};
use std::io::{self, BufRead, Write};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

/// The largest message read, in bytes (its newline aside).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// The longest request id accepted, as JSON text.
pub const MAX_ID_BYTES: usize = 256;

/// JSON-RPC's error codes.
pub mod code {
    /// Not JSON (or not UTF-8).
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, but not a request the server takes (a batch, no method, too large, too early).
    pub const INVALID_REQUEST: i64 = -32600;
    /// A method the server does not offer.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Params that do not fit the method (an unknown tool, a bad cursor).
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed on its own account (the workspace could not be read).
    pub const INTERNAL: i64 = -32603;
    /// The server is at its bound of calls in flight.
    pub const BUSY: i64 = -32000;
    /// A request for a protocol revision the server does not serve (MCP 2026-07-28).
    pub const UNSUPPORTED_VERSION: i64 = -32022;
}

/// One line read from the client.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A message's bytes (without the newline).
    Message(Vec<u8>),
    /// A message longer than [`MAX_MESSAGE_BYTES`]; its bytes were skipped.
    TooLong,
    /// The end of the input.
    End,
}

/// Reads the next line of `input`, holding at most [`MAX_MESSAGE_BYTES`] of it.
pub fn read_line(input: &mut dyn BufRead) -> io::Result<Line> {
    let mut message = Vec::new();
    let mut too_long = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(match (too_long, message.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Message(message),
            });
        }
        let (chunk, ends) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], Some(at + 1)),
            None => (buf, None),
        };
        if !too_long && message.len() + chunk.len() > MAX_MESSAGE_BYTES {
            too_long = true;
            message = Vec::new();
        }
        if !too_long {
            message.extend_from_slice(chunk);
        }
        let used = ends.unwrap_or(buf.len());
        input.consume(used);
        if ends.is_some() {
            if too_long {
                return Ok(Line::TooLong);
            }
            if message.last() == Some(&b'\r') {
                message.pop();
            }
            if message.iter().all(u8::is_ascii_whitespace) {
                message.clear();
                continue;
            }
            return Ok(Line::Message(message));
        }
    }
}

/// What one message is.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A request: answer it with its id.
    Request {
        /// Its id, as sent.
        id: Value,
        /// The method.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// A notification: never answered.
    Notification {
        /// The method.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// A response to something the server sent (it sends no requests: ignored).
    Response,
    /// Not a message the server takes: answer with this error (and the id, when it had one).
    Refused {
        /// The id, or `null`.
        id: Value,
        /// The JSON-RPC error code.
        code: i64,
        /// Why.
        message: String,
    },
}

/// Sorts the bytes of one message.
pub fn classify(bytes: &[u8]) -> Incoming {
    let refused = |code, message: &str| Incoming::Refused { id: Value::Null, code, message: message.to_string() };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return refused(code::PARSE_ERROR, "Parse error: the message is not UTF-8.");
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return refused(code::PARSE_ERROR, &format!("Parse error: {e}.")),
    };
    let Value::Object(mut object) = value else {
        let why = if value.is_array() {
            "Invalid request: batches are not supported (MCP 2025-06-18 removed them); send one message per line."
        } else {
            "Invalid request: a message is a JSON object."
        };
        return refused(code::INVALID_REQUEST, why);
    };
    let id = object.remove("id");
    if let Some(id) = &id {
        let fits = matches!(id, Value::String(_) | Value::Number(_)) && id.to_string().len() <= MAX_ID_BYTES;
        if !fits {
            let why = format!("Invalid request: an id is a string or number of at most {MAX_ID_BYTES} bytes.");
            return refused(code::INVALID_REQUEST, &why);
        }
    }
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Incoming::Refused {
            id: id.unwrap_or(Value::Null),
            code: code::INVALID_REQUEST,
            message: "Invalid request: `jsonrpc` must be \"2.0\".".into(),
        };
    }
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Incoming::Request { id, method, params },
        (Some(Value::String(method)), None) => Incoming::Notification { method, params },
        (None, Some(_)) if object.contains_key("result") || object.contains_key("error") => Incoming::Response,
        (_, id) => Incoming::Refused {
            id: id.unwrap_or(Value::Null),
            code: code::INVALID_REQUEST,
            message: "Invalid request: no `method` string.".into(),
        },
    }
}

/// Where the server's messages for one client go: a stream written one line per message,
/// never interleaved (stdio), or a channel its HTTP request drains (`tdm mcp --http`).
#[derive(Clone)]
pub struct Outbox(Arc<Deliver>);

/// How an outbox delivers one message.
type Deliver = dyn Fn(&Value) -> io::Result<()> + Send + Sync;

impl Outbox {
    /// An outbox writing one line per message to `out`.
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        let out = Mutex::new(out);
        Self(Arc::new(move |message: &Value| {
            let text = message.to_string();
            let mut out = out.lock().map_err(|_| io::Error::other("the output lock is poisoned"))?;
            crate::terminal::write_json(&mut *out, &text, crate::terminal::Layout::Line)
        }))
    }

    /// An outbox handing each message to `sender` (an error once the receiver is gone).
    pub fn channel(sender: Sender<Value>) -> Self {
        let sender = Mutex::new(sender);
        Self(Arc::new(move |message: &Value| {
            let sender = sender.lock().map_err(|_| io::Error::other("the channel lock is poisoned"))?;
            sender.send(message.clone()).map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client is gone"))
        }))
    }

    /// This outbox, with `change` applied to each message first.
    pub fn map(&self, change: fn(Value) -> Value) -> Self {
        let inner = self.clone();
        Self(Arc::new(move |message: &Value| inner.send(&change(message.clone()))))
    }

    /// Sends one message; an error means the client is gone.
    pub fn send(&self, message: &Value) -> io::Result<()> {
        (self.0)(message)
    }

    /// Answers request `id` with `result`.
    pub fn result(&self, id: &Value, result: Value) -> io::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    /// Answers request `id` (or `null`) with an error.
    pub fn error(&self, id: &Value, code: i64, message: &str) -> io::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) -> io::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_and_a_long_one_is_skipped_as_it_streams() {
        let mut long = vec![b'x'; MAX_MESSAGE_BYTES + 10];
        long.extend_from_slice(b"\n{\"a\":1}\r\n\n  \n{\"b\":2}");
        let mut input = io::BufReader::with_capacity(4096, &long[..]);
        assert_eq!(read_line(&mut input).unwrap(), Line::TooLong);
        assert_eq!(read_line(&mut input).unwrap(), Line::Message(b"{\"a\":1}".to_vec()));
        assert_eq!(read_line(&mut input).unwrap(), Line::Message(b"{\"b\":2}".to_vec()));
        assert_eq!(read_line(&mut input).unwrap(), Line::End);
    }

    #[test]
    fn messages_are_sorted_and_bad_ones_refused_with_the_right_code() {
        let code_of = |text: &[u8]| match classify(text) {
            Incoming::Refused { code, .. } => Some(code),
            _ => None,
        };
        assert_eq!(code_of(b"{\"jsonrpc\":\"2.0\",\"id\":1,"), Some(code::PARSE_ERROR));
        assert_eq!(code_of(b"\xff\xfe"), Some(code::PARSE_ERROR));
        assert_eq!(code_of(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]"), Some(code::INVALID_REQUEST));
        assert_eq!(code_of(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}"), Some(code::INVALID_REQUEST));
        let huge = format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{}\",\"method\":\"ping\"}}", "i".repeat(1000));
        assert_eq!(code_of(huge.as_bytes()), Some(code::INVALID_REQUEST));
        assert!(matches!(
            classify(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}"),
            Incoming::Request { method, .. } if method == "ping"
        ));
        assert!(matches!(classify(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}"), Incoming::Notification { .. }));
        assert_eq!(classify(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"), Incoming::Response);
    }
}
