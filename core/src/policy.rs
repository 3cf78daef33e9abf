//! The limits a sandbox enforces, as data: one struct whose defaults are the default constraints
//! of a new plugin, checked in one place (`Policy::validate`).

use crate::reason::{BlockedReason, Failure};
use alloc::format;

/// One WebAssembly page: 64 KiB.
pub const WASM_PAGE_BYTES: u64 = 65_536;

/// Default linear memory limit: 64 MiB.
pub const DEFAULT_MAX_MEMORY_BYTES: u64 = 64 * 1024 * 1024;
/// Default fuel per intent: about what wasmi 2.0 executes in 5 s on a 2 vCPU Xeon. Measured with
/// `cargo run --release -p contour-benches --bin fuel_rate`: 3.5e8 fuel/s on call-heavy code
/// (recursive fib, so 5 s = 1.76e9) and 1.5e9 fuel/s on a tight loop (5 s = 7.5e9). The budget
/// takes the call-heavy figure, rounded up, so on typical plugin code the deterministic limit
/// binds at about the same time as the 5 s wall clock and never much later.
pub const DEFAULT_FUEL_PER_INTENT: u64 = 2_000_000_000;
/// Default wall-clock deadline per intent on std hosts: 5 s.
pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// Default maximum call depth (Wasm frames).
pub const DEFAULT_MAX_CALL_DEPTH: usize = 1_000;
/// Default maximum request size: 1 MiB.
pub const DEFAULT_MAX_REQUEST_BYTES: u32 = 1024 * 1024;
/// Default maximum response size: 4 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u32 = 4 * 1024 * 1024;
/// Default capture for each of stdout and stderr: 64 KiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Default maximum module size: 32 MiB.
pub const DEFAULT_MAX_MODULE_BYTES: usize = 32 * 1024 * 1024;
/// Default maximum elements per table.
pub const DEFAULT_MAX_TABLE_ELEMENTS: usize = 100_000;
/// Default maximum number of tables.
pub const DEFAULT_MAX_TABLES: usize = 8;
/// Default maximum host calls per intent.
pub const DEFAULT_MAX_HOST_CALLS: u32 = 1_000;
/// Default maximum bytes moved through host calls per intent (requests plus responses): 16 MiB.
pub const DEFAULT_MAX_HOST_BYTES: u64 = 16 * 1024 * 1024;
/// Default maximum size of one host-call request: 1 MiB.
pub const DEFAULT_MAX_HOST_REQUEST_BYTES: u32 = 1024 * 1024;
/// Default deepest nesting of an intent's params and of a host call's params: 128 levels of
/// arrays and objects, serde_json's own bound (a request's envelope is one level more).
pub const DEFAULT_MAX_REQUEST_DEPTH: usize = 128;
/// Default fuel handed out per slice between deadline checks.
pub const DEFAULT_FUEL_SLICE: u64 = 4_000_000;
/// Default fuel a start function may use: wasmi runs it in one piece, so it cannot be paused
/// at a slice boundary to check the deadline; this bounds its wall time to a few milliseconds.
/// Toolchains put set-up work in `_initialize`, which runs in slices.
pub const DEFAULT_START_FUEL: u64 = 10_000_000;

/// Embedded profile (`Policy::embedded`), linear memory limit: 256 KiB (4 pages). A Rust SDK
/// plugin built with a 16 KiB shadow stack runs in 2 pages; the rest is headroom.
pub const EMBEDDED_MAX_MEMORY_BYTES: u64 = 256 * 1024;
/// Embedded profile, fuel per intent: 10 million, about 1 s of wasmi on QEMU's Cortex-M4 and 2 s
/// on its RV32 here (embedded-demo/README.md); a board has no wall-clock deadline, so fuel alone
/// bounds an intent.
pub const EMBEDDED_FUEL_PER_INTENT: u64 = 10_000_000;
/// Embedded profile, start-function fuel: 1 million.
pub const EMBEDDED_START_FUEL: u64 = 1_000_000;
/// Embedded profile, request, response and host-request size: 4 KiB each, so one fixed-size
/// buffer on the board holds any of them.
pub const EMBEDDED_MAX_MESSAGE_BYTES: u32 = 4 * 1024;
/// Embedded profile, capture for each of stdout and stderr: 1 KiB.
pub const EMBEDDED_MAX_OUTPUT_BYTES: usize = 1024;
/// Embedded profile, module size: 256 KiB.
pub const EMBEDDED_MAX_MODULE_BYTES: usize = 256 * 1024;
/// Embedded profile, elements per table: 4096 (a table lives on the board's heap).
pub const EMBEDDED_MAX_TABLE_ELEMENTS: usize = 4_096;
/// Embedded profile, host calls per intent: 100.
pub const EMBEDDED_MAX_HOST_CALLS: u32 = 100;
/// Embedded profile, bytes through host calls per intent: 64 KiB.
pub const EMBEDDED_MAX_HOST_BYTES: u64 = 64 * 1024;

/// How wasmi compiles a module's functions. Fuel stays deterministic in every mode because
/// Contour sets wasmi's translation and validation fuel costs to zero (see docs/ABI.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compilation {
    /// Parse eagerly; validate and translate each function on its first call. The fastest start,
    /// for modules already validated once (at install): an invalid body is only found when
    /// called, and then ends that intent with `invalid_module`.
    Lazy,
    /// Validate everything at load; translate each function on its first call. The default: a
    /// module that loads is valid.
    #[default]
    LazyTranslation,
    /// Validate and translate everything at load.
    Eager,
}

/// The limits for one plugin. Every field is overridable; `Policy::default()` is the default
/// constraints of a new plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Linear memory limit in bytes (per memory; a plugin has one).
    pub max_memory_bytes: u64,
    /// Fuel budget per intent; the launch an intent triggers (start function and
    /// `_initialize`) spends from the same budget.
    pub fuel_per_intent: u64,
    /// Most fuel the start function may use (it cannot be paused to check the deadline); 0
    /// refuses to run any start function.
    pub start_fuel: u64,
    /// Wall-clock deadline per intent in milliseconds, enforced by hosts that have a clock.
    pub timeout_ms: u64,
    /// Maximum Wasm call depth.
    pub max_call_depth: usize,
    /// Maximum request size in bytes.
    pub max_request_bytes: u32,
    /// Deepest nesting of arrays and objects in an intent's params and in a host call's params
    /// (the params value itself is level 1); deeper is `request_too_deep`, refused before the
    /// plugin (or the host) reads them. Not recorded in traces: a replay uses the default.
    pub max_request_depth: usize,
    /// Maximum response size in bytes (the JSON, without the 4-byte length).
    pub max_response_bytes: u32,
    /// Maximum captured bytes for each of stdout and stderr; the rest is dropped and counted.
    pub max_output_bytes: usize,
    /// Maximum module size in bytes.
    pub max_module_bytes: usize,
    /// Maximum elements of any one table.
    pub max_table_elements: usize,
    /// Maximum number of tables.
    pub max_tables: usize,
    /// Maximum number of instances per store (a plugin is one).
    pub max_instances: usize,
    /// Fuel handed out between two deadline checks.
    pub fuel_slice: u64,
    /// Host calls allowed per intent.
    pub max_host_calls: u32,
    /// Bytes allowed through host calls per intent (requests plus responses).
    pub max_host_bytes: u64,
    /// Maximum size of one host-call request.
    pub max_host_request_bytes: u32,
    /// How functions are compiled.
    pub compilation: Compilation,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            max_memory_bytes: DEFAULT_MAX_MEMORY_BYTES,
            fuel_per_intent: DEFAULT_FUEL_PER_INTENT,
            start_fuel: DEFAULT_START_FUEL,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            max_call_depth: DEFAULT_MAX_CALL_DEPTH,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            max_request_depth: DEFAULT_MAX_REQUEST_DEPTH,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_module_bytes: DEFAULT_MAX_MODULE_BYTES,
            max_table_elements: DEFAULT_MAX_TABLE_ELEMENTS,
            max_tables: DEFAULT_MAX_TABLES,
            max_instances: 1,
            fuel_slice: DEFAULT_FUEL_SLICE,
            max_host_calls: DEFAULT_MAX_HOST_CALLS,
            max_host_bytes: DEFAULT_MAX_HOST_BYTES,
            max_host_request_bytes: DEFAULT_MAX_HOST_REQUEST_BYTES,
            compilation: Compilation::LazyTranslation,
        }
    }
}

/// A policy field that cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyError {
    /// The field must be greater than zero.
    Zero(&'static str),
    /// The memory limit is above what a 32-bit memory can address (4 GiB).
    MemoryAbove4GiB(u64),
    /// A limit is above the most the host accepts ([`Policy::check_within`]).
    AboveCeiling {
        /// The policy field.
        field: &'static str,
        /// Its value.
        value: u64,
        /// The most the host accepts.
        ceiling: u64,
    },
}

impl core::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Zero(field) => write!(f, "policy field `{field}` must be greater than zero"),
            Self::MemoryAbove4GiB(bytes) => {
                write!(f, "memory limit {bytes} bytes is above the 4 GiB a wasm32 memory can address")
            }
            Self::AboveCeiling { field, value, ceiling } => {
                write!(f, "policy field `{field}` is {value}, above the {ceiling} this host accepts")
            }
        }
    }
}

impl Policy {
    /// The embedded profile: the same limits, sized for a microcontroller's heap (the
    /// `EMBEDDED_*` constants) so nothing a plugin does can exhaust it. Boards have no
    /// wall-clock deadline: fuel alone bounds an intent. Everything else is the default.
    pub fn embedded() -> Self {
        Self {
            max_memory_bytes: EMBEDDED_MAX_MEMORY_BYTES,
            fuel_per_intent: EMBEDDED_FUEL_PER_INTENT,
            start_fuel: EMBEDDED_START_FUEL,
            max_request_bytes: EMBEDDED_MAX_MESSAGE_BYTES,
            max_response_bytes: EMBEDDED_MAX_MESSAGE_BYTES,
            max_output_bytes: EMBEDDED_MAX_OUTPUT_BYTES,
            max_module_bytes: EMBEDDED_MAX_MODULE_BYTES,
            max_table_elements: EMBEDDED_MAX_TABLE_ELEMENTS,
            max_host_calls: EMBEDDED_MAX_HOST_CALLS,
            max_host_bytes: EMBEDDED_MAX_HOST_BYTES,
            max_host_request_bytes: EMBEDDED_MAX_MESSAGE_BYTES,
            ..Self::default()
        }
    }

    /// Checks that every limit is usable.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let nonzero: [(&'static str, u64); 7] = [
            ("fuel_per_intent", self.fuel_per_intent),
            ("max_call_depth", self.max_call_depth as u64),
            ("max_request_bytes", u64::from(self.max_request_bytes)),
            ("max_request_depth", self.max_request_depth as u64),
            ("max_module_bytes", self.max_module_bytes as u64),
            ("max_instances", self.max_instances as u64),
            ("fuel_slice", self.fuel_slice),
        ];
        if let Some((field, _)) = nonzero.iter().find(|(_, value)| *value == 0) {
            return Err(PolicyError::Zero(field));
        }
        if self.max_memory_bytes > 4 * 1024 * 1024 * 1024 {
            return Err(PolicyError::MemoryAbove4GiB(self.max_memory_bytes));
        }
        Ok(())
    }

    /// Checks that no limit that costs the host memory or stops it from looking at its clock
    /// is above `ceiling`'s: memory, start fuel (a start function runs in one piece), the fuel
    /// slice (the deadline and stop checks come between slices), call depth, message, output
    /// and module sizes, tables, instances and host-call budgets. The intent budget
    /// (`fuel_per_intent`, `timeout_ms`) is not compared: a run is bounded in time from outside.
    /// For a policy the host did not choose, such as one a trace names.
    pub fn check_within(&self, ceiling: &Policy) -> Result<(), PolicyError> {
        let size = |n: usize| n as u64;
        let fields: [(&'static str, u64, u64); 15] = [
            ("max_memory_bytes", self.max_memory_bytes, ceiling.max_memory_bytes),
            ("start_fuel", self.start_fuel, ceiling.start_fuel),
            ("fuel_slice", self.fuel_slice, ceiling.fuel_slice),
            ("max_call_depth", size(self.max_call_depth), size(ceiling.max_call_depth)),
            ("max_request_bytes", u64::from(self.max_request_bytes), u64::from(ceiling.max_request_bytes)),
            ("max_request_depth", size(self.max_request_depth), size(ceiling.max_request_depth)),
            ("max_response_bytes", u64::from(self.max_response_bytes), u64::from(ceiling.max_response_bytes)),
            ("max_output_bytes", size(self.max_output_bytes), size(ceiling.max_output_bytes)),
            ("max_module_bytes", size(self.max_module_bytes), size(ceiling.max_module_bytes)),
            ("max_table_elements", size(self.max_table_elements), size(ceiling.max_table_elements)),
            ("max_tables", size(self.max_tables), size(ceiling.max_tables)),
            ("max_instances", size(self.max_instances), size(ceiling.max_instances)),
            ("max_host_calls", u64::from(self.max_host_calls), u64::from(ceiling.max_host_calls)),
            ("max_host_bytes", self.max_host_bytes, ceiling.max_host_bytes),
            (
                "max_host_request_bytes",
                u64::from(self.max_host_request_bytes),
                u64::from(ceiling.max_host_request_bytes),
            ),
        ];
        match fields.iter().find(|(_, value, most)| value > most) {
            Some(&(field, value, ceiling)) => Err(PolicyError::AboveCeiling { field, value, ceiling }),
            None => Ok(()),
        }
    }

    /// The memory limit in whole pages.
    pub fn max_memory_pages(&self) -> u64 {
        self.max_memory_bytes / WASM_PAGE_BYTES
    }

    /// Checks a memory's declared minimum (in pages) against the limit.
    pub fn check_initial_memory(&self, minimum_pages: u64) -> Result<(), Failure> {
        if minimum_pages > self.max_memory_pages() {
            return Err(Failure::new(
                BlockedReason::MemoryLimitExceeded,
                format!(
                    "The module declares {minimum_pages} initial pages ({} bytes); the limit is {} bytes.",
                    minimum_pages.saturating_mul(WASM_PAGE_BYTES),
                    self.max_memory_bytes
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_within_the_ceiling_passes_and_each_field_above_it_is_named() {
        let ceiling = Policy::default();
        assert_eq!(Policy::default().check_within(&ceiling), Ok(()));
        assert_eq!(Policy::embedded().check_within(&ceiling), Ok(()));
        // The intent budget is not the ceiling's business: a replay is bounded in time from outside.
        let long = Policy { fuel_per_intent: u64::MAX, timeout_ms: u64::MAX, ..Policy::default() };
        assert_eq!(long.check_within(&ceiling), Ok(()));
        let above: [(&str, Policy); 5] = [
            ("max_table_elements", Policy { max_table_elements: 4_000_000_000, ..Policy::default() }),
            ("max_memory_bytes", Policy { max_memory_bytes: DEFAULT_MAX_MEMORY_BYTES + 1, ..Policy::default() }),
            ("start_fuel", Policy { start_fuel: u64::MAX, ..Policy::default() }),
            ("fuel_slice", Policy { fuel_slice: u64::MAX, ..Policy::default() }),
            ("max_host_request_bytes", Policy { max_host_request_bytes: u32::MAX, ..Policy::default() }),
        ];
        for (field, policy) in above {
            match policy.check_within(&ceiling) {
                Err(PolicyError::AboveCeiling { field: named, .. }) => assert_eq!(named, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }
}
