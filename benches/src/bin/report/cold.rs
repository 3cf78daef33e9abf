//! The report's interleaved cold-start rows (issue 25, item 4), from `target/cold_starts.json`
//! (`make bench` runs the `cold_starts` bin): Contour's lazy load and launch against bare wasmi's,
//! from memory and an installed plugin's from disk, timed in alternating rounds, with the minor
//! page faults of each.

use super::{json_file, time, verdict, Row};
use std::path::Path;

/// The rows, or one saying what to run when the figures are missing.
pub(super) fn rows(target: &Path) -> Vec<Row> {
    let figures = json_file(&target.join("cold_starts.json"));
    let mut rows = Vec::new();
    for (entry_name, bound) in [("small", None), ("large", Some(1.5)), ("installed", Some(1.5))] {
        let metric = if entry_name == "installed" {
            "installed plugin launch from disk, large, lazy, interleaved rounds: `tdm call`'s launch check (state, \
             package read, the module's SHA-256 on a second thread beside its parse), load, sandbox and launch vs \
             wasmi reading the file, Module::new and instantiate on a fresh engine (median of the rounds' ratios)"
                .to_string()
        } else {
            format!(
                "cold start {entry_name}, lazy (the installed-plugin default), interleaved rounds: bytes to a launched \
                 sandbox vs wasmi's Module::new and instantiate (median of the rounds' ratios; minor page faults per \
                 start)"
            )
        };
        let target_text = bound.map_or_else(|| "none".into(), |b| format!("<= {b}x"));
        let entry = figures.as_ref().map(|f| &f[entry_name]);
        let number = |key: &str| entry.and_then(|e| e[key].as_f64());
        let (Some(contour), Some(wasmi), Some(ratio)) = (number("contour_us"), number("wasmi_us"), number("ratio"))
        else {
            rows.push(Row::missing(metric, target_text, "run the cold_starts bin"));
            continue;
        };
        let faults = |key: &str| number(key).map_or_else(|| "-".into(), |f| format!("{f:.0}"));
        rows.push(Row {
            metric,
            contour: format!("{} ({} faults)", time(contour * 1e3), faults("contour_minor_faults")),
            baseline: format!("{} ({} faults)", time(wasmi * 1e3), faults("wasmi_minor_faults")),
            ratio: format!("{ratio:.2}x"),
            target: target_text,
            result: bound.map_or_else(|| "info".into(), |b| verdict(ratio <= b).into()),
        });
    }
    rows
}
