//! Contour against bare wasmi: cold start (bytes to a ready instance), the echo round trip on a warm instance,
//! and compute (fib) with fuel metering on.

use contour_benches::{echo_wasm, fib_wasm, large_wasm, request_of_size, request_with_n};
use contour_core::{Compilation, Plugin, Policy, Sandbox, VirtualEnvironment};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;
use wasmi::{CompilationMode, Config, Engine, Instance, Linker, Memory, Module, Store, TypedFunc};

/// The fib argument of the compute benchmark.
const FIB_N: u32 = 25;

const MODES: [(&str, Compilation, CompilationMode); 3] = [
    ("lazy", Compilation::Lazy, CompilationMode::Lazy),
    ("lazy_translation", Compilation::LazyTranslation, CompilationMode::LazyTranslation),
    ("eager", Compilation::Eager, CompilationMode::Eager),
];

fn contour_sandbox(wasm: &[u8], compilation: Compilation) -> Sandbox {
    let plugin = Plugin::load(wasm, Policy { compilation, ..Policy::default() }).expect("the fixture loads");
    Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(7)))
}

/// A bare wasmi instance of a fixture (none imports anything), with fuel metering on or off.
fn wasmi_instance(wasm: &[u8], mode: CompilationMode, fuel: bool) -> (Store<()>, Instance) {
    let mut config = Config::default();
    config.consume_fuel(fuel).compilation_mode(mode);
    let engine = Engine::new(&config);
    let module = Module::new(&engine, wasm).expect("the fixture compiles");
    let mut store = Store::new(&engine, ());
    if fuel {
        store.set_fuel(u64::MAX / 2).expect("fuel metering is on");
    }
    let instance = Linker::new(&engine).instantiate_and_start(&mut store, &module).expect("the fixture instantiates");
    (store, instance)
}

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
            group.bench_function(format!("contour_{name}"), |b| {
                b.iter(|| {
                    let mut sandbox = contour_sandbox(black_box(wasm), compilation);
                    sandbox.launch().expect("the fixture launches");
                    sandbox
                })
            });
        }
        for (name, _, mode) in MODES {
            group.bench_function(format!("wasmi_{name}"), |b| b.iter(|| wasmi_instance(black_box(wasm), mode, true)));
        }
        group.finish();
    }
}

/// The raw floor of one intent: plain typed calls and memory copies, no JSON, no checks, fuel off.
struct RawEcho {
    store: Store<()>,
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    free: TypedFunc<(i32, i32), ()>,
    execute: TypedFunc<(i32, i32), i32>,
}

impl RawEcho {
    fn new(wasm: &[u8]) -> Self {
        let (store, instance) = wasmi_instance(wasm, CompilationMode::Lazy, false);
        let memory = instance.get_memory(&store, "memory").expect("the fixture exports memory");
        let alloc = instance.get_typed_func(&store, "tdm_alloc").expect("the fixture exports tdm_alloc");
        let free = instance.get_typed_func(&store, "tdm_free").expect("the fixture exports tdm_free");
        let execute =
            instance.get_typed_func(&store, "tdm_plugin_execute_intent").expect("the fixture exports the intent");
        Self { store, memory, alloc, free, execute }
    }

    fn call(&mut self, request: &[u8]) -> Vec<u8> {
        let len = request.len() as i32;
        let req = self.alloc.call(&mut self.store, len).expect("tdm_alloc runs");
        self.memory.write(&mut self.store, req as usize, request).expect("the request fits");
        let resp = self.execute.call(&mut self.store, (req, len)).expect("the intent runs") as usize;
        let data = self.memory.data(&self.store);
        let body_len = u32::from_le_bytes(data[resp..resp + 4].try_into().expect("four bytes")) as usize;
        let body = data[resp + 4..resp + 4 + body_len].to_vec();
        self.free.call(&mut self.store, (req, len)).expect("tdm_free runs");
        self.free.call(&mut self.store, (resp as i32, body_len as i32 + 4)).expect("tdm_free runs");
        body
    }
}

fn echo(c: &mut Criterion) {
    let wasm = echo_wasm();
    for len in [128, 4096, 65_536] {
        let request = request_of_size("echo", len);
        let mut group = c.benchmark_group(format!("echo/{len}"));
        group.throughput(Throughput::Bytes(request.len() as u64));
        let mut sandbox = contour_sandbox(&wasm, Compilation::default());
        sandbox.launch().expect("the echo plugin launches");
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
    let wasm = fib_wasm();
    let mut group = c.benchmark_group("compute/fib");
    let request = request_with_n("fib", u64::from(FIB_N));
    let mut sandbox = contour_sandbox(&wasm, Compilation::default());
    sandbox.launch().expect("the fib plugin launches");
    group.bench_function("contour", |b| {
        b.iter(|| {
            let report = sandbox.execute_request(black_box(&request));
            debug_assert!(report.outcome.is_completed());
            report
        })
    });
    let (mut store, instance) = wasmi_instance(&wasm, CompilationMode::Lazy, true);
    let fib: TypedFunc<i32, i32> = instance.get_typed_func(&store, "fib").expect("the fixture exports fib");
    group.bench_function("wasmi_fuel", |b| {
        b.iter(|| {
            store.set_fuel(u64::MAX / 2).expect("fuel metering is on");
            fib.call(&mut store, black_box(FIB_N as i32)).expect("fib runs")
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = cold_start, echo, compute
}
criterion_main!(benches);
