//! A serde `Deserializer` over JSON text, read in place: strings without escapes are handed to
//! the visitor borrowed from the text (`visit_borrowed_str`), so a `&str` field costs no copy and
//! a `String` field one `memcpy`; the rest of the text is never looked at. Numbers other than
//! plain non-negative integers are parsed by serde_json itself, so every number reads exactly as
//! with `serde_json::from_slice`.

use super::access::{Map, Seq, TaggedVariant, UnitVariant};
use super::scan::{self, Decoded};
use super::Error;
use alloc::vec::Vec;
use serde::de::{self, Expected, Unexpected, Visitor};
use serde::Deserialize;

/// Nesting deeper than this is an error (as serde_json's limit), so hostile params cannot
/// exhaust the guest's stack.
const MAX_DEPTH: u8 = 128;

type Result<T> = core::result::Result<T, Error>;

/// Reads one `T` from the JSON value at the start of `bytes` (whitespace before it is fine) and
/// answers it with the index just after the value; nothing after the value is read.
pub(crate) fn from_prefix<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Result<(T, usize)> {
    let mut de = Deserializer { bytes, pos: 0, scratch: Vec::new(), depth: MAX_DEPTH };
    match T::deserialize(&mut de) {
        Ok(value) => Ok((value, de.pos)),
        Err(error) => Err(error.or_at(de.pos).locate(bytes)),
    }
}

/// Reads one `T` from `bytes`, which must hold nothing else but whitespace.
pub(crate) fn from_slice<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Result<T> {
    let (value, end) = from_prefix(bytes)?;
    let after = scan::skip_ws(bytes, end);
    if after == bytes.len() {
        Ok(value)
    } else {
        Err(Error::at("trailing characters", after + 1).locate(bytes))
    }
}

/// The deserializer: the text, where reading is, and a buffer for strings with escapes.
pub(crate) struct Deserializer<'de> {
    pub(super) bytes: &'de [u8],
    pub(super) pos: usize,
    scratch: Vec<u8>,
    /// How many more containers may open.
    pub(super) depth: u8,
}

/// A string read from the text: borrowed from it, or decoded into the scratch buffer.
pub(super) enum Text<'de, 's> {
    Borrowed(&'de str),
    Copied(&'s str),
}

impl<'de> Deserializer<'de> {
    /// The next non-whitespace byte (reading stays on it).
    #[inline(always)]
    pub(super) fn peek(&mut self) -> Option<u8> {
        self.pos = scan::skip_ws(self.bytes, self.pos);
        self.bytes.get(self.pos).copied()
    }

    #[cold]
    #[inline(never)]
    pub(super) fn eof(&self) -> Error {
        Error::at("EOF while parsing a value", self.pos)
    }

    /// Reads `ident` (`null`, `true` or `false`) at the current position.
    fn ident(&mut self, ident: &[u8]) -> Result<()> {
        for &expected in ident {
            match self.bytes.get(self.pos) {
                Some(&byte) if byte == expected => self.pos += 1,
                Some(_) => return Err(Error::at("expected ident", self.pos + 1)),
                None => return Err(Error::at("EOF while parsing a value", self.pos)),
            }
        }
        Ok(())
    }

    /// Reads the string at the current position (its opening quote) as UTF-8 text: borrowed from
    /// the text when it has no escape (the fast path), else decoded into the scratch buffer.
    #[inline]
    pub(super) fn text(&mut self) -> Result<Text<'de, '_>> {
        match scan::plain_string(self.bytes, self.pos) {
            Some((end, ascii)) => {
                self.pos = end + 1;
                Ok(Text::Borrowed(ascii))
            }
            None => self.text_slow(),
        }
    }

    /// [`Deserializer::text`] for strings with escapes or other than ASCII, and its errors.
    #[inline(never)]
    fn text_slow(&mut self) -> Result<Text<'de, '_>> {
        let (decoded, end) = scan::read_string(self.bytes, self.pos, &mut self.scratch, true)?;
        let start = self.pos;
        self.pos = end;
        match decoded {
            Decoded::Borrowed(from, to) => {
                Ok(Text::Borrowed(utf8(self.bytes.get(from..to).unwrap_or_default(), start)?))
            }
            Decoded::Scratch => Ok(Text::Copied(utf8(&self.scratch, start)?)),
        }
    }

    /// Reads the string at the current position as bytes (escapes decoded, no UTF-8 check).
    fn raw_text(&mut self) -> Result<(Option<&'de [u8]>, &[u8])> {
        let (decoded, end) = scan::read_string(self.bytes, self.pos, &mut self.scratch, false)?;
        self.pos = end;
        Ok(match decoded {
            Decoded::Borrowed(from, to) => (self.bytes.get(from..to), &[]),
            Decoded::Scratch => (None, &self.scratch),
        })
    }

    /// A plain non-negative integer at the current position (`0` or digits without a leading zero,
    /// not followed by a fraction or exponent, within u64) and the index after it.
    fn plain_u64(&self) -> Option<(u64, usize)> {
        let mut at = self.pos;
        let mut value: u64 = 0;
        while let Some(&digit) = self.bytes.get(at) {
            if !digit.is_ascii_digit() {
                break;
            }
            value = value.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
            at += 1;
        }
        let digits = at - self.pos;
        let leading_zero = digits > 1 && self.bytes.get(self.pos) == Some(&b'0');
        let continues = self.bytes.get(at).is_some_and(|&b| scan::is_scalar_byte(b));
        (digits > 0 && !leading_zero && !continues).then_some((value, at))
    }

    /// A plain negative integer at the current position, within i64 (for error messages).
    fn plain_negative(&mut self) -> Option<i64> {
        if self.bytes.get(self.pos) != Some(&b'-') {
            return None;
        }
        self.pos += 1;
        let magnitude = self.plain_u64().map(|(value, _)| value);
        self.pos -= 1;
        // `-0` is no integer to serde_json: it reads it as the float -0.0.
        0i64.checked_sub_unsigned(magnitude.filter(|&m| m > 0)?)
    }

    /// Reads the number at the current position with `visitor`: plain integers here (the only
    /// numbers an integer type takes), everything else by serde_json's own deserializer (`method`
    /// is the one serde_json gets), so floats read exactly as serde_json reads them.
    fn number<V: Visitor<'de>>(&mut self, visitor: V, method: NumberMethod) -> Result<V::Value> {
        let start = self.pos;
        let end = scan::scalar_end(self.bytes, start);
        if !matches!(method, NumberMethod::I128 | NumberMethod::U128) {
            if let Some((value, _)) = self.plain_u64() {
                self.pos = end;
                return visitor.visit_u64(value).map_err(|error: Error| error.or_at(end));
            }
            if let Some(value) = self.plain_negative() {
                self.pos = end;
                return visitor.visit_i64(value).map_err(|error: Error| error.or_at(end));
            }
        }
        if matches!(method, NumberMethod::Integer) {
            // Not a JSON number, or a fraction, an exponent, `-0` or an integer past 64 bits,
            // which serde_json reads as a float and no integer type takes. (Not asking serde_json
            // keeps its float parser out of plugins that read only integers.)
            if let Some(at) = invalid_number_at(self.bytes, start, end) {
                return Err(Error::at("invalid number", at));
            }
            let error = <Error as de::Error>::invalid_type(Unexpected::Other("floating point number"), &visitor);
            self.pos = end;
            return Err(error.or_at(end));
        }
        self.pos = end;
        number_with_serde_json(self.bytes.get(start..end).unwrap_or_default(), visitor, method)
            .map_err(|error| error.or_at(end))
    }

    /// The error for a value of the wrong type where `expected` was wanted, placed after that
    /// value as serde_json places it.
    #[cold]
    #[inline(never)]
    fn invalid_type(&mut self, expected: &dyn Expected) -> Error {
        let error = match self.peek() {
            Some(b'n') => match self.ident(b"null") {
                Ok(()) => de::Error::invalid_type(Unexpected::Unit, expected),
                Err(error) => error,
            },
            Some(b't') => match self.ident(b"true") {
                Ok(()) => de::Error::invalid_type(Unexpected::Bool(true), expected),
                Err(error) => error,
            },
            Some(b'f') => match self.ident(b"false") {
                Ok(()) => de::Error::invalid_type(Unexpected::Bool(false), expected),
                Err(error) => error,
            },
            Some(b'-' | b'0'..=b'9') => {
                let unexpected = match (self.plain_u64(), self.plain_negative()) {
                    (Some((value, _)), _) => Unexpected::Unsigned(value),
                    (_, Some(value)) => Unexpected::Signed(value),
                    _ => Unexpected::Other("floating point number"),
                };
                self.pos = scan::scalar_end(self.bytes, self.pos);
                de::Error::invalid_type(unexpected, expected)
            }
            Some(b'"') => match self.text() {
                Ok(Text::Borrowed(text) | Text::Copied(text)) => {
                    de::Error::invalid_type(Unexpected::Str(text), expected)
                }
                Err(error) => error,
            },
            Some(b'[') => <Error as de::Error>::invalid_type(Unexpected::Seq, expected),
            Some(b'{') => <Error as de::Error>::invalid_type(Unexpected::Map, expected),
            Some(_) => Error::at("expected value", self.pos + 1),
            None => self.eof(),
        };
        error.or_at(self.pos)
    }

    /// Opens a container (the byte at the current position), counting the nesting.
    #[inline]
    pub(super) fn open(&mut self) -> Result<()> {
        if self.depth <= 1 {
            return Err(Error::at("recursion limit exceeded", self.pos));
        }
        self.depth -= 1;
        self.pos += 1;
        Ok(())
    }

    /// Closes a container with `close` (`]` or `}`).
    #[inline]
    fn close(&mut self, close: u8) -> Result<()> {
        self.depth += 1;
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(());
        }
        Err(self.close_error(close))
    }

    #[cold]
    #[inline(never)]
    fn close_error(&mut self, close: u8) -> Error {
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                let trailing_comma = self.peek() == Some(close);
                Error::at(if trailing_comma { "trailing comma" } else { "trailing characters" }, self.pos + 1)
            }
            Some(_) => Error::at("trailing characters", self.pos + 1),
            None => self.eof(),
        }
    }

    /// The visitor's answer, once the container it read is closed with `close` (an error of the
    /// visitor is placed after the container, as serde_json places it).
    #[inline]
    fn closed<T>(&mut self, visited: Result<T>, close: u8) -> Result<T> {
        match visited {
            Ok(value) => {
                self.close(close)?;
                Ok(value)
            }
            Err(error) => Err(self.close_after_error(error, close)),
        }
    }

    /// The visitor's error, placed after the container as serde_json places it.
    #[cold]
    #[inline(never)]
    fn close_after_error(&mut self, error: Error, close: u8) -> Error {
        let _ = self.close(close);
        error.or_at(self.pos)
    }

    #[inline(never)]
    fn seq<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        self.open()?;
        let visited = visitor.visit_seq(Seq::new(self));
        self.closed(visited, b']')
    }

    fn map<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        self.open()?;
        let visited = visitor.visit_map(Map::new(self));
        self.closed(visited, b'}')
    }
}

/// Where the number text `bytes[start..end]` stops being a JSON number (the position serde_json
/// reports), or `None` when it is one.
fn invalid_number_at(bytes: &[u8], start: usize, end: usize) -> Option<usize> {
    let digit = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
    let mut i = start + usize::from(bytes.get(start) == Some(&b'-'));
    match bytes.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while digit(i) {
                i += 1;
            }
        }
        _ => return Some(i + 1),
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        if !digit(i) {
            return Some(i + 1);
        }
        while digit(i) {
            i += 1;
        }
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        i += usize::from(matches!(bytes.get(i), Some(b'+' | b'-')));
        if !digit(i) {
            return Some(i + 1);
        }
        while digit(i) {
            i += 1;
        }
    }
    (i != end).then_some(i + 1)
}

/// `bytes` as UTF-8 text, or the error for the string at `at`.
fn utf8(bytes: &[u8], at: usize) -> Result<&str> {
    core::str::from_utf8(bytes).map_err(|_| Error::at("invalid unicode code point", at))
}

/// What kind of number a `deserialize_*` method wants, and so which serde_json method reads one
/// that is not a plain integer.
#[derive(Clone, Copy)]
enum NumberMethod {
    /// An integer type up to 64 bits: plain integers only.
    Integer,
    /// Anything (`deserialize_any`, floats): serde_json's `deserialize_any`.
    Any,
    I128,
    U128,
}

/// Reads the number text `number` with serde_json (its error loses serde_json's position).
fn number_with_serde_json<'de, V: Visitor<'de>>(
    number: &'de [u8],
    visitor: V,
    method: NumberMethod,
) -> Result<V::Value> {
    use serde::Deserializer as _;
    let mut reader = serde_json::Deserializer::from_slice(number);
    let result = match method {
        NumberMethod::Any | NumberMethod::Integer => reader.deserialize_any(visitor),
        NumberMethod::I128 => reader.deserialize_i128(visitor),
        NumberMethod::U128 => reader.deserialize_u128(visitor),
    };
    result.map_err(|error| {
        let text = alloc::string::ToString::to_string(&error);
        let suffix = alloc::format!(" at line {} column {}", error.line(), error.column());
        Error::message(text.strip_suffix(&suffix).unwrap_or(&text))
    })
}

macro_rules! numbers {
    ($($method:ident => $how:ident),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            match self.peek() {
                Some(b'-' | b'0'..=b'9') => self.number(visitor, NumberMethod::$how),
                Some(_) => Err(self.invalid_type(&visitor)),
                None => Err(self.eof()),
            }
        })*
    };
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek() {
            Some(b'n') => self.ident(b"null").and_then(|()| visitor.visit_unit()),
            Some(b't') => self.ident(b"true").and_then(|()| visitor.visit_bool(true)),
            Some(b'f') => self.ident(b"false").and_then(|()| visitor.visit_bool(false)),
            Some(b'"') => match self.text()? {
                Text::Borrowed(text) => visitor.visit_borrowed_str(text),
                Text::Copied(text) => visitor.visit_str(text),
            },
            Some(b'[') => self.seq(visitor),
            Some(b'{') => self.map(visitor),
            Some(b'-' | b'0'..=b'9') => self.number(visitor, NumberMethod::Any),
            Some(_) => Err(Error::at("expected value", self.pos + 1)),
            None => Err(self.eof()),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek() {
            Some(b't') => self.ident(b"true").and_then(|()| visitor.visit_bool(true)),
            Some(b'f') => self.ident(b"false").and_then(|()| visitor.visit_bool(false)),
            Some(_) => Err(self.invalid_type(&visitor)),
            None => Err(self.eof()),
        }
    }

    numbers! {
        deserialize_i8 => Integer, deserialize_i16 => Integer, deserialize_i32 => Integer, deserialize_i64 => Integer,
        deserialize_u8 => Integer, deserialize_u16 => Integer, deserialize_u32 => Integer, deserialize_u64 => Integer,
        deserialize_f32 => Any, deserialize_f64 => Any, deserialize_i128 => I128, deserialize_u128 => U128,
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek() {
            Some(b'"') => match self.text()? {
                Text::Borrowed(text) => visitor.visit_borrowed_str(text),
                Text::Copied(text) => visitor.visit_str(text),
            },
            Some(_) => Err(self.invalid_type(&visitor)),
            None => Err(self.eof()),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek() {
            Some(b'"') => match self.raw_text()? {
                (Some(borrowed), _) => visitor.visit_borrowed_bytes(borrowed),
                (None, copied) => visitor.visit_bytes(copied),
            },
            Some(b'[') => self.seq(visitor),
            Some(_) => Err(self.invalid_type(&visitor)),
            None => Err(self.eof()),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek() {
            Some(b'n') => self.ident(b"null").and_then(|()| visitor.visit_none()),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek() {
            Some(b'n') => self.ident(b"null").and_then(|()| visitor.visit_unit()),
            Some(_) => Err(self.invalid_type(&visitor)),
            None => Err(self.eof()),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek() {
            Some(b'[') => self.seq(visitor),
            Some(_) => Err(self.invalid_type(&visitor)),
            None => Err(self.eof()),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek() {
            Some(b'{') => self.map(visitor),
            Some(_) => Err(self.invalid_type(&visitor)),
            None => Err(self.eof()),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        // As serde_json: a struct may also be written as an array of its fields in order.
        match self.peek() {
            Some(b'{') => self.map(visitor),
            Some(b'[') => self.seq(visitor),
            Some(_) => Err(self.invalid_type(&visitor)),
            None => Err(self.eof()),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.peek() {
            // A unit variant: its name.
            Some(b'"') => visitor.visit_enum(UnitVariant::new(self)),
            // Any variant: {"name": content}.
            Some(b'{') => {
                self.open()?;
                let value = visitor.visit_enum(TaggedVariant::new(self))?;
                self.depth += 1;
                match self.peek() {
                    Some(b'}') => {
                        self.pos += 1;
                        Ok(value)
                    }
                    Some(_) => Err(Error::at("expected `}` after the enum's content", self.pos)),
                    None => Err(self.eof()),
                }
            }
            Some(_) => Err(Error::at("expected value", self.pos + 1)),
            None => Err(self.eof()),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.peek().is_none() {
            return Err(self.eof());
        }
        self.pos = scan::skip_value(self.bytes, self.pos)?;
        visitor.visit_unit()
    }
}
