//! An intent's params from the command line: JSON text, `@FILE` (a file's contents) or `-`
//! (standard input), up to the request limit (1 MiB by default, the request envelope included),
//! so params too large for an argument list still reach the plugin. The REPL's `:load FILE`
//! reads a file the same way. Files are read through [`crate::files`] (size-checked, never
//! blocking); standard input is read to at most one byte past the limit. Params are checked to
//! be JSON and then passed to the plugin as the text they are ([`Params`]): nothing is rounded
//! or reordered on the way.

use crate::files::{self, FileError};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where params come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamsSource {
    /// JSON text given on the command line.
    Inline(String),
    /// `@FILE`: the contents of a file.
    File(PathBuf),
    /// `-`: standard input.
    Stdin,
}

impl ParamsSource {
    /// Reads a `--params` value: `-` is stdin, `@FILE` a file, anything else JSON text. (JSON
    /// never starts with `@`, so no JSON is mistaken for a file.)
    pub fn parse(text: &str) -> Self {
        if text == "-" {
            Self::Stdin
        } else if let Some(path) = text.strip_prefix('@') {
            Self::File(PathBuf::from(path))
        } else {
            Self::Inline(text.to_string())
        }
    }

    /// Where the params came from, for messages.
    pub fn describe(&self) -> String {
        match self {
            Self::Inline(_) => "--params".to_string(),
            Self::File(path) => format!("params file {}", path.display()),
            Self::Stdin => "params from standard input".to_string(),
        }
    }
}

impl Default for ParamsSource {
    fn default() -> Self {
        Self::Inline("{}".to_string())
    }
}

/// An intent's params: JSON text, checked to be one JSON value, sent to the plugin as written
/// (a number beyond u64 or f64's precision, key order, escapes: all as the user typed them).
#[derive(Debug, Clone)]
pub struct Params(Box<RawValue>);

impl Params {
    /// `{}`, the params of an intent given none.
    pub fn empty() -> Self {
        // `{}` is JSON, so the fallback (`null`) is never taken.
        Self(RawValue::from_string("{}".to_string()).unwrap_or_else(|_| RawValue::NULL.to_owned()))
    }

    /// Checks that `text` is one JSON value (whitespace around it is dropped).
    pub fn from_text(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str::<Box<RawValue>>(text).map(Self)
    }

    /// The JSON text.
    pub fn raw(&self) -> &RawValue {
        &self.0
    }

    /// The text as the plugin reads it.
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// The params parsed (for display and tests; numbers beyond f64 become the nearest double).
    pub fn value(&self) -> Option<Value> {
        serde_json::from_str(self.0.get()).ok()
    }
}

impl PartialEq for Params {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl Default for Params {
    fn default() -> Self {
        Self::empty()
    }
}

/// Why params could not be had.
#[derive(Debug)]
pub enum ParamsError {
    /// The file could not be read (missing, not a regular file, too large).
    File(FileError),
    /// Standard input could not be read.
    Stdin(std::io::Error),
    /// More bytes than the request limit.
    TooLarge {
        /// Where they came from.
        source: String,
        /// The limit.
        limit: u64,
    },
    /// Not JSON.
    NotJson {
        /// Where they came from.
        source: String,
        /// The parser's message (line and column).
        error: String,
    },
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(FileError::TooLarge { path, size, limit }) => write!(
                f,
                "the params file {} has {size} bytes; a request (params included) may have at most {limit} bytes",
                path.display()
            ),
            Self::File(e) => write!(f, "{e}"),
            Self::Stdin(e) => write!(f, "reading the params from standard input failed: {e}"),
            Self::TooLarge { source, limit } => {
                write!(f, "the {source} are larger than a request may be ({limit} bytes, params included)")
            }
            Self::NotJson { source, error } => write!(f, "the {source} are not valid JSON: {error}"),
        }
    }
}

impl std::error::Error for ParamsError {}

/// Reads and checks params from `source` (stdin from `stdin`), at most `limit` bytes.
pub fn read(source: &ParamsSource, limit: u64, stdin: impl Read) -> Result<Params, ParamsError> {
    let (bytes, described) = match source {
        ParamsSource::Inline(text) => {
            if text.len() as u64 > limit {
                return Err(ParamsError::TooLarge { source: "--params".into(), limit });
            }
            return parse(text.as_bytes(), "--params");
        }
        ParamsSource::File(path) => (read_file(path, limit)?, source.describe()),
        ParamsSource::Stdin => {
            let mut bytes = Vec::new();
            stdin.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(ParamsError::Stdin)?;
            if bytes.len() as u64 > limit {
                return Err(ParamsError::TooLarge { source: source.describe(), limit });
            }
            (bytes, source.describe())
        }
    };
    parse(&bytes, &described)
}

/// Reads a params file of at most `limit` bytes (`:load FILE` too).
pub fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, ParamsError> {
    files::read_limited(path, limit).map_err(ParamsError::File)
}

/// Checks params text is one JSON value; the error names where it came from.
pub fn parse(bytes: &[u8], source: &str) -> Result<Params, ParamsError> {
    serde_json::from_slice::<Box<RawValue>>(bytes)
        .map(Params)
        .map_err(|e| ParamsError::NotJson { source: source.to_string(), error: files::quoted(&e.to_string()) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sources_are_told_apart() {
        assert_eq!(ParamsSource::parse("-"), ParamsSource::Stdin);
        assert_eq!(ParamsSource::parse("@p.json"), ParamsSource::File("p.json".into()));
        assert_eq!(ParamsSource::parse("{\"a\":1}"), ParamsSource::Inline("{\"a\":1}".into()));
    }

    /// Found by the `request_params` fuzz target: a number beyond u64 reached the plugin as a
    /// neighbour of the double nearest to it.
    #[test]
    fn params_numbers_reach_the_request_as_the_nearest_double() {
        for text in ["2262222222222222222228888801", "2.2622222222222222e27", "0.30000000000000004441"] {
            let nearest = text.parse::<f64>().ok();
            let params = parse(text.as_bytes(), "test").unwrap().value().unwrap();
            assert_eq!(params.as_f64(), nearest, "{text}");
            let request: Value = serde_json::from_slice(&contour_core::intent_request(1, "m", &params)).unwrap();
            assert_eq!(request["params"].as_f64(), nearest, "{text}");
        }
    }

    #[test]
    fn stdin_is_bounded_and_parsed() {
        let stdin = br#"{"a": [1, 2]}"#;
        assert_eq!(read(&ParamsSource::Stdin, 100, &stdin[..]).unwrap().value().unwrap(), json!({"a": [1, 2]}));
        let error = read(&ParamsSource::Stdin, 5, &stdin[..]).unwrap_err();
        assert!(error.to_string().contains("larger than a request may be"), "{error}");
        let error = read(&ParamsSource::Stdin, 100, &b"{oops"[..]).unwrap_err();
        assert!(error.to_string().starts_with("the params from standard input are not valid JSON"), "{error}");
    }

    #[test]
    fn params_reach_the_plugin_as_written() {
        let text = "{\"z\":123456789012345678901234567890,\"a\":1.0000000000000000001,\"s\":\"\\u00e9\"}";
        let params = read(&ParamsSource::Inline(text.into()), 1000, std::io::empty()).unwrap();
        assert_eq!(params.text(), text);
        let request = contour_core::intent_request_raw(1, "m", params.raw());
        assert!(String::from_utf8(request).unwrap().contains(text));
        // Whitespace around the value is not part of it; inside, it stays.
        let spaced = read(&ParamsSource::Stdin, 1000, &b" \n[1, 2]\n"[..]).unwrap();
        assert_eq!(spaced.text(), "[1, 2]");
        assert!(read(&ParamsSource::Inline("{} {}".into()), 1000, std::io::empty()).is_err());
    }
}
