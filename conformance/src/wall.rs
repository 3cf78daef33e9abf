//! Environments with a scripted wall clock: core's `VirtualEnvironment` for every input, and a
//! test's `WallScript` for the deadline clock (and, when it wants, the sleeps), so a test can
//! make the deadline pass, or its caller cancel, at a chosen check.

use contour_core::{Clock, Environment, Slept, VirtualEnvironment};

/// What a test scripts of the wall: each deadline-clock read, and optionally each sleep.
pub trait WallScript: Send {
    /// The next deadline-clock reading (`u64::MAX` is a cancel; `None`: no deadline).
    fn read(&mut self) -> Option<u64>;
    /// How a sleep of `ns` with `left` before the deadline ends: how far the virtual clock
    /// moves, and the answer. By default the whole `ns`, as `VirtualEnvironment` sleeps.
    fn sleep(&mut self, ns: u64, _left: Option<u64>) -> (u64, Slept) {
        (ns, Slept::Full)
    }
}

/// A wall clock that moves `step_ns` on every read.
pub struct SteppingWall {
    /// The reading so far.
    pub now_ns: u64,
    /// How far each read moves it.
    pub step_ns: u64,
}

impl WallScript for SteppingWall {
    fn read(&mut self) -> Option<u64> {
        self.now_ns += self.step_ns;
        Some(self.now_ns)
    }
}

/// A virtual environment (seeded with `seed`) whose wall is `script`.
pub struct ScriptedWall<S> {
    inner: VirtualEnvironment,
    script: S,
}

impl<S: WallScript> ScriptedWall<S> {
    /// The environment of seed `seed` with `script` as its wall.
    pub fn new(seed: u64, script: S) -> Self {
        Self { inner: VirtualEnvironment::new(seed), script }
    }
}

/// A virtual environment (seeded with `seed`) whose deadline clock moves `step_ns` per read.
pub fn stepping_wall(seed: u64, step_ns: u64) -> ScriptedWall<SteppingWall> {
    ScriptedWall::new(seed, SteppingWall { now_ns: 0, step_ns })
}

impl<S: WallScript> Environment for ScriptedWall<S> {
    fn now_ns(&mut self, clock: Clock) -> u64 {
        self.inner.now_ns(clock)
    }
    fn resolution_ns(&self, clock: Clock) -> u64 {
        self.inner.resolution_ns(clock)
    }
    fn fill_random(&mut self, dest: &mut [u8]) {
        self.inner.fill_random(dest);
    }
    fn sleep_ns(&mut self, ns: u64, deadline_ns: Option<u64>) -> Slept {
        let (moved, slept) = self.script.sleep(ns, deadline_ns);
        self.inner.sleep_ns(moved, None);
        slept
    }
    fn deadline_clock_ns(&mut self) -> Option<u64> {
        self.script.read()
    }
    fn begin_intent(&mut self, index: u64) {
        self.inner.begin_intent(index);
    }
}
