//! `net.fetch` and `vault.read` end to end: the real sandbox runs `fixtures/forward.wat`, which
//! forwards its params as one host call, against a loopback HTTP server started by each test.

#[path = "support/http_server.rs"]
mod http_server;

use contour_core::{Environment, IntentReport, Permissions, Plugin, Policy, Sandbox, VirtualEnvironment};
use http_server::{Reply, Server};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tdm_sdk::intents::{audit, context, dist, log, net, tool, vault, PluginIdentity, StdIntents};
use tdm_sdk::SeededEnvironment;

const SECRET: &str = "sk-live-7f3a9c1e-TOP-SECRET";
const BODY_CAP: u64 = 4096;

// ---------------------------------------------------------------------------------------------
// The sandbox.

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures").join(name)
}

fn forward_plugin(policy: Policy) -> Arc<Plugin> {
    let wasm = wat::parse_file(fixture("forward.wat")).unwrap();
    Arc::new(Plugin::load(&wasm, policy).unwrap())
}

struct Setup {
    grants: Vec<&'static str>,
    vault: vault::Vault,
    policy: Policy,
    real_deadline: bool,
    audit: Option<PathBuf>,
}

impl Setup {
    fn new(grants: &[&'static str]) -> Self {
        Self {
            grants: grants.to_vec(),
            vault: vault::Vault::default(),
            policy: Policy::default(),
            real_deadline: false,
            audit: None,
        }
    }

    fn sandbox(self) -> Sandbox {
        let grants = Permissions::parse_all(self.grants.iter().copied()).unwrap();
        let intents = StdIntents {
            identity: PluginIdentity { id: "forward".into(), hash: "0".repeat(64) },
            dist: dist::Dist::new(None, 1 << 20),
            log: log::Log::new(100, 65536),
            net: net::Net::new(BODY_CAP),
            vault: self.vault,
            context: context::Context::load(None).unwrap(),
            tools: tool::Tools::default(),
            audit: audit::AuditLog::new(self.audit),
            grants: grants.clone(),
        };
        let env: Box<dyn Environment> =
            if self.real_deadline { Box::new(SeededEnvironment::new(1)) } else { Box::new(VirtualEnvironment::new(1)) };
        Sandbox::new(forward_plugin(self.policy), env).with_host(Box::new(intents), grants)
    }
}

/// Runs the `forward` intent with `host_request` and returns the report and the host's outcome.
fn forward(sandbox: &mut Sandbox, host_request: Value) -> (IntentReport, Value) {
    let report = sandbox.execute("forward", &host_request);
    assert!(report.outcome.is_completed(), "the plugin must still answer: {}", report.outcome.json);
    let outcome: Value = serde_json::from_str(&report.outcome.json).unwrap();
    let host = outcome["output"].clone();
    (report, host)
}

fn fetch(sandbox: &mut Sandbox, params: Value) -> (IntentReport, Value) {
    forward(sandbox, json!({"jsonrpc": "2.0", "id": 1, "method": "net.fetch", "params": params}))
}

fn assert_failed(host: &Value, reason: &str) {
    assert_eq!(host["status"], "failed", "{host}");
    assert_eq!(host["blockedReason"], reason, "{host}");
}

fn vault_with(allowed_hosts: &[&str]) -> vault::Vault {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vault.json");
    let text = json!({"secrets": {"API_KEY": {
        "value": SECRET,
        "created": "2026-01-01T00:00:00Z",
        "rotated": "2026-06-01T00:00:00Z",
        "allowedHosts": allowed_hosts,
    }}});
    std::fs::write(&path, text.to_string()).unwrap();
    vault::Vault::load(Some(&path)).unwrap()
}

// ---------------------------------------------------------------------------------------------
// net.fetch

#[test]
fn fetch_to_granted_host_returns_status_headers_and_body() {
    let server = Server::start(vec![Reply { status: 201, ..Reply::ok("hello from the server") }]);
    let mut sandbox = Setup::new(&["network:127.0.0.1"]).sandbox();
    let (_, host) = fetch(&mut sandbox, json!({"url": server.url("127.0.0.1", "/hello?x=1")}));
    assert_eq!(host["status"], "completed", "{host}");
    assert_eq!(host["output"]["status"], 201);
    assert_eq!(host["output"]["body"], "hello from the server");
    assert_eq!(host["output"]["headers"]["content-type"], "text/plain");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].starts_with("GET /hello?x=1 HTTP/1.1\r\n"), "{}", requests[0]);
    // A scheme in capitals is the same scheme (RFC 3986), for the check and the client alike.
    let server = Server::start(vec![Reply::ok("shouted")]);
    let url = server.url("127.0.0.1", "/").replacen("http://", "HTTP://", 1);
    let (_, host) = fetch(&mut sandbox, json!({ "url": url }));
    assert_eq!(host["output"]["body"], "shouted", "{host}");
}

#[test]
fn fetch_sends_method_headers_and_body() {
    let server = Server::start(vec![Reply::ok("created")]);
    let mut sandbox = Setup::new(&["network:127.0.0.1"]).sandbox();
    let (_, host) = fetch(
        &mut sandbox,
        json!({"url": server.url("127.0.0.1", "/items"), "method": "post",
               "headers": {"X-Trace": "abc", "Content-Type": "application/json"}, "body": "{\"a\":1}"}),
    );
    assert_eq!(host["status"], "completed", "{host}");
    let request = &server.requests()[0];
    assert!(request.starts_with("POST /items HTTP/1.1\r\n"), "{request}");
    assert!(request.to_ascii_lowercase().contains("x-trace: abc"), "{request}");
    assert!(request.ends_with("{\"a\":1}"), "{request}");
}

#[test]
fn fetch_to_ungranted_host_is_denied_and_the_plugin_keeps_answering() {
    let server = Server::start(vec![Reply::ok("must not be reached")]);
    let mut sandbox = Setup::new(&["network:example.com"]).sandbox();
    let (_, host) = fetch(&mut sandbox, json!({"url": server.url("127.0.0.1", "/")}));
    assert_failed(&host, "permission_denied");
    assert!(host["message"].as_str().unwrap().contains("network:127.0.0.1"), "{host}");
    // The same sandbox goes on serving intents.
    let (_, again) = fetch(&mut sandbox, json!({"url": "https://example.com:1/", "method": "BAD METHOD"}));
    assert_failed(&again, "invalid_host_request");
    assert!(server.requests().is_empty());
}

#[test]
fn a_grant_for_localhost_does_not_cover_127_0_0_1() {
    let server = Server::start(vec![Reply::ok("must not be reached")]);
    let mut sandbox = Setup::new(&["network:localhost"]).sandbox();
    let (_, host) = fetch(&mut sandbox, json!({"url": server.url("127.0.0.1", "/")}));
    assert_failed(&host, "permission_denied");
    assert!(server.requests().is_empty());
}

#[test]
fn grants_are_per_host_not_per_port() {
    let other = Server::start(vec![Reply::ok("other port")]);
    let mut sandbox = Setup::new(&["network:127.0.0.1"]).sandbox();
    // Another port under an ungranted host name is refused before anything is sent...
    let (_, host) = fetch(&mut sandbox, json!({"url": other.url("localhost", "/")}));
    assert_failed(&host, "permission_denied");
    assert!(other.requests().is_empty());
    // ...while any port of the granted host is allowed.
    let (_, host) = fetch(&mut sandbox, json!({"url": other.url("127.0.0.1", "/")}));
    assert_eq!(host["output"]["body"], "other port", "{host}");
}

#[test]
fn non_http_urls_and_host_headers_are_refused() {
    let mut sandbox = Setup::new(&["network:127.0.0.1"]).sandbox();
    let (_, host) = fetch(&mut sandbox, json!({"url": "file:///etc/passwd"}));
    assert_failed(&host, "invalid_host_request");
    let (_, host) =
        fetch(&mut sandbox, json!({"url": "http://127.0.0.1:9/", "headers": {"Host": "internal.example.com"}}));
    assert_failed(&host, "invalid_host_request");
}

#[test]
fn a_redirect_to_an_ungranted_host_is_refused_before_connecting() {
    let second = Server::start(vec![Reply::ok("must not be reached")]);
    let first = Server::start(vec![Reply::redirect(&second.url("localhost", "/stolen"))]);
    let mut sandbox = Setup::new(&["network:127.0.0.1"]).sandbox();
    let (_, host) = fetch(&mut sandbox, json!({"url": first.url("127.0.0.1", "/")}));
    assert_failed(&host, "permission_denied");
    assert!(host["message"].as_str().unwrap().contains("localhost"), "{host}");
    assert_eq!(first.requests().len(), 1);
    assert!(second.requests().is_empty(), "{:?}", second.requests());
    // The grant it names is one `--grant` takes: an IPv6 address in brackets.
    let first = Server::start(vec![Reply::redirect("http://[::1]:1/x")]);
    let (_, host) = fetch(&mut sandbox, json!({"url": first.url("127.0.0.1", "/")}));
    assert_failed(&host, "permission_denied");
    assert!(host["message"].as_str().unwrap().contains("which needs `network:[::1]`"), "{host}");
    assert!(contour_core::Permission::parse("network:[::1]").is_ok());
}

#[test]
fn redirects_within_granted_hosts_are_followed_by_hand() {
    let second = Server::start(vec![Reply::ok("arrived")]);
    let first = Server::start(vec![Reply::redirect(&second.url("localhost", "/final"))]);
    let mut sandbox = Setup::new(&["network:127.0.0.1", "network:localhost"]).sandbox();
    let (_, host) = fetch(&mut sandbox, json!({"url": first.url("127.0.0.1", "/start")}));
    assert_eq!(host["status"], "completed", "{host}");
    assert_eq!(host["output"]["status"], 200);
    assert_eq!(host["output"]["body"], "arrived");
    assert!(second.requests()[0].starts_with("GET /final HTTP/1.1\r\n"));
}

#[test]
fn relative_redirects_stay_on_the_host_and_are_bounded() {
    let server = Server::start(vec![Reply::redirect("/b"), Reply::redirect("c"), Reply::ok("done")]);
    let mut sandbox = Setup::new(&["network:127.0.0.1"]).sandbox();
    let (_, host) = fetch(&mut sandbox, json!({"url": server.url("127.0.0.1", "/a")}));
    assert_eq!(host["output"]["body"], "done", "{host}");
    let paths: Vec<String> = server.requests().iter().map(|r| r.split(' ').nth(1).unwrap_or("").to_string()).collect();
    assert_eq!(paths, ["/a", "/b", "/c"]);

    let looping = Server::start(vec![Reply::redirect("/again"); 7]);
    let (_, host) = fetch(&mut sandbox, json!({"url": looping.url("127.0.0.1", "/")}));
    assert_failed(&host, "host_intent_failed");
    assert!(host["message"].as_str().unwrap().contains("more than 5"), "{host}");
    assert_eq!(looping.requests().len(), 6);
}

#[test]
fn an_oversized_body_fails_and_names_the_cap() {
    let big = "x".repeat(BODY_CAP as usize + 1);
    let server = Server::start(vec![Reply::ok(&big)]);
    let mut sandbox = Setup::new(&["network:127.0.0.1"]).sandbox();
    let (_, host) = fetch(&mut sandbox, json!({"url": server.url("127.0.0.1", "/big")}));
    assert_failed(&host, "host_intent_failed");
    assert!(host["message"].as_str().unwrap().contains(&BODY_CAP.to_string()), "{host}");
    // Without a Content-Length the body is cut off while reading.
    let streamed = Server::start(vec![Reply { no_length: true, ..Reply::ok(&big) }]);
    let (_, host) = fetch(&mut sandbox, json!({"url": streamed.url("127.0.0.1", "/")}));
    assert_failed(&host, "host_intent_failed");
    assert!(host["message"].as_str().unwrap().contains(&BODY_CAP.to_string()), "{host}");
    // A body exactly at the cap is fine.
    let exact = Server::start(vec![Reply::ok(&big[1..])]);
    let (_, host) = fetch(&mut sandbox, json!({"url": exact.url("127.0.0.1", "/")}));
    assert_eq!(host["output"]["body"].as_str().unwrap().len(), BODY_CAP as usize, "{host}");
}

#[test]
fn a_slow_server_is_cut_off_by_the_intent_deadline() {
    let server = Server::start(vec![Reply { delay: Duration::from_secs(3), ..Reply::ok("too late") }]);
    let mut setup = Setup::new(&["network:127.0.0.1"]);
    setup.policy.timeout_ms = 300;
    setup.real_deadline = true;
    let mut sandbox = setup.sandbox();
    let started = Instant::now();
    let report = sandbox.execute(
        "forward",
        &json!({"jsonrpc": "2.0", "id": 1, "method": "net.fetch", "params": {"url": server.url("127.0.0.1", "/")}}),
    );
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    let outcome: Value = serde_json::from_str(&report.outcome.json).unwrap();
    eprintln!("slow server outcome after {elapsed:?}: {}", report.outcome.json);
    if report.outcome.is_completed() {
        // The fetch failed cleanly inside a still-running intent.
        assert_failed(&outcome["output"], "host_intent_failed");
    } else {
        assert_eq!(outcome["blockedReason"], "deadline_exceeded", "{outcome}");
    }
}

#[test]
fn every_form_of_a_granted_address_is_fetched_from_that_address() {
    let server = Server::start(vec![Reply::ok("hex"), Reply::ok("trailing dot"), Reply::ok("one number")]);
    let mut sandbox = Setup::new(&["network:127.0.0.1"]).sandbox();
    for (form, body) in [("0x7f.1", "hex"), ("127.0.0.1.", "trailing dot"), ("2130706433", "one number")] {
        let (_, host) = fetch(&mut sandbox, json!({"url": server.url(form, "/")}));
        assert_eq!(host["status"], "completed", "{form}: {host}");
        assert_eq!(host["output"]["body"], body, "{form}: {host}");
    }
    // The client was handed the canonical address, the host that was checked.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for request in requests {
        assert!(
            request.to_ascii_lowercase().contains(&format!("\r\nhost: 127.0.0.1:{}\r\n", server.port)),
            "{request}"
        );
    }
}

#[test]
fn a_redirect_to_another_form_of_the_granted_address_is_followed_to_it() {
    let second = Server::start(vec![Reply::ok("arrived")]);
    let first = Server::start(vec![Reply::redirect(&second.url("0177.0.0.1", "/next"))]);
    let mut sandbox = Setup::new(&["network:127.0.0.1"]).sandbox();
    let (_, host) = fetch(&mut sandbox, json!({"url": first.url("127.1", "/")}));
    assert_eq!(host["output"]["body"], "arrived", "{host}");
    let onward = &second.requests()[0];
    assert!(onward.to_ascii_lowercase().contains(&format!("\r\nhost: 127.0.0.1:{}\r\n", second.port)), "{onward}");
}

#[test]
fn a_wildcard_whose_domain_is_an_address_is_refused_at_parse() {
    for grant in ["network:*.0.0.1", "network:*.1", "network:*.0x7f.1"] {
        let error = Permissions::parse_all([grant]).expect_err(grant).to_string();
        assert!(error.contains(grant) && error.contains("IP address"), "{error}");
    }
    // A secret's policy uses the same parser.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vault.json");
    let text = json!({"secrets": {"API_KEY": {"value": SECRET, "allowedHosts": ["*.0.0.1"]}}});
    std::fs::write(&path, text.to_string()).unwrap();
    let error = vault::Vault::load(Some(&path)).expect_err("a numeric wildcard in allowedHosts").to_string();
    assert!(error.contains("*.0.0.1") && !error.contains(SECRET), "{error}");
}

#[test]
fn an_ungranted_address_is_denied_in_every_form() {
    let server = Server::start(vec![Reply::ok("must not be reached")]);
    let mut sandbox = Setup::new(&["network:127.0.0.2", "network:*.example.com"]).sandbox();
    for form in ["127.0.0.1", "0x7f.1", "127.0.0.1.", "[::ffff:127.0.0.1]", "2130706433"] {
        let (_, host) = fetch(&mut sandbox, json!({"url": server.url(form, "/")}));
        assert_failed(&host, "permission_denied");
        assert!(host["message"].as_str().unwrap().contains("network:127.0.0.1"), "{form}: {host}");
    }
    assert!(server.requests().is_empty());
}

// ---------------------------------------------------------------------------------------------
// {{vault:NAME}} substitution

#[test]
fn a_vault_placeholder_reaches_only_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let audit_path = dir.path().join("audit.jsonl");
    let server = Server::start(vec![Reply::ok("authorized")]);
    let mut setup = Setup::new(&["network:127.0.0.1"]);
    setup.vault = vault_with(&["127.0.0.1"]);
    setup.audit = Some(audit_path.clone());
    let mut sandbox = setup.sandbox();
    let (report, host) = fetch(
        &mut sandbox,
        json!({"url": server.url("127.0.0.1", "/"), "headers": {"Authorization": "Bearer {{vault:API_KEY}}"}}),
    );
    assert_eq!(host["output"]["body"], "authorized", "{host}");
    let request = &server.requests()[0];
    assert!(request.contains(&format!("authorization: Bearer {SECRET}\r\n")), "{request}");
    assert!(!report.outcome.json.contains(SECRET));
    assert!(!String::from_utf8_lossy(&report.stdout).contains(SECRET));
    assert!(!String::from_utf8_lossy(&report.stderr).contains(SECRET));
    if let Ok(audit) = std::fs::read_to_string(&audit_path) {
        assert!(!audit.contains(SECRET), "{audit}");
    }
}

#[test]
fn a_secret_whose_policy_excludes_the_host_is_refused() {
    let server = Server::start(vec![Reply::ok("must not be reached")]);
    let mut setup = Setup::new(&["network:127.0.0.1"]);
    setup.vault = vault_with(&["api.example.com", "*.example.org"]);
    let mut sandbox = setup.sandbox();
    let (report, host) =
        fetch(&mut sandbox, json!({"url": server.url("127.0.0.1", "/"), "headers": {"X-Key": "{{vault:API_KEY}}"}}));
    assert_failed(&host, "permission_denied");
    let message = host["message"].as_str().unwrap();
    assert!(message.contains("API_KEY") && !message.contains(SECRET), "{message}");
    assert!(!report.outcome.json.contains(SECRET));
    assert!(server.requests().is_empty());
    // An unknown secret is refused the same way.
    let (_, host) =
        fetch(&mut sandbox, json!({"url": server.url("127.0.0.1", "/"), "headers": {"X-Key": "{{vault:NOPE}}"}}));
    assert_failed(&host, "permission_denied");
    assert!(server.requests().is_empty());
}

/// Asserts that nothing the plugin can observe, nor the audit log, holds any form of the secret.
fn assert_no_trace(report: &IntentReport, audit: &Path) {
    let observed = [
        ("outcome", report.outcome.json.clone()),
        ("stdout", String::from_utf8_lossy(&report.stdout).into_owned()),
        ("stderr", String::from_utf8_lossy(&report.stderr).into_owned()),
        ("audit", std::fs::read_to_string(audit).unwrap_or_default()),
    ];
    for (place, text) in observed {
        let lower = text.to_ascii_lowercase();
        assert!(!lower.contains(&SECRET.to_ascii_lowercase()), "{place}: {text}");
        // The value's core, which its percent-encoded and JSON forms keep too.
        assert!(!lower.contains("7f3a9c1e"), "{place}: {text}");
    }
}

#[test]
fn a_secret_reflected_by_its_allowed_host_never_reaches_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let audit_path = dir.path().join("audit.jsonl");
    let echo = Reply {
        headers: vec![("X-Echo".into(), "{AUTH}".into()), ("X-Reflect-{TOKEN}".into(), "1".into())],
        ..Reply::ok("you sent:\n{REQUEST}\nescaped: {TOKEN_PCT}")
    };
    let server = Server::start(vec![echo]);
    let mut setup = Setup::new(&["network:127.0.0.1"]);
    setup.vault = vault_with(&["127.0.0.1"]);
    setup.audit = Some(audit_path.clone());
    let mut sandbox = setup.sandbox();
    let (report, host) = fetch(
        &mut sandbox,
        json!({"url": server.url("127.0.0.1", "/echo"), "headers": {"Authorization": "Bearer {{vault:API_KEY}}"}}),
    );
    assert_eq!(host["status"], "completed", "{host}");
    // The server did receive the secret, and reflected it three ways.
    assert!(server.requests()[0].contains(&format!("authorization: Bearer {SECRET}\r\n")));
    let output = &host["output"];
    assert_eq!(output["headers"]["x-echo"], "Bearer [redacted:API_KEY]", "{output}");
    assert!(output["headers"].get("x-reflect-[redacted:API_KEY]").is_some(), "{output}");
    let body = output["body"].as_str().unwrap();
    assert!(body.contains("authorization: Bearer [redacted:API_KEY]") && body.contains("escaped: [redacted:API_KEY]"));
    assert_no_trace(&report, &audit_path);
}

#[test]
fn a_failure_never_marks_which_of_the_plugins_guesses_is_the_secret() {
    // Nothing listens on port 1: the connection is refused, and the failure would quote the
    // URL, 100 guesses of a 4-digit secret, with the matching one marked.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vault.json");
    let text = json!({"secrets": {"PIN": {"value": "4821", "created": "2026-01-01T00:00:00Z", "allowedHosts": ["127.0.0.1"]}}});
    std::fs::write(&path, text.to_string()).unwrap();
    let mut setup = Setup::new(&["network:127.0.0.1"]);
    setup.vault = vault::Vault::load(Some(&path)).unwrap();
    let mut sandbox = setup.sandbox();
    let guesses: Vec<String> = (4800..4900).map(|n| n.to_string()).collect();
    let url = format!("http://127.0.0.1:1/{}", guesses.join("-"));
    let (_, host) = fetch(&mut sandbox, json!({"url": url, "headers": {"X-Pin": "{{vault:PIN}}"}}));
    assert_failed(&host, "host_intent_failed");
    let message = host["message"].as_str().unwrap();
    assert!(!message.contains("redacted") && !message.contains("4820"), "{message}");
}

#[test]
fn a_secret_reflected_after_a_redirect_or_in_an_error_is_cut_out() {
    let dir = tempfile::tempdir().unwrap();
    let audit_path = dir.path().join("audit.jsonl");
    // The allowed host puts the secret in a redirect to another granted host (which the secret
    // may not go to): the redirect is not followed, so the secret never reaches that host.
    let second = Server::start(vec![Reply::ok("{REQUEST}")]);
    let first = Server::start(vec![
        Reply::redirect(&second.url("localhost", "/landing?k={TOKEN}")),
        Reply::redirect("ftp://files.example.com/{TOKEN}"),
    ]);
    let mut setup = Setup::new(&["network:127.0.0.1", "network:localhost"]);
    setup.vault = vault_with(&["127.0.0.1"]);
    setup.audit = Some(audit_path.clone());
    let mut sandbox = setup.sandbox();
    let params = json!({"url": first.url("127.0.0.1", "/"), "headers": {"Authorization": "Bearer {{vault:API_KEY}}"}});
    let (report, host) = fetch(&mut sandbox, params.clone());
    assert_failed(&host, "forbidden");
    // The detail (which would quote the location) is withheld: a secret was filled in.
    assert!(host["message"].as_str().unwrap().contains("details are withheld"), "{host}");
    assert!(second.requests().is_empty(), "the redirect carried the secret to {:?}", second.requests());
    assert_no_trace(&report, &audit_path);
    // A redirect to a target that is not http(s) and holds the secret: refused the same way.
    let (report, host) = fetch(&mut sandbox, params);
    assert_failed(&host, "forbidden");
    assert_no_trace(&report, &audit_path);
}

#[test]
fn vault_headers_are_not_carried_to_another_host_on_redirect() {
    let second = Server::start(vec![Reply::ok("second")]);
    let first = Server::start(vec![Reply::redirect(&second.url("localhost", "/"))]);
    let mut setup = Setup::new(&["network:127.0.0.1", "network:localhost"]);
    setup.vault = vault_with(&["127.0.0.1"]);
    let mut sandbox = setup.sandbox();
    let (report, host) = fetch(
        &mut sandbox,
        json!({"url": first.url("127.0.0.1", "/"), "headers": {"X-Key": "{{vault:API_KEY}}", "X-Plain": "p"}}),
    );
    assert_eq!(host["output"]["body"], "second", "{host}");
    assert!(first.requests()[0].contains(SECRET));
    let onward = &second.requests()[0];
    assert!(!onward.contains(SECRET), "{onward}");
    assert!(!onward.to_ascii_lowercase().contains("x-key"), "{onward}");
    assert!(onward.to_ascii_lowercase().contains("x-plain: p"), "{onward}");
    assert!(!report.outcome.json.contains(SECRET));
}

// ---------------------------------------------------------------------------------------------
// vault.read

fn vault_read(sandbox: &mut Sandbox, name: &str) -> (IntentReport, Value) {
    forward(sandbox, json!({"jsonrpc": "2.0", "id": 1, "method": "vault.read", "params": {"name": name}}))
}

#[test]
fn vault_read_returns_metadata_without_the_value() {
    let mut setup = Setup::new(&["vault:read"]);
    setup.vault = vault_with(&["api.example.com", "*.example.org"]);
    let mut sandbox = setup.sandbox();
    let (report, host) = vault_read(&mut sandbox, "API_KEY");
    assert_eq!(host["status"], "completed", "{host}");
    assert_eq!(
        host["output"],
        json!({"name": "API_KEY", "exists": true, "created": "2026-01-01T00:00:00Z",
               "lastRotated": "2026-06-01T00:00:00Z", "allowedHosts": ["api.example.com", "*.example.org"]})
    );
    assert!(!report.outcome.json.contains(SECRET));
    let (_, missing) = vault_read(&mut sandbox, "MISSING");
    assert_eq!(missing["status"], "completed", "{missing}");
    assert_eq!(missing["output"]["exists"], false);
}

#[test]
fn vault_read_without_the_grant_is_denied() {
    let mut setup = Setup::new(&["network:127.0.0.1"]);
    setup.vault = vault_with(&["127.0.0.1"]);
    let mut sandbox = setup.sandbox();
    let (report, host) = vault_read(&mut sandbox, "API_KEY");
    assert_failed(&host, "permission_denied");
    assert!(host["message"].as_str().unwrap().contains("vault:read"), "{host}");
    assert!(!report.outcome.json.contains(SECRET));
}

#[test]
fn the_forward_fixture_reports_unreadable_host_requests() {
    let mut sandbox = Setup::new(&[]).sandbox();
    let (_, host) = forward(&mut sandbox, json!({"not": "json-rpc"}));
    assert_eq!(host, json!({"hostCallError": -3}));
}

#[test]
fn a_redirect_that_carries_a_secret_is_not_followed_and_no_part_of_it_comes_back() {
    let second = Server::start(vec![Reply::ok("must not be reached")]);
    // A server that puts the Authorization header it got into its Location: once into a URL
    // on a granted host, once into a target that is not http(s), padded so a 100-character
    // cut of the message would split the secret.
    let followable = format!("{}?k={SECRET}", second.url("127.0.0.1", "/next"));
    let unfollowable = format!("x:{}{SECRET}", "A".repeat(84));
    for location in [followable, unfollowable] {
        let first = Server::start(vec![Reply::redirect(&location)]);
        let mut setup = Setup::new(&["network:127.0.0.1"]);
        setup.vault = vault_with(&["127.0.0.1"]);
        let mut sandbox = setup.sandbox();
        let (report, host) = fetch(
            &mut sandbox,
            json!({"url": first.url("127.0.0.1", "/"), "headers": {"Authorization": "{{vault:API_KEY}}"}}),
        );
        assert_failed(&host, "forbidden");
        for k in 8..=SECRET.len() {
            assert!(!report.outcome.json.contains(&SECRET[..k]), "{k} bytes of the secret came back: {host}");
        }
    }
    assert!(second.requests().is_empty(), "the secret was carried to the next hop: {:?}", second.requests());
}
