//! `context.read {key}`: operator-provided context from a JSON file holding one object. The
//! answer is `{"key": key, "value": <the JSON value or null>, "exists": bool}`.

use contour_core::HostAnswer;
use serde_json::{json, Map, Value};
use std::path::Path;

/// The loaded context.
#[derive(Debug, Clone, Default)]
pub struct Context {
    values: Map<String, Value>,
}

impl Context {
    /// Loads the context file at `path` (absent: empty context). A file that cannot be read
    /// or is not a JSON object is an error naming the path.
    pub fn load(path: Option<&Path>) -> Result<Self, String> {
        let Some(path) = path else {
            return Ok(Self::default());
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the context file {}: {e}", path.display()))?;
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(values)) => Ok(Self { values }),
            Ok(_) => Err(format!("the context file {} must hold one JSON object", path.display())),
            Err(e) => Err(format!("the context file {} is not valid JSON: {e}", path.display())),
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
