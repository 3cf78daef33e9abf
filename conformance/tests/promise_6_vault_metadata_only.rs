//! Promise 6: `vault:read` yields only non-secret metadata and policy state, never a secret's
//! value.
//!
//! Through the real std-host vault (`tdm_sdk::intents::StdIntents`): the `forward` fixture
//! turns its params into one host call and answers with the host's whole response, so its
//! outcome holds every byte the host handed the plugin. The secret's value is searched for in
//! that outcome, the plugin's captured stdout and stderr, the host's log lines and the audit
//! log, after a plain `vault.read`, after placeholders put where the host does not fill them in,
//! and after a server the secret may go to reflects it back.

use contour_conformance::{fixture, load, SEED};
use contour_core::{IntentReport, Permissions, Policy, Sandbox, VirtualEnvironment};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tdm_sdk::intents::{audit, context, dist, log, net, tool, vault, Notices, PluginIdentity, StdIntents};

const SECRET: &str = "sk-live-0d1e2a3d-PROMISE-SIX";
/// A piece of the value that every plain or escaped form of it keeps.
const SECRET_CORE: &str = "0d1e2a3d";

/// One plugin's sandbox on the std host, with a vault holding `API_KEY` (allowed to go to
/// 127.0.0.1 only) and its log lines and audit log kept for searching.
struct Host {
    sandbox: Sandbox,
    log_lines: Notices,
    audit_path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Host {
    fn new(grants: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let vault_path = dir.path().join("vault.json");
        let vault_json = json!({"secrets": {"API_KEY": {
            "value": SECRET, "created": "2026-01-01T00:00:00Z", "allowedHosts": ["127.0.0.1"],
        }}});
        std::fs::write(&vault_path, vault_json.to_string()).expect("the vault is written");
        let grants = Permissions::parse_all(grants.iter().copied()).unwrap_or_else(|e| panic!("{e}"));
        let log_lines = Notices::default();
        let audit_path = dir.path().join("audit.jsonl");
        let intents = StdIntents {
            identity: PluginIdentity { id: "forward".into(), hash: "0".repeat(64) },
            dist: dist::Dist::new(None, 1 << 20),
            log: log::Log::new(100, 1 << 16).with_sink(Arc::clone(&log_lines)),
            net: net::Net::new(1 << 16),
            vault: vault::Vault::load(Some(&vault_path)).expect("the vault loads"),
            context: context::Context::load(None).expect("no context"),
            tools: tool::Tools::default(),
            audit: audit::AuditLog::new(Some(audit_path.clone())),
            grants: grants.clone(),
        };
        let plugin = load(&fixture("forward"), Policy::default());
        let sandbox =
            Sandbox::new(plugin, Box::new(VirtualEnvironment::new(SEED))).with_host(Box::new(intents), grants);
        Self { sandbox, log_lines, audit_path, _dir: dir }
    }

    /// Runs one host call; returns the host's answer, after checking that no byte the plugin
    /// or the operator's logs saw holds the value.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let report =
            self.sandbox.execute("forward", &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
        assert!(report.outcome.is_completed(), "the plugin must keep running: {}", report.outcome.json);
        self.assert_no_trace(&report);
        let outcome: Value = serde_json::from_str(&report.outcome.json).expect("the outcome is JSON");
        outcome["output"].clone()
    }

    /// The log lines so far, as tdm prints them (before escaping).
    fn logged(&self) -> String {
        self.log_lines.lock().expect("not poisoned").iter().map(|line| format!("{line}\n")).collect()
    }

    fn assert_no_trace(&self, report: &IntentReport) {
        let log_lines = self.logged().into_bytes();
        let observed = [
            ("outcome", report.outcome.json.clone().into_bytes()),
            ("stdout", report.stdout.clone()),
            ("stderr", report.stderr.clone()),
            ("log", log_lines),
            ("audit log", std::fs::read(&self.audit_path).unwrap_or_default()),
        ];
        for (place, bytes) in observed {
            let text = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
            assert!(!text.contains(&SECRET.to_ascii_lowercase()), "{place} holds the value: {text}");
            assert!(!text.contains(SECRET_CORE), "{place} holds part of the value: {text}");
        }
    }
}

#[test]
fn vault_read_yields_metadata_and_policy_state_only() {
    let mut host = Host::new(&["vault:read"]);
    let answer = host.call("vault.read", json!({"name": "API_KEY"}));
    assert_eq!(
        answer,
        json!({"status": "completed", "output": {"name": "API_KEY", "exists": true,
            "created": "2026-01-01T00:00:00Z", "lastRotated": null, "allowedHosts": ["127.0.0.1"]}})
    );
    // Asking for more than the name changes nothing.
    let answer = host.call("vault.read", json!({"name": "API_KEY", "field": "value", "reveal": true}));
    assert_eq!(answer["output"]["exists"], true, "{answer}");
    assert!(answer["output"].get("value").is_none(), "{answer}");
    let answer = host.call("vault.read", json!({"name": "MISSING"}));
    assert_eq!(answer["output"]["exists"], false, "{answer}");
}

#[test]
fn placeholders_are_filled_in_nowhere_the_plugin_can_read() {
    let mut host = Host::new(&["vault:read", "context:read"]);
    let placeholder = "{{vault:API_KEY}}";
    host.call("log", json!({"level": "info", "message": placeholder}));
    host.call("context.read", json!({"key": placeholder}));
    host.call("dist.read", json!({"path": placeholder}));
    host.call("vault.read", json!({"name": placeholder}));
    let logged = host.logged();
    assert!(logged.contains(placeholder), "the log line keeps the placeholder as written: {logged}");
}

/// A one-connection HTTP server on 127.0.0.1 that answers with the request it received, in its
/// body and (the `Authorization` header) in a response header. Returns its port and the
/// requests it received.
fn echo_server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.set_nonblocking(true).expect("nonblocking accept");
    let port = listener.local_addr().expect("bound").port();
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&received);
    std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until {
            let Ok((mut stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let request = String::from_utf8_lossy(&request).into_owned();
            let auth = request
                .lines()
                .find_map(|line| line.strip_prefix("authorization: ").or_else(|| line.strip_prefix("Authorization: ")))
                .unwrap_or("")
                .to_string();
            seen.lock().expect("not poisoned").push(request.clone());
            let reply = format!(
                "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: {}\r\nX-Echo: {auth}\r\n\r\n{request}",
                request.len()
            );
            let _ = stream.write_all(reply.as_bytes());
            return;
        }
    });
    (port, received)
}

#[test]
fn a_secret_reflected_by_its_allowed_host_does_not_come_back() {
    let (port, received) = echo_server();
    let mut host = Host::new(&["vault:read", "network:127.0.0.1"]);
    let answer = host.call(
        "net.fetch",
        json!({"url": format!("http://127.0.0.1:{port}/echo"), "headers": {"Authorization": "Bearer {{vault:API_KEY}}"}}),
    );
    assert_eq!(answer["status"], "completed", "{answer}");
    assert_eq!(answer["output"]["headers"]["x-echo"], "Bearer [redacted:API_KEY]", "{answer}");
    let requests = received.lock().expect("not poisoned").clone();
    assert!(requests[0].contains(&format!("Bearer {SECRET}\r\n")), "the server was sent the value: {requests:?}");
}

/// The audit log records decisions, never values: checked on the file itself, line by line.
#[test]
fn the_audit_log_records_the_decisions_without_values() {
    let mut host = Host::new(&["vault:read"]);
    host.call("vault.read", json!({"name": "API_KEY"}));
    host.call("net.fetch", json!({"url": "http://127.0.0.1:9/", "headers": {"X": "{{vault:API_KEY}}"}}));
    let audit = std::fs::read_to_string(&host.audit_path).expect("the audit log was written");
    let lines: Vec<Value> = audit.lines().map(|l| serde_json::from_str(l).expect("JSON lines")).collect();
    assert_eq!(lines.len(), 2, "{audit}");
    assert_eq!((lines[0]["method"].as_str(), lines[0]["granted"].as_bool()), (Some("vault.read"), Some(true)));
    assert_eq!((lines[1]["method"].as_str(), lines[1]["granted"].as_bool()), (Some("net.fetch"), Some(false)));
}
