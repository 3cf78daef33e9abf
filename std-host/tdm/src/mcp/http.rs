//! `tdm mcp --http ADDR:PORT`: Streamable HTTP at `/mcp`. POST carries one JSON-RPC message
//! (at most 4 MiB, refused from its Content-Length before a byte is read) and is answered with
//! JSON, or an event stream when a call's log lines come before its answer; GET opens the
//! session's stream of server messages (`tools/list_changed`); DELETE ends a session and cancels
//! its calls. `initialize` opens a session (`Mcp-Session-Id`, 128 random bits); at most
//! [`MAX_SESSIONS`] are kept, the least recently used ended first. It binds loopback unless a
//! bearer token is given, refuses a foreign `Origin` with 403 (DNS rebinding), and each request
//! runs on a thread of its own, at most [`MAX_REQUESTS`] at once (503 past that).

use super::server::Server;
use super::session::{supported_versions, McpSession, STATELESS_VERSION};
use super::threads::Threads;
use super::wire::{self, code, Incoming, Outbox};
use crate::cli::report::CliError;
use crate::terminal::errln;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{Cursor, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tdm_sdk::files;
use tiny_http::{Header, Method, Request, Response, StatusCode};

/// Sessions kept at once; opening one more ends the least recently used.
pub const MAX_SESSIONS: usize = 256;
/// Requests handled at once.
pub const MAX_REQUESTS: usize = 128;
/// The shortest bearer token accepted, in bytes.
pub const MIN_TOKEN_BYTES: usize = 16;
/// How often an idle event stream sends a comment (so a vanished client is noticed).
const KEEPALIVE: Duration = Duration::from_secs(15);

type Body = Box<dyn Read + Send>;

/// The bearer token requests must carry, from `--token-file`; refused when `addr` is not
/// loopback and there is none.
pub fn token(addr: SocketAddr, file: Option<&Path>) -> Result<Option<String>, CliError> {
    let Some(file) = file else {
        if addr.ip().is_loopback() {
            return Ok(None);
        }
        return Err(CliError::usage(format!(
            "--http {addr} is not a loopback address: anyone who can reach it could call the tools"
        ))
        .hint("give --token-file FILE (requests must then carry `Authorization: Bearer TOKEN`), or serve 127.0.0.1"));
    };
    let bytes = files::read_limited(file, 4096).map_err(|e| CliError::io(format!("--token-file: {e}")))?;
    let token = String::from_utf8(bytes).map_err(|_| CliError::usage("--token-file: the token is not UTF-8"))?;
    let token = token.trim().to_string();
    if token.len() < MIN_TOKEN_BYTES || token.chars().any(char::is_whitespace) {
        return Err(CliError::usage(format!(
            "--token-file: the token must be one word of at least {MIN_TOKEN_BYTES} characters"
        )));
    }
    Ok(Some(token))
}

/// One session and its stream of server messages (a GET), if one is open.
struct Entry {
    session: Arc<McpSession>,
    stream: Option<Outbox>,
    used: Instant,
}

/// The server's state, shared by the request threads.
struct Http {
    sessions: Mutex<HashMap<String, Entry>>,
    token: Option<String>,
    origins: Vec<String>,
    served: Arc<Server>,
    /// The session of 2026-07-28 requests, which carry no session id: their listings and
    /// subscriptions. Each of their calls gets a session of its own (two clients may use one
    /// request id), which ends with it; these are its calls in flight, so an ending server
    /// cancels and waits for them.
    stateless: Arc<McpSession>,
    stateless_calls: Mutex<Vec<Weak<McpSession>>>,
}

/// How long a call's answer is waited for before its POST is answered as a stream.
const STREAM_AFTER: Duration = Duration::from_millis(50);
/// How often a streamed call's connection is probed with a comment: a client that closed it
/// (how a 2026-07-28 client cancels a request over HTTP) cancels the call.
const PROBE_EVERY: Duration = Duration::from_millis(200);

/// A call answered as a stream: what came before the stream opened, what follows, and whose
/// call it is.
struct Streamed {
    early: Vec<Value>,
    messages: Receiver<Value>,
    session: Arc<McpSession>,
    id: Value,
}

/// Serves Streamable HTTP on `addr` until a signal stops it.
pub fn serve(addr: SocketAddr, token: Option<String>, served: &Arc<Server>) -> Result<(), CliError> {
    let listener = tiny_http::Server::http(addr).map_err(|e| CliError::io(format!("cannot listen on {addr}: {e}")))?;
    let port = listener.server_addr().to_ip().map_or(addr.port(), |bound| bound.port());
    // The bound address as a URL writes it (an IPv6 address in brackets).
    let bound = SocketAddr::new(addr.ip(), port);
    let hosts = [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}"), bound.to_string()];
    let http = Arc::new(Http {
        sessions: Mutex::default(),
        token,
        origins: hosts.iter().map(|host| format!("http://{host}")).collect(),
        served: Arc::clone(served),
        stateless: Arc::new(McpSession::new(served)),
        stateless_calls: Mutex::default(),
    });
    let notified = Arc::clone(&http);
    super::watch::watch_tools(&served.workspace, &served.only, Arc::clone(&served.ended), move || {
        notified.list_changed()
    });
    errln!("tdm mcp: serving the approved plugins of {} at http://{bound}/mcp", served.workspace.dir.display());
    let active = Arc::new(AtomicUsize::new(0));
    let threads = Threads::default();
    while served.signalled().is_none() {
        let request = match listener.recv_timeout(Duration::from_millis(50)) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err(e) => {
                errln!("tdm mcp: the listener failed: {e}");
                break;
            }
        };
        if active.fetch_add(1, Ordering::SeqCst) >= MAX_REQUESTS {
            active.fetch_sub(1, Ordering::SeqCst);
            let _ = request.respond(plain(503, "Service Unavailable: too many requests at once; retry."));
            continue;
        }
        let (worker, done) = (Arc::clone(&http), Arc::clone(&active));
        let spawned = threads.run(
            "tdm-mcp-http",
            Box::new(move || {
                worker.respond(request);
                done.fetch_sub(1, Ordering::SeqCst);
            }),
        );
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::SeqCst);
        }
    }
    if let Some(signal) = served.signalled() {
        errln!("tdm mcp: {signal}: cancelling the calls in flight");
    }
    let sessions: Vec<Arc<McpSession>> = http
        .sessions
        .lock()
        .map_or_else(|_| Vec::new(), |mut map| map.drain().map(|(_, entry)| entry.session).collect());
    let alone: Vec<Arc<McpSession>> = http
        .stateless_calls
        .lock()
        .map_or_else(|_| Vec::new(), |calls| calls.iter().filter_map(Weak::upgrade).collect());
    for session in sessions.iter().chain([&http.stateless]).chain(&alone) {
        session.calls.cancel_all_and_wait();
        session.end_listeners();
    }
    Ok(())
}

/// A response of `status` with a short text body.
fn plain(status: u16, text: &str) -> Response<Body> {
    let body = text.as_bytes().to_vec();
    let len = body.len();
    response(status, "text/plain; charset=utf-8", Box::new(Cursor::new(body)), Some(len))
}

/// A response of `status` with a JSON-RPC error body.
fn rpc_error(status: u16, error: i64, message: &str) -> Response<Body> {
    json_response(status, &json!({"jsonrpc": "2.0", "id": null, "error": {"code": error, "message": message}}))
}

fn json_response(status: u16, value: &Value) -> Response<Body> {
    let body = value.to_string().into_bytes();
    let len = body.len();
    response(status, "application/json", Box::new(Cursor::new(body)), Some(len))
}

/// A header (`None` for a name or value HTTP does not allow; every caller's is ASCII).
fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

/// A response of `status` whose body is `body` (`len` bytes, `None`: streamed) of `kind`.
fn response(status: u16, kind: &str, body: Body, len: Option<usize>) -> Response<Body> {
    Response::new(StatusCode(status), header("Content-Type", kind).into_iter().collect(), body, len, None)
}

/// `response` with one more header.
fn with_header(mut response: Response<Body>, name: &str, value: &str) -> Response<Body> {
    if let Some(header) = header(name, value) {
        response.add_header(header);
    }
    response
}

/// The value of header `name` of `request`, if it has one.
fn header_of<'a>(request: &'a Request, name: &'static str) -> Option<&'a str> {
    request.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.as_str())
}

/// Compares without stopping at the first difference (the token's length is not secret).
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Http {
    fn respond(&self, mut request: Request) {
        match self.answer(&mut request) {
            Answer::Once(response) => {
                let _ = request.respond(response);
            }
            Answer::Stream(messages) => {
                // The head now, then each event flushed as it comes (a chunked body would sit in
                // tiny_http's buffer): no length, so the body ends when the connection does.
                let head = response(200, "text/event-stream", Box::new(std::io::empty()), None);
                let mut stream = request.upgrade("sse", with_header(head, "Cache-Control", "no-store"));
                stream_events(&messages, &mut *stream);
            }
            Answer::Call(call) => {
                let head = response(200, "text/event-stream", Box::new(std::io::empty()), None);
                let mut stream = request.upgrade("sse", with_header(head, "Cache-Control", "no-store"));
                stream_call(call, &mut *stream);
            }
        }
    }

    /// The checks every request passes, then the answer for its method.
    fn answer(&self, request: &mut Request) -> Answer {
        match self.check(request) {
            Err(response) => Answer::Once(response),
            Ok(()) if *request.method() == Method::Get => match self.get(request) {
                Ok(messages) => Answer::Stream(messages),
                Err(response) => Answer::Once(response),
            },
            Ok(()) if *request.method() == Method::Post => self.post(request),
            Ok(()) => Answer::Once(match request.method() {
                Method::Delete => self.delete(request),
                _ => with_header(plain(405, "Method Not Allowed: POST, GET or DELETE."), "Allow", "POST, GET, DELETE"),
            }),
        }
    }

    /// The checks every request passes: path, Origin, token, protocol version.
    fn check(&self, request: &Request) -> Result<(), Response<Body>> {
        let path = request.url().split('?').next().unwrap_or_default();
        if path != "/mcp" {
            return Err(plain(404, "Not Found: the MCP endpoint is /mcp."));
        }
        if let Some(origin) = header_of(request, "Origin") {
            if !self.origins.iter().any(|own| own == origin) {
                return Err(plain(403, "Forbidden: the request's Origin is not this server's."));
            }
        }
        if let Some(token) = &self.token {
            let given = header_of(request, "Authorization").and_then(|v| v.strip_prefix("Bearer "));
            if !given.is_some_and(|given| same_secret(given.trim(), token)) {
                let refused = plain(401, "Unauthorized: send `Authorization: Bearer TOKEN`.");
                return Err(with_header(refused, "WWW-Authenticate", "Bearer"));
            }
        }
        if let Some(version) = header_of(request, "MCP-Protocol-Version") {
            if !supported_versions().contains(&version) {
                let why = format!(
                    "Bad Request: MCP-Protocol-Version `{}` is not one this server speaks.",
                    files::truncated(version, 64)
                );
                return Err(rpc_error(400, code::INVALID_REQUEST, &why));
            }
        }
        Ok(())
    }

    /// The session `request` names: `Err` is the response when it names none or an unknown one.
    fn session_of(&self, request: &Request) -> Result<(String, Arc<McpSession>), Response<Body>> {
        let Some(id) = header_of(request, "Mcp-Session-Id") else {
            return Err(rpc_error(
                400,
                code::INVALID_REQUEST,
                "Bad Request: no Mcp-Session-Id header: send `initialize` first.",
            ));
        };
        let mut sessions = self.sessions.lock().map_err(|_| plain(500, "Internal Server Error"))?;
        match sessions.get_mut(id) {
            Some(entry) => {
                entry.used = Instant::now();
                Ok((id.to_string(), Arc::clone(&entry.session)))
            }
            None => Err(rpc_error(
                404,
                code::INVALID_REQUEST,
                "Not Found: no such session (it ended, or was never opened).",
            )),
        }
    }

    fn post(&self, request: &mut Request) -> Answer {
        if request.body_length().is_some_and(|len| len > wire::MAX_MESSAGE_BYTES) {
            return Answer::Once(rpc_error(
                413,
                code::INVALID_REQUEST,
                "Payload Too Large: a message is at most 4 MiB.",
            ));
        }
        let mut body = Vec::new();
        let limit = wire::MAX_MESSAGE_BYTES as u64 + 1;
        if request.as_reader().take(limit).read_to_end(&mut body).is_err() {
            return Answer::Once(plain(400, "Bad Request: the body could not be read."));
        }
        if body.len() > wire::MAX_MESSAGE_BYTES {
            return Answer::Once(rpc_error(
                413,
                code::INVALID_REQUEST,
                "Payload Too Large: a message is at most 4 MiB.",
            ));
        }
        let incoming = wire::classify(&body);
        let opens = matches!(&incoming, Incoming::Request { method, .. } if method == "initialize")
            && header_of(request, "Mcp-Session-Id").is_none();
        if let Incoming::Refused { id, code, message } = &incoming {
            // A message that is not one gets its JSON-RPC error whatever the session.
            return Answer::Once(json_response(
                400,
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
            ));
        }
        // A 2026-07-28 request names its revision in `_meta` (and the header must agree); it
        // needs no session.
        let stateless = match &incoming {
            Incoming::Request { params, .. } | Incoming::Notification { params, .. } => {
                params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str()
            }
            _ => None,
        };
        if let (Some(said), Some(header)) = (stateless, header_of(request, "MCP-Protocol-Version")) {
            if said != header {
                let why =
                    "Bad Request: the MCP-Protocol-Version header and the request's _meta name different revisions.";
                return Answer::Once(rpc_error(400, code::INVALID_REQUEST, why));
            }
        }
        let (id, session) = if opens {
            self.open_session()
        } else if header_of(request, "Mcp-Session-Id").is_none()
            && (stateless == Some(STATELESS_VERSION) || matches!(incoming, Incoming::Notification { .. }))
        {
            // A notification without a session (a 2026-07-28 cancel) is the stateless calls'.
            (String::new(), Arc::clone(&self.stateless))
        } else {
            match self.session_of(request) {
                Ok(found) => found,
                Err(response) => return Answer::Once(response),
            }
        };
        let listens = matches!(&incoming, Incoming::Request { method, .. } if method == "subscriptions/listen");
        let call = match &incoming {
            Incoming::Request { id, method, .. } if method == "tools/call" => Some(id.clone()),
            _ => None,
        };
        let session = if call.is_some() && id.is_empty() && !opens { self.stateless_call() } else { session };
        let (sender, messages) = channel();
        let _ = session.handle(incoming, &Outbox::channel(sender));
        if listens {
            // A subscription's stream stays open: its acknowledgment, each change, and its
            // result when the server ends.
            return Answer::Stream(messages);
        }
        let messages = match call {
            // A quick call is answered in one piece; a longer one as a stream whose connection
            // is watched.
            Some(call) => match answered_within(messages, &call, STREAM_AFTER) {
                Ok(messages) => messages,
                Err((early, messages)) => return Answer::Call(Streamed { early, messages, session, id: call }),
            },
            None => messages.iter().collect(),
        };
        let answer = match messages.as_slice() {
            [] => plain(202, ""),
            [one] => json_response(200, one),
            many => {
                let events: String = many.iter().map(sse_event).collect();
                let len = events.len();
                response(200, "text/event-stream", Box::new(Cursor::new(events.into_bytes())), Some(len))
            }
        };
        if opens {
            return Answer::Once(with_header(answer, "Mcp-Session-Id", &id));
        }
        Answer::Once(answer)
    }

    /// A session for one 2026-07-28 call, kept track of until it ends.
    fn stateless_call(&self) -> Arc<McpSession> {
        let session = Arc::new(McpSession::new(&self.served));
        if let Ok(mut calls) = self.stateless_calls.lock() {
            calls.retain(|call| call.strong_count() > 0);
            calls.push(Arc::downgrade(&session));
        }
        session
    }

    /// Opens a session, ending the least recently used when [`MAX_SESSIONS`] are open.
    fn open_session(&self) -> (String, Arc<McpSession>) {
        let mut bytes = [0u8; 16];
        if getrandom::fill(&mut bytes).is_err() {
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            bytes.copy_from_slice(&nanos.to_le_bytes());
        }
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let session = Arc::new(McpSession::new(&self.served));
        if let Ok(mut sessions) = self.sessions.lock() {
            if sessions.len() >= MAX_SESSIONS {
                let oldest = sessions.iter().min_by_key(|(_, entry)| entry.used).map(|(id, _)| id.clone());
                if let Some(entry) = oldest.and_then(|oldest| sessions.remove(&oldest)) {
                    end(entry.session);
                }
            }
            sessions.insert(id.clone(), Entry { session: Arc::clone(&session), stream: None, used: Instant::now() });
        }
        (id, session)
    }

    /// Opens the session's stream of server messages (replacing an older one); what feeds it.
    fn get(&self, request: &Request) -> Result<Receiver<Value>, Response<Body>> {
        let (id, _) = self.session_of(request)?;
        let (sender, messages) = channel();
        if let Ok(mut sessions) = self.sessions.lock() {
            if let Some(entry) = sessions.get_mut(&id) {
                entry.stream = Some(Outbox::channel(sender));
            }
        }
        Ok(messages)
    }

    fn delete(&self, request: &Request) -> Response<Body> {
        let id = match self.session_of(request) {
            Ok((id, _)) => id,
            Err(response) => return response,
        };
        let removed = self.sessions.lock().ok().and_then(|mut sessions| sessions.remove(&id));
        if let Some(entry) = removed {
            end(entry.session);
        }
        plain(200, "")
    }

    /// Tells every initialized session with an open stream, and every open
    /// `subscriptions/listen` stream, that the tools changed.
    fn list_changed(&self) {
        self.stateless.tools_changed();
        let Ok(mut sessions) = self.sessions.lock() else { return };
        for entry in sessions.values_mut() {
            if !entry.session.is_initialized() {
                continue;
            }
            if let Some(stream) = &entry.stream {
                if stream.notify("notifications/tools/list_changed", json!({})).is_err() {
                    entry.stream = None;
                }
            }
        }
    }
}

/// Ends a session: its calls in flight are cancelled (on a thread of their own: waiting for
/// them never holds a request).
fn end(session: Arc<McpSession>) {
    let _ = std::thread::Builder::new().name("tdm-mcp-end".into()).spawn(move || session.calls.cancel_all_and_wait());
}

/// What a request is answered with: one response, the session's event stream, or a call's.
enum Answer {
    Once(Response<Body>),
    Stream(Receiver<Value>),
    Call(Streamed),
}

/// `message` as one SSE event.
fn sse_event(message: &Value) -> String {
    format!("event: message\ndata: {message}\n\n")
}

/// Whether `message` is the answer to request `id` (not a notification on its way).
fn answers(message: &Value, id: &Value) -> bool {
    message.get("method").is_none() && message["id"] == *id
}

/// The messages of call `id` up to its answer, when that comes within `wait`; else those so far
/// and the rest to come.
fn answered_within(
    messages: Receiver<Value>,
    id: &Value,
    wait: Duration,
) -> Result<Vec<Value>, (Vec<Value>, Receiver<Value>)> {
    let until = Instant::now() + wait;
    let mut early = Vec::new();
    loop {
        match messages.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(message) => {
                let last = answers(&message, id);
                early.push(message);
                if last {
                    return Ok(early);
                }
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(early),
            Err(RecvTimeoutError::Timeout) => return Err((early, messages)),
        }
    }
}

/// Writes a call's messages to `out` as SSE events until its answer; a comment every
/// [`PROBE_EVERY`] while it runs, and when one cannot be written (the client closed the
/// connection) the call is cancelled.
fn stream_call(call: Streamed, out: &mut dyn std::io::Write) {
    let write = |out: &mut dyn std::io::Write, text: &str| out.write_all(text.as_bytes()).and_then(|()| out.flush());
    for message in &call.early {
        if write(out, &sse_event(message)).is_err() {
            call.session.calls.cancel(&call.id);
            return;
        }
    }
    loop {
        let (text, last) = match call.messages.recv_timeout(PROBE_EVERY) {
            Ok(message) => (sse_event(&message), answers(&message, &call.id)),
            Err(RecvTimeoutError::Timeout) => (": running\n\n".to_string(), false),
            Err(RecvTimeoutError::Disconnected) => return,
        };
        if write(out, &text).is_err() {
            call.session.calls.cancel(&call.id);
            return;
        }
        if last {
            return;
        }
    }
}

/// Writes each message of `messages` to `out` as an SSE event, a comment when idle (so a
/// vanished client is noticed), until the session or the client goes.
fn stream_events(messages: &Receiver<Value>, out: &mut dyn std::io::Write) {
    loop {
        let event = match messages.recv_timeout(KEEPALIVE) {
            Ok(message) => sse_event(&message),
            Err(RecvTimeoutError::Timeout) => ": keepalive\n\n".to_string(),
            Err(RecvTimeoutError::Disconnected) => return,
        };
        if out.write_all(event.as_bytes()).and_then(|()| out.flush()).is_err() {
            return;
        }
    }
}
