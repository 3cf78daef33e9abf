//! Promise 9: determinism. The same module, policy, requests and recorded host inputs (here a
//! `VirtualEnvironment` seed) give the same response bytes and the same fuel figure; a
//! different seed changes what `random_get` yields.

use contour_conformance::{completed_output, fixture, sandbox_with_seed, SEED};
use contour_core::BlockedReason;
use contour_core::{Compilation, IntentReport, Policy, Sandbox, VirtualEnvironment};
use serde_json::json;

// Index of the first 8 random bytes (as a u64) in the output of fixtures/wasi_probe.wat.
const RANDOM_WORD: usize = 19;

fn probe(seed: u64, policy: Policy) -> Vec<IntentReport> {
    let mut sandbox = sandbox_with_seed(&fixture("wasi_probe"), policy, seed);
    (0..3).map(|_| sandbox.execute("probe", &json!({"q": [1, 2, 3]}))).collect()
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_fuel() {
    let first = probe(42, Policy::default());
    let second = probe(42, Policy::default());
    for (a, b) in first.iter().zip(&second) {
        assert!(a.outcome.is_completed(), "{}", a.outcome.json);
        assert_eq!(a.outcome.json, b.outcome.json);
        assert_eq!(a.fuel_used, b.fuel_used);
        assert_eq!(a.stdout, b.stdout);
        assert_eq!(a.stderr, b.stderr);
    }
    // Within one sandbox the clock and the generator move on, so intents differ.
    assert_ne!(first[0].outcome.json, first[1].outcome.json);
}

#[test]
fn a_different_seed_gives_different_random_bytes() {
    let word = |seed| completed_output(&probe(seed, Policy::default())[0])[RANDOM_WORD].as_u64().expect("u64");
    assert_eq!(word(1), word(1));
    assert_ne!(word(1), word(2));
    assert_ne!(word(2), word(3));
}

#[test]
fn fuel_does_not_depend_on_the_compilation_mode() {
    let fuel = |compilation| {
        let reports = probe(42, Policy { compilation, ..Policy::default() });
        reports.iter().map(|r| (r.fuel_used, r.outcome.json.clone())).collect::<Vec<_>>()
    };
    let lazy = fuel(Compilation::Lazy);
    assert_eq!(fuel(Compilation::LazyTranslation), lazy);
    assert_eq!(fuel(Compilation::Eager), lazy);
}

#[test]
fn a_failed_intent_is_deterministic_too() {
    let policy = Policy { fuel_per_intent: 1_000_000, ..Policy::default() };
    let run = || sandbox_with_seed(&fixture("misbehave"), policy.clone(), 0).execute("loop", &json!({}));
    let (a, b) = (run(), run());
    assert_eq!(a.outcome.blocked_reason(), Some(BlockedReason::FuelExhausted));
    assert_eq!(a.outcome.json, b.outcome.json);
    assert_eq!(a.fuel_used, b.fuel_used);
}

/// A virtual environment whose deadline clock moves `step_ns` per read: a larger step cuts a
/// looping intent after fewer slices (the wall time an intent gets varies from host to host).
struct SteppedWall {
    inner: VirtualEnvironment,
    now_ns: u64,
    step_ns: u64,
}

impl contour_core::Environment for SteppedWall {
    fn now_ns(&mut self, clock: contour_core::Clock) -> u64 {
        self.inner.now_ns(clock)
    }
    fn resolution_ns(&self, clock: contour_core::Clock) -> u64 {
        self.inner.resolution_ns(clock)
    }
    fn fill_random(&mut self, dest: &mut [u8]) {
        self.inner.fill_random(dest);
    }
    fn sleep_ns(&mut self, ns: u64, deadline_ns: Option<u64>) -> contour_core::Slept {
        self.inner.sleep_ns(ns, deadline_ns)
    }
    fn deadline_clock_ns(&mut self) -> Option<u64> {
        self.now_ns += self.step_ns;
        Some(self.now_ns)
    }
    fn begin_intent(&mut self, index: u64) {
        self.inner.begin_intent(index);
    }
}

#[test]
fn what_an_intent_sees_does_not_depend_on_how_long_a_failed_one_ran() {
    // The first intent reads the clock until the deadline cuts it, after more or fewer reads
    // depending on the host's speed; the intent after it must see the same clock and entropy.
    let wasm = fixture("clock_reader");
    let policy = Policy { fuel_slice: 5_000, ..Policy::default() };
    let after_cut = |step_ns: u64| {
        let env = SteppedWall { inner: VirtualEnvironment::new(SEED), now_ns: 0, step_ns };
        let mut sandbox = Sandbox::new(contour_conformance::load(&wasm, policy.clone()), Box::new(env));
        let cut = sandbox.execute("loop", &json!({}));
        assert_eq!(cut.outcome.blocked_reason(), Some(BlockedReason::DeadlineExceeded), "{}", cut.outcome.json);
        (cut.fuel_used, completed_output(&sandbox.execute("read", &json!({}))))
    };
    let (fast_fuel, fast) = after_cut(50_000_000);
    let (slow_fuel, slow) = after_cut(200_000_000);
    assert_ne!(fast_fuel, slow_fuel, "the cut intents ran for different times");
    assert_eq!(fast, slow, "the next intent's inputs are a function of the recorded ones only");
}
