//! Replaying a trace (`contour_core::replay`): decoded within its bounds, its module checked by
//! sha256, its policy held to a ceiling before anything loads, every request run again with
//! the recorded inputs, and the first divergence reported.

use crate::error::{guard, ContourStatus, Error};
use crate::handle::{buffer, bytes, free_buffers, ContourBuffer, Out};
use crate::policy::{policy_or_default, ContourPolicy};
use alloc::format;
use alloc::string::ToString;
use alloc::sync::Arc;
use contour_core::{replay, sha256, Plugin, Trace};

/// What a replay found. The buffers belong to the caller: free them with
/// `contour_replay_report_free`.
#[repr(C)]
#[derive(Debug)]
pub struct ContourReplayReport {
    /// Intents replayed (up to and including a divergent one).
    pub intents: u64,
    /// Intents in the trace.
    pub recorded_intents: u64,
    /// The digest of the replayed run (sha256 over every intent's response, reason, fuel and
    /// peak memory); equal to the recording's when nothing diverged.
    pub digest: [u8; 32],
    /// Whether an intent diverged from the trace.
    pub diverged: bool,
    /// The first divergence as text (`intent 2: fuel differs: ...`); NULL when none.
    pub divergence: *mut ContourBuffer,
    /// The last intent's outcome JSON, which the replay reproduced byte for byte; NULL when it
    /// diverged or the trace has no intents.
    pub last_outcome: *mut ContourBuffer,
    /// Whether that outcome completed.
    pub last_completed: bool,
    /// That intent's fuel, which the replay reproduced.
    pub last_fuel_used: u64,
}

/// Replays the trace in the `trace_len` bytes at `trace` against the module in the
/// `module_len` bytes at `module` (the one the trace recorded, by sha256), filling
/// `*report_out`. Before anything loads, the trace's policy must be within `ceiling` (NULL: the
/// default policy) on every limit that costs memory (docs/ABI.md section 8) and on
/// `fuel_per_intent`, which bounds how long a forged trace can run.
///
/// `CONTOUR_STATUS_OK`: every intent replayed identically. `CONTOUR_STATUS_DIVERGED`: the
/// report says where (the report is filled). `CONTOUR_STATUS_TRACE`: the trace does not decode,
/// the module is not the recorded one or does not load, or the policy is above the ceiling
/// (the report is not written).
#[no_mangle]
pub extern "C" fn contour_replay(
    trace: *const u8,
    trace_len: usize,
    module: *const u8,
    module_len: usize,
    ceiling: *const ContourPolicy,
    report_out: *mut ContourReplayReport,
) -> ContourStatus {
    guard("contour_replay", || {
        let trace_bytes = bytes(trace, trace_len, "trace")?;
        let module = bytes(module, module_len, "module")?;
        let ceiling = policy_or_default(ceiling, "ceiling")?;
        let out = Out::new(report_out, "report_out")?;
        let failed = |what: &str| Error::new(ContourStatus::Trace, what.to_string());
        let trace = Trace::decode(trace_bytes).map_err(|e| failed(&format!("{e}")))?;
        if sha256(module) != trace.header.module_sha256 {
            return Err(failed("the module's sha256 is not the one the trace recorded"));
        }
        let policy = trace.policy().map_err(|e| failed(&format!("{e}")))?;
        policy.check_within(&ceiling).map_err(|e| failed(&format!("the trace's policy: {e}")))?;
        if policy.fuel_per_intent > ceiling.fuel_per_intent {
            return Err(failed(&format!(
                "the trace's policy: `fuel_per_intent` is {}, above the ceiling's {}",
                policy.fuel_per_intent, ceiling.fuel_per_intent
            )));
        }
        let plugin = Plugin::load(module, policy).map_err(|f| failed(&format!("the module: {f}")))?;
        let report = replay(&trace, Arc::new(plugin)).map_err(|e| failed(&format!("{e}")))?;
        let last = trace.intents.last().filter(|_| report.divergence.is_none());
        let diverged = report.divergence.is_some();
        out.put(ContourReplayReport {
            intents: report.intents as u64,
            recorded_intents: trace.intents.len() as u64,
            digest: report.digest,
            diverged,
            divergence: report.divergence.map_or(core::ptr::null_mut(), |d| buffer(d.to_string().into_bytes())),
            last_outcome: last.map_or(core::ptr::null_mut(), |intent| buffer(intent.response.clone())),
            last_completed: last.is_some_and(|intent| intent.reason.is_none()),
            last_fuel_used: last.map_or(0, |intent| intent.fuel),
        });
        if diverged {
            return Err(Error::new(ContourStatus::Diverged, "the replay diverged from the trace (see the report)"));
        }
        Ok(())
    })
}

/// Frees the buffers of `*report` and sets them to NULL (NULL ones are skipped).
#[no_mangle]
pub extern "C" fn contour_replay_report_free(report: *mut ContourReplayReport) -> ContourStatus {
    guard("contour_replay_report_free", || {
        let mut report = Out::new(report, "report")?;
        let report = report.existing();
        let fields = [&mut report.divergence, &mut report.last_outcome];
        free_buffers(fields)
    })
}
