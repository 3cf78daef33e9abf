//! What `tdm mcp` adds to a call (issue 22's Measure), with the echo plugin installed and
//! approved in a workspace on disk and `greet` asked with a 128 B argument:
//!
//! - the baseline: the same intent through the library, on one warm session in this process;
//! - stdio: one client sending `tools/call` to `tdm mcp --warm` (the release build) and waiting
//!   for each answer: the server's overhead is its time per call less the baseline's, and less
//!   the transport's floor: the same line sent to `cat` and read back (two processes waking
//!   each other, which no server can avoid);
//! - HTTP: 8 clients on loopback, each on its own keep-alive connection, sending 2026-07-28
//!   `tools/call` requests to `tdm mcp --http` for a few seconds, with fresh instances (the
//!   default) and with `--warm`: calls per second, against the baseline's calls per second on
//!   one thread.
//!
//! `make bench` builds `tdm` and runs it; it writes `target/mcp_calls.json`.

use contour_benches::installed::{InstalledFixture, INSTALLED_ID};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tdm_sdk::params::Params;
use tdm_sdk::session::{Request, Session, SessionOptions};

const ROUNDS: usize = 15;
const CALLS_PER_ROUND: usize = 200;
const HTTP_CLIENTS: usize = 8;
const HTTP_SECONDS: u64 = 3;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn tool() -> String {
    format!("{INSTALLED_ID}__greet")
}

fn arguments() -> Value {
    json!({"name": "x".repeat(100)})
}

/// `tdm mcp ARGS` on the fixture's workspace.
fn server(tdm: &Path, fixture: &InstalledFixture, args: &[&str]) -> Child {
    Command::new(tdm)
        .arg("mcp")
        .args(args)
        .env("TDM_WORKSPACE", &fixture.workspace.dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", tdm.display()))
}

/// The baseline: per call and calls per second on one warm session.
fn library(fixture: &InstalledFixture) -> Duration {
    let mut session = Session::open_installed(&fixture.workspace, INSTALLED_ID, SessionOptions::default())
        .unwrap_or_else(|e| panic!("echo opens: {e}"));
    let params = Params::from_text(&arguments().to_string()).expect("JSON");
    let request = Request::Intent { method: "greet".into(), params };
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            let ran = session.run(&request).unwrap_or_else(|e| panic!("greet runs: {e}"));
            assert!(ran.report.outcome.is_completed(), "{}", ran.report.outcome.json);
        }
        rounds.push(start.elapsed() / CALLS_PER_ROUND as u32);
    }
    median(rounds)
}

/// Per call over stdio, one client, the plugin warm.
fn stdio(tdm: &Path, fixture: &InstalledFixture) -> Duration {
    let mut child = server(tdm, fixture, &["--warm", INSTALLED_ID]);
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut ask = |id: u64, method: &str, params: Value| {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(input, "{message}").expect("the server reads");
        loop {
            line.clear();
            assert!(output.read_line(&mut line).expect("the server answers") > 0, "the server ended");
            let answer: Value = serde_json::from_str(&line).expect("JSON");
            if answer["id"] == id {
                assert!(answer.get("result").is_some(), "{answer}");
                return answer;
            }
        }
    };
    let init =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}});
    ask(0, "initialize", init);
    let call = json!({"name": tool(), "arguments": arguments()});
    let mut id = 1;
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            let answer = ask(id, "tools/call", call.clone());
            assert_eq!(answer["result"]["isError"], false, "{answer}");
            id += 1;
        }
        rounds.push(start.elapsed() / CALLS_PER_ROUND as u32);
    }
    drop(input);
    let _ = child.wait();
    median(rounds)
}

/// Per round trip of the same line through `cat`: the floor of any server over pipes.
fn pipe_floor() -> Duration {
    let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("cat runs");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool(), "arguments": arguments()}});
    let mut back = String::new();
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            writeln!(input, "{line}").expect("cat reads");
            back.clear();
            output.read_line(&mut back).expect("cat answers");
        }
        rounds.push(start.elapsed() / CALLS_PER_ROUND as u32);
    }
    drop(input);
    let _ = child.wait();
    median(rounds)
}

/// Calls per second over HTTP from [`HTTP_CLIENTS`] clients.
fn http(tdm: &Path, fixture: &InstalledFixture, warm: bool) -> f64 {
    let mut args = vec!["--http", "127.0.0.1:0"];
    if warm {
        args.extend(["--warm", INSTALLED_ID]);
    }
    let mut child = server(tdm, fixture, &args);
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("the server says where it listens");
    let url = line.trim().rsplit(" at ").next().unwrap_or_default().to_string();
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool(), "arguments": arguments(), "_meta": meta}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..HTTP_CLIENTS)
        .map(|_| {
            let (stop, done, request, address) =
                (Arc::clone(&stop), Arc::clone(&done), request.clone(), address.clone());
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(&address).expect("the server accepts");
                stream.set_nodelay(true).expect("nodelay");
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                while !stop.load(Ordering::Relaxed) {
                    stream.write_all(request.as_bytes()).expect("the server reads");
                    let mut length = 0;
                    loop {
                        let mut header = String::new();
                        reader.read_line(&mut header).expect("the server answers");
                        if header == "\r\n" || header.is_empty() {
                            break;
                        }
                        if let Some((name, value)) = header.split_once(':') {
                            if name.eq_ignore_ascii_case("content-length") {
                                length = value.trim().parse().expect("a length");
                            }
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).expect("the body");
                    let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    if answer["result"]["isError"] != false {
                        eprintln!("an HTTP call failed: {answer}");
                        return;
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let (start, before) = (Instant::now(), done.load(Ordering::Relaxed));
    std::thread::sleep(Duration::from_secs(HTTP_SECONDS));
    let calls = done.load(Ordering::Relaxed) - before;
    let rate = calls as f64 / start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        let _ = client.join();
    }
    let _ = child.kill();
    let _ = child.wait();
    rate
}

fn main() {
    let tdm = contour_benches::target_dir().join("release/tdm");
    assert!(tdm.is_file(), "{} is missing: `cargo build --release -p tdm` (make bench does)", tdm.display());
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/echo/echo.wat");
    let echo = wat::parse_file(&echo).unwrap_or_else(|e| panic!("{}: {e}", echo.display()));
    let fixture = InstalledFixture::declaring(&echo, &["greet"]);
    let baseline = library(&fixture);
    let over_stdio = stdio(&tdm, &fixture);
    let floor = pipe_floor();
    let fresh_rate = http(&tdm, &fixture, false);
    let warm_rate = http(&tdm, &fixture, true);
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let library_rate = 1.0 / baseline.as_secs_f64();
    let overhead = over_stdio.saturating_sub(baseline).saturating_sub(floor);
    println!("echo greet, 128 B argument:");
    println!("  library, warm session          {:>9.1} us per call  1.00x", us(baseline));
    println!("  a line through cat (the floor) {:>9.1} us per round trip", us(floor));
    println!(
        "  tdm mcp over stdio, warm       {:>9.1} us per call  {:.2}x  (the server's own {:.1} us)",
        us(over_stdio),
        over_stdio.as_secs_f64() / baseline.as_secs_f64(),
        us(overhead)
    );
    println!("  library, one thread            {library_rate:>9.0} calls/s  1.00x");
    println!(
        "  HTTP, {HTTP_CLIENTS} clients, fresh instances {fresh_rate:>7.0} calls/s  {:.2}x",
        fresh_rate / library_rate
    );
    println!("  HTTP, {HTTP_CLIENTS} clients, --warm      {warm_rate:>9.0} calls/s  {:.2}x", warm_rate / library_rate);
    let json = json!({
        "library_us": us(baseline),
        "stdio_us": us(over_stdio),
        "pipe_floor_us": us(floor),
        "stdio_overhead_us": us(overhead),
        "library_calls_per_s": library_rate,
        "http_fresh_calls_per_s": fresh_rate,
        "http_warm_calls_per_s": warm_rate,
        "http_clients": HTTP_CLIENTS,
    });
    let out = contour_benches::target_dir().join("mcp_calls.json");
    if let Err(e) = std::fs::write(&out, json.to_string()) {
        eprintln!("{}: {e}", out.display());
    }
}
