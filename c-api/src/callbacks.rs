//! The input boundary served by C: [`ContourEnvironment`] (clocks, entropy, sleeps, the deadline
//! clock; each callback left NULL is served by core's `VirtualEnvironment`) and host intents
//! through one [`ContourHostFn`], which answers through a [`ContourHostAnswer`] handle that
//! lives for the callback's duration only.

use crate::error::{guard, ContourStatus, Error};
use crate::handle::{free, get, make, text, Handle, Kind};
use crate::reason::ContourBlockedReason;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use contour_core::{
    BlockedReason, CallContext, Clock, Environment, Failure, HostAnswer, HostCall, HostIntents, Slept,
    VirtualEnvironment,
};
use core::ffi::c_void;
use core::sync::atomic::AtomicU32;
use serde_json::value::RawValue;

/// The largest answer a host callback may give: 16 MiB (the default `max_host_bytes`).
pub const CONTOUR_MAX_HOST_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// A WASI clock.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContourClock {
    /// Wall-clock time since the Unix epoch.
    Realtime = 0,
    /// A clock that never goes back.
    Monotonic = 1,
    /// CPU time of the process.
    ProcessCpu = 2,
    /// CPU time of the thread.
    ThreadCpu = 3,
}

impl ContourClock {
    fn of(clock: Clock) -> Self {
        match clock {
            Clock::Realtime => Self::Realtime,
            Clock::Monotonic => Self::Monotonic,
            Clock::ProcessCpu => Self::ProcessCpu,
            Clock::ThreadCpu => Self::ThreadCpu,
        }
    }
}

/// Everything nondeterministic a plugin sees, served by C (`contour_core::Environment`). Every
/// callback may be NULL: core's virtual environment seeded with `seed` (a virtual clock from
/// 2024-01-01 advancing 1 us per read, ChaCha8 entropy) serves it instead. The callbacks run on
/// the thread that called `contour_sandbox_execute`, and must not call into the same sandbox
/// (that is refused with `CONTOUR_STATUS_BUSY`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ContourEnvironment {
    /// Passed to every callback as it is.
    pub user_data: *mut c_void,
    /// The seed of the virtual environment that serves the callbacks left NULL.
    pub seed: u64,
    /// The time of `clock` in nanoseconds.
    pub now_ns: Option<unsafe extern "C" fn(user_data: *mut c_void, clock: ContourClock) -> u64>,
    /// The resolution of `clock` in nanoseconds.
    pub resolution_ns: Option<unsafe extern "C" fn(user_data: *mut c_void, clock: ContourClock) -> u64>,
    /// Fills the `len` bytes at `dest` with random bytes.
    pub fill_random: Option<unsafe extern "C" fn(user_data: *mut c_void, dest: *mut u8, len: usize)>,
    /// Waits `ns` nanoseconds (a virtual clock just advances); when `has_deadline`, no longer
    /// than `deadline_ns`. Returns true when it stopped at the deadline instead.
    pub sleep_ns:
        Option<unsafe extern "C" fn(user_data: *mut c_void, ns: u64, has_deadline: bool, deadline_ns: u64) -> bool>,
    /// The host's monotonic wall clock behind the deadline: writes nanoseconds to `*now_out`
    /// and returns true, or returns false when this host enforces no deadline (NULL: none,
    /// fuel alone bounds an intent). Writing `UINT64_MAX` cancels the running intent.
    pub deadline_clock_ns: Option<unsafe extern "C" fn(user_data: *mut c_void, now_out: *mut u64) -> bool>,
}

/// A [`ContourEnvironment`] as core's `Environment`.
pub(crate) struct CEnvironment {
    spec: ContourEnvironment,
    fallback: VirtualEnvironment,
}

impl CEnvironment {
    /// The environment `spec` describes.
    pub(crate) fn new(spec: ContourEnvironment) -> Self {
        Self { spec, fallback: VirtualEnvironment::new(spec.seed) }
    }
}

// SAFETY: the environment holds C function pointers and `user_data`, which are only used from
// the thread running the sandbox's call; the header's contract for `contour_environment` is
// that its callbacks and user data may be used from whichever thread calls the sandbox.
unsafe impl Send for CEnvironment {}

impl Environment for CEnvironment {
    fn now_ns(&mut self, clock: Clock) -> u64 {
        match self.spec.now_ns {
            // SAFETY: a C function pointer the embedder set, called with its own user data and a
            // valid clock value, as the header documents.
            Some(now) => unsafe { now(self.spec.user_data, ContourClock::of(clock)) },
            None => self.fallback.now_ns(clock),
        }
    }

    fn resolution_ns(&self, clock: Clock) -> u64 {
        match self.spec.resolution_ns {
            // SAFETY: as in `now_ns`.
            Some(resolution) => unsafe { resolution(self.spec.user_data, ContourClock::of(clock)) },
            None => self.fallback.resolution_ns(clock),
        }
    }

    fn fill_random(&mut self, dest: &mut [u8]) {
        match self.spec.fill_random {
            // SAFETY: `dest` is a live, writable Rust slice of `dest.len()` bytes for the whole
            // call; the callback is the embedder's, with its own user data.
            Some(fill) => unsafe { fill(self.spec.user_data, dest.as_mut_ptr(), dest.len()) },
            None => self.fallback.fill_random(dest),
        }
    }

    fn sleep_ns(&mut self, ns: u64, deadline_ns: Option<u64>) -> Slept {
        let Some(sleep) = self.spec.sleep_ns else {
            return self.fallback.sleep_ns(ns, deadline_ns);
        };
        // SAFETY: the embedder's callback with its own user data and plain values.
        let cut = unsafe { sleep(self.spec.user_data, ns, deadline_ns.is_some(), deadline_ns.unwrap_or(0)) };
        if cut {
            Slept::CutAtDeadline
        } else {
            Slept::Full
        }
    }

    fn deadline_clock_ns(&mut self) -> Option<u64> {
        let clock = self.spec.deadline_clock_ns?;
        let mut now = 0u64;
        // SAFETY: `now` is a live, aligned u64 for the whole call; the embedder's callback.
        let has = unsafe { clock(self.spec.user_data, &mut now) };
        has.then_some(now)
    }

    fn begin_intent(&mut self, index: u64) {
        self.fallback.begin_intent(index);
    }
}

/// A host callback: serves one host call the plugin's grants allow. `method` is its name
/// (`"context.read"`, ...; not NUL-terminated) and `params` its params as JSON text (core has
/// parsed and checked them). Answer through `answer` (`contour_host_answer_ok` or
/// `contour_host_answer_fail`) and return 0; any other return value answers
/// `host_intent_failed`, and returning 0 without answering answers `host_fault`. The pointers
/// are valid only during the call; `answer` is freed when the callback returns.
pub type ContourHostFn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        method: *const u8,
        method_len: usize,
        params: *const u8,
        params_len: usize,
        answer: *mut ContourHostAnswer,
    ) -> i32,
>;

/// Where a host callback writes its answer; valid during that callback only.
pub struct ContourHostAnswer {
    magic: AtomicU32,
    answer: spin::Mutex<Option<HostAnswer>>,
}

impl Handle for ContourHostAnswer {
    const KIND: Kind = Kind::HostAnswer;
    fn magic(&self) -> &AtomicU32 {
        &self.magic
    }
}

/// Host intents served by a C callback.
pub(crate) struct CHost {
    pub(crate) callback:
        unsafe extern "C" fn(*mut c_void, *const u8, usize, *const u8, usize, *mut ContourHostAnswer) -> i32,
    pub(crate) user_data: *mut c_void,
}

// SAFETY: as for `CEnvironment`: the header's contract for `contour_sandbox_set_host` is that
// the callback and its user data may be used from whichever thread calls the sandbox.
unsafe impl Send for CHost {}

impl HostIntents for CHost {
    fn call(&mut self, call: &HostCall, _context: &CallContext) -> HostAnswer {
        let method = call.method().as_str();
        let described: serde_json::Value = serde_json::from_str(&call.describe()).unwrap_or_default();
        let params = described.get("params").map(ToString::to_string).unwrap_or_else(|| String::from("{}"));
        let handle = make(ContourHostAnswer { magic: AtomicU32::new(0), answer: spin::Mutex::new(None) });
        // SAFETY: the embedder's callback with its own user data; `method` and `params` are live
        // Rust strings of the lengths passed, and `handle` a live answer handle, for the call.
        let code = unsafe {
            (self.callback)(self.user_data, method.as_ptr(), method.len(), params.as_ptr(), params.len(), handle)
        };
        let taken = get(handle.cast_const(), "answer").ok().and_then(|answer| answer.answer.lock().take());
        let _ = free(handle, "answer");
        match (code, taken) {
            (0, Some(answer)) => answer,
            (0, None) => {
                HostAnswer::failed(BlockedReason::HostFault, "The host callback returned 0 without answering.")
            }
            (code, _) => {
                HostAnswer::failed(BlockedReason::HostIntentFailed, format!("The host callback failed ({code})."))
            }
        }
    }
}

/// Stores `answer` in the handle, once.
fn answer_with(
    function: &'static str,
    answer: *mut ContourHostAnswer,
    make_answer: impl FnOnce() -> Result<HostAnswer, Error>,
) -> ContourStatus {
    guard(function, || {
        let handle = get(answer.cast_const(), "answer")?;
        let mut slot = handle.answer.lock();
        if slot.is_some() {
            return Err(Error::new(ContourStatus::InvalidState, "the call was answered already"));
        }
        *slot = Some(make_answer()?);
        Ok(())
    })
}

/// Answers the host call with the `len` bytes of JSON at `json` (copied): the plugin gets a
/// completed outcome with it as `output`. Not JSON (or not UTF-8) is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`, more than `CONTOUR_MAX_HOST_ANSWER_BYTES` is
/// `CONTOUR_STATUS_TOO_LARGE`; a second answer is `CONTOUR_STATUS_INVALID_STATE`. Core still
/// charges the answer to the intent's host-byte budget.
#[no_mangle]
pub extern "C" fn contour_host_answer_ok(answer: *mut ContourHostAnswer, json: *const u8, len: usize) -> ContourStatus {
    answer_with("contour_host_answer_ok", answer, || {
        if len > CONTOUR_MAX_HOST_ANSWER_BYTES {
            return Err(Error::new(
                ContourStatus::TooLarge,
                format!(
                    "the answer is {len} bytes, above CONTOUR_MAX_HOST_ANSWER_BYTES ({CONTOUR_MAX_HOST_ANSWER_BYTES})"
                ),
            ));
        }
        let json = text(json, len, "json")?;
        let raw = RawValue::from_string(String::from(json))
            .map_err(|e| Error::new(ContourStatus::InvalidArgument, format!("the answer is not JSON: {e}")))?;
        Ok(HostAnswer::ok_json(raw))
    })
}

/// Answers the host call with a failure: `reason` is a `contour_blocked_reason` other than
/// `NONE` and `PLUGIN` (`HOST_INTENT_FAILED` for I/O errors, `PERMISSION_DENIED` for a refusal),
/// `message` its specifics (`len` bytes of UTF-8, copied). The plugin gets a failed outcome and
/// goes on running.
#[no_mangle]
pub extern "C" fn contour_host_answer_fail(
    answer: *mut ContourHostAnswer,
    reason: i32,
    message: *const u8,
    len: usize,
) -> ContourStatus {
    answer_with("contour_host_answer_fail", answer, || {
        let reason =
            ContourBlockedReason::from_value(reason).and_then(ContourBlockedReason::core).ok_or_else(|| {
                Error::new(ContourStatus::InvalidArgument, format!("{reason} is not a host contour_blocked_reason"))
            })?;
        let message = text(message, len, "message")?;
        Ok(HostAnswer { result: Err(Failure::new(reason, message)), spent: Default::default() })
    })
}

/// Boxes a C host for a sandbox.
pub(crate) fn host(callback: ContourHostFn, user_data: *mut c_void) -> Option<Box<dyn HostIntents>> {
    callback.map(|callback| Box::new(CHost { callback, user_data }) as Box<dyn HostIntents>)
}
