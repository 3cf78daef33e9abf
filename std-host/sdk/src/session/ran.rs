//! One run of a session: what is asked (an intent or a raw request) and what came back, with
//! the figures `--stats` and the REPL print.

use crate::hints::{self, Front};
use crate::params::Params;
use contour_core::IntentReport;
use serde_json::{json, Value};
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
}

/// The `method` of a raw JSON-RPC request sent as it is, or why it has none that can be
/// trusted: not a JSON object, no string `method`, or a top-level member named twice (in any
/// spelling, `"metho\u0064"` too). Readers differ on which copy of a repeated member counts
/// (serde_json takes the last, the SDKs' scanners the first), so a request naming `method`
/// twice could be checked as one intent and run as another.
pub fn raw_method(text: &str) -> Result<String, String> {
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
    let value: Value = serde_json::from_str(text).map_err(|e| format!("it is not JSON: {e}"))?;
    if !value.is_object() {
        return Err("it is not a JSON object".into());
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    let mut keys = reader.deserialize_map(Keys).map_err(|e| format!("it is not a JSON object: {e}"))?;
    keys.sort_unstable();
    if let Some(twice) = keys.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(format!(
            "it names `{}` twice: readers differ on which counts, so it is not sent",
            crate::files::truncated(&twice[0], 64)
        ));
    }
    value
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "it has no string `method`".to_string())
}

/// One intent run: the report, the time it took, and whether Ctrl-C cancelled it.
#[derive(Debug)]
pub struct Ran {
    /// What core reported.
    pub report: IntentReport,
    /// Wall time, launch included.
    pub elapsed: Duration,
    /// Cancelled by Ctrl-C (it ends as `deadline_exceeded`).
    pub cancelled: bool,
    /// The instance was discarded (the next intent starts a fresh one).
    pub discarded: bool,
    /// Fuel the launch used (0 when the instance was already running).
    pub launch_fuel: u64,
    /// The intent was refused before it ran: an installed plugin's undeclared intent.
    pub undeclared: bool,
}

impl Ran {
    /// The outcome's JSON as printed at `front`.
    pub fn outcome_json(&self, front: Front) -> String {
        let context =
            hints::Context { cancelled: self.cancelled, undeclared: self.undeclared, ..hints::Context::default() };
        hints::outcome_json(&self.report.outcome, front, context).into_owned()
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
