//! The host's failure vocabulary: every way Contour blocks an intent, as one enum, and the typed
//! error (`Failure`) that carries a reason plus the specifics of one occurrence.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// Why the host ended an intent (or refused a module). Each value has a fixed message, a recovery
/// hint and a `retryable` flag; the wire name is its `blockedReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockedReason {
    /// A required export is missing or has the wrong type.
    AbiMismatch,
    /// The module imports something off the allowlist (or with the wrong signature).
    ImportNotAllowed,
    /// The bytes are not a valid WebAssembly module for this engine.
    InvalidModule,
    /// The module is larger than `Policy::max_module_bytes`.
    ModuleTooLarge,
    /// No valid operator approval exists for this plugin.
    NotApproved,
    /// The plugin asked for a capability it was not granted.
    PermissionDenied,
    /// The intent used up its fuel budget.
    FuelExhausted,
    /// The intent outlived its wall-clock deadline.
    DeadlineExceeded,
    /// Linear memory would exceed `Policy::max_memory_bytes`.
    MemoryLimitExceeded,
    /// Tables, instances or memories would exceed the policy's counts.
    ResourceLimitExceeded,
    /// The call stack exceeded `Policy::max_call_depth` or the value stack limit.
    StackExhausted,
    /// The plugin trapped (unreachable, out-of-bounds access, division by zero, ...).
    PluginTrap,
    /// The plugin called WASI `proc_exit`.
    PluginExited,
    /// The plugin's response broke the ABI (bad pointer, not UTF-8, not JSON, wrong shape).
    InvalidResponse,
    /// The response length exceeds `Policy::max_response_bytes`.
    ResponseTooLarge,
    /// The request exceeds `Policy::max_request_bytes`.
    RequestTooLarge,
    /// `tdm_alloc` returned 0 or a region outside linear memory.
    AllocationFailed,
    /// A host call named a method the host does not offer.
    UnknownHostMethod,
    /// A host call's params do not fit its method.
    InvalidHostRequest,
    /// The intent made more host calls, or moved more bytes through them, than allowed.
    HostCallLimitExceeded,
    /// A host method failed on the host's side (I/O, network, missing file).
    HostIntentFailed,
}

impl BlockedReason {
    /// Every reason, in documentation order.
    pub const ALL: [BlockedReason; 21] = [
        Self::AbiMismatch,
        Self::ImportNotAllowed,
        Self::InvalidModule,
        Self::ModuleTooLarge,
        Self::NotApproved,
        Self::PermissionDenied,
        Self::FuelExhausted,
        Self::DeadlineExceeded,
        Self::MemoryLimitExceeded,
        Self::ResourceLimitExceeded,
        Self::StackExhausted,
        Self::PluginTrap,
        Self::PluginExited,
        Self::InvalidResponse,
        Self::ResponseTooLarge,
        Self::RequestTooLarge,
        Self::AllocationFailed,
        Self::UnknownHostMethod,
        Self::InvalidHostRequest,
        Self::HostCallLimitExceeded,
        Self::HostIntentFailed,
    ];

    /// The wire name, as it appears in `blockedReason`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::AbiMismatch => "abi_mismatch",
            Self::ImportNotAllowed => "import_not_allowed",
            Self::InvalidModule => "invalid_module",
            Self::ModuleTooLarge => "module_too_large",
            Self::NotApproved => "not_approved",
            Self::PermissionDenied => "permission_denied",
            Self::FuelExhausted => "fuel_exhausted",
            Self::DeadlineExceeded => "deadline_exceeded",
            Self::MemoryLimitExceeded => "memory_limit_exceeded",
            Self::ResourceLimitExceeded => "resource_limit_exceeded",
            Self::StackExhausted => "stack_exhausted",
            Self::PluginTrap => "plugin_trap",
            Self::PluginExited => "plugin_exited",
            Self::InvalidResponse => "invalid_response",
            Self::ResponseTooLarge => "response_too_large",
            Self::RequestTooLarge => "request_too_large",
            Self::AllocationFailed => "allocation_failed",
            Self::UnknownHostMethod => "unknown_host_method",
            Self::InvalidHostRequest => "invalid_host_request",
            Self::HostCallLimitExceeded => "host_call_limit_exceeded",
            Self::HostIntentFailed => "host_intent_failed",
        }
    }

    /// The fixed, human-readable message.
    pub const fn message(self) -> &'static str {
        match self {
            Self::AbiMismatch => "The module does not implement the TDM IPC ABI.",
            Self::ImportNotAllowed => "The module imports host functions that are not allowed.",
            Self::InvalidModule => "The module is not valid WebAssembly.",
            Self::ModuleTooLarge => "The module is larger than the policy allows.",
            Self::NotApproved => "The plugin has no valid operator approval.",
            Self::PermissionDenied => "The plugin was not granted the permission it needs.",
            Self::FuelExhausted => "The intent used up its fuel budget.",
            Self::DeadlineExceeded => "The intent ran past its wall-clock deadline.",
            Self::MemoryLimitExceeded => "The plugin exceeded its linear memory limit.",
            Self::ResourceLimitExceeded => "The plugin exceeded its table or instance limits.",
            Self::StackExhausted => "The plugin exhausted its call stack.",
            Self::PluginTrap => "The plugin trapped.",
            Self::PluginExited => "The plugin exited instead of answering.",
            Self::InvalidResponse => "The plugin's response breaks the TDM IPC ABI.",
            Self::ResponseTooLarge => "The plugin's response is larger than the policy allows.",
            Self::RequestTooLarge => "The request is larger than the policy allows.",
            Self::AllocationFailed => "The plugin could not allocate room for the request.",
            Self::UnknownHostMethod => "The host does not offer that method.",
            Self::InvalidHostRequest => "The host call's params do not fit its method.",
            Self::HostCallLimitExceeded => "The intent exceeded its host-call limits.",
            Self::HostIntentFailed => "The host could not complete the call.",
        }
    }

    /// What an operator or caller can do about it.
    pub const fn recovery_hint(self) -> &'static str {
        match self {
            Self::AbiMismatch => "Rebuild the plugin against the TDM plugin SDK; see docs/ABI.md.",
            Self::ImportNotAllowed => {
                "Remove the listed imports; plugins may import only the allowlisted WASI and tdm functions."
            }
            Self::InvalidModule => "Rebuild the plugin for wasm32 and check the file is not truncated.",
            Self::ModuleTooLarge => "Shrink the module (release build, LTO, strip) or raise the policy limit.",
            Self::NotApproved => "Ask an operator to review and approve the plugin (tdm approve).",
            Self::PermissionDenied => "Ask an operator to grant the named permission.",
            Self::FuelExhausted => "Send a smaller input or raise the fuel budget (--fuel).",
            Self::DeadlineExceeded => "Send a smaller input or raise the deadline (--timeout).",
            Self::MemoryLimitExceeded => "Send a smaller input or raise the memory limit (--max-memory).",
            Self::ResourceLimitExceeded => "Reduce the module's tables or raise the policy limits.",
            Self::StackExhausted => "Avoid deep recursion in the plugin or raise the call-depth limit.",
            Self::PluginTrap => "Report the input to the plugin's author.",
            Self::PluginExited => "Plugins must return a response instead of calling proc_exit.",
            Self::InvalidResponse => "Report the input to the plugin's author.",
            Self::ResponseTooLarge => "Ask for less output or raise the response limit.",
            Self::RequestTooLarge => "Send smaller params or raise the request limit.",
            Self::AllocationFailed => "Send smaller params; if it persists, report it to the plugin's author.",
            Self::UnknownHostMethod => "Use one of the methods in docs/ABI.md.",
            Self::InvalidHostRequest => "Check the method's params in docs/ABI.md.",
            Self::HostCallLimitExceeded => "Make fewer or smaller host calls per intent, or raise the policy limits.",
            Self::HostIntentFailed => "Check the host's resource (file, server) and retry.",
        }
    }

    /// Whether the same request may succeed if retried (with the same policy) later.
    pub const fn retryable(self) -> bool {
        matches!(self, Self::DeadlineExceeded | Self::HostIntentFailed)
    }

    /// Parses a wire name back into a reason.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|r| r.as_str() == name)
    }
}

impl fmt::Display for BlockedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A typed host-side failure: the reason and what exactly happened this time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The class of failure.
    pub reason: BlockedReason,
    /// The specifics (which export, which imports, which pointer), appended to the fixed message.
    pub detail: String,
    /// The `proc_exit` code, for `plugin_exited`.
    pub exit_code: Option<i32>,
}

impl Failure {
    /// A failure with the given reason and detail.
    pub fn new(reason: BlockedReason, detail: impl Into<String>) -> Self {
        let detail: String = detail.into();
        // Engine messages can span lines; an outcome message is one line.
        let detail =
            if detail.contains('\n') { detail.split_whitespace().collect::<Vec<_>>().join(" ") } else { detail };
        Self { reason, detail, exit_code: None }
    }

    /// The full message: the reason's fixed message, then the detail.
    pub fn message(&self) -> String {
        let mut message = String::from(self.reason.message());
        if !self.detail.is_empty() {
            message.push(' ');
            message.push_str(&self.detail);
        }
        message
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.message())
    }
}

impl core::error::Error for Failure {}
