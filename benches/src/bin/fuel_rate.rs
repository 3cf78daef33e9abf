//! Measures how much fuel wasmi consumes per second of wall time through Contour (default compilation mode), on a
//! tight loop and on recursive fib, so the default per-intent fuel budget can be set to about 5 s of work.
//!
//! Run it in release: `cargo run --release -p contour-benches --bin fuel_rate`.

use contour_benches::{fib_wasm, loop_wasm, request_with_n};
use contour_core::{Plugin, Policy, Sandbox, VirtualEnvironment};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the measured run of each workload should take.
const TARGET: Duration = Duration::from_secs(2);
/// The wall time the suggested budget is worth.
const BUDGET_SECONDS: f64 = 5.0;

/// One measured intent.
struct Run {
    n: u64,
    fuel: u64,
    elapsed: Duration,
}

impl Run {
    fn rate(&self) -> f64 {
        self.fuel as f64 / self.elapsed.as_secs_f64()
    }
}

/// Runs `method` with `{"n": n}` on a warm sandbox and times it.
fn run(sandbox: &mut Sandbox, method: &str, n: u64) -> Run {
    let request = request_with_n(method, n);
    let started = Instant::now();
    let report = sandbox.execute_request(&request);
    let elapsed = started.elapsed();
    assert!(report.outcome.is_completed(), "{method}({n}): {}", report.outcome.json);
    Run { n, fuel: report.fuel_used, elapsed }
}

/// Grows `n` with `next` until one intent takes at least [`TARGET`], and returns that run.
fn calibrate(wasm: &[u8], method: &str, start: u64, next: impl Fn(&Run) -> u64) -> Run {
    let policy = Policy { fuel_per_intent: u64::MAX / 4, timeout_ms: u64::MAX / 2_000_000, ..Policy::default() };
    let plugin = Arc::new(Plugin::load(wasm, policy).expect("the fixture loads"));
    let mut sandbox = Sandbox::new(plugin, Box::new(VirtualEnvironment::new(1)));
    sandbox.launch().expect("the fixture launches");
    let mut last = run(&mut sandbox, method, start);
    while last.elapsed < TARGET {
        last = run(&mut sandbox, method, next(&last));
    }
    last
}

fn report(name: &str, run: &Run) -> f64 {
    let rate = run.rate();
    println!(
        "{name:<11} n = {:>11}  fuel = {:>14}  time = {:>7.3} s  rate = {:.3e} fuel/s",
        run.n,
        run.fuel,
        run.elapsed.as_secs_f64(),
        rate
    );
    rate
}

fn main() {
    // Scale the loop count by the ratio to the target (at most 10x at a time).
    let spin = calibrate(&loop_wasm(), "spin", 1_000_000, |last| {
        let ratio = (TARGET.as_secs_f64() / last.elapsed.as_secs_f64().max(1e-6)).clamp(1.1, 10.0);
        (last.n as f64 * ratio * 1.05) as u64
    });
    // fib's cost grows by the golden ratio per step of n.
    let fib = calibrate(&fib_wasm(), "fib", 20, |last| {
        let ratio = TARGET.as_secs_f64() / last.elapsed.as_secs_f64().max(1e-6);
        last.n + (ratio.ln() / 1.618_f64.ln()).ceil().clamp(1.0, 5.0) as u64
    });
    println!("fuel rate through Contour (Policy::default() compilation, release build):");
    let spin_rate = report("tight loop", &spin);
    let fib_rate = report("fib", &fib);
    let slowest = spin_rate.min(fib_rate);
    println!(
        "{BUDGET_SECONDS} s of the slower workload: {:.3e} fuel (loop {:.3e}, fib {:.3e})",
        slowest * BUDGET_SECONDS,
        spin_rate * BUDGET_SECONDS,
        fib_rate * BUDGET_SECONDS
    );
}
