//! Writes `benches/REPORT.md` from criterion's saved estimates (`target/criterion/<group>/<bench>/new/estimates.json`,
//! the median in ns) and `target/density.json`: each metric as a ratio against its baseline measured in the same run,
//! the issue's target for it and whether it was met, the machine and versions, and `benches/echo_latency.svg`, a
//! plot of the echo round trip across payload sizes.
//!
//! Run it after `make bench` (and the density bin): `make bench-report`.

use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The bench crate's folder.
const BENCHES: &str = env!("CARGO_MANIFEST_DIR");
/// The wasmi version every figure stands on (pinned in the workspace).
const WASMI_VERSION: &str = "2.0.0";
/// The echo payload sizes, in bytes.
const ECHO_SIZES: [u64; 3] = [128, 4096, 65_536];
/// Host calls per intent in the host-call bench (`contour_benches::HOST_CALLS_PER_INTENT`).
const HOST_CALLS: f64 = contour_benches::HOST_CALLS_PER_INTENT as f64;

/// Where criterion's estimates and the density figures are.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| Path::new(BENCHES).join("../target"), PathBuf::from)
}

/// The saved estimates: median ns of `group` (as criterion names its folder, `/` turned to `_`) / `bench`.
struct Estimates {
    root: PathBuf,
}

impl Estimates {
    fn median(&self, group: &str, bench: &str) -> Option<f64> {
        let path = self.root.join(group.replace('/', "_")).join(bench).join("new/estimates.json");
        let json: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
        json.pointer("/median/point_estimate")?.as_f64()
    }

    /// Every (group, bench, median ns) saved, sorted by folder.
    fn all(&self) -> Vec<(String, String, f64)> {
        let mut found = Vec::new();
        let Ok(groups) = std::fs::read_dir(&self.root) else { return found };
        for group in groups.flatten().filter(|e| e.path().is_dir()) {
            let group_name = group.file_name().to_string_lossy().into_owned();
            let Ok(benches) = std::fs::read_dir(group.path()) else { continue };
            for bench in benches.flatten() {
                let bench_name = bench.file_name().to_string_lossy().into_owned();
                if let Some(ns) = self.median(&group_name, &bench_name) {
                    found.push((group_name.clone(), bench_name, ns));
                }
            }
        }
        found.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        found
    }
}

/// A time in ns, in the unit that reads best.
fn time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn verdict(met: bool) -> &'static str {
    if met {
        "**MET**"
    } else {
        "**MISSED**"
    }
}

/// The output of a command, or `unknown`.
fn command_output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or_else(|| "unknown".into(), |o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().into())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// One row of the results table.
struct Row {
    metric: String,
    contour: String,
    baseline: String,
    ratio: String,
    target: String,
    result: String,
}

impl Row {
    fn missing(metric: impl Into<String>, target: impl Into<String>, why: &str) -> Self {
        Self {
            metric: metric.into(),
            contour: "-".into(),
            baseline: "-".into(),
            ratio: "-".into(),
            target: target.into(),
            result: format!("not measured ({why})"),
        }
    }
}

fn rows(estimates: &Estimates, density: Option<&Value>) -> Vec<Row> {
    let mut rows = Vec::new();
    for len in ECHO_SIZES {
        let group = format!("echo/{len}");
        let target = format!("overhead <= 1 us + 1 ns/B = {}", time(1000.0 + len as f64));
        match (estimates.median(&group, "contour"), estimates.median(&group, "raw_wasmi")) {
            (Some(contour), Some(raw)) => {
                let overhead = contour - raw;
                rows.push(Row {
                    metric: format!("echo {len} B, warm (vs raw transport floor)"),
                    contour: time(contour),
                    baseline: time(raw),
                    ratio: format!("{:.2}x (overhead {})", contour / raw, time(overhead)),
                    target,
                    result: verdict(overhead <= 1000.0 + len as f64).into(),
                });
            }
            _ => rows.push(Row::missing(format!("echo {len} B"), target, "no estimates")),
        }
    }
    rows.push(Row::missing("echo 128 B vs Extism 1.30", "Contour >= 3x faster", "peers not run"));
    match (estimates.median("echo_rust/128", "contour"), estimates.median("echo/128", "contour")) {
        (Some(rust), Some(wat)) => {
            let raw = estimates.median("echo_rust/128", "raw_wasmi");
            rows.push(Row {
                metric: "echo 128 B through the Rust SDK hello plugin (vs the WAT echo through Contour)".into(),
                contour: time(rust),
                baseline: time(wat),
                ratio: format!(
                    "{:.2}x{}",
                    rust / wat,
                    raw.map_or_else(String::new, |raw| format!("; raw wasmi of hello {}", time(raw)))
                ),
                target: "none (where the time goes)".into(),
                result: "info".into(),
            });
        }
        _ => rows.push(Row::missing("echo 128 B, Rust SDK", "none", "target/plugins/hello.wasm not built")),
    }
    for size in ["small", "large"] {
        let group = format!("cold_start/{size}");
        for (mode, target) in [("lazy", Some(1.5)), ("lazy_translation", None), ("eager", None)] {
            let name = format!("cold start {size}, {mode} (vs wasmi {mode})");
            let (Some(contour), Some(wasmi)) = (
                estimates.median(&group, &format!("contour_{mode}")),
                estimates.median(&group, &format!("wasmi_{mode}")),
            ) else {
                rows.push(Row::missing(name, "-", "no estimates"));
                continue;
            };
            let ratio = contour / wasmi;
            rows.push(Row {
                metric: name,
                contour: time(contour),
                baseline: time(wasmi),
                ratio: format!("{ratio:.2}x"),
                target: target.map_or_else(|| "none (cost of the mode)".into(), |t| format!("<= {t}x")),
                result: target.map_or_else(|| "info".into(), |t| verdict(ratio <= t).into()),
            });
        }
    }
    for workload in ["fib", "loop"] {
        let group = format!("compute/{workload}");
        let name = format!("compute {workload}, fuel on (speed vs wasmi with fuel)");
        match (estimates.median(&group, "contour"), estimates.median(&group, "wasmi_fuel")) {
            (Some(contour), Some(wasmi)) => {
                let speed = wasmi / contour;
                rows.push(Row {
                    metric: name,
                    contour: time(contour),
                    baseline: time(wasmi),
                    ratio: format!("{speed:.3}x the speed"),
                    target: ">= 0.95x".into(),
                    result: verdict(speed >= 0.95).into(),
                });
            }
            _ => rows.push(Row::missing(name, ">= 0.95x", "no estimates")),
        }
    }
    rows.push(Row::missing("compute sha256 over 1 MiB (Rust guest)", ">= 0.95x", "workload not written yet"));
    rows.push(Row::missing("compute fib vs wasm3", ">= 1.2x faster", "peers not run"));
    match (estimates.median("host_call/log", "contour"), estimates.median("host_call/log", "wasmi_host_fn")) {
        (Some(contour), Some(wasmi)) => {
            let ratio = contour / wasmi;
            rows.push(Row {
                metric: "one tdm_host_call of log (vs a plain wasmi host fn reading the bytes)".into(),
                contour: format!("{} / call", time(contour / HOST_CALLS)),
                baseline: format!("{} / call", time(wasmi / HOST_CALLS)),
                ratio: format!("{ratio:.2}x"),
                target: "<= 2x".into(),
                result: verdict(ratio <= 2.0).into(),
            });
        }
        _ => rows.push(Row::missing("host call of log", "<= 2x", "no estimates")),
    }
    if let Some(figures) = density.and_then(|d| d.get("figures")).and_then(Value::as_array) {
        for figure in figures {
            let pages = figure["pages"].as_u64().unwrap_or(0);
            let contour = figure["contour_bytes_per_sandbox"].as_f64().unwrap_or(0.0) / 1024.0;
            let wasmi = figure["wasmi_bytes_per_instance"].as_f64().unwrap_or(0.0) / 1024.0;
            let headline = pages == 1;
            rows.push(Row {
                metric: format!("resident memory per idle warm echo sandbox, {pages}-page memory (vs plain wasmi)"),
                contour: format!("{contour:.1} KiB"),
                baseline: format!("{wasmi:.1} KiB"),
                ratio: format!("{:.2}x", contour / wasmi.max(f64::MIN_POSITIVE)),
                target: if headline { "<= 80 KiB".into() } else { "none (the fixture's own 2 pages)".into() },
                result: if headline { verdict(contour <= 80.0).into() } else { "info".into() },
            });
        }
    } else {
        rows.push(Row::missing("density", "<= 80 KiB", "run the density bin"));
    }
    match (estimates.median("throughput", "1_threads"), estimates.median("throughput", "2_threads")) {
        (Some(one), Some(two)) => {
            let (one, two) = (1e9 / one, 2e9 / two);
            rows.push(Row {
                metric: "intents/s, echo 128 B, separate sandboxes: 2 threads (vs 1 thread)".into(),
                contour: format!("{:.0}k/s", two / 1e3),
                baseline: format!("{:.0}k/s", one / 1e3),
                ratio: format!("{:.2}x scaling", two / one),
                target: "none (reported)".into(),
                result: "info".into(),
            });
        }
        _ => rows.push(Row::missing("throughput", "none", "no estimates")),
    }
    rows
}

/// One plotted line: label, colour, (payload bytes, round trip us) points.
type Line<'a> = (&'a str, &'a str, Vec<(f64, f64)>);

/// A log-log SVG plot of the echo round trip (us) against payload bytes, one line per series found.
fn plot(estimates: &Estimates) -> Option<String> {
    let series: Vec<(&str, &str, &str)> = vec![
        ("contour", "Contour", "#1f77b4"),
        ("raw_wasmi", "raw wasmi floor", "#2ca02c"),
        ("wasmtime", "wasmtime (Cranelift)", "#d62728"),
        ("extism", "Extism", "#9467bd"),
        ("wasm3", "wasm3", "#8c564b"),
    ];
    let lines: Vec<Line> = series
        .into_iter()
        .filter_map(|(bench, label, colour)| {
            let points: Vec<(f64, f64)> = ECHO_SIZES
                .iter()
                .filter_map(|&len| estimates.median(&format!("echo/{len}"), bench).map(|ns| (len as f64, ns / 1e3)))
                .collect();
            (!points.is_empty()).then_some((label, colour, points))
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    let (width, height, left, right, top, bottom) = (640.0, 400.0, 70.0, 20.0, 40.0, 50.0);
    let (x_min, x_max) = (64f64.log10(), 131_072f64.log10());
    let ys = lines.iter().flat_map(|l| l.2.iter().map(|p| p.1));
    let y_lo = ys.clone().fold(f64::MAX, f64::min);
    let y_hi = ys.fold(f64::MIN, f64::max);
    let (y_min, y_max) = (y_lo.log10().floor(), y_hi.log10().ceil().max(y_lo.log10().floor() + 1.0));
    let x = |v: f64| left + (v.log10() - x_min) / (x_max - x_min) * (width - left - right);
    let y = |v: f64| height - bottom - (v.log10() - y_min) / (y_max - y_min) * (height - top - bottom);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">Echo round trip on a warm instance (median, log-log)</text>"#,
        width / 2.0
    );
    for decade in (y_min as i32)..=(y_max as i32) {
        let v = 10f64.powi(decade);
        let py = y(v);
        let _ = writeln!(
            svg,
            r##"<line x1="{left}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{v} us</text>"##,
            width - right,
            left - 6.0,
            py + 4.0
        );
    }
    for len in ECHO_SIZES {
        let px = x(len as f64);
        let label = if len >= 1024 { format!("{} KiB", len / 1024) } else { format!("{len} B") };
        let _ = writeln!(
            svg,
            r##"<line x1="{px:.1}" y1="{top}" x2="{px:.1}" y2="{:.1}" stroke="#eee"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{label}</text>"##,
            height - bottom,
            height - bottom + 18.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">request size</text>"#,
        (left + width - right) / 2.0,
        height - 10.0
    );
    let _ = writeln!(
        svg,
        r#"<rect x="{left}" y="{top}" width="{:.1}" height="{:.1}" fill="none" stroke="black"/>"#,
        width - left - right,
        height - top - bottom
    );
    for (index, (label, colour, points)) in lines.iter().enumerate() {
        let path: Vec<String> = points.iter().map(|&(bx, us)| format!("{:.1},{:.1}", x(bx), y(us))).collect();
        let _ =
            writeln!(svg, r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#, path.join(" "));
        for &(bx, us) in points {
            let _ = writeln!(svg, r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{colour}"/>"#, x(bx), y(us));
        }
        let ly = top + 16.0 + index as f64 * 18.0;
        let _ = writeln!(
            svg,
            r#"<line x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="2"/><text x="{:.1}" y="{:.1}">{label}</text>"#,
            left + 12.0,
            left + 36.0,
            left + 42.0,
            ly + 4.0
        );
    }
    svg.push_str("</svg>\n");
    Some(svg)
}

fn main() {
    let target = target_dir();
    let estimates = Estimates { root: target.join("criterion") };
    let density: Option<Value> =
        std::fs::read_to_string(target.join("density.json")).ok().and_then(|s| serde_json::from_str(&s).ok());
    let mut out = String::new();
    let _ = writeln!(out, "# Contour benchmarks\n");
    let _ = writeln!(
        out,
        "Generated by `make bench-report` from criterion's saved medians (`target/criterion`) and \
         `target/density.json`. Every ratio compares two figures measured in the same run on this machine; the \
         absolute times are listed for reference but the ratios are the result.\n"
    );
    let _ = writeln!(out, "## Machine and versions\n");
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let _ = writeln!(out, "- cores (nproc): {}", command_output("nproc", &[]).replace("unknown", &cores.to_string()));
    let _ = writeln!(out, "- CPU: {}", cpu_model());
    let _ = writeln!(out, "- {}", command_output("rustc", &["-V"]));
    let _ = writeln!(out, "- wasmi {WASMI_VERSION} (Contour's engine and the baseline)");
    let _ = writeln!(out, "- criterion: 20 samples, 2 s measurement, 0.5 s warm-up per benchmark\n");
    let _ = writeln!(out, "## Results against the targets of issue 6\n");
    let _ = writeln!(out, "| Metric | Contour | Baseline | Ratio | Target | Result |");
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let rows = rows(&estimates, density.as_ref());
    for row in &rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            row.metric, row.contour, row.baseline, row.ratio, row.target, row.result
        );
    }
    let met = rows.iter().filter(|r| r.result.contains("MET")).count();
    let missed = rows.iter().filter(|r| r.result.contains("MISSED")).count();
    let _ = writeln!(out, "\n{met} targets met, {missed} missed; rows marked `not measured` are still to do.\n");
    let _ = writeln!(out, "Notes:\n");
    let _ = writeln!(
        out,
        "- Echo: a WAT plugin answering a constant outcome; the floor is plain wasmi with fuel off calling \
         `tdm_alloc`, writing the request, calling the intent, reading `[len][bytes]` and `tdm_free` (no JSON, no \
         checks).\n\
         - Host call: one intent makes {HOST_CALLS} `tdm_host_call`s of the same `log` request, answered by a host \
         returning `{{\"logged\":true}}`; the baseline runs the same Wasm loop against a plain wasmi host function \
         that takes `(ptr, len)` and reads the bytes as UTF-8. Fuel on for both; times are per call.\n\
         - Compute: fib(25) and a 200,000-iteration i64 loop, through a warm sandbox vs a bare typed call with fuel \
         on (speed ratio: baseline time / Contour time).\n\
         - Density: `/proc/self/statm` resident memory before and after creating N sandboxes (each launched and \
         having served one intent), against N plain wasmi instances (one store each, shared engine and module, \
         one raw round trip each) in the same process. The issue's 80 KiB target assumes a 1-page memory; the \
         bench fixture declares 2 pages, reported beside it.\n\
         - Throughput: one echo sandbox per thread, all threads started together; intents/s = threads / median \
         time for every thread to finish one intent.\n"
    );
    if let Some(d) = &density {
        let _ = writeln!(out, "Density ran with N = {} of each.\n", d["n"]);
    }
    let _ = writeln!(out, "## Echo latency across payload sizes\n");
    match plot(&estimates) {
        Some(svg) => match std::fs::write(Path::new(BENCHES).join("echo_latency.svg"), svg) {
            Ok(()) => {
                let _ = writeln!(out, "![echo round trip vs payload size](echo_latency.svg)\n");
            }
            Err(error) => {
                let _ = writeln!(out, "(could not write echo_latency.svg: {error})\n");
            }
        },
        None => {
            let _ = writeln!(out, "(no echo estimates: run `make bench`)\n");
        }
    }
    let _ = writeln!(out, "## All medians\n");
    let _ = writeln!(out, "Per iteration (`host_call_log` is one intent of {HOST_CALLS} calls).\n");
    let _ = writeln!(out, "| Group | Benchmark | Median |");
    let _ = writeln!(out, "|---|---|---|");
    for (group, bench, ns) in estimates.all() {
        let _ = writeln!(out, "| {group} | {bench} | {} |", time(ns));
    }
    let _ = writeln!(out, "\n## Not done yet\n");
    let _ = writeln!(
        out,
        "- Peers: wasmtime (Cranelift, Pulley), wasm3 (with MVP-only workload variants) and Extism are not in \
         this run: the `make bench-peers` target behind a `peers` cargo feature is still to write.\n\
         - sha256 over 1 MiB as a Rust guest compute workload.\n\
         - Profiling the echo path (callgrind) and removing copies, re-parsing and per-intent allocations."
    );
    let path = Path::new(BENCHES).join("REPORT.md");
    std::fs::write(&path, out).expect("REPORT.md is writable");
    println!("wrote {}", path.display());
}
