//! Target 5: plugin response bytes through core's framing (`abi::response_range`, the input
//! read as guest memory, its first 4 bytes as the response pointer) and its outcome reader
//! (`Outcome::from_response`). Oracles: no panic; a response core accepts is JSON any std
//! reader takes (serde_json into a tree) with the status core read.
#![no_main]
use contour_core::Outcome;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() >= 4 {
        let ptr = u32::from_le_bytes([data[0], data[1], data[2], data[3]]) % 64;
        let memory = &data[4..];
        if let Ok(range) = contour_core::response_range(memory, ptr, 4096) {
            assert!(range.end <= memory.len() && range.start == ptr as usize + 4);
        }
    }
    if let Ok(outcome) = Outcome::from_response(data.to_vec()) {
        if let Some(value) = contour_fuzz::assert_tree_json(&outcome.json) {
            let status = if outcome.is_completed() { "completed" } else { "failed" };
            assert_eq!(value.get("status").and_then(|s| s.as_str()), Some(status));
        }
        if let Some(output) = outcome.output_json() {
            contour_fuzz::assert_tree_json(output);
        }
    }
});
