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
//! | module | owns |
//! |---|---|
//! | [`policy`] | the limits as data, with the default constraints |
//! | [`reason`] | the `blockedReason` enum, the typed `Failure`, bounded quoting |
//! | [`allowlist`] | every importable function with its exact signature |
//! | [`check`] | export, import-allowlist and memory checks at load |
//! | [`module_limits`] | parse-time limits checked before wasmi parses a module |
//! | [`plugin`] | `Runtime` (engine + linker) and `Plugin` (a checked module) |
//! | [`sandbox`] | launch -> execute, and `run_command` |
//! | [`meter`] | fuel slices, host-work pricing and the one deadline rule |
//! | `guest` | bounds-checked access to guest memory (ABI, WASI and host calls) |
//! | [`abi`] | the request bytes and bounds-checked response framing |
//! | [`wasi`] | the WASI Preview1 shim |
//! | [`host`] | host intents: `tdm_host_call`/`tdm_host_response`, permission check, audit |
//! | [`fs`] | the read-only filesystem trait behind `tdm exec --dir` |
//! | [`env`] | the embedder's clocks, entropy, sleeps and deadline clock |
//! | `input` | the one input boundary: every input a guest observes, counted |
//! | [`trace`] | record a session, replay it, name the first divergence |
//! | [`outcome`] | the outcome JSON and the per-intent report |
//! | [`permission`] | the permissions an operator grants, parsed strictly |
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod abi;
pub mod allowlist;
pub mod check;
pub mod env;
pub mod fs;
mod guest;
pub mod host;
mod input;
pub mod meter;
pub mod module_limits;
pub mod outcome;
pub mod permission;
pub mod plugin;
pub mod policy;
pub mod reason;
pub mod sandbox;
mod state;
pub mod trace;
pub mod wasi;

pub use check::{Inspection, Profile};
pub use env::{Clock, Environment, Slept, VirtualEnvironment};
pub use host::{AuditRecord, CallContext, HostAnswer, HostCall, HostIntents, NoHostIntents, Spent};
pub use outcome::{IntentReport, Outcome, Status};
pub use permission::{Permission, Permissions};
pub use plugin::{Plugin, Runtime};
pub use policy::{Compilation, Policy, PolicyError};
pub use reason::{BlockedReason, Failure};
pub use sandbox::{run_command, CommandExit, CommandReport, LaunchReport, Sandbox};

pub use trace::Record;
pub use wasi::WasiConfig;
