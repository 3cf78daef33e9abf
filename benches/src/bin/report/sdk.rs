//! The report's section on the guest SDKs (issues 15 and 25): the same `greet` plugin written with the Rust, C and
//! AssemblyScript SDKs, each scalar and built with wasm SIMD, its fuel per warm intent (`target/sdk_fuel.json`, written by `make sdk-fuel`, which
//! `make bench` runs) beside its time (`greet/<size>` in `benches/sandbox.rs`), where the fuel goes, and the Rust SDK
//! against the same greet written with Extism's Rust PDK (`greet_peers/<size>` in `benches/peers.rs`, one process).

use super::{bytes, json_file, time, verdict, Estimates, Row};
use contour_benches::{GreetBuild, GREET_BUILDS};
use serde_json::Value;
use std::fmt::Write as _;

/// The greet request sizes, in bytes.
const SIZES: [u64; 3] = [128, 4096, 65_536];
/// The stages of `sdk_fuel.json`, in order.
const STAGES: [&str; 5] = ["envelope", "params", "handler", "response", "allocator"];

/// One SDK's warm fuel at `size` bytes.
fn fuel(figures: &Value, sdk: &str, size: u64) -> Option<u64> {
    figures[sdk]["sizes"].as_array()?.iter().find(|e| e["bytes"].as_u64() == Some(size))?["fuel"].as_u64()
}

/// One SDK's fuel per byte of name.
fn per_byte(figures: &Value, sdk: &str) -> Option<f64> {
    figures[sdk]["fuel_per_byte"].as_f64()
}

/// A count with thousands separated.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The rows: the Rust SDK's fuel, each SIMD build's fuel per byte against its scalar build's, C and AssemblyScript
/// against the Rust SDK, and the Rust SDK (scalar and SIMD) against Extism, by criterion and in interleaved rounds
/// (`rounds`, from `target/greet_rounds.json`).
fn rows(estimates: &Estimates, figures: Option<&Value>, rounds: Option<&Value>) -> Vec<Row> {
    let mut rows = Vec::new();
    const NO_FUEL: &str = "run make sdk-fuel";
    match figures.and_then(|f| Some((fuel(f, "rust", 128)?, per_byte(f, "rust")?))) {
        Some((small, slope)) => {
            rows.push(Row {
                metric: "warm greet of examples/rust/hello, 128 B request (fuel, exact)".into(),
                contour: format!("{} fuel", count(small)),
                baseline: "-".into(),
                ratio: "-".into(),
                target: "<= 11,000 fuel".into(),
                result: verdict(small <= 11_000).into(),
            });
            rows.push(Row {
                metric: "fuel per byte of a string param, Rust SDK (128 B -> 64 KiB)".into(),
                contour: format!("{slope:.2} fuel/B"),
                baseline: "-".into(),
                ratio: "-".into(),
                target: "<= 10 fuel/B".into(),
                result: verdict(slope <= 10.0).into(),
            });
        }
        None => rows.push(Row::missing("warm greet fuel, Rust SDK", "<= 11,000 fuel", NO_FUEL)),
    }
    // Each SIMD build against its scalar build; the Rust SDK's has issue 25's bound.
    let simd_targets = [
        ("rust", "rust-simd", "<= 3 fuel/B", 3.0),
        ("c", "c-simd", "below the scalar build's", f64::MAX),
        ("assemblyscript", "assemblyscript-simd", "below the scalar build's", f64::MAX),
    ];
    for (sdk, simd, target, bound) in simd_targets {
        let label = GREET_BUILDS.iter().find(|build| build.key == simd).map_or(simd, |build| build.label);
        match figures.and_then(|f| Some((per_byte(f, simd)?, per_byte(f, sdk)?))) {
            Some((slope, scalar)) => rows.push(Row {
                metric: format!("fuel per byte of a string param, {label} (128 B -> 64 KiB)"),
                contour: format!("{slope:.2} fuel/B"),
                baseline: format!("{scalar:.2} fuel/B scalar"),
                ratio: format!("{:.2}x", slope / scalar),
                target: target.into(),
                result: verdict(slope <= bound && slope < scalar).into(),
            }),
            None => rows.push(Row::missing(format!("fuel per byte, {label}"), target, NO_FUEL)),
        }
    }
    // The scalar C and AssemblyScript builds against the scalar Rust SDK (issue 15).
    let other_scalar = GREET_BUILDS.iter().filter(|build| build.key != "rust" && !build.key.ends_with("-simd"));
    for &GreetBuild { key: sdk, label, .. } in other_scalar {
        let found = figures
            .and_then(|f| Some((fuel(f, sdk, 128)?, fuel(f, "rust", 128)?, per_byte(f, sdk)?, per_byte(f, "rust")?)));
        let Some((small, rust, slope, rust_slope)) = found else {
            rows.push(Row::missing(format!("warm greet fuel, {label} SDK vs Rust SDK"), "<= 1.5x", NO_FUEL));
            continue;
        };
        let (ratio, slope_ratio) = (small as f64 / rust as f64, slope / rust_slope);
        rows.push(Row {
            metric: format!("warm greet, {label} SDK vs Rust SDK (fuel at 128 B; per byte of name)"),
            contour: format!("{} fuel; {slope:.2}/B", count(small)),
            baseline: format!("{} fuel; {rust_slope:.2}/B", count(rust)),
            ratio: format!("{ratio:.2}x; {slope_ratio:.2}x per byte"),
            target: "<= 1.5x".into(),
            result: format!(
                "{} at 128 B; {} per byte",
                verdict(ratio <= 1.5).trim_matches('*'),
                verdict(slope_ratio <= 1.5).trim_matches('*')
            ),
        });
    }
    // Each Contour build beside the Extism guest built as it is: the size profile (opt-level "z",
    // the inliner's threshold at 100) beside the scalar build, opt-level 3 with the threshold at 1500
    // beside the SIMD build.
    let peers = [
        (
            "contour_rust",
            "rust",
            "extism",
            "z (inline threshold 100)",
            "Rust SDK",
            [(128, Some(1.0)), (4096, None), (65_536, Some(1.5))],
        ),
        (
            "contour_rust_simd",
            "rust-simd",
            "extism_o3",
            "3 (inline threshold 1500)",
            "Rust SDK with SIMD",
            [(128, Some(0.6)), (4096, None), (65_536, Some(1.0))],
        ),
    ];
    for (bench, sdk, peer, level, who, sizes) in peers {
        for (size, target) in sizes {
            let group = format!("greet_peers/{size}");
            let metric = format!(
                "greet {}, {who} vs extism-pdk (serde Json) on Extism 1.30, both built at opt-level {level}",
                bytes(size)
            );
            let target_text = target.map_or_else(|| "none (peer)".into(), |t| format!("<= {t:.1}x Extism's time"));
            match (estimates.median(&group, bench), estimates.median(&group, peer)) {
                (Some(contour), Some(extism)) => {
                    let ratio = contour / extism;
                    let fuel = figures.and_then(|f| fuel(f, sdk, size));
                    rows.push(Row {
                        metric,
                        contour: format!(
                            "{}{}",
                            time(contour),
                            fuel.map_or_else(String::new, |f| format!(" ({} fuel)", count(f)))
                        ),
                        baseline: time(extism),
                        ratio: format!("{ratio:.2}x"),
                        target: target_text.clone(),
                        result: target.map_or_else(|| "info".into(), |t| verdict(ratio <= t).into()),
                    });
                }
                _ => rows.push(Row::missing(metric, target_text.clone(), "run make bench-peers")),
            }
            let metric = format!(
                "greet {}, {who} vs extism-pdk, opt-level {level}, interleaved rounds (the `greet_rounds` bin: median \
                 of the rounds' ratios)",
                bytes(size)
            );
            let entry = rounds.map(|r| &r[sdk][size.to_string()]);
            let number = |key: &str| entry.and_then(|e| e[key].as_f64());
            match (number("contour_us"), number("extism_us"), number("ratio")) {
                (Some(contour), Some(extism), Some(ratio)) => rows.push(Row {
                    metric,
                    contour: time(contour * 1e3),
                    baseline: time(extism * 1e3),
                    ratio: format!("{ratio:.2}x"),
                    target: target_text,
                    result: target.map_or_else(|| "info".into(), |t| verdict(ratio <= t).into()),
                }),
                _ => rows.push(Row::missing(metric, target_text, "run make bench-peers")),
            }
        }
    }
    rows
}

/// Writes the section.
pub(super) fn section(out: &mut String, estimates: &Estimates) {
    let path = contour_benches::target_dir().join("sdk_fuel.json");
    let figures = json_file(&path);
    let _ = writeln!(out, "## Guest SDKs: the same greet (issues 15 and 25)\n");
    let _ = writeln!(
        out,
        "`greet {{name}}` answering `{{\"greeting\": \"Hello, NAME!\"}}` with NAME trimmed, written with each SDK \
         (`examples/rust/hello`, `examples/c/hello`, `examples/assemblyscript/hello`), each also built with wasm SIMD \
         (`target/plugins/simd/`: the SDKs scan strings and whitespace 16 bytes or more a round), with requests of 128 B, 4 KiB \
         and 64 KiB (the name padded with `x`). Fuel is Contour's meter (about one unit per Wasm instruction; copies \
         one per 64 bytes) for one warm intent, exact and repeatable (`make sdk-fuel`); times are criterion medians \
         of the same intents (`greet/<size>`). Extism runs `benches/guests/extism-greet`, the same greet written \
         with extism-pdk and serde `Json` in and out, built as each Contour build it is timed beside (the scalar \
         Rust build at opt-level `z`, for size, with `-C llvm-args=-inline-threshold=100`; the Rust SIMD build, for \
         speed, at opt-level 3 with `-C llvm-args=-inline-threshold=1500`, as a wasm call is the interpreter's \
         dearest instruction), called with \
         `{{\"name\": ...}}` (Extism has no envelope) in the same process as Contour's `greet_peers/<size>`. \
         Criterion times each path in a block of its own; the interleaved rows time batches of both paths in \
         alternating rounds, so both see the same stretch of a noisy machine.\n"
    );
    let rounds = json_file(&contour_benches::target_dir().join("greet_rounds.json"));
    let rows = rows(estimates, figures.as_ref(), rounds.as_ref());
    let _ = writeln!(out, "| Metric | Contour | Baseline | Ratio | Target | Result |");
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for row in &rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            row.metric, row.contour, row.baseline, row.ratio, row.target, row.result
        );
    }
    let Some(figures) = figures else {
        let _ = writeln!(out, "\n(no {}: run `make sdk-fuel`)\n", path.display());
        return;
    };
    let _ = writeln!(out, "\nFuel and median time of one warm greet, per SDK and build (ratios against the scalar Rust SDK; a SIMD build \
         needs a host that runs SIMD: Contour's std hosts do, its embedded profile and `--no-simd` refuse it):\n");
    let _ = writeln!(out, "| SDK | 128 B | 4 KiB | 64 KiB | fuel per byte of name |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for GreetBuild { key: sdk, bench, label, .. } in GREET_BUILDS {
        let cells: Vec<String> = SIZES
            .iter()
            .map(|&size| {
                let fuel_here = fuel(&figures, sdk, size);
                let ratio = fuel_here.zip(fuel(&figures, "rust", size)).map(|(f, r)| f as f64 / r as f64);
                let median = estimates.median(&format!("greet/{size}"), bench);
                format!(
                    "{} fuel ({:.2}x), {}",
                    fuel_here.map_or_else(|| "-".into(), count),
                    ratio.unwrap_or(f64::NAN),
                    median.map_or_else(|| "no time".into(), time)
                )
            })
            .collect();
        let slope = per_byte(&figures, sdk).map_or_else(|| "-".into(), |s| format!("{s:.2}"));
        let _ = writeln!(out, "| {label} | {} | {slope} |", cells.join(" | "));
    }
    let _ = writeln!(
        out,
        "\nWhere the fuel of a warm 128-byte greet goes (`make sdk-fuel`: a build of each with fuel marks between \
         the stages, run in bare wasmi with Contour's fuel costs; the marks themselves cost a few dozen fuel):\n"
    );
    let _ = writeln!(out, "| SDK | {} |", STAGES.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(STAGES.len()));
    for GreetBuild { key: sdk, label, .. } in GREET_BUILDS {
        let entry = figures[sdk]["sizes"].as_array().and_then(|sizes| sizes.iter().find(|e| e["bytes"] == 128));
        let cells: Vec<String> = STAGES
            .iter()
            .map(|stage| entry.and_then(|e| e["stages"][stage].as_u64()).map_or_else(|| "-".into(), count))
            .collect();
        let _ = writeln!(out, "| {label} | {} |", cells.join(" | "));
    }
    let _ = writeln!(
        out,
        "\nStages: envelope = finding the method and the params; params = reading them, typed; handler = the \
         plugin's own work (trim and the greeting; in C the greeting is written straight into the output, so it \
         counts as response); response = writing and framing the outcome; allocator = the host's `tdm_alloc` and \
         `tdm_free` calls and every allocator call inside the intent (the AssemblyScript runtime's own allocations \
         count in their stage; its `tdm_alloc` runs the garbage collector). wasmi charges a function's \
         straight-line code when it is entered, so a stage includes code inlined into it even where that code does \
         not run.\n"
    );
}
