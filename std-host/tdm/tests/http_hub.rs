//! A hub over HTTP through the built `tdm`: a loopback server serving the bundled hub installs
//! like the folder does, and a hub that redirects elsewhere, answers slowly, endlessly or with
//! 1 GiB is refused within its bounds, leaving the workspace as it was.

#[path = "support/tdm.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{json, repo, stderr, tdm, text};

/// How the server answers a request for `index.json`.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Files,
    RedirectAway,
    Gigabyte,
    Endless,
    Slow,
}

/// A loopback HTTP server serving `root`, answering `index.json` as the mode says.
struct Server {
    url: String,
    mode: Arc<Mutex<Mode>>,
}

fn serve(stream: TcpStream, root: &Path, mode: Mode, port: u16) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/').to_string();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
            break;
        }
    }
    let mut out = stream;
    if path == "index.json" && mode != Mode::Files {
        let _ = match mode {
            Mode::RedirectAway => write!(
                out,
                "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.2:{port}/index.json\r\nContent-Length: 0\r\n\r\n"
            ),
            Mode::Gigabyte => write!(out, "HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n"),
            Mode::Endless => {
                let _ = write!(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
                let chunk = format!("{:x}\r\n{}\r\n", 65536, "x".repeat(65536));
                while out.write_all(chunk.as_bytes()).is_ok() {}
                Ok(())
            }
            Mode::Slow => {
                let _ = write!(out, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
                for _ in 0..1000 {
                    if out.write_all(b"{").and_then(|()| out.flush()).is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
                Ok(())
            }
            Mode::Files => unreachable!(),
        };
        return;
    }
    let file = root.join(percent_decoded(&path));
    match std::fs::read(&file) {
        Ok(bytes) => {
            let _ = write!(out, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", bytes.len());
            let _ = out.write_all(&bytes);
        }
        Err(_) => {
            let _ = write!(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        }
    }
}

fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&path[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Server {
    fn start(root: PathBuf) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(Mutex::new(Mode::Files));
        let shared = Arc::clone(&mode);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, mode) = (root.clone(), *shared.lock().unwrap());
                std::thread::spawn(move || serve(stream, &root, mode, port));
            }
        });
        Self { url: format!("http://127.0.0.1:{port}"), mode }
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }
}

fn key() -> String {
    repo().join("examples/keys/bundled-hub.pub").display().to_string()
}

#[test]
fn an_http_hub_installs_like_a_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let server = Server::start(repo().join("examples/hub"));
    let out = tdm(&ws, &["hub", "add", "web", &server.url, "--key", &key()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = tdm(&ws, &["hub", "list", "web"], b"");
    assert!(text(&out).contains("(verified)") && text(&out).contains("echo"), "{}", text(&out));
    let out = tdm(&ws, &["install", "echo", "--hub", "web", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json(&out)["hub"], "web");
    assert!(tdm(&ws, &["approve", "echo", "--yes"], b"").status.success());
    let out = tdm(&ws, &["call", "echo", "greet", "--params", "{\"n\":1}"], b"");
    assert_eq!(json(&out)["output"]["n"], 1, "{}", text(&out));
    assert!(!std::fs::read_dir(ws.join("packages"))
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with('.')));
}

#[test]
fn a_hub_that_redirects_away_or_answers_too_much_or_too_slowly_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let server = Server::start(repo().join("examples/hub"));
    for (mode, expected) in [
        (Mode::RedirectAway, "another host"),
        (Mode::Gigabyte, "larger than its bound"),
        (Mode::Endless, "larger than its bound"),
        (Mode::Slow, "within 2 s"),
    ] {
        server.set(mode);
        let started = Instant::now();
        let out = tdm(&ws, &["hub", "add", "web", &server.url, "--key", &key(), "--timeout", "2"], b"");
        assert_ne!(out.status.code(), Some(0), "{}", text(&out));
        assert!(stderr(&out).contains(expected), "expected {expected:?}: {}", text(&out));
        assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
        assert!(
            !ws.join("state.json").exists()
                || !std::fs::read_to_string(ws.join("state.json")).unwrap().contains("\"web\"")
        );
    }
    // Plain http:// to another machine is refused before anything is fetched.
    let out = tdm(&ws, &["hub", "add", "far", "http://192.0.2.1/hub", "--key", &key()], b"");
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("https://"), "{}", text(&out));
}
