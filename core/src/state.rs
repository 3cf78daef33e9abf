//! The data a wasmi `Store` carries for one instance: its limits, the embedder's environment,
//! the WASI state and the guest's memory handle.

use crate::env::Environment;
use crate::wasi::WasiState;
use alloc::boxed::Box;
use wasmi::{Memory, StoreLimits};

/// Per-instance host state, owned by the instance's `Store`.
pub struct HostState {
    /// Memory, table and instance limits, installed as the store's limiter.
    pub(crate) limits: StoreLimits,
    /// Every nondeterministic input.
    pub(crate) env: Box<dyn Environment>,
    /// Args, environment, fds and output.
    pub(crate) wasi: WasiState,
    /// The guest's exported memory, once instantiated.
    pub(crate) memory: Option<Memory>,
    /// The policy's memory limit in bytes, for reporting which limit a failed growth hit.
    pub(crate) memory_limit: u64,
}
