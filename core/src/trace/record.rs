//! Recording, a decorator outside the sandbox: wrappers around the embedder's `Environment` and
//! `HostIntents` that pass every call through and log each input, in order, into one shared
//! log, and an intent log the sandbox tells of each intent, which closes its record
//! (`Record::start_recording`, `Record::stop_recording`). The deadline clock and the audit sink
//! pass through unrecorded.

use super::{
    footprint, input_size, output_digest, Header, Input, IntentTrace, PolicyRecord, RecordedAnswer, RecordedFailure,
    Trace, TraceError, FORMAT_VERSION, MAGIC, MAX_TRACE_FOOTPRINT, WASMI_VERSION,
};
use crate::env::{Clock, Environment, Slept};
use crate::host::{AuditRecord, CallContext, HostAnswer, HostCall, HostIntents};
use crate::meter::Cut;
use crate::outcome::IntentReport;
use crate::permission::Permissions;
use crate::policy::Policy;
use crate::reason::BlockedReason;
use crate::sandbox::{IntentLog, Sandbox};
use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use spin::Mutex;

/// What the wrappers write into and the sandbox reads out of.
#[derive(Default)]
struct Log {
    /// Off once recording stopped: the wrappers then only pass calls through.
    active: bool,
    current: Vec<Input>,
    intents: Vec<IntentTrace>,
    /// The footprint so far (see `footprint`).
    bytes: usize,
    overflowed: bool,
}

impl Log {
    fn push(&mut self, input: Input) {
        if !self.active {
            return;
        }
        self.bytes = self.bytes.saturating_add(input_size(&input));
        if self.bytes > MAX_TRACE_FOOTPRINT {
            self.overflowed = true;
            return;
        }
        self.current.push(input);
    }
}

type Shared = Arc<Mutex<Log>>;

/// Recording a sandbox's session, added to `Sandbox` from outside.
pub trait Record {
    /// Starts recording this session: from now on every input the plugin reads is logged, and
    /// every intent becomes a record of the trace `stop_recording` returns. `module_bytes` must
    /// be the bytes the plugin was loaded from (the trace names their sha256); `module` says
    /// where they came from. The live instance is discarded first, so the trace starts with a
    /// launch. Fails when a recording is already running.
    fn start_recording(&mut self, module_bytes: &[u8], module: &str) -> Result<(), TraceError>;

    /// Stops recording and returns the trace (`None` when nothing was being recorded). The
    /// plugin goes on running as before.
    fn stop_recording(&mut self) -> Option<Result<Trace, TraceError>>;

    /// Whether a recording is running.
    fn is_recording(&self) -> bool;
}

impl Record for Sandbox {
    fn start_recording(&mut self, module_bytes: &[u8], module: &str) -> Result<(), TraceError> {
        if self.is_recording() {
            return Err(TraceError::Recording("a recording is already running"));
        }
        let policy = self.plugin().policy.clone();
        let mut started = None;
        let wrapped = self.wrap_inputs(|env, intents, grants| {
            let (recording, env, intents) = Recording::start(module_bytes, module, &policy, grants, env, intents);
            started = Some(recording);
            (env, intents)
        });
        match started {
            Some(recording) if wrapped => {
                self.set_intent_log(Some(Box::new(recording)));
                Ok(())
            }
            _ => Err(TraceError::Recording("the sandbox lost its environment")),
        }
    }

    fn stop_recording(&mut self) -> Option<Result<Trace, TraceError>> {
        let log: Box<dyn core::any::Any> = self.set_intent_log(None)?;
        match log.downcast::<Recording>() {
            Ok(recording) => Some(recording.finish()),
            Err(_) => None,
        }
    }

    fn is_recording(&self) -> bool {
        self.intent_log().is_some_and(|log| (log as &dyn core::any::Any).is::<Recording>())
    }
}

/// A session being recorded: the shared log and the header of its trace.
struct Recording {
    log: Shared,
    header: Header,
}

impl Recording {
    /// Starts recording a plugin loaded from `module_bytes` (named `module`) under `policy` with
    /// `grants`: returns the recording and the wrapped environment and host intents to run with.
    fn start(
        module_bytes: &[u8],
        module: &str,
        policy: &Policy,
        grants: &Permissions,
        env: Box<dyn Environment>,
        intents: Box<dyn HostIntents>,
    ) -> (Self, Box<dyn Environment>, Box<dyn HostIntents>) {
        let log: Shared = Arc::new(Mutex::new(Log { active: true, ..Log::default() }));
        let header = Header {
            magic: MAGIC,
            format: FORMAT_VERSION,
            contour: String::from(env!("CARGO_PKG_VERSION")),
            wasmi: String::from(WASMI_VERSION),
            module_sha256: super::sha256(module_bytes),
            module: String::from(module),
            policy: PolicyRecord::of(policy),
            grants: grants.iter().map(ToString::to_string).collect(),
        };
        let env = Box::new(RecordingEnv { inner: env, log: Arc::clone(&log) });
        let intents = Box::new(RecordingIntents { inner: intents, log: Arc::clone(&log) });
        (Self { log, header }, env, intents)
    }

    /// Closes the record of the intent that just ran with `request`.
    fn close_intent(&self, request: &[u8], report: &IntentReport) {
        let mut log = self.log.lock();
        if !log.active {
            return;
        }
        let inputs = core::mem::take(&mut log.current);
        // A run stopped from outside (deadline or cancel) is replayed by where it was stopped.
        let stopped = matches!(
            report.outcome.host_failure().map(|f| f.reason),
            Some(BlockedReason::DeadlineExceeded | BlockedReason::Cancelled)
        );
        let cut = stopped.then_some(Cut { fuel: report.fuel_used, inputs: inputs.len() as u64 });
        let response = report.outcome.json.as_bytes().to_vec();
        let reason = report.outcome.blocked_reason_text().map_or(0, str::len);
        log.bytes = log.bytes.saturating_add(footprint::intent(request.len(), response.len(), reason));
        if log.bytes > MAX_TRACE_FOOTPRINT {
            log.overflowed = true;
            return;
        }
        log.intents.push(IntentTrace {
            request: request.to_vec(),
            inputs,
            response,
            reason: report.outcome.blocked_reason_text().map(String::from),
            fuel: report.fuel_used,
            launch_fuel: report.launch_fuel,
            peak_memory: report.peak_memory_bytes,
            output_digest: output_digest(&report.stdout, &report.stderr, report.output_dropped),
            cut,
        });
    }

    /// Stops recording (the wrappers keep passing calls through) and returns the trace.
    fn finish(self) -> Result<Trace, TraceError> {
        let mut log = self.log.lock();
        log.active = false;
        if log.overflowed {
            return Err(TraceError::Footprint { size: log.bytes as u64 });
        }
        Ok(Trace { header: self.header, intents: core::mem::take(&mut log.intents) })
    }
}

impl IntentLog for Recording {
    fn intent_done(&mut self, request: &[u8], report: &IntentReport) {
        self.close_intent(request, report);
    }
}

/// Records what the environment answers.
struct RecordingEnv {
    inner: Box<dyn Environment>,
    log: Shared,
}

fn clock_id(clock: Clock) -> u8 {
    match clock {
        Clock::Realtime => 0,
        Clock::Monotonic => 1,
        Clock::ProcessCpu => 2,
        Clock::ThreadCpu => 3,
    }
}

impl Environment for RecordingEnv {
    fn now_ns(&mut self, clock: Clock) -> u64 {
        let ns = self.inner.now_ns(clock);
        self.log.lock().push(Input::Clock { clock: clock_id(clock), ns });
        ns
    }

    fn resolution_ns(&self, clock: Clock) -> u64 {
        let ns = self.inner.resolution_ns(clock);
        self.log.lock().push(Input::Resolution { clock: clock_id(clock), ns });
        ns
    }

    fn fill_random(&mut self, dest: &mut [u8]) {
        self.inner.fill_random(dest);
        self.log.lock().push(Input::Random { bytes: dest.to_vec() });
    }

    fn sleep_ns(&mut self, ns: u64, deadline_ns: Option<u64>) -> Slept {
        let slept = self.inner.sleep_ns(ns, deadline_ns);
        self.log.lock().push(Input::Sleep { ns, cut: slept == Slept::CutAtDeadline });
        slept
    }

    fn deadline_clock_ns(&mut self) -> Option<u64> {
        self.inner.deadline_clock_ns()
    }

    fn begin_intent(&mut self, index: u64) {
        self.inner.begin_intent(index);
    }
}

/// Records what the host intents answer.
struct RecordingIntents {
    inner: Box<dyn HostIntents>,
    log: Shared,
}

impl HostIntents for RecordingIntents {
    fn call(&mut self, call: &HostCall, context: &CallContext) -> HostAnswer {
        let answer = self.inner.call(call, context);
        let result = match &answer.result {
            Ok(output) => Ok(String::from(output.get())),
            Err(failure) => {
                Err(RecordedFailure { reason: String::from(failure.reason.as_str()), detail: failure.detail.clone() })
            }
        };
        let recorded = RecordedAnswer {
            result,
            fuel: answer.spent.fuel,
            host_calls: answer.spent.host_calls,
            host_bytes: answer.spent.host_bytes,
            stdout: answer.spent.stdout.clone(),
            stderr: answer.spent.stderr.clone(),
        };
        self.log.lock().push(Input::Host { call: call.describe(), answer: Box::new(recorded) });
        answer
    }

    fn audit(&mut self, record: &AuditRecord) {
        self.inner.audit(record);
    }
}
