//! `tdm call ID METHOD`: one intent of an installed plugin, after the approved-launch check,
//! within its approval; stdout is its outcome as one JSON line, and the call's figures are
//! kept in the workspace.

use super::args::{GlobalArgs, JsonArg, ParamsArg, RecordArg, RunnerArgs, WorkspaceArg};
use super::misread;
use super::report::{self, CliError};
use super::run::{one_intent, refused_at_load, sigint_cancel, OneIntent};
use crate::hints::Front;
use crate::terminal::errln;
use clap::Args;
use tdm_sdk::operator;
use tdm_sdk::session::{outputs_of, HostFiles, Request, Session, SessionError, SessionOptions};
use tdm_sdk::workspace::{workspace_dir, Workspace, WorkspaceError};

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
    pub(crate) runner: RunnerArgs,
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
    let files = HostFiles { workspace: args.ws.workspace.clone(), ..HostFiles::default() };
    report::check_record(args.record.record.as_deref(), &outputs_of(&files))?;
    let workspace = Workspace::existing(workspace_dir(args.ws.workspace.as_deref()));
    // A state that cannot be read is reported as it is, before any guess about the id.
    let installed = workspace.read_state()?.plugins.contains_key(&args.id);
    if !installed {
        if let Some(hint) = misread::call_of_file(&args.id, &args.method) {
            return Err(CliError::usage(format!("`{}` is not an installed plugin's id", args.id)).hint(hint));
        }
    }
    let params = args.params.read()?;
    let options = SessionOptions { cancel: sigint_cancel(), ..args.runner.session_options(global) };
    let mut session = match Session::open_installed(&workspace, &args.id, options) {
        Ok(session) => session,
        Err(e) => {
            if let SessionError::Workspace(WorkspaceError::NotInstalled(_)) = e {
                return Err(CliError::usage(e.to_string()).hint(misread::unknown_id_for_call(&args.id, &args.method)));
            }
            return refused_at_load(e, Front::Call);
        }
    };
    let how = OneIntent::new(Front::Call, &args.record, &args.runner, args.json);
    one_intent(&mut session, Request::Intent { method: args.method.clone(), params }, &how, |ran| {
        if let Err(e) = operator::record_last_call(&workspace, &args.id, ran.last_call(&args.method)) {
            errln!("tdm: could not record the call in the workspace: {e}");
        }
    })
}
