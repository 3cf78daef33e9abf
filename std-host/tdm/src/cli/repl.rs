//! `tdm repl PLUGIN|ID`: opens a session on a module file or an installed plugin (within its
//! approval) and hands it to [`crate::repl`].

use super::args::{GlobalArgs, HostArgs, RunnerArgs};
use super::misread::{self, Target};
use super::report::CliError;
use super::run::refused_at_load;
use crate::hints::Front;
use crate::terminal::errln;
use clap::Args;
use std::path::Path;
use tdm_sdk::environment::Cancel;
use tdm_sdk::session::{Session, SessionError, SessionOptions};
use tdm_sdk::workspace::{workspace_dir, Workspace, WorkspaceError};

const EXAMPLES: &str = "\
Examples:
  tdm repl examples/echo/echo.wat            then: greet {\"name\": \"Ada\"}, :intents, :help
  tdm repl echo                              an installed, approved plugin, within its approval
  printf 'greet {}\\nsum [1,2]\\n' | tdm repl plugin.wasm    one JSON line per entry on stdout";

/// `--stats` as the REPL takes it: it has no `--json`, and prints each intent's figures anyway.
const STATS_HELP: &str = "Accepted as on `tdm run`: the REPL prints every intent's fuel, memory and time anyway \
     (:stats sums them)";

/// `tdm repl`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES, mut_arg("stats", |a| a.help(STATS_HELP)))]
pub struct ReplArgs {
    /// A module file (.wasm or .wat), or the id of an installed, approved plugin
    pub(crate) target: String,
    /// Grant a permission (module files only; an installed plugin runs with its approval)
    #[arg(long = "grant", value_name = "PERM")]
    pub(crate) grants: Vec<String>,
    #[command(flatten)]
    pub(crate) runner: RunnerArgs,
    #[command(flatten)]
    pub(crate) host: HostArgs,
}

/// Runs `tdm repl`; the exit code.
pub fn main(args: &ReplArgs, global: &GlobalArgs) -> u8 {
    repl(args, global).unwrap_or_else(|e| e.print(false))
}

fn repl(args: &ReplArgs, global: &GlobalArgs) -> Result<u8, CliError> {
    let workspace_flag = args.host.ws.workspace.as_deref();
    let options = SessionOptions {
        cancel: Some(Cancel::new()),
        grants: args.grants.clone(),
        host: args.host.files(),
        ..args.runner.session_options(global)
    };
    let opened = match misread::target(workspace_flag, &args.target) {
        Target::File => Session::open_file(Path::new(&args.target), options).map(|s| (s, Front::ReplFile)),
        Target::MissingFile => {
            let hint = misread::sibling_module(Path::new(&args.target)).map_or_else(
                || "give the path of a .wasm or .wat module, or the id of an installed plugin".to_string(),
                |sibling| format!("did you mean {}?", sibling.display()),
            );
            return Err(CliError::usage(format!("cannot read {}: no such file", args.target)).hint(hint));
        }
        Target::Installed | Target::Unknown => {
            let workspace = Workspace::existing(workspace_dir(workspace_flag));
            Session::open_installed(&workspace, &args.target, options).map(|s| (s, Front::ReplInstalled))
        }
    };
    let session = match opened {
        Ok((session, _)) => session,
        Err(e @ (SessionError::Load { .. } | SessionError::Wat(_) | SessionError::NotApproved(_))) => {
            let front = if Path::new(&args.target).is_file() { Front::ReplFile } else { Front::ReplInstalled };
            return refused_at_load(e, front);
        }
        Err(e @ SessionError::Workspace(WorkspaceError::NotInstalled(_))) => {
            return Err(CliError::usage(e.to_string()).hint(misread::unknown_id_for_repl(&args.target)))
        }
        Err(e) => return Err(e.into()),
    };
    if args.runner.limits.stats {
        errln!("tdm: --stats: the REPL prints every intent's figures already (:stats sums them)");
    }
    let history = Some(workspace_dir(workspace_flag).join("repl_history"));
    crate::repl::run(session, history).map_err(CliError::io)
}
