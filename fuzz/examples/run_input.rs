//! Runs one fuzz input of `smith_module` or `differential` outside libFuzzer (no sanitizer):
//! generates its module, prints its size, and runs one intent through Contour's sandbox. Used to
//! tell a finding that is AddressSanitizer's stack use apart from one that is real.
//! `cargo +nightly run --release --example run_input -- plugin|closed FILE` in fuzz/.
use contour_core::{Plugin, Sandbox, VirtualEnvironment};
use contour_fuzz_oracles::{small_policy, smith_module, SmithKind};
use std::sync::Arc;

fn main() {
    let mut args = std::env::args().skip(1);
    let kind = match args.next().as_deref() {
        Some("plugin") => SmithKind::Plugin,
        _ => SmithKind::Closed,
    };
    let bytes = std::fs::read(args.next().expect("an input file")).expect("the input reads");
    let wasm = smith_module(&mut arbitrary::Unstructured::new(&bytes), kind).expect("a module is generated");
    if let Some(out) = args.next() {
        std::fs::write(out, &wasm).expect("the module writes");
    }
    println!("module: {} bytes", wasm.len());
    let plugin = Plugin::load(&wasm, small_policy()).expect("the module loads");
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(1)));
    let report = sandbox.execute_request(b"{}");
    println!("fuel {}: {}", report.fuel_used, report.outcome.json);
}
