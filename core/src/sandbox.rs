//! The one path an intent takes: request -> `Sandbox` -> ABI -> wasmi -> `Outcome`. A `Sandbox`
//! owns one live instance of a `Plugin` (launch) and runs intents on it (execute); any
//! host-side failure discards the instance, and the next intent runs in a fresh one. The launch
//! an intent triggers (start function, `_initialize`) and the intent share one run: one fuel
//! budget and one deadline. `run_command` runs a WASI command's `_start` the same way.

use crate::abi;
use crate::env::Environment;
use crate::guest::Guest;
use crate::host::{HostCalls, HostIntents, NoHostIntents};
use crate::meter::{Cut, Meter, Run, Stop};
use crate::outcome::{IntentReport, Outcome};
use crate::permission::Permissions;
use crate::plugin::Plugin;
use crate::policy::{Policy, WASM_PAGE_BYTES};
use crate::reason::{BlockedReason, Failure};
use crate::state::{failure_of, HostState, Limits};
use crate::wasi::{WasiConfig, WasiState};
use alloc::boxed::Box;
use alloc::format;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::any::Any;
use serde_json::value::RawValue;
use serde_json::Value;
use wasmi::{Memory, Store, TypedFunc};

/// A live instance, its typed exports, and the meter of its current run.
struct Live {
    store: Store<HostState>,
    meter: Meter,
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
        run: Run::new(env, policy.timeout_ms),
        wasi: WasiState::new(wasi, policy.max_output_bytes),
        memory: None,
        host,
    };
    let mut store = Store::new(&plugin.runtime.engine, state);
    store.limiter(|state| &mut state.limits);
    store
}

/// Starts a run on `store` (see `Meter::start`) with fresh host-call counters and where a replay
/// cuts it.
fn start_run(store: &mut Store<HostState>, policy: &Policy, cut: Option<(Cut, Stop)>) -> Meter {
    let meter = Meter::start(store, policy);
    let state = store.data_mut();
    state.host.start_run();
    state.run.cut = cut;
    meter
}

/// Instantiates the module in `store` (its start function under `Policy::start_fuel`) and runs
/// `_initialize` in fuel slices, all within the run `meter` started.
fn instantiate(plugin: &Plugin, store: &mut Store<HostState>, meter: &Meter) -> Result<wasmi::Instance, Failure> {
    let linker = &plugin.runtime.linker;
    let instance = Meter::run_start(store, plugin.policy.start_fuel, |store| {
        linker.instantiate_and_start(&mut *store, &plugin.module).map_err(|e| failure_of(&e, store))
    })?;
    store.data_mut().memory = instance.get_memory(&*store, "memory");
    if let Ok(init) = instance.get_typed_func::<(), ()>(&*store, "_initialize") {
        meter.call(store, &init, (), failure_of)?;
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
    /// What a launch that failed left: its output and figures, for the intent it ran for.
    failed_launch: FailedLaunch,
    /// Where the next run is cut, and why the recording was (replay only).
    cut: Option<(Cut, Stop)>,
    /// Intents run so far (the index the environment is told at the start of each).
    intents: u64,
    /// What is told of each intent from outside (a recording), if anything.
    log: Option<Box<dyn IntentLog>>,
}

/// What watches a sandbox's intents from outside (a trace recording): told each intent's
/// request bytes and report once it ran. The sandbox knows nothing more of it.
pub(crate) trait IntentLog: Any + Send {
    /// One intent ran with `request` and gave `report`.
    fn intent_done(&mut self, request: &[u8], report: &IntentReport);
}

/// What a launch that failed had done: what it wrote (the start function's and
/// `_initialize`'s output explains the failure), the memory it had and its host calls.
#[derive(Debug, Default)]
struct FailedLaunch {
    peak_memory_bytes: u64,
    host_calls: u32,
    host_bytes: u64,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    output_dropped: u64,
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
            failed_launch: FailedLaunch::default(),
            cut: None,
            intents: 0,
            log: None,
        }
    }

    /// Replaces the environment and the host intents with what `wrap` makes of them (a
    /// recording's decorators), after discarding the live instance so the next intent starts
    /// with a launch; `wrap` also sees the grants. False when the sandbox lost its environment.
    pub(crate) fn wrap_inputs(
        &mut self,
        wrap: impl FnOnce(
            Box<dyn Environment>,
            Box<dyn HostIntents>,
            &Permissions,
        ) -> (Box<dyn Environment>, Box<dyn HostIntents>),
    ) -> bool {
        self.discard();
        let (Some(env), Some((intents, grants))) = (self.env.take(), self.host.take()) else {
            return false;
        };
        let (env, intents) = wrap(env, intents, &grants);
        self.env = Some(env);
        self.host = Some((intents, grants));
        true
    }

    /// Installs what is told of each intent from now on (`None` removes it); returns the one
    /// it replaces.
    pub(crate) fn set_intent_log(&mut self, log: Option<Box<dyn IntentLog>>) -> Option<Box<dyn IntentLog>> {
        core::mem::replace(&mut self.log, log)
    }

    /// What is told of each intent, if anything.
    pub(crate) fn intent_log(&self) -> Option<&dyn IntentLog> {
        self.log.as_deref()
    }

    /// Makes the next runs stop where a recording was cut by its deadline or its caller's
    /// cancel, with the same failure (replay).
    pub(crate) fn set_cut(&mut self, cut: Option<(Cut, Stop)>) {
        self.cut = cut;
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
        self.env = Some(state.run.env);
        self.host = Some((state.host.intents, state.host.grants));
    }

    /// The plugin this sandbox runs.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// Starts a run and launches a fresh instance in it, discarding the current one; the run
    /// stays open (its budget and deadline go on) for whatever the caller runs next.
    fn launch_live(&mut self) -> Result<Live, Failure> {
        self.discard();
        self.failed_launch = FailedLaunch::default();
        let lost = || Failure::new(BlockedReason::HostFault, "The sandbox lost its environment.");
        let env = self.env.take().ok_or_else(lost)?;
        let Some((intents, grants)) = self.host.take() else {
            self.env = Some(env);
            return Err(lost());
        };
        let host = HostCalls::new(intents, grants, &self.plugin.policy);
        let mut store = new_store(&self.plugin, env, host, WasiConfig::plugin());
        let meter = start_run(&mut store, &self.plugin.policy, self.cut);
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
        self.launch_fuel = Meter::used(&store);
        match result {
            Ok((memory, alloc, free, execute)) => Ok(Live { store, meter, memory, alloc, free, execute }),
            Err(failure) => {
                let memory = store.data().memory;
                let peak_memory_bytes = memory.map_or(0, |m| m.size(&store).saturating_mul(WASM_PAGE_BYTES));
                let state = store.data_mut();
                let (stdout, stderr, output_dropped) = state.wasi.take_output();
                self.failed_launch = FailedLaunch {
                    peak_memory_bytes,
                    host_calls: state.host.calls,
                    host_bytes: state.host.bytes,
                    stdout,
                    stderr,
                    output_dropped,
                };
                self.reclaim(store);
                Err(failure)
            }
        }
    }

    /// Launches a fresh instance, discarding the current one, as a run of its own (its own fuel
    /// budget and deadline). What the start function and `_initialize` wrote stays captured
    /// and is reported with the next intent.
    pub fn launch(&mut self) -> Result<LaunchReport, Failure> {
        let live = self.launch_live()?;
        self.live = Some(live);
        Ok(LaunchReport { fuel_used: self.launch_fuel })
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

    /// Runs one intent whose params are JSON text, passed to the plugin byte for byte (numbers
    /// beyond f64 and key order included); otherwise the same as [`Sandbox::execute`].
    pub fn execute_raw_params(&mut self, method: &str, params: &RawValue) -> IntentReport {
        let id = self.next_id;
        self.next_id += 1;
        let request = abi::request_raw(id, method, params);
        self.execute_request(&request)
    }

    /// Runs one intent from raw JSON-RPC request bytes. When no instance is live, the intent
    /// launches one first, within its own budget and deadline; after any host-side failure the
    /// instance is discarded.
    pub fn execute_request(&mut self, request: &[u8]) -> IntentReport {
        let report = self.run_request(request);
        if let Some(log) = &mut self.log {
            log.intent_done(request, &report);
        }
        report
    }

    fn run_request(&mut self, request: &[u8]) -> IntentReport {
        let index = self.intents;
        self.intents += 1;
        match (self.live.as_mut(), self.env.as_mut()) {
            (Some(live), _) => live.store.data_mut().run.env.begin_intent(index),
            (None, Some(env)) => env.begin_intent(index),
            (None, None) => {}
        }
        let policy = &self.plugin.policy;
        if crate::nesting::deeper_than(request, crate::nesting::request_limit(policy.max_request_depth)) {
            // Refused before the plugin (or a launch) sees a byte of it. A live instance is
            // discarded as after any host-side failure.
            let failure = Failure::new(
                BlockedReason::RequestTooDeep,
                format!("Its params nest deeper than {} levels.", policy.max_request_depth),
            );
            self.discard();
            return failed_report(failure, 0);
        }
        let launched = self.live.is_none();
        if launched {
            match self.launch_live() {
                Ok(live) => self.live = Some(live),
                Err(failure) => {
                    let left = core::mem::take(&mut self.failed_launch);
                    return IntentReport {
                        peak_memory_bytes: left.peak_memory_bytes,
                        host_calls: left.host_calls,
                        host_bytes: left.host_bytes,
                        stdout: left.stdout,
                        stderr: left.stderr,
                        output_dropped: left.output_dropped,
                        ..failed_report(failure, self.launch_fuel)
                    };
                }
            }
        }
        let policy = &self.plugin.policy;
        let Some(live) = self.live.as_mut() else {
            return failed_report(Failure::new(BlockedReason::HostFault, "No instance is live."), 0);
        };
        if !launched {
            live.meter = start_run(&mut live.store, policy, self.cut);
        }
        let launch_fuel = if launched { self.launch_fuel } else { 0 };
        let result = run_intent(live, policy, request);
        let fuel_used = Meter::used(&live.store);
        let peak_memory_bytes = live.memory.size(&live.store).saturating_mul(WASM_PAGE_BYTES);
        let _ = live.store.set_fuel(0);
        let state = live.store.data_mut();
        let (host_calls, host_bytes) = (state.host.calls, state.host.bytes);
        let (stdout, stderr, output_dropped) = state.wasi.take_output();
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(failure) => {
                self.discard();
                Outcome::from_failure(failure)
            }
        };
        IntentReport {
            outcome,
            fuel_used,
            launch_fuel,
            peak_memory_bytes,
            host_calls,
            host_bytes,
            stdout,
            stderr,
            output_dropped,
        }
    }
}

fn failed_report(failure: Failure, launch_fuel: u64) -> IntentReport {
    IntentReport::failed(failure, launch_fuel)
}

/// One intent on a live instance: docs/ABI.md section 2, steps 2-6.
fn run_intent(live: &mut Live, policy: &Policy, request: &[u8]) -> Result<Outcome, Failure> {
    let len = u32::try_from(request.len()).ok().filter(|len| *len <= policy.max_request_bytes).ok_or_else(|| {
        Failure::new(
            BlockedReason::RequestTooLarge,
            format!("It has {} bytes; the limit is {}.", request.len(), policy.max_request_bytes),
        )
    })?;
    let meter = live.meter;
    let req = meter.call(&mut live.store, &live.alloc, len as i32, failure_of)? as u32;
    let mut guest = Guest::of_store(live.memory, &mut live.store);
    abi::check_request_region(req, len, guest.len())?;
    guest.set(req, request).map_err(|_| Failure::new(BlockedReason::HostFault, "The request region moved."))?;
    let resp = meter.call(&mut live.store, &live.execute, (req as i32, len as i32), failure_of)? as u32;
    let guest = Guest::of_store(live.memory, &mut live.store);
    let range = abi::response_range(guest.all(), resp, policy.max_response_bytes)?;
    let body = guest
        .slice(range.clone())
        .map_err(|_| Failure::new(BlockedReason::HostFault, "The response region moved."))?
        .to_vec();
    meter.call(&mut live.store, &live.free, (req as i32, len as i32), failure_of)?;
    let framed = (range.end - resp as usize) as i32;
    meter.call(&mut live.store, &live.free, (resp as i32, framed), failure_of)?;
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
    /// Linear memory in bytes when it ended (memory never shrinks, so its peak).
    pub peak_memory_bytes: u64,
}

/// Runs a WASI command module's `_start` (loaded with `Profile::Command`) under the plugin's
/// policy, with the given args, environment, files and output: one run, so the start function,
/// `_start` and every host function share one fuel budget and one deadline.
pub fn run_command(plugin: &Plugin, env: Box<dyn Environment>, wasi: WasiConfig) -> CommandReport {
    let host = HostCalls::new(Box::new(NoHostIntents), Permissions::default(), &plugin.policy);
    let mut store = new_store(plugin, env, host, wasi);
    let meter = start_run(&mut store, &plugin.policy, None);
    let result = instantiate(plugin, &mut store, &meter).and_then(|instance| {
        let start = instance
            .get_typed_func::<(), ()>(&store, "_start")
            .map_err(|_| Failure::new(BlockedReason::AbiMismatch, "export `_start` is unusable."))?;
        meter.call(&mut store, &start, (), failure_of)
    });
    let exit = match result {
        Ok(()) => CommandExit::Exited(0),
        Err(failure) if failure.reason == BlockedReason::PluginExited => {
            CommandExit::Exited(failure.exit_code.unwrap_or(0))
        }
        Err(failure) => CommandExit::Failed(failure),
    };
    let peak_memory_bytes = store.data().memory.map_or(0, |m| m.size(&store).saturating_mul(WASM_PAGE_BYTES));
    CommandReport { exit, fuel_used: Meter::used(&store), peak_memory_bytes }
}

impl wasmi::errors::HostError for Failure {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::VirtualEnvironment;
    use wasmi::{Linker, ValType};

    #[test]
    fn a_linker_that_lacks_an_import_is_a_link_failure_not_a_module_fault() {
        let wasm = wat::parse_str(
            r#"(module (import "wasi_snapshot_preview1" "sched_yield" (func (result i32)))
                 (func (export "_start")))"#,
        )
        .unwrap();
        let plugin = Plugin::load_as(&wasm, Policy::default(), crate::check::Profile::Command).unwrap();
        let host = HostCalls::new(Box::new(NoHostIntents), Permissions::default(), &plugin.policy);
        let mut store = new_store(&plugin, Box::new(VirtualEnvironment::new(0)), host, WasiConfig::plugin());
        // A linker with nothing defined stands for a host build whose imports are broken.
        let empty = Linker::<HostState>::new(&plugin.runtime.engine);
        let Err(error) = empty.instantiate_and_start(&mut store, &plugin.module) else {
            panic!("an empty linker has nothing to link");
        };
        assert_eq!(failure_of(&error, &store).reason, BlockedReason::LinkFailed);
    }

    /// The one-function module importing `module.name` with `params -> results`.
    fn importer(module: &str, name: &str, params: &[ValType], results: &[ValType]) -> Vec<u8> {
        let types = |types: &[ValType]| {
            let names: Vec<&str> = types.iter().map(|t| if *t == ValType::I64 { "i64" } else { "i32" }).collect();
            names.join(" ")
        };
        wat::parse_str(format!(
            r#"(module (import "{module}" "{name}" (func (param {}) (result {}))))"#,
            types(params),
            types(results)
        ))
        .unwrap()
    }

    #[test]
    fn a_command_only_import_loads_only_with_wasi_commands() {
        // A command importing a command-only function loads only when it can be linked.
        let module = wat::parse_str(
            r#"(module (import "wasi_snapshot_preview1" "path_open"
                 (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
               (memory (export "memory") 1) (func (export "_start")))"#,
        )
        .expect("valid text");
        let loaded = Plugin::load_as(&module, Policy::default(), crate::check::Profile::Command);
        assert_eq!(loaded.is_ok(), cfg!(feature = "wasi-commands"), "{:?}", loaded.as_ref().err());
        if let Err(failure) = loaded {
            assert_eq!(failure.reason, crate::BlockedReason::ImportNotAllowed);
        }
    }

    #[test]
    fn every_allowlisted_import_is_linked_with_its_signature() {
        use crate::allowlist::{HOST_IMPORTS, HOST_MODULE, PREVIEW1, WASI_MODULE};
        let command = wat::parse_str(r#"(module (func (export "_start")))"#).unwrap();
        let plugin = Plugin::load_as(&command, Policy::default(), crate::check::Profile::Command).unwrap();
        let engine = &plugin.runtime.engine;
        let linked = |wasm: &[u8]| {
            let module = wasmi::Module::new(engine, wasm).unwrap();
            let host = HostCalls::new(Box::new(NoHostIntents), Permissions::default(), &plugin.policy);
            let mut store = new_store(&plugin, Box::new(VirtualEnvironment::new(0)), host, WasiConfig::plugin());
            plugin.runtime.linker.instantiate_and_start(&mut store, &module).is_ok()
        };
        for (module, table) in [(WASI_MODULE, &PREVIEW1[..]), (HOST_MODULE, &HOST_IMPORTS[..])] {
            for sig in table {
                let exact = importer(module, sig.name, sig.params, sig.results);
                // Without `wasi-commands` the command rows are neither allowlisted nor linked.
                if crate::allowlist::find(module, sig.name).is_none() {
                    assert!(!linked(&exact), "{module}.{} is linked but not allowlisted", sig.name);
                    continue;
                }
                assert!(linked(&exact), "{module}.{} is allowlisted but not linked as {sig:?}", sig.name);
                // One parameter more is another function: the linker refuses it.
                let mut wider = sig.params.to_vec();
                wider.push(ValType::I32);
                assert!(!linked(&importer(module, sig.name, &wider, sig.results)), "{module}.{}", sig.name);
            }
        }
    }

    /// A virtual environment whose deadline clock reads `u64::MAX` from the start: cancelled
    /// before its run began.
    struct CancelledFromTheStart(VirtualEnvironment);

    impl Environment for CancelledFromTheStart {
        fn now_ns(&mut self, clock: crate::env::Clock) -> u64 {
            self.0.now_ns(clock)
        }
        fn resolution_ns(&self, clock: crate::env::Clock) -> u64 {
            self.0.resolution_ns(clock)
        }
        fn fill_random(&mut self, dest: &mut [u8]) {
            self.0.fill_random(dest);
        }
        fn sleep_ns(&mut self, ns: u64, deadline_ns: Option<u64>) -> crate::env::Slept {
            self.0.sleep_ns(ns, deadline_ns)
        }
        fn deadline_clock_ns(&mut self) -> Option<u64> {
            Some(u64::MAX)
        }
    }

    #[test]
    fn a_deadline_clock_at_its_maximum_cancels_even_a_run_that_started_there() {
        let wasm = wat::parse_str(
            r#"(module (memory (export "memory") 1)
                 (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
                 (func (export "tdm_free") (param i32 i32))
                 (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) (loop (br 0)) i32.const 0))"#,
        )
        .unwrap();
        // A slice of 1000 fuel: the loop reaches a deadline check long before the budget ends.
        let policy = Policy { fuel_per_intent: 10_000_000, fuel_slice: 1_000, ..Policy::default() };
        let plugin = Arc::new(Plugin::load(&wasm, policy).unwrap());
        let mut sandbox = Sandbox::new(plugin, Box::new(CancelledFromTheStart(VirtualEnvironment::new(0))));
        let report = sandbox.execute("x", &serde_json::json!({}));
        assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::Cancelled), "{}", report.outcome.json);
        assert!(report.fuel_used < 10_000, "ended at an early check: {}", report.fuel_used);
        let output: Value = serde_json::from_str(&report.outcome.json).unwrap();
        assert_eq!(output["output"]["retryable"], true, "a cancelled intent may be sent again");
    }

    #[test]
    fn a_sandbox_that_lost_its_environment_reports_a_host_fault() {
        let wasm = wat::parse_str(
            r#"(module (memory (export "memory") 1)
                 (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
                 (func (export "tdm_free") (param i32 i32))
                 (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 0))"#,
        )
        .unwrap();
        let plugin = Arc::new(Plugin::load(&wasm, Policy::default()).unwrap());
        let mut sandbox = Sandbox::new(plugin, Box::new(VirtualEnvironment::new(0)));
        sandbox.env = None;
        let report = sandbox.execute("x", &serde_json::json!({}));
        assert_eq!(report.outcome.blocked_reason(), Some(BlockedReason::HostFault), "{}", report.outcome.json);
    }
}
