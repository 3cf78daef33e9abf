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
#[inline]
pub fn check_request_region(ptr: u32, len: u32, memory_len: usize) -> Result<core::ops::Range<usize>, Failure> {
    match region(ptr, len, memory_len) {
        Some(range) if ptr != 0 => Ok(range),
        _ => Err(request_region_failure(ptr, len, memory_len)),
    }
}

/// Why `tdm_alloc`'s region was refused (out of line: the path every intent takes is the
/// check above, inlined where the sandbox writes the request).
#[cold]
#[inline(never)]
fn request_region_failure(ptr: u32, len: u32, memory_len: usize) -> Failure {
    let detail = if ptr == 0 {
        format!("tdm_alloc({len}) returned 0.")
    } else {
        format!("tdm_alloc({len}) returned {ptr:#x}, past the end of memory ({memory_len} bytes).")
    };
    Failure::new(BlockedReason::AllocationFailed, detail)
}

/// Reads the response length at `ptr` and returns the byte range of the JSON, checking the
/// length field and the body against memory and the body against `max_len`.
#[inline]
pub fn response_range(memory: &[u8], ptr: u32, max_len: u32) -> Result<core::ops::Range<usize>, Failure> {
    let Some(header) = region(ptr, 4, memory.len()) else {
        return Err(response_range_failure(memory.len(), ptr, None, max_len));
    };
    let length = match memory.get(header.clone()) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => return Err(response_range_failure(memory.len(), ptr, None, max_len)),
    };
    match header.end.checked_add(length as usize) {
        Some(body_end) if length <= max_len && body_end <= memory.len() => Ok(header.end..body_end),
        _ => Err(response_range_failure(memory.len(), ptr, Some(length), max_len)),
    }
}

/// Why a response's range was refused: no room for its length field (`length` is `None`), a
/// length past `max_len`, or a body past the end of memory (out of line, as above).
#[cold]
#[inline(never)]
fn response_range_failure(memory_len: usize, ptr: u32, length: Option<u32>, max_len: u32) -> Failure {
    match length {
        None => Failure::new(
            BlockedReason::InvalidResponse,
            format!("The response pointer {ptr:#x} leaves no room for its length in memory of {memory_len} bytes."),
        ),
        Some(length) if length > max_len => Failure::new(
            BlockedReason::ResponseTooLarge,
            format!("The response claims {length} bytes; the limit is {max_len}."),
        ),
        Some(length) => Failure::new(
            BlockedReason::InvalidResponse,
            format!("The response at {ptr:#x} claims {length} bytes, past the end of memory ({memory_len} bytes)."),
        ),
    }
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
    fn each_refusal_says_what_was_wrong() {
        let message = |result: Result<core::ops::Range<usize>, Failure>| result.unwrap_err().detail;
        let mut memory = framed(0, b"{}", 64);
        assert_eq!(
            message(response_range(&memory, 61, 100)),
            "The response pointer 0x3d leaves no room for its length in memory of 64 bytes."
        );
        memory[0..4].copy_from_slice(&61u32.to_le_bytes());
        assert_eq!(
            message(response_range(&memory, 0, 100)),
            "The response at 0x0 claims 61 bytes, past the end of memory (64 bytes)."
        );
        assert_eq!(message(response_range(&memory, 0, 60)), "The response claims 61 bytes; the limit is 60.");
        assert_eq!(message(check_request_region(0, 4, 64)), "tdm_alloc(4) returned 0.");
        assert_eq!(
            message(check_request_region(62, 4, 64)),
            "tdm_alloc(4) returned 0x3e, past the end of memory (64 bytes)."
        );
    }

    #[test]
    fn request_regions_are_checked() {
        assert_eq!(check_request_region(0, 4, 64).unwrap_err().reason, BlockedReason::AllocationFailed);
        assert_eq!(check_request_region(62, 4, 64).unwrap_err().reason, BlockedReason::AllocationFailed);
        assert_eq!(check_request_region(u32::MAX, 4, 64).unwrap_err().reason, BlockedReason::AllocationFailed);
        assert!(check_request_region(60, 4, 64).is_ok());
    }
}
