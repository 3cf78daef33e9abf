//! Contour against bare wasmi: cold start (bytes to a ready instance), an installed plugin's launch from disk as
//! `tdm call` does it, the echo round trip on a warm instance (a
//! constant-answer WAT plugin, and the Rust SDK's hello plugin when it is built), the same greet through each guest
//! SDK, compute (fib, a tight loop) with fuel metering on, one host call of `log`, and intents per second over
//! separate sandboxes on 1 and 2 threads.

mod common;

use contour_benches::baseline::{wasmi_engine, wasmi_instance, wasmi_instance_on, HostFnWork, RawEcho, RawHostLog};
use contour_benches::contour::{self, log_sandbox, warm_sandbox};
use contour_benches::installed::{self, InstalledFixture};
use contour_benches::{
    echo_wasm, fib_wasm, host_log_wasm, large_wasm, loop_wasm, request_of_size, request_with_n, HOST_CALLS_PER_INTENT,
};
use contour_core::{Compilation, Sandbox};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use std::hint::black_box;
use std::path::Path;
use std::sync::Barrier;
use std::time::Instant;
use wasmi::{CompilationMode, Engine, Module, TypedFunc};

/// The fib argument of the compute benchmark.
const FIB_N: u32 = 25;
/// The iteration count of the tight-loop compute benchmark.
const LOOP_N: u64 = 200_000;
/// The Rust SDK hello plugin, built by `make rust-examples` (the echo_rust bench is skipped without it).
const HELLO_WASM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/plugins/hello.wasm");
/// Where `make examples` puts the example plugins.
const PLUGINS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/plugins");
/// The greet request sizes, in bytes.
const GREET_SIZES: [usize; 3] = [128, 4096, 65_536];

const MODES: [(&str, Compilation, CompilationMode); 3] = [
    ("lazy", Compilation::Lazy, CompilationMode::Lazy),
    ("lazy_translation", Compilation::LazyTranslation, CompilationMode::LazyTranslation),
    ("eager", Compilation::Eager, CompilationMode::Eager),
];

fn cold_start(c: &mut Criterion) {
    let fixtures = [("small", echo_wasm()), ("large", large_wasm())];
    for (size, wasm) in &fixtures {
        let mut group = c.benchmark_group(format!("cold_start/{size}"));
        group.throughput(Throughput::Bytes(wasm.len() as u64));
        if *size == "large" {
            // Milliseconds per iteration: sample flat so 20 samples fit the measurement time.
            group.sampling_mode(SamplingMode::Flat);
        }
        for (name, compilation, _) in MODES {
            let runtime = contour::runtime(compilation);
            group.bench_function(format!("contour_{name}"), |b| {
                b.iter(|| contour::cold_start(&runtime, black_box(wasm), compilation))
            });
        }
        for (name, _, mode) in MODES {
            let engine = wasmi_engine(mode, true);
            group.bench_function(format!("wasmi_{name}"), |b| b.iter(|| wasmi_instance_on(&engine, black_box(wasm))));
        }
        group.finish();
    }
}

/// An installed plugin's launch from disk, as `tdm call` does it in a fresh process (the
/// approved-launch check reading the state and the package and hashing the module, a lazy load
/// on a runtime of its own, a sandbox, its launch), against bare wasmi reading the same file and
/// instantiating it lazily on an engine made in the iteration too.
fn installed_launch(c: &mut Criterion) {
    let fixture = InstalledFixture::new(&large_wasm());
    let mut group = c.benchmark_group("installed_launch/large");
    group.sampling_mode(SamplingMode::Flat);
    group.bench_function("contour_call", |b| b.iter(|| installed::installed_launch(black_box(&fixture))));
    group.bench_function("wasmi_lazy_from_disk", |b| {
        b.iter(|| {
            let engine = wasmi_engine(CompilationMode::Lazy, true);
            let bytes = std::fs::read(black_box(&fixture.module)).expect("the installed module reads");
            wasmi_instance_on(&engine, &bytes)
        })
    });
    group.finish();
}

fn echo(c: &mut Criterion) {
    let wasm = echo_wasm();
    for len in [128, 4096, 65_536] {
        let request = request_of_size("echo", len);
        let mut group = c.benchmark_group(format!("echo/{len}"));
        group.throughput(Throughput::Bytes(request.len() as u64));
        let mut sandbox = warm_sandbox(&wasm);
        group.bench_function("contour", |b| {
            b.iter(|| {
                let report = sandbox.execute_request(black_box(&request));
                debug_assert!(report.outcome.is_completed());
                report
            })
        });
        let mut raw = RawEcho::new(&wasm);
        group.bench_function("raw_wasmi", |b| b.iter(|| raw.call(black_box(&request))));
        group.finish();
    }
}

fn compute(c: &mut Criterion) {
    let workloads: [(&str, Vec<u8>, Vec<u8>); 2] = [
        ("fib", fib_wasm(), request_with_n("fib", u64::from(FIB_N))),
        ("loop", loop_wasm(), request_with_n("spin", LOOP_N)),
    ];
    for (name, wasm, request) in &workloads {
        let mut group = c.benchmark_group(format!("compute/{name}"));
        let mut sandbox = warm_sandbox(wasm);
        group.bench_function("contour", |b| {
            b.iter(|| {
                let report = sandbox.execute_request(black_box(request));
                debug_assert!(report.outcome.is_completed());
                report
            })
        });
        let (mut store, instance) = wasmi_instance(wasm, CompilationMode::Lazy, true);
        if *name == "fib" {
            let fib: TypedFunc<i32, i32> = instance.get_typed_func(&store, "fib").expect("the fixture exports fib");
            group.bench_function("wasmi_fuel", |b| {
                b.iter(|| {
                    store.set_fuel(u64::MAX / 2).expect("fuel metering is on");
                    fib.call(&mut store, black_box(FIB_N as i32)).expect("fib runs")
                })
            });
        } else {
            let spin: TypedFunc<i64, i64> = instance.get_typed_func(&store, "spin").expect("the fixture exports spin");
            group.bench_function("wasmi_fuel", |b| {
                b.iter(|| {
                    store.set_fuel(u64::MAX / 2).expect("fuel metering is on");
                    spin.call(&mut store, black_box(LOOP_N as i64)).expect("spin runs")
                })
            });
        }
        group.finish();
    }
}

/// One `tdm_host_call` of `log`: each iteration is one intent making [`HOST_CALLS_PER_INTENT`] calls (through
/// Contour), or the same Wasm loop calling a plain wasmi host function that takes `(ptr, len)` and reads the
/// bytes as UTF-8 (fuel on for both). Throughput counts calls, so per-call time is the median / 100.
fn host_call(c: &mut Criterion) {
    let wasm = host_log_wasm();
    let mut group = c.benchmark_group("host_call/log");
    group.throughput(Throughput::Elements(u64::from(HOST_CALLS_PER_INTENT)));
    let mut sandbox = log_sandbox(&wasm);
    let request = request_of_size("log_many", 0);
    group.bench_function("contour", |b| {
        b.iter(|| {
            let report = sandbox.execute_request(black_box(&request));
            debug_assert!(report.outcome.is_completed(), "{}", report.outcome.json);
            report
        })
    });
    let mut raw = RawHostLog::new(&wasm, HostFnWork::ReadBytes);
    assert_eq!(raw.run(1), 1, "the baseline host fn reads the request");
    group.bench_function("wasmi_host_fn", |b| b.iter(|| raw.run(black_box(HOST_CALLS_PER_INTENT))));
    let mut json = RawHostLog::new(&wasm, HostFnWork::ParseJson);
    assert_eq!(json.run(1), 1, "the JSON baseline host fn parses the request");
    group.bench_function("wasmi_host_fn_json", |b| b.iter(|| json.run(black_box(HOST_CALLS_PER_INTENT))));
    group.finish();
}

/// The echo round trip through the Rust SDK's hello plugin (`greet`, guest-side JSON), with a 128-byte request,
/// beside the constant-answer WAT echo through Contour and the raw floor of the hello module itself.
fn echo_rust(c: &mut Criterion) {
    let Ok(wasm) = std::fs::read(Path::new(HELLO_WASM)) else {
        eprintln!("echo_rust: skipped, {HELLO_WASM} is not built (run `make rust-examples`)");
        return;
    };
    let build = |pad: usize| contour_core::intent_request(1, "greet", &serde_json::json!({ "name": "x".repeat(pad) }));
    let shortest = build(1).len();
    let request = build(1 + 128usize.saturating_sub(shortest));
    let mut group = c.benchmark_group("echo_rust/128");
    group.throughput(Throughput::Bytes(request.len() as u64));
    let mut sandbox = warm_sandbox(&wasm);
    let first = sandbox.execute_request(&request);
    assert!(first.outcome.is_completed(), "{}", first.outcome.json);
    group.bench_function("contour", |b| {
        b.iter(|| {
            let report = sandbox.execute_request(black_box(&request));
            debug_assert!(report.outcome.is_completed());
            report
        })
    });
    let has_imports = Module::new(&Engine::default(), &wasm).map(|m| m.imports().len() > 0).unwrap_or(true);
    if has_imports {
        eprintln!("echo_rust: raw_wasmi skipped, the hello module imports functions");
    } else {
        let mut raw = RawEcho::new(&wasm);
        group.bench_function("raw_wasmi", |b| b.iter(|| raw.call(black_box(&request))));
    }
    group.finish();
}

/// The greet of each guest SDK (`examples/{rust,c,assemblyscript}/hello`, built by `make examples`) on a warm
/// Contour sandbox at 128 B, 4 KiB and 64 KiB requests, beside its fuel per intent (printed, and in
/// `target/sdk_fuel.json` from `make sdk-fuel`, which the report reads). An SDK whose module is missing is skipped.
fn greet(c: &mut Criterion) {
    for size in GREET_SIZES {
        let greet = contour_benches::greet(size);
        let mut group = c.benchmark_group(format!("greet/{size}"));
        group.throughput(Throughput::Bytes(greet.request.len() as u64));
        for contour_benches::GreetBuild { bench, file, .. } in contour_benches::GREET_BUILDS {
            let path = Path::new(PLUGINS).join(file);
            let Ok(wasm) = std::fs::read(&path) else {
                eprintln!("greet: {bench} skipped, {} is not built (run `make examples`)", path.display());
                continue;
            };
            let mut sandbox = warm_sandbox(&wasm);
            let first = sandbox.execute_request(&greet.request);
            assert_eq!(first.outcome.json, greet.outcome, "{bench} greets");
            let warm = sandbox.execute_request(&greet.request);
            eprintln!("greet/{size}/{bench}: {} fuel per intent", warm.fuel_used);
            group.bench_function(bench, |b| {
                b.iter(|| {
                    let report = sandbox.execute_request(black_box(&greet.request));
                    debug_assert!(report.outcome.is_completed());
                    report
                })
            });
            // The same greet written `jsonrpc` first (an order the host does not write), beside it.
            let reordered = contour_benches::greet_jsonrpc_first(size);
            let warm = sandbox.execute_request(&reordered.request);
            assert_eq!(warm.outcome.json, greet.outcome, "{bench} greets a reordered request");
            eprintln!("greet/{size}/{bench}_jsonrpc_first: {} fuel per intent", warm.fuel_used);
            group.bench_function(format!("{bench}_jsonrpc_first"), |b| {
                b.iter(|| {
                    let report = sandbox.execute_request(black_box(&reordered.request));
                    debug_assert!(report.outcome.is_completed());
                    report
                })
            });
        }
        group.finish();
    }
}

/// Intents per second over separate echo sandboxes, one per thread: each iteration is one 128-byte intent on
/// every thread at once, so throughput (elements = threads) is intents per second.
fn throughput(c: &mut Criterion) {
    let wasm = echo_wasm();
    let request = request_of_size("echo", 128);
    for threads in [1usize, 2] {
        let mut group = c.benchmark_group("throughput");
        group.throughput(Throughput::Elements(threads as u64));
        let mut sandboxes: Vec<Sandbox> = (0..threads).map(|_| warm_sandbox(&wasm)).collect();
        group.bench_function(format!("{threads}_threads"), |b| {
            b.iter_custom(|iters| {
                let barrier = Barrier::new(threads + 1);
                std::thread::scope(|scope| {
                    let workers: Vec<_> = sandboxes
                        .iter_mut()
                        .map(|sandbox| {
                            let (barrier, request) = (&barrier, &request);
                            scope.spawn(move || {
                                barrier.wait();
                                for _ in 0..iters {
                                    black_box(sandbox.execute_request(black_box(request)));
                                }
                            })
                        })
                        .collect();
                    barrier.wait();
                    let started = Instant::now();
                    for worker in workers {
                        worker.join().expect("a worker panicked");
                    }
                    started.elapsed()
                })
            })
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = cold_start, installed_launch, echo, echo_rust, greet, compute, host_call, throughput
}
criterion_main!(benches);
