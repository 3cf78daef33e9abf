//! `tdm replay FILE`: re-executes every intent of a recorded session with the inputs the trace
//! holds (the real host is never asked) and prints `replayed N intents: identical` (exit 0), or
//! the first divergence (exit 1). `--show` prints the trace readably instead. A module whose
//! hash is not the trace's is refused unless `--plugin PATH` names it on purpose.

use super::args::{GlobalArgs, JsonArg, WorkspaceArg};
use super::report::CliError;
use crate::exit::{EXIT_COMPLETED, EXIT_FAILED};
use crate::terminal::{self, outln};
use crate::traces::{self, TraceFileError};
use crate::workspace::workspace_dir;
use clap::Args;
use contour_core::trace::hex;
use serde_json::json;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  tdm run plugin.wasm greet --params '{\"name\":\"Ada\"}' --record greet.trace
  tdm replay greet.trace
  tdm replay greet.trace --plugin rebuilt.wasm      (where does the new build diverge?)
  tdm replay greet.trace --show";

/// `tdm replay`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ReplayArgs {
    /// The trace (written by `--record FILE` or the REPL's `:record FILE`)
    pub(crate) trace: PathBuf,
    /// Replay this module instead of the one the trace names (its divergences are reported)
    #[arg(long, value_name = "PATH")]
    pub(crate) plugin: Option<PathBuf>,
    /// Print the trace readably instead of replaying it
    #[arg(long)]
    pub(crate) show: bool,
    #[command(flatten)]
    pub(crate) ws: WorkspaceArg,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// Runs `tdm replay`; the exit code.
pub fn main(args: &ReplayArgs, _global: &GlobalArgs) -> u8 {
    replay(args).unwrap_or_else(|e| e.print(args.json.json))
}

fn error(e: TraceFileError) -> CliError {
    match e {
        TraceFileError::NotTheRecordedModule { .. } => CliError::refused(e.to_string())
            .hint("pass --plugin PATH to replay another module on purpose and see where it diverges"),
        TraceFileError::Trace(..) => CliError::refused(e.to_string()),
        other => CliError::io(other.to_string()),
    }
}

fn replay(args: &ReplayArgs) -> Result<u8, CliError> {
    let trace = traces::read_trace(&args.trace).map_err(error)?;
    if args.show {
        if args.json.json {
            let intents: Vec<_> = trace
                .intents
                .iter()
                .map(|i| {
                    json!({
                        "request": String::from_utf8_lossy(&i.request),
                        "response": String::from_utf8_lossy(&i.response),
                        "reason": i.reason, "fuel": i.fuel, "launchFuel": i.launch_fuel,
                        "peakMemoryBytes": i.peak_memory, "inputs": i.inputs.len(),
                        "cutAtFuel": i.cut.map(|c| c.fuel),
                    })
                })
                .collect();
            let header = &trace.header;
            terminal::out_json(
                &json!({
                    "format": header.format, "contour": header.contour, "wasmi": header.wasmi,
                    "module": header.module, "moduleSha256": hex(&header.module_sha256),
                    "grants": header.grants, "intents": intents,
                })
                .to_string(),
            );
        } else {
            for line in traces::show(&trace) {
                outln!("{line}");
            }
        }
        return Ok(EXIT_COMPLETED);
    }
    let workspace = workspace_dir(args.ws.workspace.as_deref());
    let module = traces::module_for(&trace, &args.trace, args.plugin.as_deref(), &workspace).map_err(error)?;
    let report = traces::replay(&trace, &args.trace, &module).map_err(error)?;
    if args.json.json {
        terminal::out_json(&traces::report_json(&report, &module).to_string());
    } else {
        if !module.is_recorded {
            outln!("note: {} is not the module the trace recorded (its sha256 differs)", module.shown);
        }
        outln!("{}", traces::summary(&report));
    }
    Ok(if report.divergence.is_none() { EXIT_COMPLETED } else { EXIT_FAILED })
}
