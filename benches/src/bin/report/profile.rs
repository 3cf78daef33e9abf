//! The report's callgrind section: instructions per iteration of each hot path against its baseline.

use super::json_file;
use std::fmt::Write as _;

/// The callgrind section: instructions per iteration of each hot path against its baseline, from
/// `target/profile.json` (the `profile` bin), which do not move with the load on the machine as times do.
pub(super) fn profile_section(out: &mut String) {
    let _ = writeln!(out, "## Instructions per hot path (callgrind)\n");
    let path = contour_benches::target_dir().join("profile.json");
    let Some(profile) = json_file(&path) else {
        let _ = writeln!(out, "(no {}: run `make bench-profile`)\n", path.display());
        return;
    };
    let Some(scenarios) = profile.as_object() else { return };
    let _ = writeln!(
        out,
        "`valgrind --tool=callgrind` counts the instructions of each scenario run {BASE} and {LONG} times; the \
         difference / {EXTRA} is one iteration, setup left out. The same binary gives the same counts whatever else \
         the machine does, so these ratios are the repeatable ones (criterion times here move by 10-15% between \
         runs).\n"
    );
    let _ = writeln!(out, "| Scenario | One iteration is | Instructions | Baseline | Ratio |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for (name, figure) in scenarios {
        let Some(each) = figure["instructions"].as_f64() else { continue };
        let baseline = figure["baseline"].as_str().unwrap_or_default();
        let base = scenarios.get(baseline).and_then(|b| b["instructions"].as_f64());
        let ratio = base.map_or_else(|| "-".into(), |b| format!("{:.2}x", each / b));
        let _ = writeln!(
            out,
            "| {name} | {} | {each:.0} | {} | {ratio} |",
            figure["what"].as_str().unwrap_or_default(),
            if baseline.is_empty() { "-" } else { baseline }
        );
    }
    let _ = writeln!(
        out,
        "\nWhat the profile led to (each a commit of its own): plugins load on a shared `Runtime` (engine and the \
         48-import linker built once; a small module's load had spent ~63k instructions relinking), the load \
         report renders signatures from static names; a host call reads its envelope and params typed and in place \
         instead of building a JSON tree (12,000 -> ~6,300 instructions per `log` call), checks UTF-8 once, and \
         answers from a borrowed struct; a response is checked in one typed pass instead of as a tree (the echo's \
         ~2,500 instructions of JSON work); then a completed outcome in plain JSON is vouched for by a one-pass \
         byte reader (`core/src/outcome/scan.rs`: the SDKs' common opening in one compare, strings eight bytes a \
         round), the serde reader kept for every other response and for the words of every error; the deadline \
         check between calls is inlined and builds its failure only when it fails; the virtual environment seeds \
         an intent's random stream at its first read instead of at its start; the parse-time limit pass skips \
         a code section no larger than one body may be instead of stepping through its bodies (the large \
         module's cold start had spent ~490,000 instructions there); release builds compile `contour-core` in \
         one codegen unit, where LLVM inlines wasmi's call path into the sandbox's (a 128 B echo: 4,071 -> \
         3,466 instructions; the floor's crate gets the same setting, 2,802 -> 2,736); the request and \
         response range checks are inlined with their refusals out of line; the capture is asked for its \
         output only when it holds some; a request no longer than the nesting limit skips the opener count. \
         What is left of the echo overhead, by probes on the same build: fuel metering (the floor runs with \
         fuel off; on, the same four calls take ~250 instructions more), wasmi's resumable-call path (~300 more \
         than `TypedFunc::call` for the four), and Contour's checks: the response's one-pass reading and UTF-8 \
         check, the range checks, and the report.\n"
    );
}

/// Iterations of the profile bin's short run, their difference from the long run, and the long run.
const BASE: u64 = contour_benches::PROFILE_BASE_ITERATIONS;
/// See [`BASE`].
const EXTRA: u64 = contour_benches::PROFILE_EXTRA_ITERATIONS;
/// See [`BASE`].
const LONG: u64 = BASE + EXTRA;
