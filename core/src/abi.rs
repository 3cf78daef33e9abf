//! The TDM IPC ABI on the host side (docs/ABI.md section 2): the JSON-RPC request bytes, and the
//! bounds-checked reading of `[u32 LE length][JSON]` from guest memory. Pure functions over
//! byte slices, so every rule is unit-testable without an engine.

use crate::guest::region;
use crate::reason::{BlockedReason, Failure};
use alloc::format;
use alloc::vec::Vec;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// A request whose params are JSON text already: its members in the order [`request`] writes
/// them (serde_json's `Map` keeps keys sorted), so both give the same bytes for the same params.
#[derive(Serialize)]
struct RawRequest<'a> {
    id: u64,
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a RawValue,
}

/// Serializes a JSON-RPC 2.0 request whose params are JSON text, passed through as they are
/// (no number is rounded, no key reordered): what a user typed is what the plugin reads.
pub fn request_raw(id: u64, method: &str, params: &RawValue) -> Vec<u8> {
    serde_json::to_vec(&RawRequest { id, jsonrpc: "2.0", method, params }).unwrap_or_default()
}

/// Serializes a JSON-RPC 2.0 request.
pub fn request(id: u64, method: &str, params: &Value) -> Vec<u8> {
    let mut object = serde_json::Map::new();
    object.insert("jsonrpc".into(), Value::from("2.0"));
    object.insert("id".into(), Value::from(id));
    object.insert("method".into(), Value::from(method));
    object.insert("params".into(), params.clone());
    serde_json::to_vec(&Value::Object(object)).unwrap_or_default()
}

/// Checks the region `tdm_alloc` returned for the request; returns its byte range.
pub fn check_request_region(ptr: u32, len: u32, memory_len: usize) -> Result<core::ops::Range<usize>, Failure> {
    if ptr == 0 {
        return Err(Failure::new(BlockedReason::AllocationFailed, format!("tdm_alloc({len}) returned 0.")));
    }
    region(ptr, len, memory_len).ok_or_else(|| {
        Failure::new(
            BlockedReason::AllocationFailed,
            format!("tdm_alloc({len}) returned {ptr:#x}, past the end of memory ({memory_len} bytes)."),
        )
    })
}

/// Reads the response length at `ptr` and returns the byte range of the JSON, checking the
/// length field and the body against memory and the body against `max_len`.
pub fn response_range(memory: &[u8], ptr: u32, max_len: u32) -> Result<core::ops::Range<usize>, Failure> {
    let invalid = |detail| Failure::new(BlockedReason::InvalidResponse, detail);
    let header = region(ptr, 4, memory.len()).ok_or_else(|| {
        invalid(format!(
            "The response pointer {ptr:#x} leaves no room for its length in memory of {} bytes.",
            memory.len()
        ))
    })?;
    let header_end = header.end;
    let start = header.start;
    let length = u32::from_le_bytes([memory[start], memory[start + 1], memory[start + 2], memory[start + 3]]);
    if length > max_len {
        return Err(Failure::new(
            BlockedReason::ResponseTooLarge,
            format!("The response claims {length} bytes; the limit is {max_len}."),
        ));
    }
    let body_end = header_end.checked_add(length as usize).filter(|end| *end <= memory.len());
    let body_end = body_end.ok_or_else(|| {
        invalid(format!(
            "The response at {ptr:#x} claims {length} bytes, past the end of memory ({} bytes).",
            memory.len()
        ))
    })?;
    Ok(header_end..body_end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_params_give_the_same_bytes_as_parsed_ones_and_keep_what_parsing_would_change() {
        // Compact, keys sorted, strings unescaped: what serde_json writes for parsed params.
        let text = r#"{"n":[1,2.5,"é"],"name":"Ada"}"#;
        let raw: alloc::boxed::Box<RawValue> = serde_json::from_str(text).unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(request_raw(7, "greet", &raw), request(7, "greet", &value));
        // Numbers past u64 and f64's precision, and key order, reach the plugin as written.
        let exact = r#"{"z":123456789012345678901234567890,"a":1.0000000000000000001}"#;
        let raw: alloc::boxed::Box<RawValue> = serde_json::from_str(exact).unwrap();
        let bytes = request_raw(1, "m\"x", &raw);
        let expected = alloc::format!(r#"{{"id":1,"jsonrpc":"2.0","method":"m\"x","params":{exact}}}"#);
        assert_eq!(core::str::from_utf8(&bytes).unwrap(), expected);
    }

    fn framed(at: usize, body: &[u8], memory_len: usize) -> Vec<u8> {
        let mut memory = alloc::vec![0u8; memory_len];
        memory[at..at + 4].copy_from_slice(&(body.len() as u32).to_le_bytes());
        memory[at + 4..at + 4 + body.len()].copy_from_slice(body);
        memory
    }

    #[test]
    fn reads_a_framed_response() {
        let memory = framed(8, b"{}", 64);
        assert_eq!(response_range(&memory, 8, 100).unwrap(), 12..14);
    }

    #[test]
    fn refuses_a_pointer_whose_length_field_overflows() {
        let memory = alloc::vec![0u8; 64];
        let failure = response_range(&memory, u32::MAX - 1, 100).unwrap_err();
        assert_eq!(failure.reason, BlockedReason::InvalidResponse);
        let failure = response_range(&memory, 61, 100).unwrap_err();
        assert_eq!(failure.reason, BlockedReason::InvalidResponse);
    }

    #[test]
    fn refuses_a_body_past_memory_and_over_the_limit() {
        let mut memory = framed(0, b"{}", 64);
        memory[0..4].copy_from_slice(&61u32.to_le_bytes());
        assert_eq!(response_range(&memory, 0, 100).unwrap_err().reason, BlockedReason::InvalidResponse);
        memory[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(response_range(&memory, 0, u32::MAX).unwrap_err().reason, BlockedReason::InvalidResponse);
        assert_eq!(response_range(&memory, 0, 10).unwrap_err().reason, BlockedReason::ResponseTooLarge);
    }

    #[test]
    fn request_regions_are_checked() {
        assert_eq!(check_request_region(0, 4, 64).unwrap_err().reason, BlockedReason::AllocationFailed);
        assert_eq!(check_request_region(62, 4, 64).unwrap_err().reason, BlockedReason::AllocationFailed);
        assert_eq!(check_request_region(u32::MAX, 4, 64).unwrap_err().reason, BlockedReason::AllocationFailed);
        assert!(check_request_region(60, 4, 64).is_ok());
    }
}
