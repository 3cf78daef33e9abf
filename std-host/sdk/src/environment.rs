//! The std environments and the one place a run's environment is chosen: `HostEnvironment`
//! (real clocks, OS entropy) or `SeededEnvironment` (core's virtual clock and seeded
//! generator), both with a real monotonic clock for the deadline, and both cancellable: once a
//! [`Cancel`] flag they hold is set (Ctrl-C in the REPL, `tdm run` or `tdm call`, a caller's
//! cancel), their deadline clock reads `u64::MAX`, core's cancel, so core stops the run at its
//! next deadline check (between fuel slices and in every host function) with `cancelled`.

use contour_core::{Clock, Environment, Slept, VirtualEnvironment};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long a cancellable sleep waits between looks at its [`Cancel`] flag.
pub const CANCEL_POLL: Duration = Duration::from_millis(20);

/// A flag that cancels the run in progress (shared with a signal handler).
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The flag itself, for a signal handler to set.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }

    /// Cancels the run in progress.
    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether it was set since the last [`Cancel::clear`].
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Unsets it (before the next run); returns whether it was set.
    pub fn clear(&self) -> bool {
        self.0.swap(false, Ordering::SeqCst)
    }

    /// A flag that SIGINT (Ctrl-C, `kill -INT`) sets, for the one-intent commands (`tdm run`,
    /// `tdm call`): the intent stops at its next deadline check and is reported as cancelled,
    /// and the command exits as it does for any failed intent. A second SIGINT while the flag
    /// is still set ends the process at once with exit code 130, for a run stuck where no check
    /// comes. Fails when the handlers cannot be installed (Ctrl-C then ends the process).
    pub fn on_sigint() -> std::io::Result<Self> {
        let cancel = Self::new();
        cancel.watch_sigint()?;
        Ok(cancel)
    }

    /// Makes SIGINT set this flag, as [`Cancel::on_sigint`] does for a new one: a second SIGINT
    /// while the flag is still set ends the process at once with exit code 130. The piped REPL
    /// uses it on its session's flag.
    pub fn watch_sigint(&self) -> std::io::Result<()> {
        use signal_hook::consts::SIGINT;
        // The shutdown is registered first, so it sees the flag before the second handler sets it.
        signal_hook::flag::register_conditional_shutdown(SIGINT, SECOND_SIGINT_EXIT, self.flag())?;
        signal_hook::flag::register(SIGINT, self.flag())?;
        Ok(())
    }
}

/// The exit code of a process a second SIGINT ended (128 + SIGINT, as shells report it).
pub const SECOND_SIGINT_EXIT: i32 = 130;

/// Which environment runs see: the real clock and OS entropy, or (with a seed) the virtual
/// clock and a seeded generator; optionally cancellable. `tdm run`, `call`, `exec`, `repl` and
/// nested `tool.invoke` sandboxes all get theirs from [`EnvironmentChoice::environment`].
#[derive(Debug, Clone, Default)]
pub struct EnvironmentChoice {
    /// `Some(seed)`: virtual clock and seeded generator.
    pub seed: Option<u64>,
    /// Set to cancel the run in progress.
    pub cancel: Option<Cancel>,
}

impl EnvironmentChoice {
    /// A new environment for one sandbox; real sleeps are capped at `max_sleep` (the deadline).
    pub fn environment(&self, max_sleep: Duration) -> Box<dyn Environment> {
        match self.seed {
            Some(seed) => Box::new(SeededEnvironment::new(seed).with_cancel(self.cancel.clone())),
            None => Box::new(HostEnvironment::new(max_sleep).with_cancel(self.cancel.clone())),
        }
    }
}

/// Real clocks and OS entropy; sleeps are real but never longer than `max_sleep`.
#[derive(Debug)]
pub struct HostEnvironment {
    started: Instant,
    max_sleep: Duration,
    cancel: Option<Cancel>,
}

impl HostEnvironment {
    /// A real environment whose sleeps are capped at `max_sleep` (the intent deadline).
    pub fn new(max_sleep: Duration) -> Self {
        Self { started: Instant::now(), max_sleep, cancel: None }
    }

    /// The same, cancelled when `cancel` is set.
    pub fn with_cancel(mut self, cancel: Option<Cancel>) -> Self {
        self.cancel = cancel;
        self
    }
}

fn elapsed_ns(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The deadline clock: real time since `started`, or past every deadline once cancelled.
fn deadline_clock(started: Instant, cancel: Option<&Cancel>) -> Option<u64> {
    if cancel.is_some_and(Cancel::is_set) {
        return Some(u64::MAX);
    }
    Some(elapsed_ns(started))
}

impl Environment for HostEnvironment {
    fn now_ns(&mut self, clock: Clock) -> u64 {
        match clock {
            Clock::Realtime => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
            Clock::Monotonic | Clock::ProcessCpu | Clock::ThreadCpu => elapsed_ns(self.started),
        }
    }

    fn resolution_ns(&self, _clock: Clock) -> u64 {
        1
    }

    fn fill_random(&mut self, dest: &mut [u8]) {
        if getrandom::fill(dest).is_err() {
            // No OS entropy is a host fault the guest cannot cause; fail closed with zeros
            // rather than predictable-but-plausible bytes.
            dest.fill(0);
        }
    }

    fn sleep_ns(&mut self, ns: u64, deadline_ns: Option<u64>) -> Slept {
        // Never past the run's deadline, nor past the cap this environment was made with.
        let asked = Duration::from_nanos(ns);
        let until_deadline = deadline_ns.map_or(Duration::MAX, Duration::from_nanos);
        let total = asked.min(self.max_sleep).min(until_deadline);
        match &self.cancel {
            None => std::thread::sleep(total),
            Some(cancel) => {
                // In short steps, so a cancel ends the sleep at once.
                let until = Instant::now() + total;
                while !cancel.is_set() {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    std::thread::sleep(left.min(CANCEL_POLL));
                }
                if cancel.is_set() {
                    return Slept::CutAtDeadline;
                }
            }
        }
        if asked > until_deadline {
            Slept::CutAtDeadline
        } else {
            Slept::Full
        }
    }

    fn deadline_clock_ns(&mut self) -> Option<u64> {
        deadline_clock(self.started, self.cancel.as_ref())
    }
}

/// Core's `VirtualEnvironment` (reproducible from its seed) plus a real clock for the deadline.
#[derive(Debug)]
pub struct SeededEnvironment {
    virtual_env: VirtualEnvironment,
    started: Instant,
    cancel: Option<Cancel>,
}

impl SeededEnvironment {
    /// A seeded environment.
    pub fn new(seed: u64) -> Self {
        Self { virtual_env: VirtualEnvironment::new(seed), started: Instant::now(), cancel: None }
    }

    /// The same, cancelled when `cancel` is set.
    pub fn with_cancel(mut self, cancel: Option<Cancel>) -> Self {
        self.cancel = cancel;
        self
    }
}

impl Environment for SeededEnvironment {
    fn now_ns(&mut self, clock: Clock) -> u64 {
        self.virtual_env.now_ns(clock)
    }

    fn resolution_ns(&self, clock: Clock) -> u64 {
        self.virtual_env.resolution_ns(clock)
    }

    fn fill_random(&mut self, dest: &mut [u8]) {
        self.virtual_env.fill_random(dest);
    }

    fn sleep_ns(&mut self, ns: u64, deadline_ns: Option<u64>) -> Slept {
        self.virtual_env.sleep_ns(ns, deadline_ns)
    }

    fn begin_intent(&mut self, index: u64) {
        self.virtual_env.begin_intent(index);
    }

    fn deadline_clock_ns(&mut self) -> Option<u64> {
        deadline_clock(self.started, self.cancel.as_ref())
    }
}
