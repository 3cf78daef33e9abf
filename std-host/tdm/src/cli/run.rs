//! `tdm run PLUGIN METHOD`: one intent of a module file; stdout is its outcome as one JSON line.

use super::args::{GlobalArgs, HostArgs, JsonArg, ParamsArg, RecordArg, RunnerArgs};
use super::misread;
use super::report::{self, CliError};
use crate::exit::EXIT_FAILED;
use crate::hints::{self, Front};
use crate::plugin_lines;
use crate::terminal::errln;
use clap::Args;
use std::path::{Path, PathBuf};
use tdm_sdk::environment::Cancel;
use tdm_sdk::session::{outputs_of, Request, RunReport, Session, SessionError, SessionOptions};
use tdm_sdk::workspace::{workspace_dir, AUDIT_FILE};

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
    pub(crate) runner: RunnerArgs,
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
    report::check_record(args.record.record.as_deref(), &outputs_of(&args.host.files()))?;
    let params = args.params.read()?;
    let options = SessionOptions {
        cancel: sigint_cancel(),
        grants: args.grants.clone(),
        host: args.host.files(),
        ..args.runner.session_options(global)
    };
    let mut session = match Session::open_file(&args.plugin, options) {
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
    let how = OneIntent::new(Front::Run, &args.record, &args.runner, args.json);
    let request = Request::Intent { method: args.method.clone(), params };
    one_intent(&mut session, request, &how, |ran| audit_notice(ran, args, global))
}

/// Where a one-off run audited, when the user did not choose (`--audit FILE`): one line on
/// stderr naming the workspace's audit log, when the run made host calls (each one recorded
/// there); a JSON line with `--json`; nothing with `-q`.
fn audit_notice(ran: &RunReport, args: &RunArgs, global: &GlobalArgs) {
    let calls = ran.report.host_calls;
    if args.host.audit.is_some() || calls == 0 || global.quiet {
        return;
    }
    let path = workspace_dir(args.host.ws.workspace.as_deref()).join(AUDIT_FILE);
    if args.json.json {
        let notice = serde_json::json!({"audit": {"file": path.display().to_string(), "hostCalls": calls}});
        crate::terminal::err_json(&notice.to_string());
    } else {
        let s = if calls == 1 { "" } else { "s" };
        errln!("tdm: audit: {calls} host call{s} recorded in {} (choose the file with --audit FILE)", path.display());
    }
}

/// How `tdm run` and `tdm call` run their one intent.
pub(super) struct OneIntent<'a> {
    /// Which hints the outcome may give.
    front: Front,
    /// `--record FILE`.
    record: Option<&'a Path>,
    /// `--stats`.
    stats: bool,
    /// `--json`.
    json: bool,
}

impl<'a> OneIntent<'a> {
    /// What the shared flags ask of the run at `front`.
    pub(super) fn new(front: Front, record: &'a RecordArg, runner: &RunnerArgs, json: JsonArg) -> Self {
        Self { front, record: record.record.as_deref(), stats: runner.limits.stats, json: json.json }
    }
}

/// Runs one intent of an opened session, the walk `tdm run` and `tdm call` share: recorded
/// with `--record`; the plugin's lines and `--stats` on stderr, `after` (what the command keeps
/// of the run), the outcome on stdout, then the trace. The exit code.
pub(super) fn one_intent(
    session: &mut Session,
    request: Request,
    how: &OneIntent<'_>,
    after: impl FnOnce(&RunReport),
) -> Result<u8, CliError> {
    report::start_recording(session, how.record)?;
    let ran = session.run(&request)?;
    let _ = plugin_lines::write(&ran, session.quiet(), &mut std::io::stderr().lock());
    if how.stats {
        report::print_stats(&ran, how.json);
    }
    after(&ran);
    let code = report::print_outcome(&hints::run_json(&ran, how.front), ran.report.outcome.is_completed());
    let outputs = session.outputs();
    Ok(report::finish_recording(session, how.record, &outputs, how.json).unwrap_or(code))
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
    let Some(json) = hints::refusal_json(&e, front) else {
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
