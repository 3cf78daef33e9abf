//! `contour-replay --cases DIR`: the cross-architecture differential's replay side (`make
//! fuzz-cross`, docs/fuzzing.md). Every `NAME.trace` in DIR is replayed on `NAME.wasm` with
//! contour-core alone, and one line per case says what this host reached:
//!
//! `NAME DIGEST REASON:FUEL,REASON:FUEL VERDICT`
//!
//! DIGEST is the replayed run's digest (over every intent's outcome bytes, `blockedReason`, fuel
//! and peak memory); the intents' reason (`completed` when none) and fuel are the trace's own,
//! which the replay reached exactly when VERDICT is `ok`; otherwise VERDICT is `DIVERGED: ...`
//! (the first thing that differed) or `ERROR: ...`. The same directory replayed on two hosts
//! must print the same lines.

use contour_core::Plugin;
use contour_core::{hex, replay, Trace};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a case could not be replayed, in the words of its line.
fn error(what: impl std::fmt::Display) -> String {
    let text: String = what.to_string().chars().flat_map(char::escape_debug).collect();
    format!("ERROR: {text}")
}

/// The line of one case: its trace and module read from DIR, replayed.
fn case_line(trace_path: &Path, name: &str) -> String {
    let module_path = trace_path.with_extension("wasm");
    let (trace, module) = match (std::fs::read(trace_path), std::fs::read(&module_path)) {
        (Ok(trace), Ok(module)) => (trace, module),
        (Err(e), _) | (_, Err(e)) => return format!("{name} - - {}", error(e)),
    };
    let trace = match Trace::decode(&trace) {
        Ok(trace) => trace,
        Err(e) => return format!("{name} - - {}", error(e)),
    };
    let intents: Vec<String> = trace
        .intents
        .iter()
        .map(|intent| format!("{}:{}", intent.reason.as_deref().unwrap_or("completed"), intent.fuel))
        .collect();
    let intents = intents.join(",");
    let plugin = match trace.policy().and_then(|policy| {
        Plugin::load(&module, policy).map_err(|f| contour_core::errors::TraceError::Module(f.to_string()))
    }) {
        Ok(plugin) => plugin,
        Err(e) => return format!("{name} - {intents} {}", error(e)),
    };
    match replay(&trace, Arc::new(plugin)) {
        Ok(report) => {
            let verdict = match &report.divergence {
                None => String::from("ok"),
                Some(divergence) => {
                    let text: String = divergence.to_string().chars().flat_map(char::escape_debug).collect();
                    format!("DIVERGED: {text}")
                }
            };
            format!("{name} {} {intents} {verdict}", hex(&report.digest))
        }
        Err(e) => format!("{name} - {intents} {}", error(e)),
    }
}

/// Replays every case in `dir`, printing a line each and a count; true when every case is `ok`.
pub fn run(dir: &Path) -> bool {
    let mut traces: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|e| e == "trace"))
            .collect(),
        Err(e) => {
            println!("{}", error(format_args!("{}: {e}", dir.display())));
            return false;
        }
    };
    traces.sort();
    let mut ok = 0;
    for path in &traces {
        let name: String = path
            .file_stem()
            .map(|s| s.to_string_lossy().chars().flat_map(char::escape_debug).collect())
            .unwrap_or_default();
        let line = case_line(path, &name);
        if line.ends_with(" ok") {
            ok += 1;
        }
        println!("{line}");
    }
    println!("cases: {} replayed, {ok} ok, {} not", traces.len(), traces.len() - ok);
    ok == traces.len()
}
