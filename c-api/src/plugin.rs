//! The runtime handle (a wasmi engine and the linker of every host import, built once) and the
//! plugin handle (a module that passed every load-time check, `Plugin::load_on`).

use crate::error::{guard, ContourStatus, Error};
use crate::handle::{buffer, bytes, free, get, make, ContourBuffer, Handle, Kind, Out};
use crate::policy::{policy_or_default, ContourPolicy};
use crate::reason::ContourBlockedReason;
use alloc::sync::Arc;
use contour_core::{Failure, Outcome, Plugin, Profile, Runtime};
use core::sync::atomic::AtomicU32;

/// A runtime: the engine and host linker plugins are loaded on (`contour_core::Runtime`).
/// Thread-safe: many threads may load plugins on one runtime.
pub struct ContourRuntime {
    magic: AtomicU32,
    pub(crate) runtime: Arc<Runtime>,
}

impl Handle for ContourRuntime {
    const KIND: Kind = Kind::Runtime;
    fn magic(&self) -> &AtomicU32 {
        &self.magic
    }
}

/// A checked plugin (`contour_core::Plugin`): shared by every sandbox made from it; thread-safe.
pub struct ContourPlugin {
    magic: AtomicU32,
    pub(crate) plugin: Arc<Plugin>,
}

impl Handle for ContourPlugin {
    const KIND: Kind = Kind::Plugin;
    fn magic(&self) -> &AtomicU32 {
        &self.magic
    }
}

/// The error of a refusal: `reason_out` gets the reason, the message is the failure's.
fn refused(failure: &Failure, reason_out: Option<&Out<ContourBlockedReason>>) -> Error {
    if let Some(out) = reason_out {
        out.put(ContourBlockedReason::of(failure.reason));
    }
    Error::new(ContourStatus::Refused, alloc::format!("{}: {}", failure.reason.as_str(), failure.message()))
}

/// Makes a runtime for plugins whose policy fits `policy`'s engine settings (NULL: the default
/// policy) into `*runtime_out`. A policy that cannot be enforced is `CONTOUR_STATUS_REFUSED`
/// with its reason (`invalid_policy`) in `*reason_out` (which may be NULL).
#[no_mangle]
pub extern "C" fn contour_runtime_new(
    policy: *const ContourPolicy,
    runtime_out: *mut *mut ContourRuntime,
    reason_out: *mut ContourBlockedReason,
) -> ContourStatus {
    guard("contour_runtime_new", || {
        let out = Out::new(runtime_out, "runtime_out")?;
        let reason_out = Out::optional(reason_out, "reason_out")?;
        let policy = policy_or_default(policy, "policy")?;
        let runtime = Runtime::new(&policy).map_err(|f| refused(&f, reason_out.as_ref()))?;
        out.put(make(ContourRuntime { magic: AtomicU32::new(0), runtime: Arc::new(runtime) }));
        Ok(())
    })
}

/// Frees a runtime. Plugins loaded on it keep it alive until they are freed too. Freeing it
/// twice is `CONTOUR_STATUS_INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn contour_runtime_free(runtime: *mut ContourRuntime) -> ContourStatus {
    guard("contour_runtime_free", || free(runtime, "runtime"))
}

/// Loads the `len` bytes at `module` (a WebAssembly binary; the bytes are copied, so they may
/// be freed when this returns) as a plugin on `runtime` under `policy` (NULL: the default
/// policy), running every load-time check and none of the module's code, into `*plugin_out`.
///
/// A module that fails a check is `CONTOUR_STATUS_REFUSED`: its `blockedReason` goes into
/// `*reason_out` and, when `refusal_out` is not NULL, the failed outcome JSON (the one
/// documented shape, as an intent's) into a new buffer at `*refusal_out`; the message is in
/// `contour_last_error()`. `reason_out` and `refusal_out` may be NULL.
#[no_mangle]
pub extern "C" fn contour_plugin_load(
    runtime: *const ContourRuntime,
    module: *const u8,
    len: usize,
    policy: *const ContourPolicy,
    plugin_out: *mut *mut ContourPlugin,
    reason_out: *mut ContourBlockedReason,
    refusal_out: *mut *mut ContourBuffer,
) -> ContourStatus {
    guard("contour_plugin_load", || {
        let runtime = get(runtime, "runtime")?;
        let module = bytes(module, len, "module")?;
        let out = Out::new(plugin_out, "plugin_out")?;
        let reason_out = Out::optional(reason_out, "reason_out")?;
        let refusal_out = Out::optional(refusal_out, "refusal_out")?;
        let policy = policy_or_default(policy, "policy")?;
        match Plugin::load_on(&runtime.runtime, module, policy, Profile::Marketplace) {
            Ok(plugin) => {
                out.put(make(ContourPlugin { magic: AtomicU32::new(0), plugin: Arc::new(plugin) }));
                if let Some(reason) = reason_out {
                    reason.put(ContourBlockedReason::None);
                }
                Ok(())
            }
            Err(failure) => {
                if let Some(refusal) = refusal_out {
                    refusal.put(buffer(Outcome::from_failure(failure.clone()).json.into_bytes()));
                }
                Err(refused(&failure, reason_out.as_ref()))
            }
        }
    })
}

/// Frees a plugin. Sandboxes made from it keep it alive until they are freed too. Freeing it
/// twice is `CONTOUR_STATUS_INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn contour_plugin_free(plugin: *mut ContourPlugin) -> ContourStatus {
    guard("contour_plugin_free", || free(plugin, "plugin"))
}
