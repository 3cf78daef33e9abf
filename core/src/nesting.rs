//! How deeply JSON text nests, measured by one scan over its bytes (no recursion, no tree), so
//! the host can refuse params and host-call requests nested past `Policy::max_request_depth`
//! before anything parses them into a tree: a plugin's own parser may overflow its stack on
//! text 100,000 levels deep, and serde_json's tree reader refuses past 128.

/// Whether the JSON text `bytes` has an array or object nested more than `limit` levels deep
/// (a top-level object is level 1). Brackets inside strings (escapes included) do not count;
/// text that is not JSON is measured all the same (its parser refuses it later). Stops at the
/// first bracket past the limit.
pub fn deeper_than(bytes: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in bytes {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The params' nesting limit as a limit on a JSON-RPC request holding them: the request's own
/// object is one level more.
pub fn request_limit(max_params_depth: usize) -> usize {
    max_params_depth.saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;

    fn nested(levels: usize) -> String {
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert!(!deeper_than(b"1", 0));
        assert!(deeper_than(b"{}", 0));
        assert!(!deeper_than(b"{}", 1));
        assert!(!deeper_than(nested(128).as_bytes(), 128));
        assert!(deeper_than(nested(129).as_bytes(), 128));
        assert!(deeper_than(nested(100_000).as_bytes(), 128));
        // Siblings do not add up.
        assert!(!deeper_than(b"[[1],[2],{\"a\":[3]}]", 3));
        // Brackets in strings, escaped quotes included, are text.
        let text = format!("{{\"s\":\"{}\\\"{}\"}}", "[".repeat(500), "{".repeat(500));
        assert!(!deeper_than(text.as_bytes(), 1));
        assert!(!deeper_than(b"[\"\\\\\"]", 1));
        assert!(deeper_than(b"[\"\\\\\",[]]", 1));
    }
}
