//! What a fresh instance per call costs against a warm one, as `tdm mcp` runs calls (issue 22
//! item 5): the Rust hello example (`target/plugins/hello.wasm`, `make rust-examples`),
//! installed and approved in a workspace on disk, asked `greet` with a 128 B request:
//!
//! - warm: one session, one instance, each call an intent on it (`tdm mcp --warm ID`);
//! - fresh: each call opens the installed plugin again (the approved-launch check: state,
//!   package read, module hash) on the server's shared compiled-module cache, and runs in a new
//!   instance (`tdm mcp`'s default);
//! - fresh, no cache: the same, compiling the module every call (what the default cost before
//!   the cache).
//!
//! Each path runs interleaved rounds and keeps the median per call; the ratios compare figures
//! of the same run. `make bench` runs it and writes `target/fresh_calls.json`.

use contour_benches::installed::{InstalledFixture, INSTALLED_ID};
use std::time::{Duration, Instant};
use tdm_sdk::params::Params;
use tdm_sdk::session::{ModuleCache, Request, Session, SessionOptions};

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
    let mut warm_session = open(&fixture, None);
    call(&mut warm_session, &request);
    let (mut warm, mut fresh, mut uncached) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            call(&mut warm_session, &request);
        }
        warm.push(per_call(start));
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
    let (warm, fresh, uncached) = (median(warm), median(fresh), median(uncached));
    let ratio = |d: Duration| d.as_secs_f64() / warm.as_secs_f64();
    println!("hello greet, 128 B request, median of {ROUNDS} rounds of {CALLS_PER_ROUND} calls:");
    println!("  warm instance             {:>9.1} us  1.00x", warm.as_secs_f64() * 1e6);
    println!("  fresh, shared compile     {:>9.1} us  {:.2}x", fresh.as_secs_f64() * 1e6, ratio(fresh));
    println!("  fresh, compiled per call  {:>9.1} us  {:.2}x", uncached.as_secs_f64() * 1e6, ratio(uncached));
    let json = serde_json::json!({
        "warm_us": warm.as_secs_f64() * 1e6,
        "fresh_us": fresh.as_secs_f64() * 1e6,
        "fresh_uncached_us": uncached.as_secs_f64() * 1e6,
        "fresh_over_warm": ratio(fresh),
        "fresh_uncached_over_warm": ratio(uncached),
    });
    let out = contour_benches::target_dir().join("fresh_calls.json");
    if let Err(e) = std::fs::write(&out, json.to_string()) {
        eprintln!("{}: {e}", out.display());
    }
}
