//! The SDK's own JSON: serde data read in place from the request's bytes ([`de`]) and written
//! straight into the response buffer ([`ser`]), over a byte scanner that reads strings 16 bytes a
//! round, 64 in long runs ([`scan`]).
//!
//! It speaks serde's data model, so every `#[derive(Deserialize, Serialize)]` type and
//! `serde_json::Value` go through it, and its output is byte for byte what `serde_json::to_vec`
//! writes (floats and 128-bit integers are formatted by serde_json itself). It exists because an
//! interpreter charges for every guest instruction: serde_json's general reader and writer cost
//! about 50 fuel per byte of a string param, this one about 5.4 (`json/words.rs`; under 3 built
//! with `simd128`, `json/lanes.rs`; see `docs/writing-plugins.md`).

mod access;
pub(crate) mod de;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) mod lanes;
pub(crate) mod scan;
pub(crate) mod ser;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(crate) mod words;

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use core::fmt;

/// Why JSON could not be read or written: serde's message, and where in the text it happened
/// (shown as serde_json shows it: `at line L column C`). Boxed, so that a `Result` carrying it stays
/// small on the paths where nothing goes wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(Box<Detail>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Detail {
    message: String,
    /// The byte offset in the text read, until [`Error::locate`] turns it into a line and column.
    at: Option<usize>,
    line_column: Option<(usize, usize)>,
}

impl Error {
    /// An error at byte `at` of the text being read.
    #[cold]
    #[inline(never)]
    pub(crate) fn at(message: &str, at: usize) -> Self {
        Self(Box::new(Detail { message: message.into(), at: Some(at), line_column: None }))
    }

    /// An error without a position.
    #[cold]
    #[inline(never)]
    pub(crate) fn message(message: impl fmt::Display) -> Self {
        Self(Box::new(Detail { message: message.to_string(), at: None, line_column: None }))
    }

    /// Gives a positionless error (a serde or visitor error) position `at`.
    pub(crate) fn or_at(mut self, at: usize) -> Self {
        if self.0.at.is_none() {
            self.0.at = Some(at);
        }
        self
    }

    /// Turns the byte offset into a line and a column of `text` (1-based, as serde_json counts).
    #[cold]
    pub(crate) fn locate(mut self, text: &[u8]) -> Self {
        if let Some(at) = self.0.at {
            let before = text.get(..at).unwrap_or(text);
            let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count();
            self.0.line_column = Some((line, column));
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.line_column {
            Some((line, column)) => write!(f, "{} at line {line} column {column}", self.0.message),
            None => f.write_str(&self.0.message),
        }
    }
}

impl serde::de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self::message(message)
    }

    fn invalid_type(unexpected: serde::de::Unexpected<'_>, expected: &dyn serde::de::Expected) -> Self {
        Self::message(format_args!("invalid type: {}, expected {expected}", JsonUnexpected(unexpected)))
    }

    fn invalid_value(unexpected: serde::de::Unexpected<'_>, expected: &dyn serde::de::Expected) -> Self {
        Self::message(format_args!("invalid value: {}, expected {expected}", JsonUnexpected(unexpected)))
    }
}

/// What was found instead, in JSON's words, as serde_json says it (`null` for serde's unit).
/// Written out here rather than through serde's `Display`, which formats floats and `str`s with
/// `core::fmt`'s float and `Debug` machinery: about 15 KB of every plugin for an error message.
struct JsonUnexpected<'a>(serde::de::Unexpected<'a>);

impl fmt::Display for JsonUnexpected<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use serde::de::Unexpected;
        match self.0 {
            Unexpected::Bool(value) => write!(f, "boolean `{value}`"),
            Unexpected::Unsigned(value) => write!(f, "integer `{value}`"),
            Unexpected::Signed(value) => write!(f, "integer `{value}`"),
            Unexpected::Float(_) => f.write_str("floating point number"),
            Unexpected::Char(value) => write!(f, "character `{value}`"),
            Unexpected::Str(value) => {
                // As `{:?}` quotes a str, for the characters JSON text holds.
                f.write_str("string \"")?;
                for c in value.chars() {
                    match c {
                        '"' => f.write_str("\\\"")?,
                        '\\' => f.write_str("\\\\")?,
                        '\n' => f.write_str("\\n")?,
                        '\r' => f.write_str("\\r")?,
                        '\t' => f.write_str("\\t")?,
                        c if c.is_control() => write!(f, "\\u{{{:x}}}", u32::from(c))?,
                        c => f.write_str(c.encode_utf8(&mut [0; 4]))?,
                    }
                }
                f.write_str("\"")
            }
            Unexpected::Bytes(_) => f.write_str("byte array"),
            Unexpected::Unit => f.write_str("null"),
            Unexpected::Option => f.write_str("Option value"),
            Unexpected::NewtypeStruct => f.write_str("newtype struct"),
            Unexpected::Seq => f.write_str("sequence"),
            Unexpected::Map => f.write_str("map"),
            Unexpected::Enum => f.write_str("enum"),
            Unexpected::UnitVariant => f.write_str("unit variant"),
            Unexpected::NewtypeVariant => f.write_str("newtype variant"),
            Unexpected::TupleVariant => f.write_str("tuple variant"),
            Unexpected::StructVariant => f.write_str("struct variant"),
            Unexpected::Other(other) => f.write_str(other),
        }
    }
}

impl serde::ser::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self::message(message)
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests;
