//! The replay part of the demo: every conformance trace (conformance/traces, bundled at build
//! time with its module and the digest recorded on the host) replayed through core's replay
//! entry point, one `trace=NAME digest=HEX` line each; std-host/tdm/tests/embedded_demo.rs compares
//! the lines with the host's digests.

use crate::digest::DigestLine;
use crate::heap;
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
    /// Traces not replayed: recorded with more linear memory than this build's policy allows
    /// (only on a 256 KiB-RAM part, `part-256k`; the default build replays every trace).
    pub skipped: usize,
}

/// Replays every bundled trace and prints its digest line.
pub fn run() -> Replayed {
    let mut matched = 0;
    let mut skipped = 0;
    let traces = bundle::traces();
    let max_memory_bytes = sandbox::limits().max_memory_bytes;
    for (name, trace, module, expected) in traces {
        if let Some(peak) = sandbox::trace_peak_memory(trace).filter(|peak| *peak > max_memory_bytes) {
            skipped += 1;
            println!("trace={name} skipped recorded_peak_memory_bytes={peak} max_memory_bytes={max_memory_bytes}");
            continue;
        }
        heap::reset_high_water();
        let replayed = sandbox::replay(trace, module);
        let heap_high_water = heap::high_water();
        let (digest, verdict) = match replayed {
            Ok(replayed) if replayed.divergence => (replayed.digest, "diverged"),
            Ok(replayed) if replayed.digest.as_str() == expected => {
                matched += 1;
                (replayed.digest, "ok")
            }
            Ok(replayed) => (replayed.digest, "mismatch"),
            Err(error) => (Default::default(), error),
        };
        let mut line = DigestLine::new();
        if write!(line, "trace={name} digest={digest} heap_high_water={heap_high_water} {verdict}").is_err() {
            line.clear();
        }
        println!("{line}");
    }
    Replayed { traces: traces.len(), matched, skipped }
}
