//! Target 12: differential. A wasm-smith module with no imports that exports the TDM ABI runs
//! one intent through Contour's sandbox and through bare wasmi driven by hand with the same
//! engine settings (fuel on and only instructions charged, the policy's call depth and memory
//! limit) and core's pure ABI functions. Contour only calls the ABI exports, so the intent is
//! the function compared. Oracles: both complete with the same outcome bytes and the same fuel,
//! or both fail, with the same reason when the bare run trapped on fuel, stack or a trap code.
#![no_main]
use contour_core::Outcome;
use contour_core::{BlockedReason, Plugin, Sandbox, VirtualEnvironment};
use contour_fuzz::{smith_module, SmithKind};
use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use wasmi::{CompilationMode, Config, CustomFuelCosts, Engine, Linker, Module, Store, StoreLimitsBuilder, TrapCode};

/// How a run ended: the outcome JSON and fuel, or the reason it failed.
#[derive(Debug, PartialEq)]
enum End {
    Completed { json: String, fuel: u64 },
    Failed(Option<BlockedReason>),
}

/// The intent in bare wasmi: alloc, write, execute, read the framed response, free twice.
fn bare(wasm: &[u8], policy: &contour_core::Policy, request: &[u8]) -> Option<End> {
    let mut config = Config::default();
    config
        .consume_fuel(true)
        .fuel_cost(CustomFuelCosts {
            bytes_copied_per_fuel: contour_core::BYTES_PER_FUEL as u32,
            fuel_per_bytes_translated: 0,
            fuel_per_bytes_validated: 0,
        })
        .compilation_mode(CompilationMode::LazyTranslation)
        .set_max_recursion_depth(policy.max_call_depth)
        .wasm_multi_memory(false);
    let engine = Engine::new(&config);
    let module = Module::new(&engine, wasm).ok()?;
    let limits = StoreLimitsBuilder::new()
        .memory_size(policy.max_memory_bytes as usize)
        .table_elements(policy.max_table_elements)
        .build();
    let mut store = Store::new(&engine, limits);
    store.limiter(|limits| limits);
    store.set_fuel(policy.fuel_per_intent).ok()?;
    let trap = |e: wasmi::Error| {
        End::Failed(match e.as_trap_code() {
            Some(TrapCode::OutOfFuel) => Some(BlockedReason::FuelExhausted),
            Some(TrapCode::StackOverflow) => Some(BlockedReason::StackExhausted),
            Some(TrapCode::OutOfSystemMemory | TrapCode::GrowthOperationLimited) => None,
            Some(_) => Some(BlockedReason::PluginTrap),
            None => None,
        })
    };
    let instance = match Linker::<wasmi::StoreLimits>::new(&engine).instantiate_and_start(&mut store, &module) {
        Ok(instance) => instance,
        Err(e) => return Some(trap(e)),
    };
    let memory = instance.get_memory(&store, "memory")?;
    let alloc = instance.get_typed_func::<i32, i32>(&store, "tdm_alloc").ok()?;
    let free = instance.get_typed_func::<(i32, i32), ()>(&store, "tdm_free").ok()?;
    let execute = instance.get_typed_func::<(i32, i32), i32>(&store, "tdm_plugin_execute_intent").ok()?;
    let len = request.len() as u32;
    let req = match alloc.call(&mut store, len as i32) {
        Ok(req) => req as u32,
        Err(e) => return Some(trap(e)),
    };
    let region = match contour_core::check_request_region(req, len, memory.data(&store).len()) {
        Ok(region) => region,
        Err(f) => return Some(End::Failed(Some(f.reason))),
    };
    memory.data_mut(&mut store)[region].copy_from_slice(request);
    let resp = match execute.call(&mut store, (req as i32, len as i32)) {
        Ok(resp) => resp as u32,
        Err(e) => return Some(trap(e)),
    };
    let range = match contour_core::response_range(memory.data(&store), resp, policy.max_response_bytes) {
        Ok(range) => range,
        Err(f) => return Some(End::Failed(Some(f.reason))),
    };
    let body = memory.data(&store)[range.clone()].to_vec();
    if let Err(e) = free.call(&mut store, (req as i32, len as i32)) {
        return Some(trap(e));
    }
    if let Err(e) = free.call(&mut store, (resp as i32, (range.end - resp as usize) as i32)) {
        return Some(trap(e));
    }
    let fuel = policy.fuel_per_intent - store.get_fuel().ok()?;
    Some(match Outcome::from_response(body) {
        Ok(outcome) => End::Completed { json: outcome.json, fuel },
        Err(f) => End::Failed(Some(f.reason)),
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(wasm) = smith_module(&mut Unstructured::new(data), SmithKind::Closed) else { return };
    let policy = contour_fuzz::small_policy();
    let Ok(plugin) = Plugin::load(&wasm, policy.clone()) else { return };
    let Some(bare) = bare(&wasm, &policy, b"{}") else { return };
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(1)));
    let report = sandbox.execute_request(b"{}");
    let contour = match report.outcome.host_failure() {
        None if report.outcome.is_completed() => {
            End::Completed { json: report.outcome.json.clone(), fuel: report.fuel_used }
        }
        None => End::Completed { json: report.outcome.json.clone(), fuel: report.fuel_used },
        Some(failure) => End::Failed(Some(failure.reason)),
    };
    match (&bare, &contour) {
        (End::Failed(None), End::Failed(_)) => {}
        (End::Failed(Some(reason)), End::Failed(Some(theirs))) => assert_eq!(reason, theirs, "{bare:?} vs {contour:?}"),
        _ => assert_eq!(bare, contour, "bare wasmi and Contour disagree"),
    }
});
