//! The result of one intent: the outcome JSON (completed or failed, DESIGN section 3), the
//! validation of a plugin's response against that shape, and the figures measured on the way.

use crate::reason::{BlockedReason, Failure};
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

/// Whether an intent completed or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `"status": "completed"`.
    Completed,
    /// `"status": "failed"`.
    Failed,
}

/// Who decided a failed outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// The host blocked the intent (the plugin broke a rule or hit a limit).
    Host(Failure),
    /// The plugin itself answered with a failed outcome; its `blockedReason` is carried verbatim.
    Plugin(String),
}

/// One outcome: its status, who blocked it (if failed), and its JSON text.
///
/// A plugin's own valid response is kept byte for byte (so it passes through intact and stays
/// deterministic); a host failure is rendered by `Outcome::from_failure`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Completed or failed.
    pub status: Status,
    /// For a failed outcome, who blocked it.
    pub blocked: Option<Blocked>,
    /// The outcome as one JSON object.
    pub json: String,
}

impl Outcome {
    /// Renders a host failure in the documented failed-outcome shape, keys in documented order.
    pub fn from_failure(failure: Failure) -> Self {
        let text = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let mut output = alloc::format!("{{\"retryable\":{}", failure.reason.retryable());
        if let Some(code) = failure.exit_code {
            output.push_str(&alloc::format!(",\"exitCode\":{code}"));
        }
        output.push('}');
        let json = alloc::format!(
            "{{\"status\":\"failed\",\"message\":{},\"blockedReason\":{},\"recoveryHint\":{},\"output\":{output}}}",
            text(&failure.message()),
            text(failure.reason.as_str()),
            text(failure.reason.recovery_hint()),
        );
        Self { status: Status::Failed, blocked: Some(Blocked::Host(failure)), json }
    }

    /// Checks a plugin's response bytes against the outcome shape and keeps them as they are.
    pub fn from_response(bytes: Vec<u8>) -> Result<Self, Failure> {
        let text = String::from_utf8(bytes).map_err(|e| {
            Failure::new(
                BlockedReason::InvalidResponse,
                alloc::format!("The response is not UTF-8 (bad byte at offset {}).", e.utf8_error().valid_up_to()),
            )
        })?;
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            Failure::new(BlockedReason::InvalidResponse, alloc::format!("The response is not JSON: {e}."))
        })?;
        let (status, blocked) = check_shape(&value)?;
        Ok(Self { status, blocked, json: text })
    }

    /// True when the intent completed.
    pub fn is_completed(&self) -> bool {
        self.status == Status::Completed
    }

    /// The host failure, when the host blocked the intent.
    pub fn host_failure(&self) -> Option<&Failure> {
        match &self.blocked {
            Some(Blocked::Host(failure)) => Some(failure),
            _ => None,
        }
    }

    /// The `blockedReason` of a failed outcome (host's or plugin's).
    pub fn blocked_reason(&self) -> Option<&str> {
        match &self.blocked {
            Some(Blocked::Host(failure)) => Some(failure.reason.as_str()),
            Some(Blocked::Plugin(reason)) => Some(reason),
            None => None,
        }
    }
}

fn shape_error(what: &str) -> Failure {
    Failure::new(BlockedReason::InvalidResponse, alloc::format!("The response is not an outcome: {what}."))
}

/// Validates the outcome shape of DESIGN section 3.
fn check_shape(value: &Value) -> Result<(Status, Option<Blocked>), Failure> {
    let object = value.as_object().ok_or_else(|| shape_error("it is not a JSON object"))?;
    match object.get("status").and_then(Value::as_str) {
        Some("completed") => {
            if !object.contains_key("output") {
                return Err(shape_error("a completed outcome needs `output`"));
            }
            Ok((Status::Completed, None))
        }
        Some("failed") => {
            for field in ["message", "blockedReason", "recoveryHint"] {
                if !object.get(field).is_some_and(Value::is_string) {
                    return Err(shape_error(&alloc::format!("a failed outcome needs a string `{field}`")));
                }
            }
            let retryable = object.get("output").and_then(|o| o.get("retryable"));
            if !retryable.is_some_and(Value::is_boolean) {
                return Err(shape_error("a failed outcome needs a boolean `output.retryable`"));
            }
            let reason = object.get("blockedReason").and_then(Value::as_str).unwrap_or_default();
            Ok((Status::Failed, Some(Blocked::Plugin(reason.into()))))
        }
        _ => Err(shape_error("`status` must be \"completed\" or \"failed\"")),
    }
}

/// What one intent produced: the outcome and the figures measured while running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntentReport {
    /// The outcome.
    pub outcome: Outcome,
    /// Fuel consumed by the intent (deterministic).
    pub fuel_used: u64,
    /// Peak linear memory in bytes during the intent (memory never shrinks, so this is its size
    /// when the intent ended).
    pub peak_memory_bytes: u64,
    /// Bytes the plugin wrote to stdout during the intent (captured, bounded).
    pub stdout: Vec<u8>,
    /// Bytes the plugin wrote to stderr during the intent (captured, bounded).
    pub stderr: Vec<u8>,
    /// Bytes of stdout/stderr dropped because the capture was full.
    pub output_dropped: u64,
}
