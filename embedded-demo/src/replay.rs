//! The replay part of the demo: every conformance trace (conformance/traces, bundled at build
//! time with its module and the digest recorded on the host) replayed through core's replay
//! entry point, one `trace=NAME digest=HEX` line each; std-host/tdm/tests/embedded_demo.rs compares
//! the lines with the host's digests.

use crate::digest::DigestLine;
use crate::sandbox;
use core::fmt::Write;
use semihosting::println;

mod bundle {
    include!(concat!(env!("OUT_DIR"), "/traces.rs"));
}

/// What replaying the bundled traces gave.
pub struct Replayed {
    /// Traces replayed.
    pub traces: usize,
    /// Traces whose digest matched the one recorded with them.
    pub matched: usize,
}

/// Replays every bundled trace and prints its digest line.
pub fn run() -> Replayed {
    let mut matched = 0;
    let traces = bundle::traces();
    for (name, trace, module, expected) in traces {
        let (digest, verdict) = match sandbox::replay(trace, module) {
            Ok(replayed) if replayed.divergence => (replayed.digest, "diverged"),
            Ok(replayed) if replayed.digest.as_str() == expected => {
                matched += 1;
                (replayed.digest, "ok")
            }
            Ok(replayed) => (replayed.digest, "mismatch"),
            Err(error) => (Default::default(), error),
        };
        let mut line = DigestLine::new();
        if write!(line, "trace={name} digest={digest} {verdict}").is_err() {
            line.clear();
        }
        println!("{line}");
    }
    Replayed { traces: traces.len(), matched }
}
