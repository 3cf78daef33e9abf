//! The data a wasmi `Store` carries for one instance: its resource limiter, the embedder's
//! environment, the WASI state, the guest's memory handle, the run's fuel account and deadline,
//! and the host-call state. Behaviour lives with each part's owner (`meter`, `wasi`, `host`).

use crate::env::Environment;
use crate::host::HostCalls;
use crate::wasi::WasiState;
use alloc::boxed::Box;
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

/// The fuel budget of the current run and how much of it was handed to the store so far (fuel
/// used = given - fuel left in the store). While a host function runs, `host_available` is what
/// its work may still be charged and `host_charged` what it was charged so far (see `meter`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FuelAccount {
    pub(crate) budget: u64,
    pub(crate) given: u64,
    pub(crate) host_available: u64,
    pub(crate) host_charged: u64,
}

/// Where a replayed run must be cut: the recording was cut by its deadline once it had used
/// `fuel` and read `inputs` inputs, so the replay is cut at the first deadline check where both
/// are reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cut {
    /// Fuel the run had used when it was cut.
    pub fuel: u64,
    /// Inputs the run had read when it was cut.
    pub inputs: u64,
}

/// The run's wall-clock deadline on the environment's deadline clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline {
    pub(crate) started_ns: u64,
    pub(crate) timeout_ns: u64,
}

/// Per-instance host state, owned by the instance's `Store`.
pub struct HostState {
    /// Memory, table and instance limits, installed as the store's limiter.
    pub(crate) limits: Limits,
    /// Every nondeterministic input, and the deadline clock.
    pub(crate) env: Box<dyn Environment>,
    /// Args, environment, fds and output.
    pub(crate) wasi: WasiState,
    /// The guest's exported memory, once instantiated.
    pub(crate) memory: Option<Memory>,
    /// The current run's fuel budget.
    pub(crate) fuel: FuelAccount,
    /// The current run's deadline, when the host has a wall clock.
    pub(crate) deadline: Option<Deadline>,
    /// Where a replayed run is cut (see `Cut`), besides the deadline.
    pub(crate) cut: Option<Cut>,
    /// Inputs read in the current run (see `input`).
    pub(crate) inputs: u64,
    /// The current run's deadline in milliseconds, as the policy set it.
    pub(crate) timeout_ms: u64,
    /// Host intents: the embedder's methods, the grants, the per-run counters.
    pub(crate) host: HostCalls,
}
