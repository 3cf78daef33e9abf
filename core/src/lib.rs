//! # contour-core
//!
//! The `no_std` heart of Contour: it loads an untrusted WebAssembly plugin, checks it against
//! the TDM IPC ABI and the import allowlist, and runs its intents under fuel, memory, stack and
//! size limits, returning an outcome of one documented shape for every way a plugin can fail.
//!
//! ```
//! use contour_core::{Plugin, Policy, Sandbox, VirtualEnvironment};
//! use std::sync::Arc;
//! # let wasm = wat::parse_str(r#"(module (memory (export "memory") 1)
//! #   (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
//! #   (func (export "tdm_free") (param i32 i32))
//! #   (data (i32.const 16) "\21\00\00\00{\"status\":\"completed\",\"output\":1}")
//! #   (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16))"#).unwrap();
//! let plugin = Arc::new(Plugin::load(&wasm, Policy::default()).expect("passes the load checks"));
//! let mut sandbox = Sandbox::new(plugin, Box::new(VirtualEnvironment::new(7)));
//! let report = sandbox.execute("echo", &serde_json::json!({"x": 1}));
//! assert!(report.outcome.is_completed(), "{}", report.outcome.json);
//! ```
//!
//! The public API is the one list of re-exports below (every error type is in [`errors`]);
//! the modules are private. What each owns:
//!
//! | module | owns |
//! |---|---|
//! | `policy` | the limits as data, with the default constraints |
//! | `reason` | the `blockedReason` enum, the typed `Failure`, bounded quoting |
//! | `allowlist` | every importable function with its exact signature, and the linker made from the same table |
//! | `check` | export, import-allowlist and memory checks at load |
//! | `module_limits` | parse-time limits checked before wasmi parses a module |
//! | `plugin` | `Runtime` (engine + linker) and `Plugin` (a checked module) |
//! | `sandbox` | launch -> execute, and `run_command` |
//! | `state` | the data a wasmi store carries, and the views the meter, shim and host calls reach it through |
//! | `meter` | the run's account: fuel slices, host-work pricing and the one deadline rule |
//! | `guest` | bounds-checked access to guest memory (sandbox, WASI and host calls) |
//! | `abi` | the request bytes and bounds-checked response framing |
//! | `nesting` | how deeply JSON text nests, by one scan without recursion |
//! | `wasi` | the WASI Preview1 shim |
//! | `host` | host intents: `tdm_host_call`/`tdm_host_response`, permission check, audit |
//! | `fs` | the host filesystem trait behind `tdm exec --dir` (read-only) and `--dir-rw` |
//! | `env` | the embedder's clocks, entropy, sleeps and deadline clock |
//! | `input` | the one input boundary: every input a guest observes, counted |
//! | `trace` | record a session (a decorator on `Sandbox`), replay it, name the first divergence |
//! | `outcome` | the outcome JSON and the per-intent report |
//! | `permission` | the permissions an operator grants, parsed strictly |
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// Without `wasi-commands` (plugin-only firmware) the command rows' shim is linked nowhere: it is
// left unused on purpose, and the linker drops it.
#![cfg_attr(not(feature = "wasi-commands"), allow(dead_code, unused_imports))]

extern crate alloc;
#[cfg(test)]
extern crate std;

mod abi;
mod allowlist;
mod check;
mod env;
mod fs;
mod guest;
mod host;
mod input;
mod meter;
mod module_limits;
mod nesting;
mod number;
mod outcome;
mod permission;
mod plugin;
mod policy;
mod reason;
mod sandbox;
mod simd;
mod state;
mod trace;
mod wasi;

// Loading: a runtime, a checked plugin, and what the checks found.
pub use check::{
    ExportReport, ImportReport, ImportVerdict, Inspection, IntentsSection, MemoryReport, Profile, INTENTS_SECTION,
    MAX_INTENTS_SECTION_BYTES,
};
pub use module_limits::{MAX_ELEMENT_ITEMS, MAX_FUNCTION_BODY_BYTES, MAX_IMPORTS};
pub use plugin::{Plugin, Runtime};
// The limits, as data.
pub use meter::{fuel_for_bytes, BYTES_PER_FUEL, FS_CALL_FUEL};
pub use policy::{
    Compilation, Policy, PolicyField, PolicyValue, DEFAULT_MAX_CALL_DEPTH, DEFAULT_MAX_MEMORY_BYTES,
    DEFAULT_MAX_MODULE_BYTES, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_REQUEST_DEPTH, DEFAULT_START_FUEL,
    EMBEDDED_MAX_MESSAGE_BYTES, EMBEDDED_MAX_OUTPUT_BYTES, WASM_PAGE_BYTES,
};
// Running: the sandbox, a command, and what came of it.
pub use outcome::{Blocked, IntentReport, Outcome, Status, Told};
pub use reason::{BlockedReason, Failure, MAX_DETAIL_BYTES};
pub use sandbox::{run_command, CommandExit, CommandReport, LaunchReport, Sandbox};
pub use simd::{uses_simd, BUILT_WITH_SIMD, SIMD_UNAVAILABLE};
// The ABI's bytes.
pub use abi::{check_request_region, request as intent_request, request_raw as intent_request_raw, response_range};
// The input boundary the embedder implements: clocks and entropy, host intents, files, stdio.
pub use env::{Clock, Environment, Slept, VirtualEnvironment, VIRTUAL_EPOCH_NS};
pub use fs::{DirEntry, HostFs, NodeId, NodeKind, NodeStat, WriteOptions};
pub use host::{
    read_request as read_host_request, url_host, AuditRecord, CallContext, HostAnswer, HostCall, HostIntents, Method,
    NoHostIntents, Spent, UNREADABLE,
};
pub use permission::{Host, Permission, Permissions};
pub use wasi::{
    Capture, Input as InputRead, InputSource, NoInput, OutputSink, StdioKind, WasiConfig, Written, MAX_OPEN_FDS,
};
// The allowlist, as data.
pub use allowlist::{Signature, ValType, HOST_IMPORTS, HOST_MODULE, PREVIEW1, WASI_MODULE};
// Record and replay.
pub use trace::{
    hex, output_digest, recorded_digest, replay, replay_bytes, replay_stoppable, sha256, Cut, Digest, Divergence,
    DivergenceKind, Header, Input as TraceInput, IntentTrace, PolicyRecord, Record, RecordedAnswer, RecordedFailure,
    ReplayReport, Trace, INPUT_COST, MAGIC as TRACE_MAGIC, MAX_TRACE_BYTES, MAX_TRACE_FOOTPRINT,
};

/// Every error type of the crate: what each fallible function returns says what went wrong as
/// data (a `blockedReason`, a field, a position), never as text alone.
pub mod errors {
    pub use crate::fs::FsError;
    pub use crate::guest::OutOfBounds;
    pub use crate::host::ParamsError;
    pub use crate::permission::{HostError, PermissionError, PermissionErrorKind, UrlHostError};
    pub use crate::policy::PolicyError;
    pub use crate::reason::Failure;
    pub use crate::trace::TraceError;
    pub use crate::wasi::Errno;
}
