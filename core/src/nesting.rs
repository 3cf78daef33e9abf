//! How deeply JSON text nests, measured by one scan over its bytes (no recursion, no tree), so
//! the host can refuse params and host-call requests nested past `Policy::max_request_depth`
//! before anything parses them into a tree: a plugin's own parser may overflow its stack on
//! text 100,000 levels deep, and serde_json's tree reader refuses past 128.

/// Whether the JSON text `bytes` has an array or object nested more than `limit` levels deep
/// (a top-level object is level 1). Brackets inside strings (escapes included) do not count;
/// text that is not JSON is measured all the same (its parser refuses it later). Stops at the
/// first bracket past the limit.
pub fn deeper_than(bytes: &[u8], limit: usize) -> bool {
    // Nesting can never exceed the number of `{` and `[` in the text (those inside strings
    // counted too, so the count is an upper bound): real params, shallow, are answered by this
    // count, which the compiler turns into wide compares, instead of a scan a byte at a time
    // (a 64 KiB request cost about 15 host instructions per byte in that scan). Text no longer
    // than the limit cannot hold more openers than the limit, so it is not even counted: most
    // requests are a few dozen bytes, and the count was 88 of a warm 128 B echo's host
    // instructions.
    if bytes.len() <= limit || openers(bytes) <= limit {
        return false;
    }
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

/// How many `{` and `[` bytes `bytes` holds: per chunk of 224 in a byte-wide counter (it cannot
/// overflow), with one compare per byte (`[` is 0x5B, `{` 0x7B: setting bit 0x20 makes both, and
/// only them, 0x7B), so the loop vectorises. 224 is a multiple of the 32 bytes the vector loop
/// takes per step, so no chunk but the last ends in bytes counted one at a time (chunks of 255
/// did: a 64 KiB echo took 114,743 host instructions, 95,318 with 224).
fn openers(bytes: &[u8]) -> usize {
    bytes.chunks(224).map(|chunk| usize::from(chunk.iter().fold(0u8, |n, &b| n + u8::from((b | 0x20) == b'{')))).sum()
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
    fn openers_count_every_bracket_that_opens_across_chunks() {
        let text = format!("{}\"{}\"{}", "{".repeat(300), "[".repeat(300), "x".repeat(600));
        assert_eq!(openers(text.as_bytes()), 600);
        assert_eq!(openers(b""), 0);
        // Past the count, the scan decides: brackets in a string do not nest.
        let quoted = format!("[\"{}\"]", "[".repeat(500));
        assert!(!deeper_than(quoted.as_bytes(), 1));
        assert!(deeper_than(format!("[[{quoted}]]").as_bytes(), 2));
    }

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert!(!deeper_than(b"1", 0));
        assert!(deeper_than(b"{}", 0));
        assert!(!deeper_than(b"{}", 1));
        assert!(!deeper_than(nested(128).as_bytes(), 128));
        assert!(deeper_than(nested(129).as_bytes(), 128));
        // Text exactly one byte past the limit may already be too deep; at the limit, never.
        assert!(deeper_than("[".repeat(129).as_bytes(), 128));
        assert!(!deeper_than("[".repeat(128).as_bytes(), 128));
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
