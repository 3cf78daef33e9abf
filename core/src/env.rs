//! Everything nondeterministic a sandbox sees (clocks, entropy, sleeping, the wall clock behind
//! the deadline) comes through the one `Environment` trait that the embedder implements. The
//! default, `VirtualEnvironment`, is a virtual clock and a seeded generator: a run is
//! reproducible from its seed.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A WASI clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Wall-clock time since the Unix epoch.
    Realtime,
    /// A clock that never goes back.
    Monotonic,
    /// CPU time of the process.
    ProcessCpu,
    /// CPU time of the thread.
    ThreadCpu,
}

impl Clock {
    /// Maps a WASI clock id.
    pub fn from_wasi(id: u32) -> Option<Self> {
        match id {
            0 => Some(Self::Realtime),
            1 => Some(Self::Monotonic),
            2 => Some(Self::ProcessCpu),
            3 => Some(Self::ThreadCpu),
            _ => None,
        }
    }
}

/// How a sleep ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slept {
    /// The whole time asked for passed (on a virtual clock: was added to it).
    Full,
    /// The run's deadline came first: the environment slept only until then.
    CutAtDeadline,
}

/// The embedder's source of every nondeterministic input.
pub trait Environment: Send {
    /// The time of `clock` in nanoseconds.
    fn now_ns(&mut self, clock: Clock) -> u64;
    /// The resolution of `clock` in nanoseconds.
    fn resolution_ns(&self, clock: Clock) -> u64;
    /// Fills `dest` with random bytes.
    fn fill_random(&mut self, dest: &mut [u8]);
    /// Waits `ns` nanoseconds (a virtual clock just advances). `deadline_ns` is the wall time
    /// left before the run's deadline, when there is one: an environment whose sleeps take wall
    /// time must not sleep longer than that, and answers `CutAtDeadline` when it stopped there.
    fn sleep_ns(&mut self, ns: u64, deadline_ns: Option<u64>) -> Slept;
    /// Nanoseconds on the host's own monotonic wall clock, used for the intent deadline; `None`
    /// when this host enforces no wall-clock deadline (fuel alone bounds the intent). Not an
    /// input: it is never recorded. `u64::MAX` is the embedder's cancel: the run ends at its
    /// next check as `cancelled` (not `deadline_exceeded`), even when it started at that
    /// reading; a recording replays the cancel where it happened.
    fn deadline_clock_ns(&mut self) -> Option<u64> {
        None
    }

    /// Called before intent `index` (from 0) of a sandbox runs. A deterministic environment
    /// can derive its state from the index here, so what an intent sees does not depend on how
    /// long an earlier one ran before a deadline cut it. Not an input.
    fn begin_intent(&mut self, index: u64) {
        let _ = index;
    }
}

/// Where the virtual realtime clock starts: 2024-01-01T00:00:00Z.
pub const VIRTUAL_EPOCH_NS: u64 = 1_704_067_200_000_000_000;
/// How far the virtual clocks advance on every read: 1 microsecond.
pub const VIRTUAL_TICK_NS: u64 = 1_000;
/// Where the virtual clocks of intent N start: N x 2^40 ns (about 18 minutes) after the epoch,
/// or later if an earlier intent slept past that (the clocks never go back).
pub const VIRTUAL_INTENT_SPACING_NS: u64 = 1 << 40;

/// A deterministic environment: clocks that advance by `VIRTUAL_TICK_NS` per read and by the
/// requested amount per sleep, and a ChaCha8 generator seeded from `seed`. Each intent starts
/// from a state derived from its index (its clocks at `VIRTUAL_INTENT_SPACING_NS` x index, its
/// entropy from its own ChaCha stream), so an intent's inputs never depend on how many an
/// earlier intent read before a wall-clock deadline cut it.
#[derive(Debug, Clone)]
pub struct VirtualEnvironment {
    seed: u64,
    elapsed_ns: u64,
    rng: ChaCha8Rng,
    /// The intent whose stream the generator must be set to before its next read, when
    /// `begin_intent` left it for that read (most intents read no entropy at all).
    stream: Option<u64>,
}

impl VirtualEnvironment {
    /// A virtual environment whose entropy is derived from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { seed, elapsed_ns: 0, rng: ChaCha8Rng::seed_from_u64(seed), stream: None }
    }
}

impl Default for VirtualEnvironment {
    fn default() -> Self {
        Self::new(0)
    }
}

impl Environment for VirtualEnvironment {
    fn now_ns(&mut self, clock: Clock) -> u64 {
        self.elapsed_ns = self.elapsed_ns.saturating_add(VIRTUAL_TICK_NS);
        match clock {
            Clock::Realtime => VIRTUAL_EPOCH_NS.saturating_add(self.elapsed_ns),
            Clock::Monotonic | Clock::ProcessCpu | Clock::ThreadCpu => self.elapsed_ns,
        }
    }

    fn resolution_ns(&self, _clock: Clock) -> u64 {
        VIRTUAL_TICK_NS
    }

    fn fill_random(&mut self, dest: &mut [u8]) {
        if let Some(index) = self.stream.take() {
            self.rng = ChaCha8Rng::seed_from_u64(self.seed);
            self.rng.set_stream(index);
        }
        self.rng.fill_bytes(dest);
    }

    fn begin_intent(&mut self, index: u64) {
        self.elapsed_ns = self.elapsed_ns.max(index.saturating_mul(VIRTUAL_INTENT_SPACING_NS));
        // The generator is set to the intent's own stream at its first read.
        self.stream = Some(index);
    }

    fn sleep_ns(&mut self, ns: u64, _deadline_ns: Option<u64>) -> Slept {
        // Virtual time: no wall time passes, so the deadline cannot cut it.
        self.elapsed_ns = self.elapsed_ns.saturating_add(ns);
        Slept::Full
    }
}
