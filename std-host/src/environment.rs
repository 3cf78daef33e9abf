//! The std environments: `HostEnvironment` (real clocks, OS entropy) and `SeededEnvironment`
//! (core's virtual clock and seeded generator); both give the deadline a real monotonic clock.

use contour_core::env::{Clock, Environment, Slept, VirtualEnvironment};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Real clocks and OS entropy; sleeps are real but never longer than `max_sleep`.
#[derive(Debug)]
pub struct HostEnvironment {
    started: Instant,
    max_sleep: Duration,
}

impl HostEnvironment {
    /// A real environment whose sleeps are capped at `max_sleep` (the intent deadline).
    pub fn new(max_sleep: Duration) -> Self {
        Self { started: Instant::now(), max_sleep }
    }
}

fn elapsed_ns(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
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
        std::thread::sleep(asked.min(self.max_sleep).min(until_deadline));
        if asked > until_deadline {
            Slept::CutAtDeadline
        } else {
            Slept::Full
        }
    }

    fn deadline_clock_ns(&mut self) -> Option<u64> {
        Some(elapsed_ns(self.started))
    }
}

/// Core's `VirtualEnvironment` (reproducible from its seed) plus a real clock for the deadline.
#[derive(Debug)]
pub struct SeededEnvironment {
    virtual_env: VirtualEnvironment,
    started: Instant,
}

impl SeededEnvironment {
    /// A seeded environment.
    pub fn new(seed: u64) -> Self {
        Self { virtual_env: VirtualEnvironment::new(seed), started: Instant::now() }
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
        Some(elapsed_ns(self.started))
    }
}
