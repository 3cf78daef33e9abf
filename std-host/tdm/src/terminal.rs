//! How text reaches the operator's terminal. Every line tdm prints (stdout, stderr, the REPL)
//! goes through here, so no string a plugin, a package, a hub index or the state file chose can
//! move the cursor, erase a line, reorder text, set the title or write the clipboard.
//!
//! - A text line has every control character (C0 including ESC, CR, BS and TAB; DEL; C1) and
//!   every bidi or format control that can reorder or hide text written as `\u{XX}`
//!   (see [`is_unsafe`]). A clean line is passed as is, without allocating. The escaping is for
//!   the eye, not reversible: a backslash is not escaped.
//! - JSON text stays JSON with the same value, on one line: inside strings the same characters
//!   are written as `\uXXXX` escapes; outside strings whitespace is dropped. The text is never
//!   parsed into a tree (a plugin's output can be nested deeper than serde_json reads), a small
//!   state machine walks it instead.
//!
//! Printers use [`outln!`], [`errln!`] and [`textln!`] (format, then escape the whole line) and
//! [`out_json`] / [`write_json`]; none prints untrusted text any other way. The one exception is
//! `tdm exec`, whose module's stdout and stderr are the command's own, byte for byte.

use std::borrow::Cow;
use std::io::{self, Write};

/// Whether `c` must not reach a terminal raw: a C0 control (ESC, CR, BS, TAB, LF, ...), DEL, a C1
/// control (U+0080 to U+009F, CSI U+009B among them), every Unicode format character (general
/// category Cf: the soft hyphen, the Arabic letter mark, zero-width spaces and joiners,
/// directional marks, embeddings, overrides and isolates, word joiner and invisible operators,
/// the byte order mark, interlinear annotation marks, the tag characters that can smuggle
/// invisible ASCII, ...), and the line and paragraph separators: each can reorder, hide or
/// break text.
pub fn is_unsafe(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{ad}'
            | '\u{600}'..='\u{605}'
            | '\u{61c}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{890}'..='\u{891}'
            | '\u{8e2}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

/// `text` with every [unsafe](is_unsafe) character written as `\u{XX}` (lowercase hex, as Rust's
/// `char::escape_unicode`); borrowed when there is none.
pub fn escape(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(is_unsafe) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if is_unsafe(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// How JSON text is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One line, no whitespace between tokens.
    Line,
    /// Two-space indent, one member or element per line (the REPL on a terminal). Text nested
    /// deeper than [`PRETTY_MAX_DEPTH`] is laid out as one line instead, so the indent cannot
    /// grow with the square of the nesting.
    Pretty,
}

/// The deepest nesting [`Layout::Pretty`] indents.
pub const PRETTY_MAX_DEPTH: usize = 64;

/// JSON whitespace (RFC 8259): the only whitespace allowed between tokens.
fn is_json_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// `c` as a JSON string escape: `\uXXXX`, or a surrogate pair of them for a character past the
/// BMP (the tag characters).
fn push_json_escape(out: &mut String, c: char) {
    let mut units = [0u16; 2];
    for unit in c.encode_utf16(&mut units) {
        out.push_str(&format!("\\u{unit:04x}"));
    }
}

/// JSON `text` for a terminal, in `layout`: the same value, with unsafe characters inside strings
/// as `\uXXXX` escapes and no whitespace of the text's own between tokens. Borrowed when
/// `layout` is [`Layout::Line`] and nothing needs changing. Text that is not JSON comes back
/// with the same rules applied, and an unsafe character outside a string written as `\u{XX}`.
pub fn json(text: &str, layout: Layout) -> Cow<'_, str> {
    let pretty = layout == Layout::Pretty && max_depth(text) <= PRETTY_MAX_DEPTH;
    if !pretty && is_clean_json_line(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(render_json(text, pretty))
}

/// The deepest nesting of arrays and objects in `text` (strings skipped).
fn max_depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for c in text.chars() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Whether `text` would come out of [`render_json`] (one line) unchanged.
fn is_clean_json_line(text: &str) -> bool {
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if is_unsafe(c) {
            return false;
        }
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if is_json_space(c) {
            return false;
        }
    }
    true
}

/// The state machine behind [`json`]: one pass, keeping key order and every token's text.
fn render_json(text: &str, pretty: bool) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            if is_unsafe(c) {
                // Inside a string an unsafe character is a JSON escape; after a backslash (not
                // JSON) the escape still keeps the raw character off the terminal.
                push_json_escape(&mut out, c);
                escaped = false;
                continue;
            }
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            c if is_json_space(c) => {}
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                while chars.peek().is_some_and(|&c| is_json_space(c)) {
                    chars.next();
                }
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    chars.next();
                    out.push(close);
                } else {
                    depth += 1;
                    if pretty {
                        newline(&mut out, depth);
                    }
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                if pretty {
                    newline(&mut out, depth);
                }
                out.push(c);
            }
            ',' => {
                out.push(c);
                if pretty {
                    newline(&mut out, depth);
                }
            }
            ':' => out.push_str(if pretty { ": " } else { ":" }),
            c if is_unsafe(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

/// Writes `line`, escaped, and a newline to `w` in one write.
pub fn write_line<W: Write + ?Sized>(w: &mut W, line: &str) -> io::Result<()> {
    let escaped = escape(line);
    let mut buf = String::with_capacity(escaped.len() + 1);
    buf.push_str(&escaped);
    buf.push('\n');
    w.write_all(buf.as_bytes())
}

/// Writes JSON `text` laid out for a terminal (see [`json`]) and a newline to `w`, then flushes.
pub fn write_json<W: Write + ?Sized>(w: &mut W, text: &str, layout: Layout) -> io::Result<()> {
    let rendered = json(text, layout);
    let mut buf = String::with_capacity(rendered.len() + 1);
    buf.push_str(&rendered);
    buf.push('\n');
    w.write_all(buf.as_bytes())?;
    w.flush()
}

/// Prints `line`, escaped, on stdout. A write error does not stop the command (`println!`
/// would panic); it is noted, and the command's exit code says so ([`crate::stdout_delivery`]).
pub fn out_line(line: &str) {
    crate::stdout_delivery::note(write_line(&mut io::stdout().lock(), line));
}

/// Prints `line`, escaped, on stderr; a write error is ignored.
pub fn err_line(line: &str) {
    let _ = write_line(&mut io::stderr().lock(), line);
}

/// Prints JSON `text` as one line on stdout (see [`json`]) and flushes; a write error is noted
/// ([`crate::stdout_delivery`]).
pub fn out_json(text: &str) {
    crate::stdout_delivery::note(write_json(&mut io::stdout().lock(), text, Layout::Line));
}

/// Prints JSON `text` as one line on stderr (see [`json`]) and flushes; a write error is ignored.
pub fn err_json(text: &str) {
    let _ = write_json(&mut io::stderr().lock(), text, Layout::Line);
}

/// Prints `text`, escaped, on stdout without a newline (a question), and flushes.
pub fn out_prompt(text: &str) {
    let mut out = io::stdout().lock();
    crate::stdout_delivery::note(out.write_all(escape(text).as_bytes()).and_then(|()| out.flush()));
}

/// Prints `text` escaped on stderr without a newline (a prompt where stdout holds JSON).
pub fn err_prompt(text: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(escape(text).as_bytes());
    let _ = err.flush();
}

/// `outln!(fmt, args..)`: formats one line and prints it escaped on stdout ([`out_line`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::terminal::out_line(&::std::format!($($arg)*))
    };
}

/// `errln!(fmt, args..)`: formats one line and prints it escaped on stderr ([`err_line`]).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::terminal::err_line(&::std::format!($($arg)*))
    };
}

/// `textln!(w, fmt, args..)`: formats one line and writes it escaped to `w` ([`write_line`]);
/// an `io::Result`, like `writeln!`.
macro_rules! textln {
    ($w:expr, $($arg:tt)*) => {
        $crate::terminal::write_line($w, &::std::format!($($arg)*))
    };
}

pub(crate) use {errln, outln, textln};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn clean_text_is_borrowed() {
        for text in ["", "plain ascii", "naïve café 日本語 🦀", "a\\u{1b}b (already escaped text)", "tab-free"] {
            assert!(matches!(escape(text), Cow::Borrowed(t) if t == text), "{text}");
        }
    }

    #[test]
    fn every_class_is_escaped() {
        let cases = [
            ("\u{1b}[2J", "\\u{1b}[2J"),
            ("\u{1b}]52;c;aGk=\u{7}", "\\u{1b}]52;c;aGk=\\u{7}"),
            ("ok\rforged", "ok\\u{d}forged"),
            ("a\u{8}b\tc\nd\0", "a\\u{8}b\\u{9}c\\u{a}d\\u{0}"),
            ("del\u{7f}", "del\\u{7f}"),
            ("\u{80}\u{9b}31m\u{9f}", "\\u{80}\\u{9b}31m\\u{9f}"),
            ("\u{61c}\u{200b}\u{200e}\u{200f}", "\\u{61c}\\u{200b}\\u{200e}\\u{200f}"),
            ("\u{202a}\u{202e}evil", "\\u{202a}\\u{202e}evil"),
            ("\u{2060}\u{2066}\u{2069}", "\\u{2060}\\u{2066}\\u{2069}"),
            ("\u{feff}\u{2028}\u{2029}", "\\u{feff}\\u{2028}\\u{2029}"),
            ("é\u{1b}é", "é\\u{1b}é"),
            // Format characters that hide text: soft hyphen, Mongolian vowel separator, the
            // deprecated format controls, interlinear annotations, tag characters (invisible
            // ASCII a model reads and a person does not).
            ("pay\u{e0041}\u{e0042}", "pay\\u{e0041}\\u{e0042}"),
            ("x\u{ad}x\u{180e}\u{206a}\u{206f}", "x\\u{ad}x\\u{180e}\\u{206a}\\u{206f}"),
            ("\u{fff9}\u{fffb}\u{e0001}\u{e007f}", "\\u{fff9}\\u{fffb}\\u{e0001}\\u{e007f}"),
            ("\u{600}\u{6dd}\u{110bd}\u{1d173}", "\\u{600}\\u{6dd}\\u{110bd}\\u{1d173}"),
        ];
        for (raw, escaped) in cases {
            assert_eq!(escape(raw), escaped, "{raw:?}");
        }
        // The characters next to the ranges stay.
        assert_eq!(
            escape(" ~\u{a0}\u{ae}\u{200a}\u{2027}\u{202f}\u{2070}\u{fefe}\u{fffc}\u{e0080}"),
            " ~\u{a0}\u{ae}\u{200a}\u{2027}\u{202f}\u{2070}\u{fefe}\u{fffc}\u{e0080}"
        );
    }

    #[test]
    fn a_character_past_the_bmp_is_escaped_in_json_as_a_surrogate_pair_with_the_same_value() {
        let text = "[\"pay\u{e0041}\"]";
        let shown = json(text, Layout::Line);
        assert_eq!(shown, "[\"pay\\udb40\\udc41\"]");
        let value: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(value[0], "pay\u{e0041}");
    }

    #[test]
    fn nothing_unsafe_survives_any_character() {
        for code in 0..=0x10ffff {
            let Some(c) = char::from_u32(code) else { continue };
            let text = format!("x{c}y");
            assert!(!escape(&text).chars().any(is_unsafe), "U+{code:04X}");
            let string = format!("[\"{c}\"]");
            assert!(!json(&string, Layout::Line).chars().any(is_unsafe), "U+{code:04X} in a JSON string");
            assert!(!json(&format!("[{c}]"), Layout::Line).chars().any(is_unsafe), "U+{code:04X} outside strings");
        }
    }

    /// `text` without JSON whitespace outside strings: what [`Layout::Line`] keeps of clean text.
    fn squeezed(text: &str) -> String {
        let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
        for c in text.chars() {
            if in_string {
                out.push(c);
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_string = false,
                    _ => {}
                }
            } else if !is_json_space(c) {
                in_string = c == '"';
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn json_keeps_the_value_on_one_line() {
        let cases = [
            r#"{"status":"completed","output":1}"#,
            "{\"status\":\"completed\",\r\n  \"output\" :\t{ \"b\" : [1 , 2.5e3, -0], \"a\" : \"x, {y}: \\\"z\\\"\" } }",
            r#"{"q":"\"","b":"\\","bq":"\\\"","u":"\u001b[2J\u00e9\ud83e\udd80","end":"\\"}"#,
            "{\"del\":\"a\u{7f}b\",\"csi\":\"\u{9b}31m\",\"rlo\":\"\u{202e}txt\",\"ls\":\"\u{2028}\",\"k\u{200f}\":null}",
            "[true, false, null, \"\", {}, [], { }, [ ], \"é日🦀\"]",
            "  \"just a string with spaces inside \"  ",
            "\r{\"status\":\"failed\",\"message\":\"ok\"\r}\r",
        ];
        for text in cases {
            let before: Value = serde_json::from_str(text).expect(text);
            let line = json(text, Layout::Line);
            if text.chars().filter(|&c| is_unsafe(c)).all(is_json_space) {
                // Nothing to escape: the line is the text without its whitespace between tokens.
                assert_eq!(line, squeezed(text), "{text}");
            }
            assert!(!line.contains('\n') && !line.contains('\r'), "{line}");
            assert!(!line.chars().any(is_unsafe), "{line}");
            let after: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(after, before, "{text}");
            let pretty = json(text, Layout::Pretty);
            assert!(!pretty.chars().any(|c| is_unsafe(c) && c != '\n'), "{pretty}");
            assert_eq!(serde_json::from_str::<Value>(&pretty).expect("pretty is JSON"), before, "{text}");
        }
        // Clean one-line JSON is passed without allocating; whitespace or an unsafe character is not.
        let clean = r#"{"a":[1,2],"s":"x y\n\u001b"}"#;
        assert!(matches!(json(clean, Layout::Line), Cow::Borrowed(t) if t == clean));
        assert!(matches!(json("{ }", Layout::Line), Cow::Owned(t) if t == "{}"));
        assert_eq!(json("[\"\u{9b}\"]", Layout::Line), "[\"\\u009b\"]");
        assert_eq!(json("[\"\u{202e}\u{7f}\"]", Layout::Line), "[\"\\u202e\\u007f\"]");
    }

    #[test]
    fn pretty_layout_indents_and_keeps_key_order() {
        let text = "{\"status\":\"completed\",\n  \"output\":{\"b\":[1, 2],\"a\":\"x\",\"e\":{ },\"f\":[]}}";
        assert_eq!(
            json(text, Layout::Pretty),
            "{\n  \"status\": \"completed\",\n  \"output\": {\n    \"b\": [\n      1,\n      2\n    ],\n    \
             \"a\": \"x\",\n    \"e\": {},\n    \"f\": []\n  }\n}"
        );
    }

    #[test]
    fn deep_nesting_passes_intact_without_parsing() {
        let depth = 10_000;
        let deep = format!("{}\"\u{1b}\"{}", "[".repeat(depth), "]".repeat(depth));
        let spaced = format!("{} \"\u{1b}\" {}", "[ \r\n".repeat(depth), " ]".repeat(depth));
        let expected = format!("{}\"\\u001b\"{}", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(json(&deep, Layout::Line), expected);
        assert_eq!(json(&spaced, Layout::Line), expected);
        // Too deep to indent: laid out as one line, not with an indent the square of the depth.
        assert_eq!(json(&spaced, Layout::Pretty), expected);
        let clean = format!("{}1{}", "{\"a\":[".repeat(depth), "]}".repeat(depth));
        assert!(matches!(json(&clean, Layout::Line), Cow::Borrowed(_)));
        assert_eq!(squeezed(&clean), clean);
    }

    #[test]
    fn text_that_is_not_json_still_cannot_drive_the_terminal() {
        assert_eq!(json("not\njson\u{1b}", Layout::Line), "notjson\\u{1b}");
        assert_eq!(json("[\"unterminated \u{1b}", Layout::Line), "[\"unterminated \\u001b");
        assert_eq!(json("[\"\\\u{9b}\"]", Layout::Line), "[\"\\\\u009b\"]");
    }

    #[test]
    fn lines_are_written_escaped_in_one_piece() {
        let mut out = Vec::new();
        textln!(&mut out, "[plugin {}] {}", "stdout", "\u{1b}]52;c;aGk=\u{7}").unwrap();
        write_json(&mut out, "{\"a\" :\r\"\u{9b}\"}", Layout::Line).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "[plugin stdout] \\u{1b}]52;c;aGk=\\u{7}\n{\"a\":\"\\u009b\"}\n");
    }
}
