//! What a fresh instance per call costs against a warm one, as `tdm mcp` runs calls (issue 22
//! item 5): the Rust hello example (`target/plugins/hello.wasm`, `make rust-examples`),
//! installed and approved in a workspace on disk, asked `greet` with a 128 B request:
//!
//! - warm: one session, one instance, each call an intent on it (`tdm mcp --warm ID`);
//! - fresh, prepared ahead (`tdm mcp`'s default): the call takes a session opened and launched
//!   after the previous call ended (`tdm_sdk::session::Spares`) and runs its intent in that
//!   never-used instance. Timed: the call (take, the approval looked at again, the intent), as
//!   a client waits for it; the preparing, which the server does after answering, is timed
//!   apart and given as the CPU a fresh call costs in all;
//! - fresh, opened by the call: the call opens the installed plugin itself (the approved-launch
//!   check: state, package read, module hash) on the server's shared compiled-module cache, and
//!   runs in a new instance (what a call costs when no instance was prepared: the first call of
//!   a plugin, or one right after another);
//! - fresh, no cache: the same, compiling the module every call.
//!
//! Each path runs interleaved rounds and keeps the median per call; the ratios compare figures
//! of the same run. `make bench` runs it and writes `target/fresh_calls.json`.

use contour_benches::installed::{InstalledFixture, INSTALLED_ID};
use std::time::{Duration, Instant};
use tdm_sdk::params::Params;
use tdm_sdk::session::{ModuleCache, Request, Session, SessionOptions, Spares};

const ROUNDS: usize = 15;
const CALLS_PER_ROUND: usize = 40;

fn request() -> Request {
    let name = "x".repeat(100);
    let params = Params::from_text(&format!("{{\"name\":\"{name}\"}}")).expect("the params are JSON");
    Request::Intent { method: "greet".into(), params }
}

fn call(session: &mut Session, request: &Request) {
    let ran = session.run(request).unwrap_or_else(|e| panic!("greet runs: {e}"));
    assert!(ran.report.outcome.is_completed(), "{}", ran.report.outcome.json);
}

fn open(fixture: &InstalledFixture, modules: Option<&ModuleCache>) -> Session {
    let options = SessionOptions { modules: modules.cloned(), ..SessionOptions::default() };
    Session::open_installed(&fixture.workspace, INSTALLED_ID, options).unwrap_or_else(|e| panic!("hello opens: {e}"))
}

fn per_call(start: Instant) -> Duration {
    start.elapsed() / CALLS_PER_ROUND as u32
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn main() {
    let module = contour_benches::target_dir().join("plugins/hello.wasm");
    let wasm = std::fs::read(&module)
        .unwrap_or_else(|e| panic!("{}: {e} (build it with `make rust-examples`)", module.display()));
    let fixture = InstalledFixture::declaring(&wasm, &["greet"]);
    let request = request();
    let cache = ModuleCache::new();
    let spares = Spares::new();
    let prepare = || {
        let options = SessionOptions { modules: Some(cache.clone()), ..SessionOptions::default() };
        spares.prepare(&fixture.workspace, INSTALLED_ID, options).unwrap_or_else(|e| panic!("hello prepares: {e}"));
    };
    let mut warm_session = open(&fixture, None);
    call(&mut warm_session, &request);
    prepare();
    let (mut warm, mut ahead, mut preparing, mut fresh, mut uncached) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            call(&mut warm_session, &request);
        }
        warm.push(per_call(start));
        let (mut taken, mut prepared) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..CALLS_PER_ROUND {
            let start = Instant::now();
            let mut spare = spares.take(INSTALLED_ID, &None).expect("a spare was prepared");
            call(&mut spare, &request);
            taken += start.elapsed();
            drop(spare);
            let start = Instant::now();
            prepare();
            prepared += start.elapsed();
        }
        ahead.push(taken / CALLS_PER_ROUND as u32);
        preparing.push(prepared / CALLS_PER_ROUND as u32);
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            call(&mut open(&fixture, Some(&cache)), &request);
        }
        fresh.push(per_call(start));
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            call(&mut open(&fixture, None), &request);
        }
        uncached.push(per_call(start));
    }
    let (warm, ahead, preparing) = (median(warm), median(ahead), median(preparing));
    let (fresh, uncached) = (median(fresh), median(uncached));
    let ratio = |d: Duration| d.as_secs_f64() / warm.as_secs_f64();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("hello greet, 128 B request, median of {ROUNDS} rounds of {CALLS_PER_ROUND} calls:");
    println!("  warm instance                    {:>9.1} us  1.00x", us(warm));
    println!("  fresh, prepared ahead (the call) {:>9.1} us  {:.2}x", us(ahead), ratio(ahead));
    println!("    + preparing it, after the call {:>9.1} us  {:.2}x in all", us(preparing), ratio(ahead + preparing));
    println!("  fresh, opened by the call        {:>9.1} us  {:.2}x", us(fresh), ratio(fresh));
    println!("  fresh, compiled per call         {:>9.1} us  {:.2}x", us(uncached), ratio(uncached));
    let json = serde_json::json!({
        "warm_us": us(warm),
        "fresh_prepared_us": us(ahead),
        "preparing_us": us(preparing),
        "fresh_us": us(fresh),
        "fresh_uncached_us": us(uncached),
        "fresh_prepared_over_warm": ratio(ahead),
        "fresh_prepared_in_all_over_warm": ratio(ahead + preparing),
        "fresh_over_warm": ratio(fresh),
        "fresh_uncached_over_warm": ratio(uncached),
    });
    let out = contour_benches::target_dir().join("fresh_calls.json");
    if let Err(e) = std::fs::write(&out, json.to_string()) {
        eprintln!("{}: {e}", out.display());
    }
}
