//! Reading a host call: the JSON-RPC 2.0 envelope, and the params of each method parsed into a
//! typed `HostCall`. The rule is the request read as a JSON tree; the fast paths read the common
//! shapes in place and must agree with it (a test checks they do).

use super::{HostCall, Method};
use crate::permission::UrlHostError;
use crate::reason::{quote, BlockedReason, Failure, MAX_QUOTE_CHARS};
use alloc::borrow::Cow;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// Why a host call's params do not fit its method (the detail of `invalid_host_request`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamsError {
    /// The member (`params.<name>`) is missing or not a string.
    NotAString(&'static str),
    /// `params.headers` is not an object.
    HeadersNotAnObject,
    /// A value of `params.headers` is not a string.
    HeaderNotAString,
    /// `params.url` names no host a grant can match.
    Url(UrlHostError),
    /// The params are not JSON (the reader's words).
    NotJson(String),
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAString(field) => write!(f, "`params.{field}` must be a string"),
            Self::HeadersNotAnObject => f.write_str("`params.headers` must be an object of strings"),
            Self::HeaderNotAString => f.write_str("`params.headers` values must be strings"),
            Self::Url(error) => write!(f, "{error}"),
            Self::NotJson(why) => write!(f, "params: {why}"),
        }
    }
}

impl From<UrlHostError> for ParamsError {
    fn from(error: UrlHostError) -> Self {
        Self::Url(error)
    }
}

fn str_field<'a>(params: &'a Value, field: &'static str) -> Result<&'a str, ParamsError> {
    params.get(field).and_then(Value::as_str).ok_or(ParamsError::NotAString(field))
}

/// Parses the params of `method` into a typed call. This is the rule; [`parse_call_fast`] only
/// takes its common cases faster.
fn parse_call(method: Method, params: &Value) -> Result<HostCall, ParamsError> {
    Ok(match method {
        Method::DistRead => HostCall::DistRead { path: str_field(params, "path")?.to_string() },
        Method::Log => HostCall::Log {
            level: params.get("level").and_then(Value::as_str).unwrap_or("info").to_string(),
            message: str_field(params, "message")?.to_string(),
        },
        Method::NetFetch => {
            let url = str_field(params, "url")?.to_string();
            let host = url_host(&url)?;
            let method = params.get("method").and_then(Value::as_str).unwrap_or("GET").to_ascii_uppercase();
            let mut headers = Vec::new();
            if let Some(map) = params.get("headers") {
                let map = map.as_object().ok_or(ParamsError::HeadersNotAnObject)?;
                for (name, value) in map {
                    let value = value.as_str().ok_or(ParamsError::HeaderNotAString)?;
                    headers.push((name.clone(), value.to_string()));
                }
            }
            let body = match params.get("body") {
                None | Some(Value::Null) => None,
                Some(Value::String(body)) => Some(body.clone()),
                Some(_) => return Err(ParamsError::NotAString("body")),
            };
            HostCall::NetFetch { url, host, method, headers, body }
        }
        Method::ToolInvoke => HostCall::ToolInvoke {
            tool: str_field(params, "tool")?.to_string(),
            intent: str_field(params, "intent")?.to_string(),
            params: params.get("params").cloned().unwrap_or(Value::Object(serde_json::Map::new())),
        },
        Method::VaultRead => HostCall::VaultRead { name: str_field(params, "name")?.to_string() },
        Method::ContextRead => HostCall::ContextRead { key: str_field(params, "key")?.to_string() },
    })
}

/// `log` params, borrowed from the request where no escapes need decoding.
#[derive(Deserialize)]
struct LogParams<'a> {
    #[serde(borrow, default)]
    level: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Cow<'a, str>,
}

/// `dist.read` params.
#[derive(Deserialize)]
struct PathParams<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
}

/// `vault.read` params.
#[derive(Deserialize)]
struct NameParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
}

/// `context.read` params.
#[derive(Deserialize)]
struct KeyParams<'a> {
    #[serde(borrow)]
    key: Cow<'a, str>,
}

/// Whether `text` is a JSON object. serde reads a struct from an array too (by position), which
/// the rule refuses; the fast paths take objects only.
fn is_object(text: &[u8]) -> bool {
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Parses the common shapes of params straight into a call, without building a JSON tree:
/// `None` when the params take another shape (or the method is one whose params are rich), and
/// then [`parse_call`] decides, so both paths accept and refuse exactly the same requests.
fn parse_call_fast(method: Method, params: &RawValue) -> Option<HostCall> {
    let text = params.get();
    if !is_object(text.as_bytes()) {
        return None;
    }
    Some(match method {
        Method::Log => {
            let LogParams { level, message } = serde_json::from_str(text).ok()?;
            let level = level.map_or_else(|| String::from("info"), Cow::into_owned);
            HostCall::Log { level, message: message.into_owned() }
        }
        Method::DistRead => {
            let PathParams { path } = serde_json::from_str(text).ok()?;
            HostCall::DistRead { path: path.into_owned() }
        }
        Method::VaultRead => {
            let NameParams { name } = serde_json::from_str(text).ok()?;
            HostCall::VaultRead { name: name.into_owned() }
        }
        Method::ContextRead => {
            let KeyParams { key } = serde_json::from_str(text).ok()?;
            HostCall::ContextRead { key: key.into_owned() }
        }
        Method::NetFetch | Method::ToolInvoke => return None,
    })
}

/// The JSON-RPC 2.0 envelope of a host call, its params left as unparsed text.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// A host-call request: its method name and params.
pub(super) struct Request<'a> {
    pub(super) method: Cow<'a, str>,
    params: Params<'a>,
}

/// A request's params: unparsed text (the fast path), a parsed tree, or absent.
enum Params<'a> {
    Raw(&'a RawValue),
    Tree(Value),
}

impl<'a> Request<'a> {
    /// Reads a JSON-RPC 2.0 request with a string `method`, or `None`. The envelope is read
    /// typed and borrowed; anything it cannot read (a duplicate key, say) is read again as a
    /// JSON tree, whose reading is the rule.
    pub(super) fn parse(bytes: &'a [u8]) -> Option<Self> {
        // JSON text is UTF-8: checked once here, so the readers below need not check each string.
        let text = core::str::from_utf8(bytes).ok()?;
        if let Some(Ok(envelope)) = is_object(bytes).then(|| serde_json::from_str::<Envelope<'a>>(text)) {
            if envelope.jsonrpc != "2.0" {
                return None;
            }
            let params = envelope.params.map_or(Params::Tree(Value::Null), Params::Raw);
            return Some(Self { method: envelope.method, params });
        }
        let mut request = serde_json::from_str::<Value>(text).ok()?;
        let (Some("2.0"), Some(name)) =
            (request.get("jsonrpc").and_then(Value::as_str), request.get("method").and_then(Value::as_str))
        else {
            return None;
        };
        let method = Cow::Owned(name.to_string());
        // The request is ours: move its params out rather than deep-copying them.
        let params = request.get_mut("params").map(Value::take).unwrap_or(Value::Null);
        Some(Self { method, params: Params::Tree(params) })
    }

    /// The typed call, or why the params do not fit the method.
    pub(super) fn call(&self, method: Method) -> Result<HostCall, ParamsError> {
        match &self.params {
            Params::Raw(raw) => match parse_call_fast(method, raw) {
                Some(call) => Ok(call),
                None => {
                    let tree: Value =
                        serde_json::from_str(raw.get()).map_err(|e| ParamsError::NotJson(e.to_string()))?;
                    parse_call(method, &tree)
                }
            },
            Params::Tree(tree) => parse_call(method, tree),
        }
    }
}

/// Reads a host-call request exactly as `tdm_host_call` does: `None` when it is no JSON-RPC 2.0
/// request with a string `method` (the guest is answered `ERR_NOT_JSON_RPC`), else the method
/// name and the typed call, or the failure the guest is answered (an unknown method, or params
/// that do not fit it).
pub fn read_request(bytes: &[u8]) -> Option<(Cow<'_, str>, Result<HostCall, Failure>)> {
    read_request_within(bytes, crate::policy::DEFAULT_MAX_REQUEST_DEPTH)
}

/// [`read_request`] with params nested at most `max_depth` levels (`Policy::max_request_depth`):
/// deeper params are `request_too_deep`, found by one scan of the bytes before any reader
/// builds a tree of them (the method is read from the envelope, whose params are skipped
/// without recursion).
pub fn read_request_within(bytes: &[u8], max_depth: usize) -> Option<(Cow<'_, str>, Result<HostCall, Failure>)> {
    if crate::nesting::deeper_than(bytes, crate::nesting::request_limit(max_depth)) {
        let text = core::str::from_utf8(bytes).ok()?;
        let envelope = serde_json::from_str::<Envelope<'_>>(text).ok().filter(|e| e.jsonrpc == "2.0")?;
        let failure = Failure::new(
            BlockedReason::RequestTooDeep,
            format!("`{}`: its params nest deeper than {max_depth} levels.", quote(&envelope.method, MAX_QUOTE_CHARS)),
        );
        return Some((envelope.method, Err(failure)));
    }
    let request = Request::parse(bytes)?;
    let call = match Method::from_name(&request.method) {
        None => {
            Err(Failure::new(BlockedReason::UnknownHostMethod, format!("`{}` is not a host method.", request.method)))
        }
        Some(method) => request
            .call(method)
            .map_err(|why| Failure::new(BlockedReason::InvalidHostRequest, format!("`{}`: {why}.", request.method))),
    };
    Some((request.method, call))
}

/// The canonical host (`permission::Host`) of an `http://` or `https://` URL, the form every
/// `network:` grant is kept in. Userinfo (`user@host`) is refused, so a URL cannot show one host
/// to the check and another to the client.
pub fn url_host(url: &str) -> Result<String, UrlHostError> {
    crate::permission::Host::of_url(url).map(|host| host.bare())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::Permissions;

    /// The rule: the request read as a JSON tree, then [`parse_call`].
    fn by_the_rule(bytes: &[u8]) -> Option<(String, Option<Result<HostCall, ParamsError>>)> {
        let request: Value = serde_json::from_slice(bytes).ok()?;
        let (Some("2.0"), Some(name)) =
            (request.get("jsonrpc").and_then(Value::as_str), request.get("method").and_then(Value::as_str))
        else {
            return None;
        };
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        Some((name.to_string(), Method::from_name(name).map(|m| parse_call(m, &params))))
    }

    #[test]
    fn the_fast_reading_of_a_request_agrees_with_the_rule() {
        let params = [
            r#"{"level":"warn","message":"hi"}"#,
            r#"{"message":"hi"}"#,
            r#"{"message":"esc\u00e9\n\"q\""}"#,
            r#"{"level":7,"message":"hi"}"#,
            r#"{"level":null,"message":"hi"}"#,
            r#"{"message":"a","message":"b"}"#,
            r#"{"message":1}"#,
            r#"["warn","hi"]"#,
            r#"["a.txt"]"#,
            r#"{"path":"a.txt"}"#,
            r#"{"path":"a.txt","extra":[1,{"x":2}]}"#,
            r#"{"name":"token"}"#,
            r#"{"key":"user"}"#,
            r#"{"key":"a","key":"b"}"#,
            r#"{"url":"https://example.com/","headers":{"a":"b"}}"#,
            r#"{"tool":"t","intent":"i","params":{"n":1}}"#,
            r#"null"#,
            r#""text""#,
            r#"{}"#,
        ];
        let methods = ["log", "dist.read", "vault.read", "context.read", "net.fetch", "tool.invoke", "nope"];
        let mut requests: Vec<String> = Vec::new();
        for method in methods {
            for p in params {
                requests.push(format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{p}}}"#));
                requests.push(format!(r#" {{ "params" : {p} , "method" : "{method}" , "jsonrpc" : "2.0" }}"#));
            }
            requests.push(format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#));
            requests.push(format!(r#"{{"jsonrpc":"1.0","method":"{method}","params":{{}}}}"#));
            requests.push(format!(r#"["2.0","{method}",{{"message":"x"}}]"#));
            requests.push(format!(r#"{{"jsonrpc":"2.0","method":"x","method":"{method}","params":{{"path":"p"}}}}"#));
        }
        let not_utf8: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":{\"message\":\"\xff\"}}";
        assert!(by_the_rule(not_utf8).is_none() && Request::parse(not_utf8).is_none());
        requests.push(String::from(r#"{"jsonrpc":"2.0","method":7}"#));
        requests.push(String::from(r#"{"jsonrpc":"2.0","method":"log","params":{"message":"x"}"#));
        for request in &requests {
            let rule = by_the_rule(request.as_bytes());
            let fast = Request::parse(request.as_bytes())
                .map(|r| (r.method.to_string(), Method::from_name(&r.method).map(|m| r.call(m))));
            match (&rule, &fast) {
                (None, None) => {}
                (Some((rule_name, rule_call)), Some((fast_name, fast_call))) => {
                    assert_eq!(rule_name, fast_name, "{request}");
                    match (rule_call, fast_call) {
                        (None, None) => {}
                        (Some(Ok(a)), Some(Ok(b))) => assert_eq!(a, b, "{request}"),
                        (Some(Err(_)), Some(Err(_))) => {}
                        other => panic!("{request}: the rule gives {:?}, the fast path {:?}", other.0, other.1),
                    }
                }
                _ => panic!("{request}: the rule reads it: {}, the fast path: {}", rule.is_some(), fast.is_some()),
            }
        }
    }

    #[test]
    fn url_hosts_are_parsed_strictly() {
        assert_eq!(url_host("https://API.example.com/x?y").unwrap(), "api.example.com");
        assert_eq!(url_host("http://127.0.0.1:8080/").unwrap(), "127.0.0.1");
        assert_eq!(url_host("http://[::1]:80/").unwrap(), "::1");
        assert!(url_host("ftp://example.com/").is_err());
        assert!(url_host("https://user@evil.com/").is_err());
        assert!(url_host("https://good.com@evil.com/").is_err());
        assert!(url_host("https:///path").is_err());
        assert!(url_host("file:///etc/passwd").is_err());
    }

    #[test]
    fn permission_checks_follow_the_grants() {
        let grants = Permissions::parse_all(["network:*.example.com", "vault:read"]).unwrap();
        let fetch = |host: &str| HostCall::NetFetch {
            url: format!("https://{host}/"),
            host: host.into(),
            method: "GET".into(),
            headers: Vec::new(),
            body: None,
        };
        assert!(fetch("api.example.com").allowed_by(&grants));
        assert!(!fetch("example.org").allowed_by(&grants));
        assert!(HostCall::VaultRead { name: "k".into() }.allowed_by(&grants));
        assert!(!HostCall::ContextRead { key: "k".into() }.allowed_by(&grants));
        assert!(HostCall::Log { level: "info".into(), message: "m".into() }.allowed_by(&Permissions::default()));
    }
}
