//! Instructions per iteration of each hot path, counted by `valgrind --tool=callgrind` (repeatable on a noisy
//! machine, unlike time): every scenario runs twice under callgrind, once with `BASE` iterations and once with
//! `BASE + N`, and the difference / N is the per-iteration count, so setup is left out. Writes
//! `target/profile.json` and prints a table with each Contour path's ratio against its bare-wasmi baseline.
//!
//! `profile` runs all scenarios under valgrind (`make bench-profile`); `profile run SCENARIO ITERATIONS` is the
//! child valgrind runs (also handy with `callgrind_annotate` to see where the instructions go).

use contour_benches::baseline::{wasmi_engine, wasmi_instance, wasmi_instance_on, HostFnWork, RawEcho, RawHostLog};
use contour_benches::contour::{cold_start, log_sandbox, runtime, warm_sandbox};
use contour_benches::{
    echo_wasm, fib_wasm, host_log_wasm, large_wasm, loop_wasm, request_of_size, request_with_n, HOST_CALLS_PER_INTENT,
};
use contour_core::Compilation;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use wasmi::{CompilationMode, TypedFunc};

/// The Rust SDK hello plugin, built by `make rust-examples`.
const HELLO_WASM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/plugins/hello.wasm");

/// Iterations of the short run.
const BASE: u64 = contour_benches::PROFILE_BASE_ITERATIONS;
/// Extra iterations of the long run.
const EXTRA: u64 = contour_benches::PROFILE_EXTRA_ITERATIONS;

/// (scenario, its baseline or "" for a baseline itself, what one iteration is).
const SCENARIOS: [(&str, &str, &str); 16] = [
    ("echo_128_contour", "echo_128_raw", "one 128 B echo intent, warm"),
    ("echo_128_raw", "", "the raw transport floor, 128 B"),
    ("echo_rust_128_contour", "echo_128_contour", "one 128 B greet intent of the Rust SDK hello plugin, warm"),
    ("echo_65536_contour", "echo_65536_raw", "one 64 KiB echo intent, warm"),
    ("echo_65536_raw", "", "the raw transport floor, 64 KiB"),
    ("host_call_contour", "host_call_raw", "100 tdm_host_calls of log in one intent"),
    ("host_call_raw", "", "100 calls of a plain wasmi host fn reading the bytes"),
    ("host_call_raw_json", "host_call_raw", "100 calls of a plain wasmi host fn parsing them as a JSON Value"),
    ("cold_small_contour", "cold_small_wasmi", "bytes -> ready echo instance, lazy, shared runtime"),
    ("cold_small_wasmi", "", "bare wasmi, same module and mode, shared engine"),
    ("cold_large_contour", "cold_large_wasmi", "bytes -> ready 1.1 MiB instance, lazy, shared runtime"),
    ("cold_large_wasmi", "", "bare wasmi, same module and mode, shared engine"),
    ("fib_contour", "fib_wasmi", "fib(20) intent, fuel on"),
    ("fib_wasmi", "", "fib(20), bare wasmi with fuel"),
    ("loop_contour", "loop_wasmi", "20,000-iteration loop intent, fuel on"),
    ("loop_wasmi", "", "the same loop, bare wasmi with fuel"),
];

/// Runs `iterations` of `scenario` in this process.
fn run(scenario: &str, iterations: u64) -> Result<(), String> {
    let echo = echo_wasm();
    match scenario {
        "echo_128_contour" | "echo_65536_contour" => {
            let len = if scenario.contains("65536") { 65_536 } else { 128 };
            let request = request_of_size("echo", len);
            let mut sandbox = warm_sandbox(&echo);
            for _ in 0..iterations {
                black_box(sandbox.execute_request(black_box(&request)));
            }
        }
        "echo_128_raw" | "echo_65536_raw" => {
            let len = if scenario.contains("65536") { 65_536 } else { 128 };
            let request = request_of_size("echo", len);
            let mut raw = RawEcho::new(&echo);
            for _ in 0..iterations {
                black_box(raw.call(black_box(&request)));
            }
        }
        "echo_rust_128_contour" => {
            let wasm =
                std::fs::read(HELLO_WASM).map_err(|e| format!("{HELLO_WASM}: {e} (run `make rust-examples`)"))?;
            let build =
                |pad: usize| contour_core::intent_request(1, "greet", &serde_json::json!({ "name": "x".repeat(pad) }));
            let request = build(1 + 128usize.saturating_sub(build(1).len()));
            let mut sandbox = warm_sandbox(&wasm);
            for _ in 0..iterations {
                black_box(sandbox.execute_request(black_box(&request)));
            }
        }
        "host_call_contour" => {
            let mut sandbox = log_sandbox(&host_log_wasm());
            let request = request_of_size("log_many", 0);
            for _ in 0..iterations {
                black_box(sandbox.execute_request(black_box(&request)));
            }
        }
        "host_call_raw" | "host_call_raw_json" => {
            let work = if scenario.ends_with("json") { HostFnWork::ParseJson } else { HostFnWork::ReadBytes };
            let mut raw = RawHostLog::new(&host_log_wasm(), work);
            for _ in 0..iterations {
                black_box(raw.run(HOST_CALLS_PER_INTENT));
            }
        }
        "cold_small_contour" | "cold_large_contour" => {
            let wasm = if scenario.contains("large") { large_wasm() } else { echo };
            let runtime = runtime(Compilation::Lazy);
            for _ in 0..iterations {
                black_box(cold_start(&runtime, black_box(&wasm), Compilation::Lazy));
            }
        }
        "cold_small_wasmi" | "cold_large_wasmi" => {
            let wasm = if scenario.contains("large") { large_wasm() } else { echo };
            let engine = wasmi_engine(CompilationMode::Lazy, true);
            for _ in 0..iterations {
                black_box(wasmi_instance_on(&engine, black_box(&wasm)));
            }
        }
        "fib_contour" | "loop_contour" => {
            let (wasm, request) = if scenario == "fib_contour" {
                (fib_wasm(), request_with_n("fib", 20))
            } else {
                (loop_wasm(), request_with_n("spin", 20_000))
            };
            let mut sandbox = warm_sandbox(&wasm);
            for _ in 0..iterations {
                black_box(sandbox.execute_request(black_box(&request)));
            }
        }
        "fib_wasmi" => {
            let (mut store, instance) = wasmi_instance(&fib_wasm(), CompilationMode::Lazy, true);
            let fib: TypedFunc<i32, i32> = instance.get_typed_func(&store, "fib").map_err(|e| e.to_string())?;
            for _ in 0..iterations {
                black_box(fib.call(&mut store, black_box(20)).map_err(|e| e.to_string())?);
            }
        }
        "loop_wasmi" => {
            let (mut store, instance) = wasmi_instance(&loop_wasm(), CompilationMode::Lazy, true);
            let spin: TypedFunc<i64, i64> = instance.get_typed_func(&store, "spin").map_err(|e| e.to_string())?;
            for _ in 0..iterations {
                black_box(spin.call(&mut store, black_box(20_000)).map_err(|e| e.to_string())?);
            }
        }
        other => return Err(format!("unknown scenario `{other}`")),
    }
    Ok(())
}

/// Total instructions callgrind counted for `iterations` of `scenario`.
fn count(scenario: &str, iterations: u64, out_dir: &Path) -> Result<u64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = out_dir.join(format!("callgrind.{scenario}.{iterations}"));
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(&exe)
        .args(["run", scenario, &iterations.to_string()])
        .output()
        .map_err(|e| format!("valgrind could not start ({e}); install it (apt-get install valgrind)"))?;
    if !status.status.success() {
        return Err(format!("{scenario}: {}", String::from_utf8_lossy(&status.stderr)));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    text.lines()
        .find_map(|line| line.strip_prefix("summary: ").or_else(|| line.strip_prefix("totals: ")))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("{}: no instruction total", out.display()))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [mode, scenario, iterations] = args.as_slice() {
        if mode == "run" {
            let iterations = match iterations.parse() {
                Ok(n) => n,
                Err(_) => {
                    eprintln!("profile: ITERATIONS must be a number, not `{iterations}`");
                    std::process::exit(2);
                }
            };
            if let Err(error) = run(scenario, iterations) {
                eprintln!("profile: {error}");
                std::process::exit(1);
            }
            return;
        }
    }
    let only: Vec<&str> = args.iter().map(String::as_str).collect();
    let out_dir = contour_benches::target_dir().join("callgrind");
    if let Err(error) = std::fs::create_dir_all(&out_dir) {
        eprintln!("profile: cannot create {}: {error}", out_dir.display());
        std::process::exit(1);
    }
    let mut per_iteration = std::collections::BTreeMap::new();
    for (scenario, _, _) in SCENARIOS {
        if !only.is_empty() && !only.iter().any(|o| scenario.starts_with(o)) {
            continue;
        }
        let counted =
            count(scenario, BASE, &out_dir).and_then(|short| Ok((short, count(scenario, BASE + EXTRA, &out_dir)?)));
        match counted {
            Ok((short, long)) => {
                let each = long.saturating_sub(short) as f64 / EXTRA as f64;
                per_iteration.insert(scenario, each);
            }
            Err(error) => {
                eprintln!("profile: {error}");
                std::process::exit(1);
            }
        }
    }
    println!("{:<22} {:>14} {:>10}  what one iteration is", "scenario", "instr/iter", "vs base");
    let mut json = serde_json::Map::new();
    for (scenario, baseline, what) in SCENARIOS {
        let Some(&each) = per_iteration.get(scenario) else { continue };
        let ratio = per_iteration.get(baseline).map(|&b| each / b);
        let shown = ratio.map_or_else(String::new, |r| format!("{r:.2}x"));
        println!("{scenario:<22} {each:>14.0} {shown:>10}  {what}");
        json.insert(scenario.into(), serde_json::json!({ "instructions": each, "baseline": baseline, "what": what }));
    }
    let path = contour_benches::target_dir().join("profile.json");
    if let Err(error) = std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap_or_default()) {
        eprintln!("profile: cannot write {}: {error}", path.display());
        std::process::exit(1);
    }
}
