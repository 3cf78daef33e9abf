//! One intent: the request envelope, typed params, and the framed outcome.

use crate::Failure;
use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Bytes of the ABI's length prefix.
const PREFIX: usize = 4;

/// One intent's outcome JSON, framed for the host by [`Response::into_frame`].
#[derive(Debug)]
pub struct Response(Vec<u8>);

impl Response {
    /// A completed outcome with `output`, or a failed `invalid_output` outcome when `output`
    /// does not serialize.
    pub fn completed<O: Serialize>(output: &O) -> Self {
        #[derive(Serialize)]
        struct Completed<'a, O> {
            status: &'static str,
            output: &'a O,
        }
        match serde_json::to_vec(&Completed { status: "completed", output }) {
            Ok(json) => Self(json),
            Err(error) => Self::failed(
                &Failure::new("invalid_output", alloc::format!("The intent's output does not serialize: {error}."))
                    .hint("This is a bug in the plugin; report it to the plugin's author."),
            ),
        }
    }

    /// A failed outcome.
    pub fn failed(failure: &Failure) -> Self {
        Self(failure.to_json())
    }

    /// The outcome JSON, without the length prefix.
    pub fn json(&self) -> &[u8] {
        &self.0
    }

    /// The exact-size frame the host reads (and frees with `tdm_free(ptr, 4 + length)`): a u32
    /// little-endian length, then the outcome JSON.
    pub fn into_frame(self) -> Box<[u8]> {
        let length = u32::try_from(self.0.len()).unwrap_or(u32::MAX);
        let mut frame = Vec::with_capacity(PREFIX + self.0.len());
        frame.extend_from_slice(&length.to_le_bytes());
        frame.extend_from_slice(&self.0);
        frame.into_boxed_slice()
    }
}

/// A JSON-RPC request read in one pass: the method (borrowed unless it holds escapes) and the
/// params left as raw text for the intent's own typed reader.
#[derive(Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Envelope<'a> {
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// Reads the method and params from `request` and hands both to `dispatch` (params as JSON
/// text; `{}` when the request has none). The request is scanned once; only the params are
/// read again, typed, by [`run_intent`].
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn handle(request: &[u8], dispatch: impl FnOnce(&str, &[u8]) -> Response) -> Response {
    match serde_json::from_slice::<Envelope<'_>>(request) {
        Ok(envelope) => {
            crate::abi::marks::mark(crate::abi::marks::ENVELOPE);
            dispatch(&envelope.method, envelope.params.map_or(b"{}", |raw| raw.get().as_bytes()))
        }
        Err(error) => Response::failed(
            &Failure::new("invalid_request", alloc::format!("The request is not a JSON-RPC request: {error}."))
                .hint("Send a JSON-RPC 2.0 request with a `method` and `params`."),
        ),
    }
}

/// Runs `handler` on `params` (the request's params as JSON text) read as `P` (the body of one
/// `plugin!` arm).
pub fn run_intent<P, O, F>(method: &str, params: &[u8], handler: F) -> Response
where
    P: DeserializeOwned,
    O: Serialize,
    F: FnOnce(P) -> Result<O, Failure>,
{
    let params = match serde_json::from_slice::<P>(params) {
        Ok(params) => params,
        Err(error) => {
            return Response::failed(
                &Failure::new("invalid_params", alloc::format!("The params of `{method}` do not fit: {error}."))
                    .hint("Check the params against the intent's documentation."),
            )
        }
    };
    crate::abi::marks::mark(crate::abi::marks::PARAMS);
    let result = handler(params);
    crate::abi::marks::mark(crate::abi::marks::HANDLER);
    match result {
        Ok(output) => Response::completed(&output),
        Err(failure) => Response::failed(&failure),
    }
}

/// The failed outcome for an intent the plugin does not offer.
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

    fn dispatch(method: &str, params: &[u8]) -> Response {
        match method {
            "greet" => run_intent(method, params, greet),
            _ => unknown_intent(method, &["greet"]),
        }
    }

    fn outcome(request: Value) -> Value {
        let bytes = serde_json::to_vec(&request).unwrap();
        let frame = handle(&bytes, dispatch).into_frame();
        let length = u32::from_le_bytes(frame[..4].try_into().unwrap()) as usize;
        assert_eq!(length + 4, frame.len());
        serde_json::from_slice(&frame[4..]).unwrap()
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
        assert_eq!(unknown["message"], "This plugin has no intent `nope`; it offers: greet.");
        let bad = outcome(request("greet", json!({"name": 7})));
        assert_eq!(bad["blockedReason"], "invalid_params");
        assert_eq!(bad["output"]["retryable"], false);
        // Params may come before the method, and may be absent (read as `{}`).
        let reordered = br#"{"params":{"name":"Bo"},"id":2,"method":"greet","jsonrpc":"2.0"}"#;
        let frame = handle(reordered, dispatch).into_frame();
        let value: Value = serde_json::from_slice(&frame[4..]).unwrap();
        assert_eq!(value["output"]["greeting"], "Hello, Bo!");
        let frame = handle(br#"{"jsonrpc":"2.0","id":3,"method":"greet"}"#, dispatch).into_frame();
        let value: Value = serde_json::from_slice(&frame[4..]).unwrap();
        assert_eq!(value["blockedReason"], "invalid_params");
        assert!(value["message"].as_str().unwrap().contains("missing field `name`"), "{value}");
        let frame = handle(b"not json", dispatch).into_frame();
        let value: Value = serde_json::from_slice(&frame[4..]).unwrap();
        assert_eq!(value["blockedReason"], "invalid_request");
    }
}
