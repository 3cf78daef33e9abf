//! The data a wasmi `Store` carries for one instance: its resource limiter, the run's account
//! (environment, fuel, deadline; `meter`), the WASI state, the guest's memory handle, and the
//! host-call state. Behaviour lives with each part's owner (`meter`, `wasi`, `host`), which
//! reach their part through a view trait this type implements (`Metered`, `WasiView`,
//! `HostView`): none of them names this type. A wasmi error of the store becomes a `Failure`
//! here, where the limit a growth hit is known.

use crate::host::{HostCalls, HostCtx, HostView};
use crate::meter::{Metered, Run};
use crate::reason::{BlockedReason, Failure};
use crate::wasi::{Shim, WasiState, WasiView};
use alloc::format;
use wasmi::errors::{ErrorKind, InstantiationError};
use wasmi::{Memory, Store, TrapCode};
use wasmi_core::{LimiterError, ResourceLimiter};

/// Which limit a denied growth hit, so the failure names it exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LimitHit {
    /// Linear memory would have grown to `desired` bytes.
    Memory { desired: usize },
    /// A table would have grown to `desired` elements.
    Table { desired: usize },
}

/// The policy's resource limits as wasmi's limiter. Growth past a limit traps (the intent ends
/// with a failed outcome) and records which limit it was; growth that fails for other reasons
/// (a declared maximum, fuel) keeps wasmi's own semantics.
#[derive(Debug)]
pub(crate) struct Limits {
    pub(crate) max_memory_bytes: usize,
    pub(crate) max_table_elements: usize,
    pub(crate) max_tables: usize,
    pub(crate) max_instances: usize,
    pub(crate) hit: Option<LimitHit>,
}

impl ResourceLimiter for Limits {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> Result<bool, LimiterError> {
        if desired > self.max_memory_bytes {
            self.hit = Some(LimitHit::Memory { desired });
            return Err(LimiterError::ResourceLimiterDeniedAllocation);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> Result<bool, LimiterError> {
        if desired > self.max_table_elements {
            self.hit = Some(LimitHit::Table { desired });
            return Err(LimiterError::ResourceLimiterDeniedAllocation);
        }
        Ok(true)
    }

    fn instances(&self) -> usize {
        self.max_instances
    }

    fn tables(&self) -> usize {
        self.max_tables
    }

    fn memories(&self) -> usize {
        1
    }
}

/// Per-instance host state, owned by the instance's `Store`.
pub(crate) struct HostState {
    /// Memory, table and instance limits, installed as the store's limiter.
    pub(crate) limits: Limits,
    /// The environment, the fuel budget, the deadline and the inputs of the current run.
    pub(crate) run: Run,
    /// Args, environment, fds and output.
    pub(crate) wasi: WasiState,
    /// The guest's exported memory, once instantiated.
    pub(crate) memory: Option<Memory>,
    /// Host intents: the embedder's methods, the grants, the per-run counters.
    pub(crate) host: HostCalls,
}

impl Metered for HostState {
    fn run(&self) -> &Run {
        &self.run
    }

    fn run_mut(&mut self) -> &mut Run {
        &mut self.run
    }

    fn memory(&self) -> Option<Memory> {
        self.memory
    }
}

impl WasiView for HostState {
    fn shim(&mut self) -> Shim<'_> {
        Shim { wasi: &mut self.wasi, run: &mut self.run }
    }
}

impl HostView for HostState {
    fn host_ctx(&mut self) -> HostCtx<'_> {
        HostCtx { host: &mut self.host, run: &mut self.run, output: &mut *self.wasi.output }
    }
}

/// Maps a wasmi error to the host's failure vocabulary. A limit the limiter recorded takes
/// precedence: it names exactly which limit the plugin hit.
pub(crate) fn failure_of(error: &wasmi::Error, store: &Store<HostState>) -> Failure {
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
            TrapCode::StackOverflow => {
                Failure::new(BlockedReason::StackExhausted, "Its calls nested deeper than the call-depth limit allows.")
            }
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
        ErrorKind::Linker(_) => Failure::new(BlockedReason::LinkFailed, format!("{error}.")),
        ErrorKind::Instantiation(e) => match e {
            InstantiationError::TooManyInstances
            | InstantiationError::TooManyTables
            | InstantiationError::TooManyMemories
            | InstantiationError::FailedToInstantiateTable(_) => {
                Failure::new(BlockedReason::ResourceLimitExceeded, format!("Instantiation failed: {error}."))
            }
            InstantiationError::FailedToInstantiateMemory(_) => {
                Failure::new(BlockedReason::MemoryLimitExceeded, format!("Instantiation failed: {error}."))
            }
            // A segment that does not fit its table traps at instantiation (the spec's trap).
            InstantiationError::ElementSegmentDoesNotFit { .. } => {
                Failure::new(BlockedReason::PluginTrap, format!("Instantiation trapped: {error}."))
            }
            _ => Failure::new(BlockedReason::LinkFailed, format!("Instantiation failed: {error}.")),
        },
        _ => Failure::new(BlockedReason::PluginTrap, format!("{error}.")),
    }
}
