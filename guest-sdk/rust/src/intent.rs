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

/// The fast path of [`envelope`], for the members JSON-RPC defines in any order and spacing (the
/// host writes `id` first, most writers `jsonrpc` first, some `id` last; Python's `json.dumps` and
/// pretty-printers add spaces), at one cost whatever the order: the members are visited in order,
/// each told apart by the first letter of its key, and the scan stops at `params` once the method
/// is known, as [`envelope`]'s does. `None` for anything else (another key, an escape in a key or
/// the method, a second `method`, `params` before `method`, a request without params, any error),
/// which [`envelope`] reads or explains.
///
/// Shaped for two costs of wasmi's. Its fuel charges every operator of a loop's body (or a
/// function's) on each round, taken or not, so code in the loop is paid four times; a call costs
/// some 150 host instructions and more time than that. Four calls fewer here took 5-6% off the
/// time of a 128 B greet for 4% more fuel. So the compact `jsonrpc` and `id` members (a word
/// compare, a digit loop) are read in the loop, and `method` and `params` (a string scan; the end)
/// by a call each; other spacings are out of line. In line in `tdm_plugin_execute_intent`, its
/// only caller. Any order costs within 5% of the host's (issue 25,
/// `std-host/tdm/tests/examples_rust.rs`).
#[inline(always)]
fn plain_envelope(request: &[u8]) -> Option<(&str, usize)> {
    let open = scan::skip_ws(request, 0);
    if request.get(open) != Some(&b'{') {
        return None;
    }
    let mut at = open + 1;
    let mut method = None;
    // `at` is on a key's opening quote or whitespace before it; each member's function answers
    // where the member ends (after its `,`), or `NO_MEMBER` for anything it does not read.
    while at != NO_MEMBER {
        at = scan::skip_ws(request, at);
        at = match request.get(at + 1) {
            Some(b'j') => jsonrpc_member(request, at),
            Some(b'i') => id_member(request, at),
            Some(b'm') => method_member(request, at, &mut method),
            Some(b'p') => return params_start(request, at).and_then(|params| method.map(|method| (method, params))),
            _ => NO_MEMBER,
        };
    }
    None
}

/// What a member's function answers when the member is not in a form it reads (no key starts at
/// 0: the request's `{` is there or before).
const NO_MEMBER: usize = 0;

/// The `jsonrpc` member whose key is at `at` (its value skipped, as [`envelope`] does): where it
/// ends.
#[inline(always)]
fn jsonrpc_member(request: &[u8], at: usize) -> usize {
    if has_at(request, at, br#""jsonrpc":"2.0","#) {
        return at + 16;
    }
    jsonrpc_spaced(request, at)
}

/// [`jsonrpc_member`] in any spacing.
#[inline(never)]
fn jsonrpc_spaced(request: &[u8], at: usize) -> usize {
    if has_at(request, at, br#""jsonrpc": "2.0","#) {
        return at + 17;
    }
    const VERSION: u64 = u64::from_le_bytes(*b"\"2.0\"\0\0\0");
    let value = spaced_value(request, at, Key::JSONRPC);
    if value == NO_MEMBER {
        return NO_MEMBER;
    }
    if word_at(request, value) & 0xff_ffff_ffff == VERSION {
        return member_end(request, value + 5);
    }
    scan::skip_value(request, value).map_or(NO_MEMBER, |end| member_end(request, end))
}

/// The `id` member whose key is at `at` (digits read here, any other value skipped): where it ends.
#[inline(always)]
fn id_member(request: &[u8], at: usize) -> usize {
    const KEY: u64 = u64::from_le_bytes(*b"\"id\": \0\0");
    let word = word_at(request, at);
    // `"id":` then digits, or `"id": ` (Python's spacing) then digits.
    let value = if word & 0xff_ffff_ffff == KEY & 0xff_ffff_ffff {
        at + 5 + usize::from(word & 0xffff_ffff_ffff == KEY)
    } else {
        at
    };
    let end = digits_end(request, value);
    if end > value && value > at && request.get(end) == Some(&b',') {
        return end + 1;
    }
    id_spaced(request, at)
}

/// [`id_member`] in any spacing.
#[inline(never)]
fn id_spaced(request: &[u8], at: usize) -> usize {
    match spaced_value(request, at, Key::ID) {
        NO_MEMBER => NO_MEMBER,
        value => scan::skip_value(request, value).map_or(NO_MEMBER, |end| member_end(request, end)),
    }
}

/// The index after the digits from `at`.
#[inline(always)]
fn digits_end(request: &[u8], mut at: usize) -> usize {
    while request.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    at
}

/// The `method` member whose key is at `at`: the method (plain ASCII, the first one only) goes in
/// `method`; where the member ends.
#[inline(never)]
fn method_member<'a>(request: &'a [u8], at: usize, method: &mut Option<&'a str>) -> usize {
    if method.is_some() {
        return NO_MEMBER;
    }
    let value = if has_at(request, at, br#""method":""#) { at + 9 } else { method_spaced(request, at) };
    let Some((end, text)) = scan::plain_string(request, value) else { return NO_MEMBER };
    *method = Some(text);
    if request.get(end + 1) == Some(&b',') {
        return end + 2;
    }
    member_end(request, end + 1)
}

/// Where the value of the `method` member at `at` starts, in any spacing.
#[inline(never)]
fn method_spaced(request: &[u8], at: usize) -> usize {
    if has_at(request, at, br#""method": ""#) {
        return at + 10;
    }
    spaced_value(request, at, Key::METHOD)
}

/// Where the value of the `params` member whose key is at `at` starts.
#[inline(never)]
fn params_start(request: &[u8], at: usize) -> Option<usize> {
    let value = if has_at(request, at, br#""params":"#) {
        scan::skip_ws(request, at + 9)
    } else {
        spaced_value(request, at, Key::PARAMS)
    };
    (value != NO_MEMBER).then_some(value)
}

/// A key [`spaced_value`] matches: its first 8 bytes (quote included; zeros past a shorter key),
/// which of them count, and its length with both quotes.
struct Key {
    word: u64,
    mask: u64,
    length: usize,
}

impl Key {
    const JSONRPC: Key = Key { word: u64::from_le_bytes(*b"\"jsonrpc"), mask: u64::MAX, length: 9 };
    const ID: Key = Key { word: u64::from_le_bytes(*b"\"id\"\0\0\0\0"), mask: 0xffff_ffff, length: 4 };
    const METHOD: Key = Key { word: u64::from_le_bytes(*b"\"method\""), mask: u64::MAX, length: 8 };
    const PARAMS: Key = Key { word: u64::from_le_bytes(*b"\"params\""), mask: u64::MAX, length: 8 };
}

/// Where the value of the member at `at` starts when its key is `key` followed by `:`, with any
/// whitespace around the colon; [`NO_MEMBER`] for anything else.
#[inline(never)]
fn spaced_value(request: &[u8], at: usize, key: Key) -> usize {
    let quote = at + key.length - 1;
    if word_at(request, at) & key.mask != key.word || request.get(quote) != Some(&b'"') {
        return NO_MEMBER;
    }
    let colon = scan::skip_ws(request, quote + 1);
    if request.get(colon) != Some(&b':') {
        return NO_MEMBER;
    }
    scan::skip_ws(request, colon + 1)
}

/// The 8 bytes at `at` as a little-endian word (0 where fewer are left).
#[inline(always)]
fn word_at(request: &[u8], at: usize) -> u64 {
    request.get(at..).and_then(<[u8]>::first_chunk::<8>).map_or(0, |word| u64::from_le_bytes(*word))
}

/// Where a member whose value ends at `end` ends: after whitespace and its `,`; [`NO_MEMBER`] when
/// no `,` follows.
#[inline(never)]
fn member_end(request: &[u8], end: usize) -> usize {
    let comma = scan::skip_ws(request, end);
    if request.get(comma) != Some(&b',') {
        return NO_MEMBER;
    }
    comma + 1
}

/// Whether `bytes` holds `literal` (8 to 24 bytes, checked when it is compiled) at `at`, compared
/// a word at a time in one straight line (the last word overlapping the one before): slice
/// equality would be a byte-by-byte `memcmp`.
#[inline(always)]
fn has_at<const N: usize>(bytes: &[u8], at: usize, literal: &[u8; N]) -> bool {
    const { assert!(8 <= N && N <= 24, "has_at compares 8 to 24 bytes") };
    let Some(here) = bytes.get(at..).and_then(<[u8]>::first_chunk::<N>) else { return false };
    let word = |text: &[u8; N], k: usize| {
        text.get(k..).and_then(<[u8]>::first_chunk::<8>).map(|word| u64::from_le_bytes(*word))
    };
    let last = N - 8;
    if N <= 16 {
        return word(here, 0) == word(literal, 0) && word(here, last) == word(literal, last);
    }
    word(here, 0) == word(literal, 0) && word(here, 8) == word(literal, 8) && word(here, last) == word(literal, last)
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
    if let Some((method, params)) = plain_envelope(request) {
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
    fn has_at_compares_every_byte_of_the_literal() {
        assert!(has_at(b"0123456789abcdefXY", 2, b"23456789abcdef"));
        assert!(!has_at(b"0123456789abcdefXY", 2, b"23456789abcdeF"));
        assert!(!has_at(b"0123456789abcdefXY", 2, b"93456789abcdef"));
        assert!(has_at(b"0123456789abcdefXY", 10, b"abcdefXY"));
        assert!(!has_at(b"0123456789abcdefXY", 11, b"abcdefXY"));
        assert!(has_at(b"0123456789abcdefghijXY", 1, b"123456789abcdefghij"));
        assert!(!has_at(b"0123456789abcdefghijXY", 1, b"123456789abcdeFghij"));
        assert!(!has_at(b"0123456789abcdefghijXY", 1, b"123456789abcdefghiJ"));
        assert!(!has_at(b"0123456789abcdefghijXY", 1, b"_23456789abcdefghij"));
    }

    #[test]
    fn the_plain_path_reads_any_order_and_spacing_as_the_scanner_does() {
        for (request, method) in [
            (&br#"{"jsonrpc":"2.0","id":1,"method":"greet","params":{"name":"Ada"}}"#[..], "greet"),
            (br#"{"jsonrpc":"2.0","method":"len","params":{"name":"Ada"},"id":1}"#, "len"),
            (b"\n{ \"jsonrpc\" : \"2.0\",\n  \"id\": [1, {\"a\": \"}\"}],\r\n\t\"method\": \"greet\" , \"params\":{}}", "greet"),
            (br#"{"id":"x","method":"m","params":7}"#, "m"),
            (br#"{"id":17,"jsonrpc":"2.0","method":"greet","params":{"name":"Ada"}}"#, "greet"),
            (br#"{"jsonrpc": "2.0", "id": 12, "method": "greet", "params": {"name": "Ada"}}"#, "greet"),
            (br#"{"jsonrpc":"1.0","id":1e3,"method":"greet","params":{}}"#, "greet"),
            (br#"{"jsonrpc":"2.0","id":null,"method":"greet","params":{}}"#, "greet"),
            (br#"{"id" :7 ,"method" :"m" ,"params" :[]}"#, "m"),
        ] {
            let text = String::from_utf8_lossy(request);
            let (found, at) = plain_envelope(request).unwrap_or_else(|| panic!("{text}"));
            let scanned = envelope(request).unwrap();
            assert_eq!((found, &request[at..]), (&*scanned.method, scanned.params), "{text}");
            assert_eq!(found, method);
        }
        for other in [
            &br#"{"params":{"name":"Bo"},"id":2,"method":"greet"}"#[..],
            br#"{"method":"a","method":"b","params":{}}"#,
            br#"{"m\u0065thod":"greet","params":{}}"#,
            br#"{"method":"gr\u0065et","params":{}}"#,
            br#"{"jsonrpc":"2.0","method":"greet"}"#,
            br#"{"jsonrpc":"2.0","method":"greet" "params":{}}"#,
            br#"{"jsonrpc":"2.0","id":,"method":"greet","params":{}}"#,
            br#"["method","params"]"#,
            br#"{"id":1,"extra":null,"method":"m","params":7}"#,
            br#"{"jsonrpcx":"2.0","method":"m","params":7}"#,
            br#"{"idx":1,"method":"m","params":7}"#,
            br#"{"id":1,"method":"m","paramsx":7}"#,
            br#"{"id":1,"method":"m""#,
            br#"{"id":1,"jsonrpc":"2.0","method":"gr"#,
            b"{\"id\":1,\"method\":\"gr\xc3\xa9et\",\"params\":{}}",
            b"{\"id\":1",
            b"{",
            b"",
        ] {
            assert_eq!(plain_envelope(other), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn the_plain_path_never_disagrees_with_the_scanner_on_damaged_requests() {
        // Every one-byte deletion and every replacement with a byte that matters to the scan: the
        // fast path may decline (the scanner then reads or explains the request), never differ.
        let seeds: [&[u8]; 3] = [
            br#"{"jsonrpc":"2.0","id":1,"method":"greet","params":{"name":"Ada"}}"#,
            br#"{"jsonrpc": "2.0", "method": "greet", "params": {"name": "Ada"}, "id": 12}"#,
            b"{\n  \"id\": 7,\n  \"method\": \"len\",\n  \"params\": []\n}",
        ];
        let mut checked = 0;
        for seed in seeds {
            for at in 0..seed.len() {
                let mut variants = alloc::vec![[&seed[..at], &seed[at + 1..]].concat()];
                for byte in [b'"', b'\\', b',', b':', b' ', b'{', b'}', b'[', b'0', b'x', 0xc3] {
                    let mut changed = seed.to_vec();
                    changed[at] = byte;
                    variants.push(changed);
                }
                for request in variants {
                    if let Some((method, at)) = plain_envelope(&request) {
                        let scanned = envelope(&request)
                            .unwrap_or_else(|e| panic!("{e:?}: {}", String::from_utf8_lossy(&request)));
                        assert_eq!((method, &request[at..]), (&*scanned.method, scanned.params));
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "{checked}");
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
