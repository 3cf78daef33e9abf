//! The data a wasmi `Store` carries for one instance: its resource limiter, the run's account
//! (environment, fuel, deadline; `meter`), the WASI state, the guest's memory handle, and the
//! host-call state. Behaviour lives with each part's owner (`meter`, `wasi`, `host`), which
//! reach their part through a view trait this type implements (`Metered`, `WasiView`,
//! `HostView`): none of them names this type.

use crate::host::{HostCalls, HostCtx, HostView};
use crate::meter::{Metered, Run};
use crate::wasi::{Shim, WasiState, WasiView};
use wasmi::Memory;
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
