//! Cold start against bare wasmi in interleaved rounds (issue 25, item 4): bytes in memory to a ready
//! instance of the 1.1 MiB fixture and of the small echo, lazy (what an installed plugin launches
//! with), Contour's every load-time check, sandbox and launch on a shared runtime against wasmi's
//! `Module::new` and instantiation on a shared engine. Criterion times each path in a block of its
//! own, so a noisy neighbour or the allocator's state can favour one; here each round times both,
//! one after the other, and the figure is the median of the rounds' ratios. Minor page faults
//! (first touches of fresh memory, from `/proc/self/stat`) are counted per start beside the time.
//!
//! The installed plugin's launch from disk (`tdm call`'s path: launch check, load, sandbox, launch)
//! is timed the same way against wasmi reading the file and instantiating it on a fresh engine.
//!
//! `make bench` runs it and writes `target/cold_starts.json` for the report.

use contour_benches::baseline::{wasmi_engine, wasmi_instance_on};
use contour_benches::contour::{cold_start, runtime};
use contour_benches::installed::{installed_launch, InstalledFixture};
use contour_benches::rounds::{alternating, median};
use contour_benches::{echo_wasm, large_wasm};
use contour_core::Compilation;
use std::hint::black_box;
use std::time::Instant;
use wasmi::CompilationMode;

/// Rounds per fixture.
const ROUNDS: usize = 21;
/// Starts per path per round.
const STARTS: u32 = 20;

/// This process's minor page faults so far (field 10 of `/proc/self/stat`); 0 where it cannot be read.
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    let after = stat.rfind(')').and_then(|end| stat.get(end + 2..)).unwrap_or_default();
    after.split(' ').nth(7).and_then(|field| field.parse().ok()).unwrap_or(0)
}

/// One path's time per start (seconds) and minor faults per start, over `STARTS` starts.
fn timed(start: &mut impl FnMut()) -> (f64, f64) {
    let faults = minor_faults();
    let began = Instant::now();
    for _ in 0..STARTS {
        start();
    }
    let seconds = began.elapsed().as_secs_f64() / f64::from(STARTS);
    (seconds, minor_faults().saturating_sub(faults) as f64 / f64::from(STARTS))
}

/// One round's measures: Contour's and wasmi's (seconds, minor faults) per start.
type Round = ((f64, f64), (f64, f64));

/// The two paths timed in `ROUNDS` alternating rounds: the medians of each path's time and
/// minor faults per start and of the rounds' ratios.
fn interleaved(mut contour: impl FnMut(), mut bare: impl FnMut(), bytes: usize) -> serde_json::Value {
    let pairs = alternating(ROUNDS, || timed(&mut contour), || timed(&mut bare));
    let column = |pick: fn(&Round) -> f64| median(pairs.iter().map(pick).collect());
    serde_json::json!({
        "contour_us": column(|((c, _), _)| *c) * 1e6,
        "wasmi_us": column(|(_, (w, _))| *w) * 1e6,
        "ratio": column(|((c, _), (w, _))| c / w),
        "contour_minor_faults": column(|((_, f), _)| *f),
        "wasmi_minor_faults": column(|(_, (_, f))| *f),
        "bytes": bytes,
    })
}

/// Prints one entry's figures.
fn print(name: &str, what: &str, figures: &serde_json::Value) {
    println!(
        "{name} ({} B), {what}, median of {ROUNDS} interleaved rounds of {STARTS}: contour {:.1} us, \
         wasmi {:.1} us, {:.2}x; minor faults per start {} vs {}",
        figures["bytes"],
        figures["contour_us"].as_f64().unwrap_or(f64::NAN),
        figures["wasmi_us"].as_f64().unwrap_or(f64::NAN),
        figures["ratio"].as_f64().unwrap_or(f64::NAN),
        figures["contour_minor_faults"],
        figures["wasmi_minor_faults"],
    );
}

fn main() {
    let shared = runtime(Compilation::Lazy);
    let engine = wasmi_engine(CompilationMode::Lazy, true);
    let mut all = serde_json::Map::new();
    for (name, wasm) in [("small", echo_wasm()), ("large", large_wasm())] {
        let contour = || drop(black_box(cold_start(&shared, black_box(&wasm), Compilation::Lazy)));
        let bare = || drop(black_box(wasmi_instance_on(&engine, black_box(&wasm))));
        let figures = interleaved(contour, bare, wasm.len());
        print(&format!("cold start {name}"), "lazy, bytes in memory", &figures);
        all.insert(name.into(), figures);
    }
    // The installed plugin's launch from disk as `tdm call` does it in a fresh process (launch
    // check, load, sandbox, launch), against bare wasmi reading the same file and instantiating
    // it lazily on an engine of its own.
    let wasm = large_wasm();
    let fixture = InstalledFixture::new(&wasm);
    let contour = || drop(black_box(installed_launch(black_box(&fixture))));
    let bare = || {
        let engine = wasmi_engine(CompilationMode::Lazy, true);
        let bytes = std::fs::read(black_box(&fixture.module)).expect("the installed module reads");
        drop(black_box(wasmi_instance_on(&engine, &bytes)));
    };
    let figures = interleaved(contour, bare, wasm.len());
    print("installed launch large", "lazy, from disk", &figures);
    all.insert("installed".into(), figures);
    let out = contour_benches::target_dir().join("cold_starts.json");
    if let Err(e) = std::fs::write(&out, serde_json::Value::Object(all).to_string()) {
        eprintln!("{}: {e}", out.display());
    }
}
