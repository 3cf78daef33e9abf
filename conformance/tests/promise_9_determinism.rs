//! Promise 9: determinism. The same module, policy, requests and recorded host inputs (here a
//! `VirtualEnvironment` seed) give the same response bytes and the same fuel figure; a
//! different seed changes what `random_get` yields.

use contour_conformance::{completed_output, fixture, sandbox_with_seed};
use contour_core::{Compilation, IntentReport, Policy};
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
    assert_eq!(a.outcome.blocked_reason(), Some("fuel_exhausted"));
    assert_eq!(a.outcome.json, b.outcome.json);
    assert_eq!(a.fuel_used, b.fuel_used);
}
