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
    let (_, reference) = &figures[0];
    for (compilation, run) in &figures[1..] {
        assert_eq!(run, reference, "{compilation:?} differs from Lazy: translation fuel was charged");
    }
}
