//! What `tdm exec` adds to the sandbox for WASI command modules: the default fuel budget of a
//! command (sized so real programs run to the deadline), the `--stats` line, and how
//! `tdm inspect` tells a command from a plugin.

use contour_core::Inspection;
use contour_core::{CommandReport, Failure, Plugin, Policy, Profile};
use std::time::Duration;

/// The fuel a command gets per second of its deadline when `--fuel` is not given. Measured with
/// the release `tdm` on ripgrep 15.2 and jaq 1.5.1 built for wasm32-wasip1 (`make real-wasi`
/// prints the figures): jaq used up to 1.2e10 fuel per second of wall time, ripgrep 5.5e9, on
/// a shared 2 vCPU machine. The budget is about eight times the fastest, so the deadline, not
/// the fuel, ends a command that runs too long, on a faster machine too (docs/ABI.md, section
/// 6; README).
pub const COMMAND_FUEL_PER_SECOND: u64 = 100_000_000_000;

/// The default fuel budget of a command whose deadline is `timeout_ms`.
pub fn default_command_fuel(timeout_ms: u64) -> u64 {
    COMMAND_FUEL_PER_SECOND.saturating_mul(timeout_ms) / 1_000
}

/// The policy of a command: the defaults, the given `--fuel` and `--timeout`, and without
/// `--fuel` the command budget for its deadline.
pub fn command_policy(fuel: Option<u64>, timeout: Option<Duration>) -> Policy {
    let mut policy = Policy::default();
    if let Some(timeout) = timeout {
        policy.timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX).max(1);
    }
    policy.fuel_per_intent = fuel.unwrap_or_else(|| default_command_fuel(policy.timeout_ms));
    policy
}

/// The `--stats` line of a command: fuel used (of the budget), guest memory at the end, wall
/// time.
pub fn stats_line(report: &CommandReport, budget: u64, elapsed: Duration) -> String {
    format!(
        "tdm: fuel_used={} fuel_budget={budget} peak_memory_bytes={} elapsed_us={}",
        report.fuel_used,
        report.peak_memory_bytes,
        elapsed.as_micros()
    )
}

/// What a module is, judged from its exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleKind {
    /// A TDM plugin (`tdm run`): anything that is not a command.
    Plugin,
    /// A WASI command (`tdm exec`): it exports `_start` and not `tdm_plugin_execute_intent`.
    Command,
}

impl ModuleKind {
    /// Judges a module by its exports.
    pub fn of(inspection: &Inspection) -> Self {
        let exports = |name: &str| inspection.exports.iter().any(|e| e.name == name);
        if exports("_start") && !exports("tdm_plugin_execute_intent") {
            Self::Command
        } else {
            Self::Plugin
        }
    }

    /// The kind's name in `tdm inspect` output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plugin => "plugin",
            Self::Command => "command",
        }
    }
}

/// Inspects a module as what it is: as a plugin (the marketplace profile), unless its exports
/// make it a command, which is then checked as `tdm exec` loads it (the command profile).
pub fn inspect_module(bytes: &[u8], policy: &Policy) -> Result<(Inspection, ModuleKind), Failure> {
    let inspection = Plugin::inspect(bytes, policy, Profile::Marketplace)?;
    match ModuleKind::of(&inspection) {
        ModuleKind::Plugin => Ok((inspection, ModuleKind::Plugin)),
        ModuleKind::Command => Ok((Plugin::inspect(bytes, policy, Profile::Command)?, ModuleKind::Command)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_budget_scales_with_the_deadline_and_fuel_overrides_it() {
        assert_eq!(default_command_fuel(5_000), 500_000_000_000);
        assert_eq!(command_policy(None, Some(Duration::from_millis(500))).fuel_per_intent, 50_000_000_000);
        assert_eq!(command_policy(Some(7), None).fuel_per_intent, 7);
        assert_eq!(command_policy(None, None).timeout_ms, Policy::default().timeout_ms);
    }
}
