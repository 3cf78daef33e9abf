//! One run of a session: what is asked (an intent or a raw request) and what came back, with
//! the figures `--stats` and the REPL print and what the host intents noticed on the way.

use crate::intents::Notice;
use crate::params::Params;
use crate::workspace::{now_ms, LastCall};
use contour_core::{Failure, IntentReport};
use serde_json::{json, Value};
use std::fmt;
use std::time::Duration;

/// What to run: an intent with params, or a raw JSON-RPC request sent as it is.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `METHOD` with params.
    Intent {
        /// The method.
        method: String,
        /// Its params, as the user wrote them.
        params: Params,
    },
    /// A raw request (the REPL's `{...}` lines).
    Raw(String),
}

impl Request {
    /// The method, when it can be read (a raw request's `method` member; `None` for a raw
    /// request that names it twice, see [`raw_method`]).
    pub fn method(&self) -> Option<String> {
        match self {
            Self::Intent { method, .. } => Some(method.clone()),
            Self::Raw(text) => raw_method(text).ok(),
        }
    }

    /// The params as JSON text (`null` when a raw request has none), when they can be read:
    /// what a declared params schema is applied to.
    pub fn params_text(&self) -> Option<String> {
        match self {
            Self::Intent { params, .. } => Some(params.text().to_string()),
            Self::Raw(text) => {
                raw_method(text).ok()?;
                let request: Value = serde_json::from_str(text).ok()?;
                Some(request.get("params").map_or_else(|| "null".to_string(), Value::to_string))
            }
        }
    }
}

/// Why a raw JSON-RPC request has no `method` that can be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawRequestError {
    /// Not JSON at all (serde_json's reason).
    NotJson(String),
    /// JSON, but not an object (serde_json's reason, when it has one).
    NotObject(Option<String>),
    /// A top-level member named twice (its name, shortened).
    Repeated(String),
    /// No string `method` member.
    NoMethod,
}

impl fmt::Display for RawRequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson(why) => write!(f, "it is not JSON: {why}"),
            Self::NotObject(None) => f.write_str("it is not a JSON object"),
            Self::NotObject(Some(why)) => write!(f, "it is not a JSON object: {why}"),
            Self::Repeated(name) => {
                write!(f, "it names `{name}` twice: readers differ on which counts, so it is not sent")
            }
            Self::NoMethod => f.write_str("it has no string `method`"),
        }
    }
}

impl std::error::Error for RawRequestError {}

/// The `method` of a raw JSON-RPC request sent as it is, or why it has none that can be
/// trusted: not a JSON object, no string `method`, or a top-level member named twice (in any
/// spelling, `"metho\u0064"` too). Readers differ on which copy of a repeated member counts
/// (serde_json takes the last, the SDKs' scanners the first), so a request naming `method`
/// twice could be checked as one intent and run as another.
pub fn raw_method(text: &str) -> Result<String, RawRequestError> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut keys = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                keys.push(key);
            }
            Ok(keys)
        }
    }
    let value: Value = serde_json::from_str(text).map_err(|e| RawRequestError::NotJson(e.to_string()))?;
    if !value.is_object() {
        return Err(RawRequestError::NotObject(None));
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    let mut keys = reader.deserialize_map(Keys).map_err(|e| RawRequestError::NotObject(Some(e.to_string())))?;
    keys.sort_unstable();
    if let Some(twice) = keys.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(RawRequestError::Repeated(crate::files::truncated(&twice[0], 64)));
    }
    value.get("method").and_then(Value::as_str).map(str::to_string).ok_or(RawRequestError::NoMethod)
}

/// One intent run: the report, the time it took, whether Ctrl-C cancelled it, and what the
/// host intents noticed while it ran.
#[derive(Debug)]
pub struct RunReport {
    /// What core reported.
    pub report: IntentReport,
    /// Wall time, launch included.
    pub elapsed: Duration,
    /// Cancelled by its caller (Ctrl-C at the CLI): the outcome is `cancelled`.
    pub cancelled: bool,
    /// The instance was discarded (the next intent starts a fresh one).
    pub discarded: bool,
    /// Fuel the launch used (0 when the instance was already running).
    pub launch_fuel: u64,
    /// The intent was refused before it ran: an installed plugin's undeclared intent.
    pub undeclared: bool,
    /// The plugin's `log` lines and the host's notices, in order (text the plugin chose: escape
    /// it before a terminal).
    pub notices: Vec<Notice>,
}

impl RunReport {
    /// An intent refused before anything ran (`undeclared`: because its plugin.toml does not
    /// declare it).
    pub fn refused(failure: Failure, undeclared: bool) -> Self {
        Self {
            report: IntentReport::failed(failure, 0),
            elapsed: Duration::ZERO,
            cancelled: false,
            discarded: false,
            launch_fuel: 0,
            undeclared,
            notices: Vec::new(),
        }
    }

    /// What the workspace keeps of an installed plugin's run of `method` (`tdm workspace
    /// status` shows it).
    pub fn last_call(&self, method: &str) -> LastCall {
        let outcome = &self.report.outcome;
        LastCall {
            method: method.to_string(),
            status: if outcome.is_completed() { "completed" } else { "failed" }.to_string(),
            blocked_reason: outcome.blocked_reason_text().map(str::to_string),
            fuel_used: self.report.fuel_used,
            peak_memory_bytes: self.report.peak_memory_bytes,
            duration_us: u64::try_from(self.elapsed.as_micros()).unwrap_or(u64::MAX),
            at_ms: now_ms(),
        }
    }

    /// The figures (`--stats`) as one JSON object.
    pub fn stats_json(&self) -> Value {
        json!({
            "fuelUsed": self.report.fuel_used,
            "launchFuel": self.launch_fuel,
            "peakMemoryBytes": self.report.peak_memory_bytes,
            "elapsedUs": u64::try_from(self.elapsed.as_micros()).unwrap_or(u64::MAX),
            "hostCalls": self.report.host_calls,
            "cancelled": self.cancelled,
        })
    }

    /// The figures as one text line.
    pub fn stats_line(&self) -> String {
        format!(
            "fuel_used={} launch_fuel={} peak_memory_bytes={} elapsed_us={} host_calls={}",
            self.report.fuel_used,
            self.launch_fuel,
            self.report.peak_memory_bytes,
            self.elapsed.as_micros(),
            self.report.host_calls
        )
    }
}
