//! Where one intent's fuel goes, per guest SDK. The same `greet {name}` plugin written with the Rust, C and
//! AssemblyScript SDKs (`examples/rust/hello`, `examples/c/hello`, `examples/assemblyscript/hello`, built into
//! `target/plugins/` by `make examples`) runs warm through Contour with 128 B, 4 KiB and 64 KiB requests: the fuel
//! each intent reports (`IntentReport::fuel_used`, deterministic), and the same greets written `jsonrpc` first
//! (an order the host does not write: column `jsonrpc1st`). Then the build of each with fuel marks
//! (`target/plugins/fuel-marks/`, `make sdk-fuel-modules`) runs the same intents in bare wasmi with Contour's fuel
//! costs, and the fuel between the marks is split into five stages:
//!
//! - envelope: from the call of `tdm_plugin_execute_intent` until the SDK has the method and the params;
//! - params: until the plugin has its params, typed;
//! - handler: the plugin's own work (trim, build the greeting);
//! - response: writing and framing the outcome, until `tdm_plugin_execute_intent` returns;
//! - allocator: the host's `tdm_alloc` and two `tdm_free` calls, and every allocator call the SDK marks inside
//!   the intent (taken out of the stage it happened in).
//!
//! `make sdk-fuel` builds the modules and runs this; it prints a table and writes `target/sdk_fuel.json`
//! (`make bench-report` reads it). `sdk_fuel MODULE [MARKED]` measures one module instead.

use contour_core::{Plugin, Policy, Sandbox, VirtualEnvironment};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmi::{Caller, Config, CustomFuelCosts, Engine, Instance, Linker, Memory, Module, Store, TypedFunc};

/// Request sizes measured, in bytes.
const SIZES: [usize; 3] = [128, 4096, 65_536];
/// The stage names, in order (the allocator last).
const STAGES: [&str; 5] = ["envelope", "params", "handler", "response", "allocator"];
/// Mark: an allocator call starts (every SDK uses the same numbers; 1, 2 and 3 end the first three stages).
const ALLOC_ENTER: i32 = 100;
/// Mark: an allocator call ends.
const ALLOC_EXIT: i32 = 101;
/// Index of the allocator in [`STAGES`].
const ALLOCATOR: usize = 4;

/// The fuel of one warm intent through Contour (the second of two on one sandbox) and its outcome.
fn contour_fuel(wasm: &[u8], request: &[u8]) -> Result<(u64, String), String> {
    let plugin = Plugin::load(wasm, Policy::default()).map_err(|f| f.to_string())?;
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(1)));
    let first = sandbox.execute_request(request);
    if !first.outcome.is_completed() {
        return Err(format!("the first intent failed: {}", first.outcome.json));
    }
    let warm = sandbox.execute_request(request);
    Ok((warm.fuel_used, warm.outcome.json))
}

/// A marked module in bare wasmi with Contour's fuel costs (copies cost one fuel per 64 bytes, compilation none).
struct Marked {
    store: Store<Vec<(i32, u64)>>,
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    free: TypedFunc<(i32, i32), ()>,
    execute: TypedFunc<(i32, i32), i32>,
}

impl Marked {
    fn new(wasm: &[u8]) -> Result<Self, String> {
        let mut config = Config::default();
        config.consume_fuel(true).fuel_cost(CustomFuelCosts {
            bytes_copied_per_fuel: contour_core::BYTES_PER_FUEL as u32,
            fuel_per_bytes_translated: 0,
            fuel_per_bytes_validated: 0,
        });
        let engine = Engine::new(&config);
        let module = Module::new(&engine, wasm).map_err(|e| e.to_string())?;
        let mut store = Store::new(&engine, Vec::new());
        store.set_fuel(u64::MAX / 2).map_err(|e| e.to_string())?;
        let mut linker = Linker::<Vec<(i32, u64)>>::new(&engine);
        let mark = |mut caller: Caller<'_, Vec<(i32, u64)>>, stage: i32| {
            let fuel = caller.get_fuel().unwrap_or(0);
            caller.data_mut().push((stage, fuel));
        };
        linker.func_wrap("contour_profile", "mark", mark).map_err(|e| e.to_string())?;
        // greet makes no host call; a panic handler's `log` would get "nothing pending".
        linker.func_wrap("tdm", "tdm_host_call", |_: i32, _: i32| -> i32 { -4 }).map_err(|e| e.to_string())?;
        linker.func_wrap("tdm", "tdm_host_response", |_: i32, _: i32| -> i32 { -4 }).map_err(|e| e.to_string())?;
        let instance: Instance = linker.instantiate_and_start(&mut store, &module).map_err(|e| e.to_string())?;
        if let Ok(initialize) = instance.get_typed_func::<(), ()>(&store, "_initialize") {
            initialize.call(&mut store, ()).map_err(|e| e.to_string())?;
        }
        let memory = instance.get_memory(&store, "memory").ok_or("no memory export")?;
        let alloc = instance.get_typed_func(&store, "tdm_alloc").map_err(|e| e.to_string())?;
        let free = instance.get_typed_func(&store, "tdm_free").map_err(|e| e.to_string())?;
        let execute = instance.get_typed_func(&store, "tdm_plugin_execute_intent").map_err(|e| e.to_string())?;
        Ok(Self { store, memory, alloc, free, execute })
    }

    fn fuel(&self) -> u64 {
        self.store.get_fuel().unwrap_or(0)
    }

    /// One intent as Contour runs it (alloc, write, execute, read, free both); its fuel per stage.
    fn intent(&mut self, request: &[u8]) -> Result<[u64; 5], String> {
        let mut stages = [0u64; 5];
        let len = i32::try_from(request.len()).map_err(|e| e.to_string())?;
        let before = self.fuel();
        let req = self.alloc.call(&mut self.store, len).map_err(|e| e.to_string())?;
        stages[ALLOCATOR] += before - self.fuel();
        self.memory.write(&mut self.store, req as u32 as usize, request).map_err(|e| e.to_string())?;
        self.store.data_mut().clear();
        let start = self.fuel();
        let resp = self.execute.call(&mut self.store, (req, len)).map_err(|e| e.to_string())? as u32 as usize;
        let end = self.fuel();
        let (mut stage, mut last, mut in_alloc) = (0usize, start, false);
        for &(mark, fuel) in self.store.data() {
            let spent = last - fuel;
            last = fuel;
            stages[if in_alloc { ALLOCATOR } else { stage }] += spent;
            match mark {
                ALLOC_ENTER => in_alloc = true,
                ALLOC_EXIT => in_alloc = false,
                1..=3 => stage = mark as usize,
                other => return Err(format!("unknown mark {other}")),
            }
        }
        stages[if in_alloc { ALLOCATOR } else { stage }] += last - end;
        let mut prefix = [0u8; 4];
        self.memory.read(&self.store, resp, &mut prefix).map_err(|e| e.to_string())?;
        let body = u32::from_le_bytes(prefix) as i32;
        let before = self.fuel();
        self.free.call(&mut self.store, (req, len)).map_err(|e| e.to_string())?;
        self.free.call(&mut self.store, (resp as i32, body + 4)).map_err(|e| e.to_string())?;
        stages[ALLOCATOR] += before - self.fuel();
        Ok(stages)
    }
}

/// One module's figures at every size: Contour's warm fuel and, with a marked build, the stages.
fn measure(wasm: &[u8], marked: Option<&[u8]>) -> Result<serde_json::Value, String> {
    let mut sizes = Vec::new();
    let mut marked = marked.map(Marked::new).transpose()?;
    for size in SIZES {
        let contour_benches::Greet { request, outcome: expected, .. } = contour_benches::greet(size);
        let (fuel, outcome) = contour_fuel(wasm, &request)?;
        if outcome != expected {
            return Err(format!("{size} B: unexpected outcome {}", &outcome[..outcome.len().min(120)]));
        }
        // The same greet written `jsonrpc` first, an order the host does not write (issue 25).
        let reordered = contour_benches::greet_jsonrpc_first(size);
        let (fuel_reordered, outcome) = contour_fuel(wasm, &reordered.request)?;
        if outcome != expected {
            return Err(format!("{size} B, jsonrpc first: unexpected outcome {}", &outcome[..outcome.len().min(120)]));
        }
        let mut entry = serde_json::json!({ "bytes": size, "fuel": fuel, "fuelJsonrpcFirst": fuel_reordered });
        if let Some(marked) = marked.as_mut() {
            marked.intent(&request)?; // warm up, as the Contour figure is the second intent
            let stages = marked.intent(&request)?;
            let stages: serde_json::Map<String, serde_json::Value> =
                STAGES.iter().zip(stages).map(|(name, fuel)| ((*name).to_string(), fuel.into())).collect();
            entry["stages"] = stages.into();
        }
        sizes.push(entry);
    }
    let fuel = |i: usize| sizes[i]["fuel"].as_u64().unwrap_or(0) as f64;
    let per_byte = (fuel(2) - fuel(0)) / (SIZES[2] - SIZES[0]) as f64;
    Ok(serde_json::json!({ "sizes": sizes, "fuel_per_byte": per_byte }))
}

fn plugins_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugins")
}

/// Prints one SDK's rows.
fn print(name: &str, figures: &serde_json::Value) {
    let sizes = figures["sizes"].as_array().cloned().unwrap_or_default();
    for entry in &sizes {
        let stages = &entry["stages"];
        let split: Vec<String> =
            STAGES.iter().map(|s| format!("{:>9}", stages[s].as_u64().map_or("-".into(), |f| f.to_string()))).collect();
        let marked_total: u64 = STAGES.iter().filter_map(|s| stages[s].as_u64()).sum();
        let (bytes, fuel) = (entry["bytes"].as_u64().unwrap_or(0), entry["fuel"].as_u64().unwrap_or(0));
        let reordered = entry["fuelJsonrpcFirst"].as_u64().unwrap_or(0);
        println!("{name:<20} {bytes:>6} {fuel:>10} {reordered:>10} | {} | {marked_total:>9}", split.join(" "));
    }
    println!(
        "{name:<20} fuel per byte of name (128 B -> 64 KiB): {:.2}",
        figures["fuel_per_byte"].as_f64().unwrap_or(0.0)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let header = format!(
        "{:<20} {:>6} {:>10} {:>10} | {} | {:>9}",
        "sdk",
        "bytes",
        "fuel",
        "jsonrpc1st",
        STAGES.iter().map(|s| format!("{s:>9}")).collect::<Vec<_>>().join(" "),
        "marked"
    );
    let read =
        |path: &Path| std::fs::read(path).map_err(|e| format!("{}: {e} (run `make sdk-fuel-modules`)", path.display()));
    let result = if let Some(module) = args.first() {
        let marked = args.get(1).map(|p| read(Path::new(p))).transpose();
        marked.and_then(|marked| {
            let figures = measure(&read(Path::new(module))?, marked.as_deref())?;
            println!("{header}");
            print(module, &figures);
            Ok(())
        })
    } else {
        let mut all = serde_json::Map::new();
        println!("{header}");
        contour_benches::GREET_BUILDS
            .iter()
            .try_for_each(|build| {
                let (name, file) = (build.key, build.file);
                let wasm = read(&plugins_dir().join(file))?;
                let marked = read(&plugins_dir().join("fuel-marks").join(file))?;
                let figures = measure(&wasm, Some(&marked)).map_err(|e| format!("{name}: {e}"))?;
                print(name, &figures);
                all.insert(name.to_string(), figures);
                Ok(())
            })
            .and_then(|()| {
                let path = contour_benches::target_dir().join("sdk_fuel.json");
                let json = serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?;
                std::fs::write(&path, json).map_err(|e| format!("{}: {e}", path.display()))
            })
    };
    if let Err(error) = result {
        eprintln!("sdk_fuel: {error}");
        std::process::exit(1);
    }
}
