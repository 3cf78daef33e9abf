//! Reading a hub over HTTP (`https://`, or `http://` on loopback only, for tests): one file at
//! a time, each within a size bound checked before and while it is read, all of one operation
//! within one deadline, redirects followed only within the hub's own origin (never to another
//! host), no proxy from the environment.

use std::fmt;
use std::io::Read;
use std::time::{Duration, Instant};
use ureq::http;

/// The most redirects one file's fetch follows (each within the hub's origin).
pub const MAX_REDIRECTS: usize = 3;
/// How long one hub operation (an index and its signature, or one package's files) may take
/// unless the hub was added with another timeout.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// Why a file of an HTTP hub was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// The location is not an `https://` URL (or `http://` on loopback).
    Location(String),
    /// The hub redirected to another origin.
    Redirect {
        /// The URL asked for.
        from: String,
        /// Where the hub pointed.
        to: String,
    },
    /// More than [`MAX_REDIRECTS`] redirects.
    TooManyRedirects(String),
    /// The hub answered with an error status.
    Status {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// The file is larger than its bound.
    TooLarge {
        /// The URL.
        url: String,
        /// The bound in bytes.
        limit: u64,
    },
    /// The deadline passed (a slow or endless answer).
    Timeout {
        /// The URL.
        url: String,
        /// The deadline, in seconds.
        secs: u64,
    },
    /// The connection failed.
    Transport {
        /// The URL.
        url: String,
        /// What failed.
        detail: String,
    },
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Location(why) => write!(f, "{why}"),
            Self::Redirect { from, to } => {
                write!(f, "{from} redirected to {to}, another host: a hub's files are read from its own origin only")
            }
            Self::TooManyRedirects(url) => write!(f, "{url} redirected more than {MAX_REDIRECTS} times"),
            Self::Status { url, status } => write!(f, "{url} answered HTTP {status}"),
            Self::TooLarge { url, limit } => write!(f, "{url} is larger than its bound of {limit} bytes; not read"),
            Self::Timeout { url, secs } => {
                write!(f, "{url} did not answer in full within {secs} s (a slow or endless answer); gave up")
            }
            Self::Transport { url, detail } => write!(f, "fetching {url} failed: {detail}"),
        }
    }
}

impl std::error::Error for FetchError {}

/// Whether `location` names an HTTP hub (else it is a folder).
pub fn is_url(location: &str) -> bool {
    let lower = location.get(..8).unwrap_or(location).to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

/// Whether `host` (as a URI names it) is a loopback address.
fn loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Checks an HTTP hub's location: an `https://` URL, or `http://` to a loopback host.
pub fn check_location(location: &str) -> Result<http::Uri, FetchError> {
    let uri: http::Uri = location.parse().map_err(|_| FetchError::Location(format!("`{location}` is not a URL")))?;
    let host = uri.host().unwrap_or_default();
    match uri.scheme_str() {
        Some("https") if !host.is_empty() => Ok(uri),
        Some("http") if loopback(host) => Ok(uri),
        Some("http") => Err(FetchError::Location(format!(
            "`{location}`: a hub is read over https:// (plain http:// only from this machine, for tests)"
        ))),
        _ => Err(FetchError::Location(format!("`{location}` is not an https:// URL"))),
    }
}

/// `location` joined with the relative path `name` (each segment percent-encoded).
pub fn join(location: &str, name: &str) -> String {
    let encoded: Vec<String> = name
        .split('/')
        .map(|segment| {
            segment
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
                    _ => format!("%{b:02X}"),
                })
                .collect()
        })
        .collect();
    format!("{}/{}", location.trim_end_matches('/'), encoded.join("/"))
}

/// An origin: scheme, host and port.
fn origin(uri: &http::Uri) -> (Option<&str>, Option<&str>, Option<u16>) {
    (uri.scheme_str(), uri.host(), uri.port_u16())
}

/// Fetches `url` (at most `limit` bytes) before `deadline` (`secs` long, for messages); `None`
/// when the hub answers 404.
pub fn get(url: &str, limit: u64, deadline: Instant, secs: u64) -> Result<Option<Vec<u8>>, FetchError> {
    let agent = crate::http_agent::agent();
    let start = check_location(url)?;
    let mut current = start.clone();
    for _ in 0..=MAX_REDIRECTS {
        let shown = current.to_string();
        let timeout = || FetchError::Timeout { url: shown.clone(), secs };
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(timeout());
        }
        let request = http::Request::get(current.clone())
            .body(())
            .map_err(|e| FetchError::Transport { url: shown.clone(), detail: e.to_string() })?;
        let request = agent.configure_request(request).timeout_global(Some(remaining)).build();
        let response = agent.run(request).map_err(|e| match e {
            ureq::Error::Timeout(_) => timeout(),
            other => FetchError::Transport { url: shown.clone(), detail: other.to_string() },
        })?;
        let status = response.status().as_u16();
        if (300..400).contains(&status) {
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default();
            let next: http::Uri = match location.parse::<http::Uri>() {
                Ok(uri) if uri.scheme().is_some() => uri,
                // A path on the same origin.
                Ok(uri) if location.starts_with('/') => {
                    let mut parts = current.clone().into_parts();
                    parts.path_and_query = uri.path_and_query().cloned();
                    http::Uri::from_parts(parts)
                        .map_err(|_| FetchError::Redirect { from: shown.clone(), to: location.clone() })?
                }
                _ => return Err(FetchError::Redirect { from: shown, to: location }),
            };
            if origin(&next) != origin(&start) {
                return Err(FetchError::Redirect { from: shown, to: next.to_string() });
            }
            current = next;
            continue;
        }
        if status == 404 {
            return Ok(None);
        }
        if status != 200 {
            return Err(FetchError::Status { url: shown, status });
        }
        let body = response.into_body();
        if body.content_length().is_some_and(|length| length > limit) {
            return Err(FetchError::TooLarge { url: shown, limit });
        }
        let mut bytes = Vec::new();
        body.into_reader().take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| {
            if Instant::now() >= deadline || e.kind() == std::io::ErrorKind::TimedOut {
                timeout()
            } else {
                FetchError::Transport { url: shown.clone(), detail: e.to_string() }
            }
        })?;
        if bytes.len() as u64 > limit {
            return Err(FetchError::TooLarge { url: shown, limit });
        }
        return Ok(Some(bytes));
    }
    Err(FetchError::TooManyRedirects(start.to_string()))
}

/// The deadline of an operation starting now and lasting `secs`.
pub fn deadline(secs: u64) -> Instant {
    Instant::now() + Duration::from_secs(secs)
}
