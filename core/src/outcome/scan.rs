//! The one-pass reader of the response every intent that succeeds gives: a completed outcome in
//! plain JSON. It vouches for a response only when the full reader (`Outcome::from_response`'s
//! serde shape and its unreadable-part pass) would accept it as completed with the same `output`;
//! anything else (a failed outcome, an escape in a top-level key, a duplicate member, a lone
//! surrogate, a number past f64, bad JSON) it leaves to the full reader, which words the error.

use core::ops::Range;

/// Deeper nesting than this is left to the full reader (which has no limit of its own here).
const MAX_DEPTH: u32 = 64;

/// How every SDK begins a completed outcome (Rust, C, AssemblyScript): read as one compare.
const SDK_PREFIX: &[u8] = b"{\"status\":\"completed\",\"output\":";

/// Where the `output` member's JSON text lies in `text`, when `text` is a completed outcome
/// this reader can vouch for; `None` when the full reader must decide.
pub(super) fn completed(text: &str) -> Option<Range<usize>> {
    let mut reader = Reader { bytes: text.as_bytes(), at: 0 };
    let mut seen = Seen::default();
    let mut output = None;
    let mut more = if text.as_bytes().starts_with(SDK_PREFIX) {
        // `status` and `output` are read; the output value follows.
        reader.at = SDK_PREFIX.len();
        (seen.status, seen.output) = (true, true);
        reader.ws();
        let start = reader.at;
        reader.value()?;
        output = Some(start..reader.at);
        reader.member_end()?
    } else {
        reader.ws();
        reader.eat(b'{')?;
        reader.ws();
        let empty = reader.peek() == Some(b'}');
        reader.at += usize::from(empty);
        !empty
    };
    while more {
        let (key, escaped) = reader.key()?;
        if escaped {
            // An escaped key may spell a named member.
            return None;
        }
        reader.ws();
        let start = reader.at;
        let member = Member::of(key);
        if member != Member::Other && reader.peek() == Some(b'{') && member != Member::Output {
            // A known member's object value is read with a check of its own (`retryable`).
            return None;
        }
        reader.value()?;
        let value = start..reader.at;
        if !seen.first(member) {
            return None;
        }
        match member {
            Member::Status if text.as_bytes().get(value.clone())? != b"\"completed\"" => return None,
            Member::Output => output = Some(value),
            _ => {}
        }
        more = reader.member_end()?;
    }
    reader.ws();
    if reader.at != reader.bytes.len() || !seen.status {
        return None;
    }
    output
}

/// A top-level member the outcome shape names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Status,
    Output,
    Message,
    BlockedReason,
    RecoveryHint,
    Other,
}

impl Member {
    fn of(key: &[u8]) -> Self {
        match key {
            b"status" => Self::Status,
            b"output" => Self::Output,
            b"message" => Self::Message,
            b"blockedReason" => Self::BlockedReason,
            b"recoveryHint" => Self::RecoveryHint,
            _ => Self::Other,
        }
    }
}

/// Which named members were read so far.
#[derive(Debug, Default)]
struct Seen {
    status: bool,
    output: bool,
    message: bool,
    blocked_reason: bool,
    recovery_hint: bool,
}

impl Seen {
    /// Marks `member` read; false when it was read before (a duplicate).
    fn first(&mut self, member: Member) -> bool {
        let flag = match member {
            Member::Status => &mut self.status,
            Member::Output => &mut self.output,
            Member::Message => &mut self.message,
            Member::BlockedReason => &mut self.blocked_reason,
            Member::RecoveryHint => &mut self.recovery_hint,
            Member::Other => return true,
        };
        !core::mem::replace(flag, true)
    }
}

/// A cursor over the response's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    /// After a top-level member: true when a `,` (and another member) follows, false at the
    /// closing `}`.
    fn member_end(&mut self) -> Option<bool> {
        self.ws();
        match self.next()? {
            b',' => {
                self.ws();
                Some(true)
            }
            b'}' => Some(false),
            _ => None,
        }
    }

    /// Skips JSON whitespace.
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A key and its colon: its bytes as written, and whether it holds an escape.
    fn key(&mut self) -> Option<(&'a [u8], bool)> {
        self.eat(b'"')?;
        let start = self.at;
        let escaped = self.string_rest()?;
        let key = self.bytes.get(start..self.at - 1)?;
        self.ws();
        self.eat(b':')?;
        Some((key, escaped))
    }

    /// The rest of a string after its opening quote, through its closing quote: true when it
    /// held an escape. `None` for a control byte, a bad escape or a lone surrogate.
    fn string_rest(&mut self) -> Option<bool> {
        let mut escaped = false;
        loop {
            let run = plain_run(self.bytes.get(self.at..)?)?;
            self.at += run;
            match self.next()? {
                b'"' => return Some(escaped),
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                _ => return None,
            }
        }
    }

    /// One escape after its backslash; a leading surrogate must be followed by a trailing one.
    fn escape(&mut self) -> Option<()> {
        match self.next()? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(()),
            b'u' => match self.hex4()? {
                0xD800..=0xDBFF => {
                    self.eat(b'\\')?;
                    self.eat(b'u')?;
                    matches!(self.hex4()?, 0xDC00..=0xDFFF).then_some(())
                }
                0xDC00..=0xDFFF => None,
                _ => Some(()),
            },
            _ => None,
        }
    }

    fn hex4(&mut self) -> Option<u16> {
        let hex = self.bytes.get(self.at..self.at + 4)?;
        self.at += 4;
        hex.iter().try_fold(0u16, |unit, &digit| Some(unit << 4 | char::from(digit).to_digit(16)? as u16))
    }

    /// A number, finite as an f64.
    fn number(&mut self) -> Option<()> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let int_end = self.at;
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digit()?;
        }
        let mut exponent = false;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            exponent = true;
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.digit()?;
        }
        // No exponent and at most 300 bytes before any fraction (sign included): far below
        // f64's largest, which has 309 integer digits. Anything else takes the exact check.
        if exponent || int_end - start > 300 {
            let text = core::str::from_utf8(self.bytes.get(start..self.at)?).ok()?;
            return crate::number::is_finite_f64(text).then_some(());
        }
        Some(())
    }

    /// One digit or more.
    fn digit(&mut self) -> Option<()> {
        self.next()?.is_ascii_digit().then_some(())?;
        self.digits();
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at.checked_add(word.len())?;
        (self.bytes.get(self.at..end)? == word).then_some(())?;
        self.at = end;
        Some(())
    }

    /// One JSON value (the cursor on its first byte), nested at most `MAX_DEPTH` levels: the
    /// open containers are bits of `open` (1 for an object).
    fn value(&mut self) -> Option<()> {
        let mut open: u64 = 0;
        let mut depth: u32 = 0;
        loop {
            // A value starts here.
            match self.peek()? {
                b'{' | b'[' => {
                    let object = self.next()? == b'{';
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return None;
                    }
                    open = open << 1 | u64::from(object);
                    self.ws();
                    let close = if object { b'}' } else { b']' };
                    if self.peek() != Some(close) {
                        if object {
                            self.key()?;
                            self.ws();
                        }
                        continue;
                    }
                    self.at += 1;
                    depth -= 1;
                    open >>= 1;
                }
                b'"' => {
                    self.at += 1;
                    self.string_rest()?;
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => self.number()?,
            }
            // A value ended: close what it ends, or go on to the next member or element.
            loop {
                if depth == 0 {
                    return Some(());
                }
                self.ws();
                let object = open & 1 == 1;
                match self.next()? {
                    b',' => {
                        self.ws();
                        if object {
                            self.key()?;
                            self.ws();
                        }
                        break;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    _ => return None,
                }
                depth -= 1;
                open >>= 1;
            }
        }
    }
}

/// The offset of the first byte of `bytes` that ends a run of plain string text (`"`, `\\` or a
/// control byte), read eight bytes a round: a byte-wise test for zero on the word XORed with
/// each stop, and for below 0x20 on the word itself. Each test can mark a byte wrongly only past
/// a byte it marks rightly, so the lowest mark, the first byte in memory (a little-endian
/// read on every host), is exact.
fn plain_run(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS;
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let marks =
            below(word ^ (ONES * u64::from(b'"')), 1) | below(word ^ (ONES * u64::from(b'\\')), 1) | below(word, 0x20);
        if marks != 0 {
            return Some(at + (marks.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = chunks.remainder().iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    Some(at + tail)
}

#[cfg(test)]
mod tests {
    use super::plain_run;

    #[test]
    fn a_plain_run_ends_at_the_first_stop_in_every_lane_of_every_round() {
        let naive = |bytes: &[u8]| bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
        // Plain bytes next to each stop class: the bytes around 0x20, `"` and `\`, and high ones.
        let plain = [b'a', b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xc3, 0xff];
        for len in 0..40 {
            for filler in plain {
                let mut bytes = alloc::vec![filler; len];
                assert_eq!(plain_run(&bytes), naive(&bytes), "{len} x {filler:#x}");
                for at in 0..len {
                    for stop in [b'"', b'\\', 0x00, 0x01, 0x1f] {
                        bytes[at] = stop;
                        // A second stop further on must not hide the first.
                        if at + 3 < len {
                            bytes[at + 3] = b'"';
                        }
                        assert_eq!(plain_run(&bytes), naive(&bytes), "{len} x {filler:#x}, {stop:#x} at {at}");
                        bytes.fill(filler);
                    }
                }
            }
        }
    }
}
