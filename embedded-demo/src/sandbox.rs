//! The firmware's one contact with contour-core; keep it that way, so a change in core's API is
//! adapted here alone. It runs a bundled plugin's intent, and replays a bundled trace.
//!
//! A bundled plugin is loaded under `Policy::embedded()` (with less linear memory on a
//! 256 KiB-RAM part, `part-256k`) and runs one intent through the same
//! `Plugin::load` + `Sandbox::execute` path as `tdm run` (entered at `execute_request`, with the
//! request bytes `execute` would serialize). The board's environment is core's
//! `VirtualEnvironment`: a virtual clock, entropy seeded from [`SEED`], and no wall clock, so
//! no deadline (fuel alone bounds an intent). What the demo prints is copied into fixed-size
//! buffers whose bounds follow from the policy.

use alloc::boxed::Box;
use alloc::sync::Arc;
use contour_core::{IntentReport, Outcome, Plugin, Policy, Sandbox, VirtualEnvironment};
use contour_core::{EMBEDDED_MAX_MESSAGE_BYTES, EMBEDDED_MAX_OUTPUT_BYTES};
use heapless::{String, Vec};

/// The seed of the board's entropy (`tdm run --seed 7` gives the host the same inputs).
pub const SEED: u64 = 7;
/// Room for one outcome: a plugin's own response is at most the policy's response limit; a
/// failure the host renders is far shorter except for pathological details (then the case
/// fails as too long, never truncated).
pub const OUTCOME_CAP: usize = EMBEDDED_MAX_MESSAGE_BYTES as usize;
/// Room for one stream of captured plugin output: the policy's capture limit.
pub const CAPTURE_CAP: usize = EMBEDDED_MAX_OUTPUT_BYTES;
/// Room for one request: the policy's request limit.
pub const REQUEST_CAP: usize = EMBEDDED_MAX_MESSAGE_BYTES as usize;
/// Room for a `blockedReason` (the host's are at most 24 bytes; a plugin's own may be longer).
pub const REASON_CAP: usize = 64;

/// The limits the demo prints in its header.
pub struct Limits {
    /// `Policy::max_memory_bytes`.
    pub max_memory_bytes: u64,
    /// `Policy::fuel_per_intent`.
    pub fuel_per_intent: u64,
}

/// The linear memory a plugin may have on a 256 KiB-RAM part (`part-256k`): two pages, so the
/// heap's high-water (a memory growing from one page to two holds both buffers at once, plus the
/// engine and the module) stays within the heap that part leaves.
#[cfg(feature = "part-256k")]
pub const PART_MAX_MEMORY_BYTES: u64 = 128 * 1024;

/// The policy every case runs under: `Policy::embedded()`, and on a 256 KiB-RAM part the same
/// with [`PART_MAX_MEMORY_BYTES`] of linear memory.
pub fn policy() -> Policy {
    #[cfg(feature = "part-256k")]
    return Policy { max_memory_bytes: PART_MAX_MEMORY_BYTES, ..Policy::embedded() };
    #[cfg(not(feature = "part-256k"))]
    Policy::embedded()
}

/// The policy's limits.
pub fn limits() -> Limits {
    let policy = policy();
    Limits { max_memory_bytes: policy.max_memory_bytes, fuel_per_intent: policy.fuel_per_intent }
}

/// What one intent gave, in fixed-size buffers.
pub struct IntentRun {
    /// The outcome JSON, as the host prints it.
    pub outcome: String<OUTCOME_CAP>,
    /// Whether the outcome is `completed`.
    pub completed: bool,
    /// The `blockedReason` of a failed outcome.
    pub blocked_reason: Option<String<REASON_CAP>>,
    /// Fuel used (0 when the module was rejected at load: nothing ran).
    pub fuel_used: u64,
    /// Linear memory at the end of the intent.
    pub peak_memory_bytes: u64,
    /// What the plugin wrote to stdout.
    pub stdout: Vec<u8, CAPTURE_CAP>,
}

/// Why an intent's result could not be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunError {
    /// The case's method needs escaping or its params are not a JSON object's text.
    Params,
    /// A result did not fit its buffer (which one).
    TooLong(&'static str),
}

/// Loads `module` under the embedded policy and runs `method` with `params` (JSON text) once,
/// in a fresh sandbox that is dropped before this returns.
pub fn run(module: &[u8], method: &str, params: &str) -> Result<IntentRun, RunError> {
    let request = request(method, params)?;
    match Plugin::load(module, policy()) {
        Ok(plugin) => {
            let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(SEED)));
            from_report(&sandbox.execute_request(&request))
        }
        Err(failure) => from_outcome(&Outcome::from_failure(failure), 0, 0, &[]),
    }
}

/// The JSON-RPC request `Sandbox::execute` would send as a fresh sandbox's first intent, byte for
/// byte (`{"id":1,"jsonrpc":"2.0","method":...,"params":...}`: the keys in serde_json's order,
/// the params as the case's compact JSON text), written here so the firmware never parses JSON
/// into a `serde_json::Value` (no JSON parser of its own in flash; core's remains). The method
/// must need no escaping and the params must be a JSON object's text (the cases are constants,
/// and the host parses the same params as JSON when it compares outcomes).
fn request(method: &str, params: &str) -> Result<Vec<u8, REQUEST_CAP>, RunError> {
    let plain = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'/');
    let object = params.starts_with('{') && params.ends_with('}');
    if !(object && method.bytes().all(plain)) {
        return Err(RunError::Params);
    }
    let mut request = Vec::new();
    for part in [r#"{"id":1,"jsonrpc":"2.0","method":""#, method, r#"","params":"#, params, "}"] {
        request.extend_from_slice(part.as_bytes()).map_err(|_| RunError::TooLong("request"))?;
    }
    Ok(request)
}

fn from_report(report: &IntentReport) -> Result<IntentRun, RunError> {
    from_outcome(&report.outcome, report.fuel_used, report.peak_memory_bytes, &report.stdout)
}

fn from_outcome(
    outcome: &Outcome,
    fuel_used: u64,
    peak_memory_bytes: u64,
    stdout: &[u8],
) -> Result<IntentRun, RunError> {
    let blocked_reason = match outcome.blocked_reason_text() {
        Some(reason) => Some(String::try_from(reason).map_err(|_| RunError::TooLong("blockedReason"))?),
        None => None,
    };
    Ok(IntentRun {
        outcome: String::try_from(outcome.json.as_str()).map_err(|_| RunError::TooLong("outcome"))?,
        completed: outcome.is_completed(),
        blocked_reason,
        fuel_used,
        peak_memory_bytes,
        stdout: Vec::from_slice(stdout).map_err(|_| RunError::TooLong("stdout"))?,
    })
}

/// What replaying one trace gave: the digest of the replayed run (hex) and whether it diverged
/// from the trace.
#[derive(Debug, Clone, Default)]
pub struct TraceRun {
    /// The replay digest, lower-case hex.
    pub digest: String<64>,
    /// Whether the replay found a divergence.
    pub divergence: bool,
}

/// The most linear memory any intent of a trace had when it was recorded (`None` when the
/// trace does not decode: the replay then says why).
pub fn trace_peak_memory(trace: &[u8]) -> Option<u64> {
    let trace = contour_core::Trace::decode(trace).ok()?;
    Some(trace.intents.iter().map(|intent| intent.peak_memory).max().unwrap_or(0))
}

/// Replays trace bytes on `module` through core's replay entry point (the module must be the
/// one the trace recorded: its hash is checked); the error is a short reason.
pub fn replay(trace: &[u8], module: &[u8]) -> Result<TraceRun, &'static str> {
    let report = contour_core::replay_bytes(trace, module).map_err(|_| "error")?;
    let hex = contour_core::hex(&report.digest);
    Ok(TraceRun {
        digest: String::try_from(hex.as_str()).map_err(|_| "error")?,
        divergence: report.divergence.is_some(),
    })
}
