//! The plugin's own failed outcome.

use crate::host::HostError;
use crate::json;
use alloc::string::String;

/// The recovery hint of a failure that was given none.
const DEFAULT_HINT: &str = "Check the intent's params against the plugin's documentation and retry.";

/// A failed outcome of the plugin's own:
/// `{"status":"failed","message":..,"blockedReason":..,"recoveryHint":..,"output":{"retryable":..}}`.
///
/// ```
/// use tdm_plugin::Failure;
/// let failure = Failure::new("quota_exceeded", "The daily quota is used up.")
///     .hint("Try again tomorrow.")
///     .retryable(true);
/// assert_eq!(failure.blocked_reason(), "quota_exceeded");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    blocked_reason: String,
    message: String,
    recovery_hint: String,
    retryable: bool,
}

impl Failure {
    /// A failure with `blockedReason` = `reason` (a short `snake_case` word of the plugin's own,
    /// e.g. `plugin_policy_rejected`) and a human-readable `message`. Not retryable, with a
    /// generic recovery hint until [`Failure::hint`] sets one.
    pub fn new(reason: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            blocked_reason: reason.into(),
            message: message.into(),
            recovery_hint: DEFAULT_HINT.into(),
            retryable: false,
        }
    }

    /// Sets `recoveryHint`: what the caller can do about it.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.recovery_hint = hint.into();
        self
    }

    /// Sets `output.retryable`: whether the same request may succeed later.
    #[must_use]
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// The `blockedReason`.
    pub fn blocked_reason(&self) -> &str {
        &self.blocked_reason
    }

    /// The `message`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `recoveryHint`.
    pub fn recovery_hint(&self) -> &str {
        &self.recovery_hint
    }

    /// Whether the failure is retryable.
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }

    /// The outcome JSON (without the ABI's length prefix).
    pub fn to_json(&self) -> alloc::vec::Vec<u8> {
        let mut json = alloc::vec::Vec::with_capacity(
            96 + self.message.len() + self.blocked_reason.len() + self.recovery_hint.len(),
        );
        self.write_outcome(&mut json);
        json
    }

    /// Appends the outcome JSON to `out`, as serde_json would write it.
    pub(crate) fn write_outcome(&self, out: &mut alloc::vec::Vec<u8>) {
        out.extend_from_slice(br#"{"status":"failed","message":"#);
        json::ser::write_str(out, &self.message);
        out.extend_from_slice(br#","blockedReason":"#);
        json::ser::write_str(out, &self.blocked_reason);
        out.extend_from_slice(br#","recoveryHint":"#);
        json::ser::write_str(out, &self.recovery_hint);
        out.extend_from_slice(if self.retryable {
            br#","output":{"retryable":true}}"#
        } else {
            br#","output":{"retryable":false}}"#
        });
    }
}

/// A failed host call becomes the plugin's failure as it is, so `?` passes the host's
/// `blockedReason` (e.g. `permission_denied`), message, hint and `retryable` on.
impl From<HostError> for Failure {
    fn from(error: HostError) -> Self {
        match error {
            HostError::Failed { blocked_reason, message, recovery_hint, retryable } => {
                Failure { blocked_reason, message, recovery_hint, retryable }
            }
            other => Failure::new("host_call_failed", alloc::format!("{other}"))
                .hint("This is a bug in the plugin or the SDK; report it to the plugin's author."),
        }
    }
}
