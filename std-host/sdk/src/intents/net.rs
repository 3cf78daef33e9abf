//! `net.fetch {url, method, headers, body}`: HTTP(S) to granted hosts only.
//!
//! Core has matched the URL's host against the plugin's `network:` grants before this runs.
//! Here the request is made with ureq, with its own redirect following off: up to
//! [`MAX_REDIRECTS`] redirects are followed by hand, each target host checked against the grants
//! before anything is sent to it. The whole fetch (every hop and the body) must finish within
//! the intent's remaining deadline, and the body is capped at `max_body_bytes`.
//!
//! A header value may hold `{{vault:NAME}}` placeholders; the host fills them in with the
//! secret's value only for a host the secret's own `allowedHosts` allow (otherwise the fetch is
//! refused). On a redirect the placeholders are filled in again for the new host: a header whose
//! secret does not allow it (or any such header on an https-to-http downgrade) is dropped. Every
//! secret filled in on any hop is cut out of the answer (see [`super::redaction`]), so a server
//! that reflects it does not hand it to the plugin.
//!
//! Hosts are compared in the canonical form of [`Host`], the form core checked the grants in,
//! and the client is handed the URL with that canonical host, so no resolver reads another form
//! of the host (`0x7f.1`, `127.0.0.1.`) than the one that was checked.

use super::redaction::Redaction;
use super::vault::{self, Vault};
use crate::environment::{Cancel, CANCEL_POLL};
use contour_core::url_host;
use contour_core::Host;
use contour_core::{BlockedReason, CallContext, Failure, HostAnswer, HostCall, Permissions, Spent};
use serde_json::{json, Map, Value};
use std::fmt;
use std::io::Read;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};
use ureq::http;

/// Redirects followed by hand before a fetch fails.
pub const MAX_REDIRECTS: usize = 5;

/// The fetch budget when the host has no deadline clock.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Headers the host sets itself; a plugin may not (a `Host` header would reach a host the
/// grant check never saw).
const RESERVED_HEADERS: [&str; 4] = ["host", "content-length", "transfer-encoding", "connection"];

const PLACEHOLDER_OPEN: &str = "{{vault:";
const PLACEHOLDER_CLOSE: &str = "}}";

/// The HTTP client settings of one sandbox.
#[derive(Debug, Clone)]
pub struct Net {
    max_body_bytes: u64,
    /// Ends a fetch's wait (connect, send, read) at once when set: Ctrl-C, or a caller's cancel.
    cancel: Option<Cancel>,
}

/// One request header as the plugin gave it.
struct PluginHeader {
    name: http::HeaderName,
    /// The value with `{{vault:NAME}}` placeholders still in it.
    template: String,
    /// Whether the value holds at least one placeholder.
    uses_vault: bool,
}

/// When a vault header is not allowed for a hop's host.
#[derive(Clone, Copy, PartialEq, Eq)]
enum VaultMiss {
    /// Refuse the fetch (the URL the plugin asked for).
    Refuse,
    /// Leave the header out (a redirect target).
    Drop,
}

fn failure(reason: BlockedReason, detail: impl Into<String>) -> Failure {
    Failure::new(reason, detail)
}

/// The names of the secrets a header value refers to, in order.
fn placeholder_names(template: &str) -> Result<Vec<&str>, Failure> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find(PLACEHOLDER_OPEN) {
        let after = &rest[start + PLACEHOLDER_OPEN.len()..];
        let end = after.find(PLACEHOLDER_CLOSE).ok_or_else(|| {
            failure(BlockedReason::InvalidHostRequest, "`net.fetch`: a `{{vault:` placeholder has no closing `}}`.")
        })?;
        let name = &after[..end];
        if name.is_empty() {
            return Err(failure(
                BlockedReason::InvalidHostRequest,
                "`net.fetch`: a `{{vault:}}` placeholder has no name.",
            ));
        }
        names.push(name);
        rest = &after[end + PLACEHOLDER_CLOSE.len()..];
    }
    Ok(names)
}

/// Why a header's placeholders cannot be filled in.
#[derive(Debug)]
enum FillError {
    /// A `{{vault:` without its `}}`.
    Unclosed,
    /// A secret that may not go to the host.
    Refused(vault::SecretRefused),
}

impl fmt::Display for FillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unclosed => f.write_str("a `{{vault:` placeholder has no closing `}}`"),
            Self::Refused(why) => why.fmt(f),
        }
    }
}

/// Why a redirect's `Location` cannot be followed.
#[derive(Debug, PartialEq, Eq)]
enum RedirectError {
    /// The URL that redirected has no scheme.
    NoScheme,
    /// The URL that redirected has no host.
    NoHost,
    /// The target is another scheme than http(s) (its first 100 characters).
    NotHttp(String),
}

impl fmt::Display for RedirectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoScheme => f.write_str("the redirecting URL has no scheme"),
            Self::NoHost => f.write_str("the redirecting URL has no host"),
            Self::NotHttp(shown) => write!(f, "the redirect target `{shown}` is not an http(s) URL"),
        }
    }
}

/// The header value for `host`, with every placeholder replaced by its secret (each recorded in
/// `redaction`), or the error naming the secret that may not go to `host`.
fn fill_in(template: &str, host: &str, vault: &Vault, redaction: &mut Redaction) -> Result<String, FillError> {
    let mut value = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find(PLACEHOLDER_OPEN) {
        value.push_str(&rest[..start]);
        let after = &rest[start + PLACEHOLDER_OPEN.len()..];
        let Some(end) = after.find(PLACEHOLDER_CLOSE) else {
            return Err(FillError::Unclosed);
        };
        let name = &after[..end];
        let secret = vault.secret_for_host(name, host).map_err(FillError::Refused)?;
        redaction.add(name, secret);
        value.push_str(secret);
        rest = &after[end + PLACEHOLDER_CLOSE.len()..];
    }
    value.push_str(rest);
    Ok(value)
}

/// Where the next request of a fetch goes, and how: a redirect moves it, may turn a POST into
/// a GET, and after an https-to-http downgrade no secret is filled in again.
struct Hop {
    url: String,
    host: String,
    method: http::Method,
    body: Option<String>,
    downgraded: bool,
}

impl Hop {
    /// Moves to the target of a redirect from `uri` (`location` as the server sent it), unless
    /// it is not an http(s) URL.
    fn follow(&mut self, uri: &http::Uri, status: u16, location: &str) -> Result<(), Failure> {
        let next = resolve_location(uri, location.trim())
            .map_err(|why| failure(BlockedReason::Forbidden, format!("`net.fetch` was redirected: {why}.")))?;
        let next_host = url_host(&next)
            .map_err(|why| failure(BlockedReason::Forbidden, format!("`net.fetch` was redirected, but {why}.")))?;
        if uri.scheme_str() == Some("https") && next.starts_with("http://") {
            self.downgraded = true;
        }
        // 303 always, and 301/302 after a POST, continue as GET without a body.
        if status == 303 && self.method != http::Method::HEAD
            || matches!(status, 301 | 302) && self.method == http::Method::POST
        {
            self.method = http::Method::GET;
            self.body = None;
        }
        self.url = next;
        self.host = next_host;
        Ok(())
    }
}

/// Checks the host a request is about to go to against the grants. Core checked the URL the
/// plugin gave; this is the check of every redirect target, before it is connected to.
fn check_target(grants: &Permissions, host: &str) -> Result<(), Failure> {
    if grants.iter().any(|grant| grant.allows_host(host)) {
        return Ok(());
    }
    // The grant as `--grant` takes it: an IPv6 address in brackets.
    let grant = if host.contains(':') { format!("network:[{host}]") } else { format!("network:{host}") };
    Err(failure(
        BlockedReason::PermissionDenied,
        format!("`net.fetch` was redirected to `{host}`, which needs `{grant}`."),
    ))
}

/// The plugin's headers on `builder`, secrets filled in for the hop's host (a secret that may
/// not go there refuses the fetch on the first hop and is left out after a redirect; none is
/// sent after a downgrade to http).
fn with_headers(
    mut builder: http::request::Builder,
    headers: &[PluginHeader],
    hop: &Hop,
    miss: VaultMiss,
    vault: &Vault,
    redaction: &mut Redaction,
) -> Result<http::request::Builder, Failure> {
    for header in headers {
        let value = if header.uses_vault {
            if hop.downgraded {
                continue;
            }
            match fill_in(&header.template, &hop.host, vault, redaction) {
                Ok(value) => value,
                Err(_) if miss == VaultMiss::Drop => continue,
                Err(why) => {
                    return Err(failure(
                        BlockedReason::PermissionDenied,
                        format!("`net.fetch` header `{}`: {why}.", header.name),
                    ))
                }
            }
        } else {
            header.template.clone()
        };
        // The error never shows the value (it may hold a secret).
        let value = http::HeaderValue::from_str(&value).map_err(|_| {
            failure(
                BlockedReason::InvalidHostRequest,
                format!("`net.fetch`: the value of header `{}` is not a valid header value.", header.name),
            )
        })?;
        builder = builder.header(header.name.clone(), value);
    }
    Ok(builder)
}

/// Sends one hop's request within what is left of the budget.
fn send(
    agent: &ureq::Agent,
    builder: http::request::Builder,
    hop: &Hop,
    started: Instant,
    budget: Duration,
) -> Result<http::Response<ureq::Body>, Failure> {
    let url = &hop.url;
    let remaining = budget.saturating_sub(started.elapsed());
    if remaining.is_zero() {
        return Err(failure(
            BlockedReason::HostIntentFailed,
            format!("`net.fetch` of `{url}` ran out of time (the budget was {} ms).", millis(budget)),
        ));
    }
    let built = match &hop.body {
        Some(text) => builder.body(text.clone().into_bytes()),
        None => builder.body(Vec::new()),
    }
    .map_err(|_| failure(BlockedReason::InvalidHostRequest, "`net.fetch`: the request cannot be built."))?;
    let built = agent.configure_request(built).timeout_global(Some(remaining)).build();
    agent.run(built).map_err(|error| {
        let detail = match error {
            ureq::Error::Timeout(_) => {
                format!("`net.fetch` of `{url}` timed out after {} ms.", millis(started.elapsed()))
            }
            other => format!("`net.fetch` of `{url}` failed: {other}."),
        };
        failure(BlockedReason::HostIntentFailed, detail)
    })
}

fn parse_headers(headers: &[(String, String)]) -> Result<Vec<PluginHeader>, Failure> {
    let mut parsed = Vec::with_capacity(headers.len());
    for (name, template) in headers {
        let header_name = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            failure(BlockedReason::InvalidHostRequest, format!("`net.fetch`: `{name}` is not a valid header name."))
        })?;
        if RESERVED_HEADERS.contains(&header_name.as_str()) {
            return Err(failure(
                BlockedReason::InvalidHostRequest,
                format!("`net.fetch`: the `{header_name}` header is set by the host, not the plugin."),
            ));
        }
        let uses_vault = !placeholder_names(template)?.is_empty();
        parsed.push(PluginHeader { name: header_name, template: template.clone(), uses_vault });
    }
    Ok(parsed)
}

/// Resolves a `Location` header against the URL it came from.
fn resolve_location(base: &http::Uri, location: &str) -> Result<String, RedirectError> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return Ok(location.to_string());
    }
    let scheme = base.scheme_str().ok_or(RedirectError::NoScheme)?;
    if let Some(rest) = location.strip_prefix("//") {
        return Ok(format!("{scheme}://{rest}"));
    }
    let scheme_like = location.split_once(':').is_some_and(|(prefix, _)| {
        prefix.starts_with(|c: char| c.is_ascii_alphabetic())
            && prefix.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if scheme_like {
        return Err(RedirectError::NotHttp(location.chars().take(100).collect()));
    }
    let authority = base.authority().map(http::uri::Authority::as_str).ok_or(RedirectError::NoHost)?;
    let origin = format!("{scheme}://{authority}");
    let path = base.path();
    Ok(if location.starts_with('/') {
        format!("{origin}{location}")
    } else if location.starts_with('?') {
        format!("{origin}{path}{location}")
    } else if location.starts_with('#') || location.is_empty() {
        format!("{origin}{}", base.path_and_query().map_or("/", http::uri::PathAndQuery::as_str))
    } else {
        let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
        format!("{origin}{dir}/{location}")
    })
}

/// Parses `url` for the client and checks it connects to exactly `host`, the host the grants
/// were checked against (two URL parsers must not disagree about where a request goes). Both are
/// compared in canonical form, and the URI handed back names the canonical host, so the client
/// connects to the very address (or name) that was checked.
fn client_uri(url: &str, host: &str) -> Result<http::Uri, Failure> {
    let uri: http::Uri = url.parse().map_err(|error| {
        failure(BlockedReason::InvalidHostRequest, format!("`net.fetch`: the URL cannot be parsed: {error}."))
    })?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(failure(
            BlockedReason::InvalidHostRequest,
            "`net.fetch`: only http and https URLs can be fetched.",
        ));
    }
    let client_host = uri.host().unwrap_or("").to_string();
    let authority = uri.authority().map_or("", http::uri::Authority::as_str).to_string();
    let ambiguous = || {
        failure(
            BlockedReason::Forbidden,
            format!("`net.fetch`: the URL's host is ambiguous (`{host}` or `{client_host}`); write the URL without userinfo or odd host forms."),
        )
    };
    let checked = Host::parse(host).map_err(|_| ambiguous())?;
    if authority.contains('@') || Host::parse(&client_host).ok().as_ref() != Some(&checked) {
        return Err(ambiguous());
    }
    // What follows the host in the authority: nothing, or `:` and a port the client reads too.
    let port = match authority.strip_prefix(client_host.as_str()) {
        Some("") => None,
        Some(rest) => match (rest.strip_prefix(':'), uri.port_u16()) {
            (Some(digits), Some(port)) if digits.bytes().all(|b| b.is_ascii_digit()) => Some(port),
            _ => return Err(ambiguous()),
        },
        None => return Err(ambiguous()),
    };
    let canonical = match port {
        Some(port) => format!("{checked}:{port}"),
        None => checked.to_string(),
    };
    let mut parts = uri.into_parts();
    parts.authority = Some(canonical.parse().map_err(|_| ambiguous())?);
    http::Uri::from_parts(parts).map_err(|_| ambiguous())
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

fn millis(duration: Duration) -> u128 {
    duration.as_millis()
}

impl Net {
    /// A client capping response bodies at `max_body_bytes`.
    pub fn new(max_body_bytes: u64) -> Self {
        Self { max_body_bytes, cancel: None }
    }

    /// The same, whose fetches end within [`CANCEL_POLL`] of `cancel` being set.
    pub fn with_cancel(mut self, cancel: Option<Cancel>) -> Self {
        self.cancel = cancel;
        self
    }

    /// Performs one fetch (core already matched the URL's host against `grants`). With a
    /// cancel flag the fetch runs on a thread of its own and this waits for it in steps of
    /// [`CANCEL_POLL`]: a server that holds the connection open (or a slow connect) keeps
    /// Ctrl-C waiting no longer than that. The abandoned fetch ends by itself at its deadline,
    /// and its answer is dropped.
    pub fn fetch(&self, call: &HostCall, context: &CallContext, grants: &Permissions, vault: &Vault) -> HostAnswer {
        let Some(cancel) = self.cancel.clone() else {
            return self.fetch_here(call, context, grants, vault);
        };
        let (sender, answer) = std::sync::mpsc::channel();
        let owned = (Self::new(self.max_body_bytes), call.clone(), *context, grants.clone(), vault.clone());
        let spawned = std::thread::Builder::new().name("tdm-net-fetch".into()).spawn(move || {
            let (net, call, context, grants, vault) = owned;
            let _ = sender.send(net.fetch_here(&call, &context, &grants, &vault));
        });
        if spawned.is_err() {
            return self.fetch_here(call, context, grants, vault);
        }
        loop {
            match answer.recv_timeout(CANCEL_POLL) {
                Ok(answer) => return answer,
                Err(RecvTimeoutError::Disconnected) => {
                    return HostAnswer::failed(BlockedReason::HostFault, "`net.fetch` ended without an answer.")
                }
                Err(RecvTimeoutError::Timeout) if cancel.is_set() => {
                    return HostAnswer::failed(
                        BlockedReason::Cancelled,
                        "`net.fetch` was cancelled by its caller before the server answered.",
                    )
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// [`Net::fetch`] on this thread, waiting as long as the deadline allows.
    fn fetch_here(&self, call: &HostCall, context: &CallContext, grants: &Permissions, vault: &Vault) -> HostAnswer {
        let HostCall::NetFetch { url, host, method, headers, body } = call else {
            return HostAnswer::failed(BlockedReason::InvalidHostRequest, "`net.fetch` was given another call.");
        };
        let budget = context.remaining_ns.map_or(DEFAULT_TIMEOUT, Duration::from_nanos);
        let started = Instant::now();
        let request = FetchRequest { url, host, method, headers, body: body.as_deref() };
        let mut redaction = Redaction::default();
        match self.run(&request, started, budget, grants, vault, &mut redaction) {
            Ok(output) => HostAnswer::ok(redaction.json(output)),
            Err(failure) => HostAnswer { result: Err(redaction.failure(failure)), spent: Spent::default() },
        }
    }

    /// The fetch and the redirects it follows by hand, each target checked again.
    fn run(
        &self,
        request: &FetchRequest<'_>,
        started: Instant,
        budget: Duration,
        grants: &Permissions,
        vault: &Vault,
        redaction: &mut Redaction,
    ) -> Result<Value, Failure> {
        let method = http::Method::from_bytes(request.method.as_bytes()).map_err(|_| {
            failure(
                BlockedReason::InvalidHostRequest,
                format!("`net.fetch`: `{}` is not an HTTP method.", request.method),
            )
        })?;
        let headers = parse_headers(request.headers)?;
        let agent = crate::http_agent::agent();
        let mut hop = Hop {
            url: request.url.to_string(),
            host: request.host.to_string(),
            method,
            body: request.body.map(str::to_owned),
            downgraded: false,
        };
        for n in 0..=MAX_REDIRECTS {
            check_target(grants, &hop.host)?;
            let uri = client_uri(&hop.url, &hop.host)?;
            let miss = if n == 0 { VaultMiss::Refuse } else { VaultMiss::Drop };
            let builder = http::Request::builder().method(hop.method.clone()).uri(uri.clone());
            let builder = with_headers(builder, &headers, &hop, miss, vault, redaction)?;
            let response = send(&agent, builder, &hop, started, budget)?;
            let status = response.status().as_u16();
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            match location {
                Some(location) if is_redirect(status) => {
                    if redaction.text(&location) != location {
                        // The server put a secret sent with the request into the redirect: the
                        // next hop would carry it to wherever the target points.
                        return Err(failure(
                            BlockedReason::Forbidden,
                            "`net.fetch` was redirected to a target that carries a secret sent with the request; it is not followed (fetch the target without the secret, or ask the server's owner to stop echoing it).",
                        ));
                    }
                    if n == MAX_REDIRECTS {
                        return Err(failure(
                            BlockedReason::HostIntentFailed,
                            format!("`net.fetch` of `{}` was redirected more than {MAX_REDIRECTS} times.", request.url),
                        ));
                    }
                    hop.follow(&uri, status, &location)?;
                }
                _ => return self.answer(response, &hop.url),
            }
        }
        Err(failure(BlockedReason::HostIntentFailed, "`net.fetch` followed too many redirects."))
    }

    /// The output of a final response: status, headers and the (capped) body.
    fn answer(&self, response: http::Response<ureq::Body>, url: &str) -> Result<Value, Failure> {
        let too_large = || {
            failure(
                BlockedReason::HostIntentFailed,
                format!("The response body of `{url}` is larger than the cap of {} bytes.", self.max_body_bytes),
            )
        };
        let status = response.status().as_u16();
        let mut headers = Map::new();
        for (name, value) in response.headers() {
            let value = String::from_utf8_lossy(value.as_bytes());
            match headers.get_mut(name.as_str()) {
                Some(Value::String(joined)) => {
                    joined.push_str(", ");
                    joined.push_str(&value);
                }
                _ => {
                    headers.insert(name.as_str().to_string(), Value::from(value.into_owned()));
                }
            }
        }
        let body = response.into_body();
        if body.content_length().is_some_and(|length| length > self.max_body_bytes) {
            return Err(too_large());
        }
        let mut bytes = Vec::new();
        body.into_reader().take(self.max_body_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(|error| {
            failure(BlockedReason::HostIntentFailed, format!("Reading the response body of `{url}` failed: {error}."))
        })?;
        if bytes.len() as u64 > self.max_body_bytes {
            return Err(too_large());
        }
        Ok(json!({
            "status": status,
            "headers": headers,
            "body": String::from_utf8_lossy(&bytes),
        }))
    }
}

/// The parts of a `net.fetch` call.
struct FetchRequest<'a> {
    url: &'a str,
    host: &'a str,
    method: &'a str,
    headers: &'a [(String, String)],
    body: Option<&'a str>,
}

#[cfg(test)]
#[path = "net_tests.rs"]
mod tests;
