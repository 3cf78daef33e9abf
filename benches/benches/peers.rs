//! Contour's peers on the same fixtures and in the same criterion groups as `sandbox.rs` (so their medians land
//! beside Contour's in `target/criterion` and the report takes ratios from one run): wasmtime 48 with Cranelift
//! (fuel on and off) and with the Pulley interpreter, wasm3 0.3.1, and Extism 1.30. Only built with
//! `--features peers` (`make bench-peers`).
//!
//! - `echo/{128,4096,65536}`: the raw transport on a warm instance of the echo fixture for wasmtime and wasm3
//!   (like `raw_wasmi`: `tdm_alloc`, write, call, read `[len][bytes]`, `tdm_free`, fuel off), and an Extism plugin
//!   answering the same constant outcome through Extism's kernel, called with the same request bytes.
//! - `compute/{fib,loop}`: the exported `fib` / `spin` called directly, fuel on where the engine has it; and
//!   `compute/sha256` (the Rust guest's raw `sha256_mib` export) when `make bench-guests` has built it.
//! - `greet_peers/{128,4096,65536}`: the greet a plugin author writes, through Contour's Rust SDK and through
//!   Extism's Rust PDK (serde `Json` in and out), when `make bench-peer-guests` has built it.
//! - `cold_start/{small,large}`: bytes to a ready instance on an engine made once outside the loop.
//!
//! wasm3 0.3.1 (wasm3 0.4.7) has no bulk memory; the WAT fixtures use MVP features only (a unit test of
//! `contour_benches::peers` checks it), so wasm3 runs the same modules as everyone else, and for sha256 the
//! `wasm32v1-none` build of the same guest.

mod common;

use contour_benches::contour::warm_sandbox;
use contour_benches::peers::{check_mvp, extism_echo_wasm, extism_plugin, EXTISM_ECHO_FUNCTION};
use contour_benches::{echo_wasm, fib_wasm, large_wasm, loop_wasm, request_of_size, ECHO_OUTCOME};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use std::hint::black_box;

/// The fib argument of the compute benchmark (as in `sandbox.rs`).
const FIB_N: i32 = 25;
/// fib([`FIB_N`]).
const FIB_OF_N: i32 = 75_025;
/// The iteration count of the tight-loop compute benchmark (as in `sandbox.rs`).
const LOOP_N: i64 = 200_000;
/// wasm3's value stack, in slots.
const WASM3_STACK_SLOTS: u32 = 64 * 1024;
/// The sha256 guest (`make bench-guests`; the `compute/sha256` peers are skipped without it), for wasmtime.
const SHA256_WASM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/plugins/sha256.wasm");
/// The same guest built for `wasm32v1-none` (no bulk memory), for wasm3.
const SHA256_MVP_WASM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/plugins/sha256-mvp.wasm");
/// The Rust SDK's hello plugin (`make rust-examples`), Contour's side of `greet_peers`.
const HELLO_WASM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/plugins/hello.wasm");
/// The same plugin built for speed, with wasm SIMD, opt-level 3 and LLVM's inline threshold at 1500 (`make
/// rust-examples`: the SDK scans JSON 128 bytes a round), beside it.
const HELLO_SIMD_WASM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/plugins/simd/hello.wasm");
/// The same greet written with extism-pdk (`make bench-peer-guests`), Extism's side of `greet_peers`.
const EXTISM_GREET_WASM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/plugins/extism-greet.wasm");
/// The same Extism guest at opt-level 3 and inline threshold 1500, as the SIMD hello is built: the peer of that
/// build.
const EXTISM_GREET_O3_WASM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/plugins/extism-greet-o3.wasm");
/// MiB hashed per iteration (as in `guest.rs`).
const SHA256_MIB: i32 = 1;
/// The host-call imports a Rust guest may declare, stubbed (the raw exports never call them).
const TDM_IMPORTS: [&str; 2] = ["tdm_host_call", "tdm_host_response"];
/// What a stubbed host call answers (as in `guest.rs`).
const NO_HOST: i32 = -4;

/// What `spin(n)` answers: `n` rounds of `acc = acc * 31 + i`.
fn spin_of(n: i64) -> i64 {
    (0..n).fold(0i64, |acc, i| acc.wrapping_mul(31).wrapping_add(i))
}

/// The wasmtime configurations measured.
#[derive(Clone, Copy)]
enum Wasmtime {
    /// Cranelift to native code.
    Cranelift,
    /// Cranelift to Pulley bytecode, run by wasmtime's interpreter.
    Pulley,
}

impl Wasmtime {
    /// The bench name stem.
    fn name(self) -> &'static str {
        match self {
            Self::Cranelift => "wasmtime_cranelift",
            Self::Pulley => "wasmtime_pulley",
        }
    }

    /// An engine with fuel metering on or off, or `None` (said on stderr) when this wasmtime build cannot target
    /// it.
    fn engine(self, fuel: bool) -> Option<wasmtime::Engine> {
        let mut config = wasmtime::Config::new();
        config.consume_fuel(fuel);
        if let Self::Pulley = self {
            let pointer_bits = usize::BITS;
            if let Err(error) = config.target(&format!("pulley{pointer_bits}")) {
                eprintln!("peers: wasmtime_pulley skipped, no Pulley target: {error}");
                return None;
            }
        }
        match wasmtime::Engine::new(&config) {
            Ok(engine) => Some(engine),
            Err(error) => {
                eprintln!("peers: {} skipped, no engine: {error}", self.name());
                None
            }
        }
    }
}

/// Both wasmtime configurations whose engine could be made, fuel on or off.
fn wasmtime_engines(fuel: bool) -> Vec<(Wasmtime, wasmtime::Engine)> {
    [Wasmtime::Cranelift, Wasmtime::Pulley].into_iter().filter_map(|kind| Some((kind, kind.engine(fuel)?))).collect()
}

/// A ready wasmtime instance of a fixture; with fuel on, the store gets a budget no workload reaches. The WAT
/// fixtures import nothing; a Rust guest's `tdm` imports are stubbed to answer [`NO_HOST`].
fn wasmtime_instance(engine: &wasmtime::Engine, wasm: &[u8]) -> (wasmtime::Store<()>, wasmtime::Instance) {
    let module = wasmtime::Module::new(engine, wasm).expect("the fixture compiles in wasmtime");
    let mut store = wasmtime::Store::new(engine, ());
    // Fails only when fuel metering is off, where there is nothing to set.
    let _ = store.set_fuel(u64::MAX / 2);
    let instance = if module.imports().len() == 0 {
        wasmtime::Instance::new(&mut store, &module, &[])
    } else {
        let mut linker = wasmtime::Linker::new(engine);
        for name in TDM_IMPORTS {
            linker.func_wrap("tdm", name, |_: i32, _: i32| -> i32 { NO_HOST }).expect("the stub links");
        }
        linker.instantiate(&mut store, &module)
    };
    (store, instance.expect("the fixture instantiates in wasmtime"))
}

/// A plain wasmi instance of a Rust guest (fuel off), its `tdm` imports stubbed: the reference answers.
fn wasmi_sha256(wasm: &[u8]) -> (wasmi::Store<()>, wasmi::Instance) {
    let engine = wasmi::Engine::default();
    let module = wasmi::Module::new(&engine, wasm).expect("the guest compiles in wasmi");
    let mut store = wasmi::Store::new(&engine, ());
    let mut linker = wasmi::Linker::<()>::new(&engine);
    for name in TDM_IMPORTS {
        linker.func_wrap("tdm", name, |_: i32, _: i32| -> i32 { NO_HOST }).expect("the stub links");
    }
    let instance = linker.instantiate_and_start(&mut store, &module).expect("the guest instantiates in wasmi");
    (store, instance)
}

/// The raw transport floor of one intent in wasmtime (the same steps as `raw_wasmi`).
struct WasmtimeEcho {
    store: wasmtime::Store<()>,
    memory: wasmtime::Memory,
    alloc: wasmtime::TypedFunc<i32, i32>,
    free: wasmtime::TypedFunc<(i32, i32), ()>,
    execute: wasmtime::TypedFunc<(i32, i32), i32>,
}

impl WasmtimeEcho {
    fn new(engine: &wasmtime::Engine, wasm: &[u8]) -> Self {
        let (mut store, instance) = wasmtime_instance(engine, wasm);
        let memory = instance.get_memory(&mut store, "memory").expect("the fixture exports memory");
        let alloc = instance.get_typed_func(&mut store, "tdm_alloc").expect("the fixture exports tdm_alloc");
        let free = instance.get_typed_func(&mut store, "tdm_free").expect("the fixture exports tdm_free");
        let execute =
            instance.get_typed_func(&mut store, "tdm_plugin_execute_intent").expect("the fixture exports the intent");
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

/// A wasm3 runtime with `wasm` loaded. wasm3 finds post-MVP instructions only as it compiles each function, so
/// callers check the fixture with [`check_mvp`] first (outside any timed loop).
fn wasm3_runtime(wasm: &[u8]) -> wasm3::Runtime {
    let environment = wasm3::Environment::new().expect("a wasm3 environment");
    let runtime = environment.create_runtime(WASM3_STACK_SLOTS).expect("a wasm3 runtime");
    runtime.parse_and_load_module(wasm.to_vec()).expect("the fixture loads in wasm3");
    runtime
}

/// Stubs a Rust guest's `tdm` imports in `runtime` to answer [`NO_HOST`] (a module without them is left as is).
fn wasm3_stub_tdm_imports(runtime: &wasm3::Runtime) {
    for mut module in runtime.modules() {
        for name in TDM_IMPORTS {
            let stub = |_: wasm3::CallContext<'_>, _: (i32, i32)| -> Result<i32, wasm3::error::Trap> { Ok(NO_HOST) };
            match module.link_closure("tdm", name, stub) {
                Ok(()) | Err(wasm3::error::Error::FunctionNotFound) => {}
                Err(error) => panic!("wasm3 cannot link the {name} stub: {error}"),
            }
        }
    }
}

/// The raw transport floor of one intent in wasm3 (the same steps as `raw_wasmi`).
struct Wasm3Echo<'rt> {
    runtime: &'rt wasm3::Runtime,
    alloc: wasm3::Function<'rt, i32, i32>,
    free: wasm3::Function<'rt, (i32, i32), ()>,
    execute: wasm3::Function<'rt, (i32, i32), i32>,
}

impl<'rt> Wasm3Echo<'rt> {
    fn new(runtime: &'rt wasm3::Runtime) -> Self {
        Self {
            runtime,
            alloc: runtime.find_function("tdm_alloc").expect("the fixture exports tdm_alloc"),
            free: runtime.find_function("tdm_free").expect("the fixture exports tdm_free"),
            execute: runtime.find_function("tdm_plugin_execute_intent").expect("the fixture exports the intent"),
        }
    }

    fn call(&self, request: &[u8]) -> Vec<u8> {
        let len = request.len() as i32;
        let req = self.alloc.call(len).expect("tdm_alloc runs") as usize;
        // SAFETY: wasm3 hands out its linear memory as a raw slice that a call may reallocate; each slice here is
        // made after the last call and dropped before the next one, and nothing else runs on this runtime.
        unsafe { &mut *self.runtime.memory_mut() }
            .get_mut(req..req + request.len())
            .expect("the request fits")
            .copy_from_slice(request);
        let resp = self.execute.call(req as i32, len).expect("the intent runs") as usize;
        // SAFETY: as above; the slice is dropped before `tdm_free` runs.
        let data = unsafe { &*self.runtime.memory() };
        let body_len = u32::from_le_bytes(data[resp..resp + 4].try_into().expect("four bytes")) as usize;
        let body = data[resp + 4..resp + 4 + body_len].to_vec();
        self.free.call(req as i32, len).expect("tdm_free runs");
        self.free.call(resp as i32, body_len as i32 + 4).expect("tdm_free runs");
        body
    }
}

fn echo(c: &mut Criterion) {
    let wasm = echo_wasm();
    check_mvp(&wasm).expect("wasm3 0.3.1 runs MVP modules only");
    let engines = wasmtime_engines(false);
    let wasm3 = wasm3_runtime(&wasm);
    let wasm3_echo = Wasm3Echo::new(&wasm3);
    let mut extism = extism_plugin(extism_echo_wasm(), "echo");
    for len in [128, 4096, 65_536] {
        let request = request_of_size("echo", len);
        let mut group = c.benchmark_group(format!("echo/{len}"));
        group.throughput(Throughput::Bytes(request.len() as u64));
        for (kind, engine) in &engines {
            let mut raw = WasmtimeEcho::new(engine, &wasm);
            assert_eq!(raw.call(&request), ECHO_OUTCOME.as_bytes(), "{} answers the outcome", kind.name());
            group.bench_function(kind.name(), |b| b.iter(|| raw.call(black_box(&request))));
        }
        assert_eq!(wasm3_echo.call(&request), ECHO_OUTCOME.as_bytes(), "wasm3 answers the outcome");
        group.bench_function("wasm3", |b| b.iter(|| wasm3_echo.call(black_box(&request))));
        let answer = extism.call::<&[u8], &[u8]>(EXTISM_ECHO_FUNCTION, &request).expect("the Extism echo runs");
        assert_eq!(answer, ECHO_OUTCOME.as_bytes(), "Extism answers the outcome");
        group.bench_function("extism", |b| {
            b.iter(|| {
                let answer = extism.call::<&[u8], &[u8]>(EXTISM_ECHO_FUNCTION, black_box(&request));
                answer.expect("the Extism echo runs").len()
            })
        });
        group.finish();
    }
}

/// The same greet through Contour's Rust SDK (`examples/rust/hello`, warm sandbox, fuel on; scalar, and built with SIMD
/// when `target/plugins/simd/hello.wasm` is there) and through Extism's Rust
/// PDK (`benches/guests/extism-greet`: serde `Json` in and out, `make bench-peer-guests`; built as hello is, and at
/// opt-level 3 and inline threshold 1500 as the SIMD hello is, `extism_o3`) at 128 B, 4 KiB and 64 KiB
/// Contour requests; Extism gets the same name as its input `{"name": ...}` (it has no envelope). Contour's fuel per
/// intent is printed beside. Skipped when either module is not built.
fn greet(c: &mut Criterion) {
    let (Ok(hello), Ok(extism_greet)) = (std::fs::read(HELLO_WASM), std::fs::read(EXTISM_GREET_WASM)) else {
        eprintln!(
            "peers: greet_peers skipped, {HELLO_WASM} or {EXTISM_GREET_WASM} is not built (make bench-peer-guests)"
        );
        return;
    };
    let mut plugin = extism_plugin(extism_greet, "greet");
    let mut plugin_o3 = std::fs::read(EXTISM_GREET_O3_WASM).ok().map(|wasm| extism_plugin(wasm, "greet (opt-level 3)"));
    for size in [128, 4096, 65_536] {
        let greet = contour_benches::greet(size);
        let input = serde_json::to_vec(&serde_json::json!({ "name": greet.name })).expect("JSON");
        let expected = format!(r#"{{"greeting":"Hello, {}!"}}"#, greet.name);
        let mut group = c.benchmark_group(format!("greet_peers/{size}"));
        group.throughput(Throughput::Bytes(size as u64));
        let mut sandbox = warm_sandbox(&hello);
        assert_eq!(sandbox.execute_request(&greet.request).outcome.json, greet.outcome, "Contour greets");
        let fuel = sandbox.execute_request(&greet.request).fuel_used;
        eprintln!("greet_peers/{size}/contour_rust: {fuel} fuel per intent");
        group.bench_function("contour_rust", |b| b.iter(|| sandbox.execute_request(black_box(&greet.request))));
        if let Ok(hello_simd) = std::fs::read(HELLO_SIMD_WASM) {
            let mut simd = warm_sandbox(&hello_simd);
            assert_eq!(simd.execute_request(&greet.request).outcome.json, greet.outcome, "Contour greets with SIMD");
            let fuel = simd.execute_request(&greet.request).fuel_used;
            eprintln!("greet_peers/{size}/contour_rust_simd: {fuel} fuel per intent");
            group.bench_function("contour_rust_simd", |b| b.iter(|| simd.execute_request(black_box(&greet.request))));
        }
        let answer = plugin.call::<&[u8], &[u8]>("greet", &input).expect("the Extism greet runs");
        assert_eq!(answer, expected.as_bytes(), "Extism greets");
        group.bench_function("extism", |b| {
            b.iter(|| plugin.call::<&[u8], &[u8]>("greet", black_box(&input)).expect("the Extism greet runs").len())
        });
        if let Some(plugin) = plugin_o3.as_mut() {
            let answer = plugin.call::<&[u8], &[u8]>("greet", &input).expect("the Extism greet (opt-level 3) runs");
            assert_eq!(answer, expected.as_bytes(), "Extism greets (opt-level 3)");
            group.bench_function("extism_o3", |b| {
                b.iter(|| plugin.call::<&[u8], &[u8]>("greet", black_box(&input)).expect("the Extism greet runs").len())
            });
        }
        group.finish();
    }
}

/// One compute group: the export `export (P) -> R` called with `arg` on every wasmtime engine (named) and on wasm3
/// (`wasm3_wasm`, the MVP build of the same workload), after checking each answers `expected`.
#[allow(clippy::too_many_arguments)]
fn compute_group<P, R>(
    c: &mut Criterion,
    name: &str,
    engines: &[(String, wasmtime::Engine)],
    wasm: &[u8],
    wasm3_wasm: &[u8],
    export: &str,
    arg: P,
    expected: R,
) where
    P: wasmtime::WasmParams + wasm3::WasmArg + Copy,
    R: wasmtime::WasmResults + wasm3::WasmType + PartialEq + std::fmt::Debug,
{
    let mut group = c.benchmark_group(name);
    if name == "compute/sha256" {
        // Tens of milliseconds per iteration in the interpreters, as in guest.rs.
        group.sampling_mode(SamplingMode::Flat);
    }
    for (bench, engine) in engines {
        let (mut store, instance) = wasmtime_instance(engine, wasm);
        let call = instance.get_typed_func::<P, R>(&mut store, export).expect("the fixture exports the function");
        assert_eq!(call.call(&mut store, arg).expect("the export runs"), expected, "{bench} in {name}");
        group.bench_function(bench.as_str(), |b| {
            b.iter(|| {
                let _ = store.set_fuel(u64::MAX / 2);
                call.call(&mut store, black_box(arg)).expect("the export runs")
            })
        });
    }
    check_mvp(wasm3_wasm).expect("wasm3 0.3.1 runs MVP modules only");
    let runtime = wasm3_runtime(wasm3_wasm);
    wasm3_stub_tdm_imports(&runtime);
    let call = runtime.find_function::<P, R>(export).expect("the fixture exports the function");
    assert_eq!(call.call(arg).expect("the export runs"), expected, "wasm3 in {name}");
    group.bench_function("wasm3", |b| b.iter(|| call.call(black_box(arg)).expect("the export runs")));
    group.finish();
}

fn compute(c: &mut Criterion) {
    let fuelled = wasmtime_engines(true).into_iter().map(|(kind, engine)| (kind.name().to_string(), engine));
    let unfuelled = Wasmtime::Cranelift.engine(false).map(|engine| ("wasmtime_cranelift_nofuel".to_string(), engine));
    let engines: Vec<(String, wasmtime::Engine)> = fuelled.chain(unfuelled).collect();
    let (fib, spin) = (fib_wasm(), loop_wasm());
    compute_group(c, "compute/fib", &engines, &fib, &fib, "fib", FIB_N, FIB_OF_N);
    compute_group(c, "compute/loop", &engines, &spin, &spin, "spin", LOOP_N, spin_of(LOOP_N));
    match (std::fs::read(SHA256_WASM), std::fs::read(SHA256_MVP_WASM)) {
        (Ok(sha256), Ok(sha256_mvp)) => {
            // The digest's first 4 bytes, as plain wasmi answers them: every peer must agree.
            let (mut store, instance) = wasmi_sha256(&sha256);
            let reference = instance
                .get_typed_func::<i32, i32>(&store, "sha256_mib")
                .expect("the guest exports sha256_mib")
                .call(&mut store, SHA256_MIB)
                .expect("sha256_mib runs");
            compute_group(c, "compute/sha256", &engines, &sha256, &sha256_mvp, "sha256_mib", SHA256_MIB, reference);
        }
        _ => eprintln!(
            "peers: compute/sha256 skipped, {SHA256_WASM} or {SHA256_MVP_WASM} is not built (run `make bench-guests`)"
        ),
    }
}

/// Bytes to a ready instance: wasmtime compiles the whole module ahead of time on an engine made once outside the
/// loop (fuel on, as the wasmi baselines); wasm3 parses, loads and compiles the intent function (it compiles the
/// others as they are first called).
fn cold_start(c: &mut Criterion) {
    let engines = wasmtime_engines(true);
    for (size, wasm) in [("small", echo_wasm()), ("large", large_wasm())] {
        check_mvp(&wasm).expect("wasm3 0.3.1 runs MVP modules only");
        let mut group = c.benchmark_group(format!("cold_start/{size}"));
        group.throughput(Throughput::Bytes(wasm.len() as u64));
        if size == "large" {
            // About a second per Cranelift compile: flat sampling and criterion's minimum of 10 samples.
            group.sampling_mode(SamplingMode::Flat).sample_size(10);
        }
        for (kind, engine) in &engines {
            group.bench_function(kind.name(), |b| b.iter(|| wasmtime_instance(engine, black_box(&wasm))));
        }
        group.bench_function("wasm3", |b| {
            b.iter(|| {
                let runtime = wasm3_runtime(black_box(&wasm));
                runtime
                    .find_function::<(i32, i32), i32>("tdm_plugin_execute_intent")
                    .expect("the fixture exports the intent");
                runtime
            })
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = cold_start, echo, greet, compute
}
criterion_main!(benches);
