//! `tdm run PLUGIN METHOD`: one intent of a module file; stdout is its outcome as one JSON line.

use super::args::{GlobalArgs, HostArgs, JsonArg, LimitArgs, ParamsArg, RecordArg, SeedArg};
use super::misread;
use super::report::{self, CliError};
use crate::environment::Cancel;
use crate::exit::EXIT_FAILED;
use crate::hints::Front;
use crate::params;
use crate::session::{Request, Session, SessionError, SessionOptions};
use crate::terminal::errln;
use clap::Args;
use contour_core::DEFAULT_MAX_REQUEST_BYTES;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  tdm run examples/echo/echo.wat greet --params '{\"name\":\"Ada\"}'
  tdm run plugin.wasm sum --params @numbers.json --stats
  generate-params | tdm run plugin.wasm sum --params -
  tdm run plugin.wasm fetch --grant network:api.example.com --timeout 2s --max-memory 16MiB";

/// `tdm run`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct RunArgs {
    /// The plugin module (.wasm or .wat)
    pub(crate) plugin: PathBuf,
    /// The intent to run
    #[arg(value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub(crate) method: String,
    #[command(flatten)]
    pub(crate) params: ParamsArg,
    /// Grant a permission for this run (network:HOST, network:*.DOMAIN, tool:ID, vault:read, context:read)
    #[arg(long = "grant", value_name = "PERM")]
    pub(crate) grants: Vec<String>,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
    #[command(flatten)]
    pub(crate) seed: SeedArg,
    #[command(flatten)]
    pub(crate) record: RecordArg,
    #[command(flatten)]
    pub(crate) host: HostArgs,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// Runs `tdm run`; the exit code.
pub fn main(args: &RunArgs, global: &GlobalArgs) -> u8 {
    run(args, global).unwrap_or_else(|e| e.print(args.json.json))
}

fn run(args: &RunArgs, global: &GlobalArgs) -> Result<u8, CliError> {
    report::check_record(args.record.record.as_deref())?;
    let params = params::read(&args.params.source(), u64::from(DEFAULT_MAX_REQUEST_BYTES), std::io::stdin().lock())
        .map_err(|e| CliError::usage(e.to_string()))?;
    let options = SessionOptions {
        limits: args.limits.limits(),
        seed: args.seed.seed,
        cancel: sigint_cancel(),
        grants: args.grants.clone(),
        host: args.host.files(),
        log_level: global.shown_log_level(),
        quiet: global.quiet,
    };
    let session = match Session::open_file(&args.plugin, options) {
        Ok(session) => session,
        Err(SessionError::Read(e)) => {
            let error = CliError::from(e);
            let workspace = args.host.ws.workspace.as_deref();
            let text = args.plugin.to_string_lossy();
            return Err(match misread::run_of_installed(workspace, &text, &args.method) {
                Some(hint) => error.hint(hint),
                None => error,
            });
        }
        Err(e) => {
            if args.record.record.is_some() && !args.json.json {
                errln!("tdm: --record: nothing was recorded (the module did not load, so nothing ran)");
            }
            return refused_at_load(e, Front::Run);
        }
    };
    let mut sandbox = session.sandbox()?;
    report::start_recording(&session, &mut sandbox, args.record.record.as_deref())?;
    let ran = session.run(&mut sandbox, &Request::Intent { method: args.method.clone(), params });
    let _ = session.write_plugin_output(&ran.report, &mut std::io::stderr().lock());
    if args.limits.stats {
        report::print_stats(&ran, args.json.json);
    }
    let code = report::print_outcome(&ran.outcome_json(Front::Run), ran.report.outcome.is_completed());
    Ok(report::finish_recording(&mut sandbox, args.record.record.as_deref(), args.json.json).unwrap_or(code))
}

/// The cancel flag of a one-intent command: set by SIGINT, so Ctrl-C (or `kill -INT`) stops
/// the intent at its next deadline check and the command prints the cancelled outcome and
/// exits 1 like any failed intent (a second SIGINT exits 130 at once). Without the handler (it
/// could not be installed) Ctrl-C ends the process as usual.
pub(crate) fn sigint_cancel() -> Option<Cancel> {
    Cancel::on_sigint()
        .map_err(|e| errln!("tdm: warning: Ctrl-C cannot cancel the intent here ({e}): it ends tdm"))
        .ok()
}

/// A session that did not open: a module refused at load (or not approved) prints its failed
/// outcome (a `.wat` error also its line on stderr) and exits 1; anything else is an error.
pub fn refused_at_load(e: SessionError, front: Front) -> Result<u8, CliError> {
    let Some(json) = e.outcome_json(front) else {
        return Err(CliError::from(e));
    };
    if let SessionError::Wat(wat) = &e {
        let error = CliError::wat(wat);
        errln!("tdm: error: {}", error.message);
        for line in &error.detail {
            errln!("  {line}");
        }
    }
    report::print_outcome(&json, false);
    Ok(EXIT_FAILED)
}
