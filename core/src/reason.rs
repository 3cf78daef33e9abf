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
    /// The host refuses the request whatever the plugin is granted (a path leading outside
    /// dist/, a redirect that would carry a secret, a tool call back into its caller).
    Forbidden,
    /// The intent used up its fuel budget.
    FuelExhausted,
    /// The intent outlived its wall-clock deadline.
    DeadlineExceeded,
    /// The intent's caller cancelled it (Ctrl-C, an agent's cancellation) before it finished.
    Cancelled,
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
    /// The request's params (or a host call's) nest deeper than `Policy::max_request_depth`.
    RequestTooDeep,
    /// The params do not match the JSON Schema the intent declares (checked by a host that
    /// reads declarations, before the plugin runs).
    InvalidParams,
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
    /// The policy cannot be enforced (a zero limit, memory above 4 GiB, or engine settings the
    /// runtime was not built for): nothing was loaded under it.
    InvalidPolicy,
    /// The host failed on its own account (an internal invariant, a lost environment, a
    /// serialization failure), not because of anything the plugin did.
    HostFault,
    /// The host imports could not be linked (a linker definition is missing or mistyped): a
    /// fault of the host's build, not of the module, whose imports were already checked.
    LinkFailed,
}

impl BlockedReason {
    /// Every reason, in documentation order.
    pub const ALL: [BlockedReason; 28] = [
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
            Self::Forbidden => "forbidden",
            Self::FuelExhausted => "fuel_exhausted",
            Self::DeadlineExceeded => "deadline_exceeded",
            Self::Cancelled => "cancelled",
            Self::MemoryLimitExceeded => "memory_limit_exceeded",
            Self::ResourceLimitExceeded => "resource_limit_exceeded",
            Self::StackExhausted => "stack_exhausted",
            Self::PluginTrap => "plugin_trap",
            Self::PluginExited => "plugin_exited",
            Self::InvalidResponse => "invalid_response",
            Self::ResponseTooLarge => "response_too_large",
            Self::RequestTooLarge => "request_too_large",
            Self::RequestTooDeep => "request_too_deep",
            Self::InvalidParams => "invalid_params",
            Self::AllocationFailed => "allocation_failed",
            Self::UnknownHostMethod => "unknown_host_method",
            Self::InvalidHostRequest => "invalid_host_request",
            Self::HostCallLimitExceeded => "host_call_limit_exceeded",
            Self::HostIntentFailed => "host_intent_failed",
            Self::InvalidPolicy => "invalid_policy",
            Self::HostFault => "host_fault",
            Self::LinkFailed => "link_failed",
        }
    }

    /// The fixed, human-readable message.
    pub const fn message(self) -> &'static str {
        match self {
            Self::AbiMismatch => "The module does not implement the TDM IPC ABI.",
            Self::ImportNotAllowed => "The module imports host functions that are not allowed.",
            Self::InvalidModule => "The module is not valid WebAssembly for this runtime.",
            Self::ModuleTooLarge => "The module is larger than the policy allows.",
            Self::NotApproved => "The plugin has no valid operator approval.",
            Self::PermissionDenied => "The plugin was not granted the permission it needs.",
            Self::Forbidden => "The host refuses this request whatever the plugin is granted.",
            Self::FuelExhausted => "The intent used up its fuel budget.",
            Self::DeadlineExceeded => "The intent ran past its wall-clock deadline.",
            Self::Cancelled => "The intent was cancelled before it finished.",
            Self::MemoryLimitExceeded => "The plugin exceeded its linear memory limit.",
            Self::ResourceLimitExceeded => "The plugin exceeded its table or instance limits.",
            Self::StackExhausted => "The plugin exhausted its call stack.",
            Self::PluginTrap => "The plugin trapped.",
            Self::PluginExited => "The plugin exited instead of answering.",
            Self::InvalidResponse => "The plugin's response breaks the TDM IPC ABI.",
            Self::ResponseTooLarge => "The plugin's response is larger than the policy allows.",
            Self::RequestTooLarge => "The request is larger than the policy allows.",
            Self::RequestTooDeep => "The request's params nest deeper than the policy allows.",
            Self::InvalidParams => "The params do not match the schema the intent declares.",
            Self::AllocationFailed => "The plugin could not allocate room for the request.",
            Self::UnknownHostMethod => "The host does not offer that method.",
            Self::InvalidHostRequest => "The host call's params do not fit its method.",
            Self::HostCallLimitExceeded => "The intent exceeded its host-call limits.",
            Self::HostIntentFailed => "The host could not complete the call.",
            Self::InvalidPolicy => "The policy cannot be enforced.",
            Self::HostFault => "The host failed on its own account.",
            Self::LinkFailed => "The host imports could not be linked.",
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
            Self::Forbidden => {
                "No grant allows it: change the request as the message says (docs/ABI.md, \"Refusals no grant lifts\")."
            }
            Self::FuelExhausted => "Send a smaller input or raise the policy's fuel budget (fuel_per_intent).",
            Self::DeadlineExceeded => "Send a smaller input or raise the policy's deadline (timeout_ms).",
            Self::Cancelled => "Send the request again when it should run to the end: no limit stopped it.",
            Self::MemoryLimitExceeded => "Send a smaller input or raise the policy's memory limit (max_memory_bytes).",
            Self::ResourceLimitExceeded => "Reduce the module's tables or raise the policy limits.",
            Self::StackExhausted => "Avoid deep recursion in the plugin or raise the call-depth limit.",
            Self::PluginTrap => "Report the input to the plugin's author.",
            Self::PluginExited => "Plugins must return a response instead of calling proc_exit.",
            Self::InvalidResponse => "Report the input to the plugin's author.",
            Self::ResponseTooLarge => "Ask for less output or raise the response limit.",
            Self::RequestTooLarge => "Send smaller params or raise the request limit.",
            Self::RequestTooDeep => "Send params nested less deeply (the limit is max_request_depth, 128 by default).",
            Self::InvalidParams => {
                "Send params the intent's schema accepts: `tdm inspect` shows it, an MCP client sees it as the tool's inputSchema."
            }
            Self::AllocationFailed => "Send smaller params; if it persists, report it to the plugin's author.",
            Self::UnknownHostMethod => "Use one of the methods in docs/ABI.md.",
            Self::InvalidHostRequest => "Check the method's params in docs/ABI.md.",
            Self::HostCallLimitExceeded => "Make fewer or smaller host calls per intent, or raise the policy limits.",
            Self::HostIntentFailed => "Check the host's resource (file, server) and retry.",
            Self::InvalidPolicy => {
                "Fix the named limit: every limit must be greater than zero and memory at most 4 GiB."
            }
            Self::HostFault => "Retry; if it persists, report it to the host's maintainers.",
            Self::LinkFailed => "Report it to the host's maintainers: the host build is broken.",
        }
    }

    /// Whether the same request may succeed if retried (with the same policy) later.
    pub const fn retryable(self) -> bool {
        matches!(self, Self::DeadlineExceeded | Self::Cancelled | Self::HostIntentFailed | Self::HostFault)
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

/// The longest detail a failure carries, in bytes: a message that quotes module or file content
/// (import names, engine errors, a nested tool's message) is cut here, whatever its source.
pub const MAX_DETAIL_BYTES: usize = 2048;

/// The longest piece of guest- or file-chosen text quoted in a message, in characters.
pub const MAX_QUOTE_CHARS: usize = 64;

/// `text` for a message: control characters written as `\u{..}`, cut after `max_chars`
/// characters with a note of how many bytes were left out.
pub fn quote(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars * 2));
    for (count, (at, c)) in text.char_indices().enumerate() {
        if count == max_chars {
            out.push_str(&alloc::format!("... ({} more bytes)", text.len() - at));
            break;
        }
        if c.is_control() {
            out.push_str(&alloc::format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Cuts `detail` to at most `MAX_DETAIL_BYTES` (at a character boundary).
fn bounded(mut detail: String) -> String {
    if detail.len() <= MAX_DETAIL_BYTES {
        return detail;
    }
    let mut cut = MAX_DETAIL_BYTES - 40;
    while !detail.is_char_boundary(cut) {
        cut -= 1;
    }
    let left_out = detail.len() - cut;
    detail.truncate(cut);
    detail.push_str(&alloc::format!("... ({left_out} more bytes)"));
    detail
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
        Self { reason, detail: bounded(detail), exit_code: None }
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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn details_and_quotes_are_bounded() {
        let long = "x".repeat(100_000);
        let failure = Failure::new(BlockedReason::InvalidModule, long.clone());
        assert!(failure.detail.len() <= MAX_DETAIL_BYTES, "{}", failure.detail.len());
        assert!(failure.detail.ends_with("more bytes)"));
        let quoted = quote(&long, 10);
        assert!(quoted.starts_with("xxxxxxxxxx... (99990 more bytes)"), "{quoted}");
        assert_eq!(quote("a\u{1b}[2Jb", 64), "a\\u{1b}[2Jb");
        let wide = "\u{e9}".repeat(3000);
        assert!(Failure::new(BlockedReason::InvalidModule, wide).detail.len() <= MAX_DETAIL_BYTES);
        assert_eq!(
            BlockedReason::ALL.len(),
            BlockedReason::ALL
                .iter()
                .map(|r| r.as_str().to_string())
                .collect::<alloc::collections::BTreeSet<_>>()
                .len()
        );
    }
}
