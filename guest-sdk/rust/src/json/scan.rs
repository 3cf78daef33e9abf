//! Byte-level JSON reading: whitespace, strings 16 bytes a round, string escapes, and skipping
//! a whole value without building anything.
//!
//! Every function takes the text and an index and answers an index (or an error with the index
//! where it happened); none of them panics on any input.

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) use super::lanes::plain_run_end;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(crate) use super::words::plain_run_end;
use super::Error;
use alloc::vec::Vec;

/// Whether `byte` is JSON whitespace.
#[inline(always)]
pub(crate) fn is_ws(byte: u8) -> bool {
    matches!(byte, b' ' | b'\n' | b'\r' | b'\t')
}

/// The index of the first non-whitespace byte at or after `i` (or the length). The host writes
/// no whitespace, so the loop is out of line.
#[inline(always)]
pub(crate) fn skip_ws(bytes: &[u8], i: usize) -> usize {
    // One comparison in line: every whitespace byte is at most a space (the loop checks which).
    match bytes.get(i) {
        // Built for speed (SIMD), the one space most writers put after `:` and `,` is taken here
        // too, without the call.
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Some(b' ') if bytes.get(i + 1).is_some_and(|&next| next > b' ') => i + 1,
        Some(&byte) if byte <= b' ' => skip_ws_loop(bytes, i),
        _ => i,
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::lanes::ws_end as skip_ws_loop;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
use ws_bytes_end as skip_ws_loop;

/// The whitespace run from `i`, a byte a round: [`skip_ws`]'s loop, and with `simd128` the
/// last bytes of [`super::lanes::ws_end`]'s.
#[inline(never)]
pub(crate) fn ws_bytes_end(bytes: &[u8], mut i: usize) -> usize {
    while let Some(&byte) = bytes.get(i) {
        if !is_ws(byte) {
            break;
        }
        i += 1;
    }
    i
}

/// Where rounds of `WIDE` bytes from `from` end: at the first round that `holds_stop` says holds a
/// stop, or where fewer than `WIDE` bytes are left. The long rounds of both string scanners
/// (`json/words.rs`, `json/lanes.rs`), each its own loop out of line.
#[inline(always)]
pub(crate) fn clear_rounds_end<const WIDE: usize>(
    bytes: &[u8],
    from: usize,
    holds_stop: impl Fn(&[u8; WIDE]) -> bool,
) -> usize {
    let rest = bytes.get(from..).unwrap_or_default();
    let blocks = rest.chunks_exact(WIDE);
    let rounds = blocks.len();
    let clear = blocks.map(<[u8]>::first_chunk::<WIDE>).position(|block| block.is_none_or(&holds_stop));
    from + clear.unwrap_or(rounds) * WIDE
}

/// The fast path of reading a string: for the string whose opening quote is at `i`, when it is
/// ASCII without escapes, the index of its closing quote and its text. `None` for anything else (no
/// string here, an escape, a character other than ASCII, a control character, the end of the text):
/// [`read_string`] reads it, or says what is wrong.
#[inline(always)]
pub(crate) fn plain_string(bytes: &[u8], i: usize) -> Option<(usize, &str)> {
    if bytes.get(i) != Some(&b'"') {
        return None;
    }
    let (end, text) = crate::abi::ascii_run(bytes, i + 1);
    (bytes.get(end) == Some(&b'"')).then_some((end, text))
}

/// A string read from the text: borrowed when it holds no escape, else decoded into the scratch.
pub(crate) enum Decoded {
    /// The string is `bytes[start..end]` as it is.
    Borrowed(usize, usize),
    /// The string is the whole scratch buffer.
    Scratch,
}

/// Reads the string whose opening quote is at `i`, escapes and all: what it holds and the index
/// after its closing quote. Escapes are decoded into `scratch` (cleared first); the result is not checked for UTF-8
/// (the caller checks what it turns into a `str`). `\u` escapes must pair their surrogates when
/// `utf8` is set, as serde_json requires for strings (not for byte strings).
#[inline(never)]
pub(crate) fn read_string(
    bytes: &[u8],
    i: usize,
    scratch: &mut Vec<u8>,
    utf8: bool,
) -> Result<(Decoded, usize), Error> {
    let start = i + 1;
    let mut run = start;
    let mut copied = false;
    loop {
        let end = plain_run_end(bytes, run);
        match bytes.get(end) {
            Some(b'"') => {
                if !copied {
                    return Ok((Decoded::Borrowed(start, end), end + 1));
                }
                scratch.extend_from_slice(bytes.get(run..end).unwrap_or_default());
                return Ok((Decoded::Scratch, end + 1));
            }
            Some(b'\\') => {
                if !copied {
                    scratch.clear();
                    copied = true;
                }
                scratch.extend_from_slice(bytes.get(run..end).unwrap_or_default());
                run = decode_escape(bytes, end + 1, scratch, utf8)?;
            }
            Some(_) => {
                return Err(Error::at("control character (\\u0000-\\u001F) found while parsing a string", end + 1))
            }
            None => return Err(Error::at("EOF while parsing a string", bytes.len())),
        }
    }
}

/// The value of the four hex digits at `i`.
fn hex4(bytes: &[u8], i: usize) -> Result<u32, Error> {
    let digits = bytes.get(i..i + 4).ok_or_else(|| Error::at("EOF while parsing a string", bytes.len()))?;
    let mut value = 0;
    for (k, &digit) in digits.iter().enumerate() {
        let nibble = match digit {
            b'0'..=b'9' => digit - b'0',
            b'a'..=b'f' => digit - b'a' + 10,
            b'A'..=b'F' => digit - b'A' + 10,
            _ => return Err(Error::at("invalid escape", i + k + 1)),
        };
        value = value * 16 + u32::from(nibble);
    }
    Ok(value)
}

/// Pushes `code` as UTF-8 (a lone surrogate too, as WTF-8, for byte strings).
fn push_code_point(code: u32, out: &mut Vec<u8>) {
    // Surrogates are no `char`; encode by hand, as UTF-8 would encode any 16-bit value.
    if code < 0x80 {
        out.push(code as u8);
    } else if code < 0x800 {
        out.extend_from_slice(&[0xc0 | (code >> 6) as u8, 0x80 | (code & 0x3f) as u8]);
    } else if code < 0x10000 {
        out.extend_from_slice(&[
            0xe0 | (code >> 12) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xf0 | (code >> 18) as u8,
            0x80 | ((code >> 12) & 0x3f) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]);
    }
}

/// Decodes the escape whose letter is at `i` (just after the backslash) into `out`; answers the
/// index after it.
fn decode_escape(bytes: &[u8], i: usize, out: &mut Vec<u8>, utf8: bool) -> Result<usize, Error> {
    let Some(&letter) = bytes.get(i) else { return Err(Error::at("EOF while parsing a string", bytes.len())) };
    let byte = match letter {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'u' => {
            let code = hex4(bytes, i + 1)?;
            let after = i + 5;
            if (0xdc00..=0xdfff).contains(&code) && utf8 {
                return Err(Error::at("lone leading surrogate in hex escape", after));
            }
            if !(0xd800..=0xdbff).contains(&code) {
                push_code_point(code, out);
                return Ok(after);
            }
            // A leading surrogate: a trailing one must follow as `\uXXXX`.
            if bytes.get(after..after + 2) == Some(b"\\u") {
                let low = hex4(bytes, after + 2)?;
                if (0xdc00..=0xdfff).contains(&low) {
                    push_code_point(0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00), out);
                    return Ok(after + 6);
                }
                if utf8 {
                    return Err(Error::at("lone leading surrogate in hex escape", after + 6));
                }
                push_code_point(code, out);
                return Ok(after);
            }
            if utf8 {
                return Err(Error::at("unexpected end of hex escape", after + 1));
            }
            push_code_point(code, out);
            return Ok(after);
        }
        _ => return Err(Error::at("invalid escape", i + 1)),
    };
    out.push(byte);
    Ok(i + 1)
}

/// The index after the string whose opening quote is at `i`, without decoding it.
#[inline(never)]
fn skip_string(bytes: &[u8], i: usize) -> Result<usize, Error> {
    let mut at = i + 1;
    loop {
        at = plain_run_end(bytes, at);
        match bytes.get(at) {
            Some(b'"') => return Ok(at + 1),
            // Any escape is two bytes long up to its letter; `\u`'s hex digits are plain bytes.
            Some(b'\\') => at += 2,
            Some(_) => {
                return Err(Error::at("control character (\\u0000-\\u001F) found while parsing a string", at + 1))
            }
            None => return Err(Error::at("EOF while parsing a string", bytes.len())),
        }
    }
}

/// Whether `byte` may be part of a number, `true`, `false` or `null`.
#[inline(always)]
pub(crate) fn is_scalar_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'+' | b'.')
}

/// The index after the number, `true`, `false` or `null` at `i`.
pub(crate) fn scalar_end(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|&b| is_scalar_byte(b)) {
        i += 1;
    }
    i
}

/// The index after the value that starts at `i` (no whitespace before it). A scanner, not a
/// validator: strings and nesting are followed exactly, numbers and literals only by their
/// bytes, so it never reads past the value's end and never builds anything.
#[inline]
pub(crate) fn skip_value(bytes: &[u8], i: usize) -> Result<usize, Error> {
    match bytes.get(i) {
        Some(b'"') => skip_string(bytes, i),
        Some(b'{' | b'[') => skip_container(bytes, i),
        Some(&byte) if is_scalar_byte(byte) => Ok(scalar_end(bytes, i)),
        Some(_) => Err(Error::at("expected value", i + 1)),
        None => Err(Error::at("EOF while parsing a value", i)),
    }
}

/// The index after the object or array that starts at `i`.
#[inline(never)]
fn skip_container(bytes: &[u8], i: usize) -> Result<usize, Error> {
    let mut depth = 0usize;
    let mut at = i;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => {
                at = skip_string(bytes, at)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(at + 1);
                }
            }
            _ => {}
        }
        at += 1;
    }
    Err(Error::at("EOF while parsing a value", bytes.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_run_ends_at_the_first_quote_backslash_or_control_byte_wherever_it_falls() {
        for len in 0..40 {
            for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                for at in 0..len {
                    let mut text = alloc::vec![b'a'; len];
                    text[at] = special;
                    // Bytes after the special one do not matter, nor do high bytes before it.
                    if at + 1 < len {
                        text[at + 1] = b'"';
                    }
                    if at > 0 {
                        text[at - 1] = 0xe9;
                    }
                    assert_eq!(plain_run_end(&text, 0), at, "len {len}, {special:#x} at {at}");
                }
                assert_eq!(plain_run_end(&alloc::vec![0x7f; len], 0), len);
            }
        }
        assert_eq!(plain_run_end(b"ab", 5), 2);
    }

    #[test]
    fn an_ascii_run_ends_at_the_first_special_or_non_ascii_byte_and_is_exactly_the_bytes_before() {
        for len in 0..40 {
            for (stopper, at) in [(b'"', 0), (0xc3, 1), (b'\\', 15), (0x80, 16), (0xff, 17), (0x01, 31)] {
                let mut text = alloc::vec![b'q'; len];
                if at < len {
                    text[at] = stopper;
                }
                let (end, run) = crate::abi::ascii_run(&text, 0);
                let expected = if at < len { at } else { len };
                assert_eq!((end, run.as_bytes()), (expected, &text[..expected]), "len {len}, {stopper:#x} at {at}");
            }
        }
        let (end, run) = crate::abi::ascii_run(b"abc\"", 5);
        assert_eq!((end, run), (4, ""));
        assert_eq!(plain_string(br#"  "caf\u00e9""#, 2), None);
        assert_eq!(plain_string(b"\"caf\xc3\xa9\"", 0), None);
        assert_eq!(plain_string(br#""plain" "#, 0), Some((6, "plain")));
    }

    /// The first stop at or after `from` by looking at each byte: the scanners' reference.
    fn reference_end(text: &[u8], from: usize, ascii: bool) -> usize {
        let stop = |&byte: &u8| byte == b'"' || byte == b'\\' || byte < 0x20 || (ascii && byte >= 0x80);
        text.get(from..).and_then(|rest| rest.iter().position(stop)).map_or(text.len(), |at| from + at)
    }

    #[test]
    fn long_runs_end_where_a_byte_by_byte_scan_ends_for_every_position_and_start() {
        // Short runs, and runs past the 512 bytes after which the scalar scanner reads 64 bytes a
        // round (json/words.rs), with the stop at every position around where the rounds fall;
        // stops next to every byte class a word formula could confuse.
        let stops = [b'"', b'\\', 0x00, 0x1f, 0x80, 0xff];
        let near = [b'!', b'#', b' ', b'[', b']', 0x7f, 0x21, 0xa2, 0xdc, 0xc3];
        let lengths = (0..80).chain([127, 128, 129, 300]).chain(500..600).chain([700, 1100]);
        for len in lengths {
            let positions: Vec<usize> = if len < 600 {
                (0..len).collect()
            } else {
                (0..len).filter(|at| at % 64 < 3 || at % 64 > 60).collect()
            };
            for &at in &positions {
                for (k, &stop) in stops.iter().enumerate() {
                    let mut text: Vec<u8> = (0..len).map(|i| near[(i * 7 + k) % near.len()]).collect();
                    text[at] = stop;
                    for from in [0, 1, at.saturating_sub(9), at] {
                        let plain = plain_run_end(&text, from);
                        assert_eq!(
                            plain,
                            reference_end(&text, from, false),
                            "plain: len {len}, {stop:#x} at {at}, from {from}"
                        );
                        let (end, run) = crate::abi::ascii_run(&text, from);
                        assert_eq!(
                            end,
                            reference_end(&text, from, true),
                            "ascii: len {len}, {stop:#x} at {at}, from {from}"
                        );
                        assert_eq!(run.as_bytes(), &text[from.min(end)..end]);
                    }
                }
            }
            let clean = alloc::vec![b'q'; len];
            assert_eq!(plain_run_end(&clean, 0), len);
            assert_eq!(crate::abi::ascii_run(&clean, 0).0, len);
        }
    }

    #[test]
    fn scans_of_random_bytes_agree_with_a_byte_by_byte_scan() {
        // A fixed xorshift stream: mostly plain bytes, a stop now and then (often, or rarely enough
        // for long runs).
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for round in 0..3000 {
            let (len, rare) = if round % 2 == 0 { (round % 200, 61) } else { (round % 1500, 1500) };
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let byte = (state >> 24) as u8;
                    if state % rare == 0 {
                        byte
                    } else {
                        0x23 + byte % 0x39
                    }
                })
                .collect();
            for from in [0, len / 3, len / 2] {
                assert_eq!(plain_run_end(&text, from), reference_end(&text, from, false), "{text:?} from {from}");
                assert_eq!(
                    crate::abi::ascii_run(&text, from).0,
                    reference_end(&text, from, true),
                    "{text:?} from {from}"
                );
            }
        }
    }

    #[test]
    fn skipping_follows_strings_and_nesting() {
        let text = br#"{"a":[1,{"b":"}\"]"},"c"],"d":true} ,"#;
        assert_eq!(skip_value(text, 0), Ok(text.len() - 2));
        assert_eq!(skip_value(b"-1.5e3,", 0), Ok(6));
        assert_eq!(skip_value(br#""a\\"x"#, 0), Ok(5));
        assert!(skip_value(b"[1,2", 0).is_err());
        assert!(skip_value(b"\"abc", 0).is_err());
        assert!(skip_value(b"", 0).is_err());
        assert!(skip_value(b"}", 0).is_err());
    }
}
