//! The soak (`make soak`, not part of `make test`): whether long runs leak. Phase one runs
//! 1,000,000 echo intents of distinct inputs on one sandbox (one instance, reused); phase two
//! runs 100,000 intents that each fail, rotating six ways (trap, fuel exhausted, stack
//! overflow, bad response, deadline, memory limit), each through the real sandbox with its
//! blockedReason checked, so every one of them discards its instance and the next relaunches.
//! The process RSS (/proc/self/statm) is sampled after a warm-up and at intervals; the growth
//! after the warm-up is printed for each phase, and the exit code is 1 when either grew by
//! 1 MiB or more (2 when an intent answered wrongly or /proc is missing).
//!
//! `cargo run --release -p contour-benches --bin soak [-- ECHO_INTENTS FAILING_INTENTS]`

use contour_core::{Plugin, Policy, Sandbox};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use tdm_sdk::SeededEnvironment;

/// Growth after the warm-up that fails the soak.
const MAX_GROWTH_BYTES: u64 = 1024 * 1024;
/// Intents of each phase before its baseline sample (allocator pools, lazy translation and
/// the first relaunches settle in these).
const WARM_UP_ECHO: u64 = 20_000;
const WARM_UP_FAILING: u64 = 6_000;
/// How many samples each phase takes after its warm-up.
const SAMPLES: u64 = 20;

const ECHO: &str = include_str!("../../../conformance/fixtures/echo.wat");
const MISBEHAVE: &str = include_str!("../../../conformance/fixtures/misbehave.wat");
/// Answers every intent with the 8 bytes `not json`: an `invalid_response`.
const BAD_RESPONSE: &str = r#"(module
  (memory (export "memory") 1)
  (data (i32.const 16) "\08\00\00\00not json")
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16))"#;

/// One way to fail: the sandbox, the method that triggers it, the blockedReason expected.
struct Failing {
    sandbox: Sandbox,
    method: &'static str,
    reason: &'static str,
}

fn sandbox(wat: &str, policy: Policy) -> Result<Sandbox, String> {
    let wasm = wat::parse_str(wat).map_err(|e| format!("the WAT does not parse: {e}"))?;
    let plugin = Plugin::load(&wasm, policy).map_err(|f| format!("the plugin is refused: {f}"))?;
    // The seeded virtual environment with the real monotonic clock behind the deadline (core's
    // `VirtualEnvironment` has none), as `tdm run --seed` uses.
    Ok(Sandbox::new(Arc::new(plugin), Box::new(SeededEnvironment::new(7))))
}

/// The six ways, each with limits that make it cheap (the deadline one is a 1 ms deadline on a
/// loop with fuel to spare, checked every 20,000 fuel).
fn failing() -> Result<Vec<Failing>, String> {
    let small = Policy { fuel_per_intent: 1_000_000, ..Policy::default() };
    let way = |wat: &str, policy: Policy, method: &'static str, reason: &'static str| -> Result<Failing, String> {
        Ok(Failing { sandbox: sandbox(wat, policy)?, method, reason })
    };
    Ok(vec![
        way(MISBEHAVE, small.clone(), "unreachable", "plugin_trap")?,
        way(MISBEHAVE, Policy { fuel_per_intent: 200_000, ..small.clone() }, "loop", "fuel_exhausted")?,
        way(MISBEHAVE, small.clone(), "recurse", "stack_exhausted")?,
        way(BAD_RESPONSE, small.clone(), "any", "invalid_response")?,
        way(
            MISBEHAVE,
            Policy { fuel_per_intent: 100_000_000_000, timeout_ms: 1, fuel_slice: 20_000, ..small.clone() },
            "loop",
            "deadline_exceeded",
        )?,
        way(MISBEHAVE, Policy { max_memory_bytes: 256 * 1024, ..small }, "grow", "memory_limit_exceeded")?,
    ])
}

/// The page size from the auxiliary vector (AT_PAGESZ), else 4 KiB.
fn page_size() -> u64 {
    const AT_PAGESZ: u64 = 6;
    let auxv = std::fs::read("/proc/self/auxv").unwrap_or_default();
    let words: Vec<u64> = auxv.chunks_exact(8).map(|w| u64::from_ne_bytes(w.try_into().unwrap_or([0; 8]))).collect();
    words.chunks_exact(2).find(|pair| pair[0] == AT_PAGESZ).map_or(4096, |pair| pair[1])
}

/// The resident set size in bytes: statm's second field times the page size.
fn rss(page: u64) -> Result<u64, String> {
    let statm = std::fs::read_to_string("/proc/self/statm").map_err(|e| format!("/proc/self/statm: {e}"))?;
    let pages = statm.split_whitespace().nth(1).and_then(|f| f.parse::<u64>().ok());
    pages.map(|p| p * page).ok_or_else(|| format!("/proc/self/statm is unexpected: {statm:?}"))
}

/// RSS figures of one phase.
struct Growth {
    baseline: u64,
    last: u64,
    peak: u64,
}

impl Growth {
    /// The most the RSS stood above the baseline at any sample.
    fn worst(&self) -> u64 {
        self.peak.saturating_sub(self.baseline)
    }

    fn print(&self, phase: &str, intents: u64, seconds: f64) {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        println!(
            "{phase}: {intents} intents in {seconds:.1} s; RSS after warm-up {:.2} MiB, at the end {:.2} MiB, \
             peak {:.2} MiB; growth after warm-up {} bytes (end) / {} bytes (peak)",
            mib(self.baseline),
            mib(self.last),
            mib(self.peak),
            self.last.saturating_sub(self.baseline),
            self.worst(),
        );
    }
}

/// Runs `intents` intents through `step` (an error: a wrong answer), sampling RSS after
/// `warm_up` intents and then `SAMPLES` times.
fn phase(
    intents: u64,
    warm_up: u64,
    page: u64,
    mut step: impl FnMut(u64) -> Result<(), String>,
) -> Result<Growth, String> {
    let interval = (intents.saturating_sub(warm_up) / SAMPLES).max(1);
    let mut growth: Option<Growth> = None;
    for i in 0..intents {
        step(i)?;
        let done = i + 1;
        if done == warm_up.min(intents)
            || (done > warm_up && ((done - warm_up).is_multiple_of(interval) || done == intents))
        {
            let now = rss(page)?;
            let g = growth.get_or_insert(Growth { baseline: now, last: now, peak: now });
            g.last = now;
            g.peak = g.peak.max(now);
        }
    }
    growth.ok_or_else(|| "no sample was taken".into())
}

fn run(echo_intents: u64, failing_intents: u64) -> Result<bool, String> {
    let page = page_size();
    println!("soak: page size {page} bytes; RSS at start {} bytes", rss(page)?);

    let mut echo = sandbox(ECHO, Policy::default())?;
    let started = Instant::now();
    let echoed = phase(echo_intents, WARM_UP_ECHO, page, |i| {
        let report = echo.execute("echo", &serde_json::json!({"i": i, "text": "soak"}));
        let want = serde_json::json!({"i": i, "text": "soak"});
        let output = report.outcome.output_json().unwrap_or_default();
        match serde_json::from_str::<serde_json::Value>(output) {
            Ok(value) if value["params"] == want => Ok(()),
            _ => Err(format!("echo intent {i} answered {}", report.outcome.json)),
        }
    })?;
    echoed.print("echo", echo_intents, started.elapsed().as_secs_f64());
    if !echo.is_live() {
        return Err("the echo sandbox did not keep one live instance".into());
    }

    let mut ways = failing()?;
    let mut count = [0u64; 6];
    let started = Instant::now();
    let failed = phase(failing_intents, WARM_UP_FAILING, page, |i| {
        let way = &mut ways[(i % 6) as usize];
        let report = way.sandbox.execute(way.method, &serde_json::json!({"i": i}));
        count[(i % 6) as usize] += 1;
        match report.outcome.blocked_reason_text() {
            Some(reason) if reason == way.reason => Ok(()),
            _ => Err(format!("failing intent {i} ({}) answered {}", way.reason, report.outcome.json)),
        }
    })?;
    failed.print("failing", failing_intents, started.elapsed().as_secs_f64());
    for (way, n) in ways.iter().zip(count) {
        println!("  {}: {n} intents", way.reason);
    }

    let ok = echoed.worst() < MAX_GROWTH_BYTES && failed.worst() < MAX_GROWTH_BYTES;
    println!("soak: {} (growth limit {MAX_GROWTH_BYTES} bytes per phase)", if ok { "PASS" } else { "FAIL" });
    Ok(ok)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).map(|a| a.replace('_', "").parse::<u64>());
    let echo_intents = args.next().and_then(Result::ok).unwrap_or(1_000_000);
    let failing_intents = args.next().and_then(Result::ok).unwrap_or(100_000);
    match run(echo_intents, failing_intents) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("soak: error: {e}");
            ExitCode::from(2)
        }
    }
}
