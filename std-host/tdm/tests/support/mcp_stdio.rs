//! A `tdm mcp` session over pipes, as the stdio tests drive it: every wait bounded by
//! [`PATIENCE`], so a server that hangs fails the test.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// The longest any wait lasts.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// A `tdm mcp` session over pipes.
pub struct Mcp {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub messages: Receiver<Value>,
    /// Every message received so far.
    pub seen: std::cell::RefCell<Vec<Value>>,
}

impl Mcp {
    pub fn start(ws: &Path, flags: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tdm"))
            .arg("mcp")
            .args(flags)
            .env("TDM_WORKSPACE", ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tdm mcp starts");
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let line = line.expect("stdout is UTF-8");
                let value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                if sender.send(value).is_err() {
                    return;
                }
            }
        });
        Self { stdin: child.stdin.take(), child, messages, seen: Default::default() }
    }

    /// A started session, initialized at the newest revision.
    pub fn initialized(ws: &Path, flags: &[&str]) -> Self {
        let mut mcp = Self::start(ws, flags);
        let answer = mcp.request(0, "initialize", initialize("2025-11-25"));
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{answer}");
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        mcp
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send_request(&mut self, id: impl Into<Value>, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}).to_string());
    }

    /// The next message that `matches`, within the patience (others are dropped).
    pub fn wait_for(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let left = PATIENCE.checked_sub(start.elapsed()).unwrap_or_else(|| panic!("no {what} within {PATIENCE:?}"));
            let message = self.messages.recv_timeout(left).unwrap_or_else(|_| panic!("no {what} within {PATIENCE:?}"));
            self.seen.borrow_mut().push(message.clone());
            if matches(&message) {
                return message;
            }
        }
    }

    /// The answer to request `id`.
    pub fn answer(&self, id: impl Into<Value>) -> Value {
        let id = id.into();
        self.wait_for(&format!("answer to {id}"), |m| m["id"] == id && m.get("method").is_none())
    }

    pub fn request(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        self.send_request(id.clone(), method, params);
        self.answer(id)
    }

    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.request(id, "tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// Closes stdin and waits for the exit code (within the patience).
    pub fn close(self) -> (Option<i32>, Vec<Value>) {
        let (code, rest, _) = self.close_and_see();
        (code, rest)
    }

    /// [`Mcp::close`], with every message the session sent.
    pub fn close_and_see(mut self) -> (Option<i32>, Vec<Value>, Vec<Value>) {
        drop(self.stdin.take());
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > PATIENCE {
                let _ = self.child.kill();
                panic!("tdm mcp did not exit after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let rest: Vec<Value> = std::iter::from_fn(|| self.messages.recv_timeout(Duration::from_secs(2)).ok()).collect();
        let mut seen = self.seen.take();
        seen.extend(rest.iter().cloned());
        (status.code(), rest, seen)
    }
}

pub fn initialize(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "mcp-test", "version": "1"}})
}

pub fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {answer}"))
}
