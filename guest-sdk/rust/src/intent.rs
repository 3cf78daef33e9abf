//! One intent: the request envelope, typed params, and the framed outcome.
//!
//! The cost of an intent is kept to the plugin's own work: the envelope is scanned for `method`
//! and `params` without building anything (and the scan stops at `params` once the method is
//! known, so the params are never read twice), the params are read in place from the request's
//! bytes, and the outcome is written straight into the response frame.

use crate::json::{self, scan};
use crate::Failure;
use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

/// Bytes of the ABI's length prefix.
const PREFIX: usize = 4;
/// The first capacity of a response frame: most outcomes fit, and a bigger one grows in place.
const FIRST_CAPACITY: usize = 256;
/// What a completed outcome's frame starts with: the (still empty) length prefix, then the JSON.
const COMPLETED: &[u8] = b"\0\0\0\0{\"status\":\"completed\",\"output\":";

/// One intent's framed outcome: the u32 little-endian length, then the outcome JSON.
#[derive(Debug)]
pub struct Response(Vec<u8>);

impl Response {
    /// A frame holding `start` after the (still empty) length prefix.
    fn frame(start: &[u8]) -> Vec<u8> {
        let mut frame = Vec::with_capacity(FIRST_CAPACITY);
        frame.extend_from_slice(start);
        frame
    }

    /// A completed outcome with `output`, or a failed `invalid_output` outcome when `output`
    /// does not serialize.
    pub fn completed<O: Serialize + ?Sized>(output: &O) -> Self {
        let mut frame = Self::frame(COMPLETED);
        match json::ser::write(&mut frame, output) {
            Ok(()) => {
                frame.push(b'}');
                Self::framed(frame)
            }
            Err(error) => Self::invalid_output(error),
        }
    }

    #[cold]
    #[inline(never)]
    fn invalid_output(error: json::Error) -> Self {
        Self::failed(
            &Failure::new("invalid_output", alloc::format!("The intent's output does not serialize: {error}."))
                .hint("This is a bug in the plugin; report it to the plugin's author."),
        )
    }

    /// A failed outcome.
    pub fn failed(failure: &Failure) -> Self {
        let mut frame = Self::frame(&[0; PREFIX]);
        failure.write_outcome(&mut frame);
        Self::framed(frame)
    }

    /// Writes the length prefix.
    fn framed(mut frame: Vec<u8>) -> Self {
        let length = u32::try_from(frame.len() - PREFIX).unwrap_or(u32::MAX);
        if let Some(prefix) = frame.get_mut(..PREFIX) {
            prefix.copy_from_slice(&length.to_le_bytes());
        }
        Self(frame)
    }

    /// The outcome JSON, without the length prefix.
    pub fn json(&self) -> &[u8] {
        self.0.get(PREFIX..).unwrap_or_default()
    }

    /// The exact-size frame the host reads (and frees with `tdm_free(ptr, 4 + length)`).
    pub fn into_frame(self) -> Box<[u8]> {
        self.0.into_boxed_slice()
    }
}

/// The `method` and the params of a JSON-RPC request: the params as the request's bytes from the
/// first byte of the `params` value on (`{}` when there are none); reading them stops at the end
/// of that value.
struct Envelope<'a> {
    method: Cow<'a, str>,
    params: &'a [u8],
}

/// The fast path of [`envelope`]: a request in the form the host writes (docs/ABI.md section 2),
/// `{"id":N,"jsonrpc":"2.0","method":"M","params":...}` with `M` ASCII without escapes, read by
/// matching its fixed parts a word at a time: the method and where the params start. `None` for
/// any other form, which [`envelope`] reads (or explains).
#[inline(never)]
fn canonical_envelope(request: &[u8]) -> Option<(&str, usize)> {
    const ID: &[u8; 8] = br#"{"id":00"#;
    const METHOD: &[u8; 27] = br#","jsonrpc":"2.0","method":""#;
    const PARAMS: &[u8; 10] = br#","params":"#;
    // `{"id":` and a digit: the first six bytes of the first word.
    let first = request.first_chunk::<8>().map(|word| u64::from_le_bytes(*word))?;
    if (first ^ u64::from_le_bytes(*ID)) & 0xffff_ffff_ffff != 0 {
        return None;
    }
    let mut at = 6;
    while request.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    if !has_at(request, at, METHOD) {
        return None;
    }
    let (end, method) = scan::plain_string(request, at + METHOD.len() - 1)?;
    has_at(request, end + 1, PARAMS).then_some((method, end + 1 + PARAMS.len()))
}

/// Whether `bytes` holds `literal` (at least 8 bytes) at `at`, compared a word at a time (the last
/// word overlapping the one before): slice equality would be a byte-by-byte `memcmp`.
#[inline(always)]
fn has_at<const N: usize>(bytes: &[u8], at: usize, literal: &[u8; N]) -> bool {
    let Some(here) = bytes.get(at..).and_then(<[u8]>::first_chunk::<N>) else { return false };
    let word = |text: &[u8; N], k: usize| {
        text.get(k..).and_then(<[u8]>::first_chunk::<8>).map(|word| u64::from_le_bytes(*word))
    };
    let mut k = 0;
    while k < N {
        let from = k.min(N.saturating_sub(8));
        if word(here, from) != word(literal, from) {
            return false;
        }
        k += 8;
    }
    true
}

/// Scans `request` (a JSON object) for `method` (a string) and `params`, building nothing: members
/// are visited in order and other values skipped, and the scan stops at `params` once the method
/// is known, so the params' bytes are not read here. Any member order, whitespace and escapes; the
/// error of a request that is not a JSON-RPC request.
#[inline(never)]
fn envelope(request: &[u8]) -> Result<Envelope<'_>, json::Error> {
    let mut scratch = Vec::new();
    let mut at = scan::skip_ws(request, 0);
    if request.get(at) != Some(&b'{') {
        return Err(json::Error::at("expected an object", at));
    }
    at = scan::skip_ws(request, at + 1);
    let (mut method, mut params) = (None, None);
    if request.get(at) != Some(&b'}') {
        loop {
            if request.get(at) != Some(&b'"') {
                return Err(json::Error::at("key must be a string", at));
            }
            let (key, after) = scan::read_string(request, at, &mut scratch, true)?;
            let key = match key {
                scan::Decoded::Borrowed(from, to) => request.get(from..to).unwrap_or_default(),
                scan::Decoded::Scratch => scratch.as_slice(),
            };
            let (is_method, is_params) = (key == b"method", key == b"params");
            at = scan::skip_ws(request, after);
            if request.get(at) != Some(&b':') {
                return Err(json::Error::at("expected `:`", at));
            }
            at = scan::skip_ws(request, at + 1);
            if is_method {
                if request.get(at) != Some(&b'"') {
                    return Err(json::Error::at("`method` must be a string", at));
                }
                let (text, after) = scan::read_string(request, at, &mut scratch, true)?;
                let text = match text {
                    scan::Decoded::Borrowed(from, to) => Cow::Borrowed(request.get(from..to).unwrap_or_default()),
                    scan::Decoded::Scratch => Cow::Owned(core::mem::take(&mut scratch)),
                };
                method = Some(match text {
                    Cow::Borrowed(bytes) => Cow::Borrowed(utf8(bytes, at)?),
                    Cow::Owned(bytes) => Cow::Owned(String::from_utf8(bytes).map_err(|_| invalid_utf8(at))?),
                });
                at = after;
            } else {
                if is_params {
                    params = Some(at);
                    if method.is_some() {
                        break;
                    }
                }
                at = scan::skip_value(request, at)?;
            }
            at = scan::skip_ws(request, at);
            match request.get(at) {
                Some(b',') => at = scan::skip_ws(request, at + 1),
                Some(b'}') => break,
                Some(_) => return Err(json::Error::at("expected `,` or `}`", at)),
                None => return Err(json::Error::at("EOF while parsing an object", at)),
            }
        }
    }
    let method = method.ok_or_else(|| json::Error::message("missing field `method`"))?;
    let params = params.and_then(|at| request.get(at..)).unwrap_or(b"{}");
    Ok(Envelope { method, params })
}

fn utf8(bytes: &[u8], at: usize) -> Result<&str, json::Error> {
    core::str::from_utf8(bytes).map_err(|_| invalid_utf8(at))
}

fn invalid_utf8(at: usize) -> json::Error {
    json::Error::at("invalid unicode code point", at)
}

/// Reads the method and params from `request` and hands both to `dispatch` (the params as the
/// request's bytes from the start of the `params` value on; `{}` when the request has none).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn handle(request: &[u8], dispatch: impl FnOnce(&str, &[u8]) -> Response) -> Response {
    if let Some((method, params)) = canonical_envelope(request) {
        crate::abi::marks::mark(crate::abi::marks::ENVELOPE);
        return dispatch(method, request.get(params..).unwrap_or_default());
    }
    match envelope(request) {
        Ok(envelope) => {
            crate::abi::marks::mark(crate::abi::marks::ENVELOPE);
            dispatch(&envelope.method, envelope.params)
        }
        Err(error) => invalid_request(error, request),
    }
}

#[cold]
#[inline(never)]
fn invalid_request(error: json::Error, request: &[u8]) -> Response {
    Response::failed(
        &Failure::new(
            "invalid_request",
            alloc::format!("The request is not a JSON-RPC request: {}.", error.locate(request)),
        )
        .hint("Send a JSON-RPC 2.0 request with a `method` and `params`."),
    )
}

/// Runs `handler` on the params read as `P` from the start of `params` (the body of one
/// `plugin!` arm). `P` may borrow from the request (`&str` fields, `#[serde(borrow)]`).
pub fn run_intent<'de, P, O, F>(method: &str, params: &'de [u8], handler: F) -> Response
where
    P: Deserialize<'de>,
    O: Serialize,
    F: FnOnce(P) -> Result<O, Failure>,
{
    let params = match read_params(params) {
        Ok(params) => params,
        Err(error) => return invalid_params(method, error),
    };
    crate::abi::marks::mark(crate::abi::marks::PARAMS);
    let result = handler(params);
    crate::abi::marks::mark(crate::abi::marks::HANDLER);
    match result {
        Ok(output) => Response::completed(&output),
        Err(failure) => Response::failed(&failure),
    }
}

#[cold]
#[inline(never)]
fn invalid_params(method: &str, error: json::Error) -> Response {
    Response::failed(
        &Failure::new("invalid_params", alloc::format!("The params of `{method}` do not fit: {error}."))
            .hint("Check the params against the intent's documentation."),
    )
}

/// One `P` from the value at the start of `params`, which must end there or be followed by the
/// rest of the request (`,` or `}`).
fn read_params<'de, P: Deserialize<'de>>(params: &'de [u8]) -> Result<P, json::Error> {
    let (value, end) = json::de::from_prefix::<P>(params)?;
    let after = scan::skip_ws(params, end);
    match params.get(after) {
        None | Some(b',' | b'}') => Ok(value),
        Some(_) => Err(trailing(params, after)),
    }
}

#[cold]
#[inline(never)]
fn trailing(params: &[u8], at: usize) -> json::Error {
    json::Error::at("trailing characters", at + 1).locate(params)
}

/// The failed outcome for an intent the plugin does not offer.
#[cold]
#[inline(never)]
pub fn unknown_intent(method: &str, offered: &[&str]) -> Response {
    let mut list = String::new();
    for (i, name) in offered.iter().enumerate() {
        if i > 0 {
            list.push_str(", ");
        }
        list.push_str(name);
    }
    Response::failed(
        &Failure::new("unknown_intent", alloc::format!("This plugin has no intent `{method}`; it offers: {list}."))
            .hint("Call one of the intents the plugin offers."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[derive(Deserialize)]
    struct Params {
        name: String,
    }

    fn greet(p: Params) -> Result<Value, Failure> {
        if p.name.is_empty() {
            return Err(Failure::new("empty_name", "No name.").hint("Give a name.").retryable(true));
        }
        Ok(json!({ "greeting": alloc::format!("Hello, {}!", p.name) }))
    }

    /// A handler whose params borrow from the request.
    #[derive(Deserialize)]
    struct Borrowed<'a> {
        name: &'a str,
    }

    fn borrowed(p: Borrowed<'_>) -> Result<usize, Failure> {
        Ok(p.name.len())
    }

    fn dispatch(method: &str, params: &[u8]) -> Response {
        match method {
            "greet" => run_intent(method, params, greet),
            "len" => run_intent(method, params, borrowed),
            _ => unknown_intent(method, &["greet", "len"]),
        }
    }

    fn outcome_of(request: &[u8]) -> Value {
        let frame = handle(request, dispatch).into_frame();
        let length = u32::from_le_bytes(frame[..4].try_into().unwrap()) as usize;
        assert_eq!(length + 4, frame.len());
        serde_json::from_slice(&frame[4..]).unwrap()
    }

    fn outcome(request: Value) -> Value {
        outcome_of(&serde_json::to_vec(&request).unwrap())
    }

    #[test]
    fn completed_failed_unknown_and_bad_params() {
        let request =
            |method: &str, params: Value| json!({"id": 1, "jsonrpc": "2.0", "method": method, "params": params});
        assert_eq!(
            outcome(request("greet", json!({"name": "Ada"}))),
            json!({"status": "completed", "output": {"greeting": "Hello, Ada!"}})
        );
        assert_eq!(
            outcome(request("greet", json!({"name": ""}))),
            json!({"status": "failed", "message": "No name.", "blockedReason": "empty_name",
                   "recoveryHint": "Give a name.", "output": {"retryable": true}})
        );
        let unknown = outcome(request("nope", json!({})));
        assert_eq!(unknown["blockedReason"], "unknown_intent");
        assert_eq!(unknown["message"], "This plugin has no intent `nope`; it offers: greet, len.");
        let bad = outcome(request("greet", json!({"name": 7})));
        assert_eq!(bad["blockedReason"], "invalid_params");
        assert_eq!(
            bad["message"],
            "The params of `greet` do not fit: invalid type: integer `7`, expected a string at line 1 column 9."
        );
        assert_eq!(bad["output"]["retryable"], false);
        assert_eq!(outcome(request("len", json!({"name": "héllo"})))["output"], 6);
        // A borrowed `&str` cannot hold an escaped string: serde's own error.
        assert_eq!(outcome(request("len", json!({"name": "a\"b"})))["blockedReason"], "invalid_params");
    }

    #[test]
    fn the_hosts_form_is_read_by_the_fast_path_and_every_other_form_by_the_scanner() {
        let canonical = br#"{"id":17,"jsonrpc":"2.0","method":"greet","params":{"name":"Ada"}}"#;
        assert_eq!(canonical_envelope(canonical), Some(("greet", 51)));
        assert_eq!(canonical[51], b'{');
        for other in [
            &br#"{"id":17,"jsonrpc":"2.0","method":"gr\u0065et","params":{"name":"Ada"}}"#[..],
            br#"{"id":17, "jsonrpc":"2.0","method":"greet","params":{"name":"Ada"}}"#,
            br#"{"id":17,"jsonrpc":"2.0","method":"greet"}"#,
            br#"{"id":"x","jsonrpc":"2.0","method":"greet","params":{}}"#,
            br#"{"id":1,"jsonrpc":"2.0","method":"gr"#,
            b"{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"gr\xc3\xa9et\",\"params\":{}}",
        ] {
            assert_eq!(canonical_envelope(other), None, "{}", String::from_utf8_lossy(other));
        }
        assert!(has_at(b"0123456789abcdefXY", 2, b"23456789abcdef"));
        assert!(!has_at(b"0123456789abcdefXY", 2, b"23456789abcdeF"));
        assert!(!has_at(b"0123456789abcdefXY", 2, b"93456789abcdef"));
        assert!(has_at(b"0123456789abcdefXY", 10, b"abcdefXY"));
        assert!(!has_at(b"0123456789abcdefXY", 11, b"abcdefXY"));
    }

    #[test]
    fn the_envelope_is_read_in_any_order_with_escapes_and_without_params() {
        let reordered = br#"{"params":{"name":"Bo"},"id":2,"method":"greet","jsonrpc":"2.0"}"#;
        assert_eq!(outcome_of(reordered)["output"]["greeting"], "Hello, Bo!");
        let escaped = br#" { "me\u0074hod" : "gr\u0065et" , "params" : { "name" : "\u00e9\"" } } "#;
        assert_eq!(outcome_of(escaped)["output"]["greeting"], "Hello, é\"!");
        let value = outcome_of(br#"{"jsonrpc":"2.0","id":3,"method":"greet"}"#);
        assert_eq!(value["blockedReason"], "invalid_params");
        assert!(value["message"].as_str().unwrap().contains("missing field `name`"), "{value}");
        for bad in [&b"not json"[..], b"{}", br#"{"method":7}"#, br#"{"method":"greet""#, b"", br#"{"id":1,}"#] {
            assert_eq!(outcome_of(bad)["blockedReason"], "invalid_request", "{}", String::from_utf8_lossy(bad));
        }
        // Params that are not one JSON value followed by the rest of the request.
        let value = outcome_of(br#"{"method":"greet","params":{"name":"x"} x}"#);
        assert_eq!(value["blockedReason"], "invalid_params");
    }
}
