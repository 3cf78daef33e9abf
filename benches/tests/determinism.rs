//! Fuel is deterministic in every compilation mode: the same intent on a fresh plugin and sandbox uses the same
//! fuel twice, and the same fuel in Lazy, LazyTranslation and Eager (translation and validation cost no fuel).

use contour_benches::{large_called, large_wasm, request_with_n, LARGE_FUNCTIONS};
use contour_core::{Compilation, Plugin, Policy, Sandbox, VirtualEnvironment};
use std::sync::Arc;

/// Loads `wasm` fresh in `compilation` mode and runs one intent: (launch fuel, intent fuel, outcome JSON).
fn fresh_run(wasm: &[u8], compilation: Compilation, request: &[u8]) -> (u64, u64, String) {
    let plugin = Plugin::load(wasm, Policy { compilation, ..Policy::default() }).expect("the large module loads");
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(3)));
    let launch = sandbox.launch().expect("the large module launches");
    let report = sandbox.execute_request(request);
    assert!(report.outcome.is_completed(), "{compilation:?}: {}", report.outcome.json);
    (launch.fuel_used, report.fuel_used, report.outcome.json)
}

#[test]
fn fuel_is_identical_across_runs_and_compilation_modes() {
    assert!(large_called(LARGE_FUNCTIONS).len() >= 5, "the intent calls several generated functions");
    let wasm = large_wasm();
    let request = request_with_n("large", 17);
    let mut figures = Vec::new();
    for compilation in [Compilation::Lazy, Compilation::LazyTranslation, Compilation::Eager] {
        let first = fresh_run(&wasm, compilation, &request);
        let second = fresh_run(&wasm, compilation, &request);
        assert_eq!(first, second, "{compilation:?}: two fresh runs differ");
        assert!(first.1 > 0, "{compilation:?}: the intent used no fuel");
        figures.push((compilation, first));
    }
    println!("contour fuel (launch, intent) in every mode: ({}, {})", figures[0].1 .0, figures[0].1 .1);
    let (_, reference) = &figures[0];
    for (compilation, run) in &figures[1..] {
        assert_eq!(run, reference, "{compilation:?} differs from Lazy: translation fuel was charged");
    }
}

/// The control: bare wasmi with its default fuel costs does charge translation fuel, so the test above would see it.
#[test]
fn bare_wasmi_with_default_fuel_costs_charges_translation() {
    use wasmi::{CompilationMode, Config, Engine, Linker, Module, Store};
    let wasm = large_wasm();
    let request = request_with_n("large", 17);
    let fuel_in = |mode: CompilationMode| {
        let mut config = Config::default();
        config.consume_fuel(true).compilation_mode(mode);
        let engine = Engine::new(&config);
        let module = Module::new(&engine, &wasm).expect("the large module compiles");
        let mut store = Store::new(&engine, ());
        store.set_fuel(u64::MAX / 2).expect("fuel metering is on");
        let instance = Linker::new(&engine).instantiate_and_start(&mut store, &module).expect("it instantiates");
        let memory = instance.get_memory(&store, "memory").expect("it exports memory");
        let alloc = instance.get_typed_func::<i32, i32>(&store, "tdm_alloc").expect("it exports tdm_alloc");
        let execute =
            instance.get_typed_func::<(i32, i32), i32>(&store, "tdm_plugin_execute_intent").expect("it exports it");
        let len = request.len() as i32;
        let ptr = alloc.call(&mut store, len).expect("tdm_alloc runs");
        memory.write(&mut store, ptr as usize, &request).expect("the request fits");
        let before = store.get_fuel().expect("fuel metering is on");
        execute.call(&mut store, (ptr, len)).expect("the intent runs");
        before - store.get_fuel().expect("fuel metering is on")
    };
    let (lazy, eager) = (fuel_in(CompilationMode::Lazy), fuel_in(CompilationMode::Eager));
    println!("bare wasmi intent fuel: lazy {lazy}, eager {eager}");
    assert!(lazy > eager, "lazy {lazy} vs eager {eager}");
}
