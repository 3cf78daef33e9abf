//! Resident memory per idle warm sandbox: for the echo plugin with a 1-page memory (as the issue's figure) and
//! with the fixture's own 2 pages, creates N echo sandboxes (each launched and having served one intent)
//! and N plain wasmi instances of the same module (one store each, one shared engine and module, one raw round
//! trip each), reads `/proc/self/statm` before and after each set, and prints the difference divided by N. Writes
//! the figures to `target/density.json` (or `$CARGO_TARGET_DIR/density.json`) for the report.
//!
//! Run it in release: `cargo run --release -p contour-benches --bin density [N]`.

use contour_benches::{echo_wat, request_of_size};
use contour_core::{Plugin, Policy, Sandbox, VirtualEnvironment};
use std::hint::black_box;
use std::sync::Arc;
use wasmi::{Engine, Instance, Linker, Module, Store, TypedFunc};

/// How many sandboxes (and wasmi instances) to create when no count is given.
const DEFAULT_N: usize = 2000;
/// Resident bytes of this process, from `/proc/self/statm` (its second field, in pages).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm is readable");
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|f| f.parse().ok()).expect("statm has a resident field");
    pages * 4096
}

/// The resident bytes `make` adds, per item, over `n` items (kept alive until measured).
fn per_item<T>(n: usize, mut make: impl FnMut() -> T) -> (f64, Vec<T>) {
    let before = resident_bytes();
    let items: Vec<T> = (0..n).map(|_| make()).collect();
    let after = resident_bytes();
    (after.saturating_sub(before) as f64 / n as f64, items)
}

/// One raw round trip on a bare instance, so it is as warm as the sandbox (its arena and heap pages touched).
fn warm_wasmi(store: &mut Store<()>, instance: &Instance, request: &[u8]) {
    let memory = instance.get_memory(&*store, "memory").expect("the fixture exports memory");
    let alloc: TypedFunc<i32, i32> = instance.get_typed_func(&*store, "tdm_alloc").expect("it exports tdm_alloc");
    let execute: TypedFunc<(i32, i32), i32> =
        instance.get_typed_func(&*store, "tdm_plugin_execute_intent").expect("it exports the intent");
    let ptr = alloc.call(&mut *store, request.len() as i32).expect("tdm_alloc runs");
    memory.write(&mut *store, ptr as usize, request).expect("the request fits");
    black_box(execute.call(&mut *store, (ptr, request.len() as i32)).expect("the intent runs"));
}

/// The echo plugin with a `pages`-page memory.
fn echo_with_pages(pages: u32) -> Vec<u8> {
    let wat = echo_wat().replace(r#"(memory (export "memory") 2)"#, &format!(r#"(memory (export "memory") {pages})"#));
    wat::parse_str(wat).expect("the echo WAT is valid")
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(DEFAULT_N);
    let request = request_of_size("echo", 128);
    let mut figures = Vec::new();
    for pages in [1u32, 2] {
        let (contour, wasmi) = measure(&echo_with_pages(pages), &request, n);
        println!("resident memory per idle warm echo sandbox, {pages}-page memory, N = {n} of each:");
        println!("  contour     {:>8.1} KiB", contour / 1024.0);
        println!("  plain wasmi {:>8.1} KiB", wasmi / 1024.0);
        println!("  ratio       {:>8.2}x", contour / wasmi.max(1.0));
        figures.push(serde_json::json!({
            "pages": pages,
            "contour_bytes_per_sandbox": contour,
            "wasmi_bytes_per_instance": wasmi,
        }));
    }
    let json = serde_json::json!({ "n": n, "figures": figures });
    let out = contour_benches::target_dir().join("density.json");
    match std::fs::write(&out, format!("{json:#}\n")) {
        Ok(()) => println!("wrote {}", out.display()),
        Err(error) => eprintln!("could not write {}: {error}", out.display()),
    }
}

/// (Contour bytes per sandbox, plain wasmi bytes per instance) for `n` of each of `wasm`.
fn measure(wasm: &[u8], request: &[u8], n: usize) -> (f64, f64) {
    // Shared, load-once state first, outside both measurements.
    let plugin = Arc::new(Plugin::load(wasm, Policy::default()).expect("the echo plugin loads"));
    let engine = Engine::default();
    let module = Module::new(&engine, wasm).expect("the echo module compiles");
    let linker = Linker::<()>::new(&engine);
    // Warm the allocator with one of each, so its first growth is not charged to either side.
    let _warm = {
        let mut sandbox = Sandbox::new(plugin.clone(), Box::new(VirtualEnvironment::new(0)));
        sandbox.launch().expect("the echo plugin launches");
        sandbox
    };

    let (wasmi_bytes, instances) = per_item(n, || {
        let mut store = Store::new(&engine, ());
        let instance = linker.instantiate_and_start(&mut store, &module).expect("the echo module instantiates");
        warm_wasmi(&mut store, &instance, request);
        (store, instance)
    });
    let (contour_bytes, sandboxes) = per_item(n, || {
        let mut sandbox = Sandbox::new(plugin.clone(), Box::new(VirtualEnvironment::new(1)));
        sandbox.launch().expect("the echo plugin launches");
        let report = sandbox.execute_request(request);
        assert!(report.outcome.is_completed(), "{}", report.outcome.json);
        sandbox
    });
    // Kept (leaked) to the end of the process: freed memory would be reused by the next measurement.
    std::mem::forget(black_box((instances, sandboxes)));
    (contour_bytes, wasmi_bytes)
}
