//! A minimal HTTP/1.1 server on 127.0.0.1 for the `net.fetch` tests: it answers a bounded
//! number of connections with scripted replies and records what it received. A reply can
//! reflect the request: in its header names and values and its body, `{REQUEST}` becomes the
//! request as received, `{AUTH}` the value of its `Authorization` header, `{TOKEN}` that value
//! without `Bearer `, and `{TOKEN_PCT}` the token percent-encoded.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One scripted reply.
#[derive(Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub delay: Duration,
    /// Leave out `Content-Length` (the body then runs to the end of the connection).
    pub no_length: bool,
}

impl Reply {
    /// A 200 with `body` as text/plain.
    pub fn ok(body: &str) -> Self {
        Self {
            status: 200,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: body.into(),
            delay: Duration::ZERO,
            no_length: false,
        }
    }

    /// A 302 to `location`.
    pub fn redirect(location: &str) -> Self {
        Self {
            status: 302,
            headers: vec![("Location".into(), location.into())],
            body: Vec::new(),
            delay: Duration::ZERO,
            no_length: false,
        }
    }
}

/// A running server.
pub struct Server {
    /// Its port on 127.0.0.1.
    pub port: u16,
    requests: Arc<Mutex<Vec<String>>>,
    _thread: JoinHandle<()>,
}

impl Server {
    /// Serves `replies` in order, one per connection, for at most 20 s.
    pub fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let thread = std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(20);
            let mut replies = replies.into_iter();
            let Some(mut next) = replies.next() else { return };
            while Instant::now() < until {
                match listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        serve_one(stream, &next, &seen);
                        match replies.next() {
                            Some(reply) => next = reply,
                            None => return,
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self { port, requests, _thread: thread }
    }

    /// `http://HOST:PORT/PATH` for this server.
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    /// Every request received so far, as text.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve_one(mut stream: TcpStream, reply: &Reply, seen: &Mutex<Vec<String>>) {
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    // Headers, then a Content-Length body.
    let header_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => {
                seen.lock().unwrap().push(String::from_utf8_lossy(&data).into_owned());
                return;
            }
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&data[..header_end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while data.len() < header_end + length {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
    let request = String::from_utf8_lossy(&data).into_owned();
    seen.lock().unwrap().push(request.clone());
    let reflect = Reflection::of(&request);
    std::thread::sleep(reply.delay);
    let body = reflect.bytes(&reply.body);
    let mut out = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", reply.status);
    if !reply.no_length {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (name, value) in &reply.headers {
        out.push_str(&format!("{}: {}\r\n", reflect.text(name), reflect.text(value)));
    }
    out.push_str("\r\n");
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.write_all(&body);
    let _ = stream.flush();
}

/// What a reply may reflect of the request it answers.
struct Reflection {
    request: String,
    auth: String,
}

impl Reflection {
    fn of(request: &str) -> Self {
        let auth = request
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("authorization").then(|| value.trim().to_string())
            })
            .unwrap_or_default();
        Self { request: request.to_string(), auth }
    }

    fn text(&self, template: &str) -> String {
        let token = self.auth.strip_prefix("Bearer ").unwrap_or(&self.auth);
        let pct: String = token
            .bytes()
            .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect();
        template
            .replace("{REQUEST}", &self.request)
            .replace("{AUTH}", &self.auth)
            .replace("{TOKEN_PCT}", &pct)
            .replace("{TOKEN}", token)
    }

    fn bytes(&self, template: &[u8]) -> Vec<u8> {
        match std::str::from_utf8(template) {
            Ok(text) if text.contains('{') => self.text(text).into_bytes(),
            _ => template.to_vec(),
        }
    }
}
