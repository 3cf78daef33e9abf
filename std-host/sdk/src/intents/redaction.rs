//! Cutting secret values out of what a `net.fetch` hands back to the plugin: a server that
//! reflects a request header (an echo service, an error page quoting the request) must not
//! return the secret the host filled into it.
//!
//! Every secret filled into a fetch (on any hop) is replaced by `[redacted:NAME]` in the
//! response's header names and values, its body and any failure message. A match is the value,
//! or its base64 (standard or URL-safe alphabet, at each of the three alignments it can have
//! inside longer encoded data such as `Basic` credentials), where each byte may also be written
//! in another ASCII case, percent-encoded (`%2f`, `%2F`, `+` for a space) or JSON-escaped
//! (`\"`, `\/`, `\u00XX`), so the encoders servers commonly apply are covered whatever set of
//! characters they escape. Base64 forms shorter than [`MIN_DERIVED_LEN`] are not cut out (they
//! would match ordinary text); an empty value is never "redacted".

use contour_core::Failure;
use serde_json::{Map, Value};

/// Derived forms (all but the value itself) shorter than this are left alone.
pub const MIN_DERIVED_LEN: usize = 4;

/// One secret filled into a fetch.
struct FilledSecret {
    name: String,
    /// What to find: the value's bytes first, then its base64 cores.
    patterns: Vec<Vec<u8>>,
}

/// The secrets filled into one fetch.
#[derive(Default)]
pub struct Redaction {
    secrets: Vec<FilledSecret>,
}

impl Redaction {
    /// Records that secret `name` with `value` was sent; an empty value adds nothing.
    pub fn add(&mut self, name: &str, value: &str) {
        if value.is_empty() || self.secrets.iter().any(|secret| secret.name == name) {
            return;
        }
        self.secrets.push(FilledSecret { name: name.to_string(), patterns: patterns_of(value) });
    }

    /// Whether no secret was filled in (nothing to cut out).
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every match of every filled secret replaced by `[redacted:NAME]`.
    pub fn text(&self, text: &str) -> String {
        if self.is_empty() {
            return text.to_string();
        }
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match self.longest_match(&bytes[i..]) {
                Some((len, name)) => {
                    out.extend_from_slice(format!("[redacted:{name}]").as_bytes());
                    i += len;
                }
                None => {
                    out.push(bytes[i]);
                    i += 1;
                }
            }
        }
        let out = String::from_utf8_lossy(&out).into_owned();
        // A marker next to other text could spell a match again (a secret named like its
        // value, say): then nothing of this string is handed back.
        if self.leaks(&out) {
            return if self.leaks("[redacted]") { String::new() } else { "[redacted]".to_string() };
        }
        out
    }

    /// The length of the longest match starting at `text[0]`, and the secret's name.
    fn longest_match(&self, text: &[u8]) -> Option<(usize, &str)> {
        let first = *text.first()?;
        if !first.is_ascii() && !self.secrets.iter().any(|s| s.patterns.iter().any(|p| p.first() == Some(&first))) {
            return None;
        }
        self.secrets
            .iter()
            .flat_map(|secret| secret.patterns.iter().map(move |pattern| (pattern, secret.name.as_str())))
            .filter_map(|(pattern, name)| match_at(text, pattern).map(|len| (len, name)))
            .max_by_key(|&(len, _)| len)
    }

    fn leaks(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        (0..bytes.len()).any(|i| self.longest_match(&bytes[i..]).is_some())
    }

    /// `value` with every string in it (object keys too) redacted.
    pub fn json(&self, value: Value) -> Value {
        if self.is_empty() {
            return value;
        }
        match value {
            Value::String(text) => Value::String(self.text(&text)),
            Value::Array(items) => Value::Array(items.into_iter().map(|item| self.json(item)).collect()),
            Value::Object(entries) => {
                let mut redacted = Map::new();
                for (key, item) in entries {
                    let item = self.json(item);
                    let key = self.text(&key);
                    // Two keys redacted alike are joined rather than one lost.
                    match (redacted.get_mut(&key), item) {
                        (Some(Value::String(joined)), Value::String(more)) => {
                            joined.push_str(", ");
                            joined.push_str(&more);
                        }
                        (_, item) => {
                            redacted.insert(key, item);
                        }
                    }
                }
                Value::Object(redacted)
            }
            other => other,
        }
    }

    /// `failure` with its detail withheld when a secret was filled into the request. A
    /// failure's detail quotes what the plugin chose (the URL, a redirect's location): marking
    /// where a secret matched inside it would tell the plugin which of its guesses was the
    /// secret (a URL of 400 PIN guesses came back with one of them marked), so none of it is
    /// kept. The reason still says what kind of failure it was.
    pub fn failure(&self, mut failure: Failure) -> Failure {
        if !self.is_empty() {
            failure.detail = WITHHELD.to_string();
        }
        failure
    }
}

/// The detail of a failed `net.fetch` that carried a secret.
pub const WITHHELD: &str =
    "`net.fetch` failed; its details are withheld because a secret was filled into the request (they could quote it).";

/// What to find for `value`: its bytes, then its base64 cores (long enough to be specific).
fn patterns_of(value: &str) -> Vec<Vec<u8>> {
    let mut patterns = vec![value.as_bytes().to_vec()];
    for alphabet in [STANDARD, URL_SAFE] {
        for offset in 0..3 {
            let core = base64_core(value.as_bytes(), offset, alphabet).into_bytes();
            if core.len() >= MIN_DERIVED_LEN && !patterns.contains(&core) {
                patterns.push(core);
            }
        }
    }
    patterns
}

/// The length of the text at the start of `text` that spells `pattern`, each byte as itself in
/// any ASCII case, percent-encoded, `+` for a space, or JSON-escaped; `None` if it does not.
fn match_at(text: &[u8], pattern: &[u8]) -> Option<usize> {
    let mut at = 0;
    for &byte in pattern {
        at += byte_at(text.get(at..)?, byte)?;
    }
    Some(at)
}

/// How many bytes at the start of `text` spell `byte`, if they do.
fn byte_at(text: &[u8], byte: u8) -> Option<usize> {
    let first = *text.first()?;
    if first.eq_ignore_ascii_case(&byte) || first == b'+' && byte == b' ' {
        return Some(1);
    }
    let hex = |digits: &[u8]| std::str::from_utf8(digits).ok().and_then(|d| u8::from_str_radix(d, 16).ok());
    match (first, text.get(1)) {
        (b'%', _) => (text.get(1..3).and_then(hex) == Some(byte)).then_some(3),
        (b'\\', Some(b'u')) => {
            let digits = text.get(2..6)?;
            (digits.starts_with(b"00") && hex(&digits[2..]) == Some(byte)).then_some(6)
        }
        (b'\\', Some(&escaped)) => {
            let decoded = match escaped {
                b'"' | b'\\' | b'/' => escaped,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'b' => 0x08,
                b'f' => 0x0c,
                _ => return None,
            };
            (decoded == byte).then_some(2)
        }
        _ => None,
    }
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The base64 characters that depend on `bytes` alone when they follow `offset` (0 to 2) other
/// bytes in the encoded data: found in any encoding of data holding `bytes` at that alignment,
/// whatever comes before or after.
fn base64_core(bytes: &[u8], offset: usize, alphabet: &[u8; 64]) -> String {
    let mut data = vec![0u8; offset];
    data.extend_from_slice(bytes);
    let mut encoded = Vec::with_capacity(data.len() * 4 / 3 + 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            encoded.push(alphabet[((n >> (18 - 6 * i)) & 0x3f) as usize]);
        }
    }
    // Character i covers bits [6i, 6i + 6): keep those inside the bytes' bits.
    let first = (8 * offset).div_ceil(6);
    let end = (8 * (offset + bytes.len())) / 6;
    encoded.get(first..end.max(first)).map(|core| String::from_utf8_lossy(core).into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "sk-live-7f3a9c1e-TOP SECRET/+";

    #[test]
    fn a_failure_of_a_request_carrying_a_secret_quotes_nothing() {
        let mut redaction = Redaction::default();
        let plain =
            Failure::new(contour_core::BlockedReason::HostIntentFailed, "`net.fetch` of `http://h/4821` failed");
        assert_eq!(redaction.failure(plain.clone()).detail, plain.detail, "no secret: the detail stays");
        redaction.add("PIN", "4821");
        // Guesses in the URL: marking the match would name the one that is the secret.
        let guesses: Vec<String> = (4800..4900).map(|n| n.to_string()).collect();
        let detail = format!("`net.fetch` of `http://127.0.0.1:1/{}` failed: refused", guesses.join("-"));
        let failure = redaction.failure(Failure::new(contour_core::BlockedReason::HostIntentFailed, detail));
        assert_eq!(failure.detail, WITHHELD);
        assert_eq!(failure.reason, contour_core::BlockedReason::HostIntentFailed);
        // A long detail cut inside the secret: nothing of it either.
        redaction.add("KEY", SECRET);
        let long = format!("redirected to x:{}{SECRET} and more{}", "A".repeat(1982), "B".repeat(100));
        let failure = redaction.failure(Failure::new(contour_core::BlockedReason::PermissionDenied, long));
        assert_eq!(failure.detail, WITHHELD);
    }

    /// A plain base64 encoder (standard alphabet, padded), written apart from `base64_core`.
    fn standard_base64(bytes: &[u8]) -> String {
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
            for i in 0..=chunk.len() {
                out.push(STANDARD[((n >> (18 - 6 * i)) & 0x3f) as usize] as char);
            }
            out.push_str(&"=".repeat(3 - chunk.len()));
        }
        out
    }

    /// `value` with every byte `keep` refuses written as `%XX`.
    fn percent(value: &str, keep: impl Fn(u8) -> bool) -> String {
        value.bytes().map(|b| if keep(b) { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
    }

    #[test]
    fn every_form_is_cut_out() {
        let mut redaction = Redaction::default();
        redaction.add("K", SECRET);
        let credentials = format!("user:{SECRET}");
        let reflected = [
            SECRET.to_string(),
            SECRET.to_ascii_lowercase(),
            SECRET.to_ascii_uppercase(),
            percent(SECRET, |b| b.is_ascii_alphanumeric()),
            percent(SECRET, |b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)).to_ascii_lowercase(),
            percent(SECRET, |b| b != b'+').replace(' ', "+"),
            percent(SECRET, |_| false),
            serde_json::to_string(SECRET).unwrap(),
            SECRET.replace('/', "\\/").replace(' ', "\\u0020"),
            standard_base64(SECRET.as_bytes()),
            standard_base64(credentials.as_bytes()),
            standard_base64(format!("xy{SECRET}").as_bytes()),
            standard_base64(format!("x{SECRET}").as_bytes()).replace('+', "-").replace('/', "_"),
            percent(&standard_base64(credentials.as_bytes()), |b| b.is_ascii_alphanumeric()),
        ];
        for form in reflected {
            let text = format!("before {form} after");
            let redacted = redaction.text(&text);
            assert!(redacted.starts_with("before ") && redacted.ends_with(" after"), "{form}: {redacted}");
            assert!(redacted.contains("[redacted:K]"), "{form}: {redacted}");
            // At most the few characters an encoding shares with its neighbours are left.
            assert!(!redacted.contains(&form[4..form.len() - 4]), "{form}: {redacted}");
        }
    }

    #[test]
    fn text_without_the_secret_is_left_alone() {
        let mut redaction = Redaction::default();
        redaction.add("K", SECRET);
        for text in ["", "plain text", "sk-live-7f3a9c1e-TOP SECRET", "%zz \\u00 \\q é ✓", "ö"] {
            assert_eq!(redaction.text(text), text);
        }
    }

    #[test]
    fn json_keys_and_values_are_redacted() {
        let mut redaction = Redaction::default();
        redaction.add("K", SECRET);
        let value = serde_json::json!({"headers": {SECRET.to_ascii_lowercase(): "1", "echo": SECRET}, "status": 200});
        let text = redaction.json(value).to_string();
        assert!(!text.to_ascii_lowercase().contains("top secret"), "{text}");
        assert!(text.contains("200"), "{text}");
    }

    #[test]
    fn empty_and_short_values() {
        let mut redaction = Redaction::default();
        redaction.add("EMPTY", "");
        assert!(redaction.is_empty());
        assert_eq!(redaction.text("anything"), "anything");
        // A one-character value is cut out as it is (its base64 forms are too short).
        redaction.add("K", "q");
        assert_eq!(redaction.text("aqa%71"), "a[redacted:K]a[redacted:K]");
        // A value that its own marker would spell again leaves nothing of the string.
        let mut named = Redaction::default();
        named.add("redacted", "redacted");
        assert_eq!(named.text("x redacted y"), "");
    }

    #[test]
    fn base64_cores_match_a_reference_encoding() {
        assert_eq!(standard_base64(b"Man"), "TWFu");
        assert_eq!(standard_base64(b"Ma"), "TWE=");
        assert_eq!(standard_base64(b"M"), "TQ==");
        assert_eq!(base64_core(b"Man", 0, STANDARD), "TWFu");
        assert_eq!(base64_core(b"Ma", 0, STANDARD), "TW");
    }
}
