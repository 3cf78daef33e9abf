//! contour-embedded-floor: the flash floor `make embedded-sizes` measures the demo against.
//! The same boards, profile, heap, printing and bundled plugins as the demo, but plain wasmi
//! with the same features and engine configuration as contour-core's (fuel on, the embedded
//! policy's compilation mode and call depth, validation on `Module::new`) and no Contour: each bundled module (the six
//! cases' and the conformance traces') is instantiated with every import a stub that returns
//! zeros, and driven by one raw call of the TDM ABI (`tdm_alloc`, the request written into
//! memory, `tdm_plugin_execute_intent`). What the demo's flash has above this firmware's is
//! Contour's share: contour-core, its JSON, replay and policy code, the traces, the demo itself.
#![no_std]
#![no_main]

extern crate alloc;

#[path = "../heap.rs"]
mod heap;
#[allow(dead_code)]
#[path = "../plugins.rs"]
mod plugins;

mod bundle {
    #![allow(dead_code)]
    include!(concat!(env!("OUT_DIR"), "/traces.rs"));
}

use alloc::vec::Vec;
use semihosting::println;
use wasmi::{
    CompilationMode, Config, CustomFuelCosts, Engine, ExternType, Func, Linker, Module, Store, StoreLimits,
    StoreLimitsBuilder, Val,
};

/// The request every module gets (what the demo's `echo` case sends).
const REQUEST: &[u8] = br#"{"id":1,"jsonrpc":"2.0","method":"greet","params":{"name":"Ada"}}"#;
/// The embedded policy's fuel and memory limits (contour-core's `Policy::embedded()`; only these
/// two constants come from core, so none of core's code is linked).
const FUEL: u64 = 10_000_000;
const MAX_MEMORY_BYTES: usize = 256 * 1024;
/// `Policy::embedded()`'s call depth (contour-core's `DEFAULT_MAX_CALL_DEPTH`).
const MAX_CALL_DEPTH: usize = contour_core::DEFAULT_MAX_CALL_DEPTH;

#[cfg(target_arch = "arm")]
use cortex_m as _;
#[cfg(target_arch = "arm")]
#[cortex_m_rt::entry]
fn main() -> ! {
    run()
}

#[cfg(target_arch = "riscv32")]
use riscv as _;
#[cfg(target_arch = "riscv32")]
#[riscv_rt::entry]
fn main() -> ! {
    run()
}

fn run() -> ! {
    heap::init();
    let mut config = Config::default();
    config
        .consume_fuel(true)
        .fuel_cost(CustomFuelCosts {
            bytes_copied_per_fuel: 64,
            fuel_per_bytes_translated: 0,
            fuel_per_bytes_validated: 0,
        })
        .compilation_mode(CompilationMode::LazyTranslation)
        .set_max_recursion_depth(MAX_CALL_DEPTH)
        .wasm_multi_memory(false);
    let engine = Engine::new(&config);
    let mut modules: Vec<(&str, &[u8])> =
        [&plugins::ECHO, &plugins::HELLO, &plugins::SPIN, &plugins::GROW, &plugins::FORBIDDEN_IMPORT, &plugins::TRAP]
            .iter()
            .map(|p| (p.name, p.bytes))
            .collect();
    for (name, _trace, module, _digest) in bundle::traces() {
        if !modules.iter().any(|(_, m)| m.as_ptr() == module.as_ptr()) {
            modules.push((name, module));
        }
    }
    let mut ran = 0;
    for (name, bytes) in &modules {
        heap::reset_high_water();
        let result = raw_call(&engine, bytes);
        match result {
            Ok((fuel, len)) => {
                ran += 1;
                println!(
                    "floor module={name} fuel_used={fuel} response_bytes={len} heap_high_water={}",
                    heap::high_water()
                )
            }
            Err(error) => println!("floor module={name} error={error} heap_high_water={}", heap::high_water()),
        }
    }
    println!("floor: {} modules, {ran} answered", modules.len());
    semihosting::process::exit(0)
}

/// Loads `bytes`, instantiates it with stub imports and runs one intent through the raw ABI:
/// the fuel used and the response's length.
fn raw_call(engine: &Engine, bytes: &[u8]) -> Result<(u64, u32), wasmi::Error> {
    let module = Module::new(engine, bytes)?;
    let limits = StoreLimitsBuilder::new().memory_size(MAX_MEMORY_BYTES).build();
    let mut store: Store<StoreLimits> = Store::new(engine, limits);
    store.limiter(|limits| limits);
    store.set_fuel(FUEL)?;
    let mut linker = Linker::<StoreLimits>::new(engine);
    for import in module.imports() {
        if let ExternType::Func(ty) = import.ty() {
            let results: Vec<_> = ty.results().to_vec();
            let func = Func::new(&mut store, ty.clone(), move |_, _, out| {
                for (slot, ty) in out.iter_mut().zip(&results) {
                    *slot = Val::default_for_ty(*ty);
                }
                Ok(())
            });
            linker.define(import.module(), import.name(), func)?;
        }
    }
    let instance = linker.instantiate_and_start(&mut store, &module)?;
    let memory = instance.get_memory(&store, "memory").ok_or_else(|| wasmi::Error::new("no memory"))?;
    let alloc = instance.get_typed_func::<i32, i32>(&store, "tdm_alloc")?;
    let execute = instance.get_typed_func::<(i32, i32), i32>(&store, "tdm_plugin_execute_intent")?;
    let ptr = alloc.call(&mut store, REQUEST.len() as i32)?;
    memory.write(&mut store, ptr as usize, REQUEST)?;
    let response = execute.call(&mut store, (ptr, REQUEST.len() as i32));
    let fuel = FUEL - store.get_fuel().unwrap_or(0);
    let response = response?;
    let mut len = [0u8; 4];
    memory.read(&store, response as usize, &mut len)?;
    Ok((fuel, u32::from_le_bytes(len)))
}
