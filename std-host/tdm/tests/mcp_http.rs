//! `tdm mcp --http` through the built binary, spoken to in raw HTTP/1.1 as a browser page, a
//! stranger on the network or a careless client would: loopback unless a token is given, a
//! foreign Origin refused (DNS rebinding), the token checked, a body over the bound refused from
//! its length, sessions opened, used, listed to, ended and bounded in number.

#[path = "support/tdm.rs"]
mod support;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use support::{install_approved, package, repo, tdm, text};

/// `tdm mcp --http 127.0.0.1:0 EXTRA...` on `ws`; the process and the port it bound.
fn start(ws: &Path, extra: &[&str]) -> (Child, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .args(["mcp", "--http", "127.0.0.1:0"])
        .args(extra)
        .env("TDM_WORKSPACE", ws)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdm mcp starts");
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let port = line.trim().rsplit(':').next().and_then(|p| p.trim_end_matches("/mcp").parse().ok());
    (child, port.unwrap_or_else(|| panic!("no port in {line:?}")))
}

/// One request; the status, the headers (lower-case names) and the body.
fn http(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut request = format!("{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers = lines.filter_map(|l| l.split_once(": ")).map(|(n, v)| (n.to_lowercase(), v.to_string())).collect();
    (status, headers, body.to_string())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}).to_string()
}

/// Opens a session; its id.
fn open(port: u16, auth: &[(&str, &str)]) -> String {
    let (status, headers, body) = http(port, "POST", auth, &initialize());
    assert_eq!(status, 200, "{body}");
    header(&headers, "mcp-session-id").unwrap_or_else(|| panic!("no session id: {headers:?}")).to_string()
}

fn workspace(dir: &Path) -> std::path::PathBuf {
    let ws = dir.join("ws");
    let echo = std::fs::read_to_string(repo().join("examples/echo/echo.wat")).unwrap();
    install_approved(&ws, &package(dir, "echo-pkg", "echo", &echo, &[("greet", "Returns its params.")], ""));
    ws
}

#[test]
fn another_address_needs_a_token_and_the_refusal_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = tdm(dir.path(), &["mcp", "--http", "0.0.0.0:0"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--token-file"), "{}", text(&out));
    let short = support::write(dir.path(), "short.txt", "abc\n");
    let out = tdm(dir.path(), &["mcp", "--http", "0.0.0.0:0", "--token-file", &short], b"");
    assert_eq!(out.status.code(), Some(2), "a guessable token is refused: {}", text(&out));
}

#[test]
fn origin_token_size_and_session_are_checked_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let token = "s3cret-token-0123456789";
    let file = support::write(dir.path(), "token.txt", format!("{token}\n"));
    let (mut child, port) = start(&ws, &["--token-file", &file]);
    let auth = format!("Bearer {token}");
    let good = [("Authorization", auth.as_str())];
    // No token, a wrong one: 401, whatever the body.
    assert_eq!(http(port, "POST", &[], &initialize()).0, 401);
    assert_eq!(http(port, "POST", &[("Authorization", "Bearer s3cret-token-0123456788")], &initialize()).0, 401);
    // A page of another origin (DNS rebinding) is refused even with the token.
    let foreign = [("Authorization", auth.as_str()), ("Origin", "http://evil.example")];
    assert_eq!(http(port, "POST", &foreign, &initialize()).0, 403);
    let own_origin = format!("http://127.0.0.1:{port}");
    let own = [("Authorization", auth.as_str()), ("Origin", own_origin.as_str())];
    assert_eq!(http(port, "POST", &own, &initialize()).0, 200, "the server's own origin is fine");
    // A body over 4 MiB is refused from its length; a request without or with an unknown
    // session is refused; an unknown protocol version header too.
    let big = "x".repeat(5 * 1024 * 1024);
    assert_eq!(http(port, "POST", &good, &big).0, 413);
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    assert_eq!(http(port, "POST", &good, &ping).0, 400);
    let unknown = [("Authorization", auth.as_str()), ("Mcp-Session-Id", "0123")];
    assert_eq!(http(port, "POST", &unknown, &ping).0, 404);
    let session = open(port, &good);
    let with = [("Authorization", auth.as_str()), ("Mcp-Session-Id", session.as_str())];
    let old = [
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "1999-01-01"),
    ];
    assert_eq!(http(port, "POST", &old, &ping).0, 400);
    // Bad JSON is a JSON-RPC error, and the session goes on.
    let (status, _, body) = http(port, "POST", &with, "{not json");
    assert_eq!((status, serde_json::from_str::<Value>(&body).unwrap()["error"]["code"].as_i64()), (400, Some(-32700)));
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo__greet", "arguments": {"n": 1}}});
    let (status, _, body) = http(port, "POST", &with, &call.to_string());
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["result"]["structuredContent"]["n"], 1, "{body}");
    // DELETE ends the session.
    assert_eq!(http(port, "DELETE", &with, "").0, 200);
    assert_eq!(http(port, "POST", &with, &ping).0, 404);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn abandoned_sessions_are_bounded_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let (mut child, port) = start(&ws, &[]);
    let first = open(port, &[]);
    for _ in 0..1000 {
        open(port, &[]);
    }
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    // The first of 1,001 sessions was ended to keep 256; the newest serves.
    assert_eq!(http(port, "POST", &[("Mcp-Session-Id", first.as_str())], &ping).0, 404);
    let last = open(port, &[]);
    let (status, _, body) = http(port, "POST", &[("Mcp-Session-Id", last.as_str())], &ping);
    assert_eq!((status, body.contains("\"result\":{}")), (200, true), "{body}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn the_session_stream_says_when_the_tools_change() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let (mut child, port) = start(&ws, &[]);
    let session = open(port, &[]);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    );
    stream.write_all(get.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.contains(" 200 "), "{status}");
    std::thread::sleep(Duration::from_millis(300));
    let out = tdm(&ws, &["revoke", "echo"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut seen = String::new();
    while !seen.contains("notifications/tools/list_changed") {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended: {seen}");
        seen.push_str(&line);
    }
    child.kill().unwrap();
    child.wait().unwrap();
}
