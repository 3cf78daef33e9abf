//! Many threads on one shared `Runtime` (one engine and linker, as a host keeps for all its
//! plugins): 2 x the available parallelism threads each run a sandbox of the echo plugin and
//! one of the hash plugin, both loaded once on the shared runtime (so every thread runs the same
//! `Plugin`s, and two different plugins side by side), with hundreds of intents of distinct
//! inputs. Every output must be exactly what its own request gives (echo: the request itself;
//! hash: the FNV-1a digest the test computes), so an answer that leaked from another sandbox
//! or thread fails; and every fuel figure must equal the one a single-threaded run of the same
//! requests gives, so sharing the engine changes no metering. Every intent is bounded by fuel,
//! so nothing can spin; a watchdog fails the test if the threads do not all report back within
//! 120 s (a hang guard, not a speed check).

use contour_conformance::{fixture, SEED};
use contour_core::{Plugin, Policy, Profile, Runtime, Sandbox, VirtualEnvironment};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Intents per thread, alternating echo and hash.
const INTENTS_PER_THREAD: usize = 300;
/// A budget far above what one intent needs (a few hundred thousand fuel at most) and far
/// below the default, so that a runaway intent would end on fuel.
const FUEL_PER_INTENT: u64 = 20_000_000;
/// How long the threads may take before the test calls it a hang.
const WATCHDOG: Duration = Duration::from_secs(120);

/// The plugins the threads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Echo,
    Hash,
}

/// One intent as run: which plugin, the request bytes, the outcome JSON and the fuel used.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    kind: Kind,
    request: Vec<u8>,
    outcome: String,
    fuel_used: u64,
}

fn policy() -> Policy {
    Policy { fuel_per_intent: FUEL_PER_INTENT, ..Policy::default() }
}

/// The request of intent `i` of thread `t`: distinct for every (t, i), with an id derived from
/// both and a padding whose length varies, so inputs differ in content and in size.
fn request(thread: usize, i: usize) -> Vec<u8> {
    let pad = "x".repeat((thread * 31 + i * 7) % 257);
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": thread * 1_000_000 + i,
        "method": if i.is_multiple_of(2) { "echo" } else { "hash" },
        "params": {"thread": thread, "i": i, "pad": pad},
    })
    .to_string()
    .into_bytes()
}

/// What fixtures/hash.wat answers for `request`: FNV-1a 64 over its bytes, 16 rounds.
fn fnv16(request: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for _ in 0..16 {
        for byte in request {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// The outcome `kind` must answer to `request`, computed without any sandbox.
fn expected(kind: Kind, request: &[u8]) -> String {
    match kind {
        Kind::Echo => format!("{{\"status\":\"completed\",\"output\":{}}}", String::from_utf8_lossy(request)),
        Kind::Hash => format!("{{\"status\":\"completed\",\"output\":{}}}", fnv16(request)),
    }
}

/// Runs thread `t`'s intents on its own two sandboxes of `echo` and `hash`.
fn run_thread(thread: usize, echo: &Arc<Plugin>, hash: &Arc<Plugin>) -> Vec<Run> {
    let mut echo_box = Sandbox::new(Arc::clone(echo), Box::new(VirtualEnvironment::new(SEED)));
    let mut hash_box = Sandbox::new(Arc::clone(hash), Box::new(VirtualEnvironment::new(SEED)));
    (0..INTENTS_PER_THREAD)
        .map(|i| {
            let (kind, sandbox) =
                if i.is_multiple_of(2) { (Kind::Echo, &mut echo_box) } else { (Kind::Hash, &mut hash_box) };
            let request = request(thread, i);
            let report = sandbox.execute_request(&request);
            Run { kind, request, outcome: report.outcome.json, fuel_used: report.fuel_used }
        })
        .collect()
}

/// Loads the echo and hash fixtures on `runtime`.
fn plugins(runtime: &Arc<Runtime>) -> (Arc<Plugin>, Arc<Plugin>) {
    let load = |name: &str| {
        let plugin = Plugin::load_on(runtime, &fixture(name), policy(), Profile::Marketplace);
        Arc::new(plugin.unwrap_or_else(|f| panic!("fixture {name} loads: {f}")))
    };
    (load("echo"), load("hash"))
}

#[test]
fn threads_on_one_runtime_see_only_their_own_inputs_and_spend_the_same_fuel() {
    let threads = 2 * std::thread::available_parallelism().map_or(2, usize::from).max(2);
    let runtime = Arc::new(Runtime::new(&policy()).expect("the policy is usable"));
    let (echo, hash) = plugins(&runtime);
    let start = Arc::new(Barrier::new(threads));
    let (send, results) = mpsc::channel();
    for thread in 0..threads {
        let (echo, hash, start, send) = (Arc::clone(&echo), Arc::clone(&hash), Arc::clone(&start), send.clone());
        std::thread::spawn(move || {
            // All threads start together, so their intents overlap.
            start.wait();
            let _ = send.send((thread, run_thread(thread, &echo, &hash)));
        });
    }
    drop(send);
    let mut concurrent = vec![Vec::new(); threads];
    for _ in 0..threads {
        match results.recv_timeout(WATCHDOG) {
            Ok((thread, runs)) => concurrent[thread] = runs,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("hang: a thread did not finish within {WATCHDOG:?}"),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("a thread panicked before reporting"),
        }
    }

    // No cross-talk: each output is what its own request gives.
    for (thread, runs) in concurrent.iter().enumerate() {
        assert_eq!(runs.len(), INTENTS_PER_THREAD, "thread {thread}");
        for (i, run) in runs.iter().enumerate() {
            assert_eq!(run.request, request(thread, i), "thread {thread} intent {i}");
            assert_eq!(run.outcome, expected(run.kind, &run.request), "thread {thread} intent {i}");
        }
    }

    // The same requests, one thread after the other, on plugins of a runtime of their own: the
    // same outcomes and exactly the same fuel, intent by intent (the first intent of each
    // sandbox includes its launch in both runs).
    let alone = Arc::new(Runtime::new(&policy()).expect("the policy is usable"));
    let (echo, hash) = plugins(&alone);
    for (thread, runs) in concurrent.iter().enumerate() {
        let sequential = run_thread(thread, &echo, &hash);
        assert_eq!(sequential.len(), runs.len());
        for (i, (alone, together)) in sequential.iter().zip(runs).enumerate() {
            assert_eq!(
                (&alone.outcome, alone.fuel_used),
                (&together.outcome, together.fuel_used),
                "thread {thread} intent {i} ({:?}): alone (left) and concurrently (right)",
                together.kind
            );
        }
    }
    // Hash intents of different sizes cost different fuel, so equal fuel is not vacuous.
    let fuel: std::collections::BTreeSet<u64> = concurrent.iter().flatten().map(|r| r.fuel_used).collect();
    assert!(fuel.len() > 100, "{fuel:?}");
}
