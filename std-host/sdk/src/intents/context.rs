//! `context.read {key}`: operator-provided context from a JSON file holding one object. The
//! answer is `{"key": key, "value": <the JSON value or null>, "exists": bool}`.

use crate::files;
use contour_core::HostAnswer;
use serde_json::{json, Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};

/// The most bytes a context file may have.
pub const MAX_CONTEXT_BYTES: u64 = 1024 * 1024;

/// Why a context file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextError {
    /// It cannot be read (why).
    Read(PathBuf, String),
    /// It holds JSON that is not one object.
    NotObject(PathBuf),
    /// It is not JSON (the reader's reason, quoted).
    NotJson(PathBuf, String),
}

impl fmt::Display for ContextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read(path, why) => write!(f, "cannot read the context file {}: {why}", path.display()),
            Self::NotObject(path) => write!(f, "the context file {} must hold one JSON object", path.display()),
            Self::NotJson(path, why) => write!(f, "the context file {} is not valid JSON: {why}", path.display()),
        }
    }
}

impl std::error::Error for ContextError {}

/// The loaded context.
#[derive(Debug, Clone, Default)]
pub struct Context {
    values: Map<String, Value>,
}

impl Context {
    /// Loads the context file at `path` (absent: empty context): a regular file of at most
    /// [`MAX_CONTEXT_BYTES`], size-checked before it is read. A file that cannot be read or is
    /// not a JSON object is an error naming the path.
    pub fn load(path: Option<&Path>) -> Result<Self, ContextError> {
        let Some(path) = path else {
            return Ok(Self::default());
        };
        let bytes = files::read_limited(path, MAX_CONTEXT_BYTES)
            .map_err(|e| ContextError::Read(path.to_path_buf(), e.why()))?;
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(values)) => Ok(Self { values }),
            Ok(_) => Err(ContextError::NotObject(path.to_path_buf())),
            Err(e) => Err(ContextError::NotJson(path.to_path_buf(), files::quoted(&e.to_string()))),
        }
    }

    /// A context from an object already in memory.
    pub fn from_values(values: Map<String, Value>) -> Self {
        Self { values }
    }

    /// One key's value.
    pub fn read(&self, key: &str) -> HostAnswer {
        let value = self.values.get(key);
        HostAnswer::ok(json!({ "key": key, "value": value.cloned().unwrap_or(Value::Null), "exists": value.is_some() }))
    }
}
