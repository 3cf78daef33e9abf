//! The policy handle: `Policy::default()` or `Policy::embedded()`, one setter per limit
//! (docs/ABI.md section 6), and a getter by field name. A policy is copied where it is used (a
//! runtime, a plugin), so changing it later changes nothing already made.

use crate::error::{guard, ContourStatus, Error};
use crate::handle::{bytes, free, get, make, Handle, Kind, Out};
use alloc::format;
use contour_core::{Compilation, Policy, PolicyValue};
use core::sync::atomic::AtomicU32;

/// A policy: the limits of a plugin (`contour_core::Policy`).
pub struct ContourPolicy {
    magic: AtomicU32,
    pub(crate) policy: spin::Mutex<Policy>,
}

impl Handle for ContourPolicy {
    const KIND: Kind = Kind::Policy;
    fn magic(&self) -> &AtomicU32 {
        &self.magic
    }
}

/// How functions are compiled (`Policy::compilation`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContourCompilation {
    /// Validate and translate each function on its first call.
    Lazy = 0,
    /// Validate at load, translate on first call (the default).
    LazyTranslation = 1,
    /// Validate and translate everything at load.
    Eager = 2,
}

/// The policy `policy` names (NULL: the default one), copied.
pub(crate) fn policy_or_default(policy: *const ContourPolicy, arg: &str) -> Result<Policy, Error> {
    if policy.is_null() {
        return Ok(Policy::default());
    }
    Ok(get(policy, arg)?.policy.lock().clone())
}

fn new_policy(function: &'static str, policy: Policy, out: *mut *mut ContourPolicy) -> ContourStatus {
    guard(function, || {
        let out = Out::new(out, "policy_out")?;
        out.put(make(ContourPolicy { magic: AtomicU32::new(0), policy: spin::Mutex::new(policy) }));
        Ok(())
    })
}

/// Makes a policy with the default limits (what a new plugin gets) into `*policy_out`; free it
/// with `contour_policy_free`.
#[no_mangle]
pub extern "C" fn contour_policy_new(policy_out: *mut *mut ContourPolicy) -> ContourStatus {
    new_policy("contour_policy_new", Policy::default(), policy_out)
}

/// Makes a policy with core's embedded profile (`Policy::embedded()`: 256 KiB of memory, 10
/// million fuel, small messages, no deadline needed) into `*policy_out`.
#[no_mangle]
pub extern "C" fn contour_policy_new_embedded(policy_out: *mut *mut ContourPolicy) -> ContourStatus {
    new_policy("contour_policy_new_embedded", Policy::embedded(), policy_out)
}

/// Frees a policy (what was made with it keeps its own copy). Freeing it twice is
/// `CONTOUR_STATUS_INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn contour_policy_free(policy: *mut ContourPolicy) -> ContourStatus {
    guard("contour_policy_free", || free(policy, "policy"))
}

/// Checks that every limit is usable: `CONTOUR_STATUS_REFUSED` (`invalid_policy`) names the
/// first that is not (a zero limit, memory above 4 GiB).
#[no_mangle]
pub extern "C" fn contour_policy_validate(policy: *const ContourPolicy) -> ContourStatus {
    guard("contour_policy_validate", || {
        let handle = get(policy, "policy")?;
        let checked = handle.policy.lock().validate();
        checked.map_err(|e| Error::new(ContourStatus::Refused, format!("invalid_policy: {e}")))
    })
}

/// Reads the field named by the `name_len` bytes at `name` (`"fuel_per_intent"`, any field of
/// docs/ABI.md section 6; `compilation` reads 0 lazy, 1 lazy translation, 2 eager) into
/// `*value_out`. An unknown name is `CONTOUR_STATUS_INVALID_ARGUMENT`.
#[no_mangle]
pub extern "C" fn contour_policy_get(
    policy: *const ContourPolicy,
    name: *const u8,
    name_len: usize,
    value_out: *mut u64,
) -> ContourStatus {
    guard("contour_policy_get", || {
        let handle = get(policy, "policy")?;
        let name = bytes(name, name_len, "name")?;
        let out = Out::new(value_out, "value_out")?;
        let field = Policy::FIELDS.iter().find(|field| field.name.as_bytes() == name).ok_or_else(|| {
            Error::new(
                ContourStatus::InvalidArgument,
                format!("no policy field is named {:?}", alloc::string::String::from_utf8_lossy(name)),
            )
        })?;
        let value = match (field.get)(&handle.policy.lock()) {
            PolicyValue::Number(n) => n,
            PolicyValue::Compilation(mode) => match mode {
                Compilation::Lazy => 0,
                Compilation::LazyTranslation => 1,
                Compilation::Eager => 2,
            },
            PolicyValue::Switch(on) => u64::from(on),
        };
        out.put(value);
        Ok(())
    })
}

/// Changes one field of `policy`.
fn set(
    function: &'static str,
    policy: *mut ContourPolicy,
    change: impl FnOnce(&mut Policy) -> Result<(), Error>,
) -> ContourStatus {
    guard(function, || {
        let handle = get(policy.cast_const(), "policy")?;
        let mut policy = handle.policy.lock();
        change(&mut policy)
    })
}

/// `value` as this host's type for the field `name`.
fn fit<T: TryFrom<u64>>(value: u64, name: &str) -> Result<T, Error> {
    T::try_from(value)
        .map_err(|_| Error::new(ContourStatus::InvalidArgument, format!("{value} does not fit `{name}` on this host")))
}

/// Sets how functions are compiled: `mode` is a `contour_compilation` value.
#[no_mangle]
pub extern "C" fn contour_policy_set_compilation(policy: *mut ContourPolicy, mode: i32) -> ContourStatus {
    set("contour_policy_set_compilation", policy, |p| {
        p.compilation = match mode {
            0 => Compilation::Lazy,
            1 => Compilation::LazyTranslation,
            2 => Compilation::Eager,
            _ => {
                return Err(Error::new(ContourStatus::InvalidArgument, format!("{mode} is not a contour_compilation")))
            }
        };
        Ok(())
    })
}

/// Sets `max_memory_bytes`: linear memory limit in bytes (per memory; default 64 MiB). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_memory_bytes(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_memory_bytes", policy, |p| {
        p.max_memory_bytes = value;
        Ok(())
    })
}

/// Sets `fuel_per_intent`: fuel budget per intent, the launch it triggers included (default 2,000,000,000). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_fuel_per_intent(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_fuel_per_intent", policy, |p| {
        p.fuel_per_intent = value;
        Ok(())
    })
}

/// Sets `start_fuel`: the most fuel a start function may use (default 10,000,000; 0 refuses any start function). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_start_fuel(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_start_fuel", policy, |p| {
        p.start_fuel = value;
        Ok(())
    })
}

/// Sets `timeout_ms`: wall-clock deadline per intent in milliseconds, enforced when the environment has a deadline clock (default 5,000). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_timeout_ms(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_timeout_ms", policy, |p| {
        p.timeout_ms = value;
        Ok(())
    })
}

/// Sets `max_call_depth`: maximum Wasm call depth (default 1,000). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_call_depth(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_call_depth", policy, |p| {
        p.max_call_depth = fit(value, "max_call_depth")?;
        Ok(())
    })
}

/// Sets `max_request_bytes`: maximum request size in bytes (default 1 MiB). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_request_bytes(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_request_bytes", policy, |p| {
        p.max_request_bytes = fit(value, "max_request_bytes")?;
        Ok(())
    })
}

/// Sets `max_response_bytes`: maximum response size in bytes (default 4 MiB). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_response_bytes(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_response_bytes", policy, |p| {
        p.max_response_bytes = fit(value, "max_response_bytes")?;
        Ok(())
    })
}

/// Sets `max_output_bytes`: captured bytes kept of each of stdout and stderr (default 64 KiB). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_output_bytes(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_output_bytes", policy, |p| {
        p.max_output_bytes = fit(value, "max_output_bytes")?;
        Ok(())
    })
}

/// Sets `max_module_bytes`: maximum module size in bytes (default 32 MiB). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_module_bytes(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_module_bytes", policy, |p| {
        p.max_module_bytes = fit(value, "max_module_bytes")?;
        Ok(())
    })
}

/// Sets `max_table_elements`: maximum elements of any one table (default 100,000). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_table_elements(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_table_elements", policy, |p| {
        p.max_table_elements = fit(value, "max_table_elements")?;
        Ok(())
    })
}

/// Sets `max_tables`: maximum number of tables (default 8). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_tables(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_tables", policy, |p| {
        p.max_tables = fit(value, "max_tables")?;
        Ok(())
    })
}

/// Sets `max_instances`: maximum instances per store (default 1). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_instances(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_instances", policy, |p| {
        p.max_instances = fit(value, "max_instances")?;
        Ok(())
    })
}

/// Sets `fuel_slice`: fuel between two deadline checks (default 4,000,000). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_fuel_slice(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_fuel_slice", policy, |p| {
        p.fuel_slice = value;
        Ok(())
    })
}

/// Sets `max_host_calls`: host calls allowed per intent (default 1,000). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_host_calls(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_host_calls", policy, |p| {
        p.max_host_calls = fit(value, "max_host_calls")?;
        Ok(())
    })
}

/// Sets `max_host_bytes`: bytes through host calls per intent (default 16 MiB). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_host_bytes(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_host_bytes", policy, |p| {
        p.max_host_bytes = value;
        Ok(())
    })
}

/// Sets `max_host_request_bytes`: maximum size of one host-call request (default 1 MiB). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_host_request_bytes(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_host_request_bytes", policy, |p| {
        p.max_host_request_bytes = fit(value, "max_host_request_bytes")?;
        Ok(())
    })
}

/// Sets `max_request_depth`: deepest nesting of arrays and objects in params (default 128; not recorded in traces). A value that does not fit the field on this host is
/// `CONTOUR_STATUS_INVALID_ARGUMENT`; a zero where one is not allowed is refused when the policy is used.
#[no_mangle]
pub extern "C" fn contour_policy_set_max_request_depth(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_max_request_depth", policy, |p| {
        p.max_request_depth = fit(value, "max_request_depth")?;
        Ok(())
    })
}

/// Sets `simd`: whether a module may use SIMD (`v128`), 1 on (the default) or 0 off; a module
/// that uses it is refused at load when off, or when this library was built without SIMD (the
/// firmware build; not recorded in traces). Any other value is `CONTOUR_STATUS_INVALID_ARGUMENT`.
#[no_mangle]
pub extern "C" fn contour_policy_set_simd(policy: *mut ContourPolicy, value: u64) -> ContourStatus {
    set("contour_policy_set_simd", policy, |p| {
        p.simd = match value {
            0 => false,
            1 => true,
            _ => return Err(Error::new(ContourStatus::InvalidArgument, format!("{value} is not 0 or 1 (`simd`)"))),
        };
        Ok(())
    })
}
