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

/// A policy field's value, as the field list hands it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyValue {
    /// A count or size (every field but `compilation`).
    Number(u64),
    /// The compilation mode.
    Compilation(Compilation),
    /// A feature turned on or off (`simd`).
    Switch(bool),
}

impl core::fmt::Display for PolicyValue {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::Compilation(mode) => write!(f, "{mode:?}"),
            Self::Switch(on) => f.write_str(if *on { "on" } else { "off" }),
        }
    }
}

/// One field of [`Policy`], as [`Policy::FIELDS`] lists them: every place that enumerates the
/// fields (the checks, the trace's record, a front end's listing) reads this list.
#[derive(Debug, Clone, Copy)]
pub struct PolicyField {
    /// The field's name.
    pub name: &'static str,
    /// Its documentation.
    pub doc: &'static str,
    /// Its value in a policy.
    pub get: fn(&Policy) -> PolicyValue,
    /// Whether [`Policy::check_within`] compares it with a ceiling (it costs the host memory
    /// or keeps it from looking at its clock).
    pub ceiling: bool,
    /// Whether [`Policy::validate`] refuses it at zero.
    pub nonzero: bool,
    /// Whether a trace records it ([`PolicyRecord`]); a replay takes the default of one that is
    /// not.
    pub traced: bool,
}

/// A field type and the fixed-width type a trace records it as.
trait Field<R>: Sized {
    fn value(self) -> PolicyValue;
    fn record(self) -> R;
    fn from_record(record: R) -> Option<Self>;
}

impl Field<u64> for u64 {
    fn value(self) -> PolicyValue {
        PolicyValue::Number(self)
    }
    fn record(self) -> u64 {
        self
    }
    fn from_record(record: u64) -> Option<Self> {
        Some(record)
    }
}

impl Field<u32> for u32 {
    fn value(self) -> PolicyValue {
        PolicyValue::Number(u64::from(self))
    }
    fn record(self) -> u32 {
        self
    }
    fn from_record(record: u32) -> Option<Self> {
        Some(record)
    }
}

impl Field<u64> for usize {
    fn value(self) -> PolicyValue {
        PolicyValue::Number(self as u64)
    }
    fn record(self) -> u64 {
        self as u64
    }
    fn from_record(record: u64) -> Option<Self> {
        usize::try_from(record).ok()
    }
}

impl Field<u8> for bool {
    fn value(self) -> PolicyValue {
        PolicyValue::Switch(self)
    }
    fn record(self) -> u8 {
        u8::from(self)
    }
    fn from_record(record: u8) -> Option<Self> {
        match record {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

impl Field<u8> for Compilation {
    fn value(self) -> PolicyValue {
        PolicyValue::Compilation(self)
    }
    fn record(self) -> u8 {
        match self {
            Compilation::Lazy => 0,
            Compilation::LazyTranslation => 1,
            Compilation::Eager => 2,
        }
    }
    fn from_record(record: u8) -> Option<Self> {
        match record {
            0 => Some(Compilation::Lazy),
            1 => Some(Compilation::LazyTranslation),
            2 => Some(Compilation::Eager),
            _ => None,
        }
    }
}

/// Whether `$flag` is among the row's flags.
macro_rules! has_flag {
    ($flag:ident;) => {
        false
    };
    (ceiling; ceiling $(, $rest:ident)*) => {
        true
    };
    (nonzero; nonzero $(, $rest:ident)*) => {
        true
    };
    ($flag:ident; $other:ident $(, $rest:ident)*) => {
        has_flag!($flag; $($rest),*)
    };
}

/// The one list of the policy's fields: each row is the field's doc, name, type, the type a
/// trace records it as, its default, and its checks. It makes the `Policy` struct, its
/// default, `Policy::FIELDS`, and the trace's `PolicyRecord` with its conversions.
macro_rules! policy_fields {
    (
        $($(#[doc = $doc:literal])+ $name:ident: $ty:ty as $record:ty = $default:expr, [$($flag:ident),*];)*
        untraced {
            $($(#[doc = $udoc:literal])+ $uname:ident: $uty:ty as $urecord:ty = $udefault:expr, [$($uflag:ident),*];)*
        }
    ) => {
        /// The limits for one plugin. Every field is overridable; `Policy::default()` is the
        /// default constraints of a new plugin.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Policy {
            $($(#[doc = $doc])+ pub $name: $ty,)*
            $($(#[doc = $udoc])+ pub $uname: $uty,)*
        }

        impl Default for Policy {
            fn default() -> Self {
                Self { $($name: $default,)* $($uname: $udefault,)* }
            }
        }

        impl Policy {
            /// Every field, in declaration order.
            pub const FIELDS: [PolicyField; [$(stringify!($name),)* $(stringify!($uname),)*].len()] = [$(PolicyField {
                name: stringify!($name),
                doc: concat!($($doc),+),
                get: |policy| Field::<$record>::value(policy.$name),
                ceiling: has_flag!(ceiling; $($flag),*),
                nonzero: has_flag!(nonzero; $($flag),*),
                traced: true,
            },)* $(PolicyField {
                name: stringify!($uname),
                doc: concat!($($udoc),+),
                get: |policy| Field::<$urecord>::value(policy.$uname),
                ceiling: has_flag!(ceiling; $($uflag),*),
                nonzero: has_flag!(nonzero; $($uflag),*),
                traced: false,
            },)*];
        }

        /// The policy a trace was recorded under, in fixed-width fields (the same bytes on 32-
        /// and 64-bit hosts; `compilation` is 0 lazy, 1 lazy translation, 2 eager). The
        /// untraced fields are not in it: a replay takes their defaults.
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub struct PolicyRecord {
            $(#[doc = concat!("`Policy::", stringify!($name), "`.")] pub $name: $record,)*
        }

        impl PolicyRecord {
            /// The record of `policy`.
            pub fn of(policy: &Policy) -> Self {
                Self { $($name: Field::<$record>::record(policy.$name),)* }
            }

            /// The policy this record describes, or the field this host cannot hold.
            pub fn policy(&self) -> Result<Policy, PolicyError> {
                Ok(Policy {
                    $($name: <$ty as Field<$record>>::from_record(self.$name)
                        .ok_or(PolicyError::DoesNotFit(stringify!($name)))?,)*
                    $($uname: $udefault,)*
                })
            }
        }
    };
}

policy_fields! {
    /// Linear memory limit in bytes (per memory; a plugin has one).
    max_memory_bytes: u64 as u64 = DEFAULT_MAX_MEMORY_BYTES, [ceiling];
    /// Fuel budget per intent; the launch an intent triggers (start function and
    /// `_initialize`) spends from the same budget.
    fuel_per_intent: u64 as u64 = DEFAULT_FUEL_PER_INTENT, [nonzero];
    /// Most fuel the start function may use (it cannot be paused to check the deadline); 0
    /// refuses to run any start function.
    start_fuel: u64 as u64 = DEFAULT_START_FUEL, [ceiling];
    /// Wall-clock deadline per intent in milliseconds, enforced by hosts that have a clock.
    timeout_ms: u64 as u64 = DEFAULT_TIMEOUT_MS, [];
    /// Maximum Wasm call depth.
    max_call_depth: usize as u64 = DEFAULT_MAX_CALL_DEPTH, [ceiling, nonzero];
    /// Maximum request size in bytes.
    max_request_bytes: u32 as u32 = DEFAULT_MAX_REQUEST_BYTES, [ceiling, nonzero];
    /// Maximum response size in bytes (the JSON, without the 4-byte length).
    max_response_bytes: u32 as u32 = DEFAULT_MAX_RESPONSE_BYTES, [ceiling];
    /// Maximum captured bytes for each of stdout and stderr; the rest is dropped and counted.
    max_output_bytes: usize as u64 = DEFAULT_MAX_OUTPUT_BYTES, [ceiling];
    /// Maximum module size in bytes.
    max_module_bytes: usize as u64 = DEFAULT_MAX_MODULE_BYTES, [ceiling, nonzero];
    /// Maximum elements of any one table.
    max_table_elements: usize as u64 = DEFAULT_MAX_TABLE_ELEMENTS, [ceiling];
    /// Maximum number of tables.
    max_tables: usize as u64 = DEFAULT_MAX_TABLES, [ceiling];
    /// Maximum number of instances per store (a plugin is one).
    max_instances: usize as u64 = 1, [ceiling, nonzero];
    /// Fuel handed out between two deadline checks.
    fuel_slice: u64 as u64 = DEFAULT_FUEL_SLICE, [ceiling, nonzero];
    /// Host calls allowed per intent.
    max_host_calls: u32 as u32 = DEFAULT_MAX_HOST_CALLS, [ceiling];
    /// Bytes allowed through host calls per intent (requests plus responses).
    max_host_bytes: u64 as u64 = DEFAULT_MAX_HOST_BYTES, [ceiling];
    /// Maximum size of one host-call request.
    max_host_request_bytes: u32 as u32 = DEFAULT_MAX_HOST_REQUEST_BYTES, [ceiling];
    /// How functions are compiled.
    compilation: Compilation as u8 = Compilation::LazyTranslation, [];
    untraced {
        /// Deepest nesting of arrays and objects in an intent's params and in a host call's
        /// params (the params value itself is level 1); deeper is `request_too_deep`, refused
        /// before the plugin (or the host) reads them. Not recorded in traces (the trace format
        /// predates it): a replay uses the default.
        max_request_depth: usize as u64 = DEFAULT_MAX_REQUEST_DEPTH, [ceiling, nonzero];
        /// Whether a module may use the SIMD proposal (`v128`; float lanes give canonical NaNs
        /// as scalar floats do, relaxed SIMD is always refused). Off, a module that uses it is
        /// refused at load (`invalid_module`, saying so), as it is by a build without the
        /// `simd` feature whatever this says. Not recorded in traces: a replay uses the default.
        simd: bool as u8 = true, [];
    }
}

/// A policy field that cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyError {
    /// The field must be greater than zero.
    Zero(&'static str),
    /// The memory limit is above what a 32-bit memory can address (4 GiB).
    MemoryAbove4GiB(u64),
    /// The field's value does not fit this host's types (a trace's record naming a size past
    /// this host's `usize`, or an unknown compilation mode).
    DoesNotFit(&'static str),
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
            Self::DoesNotFit(field) => write!(f, "policy field `{field}` does not fit this host"),
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
            simd: false,
            ..Self::default()
        }
    }

    /// Checks that every limit is usable.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let zero =
            Self::FIELDS.iter().filter(|field| field.nonzero).find(|field| (field.get)(self) == PolicyValue::Number(0));
        if let Some(field) = zero {
            return Err(PolicyError::Zero(field.name));
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
        for field in Self::FIELDS.iter().filter(|field| field.ceiling) {
            if let (PolicyValue::Number(value), PolicyValue::Number(most)) = ((field.get)(self), (field.get)(ceiling)) {
                if value > most {
                    return Err(PolicyError::AboveCeiling { field: field.name, value, ceiling: most });
                }
            }
        }
        Ok(())
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
