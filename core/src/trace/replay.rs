//! Replay: a second implementation of `Environment` and `HostIntents` that serves a trace's
//! inputs in order instead of asking a real clock, generator or host, driven through the same
//! `Sandbox` path as the recording. Each intent's response bytes, reason, fuel, peak memory and
//! output are compared with the record; the first difference (or an input the plugin asked for
//! that the trace does not have, or one it no longer asked for) is the divergence reported.

use super::{
    output_digest, recorded_digest, sha256, Digest, Input, IntentTrace, RecordedAnswer, RunDigest, Trace, TraceError,
};
use crate::env::{Clock, Environment, Slept};
use crate::host::{AuditRecord, CallContext, HostAnswer, HostCall, HostIntents, Spent};
use crate::meter::Stop;
use crate::outcome::IntentReport;
use crate::permission::Permissions;
use crate::plugin::Plugin;
use crate::reason::{BlockedReason, Failure};
use crate::sandbox::Sandbox;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicBool, Ordering};
use serde_json::value::RawValue;
use spin::Mutex;

/// What differed first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DivergenceKind {
    /// The plugin asked for an input of another kind (or with other arguments) than the one
    /// recorded at this position.
    InputMismatch {
        /// Position in the intent's inputs.
        position: usize,
        /// What the plugin asked for.
        asked: String,
        /// What the trace holds there.
        recorded: String,
    },
    /// The plugin asked for more inputs than were recorded.
    InputMissing {
        /// Position in the intent's inputs.
        position: usize,
        /// What the plugin asked for.
        asked: String,
    },
    /// The plugin asked for fewer inputs than were recorded.
    InputsUnused {
        /// Inputs read.
        read: usize,
        /// Inputs recorded.
        recorded: usize,
    },
    /// The response bytes differ; the windows show each around the first differing byte.
    Response {
        /// Offset of the first differing byte.
        at: usize,
        /// The recorded bytes around it.
        recorded: String,
        /// The replayed bytes around it.
        replayed: String,
    },
    /// The `blockedReason` differs.
    Reason {
        /// Recorded.
        recorded: Option<String>,
        /// Replayed.
        replayed: Option<String>,
    },
    /// The fuel differs.
    Fuel {
        /// Recorded.
        recorded: u64,
        /// Replayed.
        replayed: u64,
    },
    /// The peak memory differs.
    PeakMemory {
        /// Recorded.
        recorded: u64,
        /// Replayed.
        replayed: u64,
    },
    /// The captured stdout/stderr differ.
    Output,
}

/// The first divergence of a replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The intent's index in the trace (from 0).
    pub intent: usize,
    /// What differed.
    pub kind: DivergenceKind,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "intent {}: ", self.intent + 1)?;
        match &self.kind {
            DivergenceKind::InputMismatch { position, asked, recorded } => {
                write!(f, "input {} differs: the plugin asked for {asked}, the trace has {recorded}", position + 1)
            }
            DivergenceKind::InputMissing { position, asked } => {
                write!(f, "input {}: the plugin asked for {asked}, which was not recorded", position + 1)
            }
            DivergenceKind::InputsUnused { read, recorded } => {
                write!(f, "the plugin read {read} inputs; {recorded} were recorded")
            }
            DivergenceKind::Response { at, recorded, replayed } => {
                write!(f, "response bytes differ at byte {at}: recorded `{recorded}`, replayed `{replayed}`")
            }
            DivergenceKind::Reason { recorded, replayed } => {
                let show = |r: &Option<String>| r.clone().unwrap_or_else(|| String::from("completed"));
                write!(f, "reason differs: recorded {}, replayed {}", show(recorded), show(replayed))
            }
            DivergenceKind::Fuel { recorded, replayed } => {
                write!(f, "fuel differs: recorded {recorded}, replayed {replayed}")
            }
            DivergenceKind::PeakMemory { recorded, replayed } => {
                write!(f, "peak memory differs: recorded {recorded} bytes, replayed {replayed}")
            }
            DivergenceKind::Output => f.write_str("the captured stdout/stderr differ"),
        }
    }
}

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayReport {
    /// Intents replayed (up to and including a divergent one).
    pub intents: usize,
    /// The digest of the replayed run (see `RunDigest`); equal to the trace's own when identical.
    pub digest: Digest,
    /// The first divergence, if any.
    pub divergence: Option<Divergence>,
}

/// The replayed intent's inputs and where the plugin is in them.
#[derive(Default)]
struct Cursor {
    inputs: Vec<Input>,
    position: usize,
    divergence: Option<DivergenceKind>,
}

impl Cursor {
    /// The next input when `matches` accepts it; otherwise records the divergence.
    fn next<T>(&mut self, asked: impl Fn() -> String, matches: impl FnOnce(&Input) -> Option<T>) -> Option<T> {
        if self.divergence.is_some() {
            return None;
        }
        let position = self.position;
        let Some(input) = self.inputs.get(position) else {
            self.divergence = Some(DivergenceKind::InputMissing { position, asked: asked() });
            return None;
        };
        match matches(input) {
            Some(value) => {
                self.position += 1;
                Some(value)
            }
            None => {
                let recorded = input.kind();
                self.divergence = Some(DivergenceKind::InputMismatch { position, asked: asked(), recorded });
                None
            }
        }
    }
}

type Shared = Arc<Mutex<Cursor>>;

fn clock_id(clock: Clock) -> u8 {
    match clock {
        Clock::Realtime => 0,
        Clock::Monotonic => 1,
        Clock::ProcessCpu => 2,
        Clock::ThreadCpu => 3,
    }
}

/// Serves recorded clock readings, entropy and sleeps.
struct ReplayEnv {
    cursor: Shared,
    stop: Arc<AtomicBool>,
}

impl Environment for ReplayEnv {
    fn now_ns(&mut self, clock: Clock) -> u64 {
        let id = clock_id(clock);
        let asked = || format!("clock_time_get(clock {id})");
        self.cursor
            .lock()
            .next(asked, |input| match input {
                Input::Clock { clock, ns } if *clock == id => Some(*ns),
                _ => None,
            })
            .unwrap_or(0)
    }

    fn resolution_ns(&self, clock: Clock) -> u64 {
        let id = clock_id(clock);
        let asked = || format!("clock_res_get(clock {id})");
        self.cursor
            .lock()
            .next(asked, |input| match input {
                Input::Resolution { clock, ns } if *clock == id => Some(*ns),
                _ => None,
            })
            .unwrap_or(0)
    }

    fn fill_random(&mut self, dest: &mut [u8]) {
        let len = dest.len();
        let asked = || format!("random_get({len} bytes)");
        let bytes = self.cursor.lock().next(asked, |input| match input {
            Input::Random { bytes } if bytes.len() == len => Some(bytes.clone()),
            _ => None,
        });
        match bytes {
            Some(bytes) => dest.copy_from_slice(&bytes),
            None => dest.fill(0),
        }
    }

    fn sleep_ns(&mut self, ns: u64, _deadline_ns: Option<u64>) -> Slept {
        let asked = || format!("a sleep of {ns} ns");
        let cut = self.cursor.lock().next(asked, |input| match input {
            Input::Sleep { ns: recorded, cut } if *recorded == ns => Some(*cut),
            _ => None,
        });
        if cut == Some(true) {
            Slept::CutAtDeadline
        } else {
            Slept::Full
        }
    }

    /// No wall time passes in a replay: the deadline never expires on its own (a recorded cut
    /// is replayed by fuel), except that a divergence or the embedder's stop flag stops the
    /// intent at the next check.
    fn deadline_clock_ns(&mut self) -> Option<u64> {
        let stopped = self.stop.load(Ordering::Relaxed) || self.cursor.lock().divergence.is_some();
        Some(if stopped { u64::MAX } else { 0 })
    }
}

/// Serves recorded host-call answers; the real host is never asked.
struct ReplayIntents {
    cursor: Shared,
}

fn answer_of(recorded: &RecordedAnswer) -> HostAnswer {
    let spent = Spent {
        fuel: recorded.fuel,
        host_calls: recorded.host_calls,
        host_bytes: recorded.host_bytes,
        stdout: recorded.stdout.clone(),
        stderr: recorded.stderr.clone(),
    };
    let result = match &recorded.result {
        Ok(output) => RawValue::from_string(output.clone())
            .map_err(|e| Failure::new(BlockedReason::HostFault, format!("The recorded answer is not JSON: {e}."))),
        Err(failure) => Err(Failure::new(
            BlockedReason::from_name(&failure.reason).unwrap_or(BlockedReason::HostFault),
            failure.detail.clone(),
        )),
    };
    HostAnswer { result, spent }
}

impl HostIntents for ReplayIntents {
    fn call(&mut self, call: &HostCall, _context: &CallContext) -> HostAnswer {
        let described = call.describe();
        let asked = || format!("host call {described}");
        let answer = self.cursor.lock().next(asked, |input| match input {
            Input::Host { call, answer } if *call == described => Some(answer_of(answer)),
            _ => None,
        });
        answer.unwrap_or_else(|| HostAnswer::failed(BlockedReason::HostFault, "The replay diverged here."))
    }

    fn audit(&mut self, _record: &AuditRecord) {}
}

/// The window of `bytes` around `at`, as text.
fn window(bytes: &[u8], at: usize) -> String {
    let start = at.saturating_sub(24);
    let end = (at + 24).min(bytes.len());
    String::from_utf8_lossy(bytes.get(start..end).unwrap_or_default()).into_owned()
}

fn compare(recorded: &IntentTrace, report: &IntentReport, read: usize) -> Option<DivergenceKind> {
    if read < recorded.inputs.len() {
        return Some(DivergenceKind::InputsUnused { read, recorded: recorded.inputs.len() });
    }
    let replayed = report.outcome.json.as_bytes();
    if replayed != recorded.response.as_slice() {
        let at = replayed
            .iter()
            .zip(&recorded.response)
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| replayed.len().min(recorded.response.len()));
        return Some(DivergenceKind::Response {
            at,
            recorded: window(&recorded.response, at),
            replayed: window(replayed, at),
        });
    }
    let reason = report.outcome.blocked_reason_text().map(String::from);
    if reason != recorded.reason {
        return Some(DivergenceKind::Reason { recorded: recorded.reason.clone(), replayed: reason });
    }
    if report.fuel_used != recorded.fuel {
        return Some(DivergenceKind::Fuel { recorded: recorded.fuel, replayed: report.fuel_used });
    }
    if report.peak_memory_bytes != recorded.peak_memory {
        return Some(DivergenceKind::PeakMemory { recorded: recorded.peak_memory, replayed: report.peak_memory_bytes });
    }
    if output_digest(&report.stdout, &report.stderr, report.output_dropped) != recorded.output_digest {
        return Some(DivergenceKind::Output);
    }
    None
}

/// Replays `trace` on `plugin` (which the caller loaded under the trace's policy, from the
/// module the trace names or another one it wants compared): every request again, every input
/// from the trace, the real host never asked. Stops at the first divergence.
pub fn replay(trace: &Trace, plugin: Arc<Plugin>) -> Result<ReplayReport, TraceError> {
    replay_stoppable(trace, plugin, Arc::new(AtomicBool::new(false)))
}

/// [`replay`], stopped when `stop` is set (from another thread: a wall-clock limit, Ctrl-C):
/// the running intent ends at its next deadline check and the replay answers
/// [`TraceError::Stopped`]. A trace names its own fuel budget, so replay alone does not bound
/// how long a forged trace runs; an embedder with a clock bounds it with this flag.
pub fn replay_stoppable(trace: &Trace, plugin: Arc<Plugin>, stop: Arc<AtomicBool>) -> Result<ReplayReport, TraceError> {
    let grants = Permissions::parse_all(trace.header.grants.iter().map(String::as_str))
        .map_err(|e| TraceError::Malformed(format!("{e}")))?;
    let cursor: Shared = Arc::new(Mutex::new(Cursor::default()));
    let env = Box::new(ReplayEnv { cursor: Arc::clone(&cursor), stop: Arc::clone(&stop) });
    let intents = Box::new(ReplayIntents { cursor: Arc::clone(&cursor) });
    let mut sandbox = Sandbox::new(plugin, env).with_host(intents, grants);
    let mut digest = RunDigest::default();
    let mut replayed = 0;
    for (index, recorded) in trace.intents.iter().enumerate() {
        *cursor.lock() = Cursor { inputs: recorded.inputs.clone(), ..Cursor::default() };
        // The recording says why it was cut; the replay is cut for the same reason.
        let why = if recorded.reason.as_deref() == Some(BlockedReason::Cancelled.as_str()) {
            Stop::Cancelled
        } else {
            Stop::Deadline
        };
        sandbox.set_cut(recorded.cut.map(|cut| (cut, why)));
        let report = sandbox.execute_request(&recorded.request);
        if stop.load(Ordering::Relaxed) {
            return Err(TraceError::Stopped { intent: index });
        }
        replayed += 1;
        digest.add(
            report.outcome.json.as_bytes(),
            report.outcome.blocked_reason_text(),
            report.fuel_used,
            report.peak_memory_bytes,
        );
        let (read, input_divergence) = {
            let mut cursor = cursor.lock();
            (cursor.position, cursor.divergence.take())
        };
        if let Some(kind) = input_divergence.or_else(|| compare(recorded, &report, read)) {
            return Ok(ReplayReport {
                intents: replayed,
                digest: digest.finish(),
                divergence: Some(Divergence { intent: index, kind }),
            });
        }
    }
    let digest = digest.finish();
    debug_assert_eq!(digest, recorded_digest(trace));
    Ok(ReplayReport { intents: replayed, digest, divergence: None })
}

/// The entry point for embedders without a file system (the firmware): decodes `trace`,
/// checks `module` is the module it recorded (by sha256), loads it under the trace's policy
/// and replays.
pub fn replay_bytes(trace: &[u8], module: &[u8]) -> Result<ReplayReport, TraceError> {
    let trace = Trace::decode(trace)?;
    if sha256(module) != trace.header.module_sha256 {
        return Err(TraceError::Module(String::from("its sha256 is not the one the trace recorded")));
    }
    let plugin = Plugin::load(module, trace.policy()?).map_err(|f| TraceError::Module(format!("{f}")))?;
    replay(&trace, Arc::new(plugin))
}
