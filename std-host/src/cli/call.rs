//! `tdm call ID METHOD`: one intent of an installed plugin, after the approved-launch check,
//! within its approval; stdout is its outcome as one JSON line, and the call's figures are
//! kept in the workspace.

use super::args::{GlobalArgs, JsonArg, LimitArgs, ParamsArg, RecordArg, SeedArg, WorkspaceArg};
use super::misread;
use super::report::{self, CliError};
use super::run::{refused_at_load, sigint_cancel};
use crate::hints::Front;
use crate::operator;
use crate::params;
use crate::session::{HostFiles, Request, Session, SessionError, SessionOptions};
use crate::terminal::errln;
use crate::workspace::{now_ms, workspace_dir, LastCall, Workspace, WorkspaceError};
use clap::Args;
use contour_core::DEFAULT_MAX_REQUEST_BYTES;

const EXAMPLES: &str = "\
Examples:
  tdm call echo greet --params '{\"name\":\"Ada\"}'
  tdm call json-tools select --params @items.json --stats --json
  tdm call echo greet --fuel 1_000_000 --timeout 1s   (limits may only go below the approval)";

/// `tdm call`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct CallArgs {
    /// The installed plugin's id (`tdm workspace status` lists them)
    pub(crate) id: String,
    /// The intent to run (one its plugin.toml declares)
    #[arg(value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub(crate) method: String,
    #[command(flatten)]
    pub(crate) params: ParamsArg,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
    #[command(flatten)]
    pub(crate) seed: SeedArg,
    #[command(flatten)]
    pub(crate) record: RecordArg,
    #[command(flatten)]
    pub(crate) ws: WorkspaceArg,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// Runs `tdm call`; the exit code.
pub fn main(args: &CallArgs, global: &GlobalArgs) -> u8 {
    call(args, global).unwrap_or_else(|e| e.print(args.json.json))
}

fn call(args: &CallArgs, global: &GlobalArgs) -> Result<u8, CliError> {
    report::check_record(args.record.record.as_deref())?;
    let workspace = Workspace::existing(workspace_dir(args.ws.workspace.as_deref()));
    // A state that cannot be read is reported as it is, before any guess about the id.
    let installed = workspace.read_state()?.plugins.contains_key(&args.id);
    if !installed {
        if let Some(hint) = misread::call_of_file(&args.id, &args.method) {
            return Err(CliError::usage(format!("`{}` is not an installed plugin's id", args.id)).hint(hint));
        }
    }
    let params = params::read(&args.params.source(), u64::from(DEFAULT_MAX_REQUEST_BYTES), std::io::stdin().lock())
        .map_err(|e| CliError::usage(e.to_string()))?;
    let options = SessionOptions {
        limits: args.limits.limits(),
        seed: args.seed.seed,
        cancel: sigint_cancel(),
        grants: Vec::new(),
        host: HostFiles::default(),
        log_level: global.shown_log_level(),
        quiet: global.quiet,
    };
    let session = match Session::open_installed(&workspace, &args.id, options) {
        Ok(session) => session,
        Err(e) => {
            if let SessionError::Workspace(WorkspaceError::NotInstalled(_)) = e {
                return Err(CliError::usage(e.to_string()).hint(misread::unknown_id_for_call(&args.id, &args.method)));
            }
            return refused_at_load(e, Front::Call);
        }
    };
    let mut sandbox = session.sandbox()?;
    report::start_recording(&session, &mut sandbox, args.record.record.as_deref())?;
    let ran = session.run(&mut sandbox, &Request::Intent { method: args.method.clone(), params });
    let _ = session.write_plugin_output(&ran.report, &mut std::io::stderr().lock());
    if args.limits.stats {
        report::print_stats(&ran, args.json.json);
    }
    let outcome = &ran.report.outcome;
    let last = LastCall {
        method: args.method.clone(),
        status: if outcome.is_completed() { "completed" } else { "failed" }.to_string(),
        blocked_reason: outcome.blocked_reason_text().map(str::to_string),
        fuel_used: ran.report.fuel_used,
        peak_memory_bytes: ran.report.peak_memory_bytes,
        duration_us: u64::try_from(ran.elapsed.as_micros()).unwrap_or(u64::MAX),
        at_ms: now_ms(),
    };
    if let Err(e) = operator::record_last_call(&workspace, &args.id, last) {
        errln!("tdm: could not record the call in the workspace: {e}");
    }
    let code = report::print_outcome(&ran.outcome_json(Front::Call), outcome.is_completed());
    Ok(report::finish_recording(&mut sandbox, args.record.record.as_deref(), args.json.json).unwrap_or(code))
}
