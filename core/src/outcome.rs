//! The result of one intent: the outcome JSON (completed or failed, docs/ABI.md section 2), the
//! validation of a plugin's response against that shape, and the figures measured on the way.

use crate::reason::{BlockedReason, Failure};
use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// Whether an intent completed or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `"status": "completed"`.
    Completed,
    /// `"status": "failed"`.
    Failed,
}

/// What a front end tells the user in a host failure's outcome instead of core's fixed words
/// (`None`: core's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Told<'a> {
    /// The `message` member.
    pub message: Option<&'a str>,
    /// The `recoveryHint` member.
    pub hint: Option<&'a str>,
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
    /// Where the `output` member's JSON text lies in `json`, for a plugin's own response.
    output_at: Option<core::ops::Range<usize>>,
}

impl Outcome {
    /// Renders a host failure in the documented failed-outcome shape, keys in documented order.
    pub fn from_failure(failure: Failure) -> Self {
        Self::from_failure_told(failure, Told::default())
    }

    /// Renders a host failure as [`Outcome::from_failure`] does, with the message and recovery
    /// hint a front end chose where it has better words (a hint naming the knob that exists
    /// where the user is; "cancelled" for a deadline the user cut short). The shape, the
    /// `blockedReason` and `output` are core's: this is the one renderer of a failed outcome.
    pub fn from_failure_told(failure: Failure, told: Told<'_>) -> Self {
        let text = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let mut output = alloc::format!("{{\"retryable\":{}", failure.reason.retryable());
        if let Some(code) = failure.exit_code {
            output.push_str(&alloc::format!(",\"exitCode\":{code}"));
        }
        output.push('}');
        let json = alloc::format!(
            "{{\"status\":\"failed\",\"message\":{},\"blockedReason\":{},\"recoveryHint\":{},\"output\":{output}}}",
            text(told.message.map_or_else(|| failure.message(), String::from).as_str()),
            text(failure.reason.as_str()),
            text(told.hint.unwrap_or(failure.reason.recovery_hint())),
        );
        Self { status: Status::Failed, blocked: Some(Blocked::Host(failure)), json, output_at: None }
    }

    /// Checks a plugin's response bytes against the outcome shape and keeps them as they are.
    pub fn from_response(bytes: Vec<u8>) -> Result<Self, Failure> {
        let text = String::from_utf8(bytes).map_err(|e| {
            Failure::new(
                BlockedReason::InvalidResponse,
                alloc::format!("The response is not UTF-8 (bad byte at offset {}).", e.utf8_error().valid_up_to()),
            )
        })?;
        // The response of nearly every intent: a plain completed outcome, vouched for in one
        // pass over its bytes without building anything; the rest takes the full reader.
        if let Some(output_at) = scan::completed(&text) {
            return Ok(Self { status: Status::Completed, blocked: None, output_at: Some(output_at), json: text });
        }
        Self::read_response(text)
    }

    /// The full reader of a response (UTF-8 already checked): the serde shape, its rules and the
    /// pass for what a tree reader refuses. It words every error.
    fn read_response(text: String) -> Result<Self, Failure> {
        let shape: Shape<'_> = serde_json::from_str(&text).map_err(|e| read_error(&e))?;
        let output_at = shape.output.map(|raw| offset_in(&text, raw.get()));
        let (status, blocked) = shape.check()?;
        if let Some(why) = unreadable_part(&text) {
            return Err(shape_error(why));
        }
        Ok(Self { status, blocked, output_at: output_at.flatten(), json: text })
    }

    /// The JSON text of the plugin's `output` member, exactly as the plugin wrote it (`None`
    /// for a failure the host rendered). It is never parsed into a tree, so output of any
    /// depth the response limit allows passes on intact.
    pub fn output_json(&self) -> Option<&str> {
        self.output_at.clone().and_then(|range| self.json.get(range))
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

    /// The host's reason, when the host blocked the intent: a plugin's own failed outcome has
    /// none (its `blockedReason` is its own text, [`Outcome::blocked_reason_text`]).
    pub fn blocked_reason(&self) -> Option<BlockedReason> {
        self.host_failure().map(|failure| failure.reason)
    }

    /// The `blockedReason` of a failed outcome as its JSON has it: the host's wire name
    /// ([`BlockedReason::as_str`]) or the plugin's own text.
    pub fn blocked_reason_text(&self) -> Option<&str> {
        match &self.blocked {
            Some(Blocked::Host(failure)) => Some(failure.reason.as_str()),
            Some(Blocked::Plugin(reason)) => Some(reason),
            None => None,
        }
    }
}

/// A response the reader refused: valid JSON of the wrong shape (no object, a duplicate key) in
/// the reader's own words without serde's position suffix, or not JSON at all.
fn read_error(e: &serde_json::Error) -> Failure {
    if e.is_data() {
        let said = alloc::string::ToString::to_string(e);
        shape_error(said.rsplit_once(" at line ").map_or(said.as_str(), |(what, _)| what))
    } else {
        Failure::new(BlockedReason::InvalidResponse, alloc::format!("The response is not JSON: {e}."))
    }
}

/// What JSON grammar allows but a reader into a tree refuses (serde_json's, and many others):
/// a `\u` escape of a lone UTF-16 surrogate, which has no character to decode to, and a number
/// too large for an f64. The shape reader skips values unchecked, so without this pass such a
/// response would reach the embedder and fail there. `text` is valid JSON (the shape reader
/// read it), so one pass tells strings from numbers.
fn unreadable_part(text: &str) -> Option<&'static str> {
    const LONE: &str = "it holds a `\\u` escape of a lone UTF-16 surrogate";
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'"' {
            i += 1;
            // Whether the last escape was a leading surrogate, which a trailing one must follow.
            let mut leading = false;
            while let Some(&c) = bytes.get(i) {
                if c == b'"' {
                    break;
                }
                if c == b'\\' && bytes.get(i + 1) == Some(&b'u') {
                    let hex = bytes.get(i + 2..i + 6).and_then(|hex| core::str::from_utf8(hex).ok());
                    let unit = hex.and_then(|hex| u16::from_str_radix(hex, 16).ok()).unwrap_or(0);
                    match unit {
                        0xD800..=0xDBFF if !leading => leading = true,
                        0xDC00..=0xDFFF if leading => leading = false,
                        0xD800..=0xDFFF => return Some(LONE),
                        _ if leading => return Some(LONE),
                        _ => {}
                    }
                    i += 6;
                    continue;
                }
                if leading {
                    return Some(LONE);
                }
                i += if c == b'\\' { 2 } else { 1 };
            }
            if leading {
                return Some(LONE);
            }
            i += 1;
        } else if byte == b'-' || byte.is_ascii_digit() {
            let start = i;
            while bytes.get(i).is_some_and(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) {
                i += 1;
            }
            if !text.get(start..i).is_some_and(crate::number::is_finite_f64) {
                return Some("it holds a number too large for a 64-bit float");
            }
        } else {
            i += 1;
        }
    }
    None
}

/// The range `part` occupies in `text`, when `part` is a slice of it.
fn offset_in(text: &str, part: &str) -> Option<core::ops::Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let range = start..start.checked_add(part.len())?;
    (text.get(range.clone()) == Some(part)).then_some(range)
}

/// What a JSON value is, as far as the outcome shape cares (strings kept, borrowed when they
/// hold no escapes; everything else only checked to be valid JSON and skipped).
enum Kind<'a> {
    Str(Cow<'a, str>),
    Bool,
    /// An object, with what its `retryable` member is (if it has one).
    Object(Option<Box<Kind<'a>>>),
    Other,
}

impl Kind<'_> {
    fn is_str(&self) -> bool {
        matches!(self, Kind::Str(_))
    }
}

impl<'de> Deserialize<'de> for Kind<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Kind::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Kind::Str(Cow::Owned(v.into())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Kind::Str(Cow::Owned(v)))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Kind::Bool)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Kind::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Kind::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Kind::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Kind::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Kind::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut retryable = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "retryable" {
                if retryable.is_some() {
                    return Err(de::Error::custom("duplicate key `retryable`"));
                }
                retryable = Some(Box::new(map.next_value::<Kind<'de>>()?));
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Kind::Object(retryable))
    }
}

/// The top level of a response, read in one pass: the members the outcome shape names, each
/// at most once (a duplicate would let two readers see two outcomes); the rest skipped.
struct Shape<'a> {
    status: Option<Kind<'a>>,
    /// Kept as text: a completed outcome's output is only checked to be JSON (at any depth).
    output: Option<&'a RawValue>,
    message: Option<Kind<'a>>,
    blocked_reason: Option<Kind<'a>>,
    recovery_hint: Option<Kind<'a>>,
}

impl<'de> Deserialize<'de> for Shape<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an outcome object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut shape = Shape { status: None, output: None, message: None, blocked_reason: None, recovery_hint: None };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let slot = match key.as_ref() {
                "status" => &mut shape.status,
                "output" => {
                    if shape.output.is_some() {
                        return Err(de::Error::custom("duplicate key `output`"));
                    }
                    shape.output = Some(map.next_value()?);
                    continue;
                }
                "message" => &mut shape.message,
                "blockedReason" => &mut shape.blocked_reason,
                "recoveryHint" => &mut shape.recovery_hint,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(de::Error::custom(alloc::format!("duplicate key `{key}`")));
            }
            *slot = Some(map.next_value()?);
        }
        Ok(shape)
    }
    // Any other JSON value is read whole (so bad JSON is still reported as such) and then
    // refused as not an object.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Err(de::Error::custom(NOT_AN_OBJECT))
    }
    fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
}

/// What a response that is valid JSON but no object is told.
const NOT_AN_OBJECT: &str = "it is not a JSON object";

fn shape_error(what: &str) -> Failure {
    Failure::new(BlockedReason::InvalidResponse, alloc::format!("The response is not an outcome: {what}."))
}

impl Shape<'_> {
    /// Validates the outcome shape of docs/ABI.md section 2.
    fn check(self) -> Result<(Status, Option<Blocked>), Failure> {
        match &self.status {
            Some(Kind::Str(status)) if status == "completed" => {
                if self.output.is_none() {
                    return Err(shape_error("a completed outcome needs `output`"));
                }
                Ok((Status::Completed, None))
            }
            Some(Kind::Str(status)) if status == "failed" => {
                let fields = [
                    ("message", &self.message),
                    ("blockedReason", &self.blocked_reason),
                    ("recoveryHint", &self.recovery_hint),
                ];
                for (field, kind) in fields {
                    if !kind.as_ref().is_some_and(Kind::is_str) {
                        return Err(shape_error(&alloc::format!("a failed outcome needs a string `{field}`")));
                    }
                }
                let output: Option<Kind<'_>> =
                    self.output.map(|raw| serde_json::from_str(raw.get())).transpose().map_err(|e| read_error(&e))?;
                if !matches!(&output, Some(Kind::Object(Some(retryable))) if matches!(**retryable, Kind::Bool)) {
                    return Err(shape_error("a failed outcome needs a boolean `output.retryable`"));
                }
                let reason = match self.blocked_reason {
                    Some(Kind::Str(reason)) => reason.into_owned(),
                    _ => String::new(),
                };
                if let Some(why) = plugin_reason_problem(&reason) {
                    return Err(shape_error(&why));
                }
                Ok((Status::Failed, Some(Blocked::Plugin(reason))))
            }
            _ => Err(shape_error("`status` must be \"completed\" or \"failed\"")),
        }
    }
}

/// The most bytes of a plugin's own `blockedReason`.
pub const MAX_PLUGIN_REASON_BYTES: usize = 128;

/// What is wrong with a plugin's own `blockedReason`, if anything: it names a reason (1 to
/// [`MAX_PLUGIN_REASON_BYTES`] bytes, not blank, no control characters), the rule of an intent
/// name, so what a workspace keeps of it and every line that shows it stay small. It may be one
/// of the host's values: a plugin forwards a failed host answer as it came (the SDKs' `?`).
fn plugin_reason_problem(reason: &str) -> Option<String> {
    let blank = reason.trim().is_empty();
    if blank || reason.len() > MAX_PLUGIN_REASON_BYTES || reason.chars().any(char::is_control) {
        return Some(alloc::format!(
            "a failed outcome's `blockedReason` must be 1 to {MAX_PLUGIN_REASON_BYTES} bytes, not blank, without control characters"
        ));
    }
    None
}

/// What one intent produced: the outcome and the figures measured while running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntentReport {
    /// The outcome.
    pub outcome: Outcome,
    /// Fuel consumed by the intent (deterministic), the launch it triggered included.
    pub fuel_used: u64,
    /// The part of `fuel_used` spent launching the instance (start function and
    /// `_initialize`), when the intent launched one; 0 when it ran on a live instance.
    pub launch_fuel: u64,
    /// Peak linear memory in bytes during the intent (memory never shrinks, so this is its size
    /// when the intent ended).
    pub peak_memory_bytes: u64,
    /// Host calls the intent made (nested tool calls' included).
    pub host_calls: u32,
    /// Bytes its host calls moved (requests and answers, nested ones included).
    pub host_bytes: u64,
    /// Bytes the plugin wrote to stdout during the intent (captured, bounded).
    pub stdout: Vec<u8>,
    /// Bytes the plugin wrote to stderr during the intent (captured, bounded).
    pub stderr: Vec<u8>,
    /// Bytes of stdout/stderr dropped because the capture was full.
    pub output_dropped: u64,
}

impl IntentReport {
    /// The report of an intent the host failed before its code ran (or whose launch failed):
    /// the failure's outcome, `launch_fuel` spent, nothing else measured or captured.
    pub fn failed(failure: Failure, launch_fuel: u64) -> Self {
        Self {
            outcome: Outcome::from_failure(failure),
            fuel_used: launch_fuel,
            launch_fuel,
            peak_memory_bytes: 0,
            host_calls: 0,
            host_bytes: 0,
            stdout: Vec::new(),
            stderr: Vec::new(),
            output_dropped: 0,
        }
    }
}

mod scan;

#[cfg(test)]
mod tests;
