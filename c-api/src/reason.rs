//! `blockedReason` as a C enum beside its wire string: [`ContourBlockedReason`] holds every value
//! of core's `BlockedReason` (docs/ABI.md section 3), plus `NONE` for a completed outcome and
//! `PLUGIN` for a plugin's own reason (its text is in the outcome JSON).

use crate::error::guard_value;
use contour_core::BlockedReason;
use core::ffi::{c_char, CStr};

/// Why the host blocked an intent or refused a module (`blockedReason`). The values are fixed:
/// new reasons are added at the end.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContourBlockedReason {
    /// No reason: the outcome completed (or the call did not fail for a reason).
    None = 0,
    /// A required export is missing or has the wrong type.
    AbiMismatch = 1,
    /// The module imports something off the allowlist (or with the wrong signature).
    ImportNotAllowed = 2,
    /// The bytes are not a valid WebAssembly module for this engine.
    InvalidModule = 3,
    /// The module is larger than `Policy::max_module_bytes`.
    ModuleTooLarge = 4,
    /// No valid operator approval exists for this plugin.
    NotApproved = 5,
    /// The plugin asked for a capability it was not granted.
    PermissionDenied = 6,
    /// The host refuses the request whatever the plugin is granted (a path leading outside
    /// dist/, a redirect that would carry a secret, a tool call back into its caller).
    Forbidden = 7,
    /// The intent used up its fuel budget.
    FuelExhausted = 8,
    /// The intent outlived its wall-clock deadline.
    DeadlineExceeded = 9,
    /// The intent's caller cancelled it (Ctrl-C, an agent's cancellation) before it finished.
    Cancelled = 10,
    /// Linear memory would exceed `Policy::max_memory_bytes`.
    MemoryLimitExceeded = 11,
    /// Tables, instances or memories would exceed the policy's counts.
    ResourceLimitExceeded = 12,
    /// The call stack exceeded `Policy::max_call_depth` or the value stack limit.
    StackExhausted = 13,
    /// The plugin trapped (unreachable, out-of-bounds access, division by zero, ...).
    PluginTrap = 14,
    /// The plugin called WASI `proc_exit`.
    PluginExited = 15,
    /// The plugin's response broke the ABI (bad pointer, not UTF-8, not JSON, wrong shape).
    InvalidResponse = 16,
    /// The response length exceeds `Policy::max_response_bytes`.
    ResponseTooLarge = 17,
    /// The request exceeds `Policy::max_request_bytes`.
    RequestTooLarge = 18,
    /// The request's params (or a host call's) nest deeper than `Policy::max_request_depth`.
    RequestTooDeep = 19,
    /// The params do not match the JSON Schema the intent declares (checked by a host that
    /// reads declarations, before the plugin runs).
    InvalidParams = 20,
    /// `tdm_alloc` returned 0 or a region outside linear memory.
    AllocationFailed = 21,
    /// A host call named a method the host does not offer.
    UnknownHostMethod = 22,
    /// A host call's params do not fit its method.
    InvalidHostRequest = 23,
    /// The intent made more host calls, or moved more bytes through them, than allowed.
    HostCallLimitExceeded = 24,
    /// A host method failed on the host's side (I/O, network, missing file).
    HostIntentFailed = 25,
    /// The policy cannot be enforced (a zero limit, memory above 4 GiB, or engine settings the
    /// runtime was not built for): nothing was loaded under it.
    InvalidPolicy = 26,
    /// The host failed on its own account (an internal invariant, a lost environment, a
    /// serialization failure), not because of anything the plugin did.
    HostFault = 27,
    /// The host imports could not be linked (a linker definition is missing or mistyped): a
    /// fault of the host's build, not of the module, whose imports were already checked.
    LinkFailed = 28,
    /// A failed outcome whose `blockedReason` is the plugin's own text (not a host value).
    Plugin = 1000,
}

impl ContourBlockedReason {
    /// The C value of a core reason.
    pub(crate) const fn of(reason: BlockedReason) -> Self {
        match reason {
            BlockedReason::AbiMismatch => Self::AbiMismatch,
            BlockedReason::ImportNotAllowed => Self::ImportNotAllowed,
            BlockedReason::InvalidModule => Self::InvalidModule,
            BlockedReason::ModuleTooLarge => Self::ModuleTooLarge,
            BlockedReason::NotApproved => Self::NotApproved,
            BlockedReason::PermissionDenied => Self::PermissionDenied,
            BlockedReason::Forbidden => Self::Forbidden,
            BlockedReason::FuelExhausted => Self::FuelExhausted,
            BlockedReason::DeadlineExceeded => Self::DeadlineExceeded,
            BlockedReason::Cancelled => Self::Cancelled,
            BlockedReason::MemoryLimitExceeded => Self::MemoryLimitExceeded,
            BlockedReason::ResourceLimitExceeded => Self::ResourceLimitExceeded,
            BlockedReason::StackExhausted => Self::StackExhausted,
            BlockedReason::PluginTrap => Self::PluginTrap,
            BlockedReason::PluginExited => Self::PluginExited,
            BlockedReason::InvalidResponse => Self::InvalidResponse,
            BlockedReason::ResponseTooLarge => Self::ResponseTooLarge,
            BlockedReason::RequestTooLarge => Self::RequestTooLarge,
            BlockedReason::RequestTooDeep => Self::RequestTooDeep,
            BlockedReason::InvalidParams => Self::InvalidParams,
            BlockedReason::AllocationFailed => Self::AllocationFailed,
            BlockedReason::UnknownHostMethod => Self::UnknownHostMethod,
            BlockedReason::InvalidHostRequest => Self::InvalidHostRequest,
            BlockedReason::HostCallLimitExceeded => Self::HostCallLimitExceeded,
            BlockedReason::HostIntentFailed => Self::HostIntentFailed,
            BlockedReason::InvalidPolicy => Self::InvalidPolicy,
            BlockedReason::HostFault => Self::HostFault,
            BlockedReason::LinkFailed => Self::LinkFailed,
        }
    }

    /// The core reason of a C value (`None` for `NONE` and `PLUGIN`).
    pub(crate) const fn core(self) -> Option<BlockedReason> {
        match self {
            Self::AbiMismatch => Some(BlockedReason::AbiMismatch),
            Self::ImportNotAllowed => Some(BlockedReason::ImportNotAllowed),
            Self::InvalidModule => Some(BlockedReason::InvalidModule),
            Self::ModuleTooLarge => Some(BlockedReason::ModuleTooLarge),
            Self::NotApproved => Some(BlockedReason::NotApproved),
            Self::PermissionDenied => Some(BlockedReason::PermissionDenied),
            Self::Forbidden => Some(BlockedReason::Forbidden),
            Self::FuelExhausted => Some(BlockedReason::FuelExhausted),
            Self::DeadlineExceeded => Some(BlockedReason::DeadlineExceeded),
            Self::Cancelled => Some(BlockedReason::Cancelled),
            Self::MemoryLimitExceeded => Some(BlockedReason::MemoryLimitExceeded),
            Self::ResourceLimitExceeded => Some(BlockedReason::ResourceLimitExceeded),
            Self::StackExhausted => Some(BlockedReason::StackExhausted),
            Self::PluginTrap => Some(BlockedReason::PluginTrap),
            Self::PluginExited => Some(BlockedReason::PluginExited),
            Self::InvalidResponse => Some(BlockedReason::InvalidResponse),
            Self::ResponseTooLarge => Some(BlockedReason::ResponseTooLarge),
            Self::RequestTooLarge => Some(BlockedReason::RequestTooLarge),
            Self::RequestTooDeep => Some(BlockedReason::RequestTooDeep),
            Self::InvalidParams => Some(BlockedReason::InvalidParams),
            Self::AllocationFailed => Some(BlockedReason::AllocationFailed),
            Self::UnknownHostMethod => Some(BlockedReason::UnknownHostMethod),
            Self::InvalidHostRequest => Some(BlockedReason::InvalidHostRequest),
            Self::HostCallLimitExceeded => Some(BlockedReason::HostCallLimitExceeded),
            Self::HostIntentFailed => Some(BlockedReason::HostIntentFailed),
            Self::InvalidPolicy => Some(BlockedReason::InvalidPolicy),
            Self::HostFault => Some(BlockedReason::HostFault),
            Self::LinkFailed => Some(BlockedReason::LinkFailed),
            Self::None | Self::Plugin => None,
        }
    }

    /// The C value numbered `value`, if there is one.
    pub(crate) fn from_value(value: i32) -> Option<Self> {
        Self::ALL.iter().copied().find(|reason| *reason as i32 == value)
    }

    /// Every value.
    pub(crate) const ALL: [ContourBlockedReason; 30] = [
        Self::None,
        Self::AbiMismatch,
        Self::ImportNotAllowed,
        Self::InvalidModule,
        Self::ModuleTooLarge,
        Self::NotApproved,
        Self::PermissionDenied,
        Self::Forbidden,
        Self::FuelExhausted,
        Self::DeadlineExceeded,
        Self::Cancelled,
        Self::MemoryLimitExceeded,
        Self::ResourceLimitExceeded,
        Self::StackExhausted,
        Self::PluginTrap,
        Self::PluginExited,
        Self::InvalidResponse,
        Self::ResponseTooLarge,
        Self::RequestTooLarge,
        Self::RequestTooDeep,
        Self::InvalidParams,
        Self::AllocationFailed,
        Self::UnknownHostMethod,
        Self::InvalidHostRequest,
        Self::HostCallLimitExceeded,
        Self::HostIntentFailed,
        Self::InvalidPolicy,
        Self::HostFault,
        Self::LinkFailed,
        Self::Plugin,
    ];

    /// The wire name, NUL-terminated.
    const fn name(self) -> &'static CStr {
        match self {
            Self::None => c"",
            Self::AbiMismatch => c"abi_mismatch",
            Self::ImportNotAllowed => c"import_not_allowed",
            Self::InvalidModule => c"invalid_module",
            Self::ModuleTooLarge => c"module_too_large",
            Self::NotApproved => c"not_approved",
            Self::PermissionDenied => c"permission_denied",
            Self::Forbidden => c"forbidden",
            Self::FuelExhausted => c"fuel_exhausted",
            Self::DeadlineExceeded => c"deadline_exceeded",
            Self::Cancelled => c"cancelled",
            Self::MemoryLimitExceeded => c"memory_limit_exceeded",
            Self::ResourceLimitExceeded => c"resource_limit_exceeded",
            Self::StackExhausted => c"stack_exhausted",
            Self::PluginTrap => c"plugin_trap",
            Self::PluginExited => c"plugin_exited",
            Self::InvalidResponse => c"invalid_response",
            Self::ResponseTooLarge => c"response_too_large",
            Self::RequestTooLarge => c"request_too_large",
            Self::RequestTooDeep => c"request_too_deep",
            Self::InvalidParams => c"invalid_params",
            Self::AllocationFailed => c"allocation_failed",
            Self::UnknownHostMethod => c"unknown_host_method",
            Self::InvalidHostRequest => c"invalid_host_request",
            Self::HostCallLimitExceeded => c"host_call_limit_exceeded",
            Self::HostIntentFailed => c"host_intent_failed",
            Self::InvalidPolicy => c"invalid_policy",
            Self::HostFault => c"host_fault",
            Self::LinkFailed => c"link_failed",
            Self::Plugin => c"plugin",
        }
    }
}

/// The `blockedReason` string of `reason` (a `contour_blocked_reason` value), NUL-terminated
/// and static: `"fuel_exhausted"` for `CONTOUR_BLOCKED_REASON_FUEL_EXHAUSTED`, `""` for
/// `CONTOUR_BLOCKED_REASON_NONE`, `"plugin"` for `CONTOUR_BLOCKED_REASON_PLUGIN` (the plugin's
/// own text is in the outcome JSON). NULL for a value that is none of them, with the reason in
/// `contour_last_error()`.
#[no_mangle]
pub extern "C" fn contour_blocked_reason_str(reason: i32) -> *const c_char {
    guard_value("contour_blocked_reason_str", core::ptr::null(), || {
        ContourBlockedReason::from_value(reason).map(|r| r.name().as_ptr()).ok_or_else(|| {
            crate::error::Error::new(
                crate::error::ContourStatus::InvalidArgument,
                alloc::format!("{reason} is not a contour_blocked_reason"),
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_reason_has_its_value_and_wire_name() {
        assert_eq!(BlockedReason::ALL.len() + 2, ContourBlockedReason::ALL.len());
        for reason in BlockedReason::ALL {
            let c = ContourBlockedReason::of(reason);
            assert_eq!(c.core(), Some(reason));
            assert_eq!(c.name().to_str().unwrap(), reason.as_str());
        }
    }
}
