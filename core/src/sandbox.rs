//! The one path an intent takes: request -> `Sandbox` -> ABI -> wasmi -> `Outcome`. A `Plugin`
//! is a checked module (load); a `Sandbox` owns one live instance of it (launch) and runs
//! intents on it (execute); any host-side failure discards the instance, and the next intent
//! runs in a fresh one. `run_command` runs a WASI command's `_start` the same way.

use crate::abi;
use crate::check::{Inspection, Profile};
use crate::env::Environment;
use crate::host::{self, HostCalls, HostIntents, NoHostIntents};
use crate::outcome::{IntentReport, Outcome};
use crate::permission::Permissions;
use crate::policy::{Compilation, Policy, WASM_PAGE_BYTES};
use crate::reason::{BlockedReason, Failure};
use crate::state::{FuelAccount, HostState, LimitHit, Limits};
use crate::wasi::{self, WasiConfig, WasiState};
use alloc::boxed::Box;
use alloc::format;
use alloc::sync::Arc;
use alloc::vec::Vec;
use serde_json::Value;
use wasmi::errors::ErrorKind;
use wasmi::{
    CompilationMode, Config, CustomFuelCosts, Engine, Linker, Memory, Module, Store, TrapCode, TypedFunc,
    TypedResumableCall, WasmParams, WasmResults,
};

/// An engine and the linker of every host import (WASI and the host intents), built once and
/// shared by every plugin loaded on it: loading a plugin then costs only parsing, checking
/// and compiling its module. The engine settings (compilation mode, call-depth limit) come from
/// the policy it was built for; a plugin loaded on it must ask for the same.
pub struct Runtime {
    engine: Engine,
    linker: Linker<HostState>,
    compilation: Compilation,
    max_call_depth: usize,
}

impl Runtime {
    /// A runtime with the engine settings of `policy`.
    pub fn new(policy: &Policy) -> Result<Self, Failure> {
        usable(policy)?;
        let engine = engine_for(policy);
        let mut linker = Linker::new(&engine);
        wasi::link(&mut linker).and_then(|()| host::link(&mut linker)).map_err(|e| {
            Failure::new(BlockedReason::InvalidModule, format!("Linking the host imports failed: {e}."))
        })?;
        Ok(Self { engine, linker, compilation: policy.compilation, max_call_depth: policy.max_call_depth })
    }

    /// Whether a plugin under `policy` can run on this runtime's engine.
    pub fn fits(&self, policy: &Policy) -> bool {
        policy.compilation == self.compilation && policy.max_call_depth == self.max_call_depth
    }

    fn check_fits(&self, policy: &Policy) -> Result<(), Failure> {
        if self.fits(policy) {
            return Ok(());
        }
        Err(Failure::new(
            BlockedReason::InvalidModule,
            format!(
                "The policy is unusable on this runtime: it asks for {:?} compilation and call depth {}, the \
                 runtime was built for {:?} and {}.",
                policy.compilation, policy.max_call_depth, self.compilation, self.max_call_depth
            ),
        ))
    }
}

/// A module that passed every load-time check, ready to launch any number of times.
pub struct Plugin {
    runtime: Arc<Runtime>,
    module: Module,
    policy: Policy,
    inspection: Inspection,
}

/// Builds the engine configuration a policy implies: fuel on, compilation fuel off (so fuel is
/// deterministic in every compilation mode), the call-depth limit, no multi-memory.
fn engine_for(policy: &Policy) -> Engine {
    let mut config = Config::default();
    config
        .consume_fuel(true)
        .fuel_cost(CustomFuelCosts {
            bytes_copied_per_fuel: 64,
            fuel_per_bytes_translated: 0,
            fuel_per_bytes_validated: 0,
        })
        .compilation_mode(match policy.compilation {
            Compilation::Lazy => CompilationMode::Lazy,
            Compilation::LazyTranslation => CompilationMode::LazyTranslation,
            Compilation::Eager => CompilationMode::Eager,
        })
        .set_max_recursion_depth(policy.max_call_depth)
        .wasm_multi_memory(false);
    Engine::new(&config)
}

impl Plugin {
    /// Parses `bytes` as a plugin (marketplace profile) and runs every load-time check, on a
    /// runtime of its own.
    pub fn load(bytes: &[u8], policy: Policy) -> Result<Self, Failure> {
        Self::load_as(bytes, policy, Profile::Marketplace)
    }

    /// Parses `bytes` for `profile` on a runtime of its own and runs every load-time check;
    /// the first failure found (imports, then exports, then memory) is the error.
    pub fn load_as(bytes: &[u8], policy: Policy, profile: Profile) -> Result<Self, Failure> {
        let runtime = Arc::new(Runtime::new(&policy)?);
        Self::load_on(&runtime, bytes, policy, profile)
    }

    /// Parses `bytes` for `profile` on a shared `runtime` (which must fit `policy`) and runs
    /// every load-time check; the first failure found is the error.
    pub fn load_on(runtime: &Arc<Runtime>, bytes: &[u8], policy: Policy, profile: Profile) -> Result<Self, Failure> {
        usable(&policy)?;
        runtime.check_fits(&policy)?;
        let (module, inspection) = Self::parse(&runtime.engine, bytes, &policy, profile)?;
        if let Err(failure) = inspection.verdict() {
            return Err(failure.clone());
        }
        Ok(Self { runtime: Arc::clone(runtime), module, policy, inspection })
    }

    /// Parses and checks `bytes` without deciding: the full report, including every failure.
    /// Function bodies are fully validated here whatever the compilation mode.
    pub fn inspect(bytes: &[u8], policy: &Policy, profile: Profile) -> Result<Inspection, Failure> {
        usable(policy)?;
        let engine = engine_for(policy);
        let (_, inspection) = Self::parse(&engine, bytes, policy, profile)?;
        Module::validate(&engine, bytes).map_err(|e| invalid_module(&e))?;
        Ok(inspection)
    }

    fn parse(
        engine: &Engine,
        bytes: &[u8],
        policy: &Policy,
        profile: Profile,
    ) -> Result<(Module, Inspection), Failure> {
        policy
            .validate()
            .map_err(|e| Failure::new(BlockedReason::InvalidModule, format!("The policy is unusable: {e}.")))?;
        if bytes.len() > policy.max_module_bytes {
            return Err(Failure::new(
                BlockedReason::ModuleTooLarge,
                format!("It has {} bytes; the limit is {}.", bytes.len(), policy.max_module_bytes),
            ));
        }
        let module = Module::new(engine, bytes).map_err(|e| invalid_module(&e))?;
        let inspection = Inspection::of(&module, policy, profile);
        Ok((module, inspection))
    }

    /// The load-time report.
    pub fn inspection(&self) -> &Inspection {
        &self.inspection
    }

    /// The policy this plugin runs under.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The runtime this plugin was loaded on.
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }
}

/// A policy whose limits cannot be enforced is refused before any module is parsed under it.
fn usable(policy: &Policy) -> Result<(), Failure> {
    policy.validate().map_err(|e| Failure::new(BlockedReason::InvalidModule, format!("The policy is unusable: {e}.")))
}

fn invalid_module(error: &wasmi::Error) -> Failure {
    Failure::new(BlockedReason::InvalidModule, format!("{error}."))
}

/// Fuel and deadline accounting for one run (an intent, a launch, or a command). The budget
/// and what was handed out live in the store (`HostState::fuel`), so host calls can charge a
/// nested sandbox's fuel to the same budget; so does the deadline (`HostState::deadline_remaining`).
struct Meter {
    slice: u64,
}

impl Meter {
    /// Starts a run: a fresh budget, the first slice in the store, the deadline clock read.
    fn start(store: &mut Store<HostState>, policy: &Policy) -> Self {
        let started = store.data_mut().env.deadline_clock_ns();
        let timeout_ns = policy.timeout_ms.saturating_mul(1_000_000);
        let deadline = started.map(|t| (t, timeout_ns));
        let state = store.data_mut();
        state.fuel = FuelAccount { budget: policy.fuel_per_intent, given: 0 };
        state.host.start_intent(deadline);
        let _ = store.set_fuel(0);
        let meter = Self { slice: policy.fuel_slice };
        meter.give(store, policy.fuel_slice);
        meter
    }

    /// Hands out the whole remaining budget at once (for the start function, which wasmi
    /// cannot run in slices).
    fn give_all(&self, store: &mut Store<HostState>) {
        self.give(store, u64::MAX);
    }

    fn give(&self, store: &mut Store<HostState>, amount: u64) {
        let account = &mut store.data_mut().fuel;
        let amount = amount.min(account.budget - account.given);
        account.given += amount;
        let current = store.get_fuel().unwrap_or(0);
        // Fuel metering is always on for a sandbox engine, so this cannot fail.
        let _ = store.set_fuel(current.saturating_add(amount));
    }

    fn used(store: &Store<HostState>) -> u64 {
        store.data().fuel.given.saturating_sub(store.get_fuel().unwrap_or(0))
    }

    fn check_deadline(store: &mut Store<HostState>) -> Result<(), Failure> {
        match store.data_mut().deadline_remaining() {
            Some(Err(failure)) => Err(failure),
            _ => Ok(()),
        }
    }

    /// Called when the store ran out of fuel: checks the deadline, then adds slices until the
    /// next basic block can run, or fails with `fuel_exhausted` when the budget is spent.
    fn refuel(&self, store: &mut Store<HostState>, required: u64) -> Result<(), Failure> {
        Self::check_deadline(store)?;
        loop {
            let available = store.get_fuel().unwrap_or(0);
            if available >= required {
                return Ok(());
            }
            let FuelAccount { budget, given } = store.data().fuel;
            if given >= budget {
                return Err(Failure::new(BlockedReason::FuelExhausted, format!("The budget is {budget} fuel.")));
            }
            self.give(store, self.slice.max(required - available));
        }
    }

    /// Calls `func` in fuel slices, checking the deadline between slices.
    fn call<P: WasmParams, R: WasmResults>(
        &self,
        store: &mut Store<HostState>,
        func: &TypedFunc<P, R>,
        params: P,
    ) -> Result<R, Failure> {
        let mut call = func.call_resumable(&mut *store, params).map_err(|e| failure_of(&e, store))?;
        loop {
            match call {
                TypedResumableCall::Finished(results) => return Ok(results),
                TypedResumableCall::OutOfFuel(pending) => {
                    self.refuel(store, pending.required_fuel())?;
                    call = pending.resume(&mut *store).map_err(|e| failure_of(&e, store))?;
                }
                TypedResumableCall::HostTrap(trap) => return Err(failure_of(trap.host_error(), store)),
            }
        }
    }
}

/// Maps a wasmi error to the host's failure vocabulary. A limit the limiter recorded takes
/// precedence: it names exactly which limit the plugin hit.
fn failure_of(error: &wasmi::Error, store: &Store<HostState>) -> Failure {
    let limits = &store.data().limits;
    match limits.hit {
        Some(LimitHit::Memory { desired }) => {
            return Failure::new(
                BlockedReason::MemoryLimitExceeded,
                format!("Memory would grow to {desired} bytes; the limit is {} bytes.", limits.max_memory_bytes),
            );
        }
        Some(LimitHit::Table { desired }) => {
            return Failure::new(
                BlockedReason::ResourceLimitExceeded,
                format!("A table would grow to {desired} elements; the limit is {}.", limits.max_table_elements),
            );
        }
        None => {}
    }
    if let Some(code) = error.i32_exit_status() {
        let mut failure = Failure::new(BlockedReason::PluginExited, format!("Exit code {code}."));
        failure.exit_code = Some(code);
        return failure;
    }
    if let Some(failure) = error.downcast_ref::<Failure>() {
        return failure.clone();
    }
    if let Some(code) = error.as_trap_code() {
        return match code {
            TrapCode::OutOfFuel => Failure::new(BlockedReason::FuelExhausted, "The budget ran out."),
            TrapCode::StackOverflow => Failure::new(BlockedReason::StackExhausted, "The call stack overflowed."),
            TrapCode::OutOfSystemMemory | TrapCode::GrowthOperationLimited => {
                Failure::new(BlockedReason::ResourceLimitExceeded, "The host could not allocate for this instance.")
            }
            other => Failure::new(BlockedReason::PluginTrap, format!("Trap: {other}.")),
        };
    }
    match error.kind() {
        ErrorKind::Memory(e) => Failure::new(BlockedReason::MemoryLimitExceeded, format!("{e}.")),
        ErrorKind::Table(e) => Failure::new(BlockedReason::ResourceLimitExceeded, format!("{e}.")),
        ErrorKind::Wasm(_) | ErrorKind::Translation(_) | ErrorKind::Read(_) | ErrorKind::UserLimits(_) => {
            Failure::new(BlockedReason::InvalidModule, format!("{error}."))
        }
        ErrorKind::Instantiation(_) | ErrorKind::Linker(_) => {
            Failure::new(BlockedReason::ResourceLimitExceeded, format!("Instantiation failed: {error}."))
        }
        _ => Failure::new(BlockedReason::PluginTrap, format!("{error}.")),
    }
}

/// A live instance and its typed exports.
struct Live {
    store: Store<HostState>,
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    free: TypedFunc<(i32, i32), ()>,
    execute: TypedFunc<(i32, i32), i32>,
}

/// Creates a store for `plugin` with the policy's limits and the given environment.
fn new_store(plugin: &Plugin, env: Box<dyn Environment>, host: HostCalls, wasi: WasiConfig) -> Store<HostState> {
    let policy = &plugin.policy;
    let limits = Limits {
        max_memory_bytes: usize::try_from(policy.max_memory_bytes).unwrap_or(usize::MAX),
        max_table_elements: policy.max_table_elements,
        max_tables: policy.max_tables,
        max_instances: policy.max_instances,
        hit: None,
    };
    let state = HostState {
        limits,
        env,
        wasi: WasiState::new(wasi, policy.max_output_bytes),
        memory: None,
        fuel: FuelAccount::default(),
        host,
    };
    let mut store = Store::new(&plugin.runtime.engine, state);
    store.limiter(|state| &mut state.limits);
    store
}

/// Instantiates the module in `store` (start function under the full budget, which wasmi runs
/// in one piece) and runs `_initialize` or nothing, under the same budget.
fn instantiate(plugin: &Plugin, store: &mut Store<HostState>, meter: &Meter) -> Result<wasmi::Instance, Failure> {
    meter.give_all(store);
    let instance =
        plugin.runtime.linker.instantiate_and_start(&mut *store, &plugin.module).map_err(|e| failure_of(&e, store))?;
    store.data_mut().memory = instance.get_memory(&*store, "memory");
    if let Ok(init) = instance.get_typed_func::<(), ()>(&*store, "_initialize") {
        meter.call(store, &init, ())?;
    }
    Ok(instance)
}

/// A plugin's sandbox: one live instance at a time, relaunched after any host-side failure.
pub struct Sandbox {
    plugin: Arc<Plugin>,
    live: Option<Live>,
    env: Option<Box<dyn Environment>>,
    host: Option<(Box<dyn HostIntents>, Permissions)>,
    next_id: u64,
    launch_fuel: u64,
}

/// Figures of the last launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchReport {
    /// Fuel the start function and `_initialize` used.
    pub fuel_used: u64,
}

impl Sandbox {
    /// A sandbox for `plugin` whose nondeterminism comes from `env`. Nothing runs until the
    /// first `launch` or `execute`.
    pub fn new(plugin: Arc<Plugin>, env: Box<dyn Environment>) -> Self {
        Self {
            plugin,
            live: None,
            env: Some(env),
            host: Some((Box::new(NoHostIntents), Permissions::default())),
            next_id: 1,
            launch_fuel: 0,
        }
    }

    /// Serves the plugin's host calls with `intents`, allowing what `grants` grant. Core
    /// checks every call against `grants` before `intents` sees it.
    pub fn with_host(mut self, intents: Box<dyn HostIntents>, grants: Permissions) -> Self {
        self.discard();
        self.host = Some((intents, grants));
        self
    }

    /// Takes the environment and host back from a store being dropped.
    fn reclaim(&mut self, store: Store<HostState>) {
        let state = store.into_data();
        self.env = Some(state.env);
        self.host = Some((state.host.intents, state.host.grants));
    }

    /// The plugin this sandbox runs.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// Launches a fresh instance, discarding the current one.
    pub fn launch(&mut self) -> Result<LaunchReport, Failure> {
        self.discard();
        let lost = || Failure::new(BlockedReason::PluginTrap, "The sandbox lost its environment.");
        let env = self.env.take().ok_or_else(lost)?;
        let (intents, grants) = self.host.take().ok_or_else(lost)?;
        let host = HostCalls::new(intents, grants, &self.plugin.policy);
        let mut store = new_store(&self.plugin, env, host, WasiConfig::plugin());
        let meter = Meter::start(&mut store, &self.plugin.policy);
        let result = instantiate(&self.plugin, &mut store, &meter).and_then(|instance| {
            let memory = store
                .data()
                .memory
                .ok_or_else(|| Failure::new(BlockedReason::AbiMismatch, "missing export `memory`."))?;
            let typed = |name: &str| Failure::new(BlockedReason::AbiMismatch, format!("export `{name}` is unusable."));
            Ok((
                memory,
                instance.get_typed_func::<i32, i32>(&store, "tdm_alloc").map_err(|_| typed("tdm_alloc"))?,
                instance.get_typed_func::<(i32, i32), ()>(&store, "tdm_free").map_err(|_| typed("tdm_free"))?,
                instance
                    .get_typed_func::<(i32, i32), i32>(&store, "tdm_plugin_execute_intent")
                    .map_err(|_| typed("tdm_plugin_execute_intent"))?,
            ))
        });
        let fuel_used = Meter::used(&store);
        self.launch_fuel = fuel_used;
        match result {
            Ok((memory, alloc, free, execute)) => {
                // Each intent starts from its own budget. What the start function and
                // `_initialize` wrote stays captured and is reported with the next intent.
                let _ = store.set_fuel(0);
                self.live = Some(Live { store, memory, alloc, free, execute });
                Ok(LaunchReport { fuel_used })
            }
            Err(failure) => {
                self.reclaim(store);
                Err(failure)
            }
        }
    }

    /// Drops the live instance (the next intent launches a fresh one).
    pub fn discard(&mut self) {
        if let Some(live) = self.live.take() {
            self.reclaim(live.store);
        }
    }

    /// Whether an instance is live.
    pub fn is_live(&self) -> bool {
        self.live.is_some()
    }

    /// Fuel used by the last launch.
    pub fn launch_fuel(&self) -> u64 {
        self.launch_fuel
    }

    /// Runs intent `method` with `params` (serialized as a JSON-RPC 2.0 request).
    pub fn execute(&mut self, method: &str, params: &Value) -> IntentReport {
        let id = self.next_id;
        self.next_id += 1;
        let request = abi::request(id, method, params);
        self.execute_request(&request)
    }

    /// Runs one intent from raw JSON-RPC request bytes. Launches an instance first if none is
    /// live; discards it after any host-side failure.
    pub fn execute_request(&mut self, request: &[u8]) -> IntentReport {
        if self.live.is_none() {
            if let Err(failure) = self.launch() {
                return failed_report(failure, self.launch_fuel, 0);
            }
        }
        let Some(live) = self.live.as_mut() else {
            return failed_report(Failure::new(BlockedReason::PluginTrap, "No instance."), 0, 0);
        };
        let policy = &self.plugin.policy;
        let meter = Meter::start(&mut live.store, policy);
        let result = run_intent(live, &meter, policy, request);
        let fuel_used = Meter::used(&live.store);
        let peak_memory_bytes = live.memory.size(&live.store).saturating_mul(WASM_PAGE_BYTES);
        let _ = live.store.set_fuel(0);
        let (stdout, stderr, output_dropped) = live.store.data_mut().wasi.output.take_captured().unwrap_or_default();
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(failure) => {
                self.discard();
                Outcome::from_failure(failure)
            }
        };
        IntentReport { outcome, fuel_used, peak_memory_bytes, stdout, stderr, output_dropped }
    }
}

fn failed_report(failure: Failure, fuel_used: u64, peak_memory_bytes: u64) -> IntentReport {
    IntentReport {
        outcome: Outcome::from_failure(failure),
        fuel_used,
        peak_memory_bytes,
        stdout: Vec::new(),
        stderr: Vec::new(),
        output_dropped: 0,
    }
}

/// DESIGN section 3, steps 2-6.
fn run_intent(live: &mut Live, meter: &Meter, policy: &Policy, request: &[u8]) -> Result<Outcome, Failure> {
    let len = u32::try_from(request.len()).ok().filter(|len| *len <= policy.max_request_bytes).ok_or_else(|| {
        Failure::new(
            BlockedReason::RequestTooLarge,
            format!("It has {} bytes; the limit is {}.", request.len(), policy.max_request_bytes),
        )
    })?;
    let req = meter.call(&mut live.store, &live.alloc, len as i32)? as u32;
    let memory_len = live.memory.data(&live.store).len();
    abi::check_request_region(req, len, memory_len)?;
    let start = req as usize;
    live.memory.data_mut(&mut live.store)[start..start + request.len()].copy_from_slice(request);
    let resp = meter.call(&mut live.store, &live.execute, (req as i32, len as i32))? as u32;
    let memory = live.memory.data(&live.store);
    let range = abi::response_range(memory, resp, policy.max_response_bytes)?;
    let body = memory[range.clone()].to_vec();
    meter.call(&mut live.store, &live.free, (req as i32, len as i32))?;
    let framed = (range.end - resp as usize) as i32;
    meter.call(&mut live.store, &live.free, (resp as i32, framed))?;
    Outcome::from_response(body)
}

/// How a command module ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandExit {
    /// `_start` returned (code 0) or it called `proc_exit(code)`.
    Exited(i32),
    /// The host stopped it.
    Failed(Failure),
}

/// What running a command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandReport {
    /// How it ended.
    pub exit: CommandExit,
    /// Fuel used (start function and `_start`).
    pub fuel_used: u64,
}

/// Runs a WASI command module's `_start` (loaded with `Profile::Command`) under the plugin's
/// policy, with the given args, environment, files and output.
pub fn run_command(plugin: &Plugin, env: Box<dyn Environment>, wasi: WasiConfig) -> CommandReport {
    let host = HostCalls::new(Box::new(NoHostIntents), Permissions::default(), &plugin.policy);
    let mut store = new_store(plugin, env, host, wasi);
    let meter = Meter::start(&mut store, &plugin.policy);
    let result = instantiate(plugin, &mut store, &meter).and_then(|instance| {
        let start = instance
            .get_typed_func::<(), ()>(&store, "_start")
            .map_err(|_| Failure::new(BlockedReason::AbiMismatch, "export `_start` is unusable."))?;
        meter.call(&mut store, &start, ())
    });
    let exit = match result {
        Ok(()) => CommandExit::Exited(0),
        Err(failure) if failure.reason == BlockedReason::PluginExited => {
            CommandExit::Exited(failure.exit_code.unwrap_or(0))
        }
        Err(failure) => CommandExit::Failed(failure),
    };
    CommandReport { exit, fuel_used: Meter::used(&store) }
}

impl wasmi::errors::HostError for Failure {}
