//! `tdm replay FILE`: re-executes every intent of a recorded session with the inputs the trace
//! holds (the real host is never asked) and prints `replayed N intents: identical` (exit 0), or
//! the first divergence (exit 1). `--show` prints the trace readably instead. A module whose
//! hash is not the trace's is refused unless `--plugin PATH` names it on purpose. A replay
//! runs within a wall-clock limit (`--timeout`; by default twice the trace's deadlines, 10 s to
//! 2 min) and stops on Ctrl-C: a trace names its own budget, so a forged one cannot hold tdm.

use super::args::{GlobalArgs, JsonArg, WorkspaceArg};
use super::report::CliError;
use crate::exit::{EXIT_COMPLETED, EXIT_FAILED};
use crate::terminal::{self, outln};
use clap::Args;
use contour_core::errors::PolicyError;
use contour_core::hex;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;
use tdm_sdk::limits;
use tdm_sdk::session::{ReplayError, ReplayOptions, ReplayRun, Session};
use tdm_sdk::traces::{self, TraceFileError};
use tdm_sdk::workspace::workspace_dir;

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
    /// Wall-clock limit of the whole replay [default: twice the trace's deadlines, 10 s to 120 s]
    #[arg(long, value_name = "SECS", value_parser = limits::parse_timeout, allow_negative_numbers = true)]
    pub(crate) timeout: Option<Duration>,
    /// The most linear memory the trace's policy may allow (a forged trace can name any
    /// limit): bytes or a size with a unit (64MiB, 1GiB)
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = limits::parse_memory, allow_negative_numbers = true)]
    pub(crate) max_memory: u64,
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
        TraceFileError::AboveCeiling(_, PolicyError::AboveCeiling { field: "max_memory_bytes", value, .. }) => {
            CliError::refused(e.to_string())
                .hint(format!("if you trust the trace, pass --max-memory {value} to allow its memory limit"))
        }
        TraceFileError::ModuleNotFound { .. } => CliError::usage(e.to_string())
            .hint("pass --plugin PATH to name the module (the trace names it from where it was recorded)"),
        // The trace file itself: the same words and class as any file tdm is given.
        TraceFileError::File(e) => CliError::from(e),
        // A module that cannot be read or is not valid WebAssembly: what the user named is
        // unusable, as for any file tdm is given.
        TraceFileError::Module(_) => CliError::usage(e.to_string()),
        // A trace that cannot be read (truncated, not a trace, another format version): exit 2,
        // as README says, like a file that cannot be read.
        TraceFileError::Trace(..) => CliError::usage(e.to_string()),
        TraceFileError::AboveCeiling(..) => CliError::refused(e.to_string()),
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
    let options = ReplayOptions {
        plugin: args.plugin.clone(),
        timeout: args.timeout,
        max_memory: args.max_memory,
        workspace: workspace_dir(args.ws.workspace.as_deref()),
        cancel: crate::cli::run::sigint_cancel(),
    };
    let ReplayRun { report, module } = Session::replay(&trace, &args.trace, options).map_err(|e| match e {
        ReplayError::Stopped { path, intent, timed_out: true, limit } => CliError::refused(format!(
            "{}: the replay was stopped after {:.1} s, during intent {} (a trace names its own budget, \
             so the replay is bounded by the clock)",
            path.display(),
            limit.as_secs_f64(),
            intent + 1
        ))
        .hint("pass --timeout SECS to give a slow host (an emulator, say) more time"),
        ReplayError::Stopped { path, intent, timed_out: false, .. } => {
            CliError::refused(format!("{}: replay cancelled (Ctrl-C) during intent {}", path.display(), intent + 1))
        }
        ReplayError::File(e) => error(e),
    })?;
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
