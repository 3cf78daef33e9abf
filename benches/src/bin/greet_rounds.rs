//! The Rust SDK's greet against the same greet on Extism (issue 25, item 2) in interleaved rounds:
//! each round times a batch of warm greets through Contour and a batch through Extism, one after
//! the other (alternating which goes first), and the figure is the median of the rounds' ratios.
//! Criterion times each path in a block of its own, so a noisy neighbour that slows one block
//! moves the ratio; here both paths see the same stretch of the machine.
//!
//! Two pairs, as `greet_peers/<size>` in `benches/peers.rs`: the scalar hello beside the Extism
//! guest built at opt-level "z" with the inline threshold at 100 (`RUST_SIZE_FLAGS` in the
//! Makefile), and the SIMD hello beside the one built at opt-level 3 with the inline threshold at
//! 1500 (`RUST_SPEED_FLAGS` in `mk/rust-examples.mk`).
//! `make bench-peers` runs it (it needs the `peers` feature) and writes `target/greet_rounds.json`
//! for the report.

use contour_benches::contour::warm_sandbox;
use contour_benches::peers::extism_plugin;
use contour_benches::rounds::{alternating, median};
use std::hint::black_box;
use std::time::Instant;

/// Rounds per size and pair.
const ROUNDS: usize = 31;
/// The request sizes, in bytes, and the greets per path per round at each (a few milliseconds).
const SIZES: [(usize, u32); 3] = [(128, 400), (4096, 100), (65_536, 8)];

/// The modules, relative to `target/plugins/`: (key in the JSON, Contour's hello, Extism's greet).
const PAIRS: [(&str, &str, &str); 2] =
    [("rust", "hello.wasm", "extism-greet.wasm"), ("rust-simd", "simd/hello.wasm", "extism-greet-o3.wasm")];

/// Seconds per call of `call`, over `calls` calls.
fn timed(calls: u32, call: &mut impl FnMut()) -> f64 {
    let began = Instant::now();
    for _ in 0..calls {
        call();
    }
    began.elapsed().as_secs_f64() / f64::from(calls)
}

/// The medians of each path's time per greet and of the rounds' ratios (Contour / Extism).
fn interleaved(calls: u32, mut contour: impl FnMut(), mut extism: impl FnMut()) -> serde_json::Value {
    let pairs = alternating(ROUNDS, || timed(calls, &mut contour), || timed(calls, &mut extism));
    serde_json::json!({
        "contour_us": median(pairs.iter().map(|(c, _)| *c).collect()) * 1e6,
        "extism_us": median(pairs.iter().map(|(_, e)| *e).collect()) * 1e6,
        "ratio": median(pairs.iter().map(|(c, e)| c / e).collect()),
    })
}

fn main() {
    let plugins = contour_benches::target_dir().join("plugins");
    let mut all = serde_json::Map::new();
    for (key, hello, extism_greet) in PAIRS {
        let (Ok(hello), Ok(extism_greet)) =
            (std::fs::read(plugins.join(hello)), std::fs::read(plugins.join(extism_greet)))
        else {
            eprintln!("greet_rounds: {key} skipped, {hello} or {extism_greet} is not built (make bench-peer-guests)");
            continue;
        };
        let mut sandbox = warm_sandbox(&hello);
        let mut plugin = extism_plugin(extism_greet, "greet");
        let mut sizes = serde_json::Map::new();
        for (size, calls) in SIZES {
            let greet = contour_benches::greet(size);
            let input = serde_json::to_vec(&serde_json::json!({ "name": greet.name })).expect("JSON");
            let expected = format!(r#"{{"greeting":"Hello, {}!"}}"#, greet.name);
            assert_eq!(sandbox.execute_request(&greet.request).outcome.json, greet.outcome, "Contour greets");
            let answer = plugin.call::<&[u8], &[u8]>("greet", &input).expect("the Extism greet runs");
            assert_eq!(answer, expected.as_bytes(), "Extism greets");
            let figures = interleaved(
                calls,
                || drop(black_box(sandbox.execute_request(black_box(&greet.request)))),
                || {
                    let answer = plugin.call::<&[u8], &[u8]>("greet", black_box(&input));
                    black_box(answer.map(<[u8]>::len).expect("the Extism greet runs"));
                },
            );
            println!(
                "greet {size} B, {key} vs Extism, median of {ROUNDS} interleaved rounds of {calls}: contour {:.2} us, \
                 extism {:.2} us, {:.2}x",
                figures["contour_us"].as_f64().unwrap_or(f64::NAN),
                figures["extism_us"].as_f64().unwrap_or(f64::NAN),
                figures["ratio"].as_f64().unwrap_or(f64::NAN),
            );
            sizes.insert(size.to_string(), figures);
        }
        all.insert(key.into(), serde_json::Value::Object(sizes));
    }
    let out = contour_benches::target_dir().join("greet_rounds.json");
    if let Err(e) = std::fs::write(&out, serde_json::Value::Object(all).to_string()) {
        eprintln!("{}: {e}", out.display());
    }
}
