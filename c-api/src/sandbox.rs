//! The sandbox handle: one plugin's instance with its environment and host intents
//! (`contour_core::Sandbox`), executing intents and recording them. A sandbox runs one call at a
//! time: its state is behind a lock taken with `try_lock`, so a callback calling back into the
//! sandbox it runs in (or a second thread) is refused with `CONTOUR_STATUS_BUSY`, never a second
//! mutable borrow.

use crate::callbacks::{host, CEnvironment, ContourEnvironment, ContourHostFn};
use crate::error::{guard, ContourStatus, Error};
use crate::handle::{buffer, bytes, free, free_buffers, get, make, text, ContourBuffer, Handle, Kind, Out};
use crate::plugin::ContourPlugin;
use crate::reason::ContourBlockedReason;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use contour_core::{Blocked, Environment, Permissions, Plugin, Record, Sandbox, VirtualEnvironment};
use core::ffi::c_void;
use core::sync::atomic::AtomicU32;
use serde_json::value::RawValue;

/// A sandbox: a plugin's instance, its environment and host intents (`contour_core::Sandbox`).
/// One call at a time; a handle may move between threads between calls.
pub struct ContourSandbox {
    magic: AtomicU32,
    state: spin::Mutex<State>,
}

impl Handle for ContourSandbox {
    const KIND: Kind = Kind::Sandbox;
    fn magic(&self) -> &AtomicU32 {
        &self.magic
    }
    fn busy(&self) -> bool {
        self.state.is_locked()
    }
}

/// The C callbacks a sandbox was given, kept to rebuild it.
#[derive(Clone, Copy)]
struct Callbacks {
    env: Option<ContourEnvironment>,
    seed: u64,
    host: ContourHostFn,
    host_data: *mut c_void,
}

// SAFETY: the callbacks and user data are only called from the thread running one of the
// sandbox's calls; the header's contract for `contour_sandbox_set_environment` and
// `contour_sandbox_set_host` is that they may be used from whichever thread calls the sandbox.
unsafe impl Send for Callbacks {}

/// What the lock guards.
struct State {
    plugin: Arc<Plugin>,
    sandbox: Sandbox,
    callbacks: Callbacks,
    grants: Permissions,
}

impl State {
    /// A fresh sandbox from the callbacks and grants (the instance is launched on first use).
    fn build(&self) -> Sandbox {
        let env: Box<dyn Environment> = match self.callbacks.env {
            Some(spec) => Box::new(CEnvironment::new(spec)),
            None => Box::new(VirtualEnvironment::new(self.callbacks.seed)),
        };
        let sandbox = Sandbox::new(Arc::clone(&self.plugin), env);
        match host(self.callbacks.host, self.callbacks.host_data) {
            Some(intents) => sandbox.with_host(intents, self.grants.clone()),
            None => sandbox,
        }
    }
}

/// Runs `body` with the sandbox's state locked; `CONTOUR_STATUS_BUSY` when it is running a call.
fn with_state<T>(sandbox: *mut ContourSandbox, body: impl FnOnce(&mut State) -> Result<T, Error>) -> Result<T, Error> {
    let handle = get(sandbox.cast_const(), "sandbox")?;
    let mut state = handle.state.try_lock().ok_or_else(|| {
        Error::new(
            ContourStatus::Busy,
            "the sandbox is running a call (a callback called back into it, or another thread uses it)",
        )
    })?;
    body(&mut state)
}

/// Makes a sandbox for `plugin` into `*sandbox_out`, with core's virtual environment seeded with
/// `seed` (a virtual clock, ChaCha8 entropy: the same inputs on every run) and no host intents.
/// The instance is launched by the first intent.
#[no_mangle]
pub extern "C" fn contour_sandbox_new(
    plugin: *const ContourPlugin,
    seed: u64,
    sandbox_out: *mut *mut ContourSandbox,
) -> ContourStatus {
    guard("contour_sandbox_new", || {
        let plugin = Arc::clone(&get(plugin, "plugin")?.plugin);
        let out = Out::new(sandbox_out, "sandbox_out")?;
        let callbacks = Callbacks { env: None, seed, host: None, host_data: core::ptr::null_mut() };
        let sandbox = Sandbox::new(Arc::clone(&plugin), Box::new(VirtualEnvironment::new(seed)));
        let state = State { plugin, sandbox, callbacks, grants: Permissions::default() };
        out.put(make(ContourSandbox { magic: AtomicU32::new(0), state: spin::Mutex::new(state) }));
        Ok(())
    })
}

/// Frees a sandbox. Freeing it from one of its own callbacks is `CONTOUR_STATUS_BUSY`; freeing
/// it twice is `CONTOUR_STATUS_INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn contour_sandbox_free(sandbox: *mut ContourSandbox) -> ContourStatus {
    guard("contour_sandbox_free", || free(sandbox, "sandbox"))
}

/// Refuses a change while recording (the trace would mix two environments).
fn not_recording(state: &State) -> Result<(), Error> {
    if state.sandbox.is_recording() {
        return Err(Error::new(ContourStatus::InvalidState, "the sandbox is recording; stop the recording first"));
    }
    Ok(())
}

/// Serves the sandbox's clocks, entropy and sleeps from `*environment` (copied; NULL: back to
/// the virtual environment of `contour_sandbox_new`'s seed). The live instance is discarded;
/// the next intent launches a fresh one. `CONTOUR_STATUS_INVALID_STATE` while recording.
#[no_mangle]
pub extern "C" fn contour_sandbox_set_environment(
    sandbox: *mut ContourSandbox,
    environment: *const ContourEnvironment,
) -> ContourStatus {
    guard("contour_sandbox_set_environment", || {
        with_state(sandbox, |state| {
            not_recording(state)?;
            let environment = Out::optional(environment.cast_mut(), "environment")?;
            state.callbacks.env = environment.map(|environment| environment.read());
            state.sandbox = state.build();
            Ok(())
        })
    })
}

/// Serves the plugin's host calls with `callback` (NULL: no host intents; every call is
/// refused with `unknown_host_method`), given `user_data`, under the grants in the `grants_len`
/// bytes at `grants`: a JSON array of permission strings (`["context:read",
/// "network:api.example.com"]`; empty or 0 bytes: none). A grant that does not parse is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`. Core checks every call against the grants before the
/// callback sees it. The live instance is discarded. `CONTOUR_STATUS_INVALID_STATE` while
/// recording.
#[no_mangle]
pub extern "C" fn contour_sandbox_set_host(
    sandbox: *mut ContourSandbox,
    callback: ContourHostFn,
    user_data: *mut c_void,
    grants: *const u8,
    grants_len: usize,
) -> ContourStatus {
    guard("contour_sandbox_set_host", || {
        let grants = text(grants, grants_len, "grants")?;
        let list: Vec<String> = if grants.trim().is_empty() {
            Vec::new()
        } else {
            serde_json::from_str(grants).map_err(|e| {
                Error::new(ContourStatus::InvalidArgument, format!("`grants` is not a JSON array of strings: {e}"))
            })?
        };
        let grants = Permissions::parse_all(list.iter().map(String::as_str))
            .map_err(|e| Error::new(ContourStatus::InvalidArgument, format!("a grant does not parse: {e}")))?;
        with_state(sandbox, |state| {
            not_recording(state)?;
            state.callbacks.host = callback;
            state.callbacks.host_data = user_data;
            state.grants = grants;
            state.sandbox = state.build();
            Ok(())
        })
    })
}

/// What one intent did. The three buffers belong to the caller: free them with
/// `contour_report_free` (or each with `contour_buffer_free`).
#[repr(C)]
#[derive(Debug)]
pub struct ContourReport {
    /// The outcome JSON: the plugin's valid response byte for byte, or the host's failure in
    /// the documented shape (docs/ABI.md section 2).
    pub outcome: *mut ContourBuffer,
    /// Whether the outcome is `"status":"completed"`.
    pub completed: bool,
    /// The host's reason for a failed outcome; `CONTOUR_BLOCKED_REASON_PLUGIN` for a plugin's
    /// own failure, `CONTOUR_BLOCKED_REASON_NONE` when completed.
    pub reason: ContourBlockedReason,
    /// Fuel used, the launch the intent triggered included.
    pub fuel_used: u64,
    /// The part of `fuel_used` the launch took.
    pub launch_fuel: u64,
    /// Peak linear memory in bytes.
    pub peak_memory_bytes: u64,
    /// Host calls made.
    pub host_calls: u32,
    /// Bytes through host calls.
    pub host_bytes: u64,
    /// What the plugin wrote to stdout (up to `max_output_bytes`).
    pub plugin_stdout: *mut ContourBuffer,
    /// What the plugin wrote to stderr (up to `max_output_bytes`).
    pub plugin_stderr: *mut ContourBuffer,
    /// Output bytes dropped past the limit.
    pub output_dropped: u64,
}

/// Runs one intent: `method` (`method_len` bytes of UTF-8, not empty) with `params` (the
/// `params_len` bytes of one JSON value; 0 bytes: `{}`), filling `*report_out`.
/// `CONTOUR_STATUS_OK` means the intent ran, completed or failed: the outcome says which. An
/// empty method or params that are not JSON are `CONTOUR_STATUS_INVALID_ARGUMENT`; a callback
/// of this sandbox calling it is `CONTOUR_STATUS_BUSY`. On an error `*report_out` is not written.
#[no_mangle]
pub extern "C" fn contour_sandbox_execute(
    sandbox: *mut ContourSandbox,
    method: *const u8,
    method_len: usize,
    params: *const u8,
    params_len: usize,
    report_out: *mut ContourReport,
) -> ContourStatus {
    guard("contour_sandbox_execute", || {
        let method = text(method, method_len, "method")?;
        if method.is_empty() {
            return Err(Error::new(ContourStatus::InvalidArgument, "`method` is empty"));
        }
        let params = text(params, params_len, "params")?;
        let params = if params.is_empty() { "{}" } else { params };
        let params: &RawValue = serde_json::from_str(params)
            .map_err(|e| Error::new(ContourStatus::InvalidArgument, format!("`params` is not JSON: {e}")))?;
        let out = Out::new(report_out, "report_out")?;
        let report = with_state(sandbox, |state| Ok(state.sandbox.execute_raw_params(method, params)))?;
        let reason = match &report.outcome.blocked {
            None => ContourBlockedReason::None,
            Some(Blocked::Host(failure)) => ContourBlockedReason::of(failure.reason),
            Some(Blocked::Plugin(_)) => ContourBlockedReason::Plugin,
        };
        out.put(ContourReport {
            completed: report.outcome.is_completed(),
            reason,
            fuel_used: report.fuel_used,
            launch_fuel: report.launch_fuel,
            peak_memory_bytes: report.peak_memory_bytes,
            host_calls: report.host_calls,
            host_bytes: report.host_bytes,
            output_dropped: report.output_dropped,
            outcome: buffer(report.outcome.json.into_bytes()),
            plugin_stdout: buffer(report.stdout),
            plugin_stderr: buffer(report.stderr),
        });
        Ok(())
    })
}

/// Frees the buffers of `*report` and sets them to NULL (a NULL buffer is skipped, so calling it
/// twice is harmless). A buffer that is not live is `CONTOUR_STATUS_INVALID_HANDLE` (the others
/// are still freed).
#[no_mangle]
pub extern "C" fn contour_report_free(report: *mut ContourReport) -> ContourStatus {
    guard("contour_report_free", || {
        let mut report = Out::new(report, "report")?;
        let report = report.existing();
        let fields = [&mut report.outcome, &mut report.plugin_stdout, &mut report.plugin_stderr];
        free_buffers(fields)
    })
}

/// Starts recording the sandbox's session: every input the plugin reads from now on, and every
/// intent. `module` (`module_len` bytes) must be the bytes the plugin was loaded from (the
/// trace names their sha256); `name` (`name_len` bytes of UTF-8) says where they came from.
/// Already recording is `CONTOUR_STATUS_INVALID_STATE`.
#[no_mangle]
pub extern "C" fn contour_sandbox_record_start(
    sandbox: *mut ContourSandbox,
    module: *const u8,
    module_len: usize,
    name: *const u8,
    name_len: usize,
) -> ContourStatus {
    guard("contour_sandbox_record_start", || {
        let module = bytes(module, module_len, "module")?;
        let name = text(name, name_len, "name")?;
        with_state(sandbox, |state| {
            if state.sandbox.is_recording() {
                return Err(Error::new(ContourStatus::InvalidState, "a recording is already running"));
            }
            state.sandbox.start_recording(module, name).map_err(|e| Error::new(ContourStatus::Trace, format!("{e}")))
        })
    })
}

/// Stops recording and puts the encoded trace (docs/ABI.md section 8; `tdm replay` reads it)
/// into a new buffer at `*trace_out`. Not recording is `CONTOUR_STATUS_INVALID_STATE`; a
/// recording past the trace bounds is `CONTOUR_STATUS_TRACE`.
#[no_mangle]
pub extern "C" fn contour_sandbox_record_stop(
    sandbox: *mut ContourSandbox,
    trace_out: *mut *mut ContourBuffer,
) -> ContourStatus {
    guard("contour_sandbox_record_stop", || {
        let out = Out::new(trace_out, "trace_out")?;
        let trace = with_state(sandbox, |state| {
            state
                .sandbox
                .stop_recording()
                .ok_or_else(|| Error::new(ContourStatus::InvalidState, "nothing is being recorded"))
        })?;
        let encoded = trace
            .and_then(|trace| trace.encode())
            .map_err(|e| Error::new(ContourStatus::Trace, format!("the recording failed: {e}")))?;
        out.put(buffer(encoded));
        Ok(())
    })
}
