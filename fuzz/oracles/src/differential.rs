//! Target 12, differential: one intent of a module with no imports that exports the TDM ABI,
//! through Contour's sandbox and through bare wasmi driven by hand with the same engine settings
//! (fuel on and only instructions charged, the policy's call depth, memory and table limits) and
//! core's pure ABI functions. Contour only calls the ABI exports, so the intent is the function
//! compared. Oracle: both complete with the same outcome bytes and the same fuel, or both fail,
//! with the same reason when the bare run trapped on fuel, stack or a trap code.
//!
//! The input is wasm-smith bytes ([`SmithKind::Closed`]), or a literal module when it starts
//! with the binary magic `\0asm` (how a finding whose generator input was lost is kept as a
//! regression): taken only when it has no imports and no start function, the two things the
//! comparison leaves out.

use crate::{small_policy, smith_module, SmithKind};

use contour_core::Outcome;
use contour_core::{BlockedReason, Plugin, Policy, Sandbox, VirtualEnvironment};
use std::sync::Arc;
use wasmi::{CompilationMode, Config, CustomFuelCosts, Engine, Linker, Module, Store, StoreLimitsBuilder, TrapCode};

/// How a run ended: the outcome JSON and fuel, or the reason it failed (`None`: a failure bare
/// wasmi cannot name, such as a refused growth, which any Contour failure matches).
#[derive(Debug, PartialEq)]
pub enum End {
    /// The intent answered an outcome Contour accepts.
    Completed {
        /// The outcome JSON.
        json: String,
        /// Fuel used.
        fuel: u64,
    },
    /// The intent failed.
    Failed(Option<BlockedReason>),
}

/// The intent in bare wasmi: alloc, write, execute, read the framed response, free twice.
/// `None` when the module does not run there at all (it does not compile or lacks an export).
pub fn bare(wasm: &[u8], policy: &Policy, request: &[u8]) -> Option<End> {
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

/// The intent through Contour's sandbox.
pub fn contour(plugin: Plugin, request: &[u8]) -> End {
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(1)));
    let report = sandbox.execute_request(request);
    match report.outcome.host_failure() {
        None => End::Completed { json: report.outcome.json.clone(), fuel: report.fuel_used },
        Some(failure) => End::Failed(Some(failure.reason)),
    }
}

/// The oracle: both ends agree (a failure bare wasmi cannot name matches any Contour failure).
pub fn assert_agree(bare: &End, contour: &End) {
    match (bare, contour) {
        (End::Failed(None), End::Failed(_)) => {}
        (End::Failed(Some(reason)), End::Failed(Some(theirs))) => assert_eq!(reason, theirs, "{bare:?} vs {contour:?}"),
        _ => assert_eq!(bare, contour, "bare wasmi and Contour disagree"),
    }
}

/// Whether `wasm` may be compared as it is: no imports (bare wasmi links none) and no start
/// function (Contour runs it under its own `start_fuel` slice, which bare wasmi has no notion of).
pub fn is_closed(wasm: &[u8]) -> bool {
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload {
            Ok(wasmparser::Payload::ImportSection(imports)) if imports.count() > 0 => return false,
            Ok(wasmparser::Payload::StartSection { .. }) | Err(_) => return false,
            Ok(_) => {}
        }
    }
    true
}

/// The target: the module of `data` (generated, or literal), one intent `{}` on both ends.
pub fn differential(data: &[u8]) {
    let wasm = if data.starts_with(b"\0asm") {
        if !is_closed(data) {
            return;
        }
        data.to_vec()
    } else {
        let Ok(wasm) = smith_module(&mut arbitrary::Unstructured::new(data), SmithKind::Closed) else { return };
        wasm
    };
    let policy = small_policy();
    let Ok(plugin) = Plugin::load(&wasm, policy.clone()) else { return };
    let Some(bare) = bare(&wasm, &policy, b"{}") else { return };
    assert_agree(&bare, &contour(plugin, b"{}"));
}
