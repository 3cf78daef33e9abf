//! What record and replay cost: the wall time of replaying a recorded session against the run
//! that recorded it (target: replay <= 1.1x the run), and trace bytes per intent, for the echo
//! fixture and the Rust SDK hello example (`make examples` builds it). Both runs use the same
//! sandbox path; the recorded run's environment is a seeded virtual one, so the comparison is
//! the cost of the recording wrappers and of serving inputs from the trace.
//!
//! Run it in release: `cargo run --release -p contour-benches --bin replay_cost [INTENTS]`.

use contour_benches::echo_wasm;
use contour_core::Trace;
use contour_core::{Plugin, Policy, Record, Sandbox, VirtualEnvironment};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Intents per session when no count is given.
const DEFAULT_INTENTS: usize = 2_000;
/// Sessions timed per figure (the median is reported).
const ROUNDS: usize = 7;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Runs `intents` greet intents, recording them: the time of the run and the trace.
fn record(plugin: &Arc<Plugin>, wasm: &[u8], intents: usize) -> (Duration, Trace) {
    let mut sandbox = Sandbox::new(Arc::clone(plugin), Box::new(VirtualEnvironment::new(1)));
    sandbox.start_recording(wasm, "bench").expect("not recording yet");
    let params = serde_json::json!({"name": "Ada Lovelace"});
    let started = Instant::now();
    for _ in 0..intents {
        sandbox.execute("greet", &params);
    }
    let took = started.elapsed();
    (took, sandbox.stop_recording().expect("recording").expect("the trace fits"))
}

fn measure(name: &str, wasm: &[u8], intents: usize) {
    let plugin = Arc::new(Plugin::load(wasm, Policy::default()).expect("the module loads"));
    let mut runs = Vec::new();
    let mut replays = Vec::new();
    let mut bytes = 0;
    for _ in 0..ROUNDS {
        let (took, trace) = record(&plugin, wasm, intents);
        runs.push(took);
        bytes = trace.encode().expect("encodes").len();
        let started = Instant::now();
        let report = contour_core::replay(&trace, Arc::clone(&plugin)).expect("replays");
        replays.push(started.elapsed());
        assert!(report.divergence.is_none(), "{name}: {:?}", report.divergence);
    }
    let (run, replay) = (median(runs), median(replays));
    println!(
        "{name:<6} {intents} intents: run {:>8.2} ms, replay {:>8.2} ms, replay/run {:.3}x; trace {} bytes, {:.0} bytes/intent",
        run.as_secs_f64() * 1e3,
        replay.as_secs_f64() * 1e3,
        replay.as_secs_f64() / run.as_secs_f64(),
        bytes,
        bytes as f64 / intents as f64
    );
}

fn main() {
    let intents = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(DEFAULT_INTENTS);
    measure("echo", &echo_wasm(), intents);
    let hello = contour_benches::target_dir().join("plugins/hello.wasm");
    match std::fs::read(&hello) {
        Ok(wasm) => measure("hello", &wasm, intents),
        Err(e) => println!("hello  skipped: {} ({e}); run `make examples`", hello.display()),
    }
}
