//! REPLAY HOOK (issue 12, replay part): not built yet, because core's record/replay trace
//! format has not landed. When it does:
//! - build.rs bundles the conformance traces (`conformance/traces/*`, built from the repository,
//!   never committed binaries) the way it bundles the plugins;
//! - `run` below replays each through core's replay entry point (from `crate::sandbox`, the one
//!   file that touches core) and prints one `trace=NAME digest=HEX` line per trace, built in a
//!   `crate::digest::DigestLine`;
//! - std-host/tests/embedded_demo.rs compares those lines with the host's digests for the same
//!   traces (its `REPLAY HOOK` marks the place).

/// What replaying the bundled traces gave.
pub struct Replayed {
    /// Traces replayed.
    pub traces: usize,
    /// Traces whose digest matched the one recorded with them.
    pub matched: usize,
}

/// Replays every bundled trace and prints its digest line: none are bundled yet.
pub fn run() -> Replayed {
    Replayed { traces: 0, matched: 0 }
}
