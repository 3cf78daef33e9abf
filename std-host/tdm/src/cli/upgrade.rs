//! `tdm outdated` (what the trusted hubs offer newer than what is installed) and `tdm upgrade
//! ID` (install it: the approval stays only when the same publisher signed it and nothing
//! widened).

use super::args::{GlobalArgs, JsonArg, WorkspaceArg};
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::table::Table;
use crate::terminal::{self, errln, outln};
use clap::Args;
use serde_json::json;
use tdm_sdk::upgrades::{self, UpgradeError};
use tdm_sdk::workspace::{workspace_dir, Workspace};

/// `tdm outdated`'s flags.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  tdm outdated\n  tdm outdated --json")]
pub struct OutdatedArgs {
    #[command(flatten)]
    pub(crate) ws: WorkspaceArg,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// `tdm upgrade`'s flags.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  tdm upgrade echo\n  tdm upgrade echo --json")]
pub struct UpgradeArgs {
    /// The installed plugin's id
    pub(crate) id: String,
    /// Accept a paid version's price
    #[arg(long)]
    pub(crate) accept_price: bool,
    #[command(flatten)]
    pub(crate) ws: WorkspaceArg,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// Runs `tdm outdated`; the exit code (0, also when a hub could not be read: it is named).
pub fn outdated(args: &OutdatedArgs, _global: &GlobalArgs) -> u8 {
    run_outdated(args).unwrap_or_else(|e| e.print(args.json.json))
}

fn run_outdated(args: &OutdatedArgs) -> Result<u8, CliError> {
    let workspace = Workspace::open(workspace_dir(args.ws.workspace.as_deref()))?;
    let report = upgrades::outdated(&workspace)?;
    let (found, failed) = (&report.plugins, &report.unreadable);
    if args.json.json {
        let plugins: Vec<_> = found
            .iter()
            .map(|o| json!({"id": o.id, "installed": o.installed, "available": o.available, "hub": o.hub}))
            .collect();
        let hubs: Vec<_> = failed.iter().map(|(hub, why)| json!({"hub": hub, "error": why})).collect();
        terminal::out_json(&json!({"outdated": plugins, "unreadableHubs": hubs}).to_string());
        return Ok(EXIT_COMPLETED);
    }
    for (hub, why) in failed {
        errln!("tdm: warning: hub {hub} could not be read: {why}");
    }
    if found.is_empty() {
        outln!("every plugin installed from a trusted hub is at the newest version it lists");
        return Ok(EXIT_COMPLETED);
    }
    let mut table = Table::new(&["ID", "INSTALLED", "AVAILABLE", "HUB"]);
    for o in found {
        table.row(vec![o.id.clone(), o.installed.clone(), o.available.clone(), o.hub.clone()]);
    }
    table.print();
    Ok(EXIT_COMPLETED)
}

/// Runs `tdm upgrade`; the exit code (0 also when nothing newer is listed).
pub fn upgrade(args: &UpgradeArgs, _global: &GlobalArgs) -> u8 {
    run_upgrade(args).unwrap_or_else(|e| e.print(args.json.json))
}

fn run_upgrade(args: &UpgradeArgs) -> Result<u8, CliError> {
    let workspace = Workspace::open(workspace_dir(args.ws.workspace.as_deref()))?;
    match upgrades::upgrade(&workspace, &args.id, args.accept_price) {
        Ok(report) => super::install::print_report(&workspace, &report, args.json.json),
        Err(UpgradeError::Operator(e)) => Err(CliError::from(e)),
        Err(e @ UpgradeError::UpToDate { .. }) => {
            if args.json.json {
                terminal::out_json(&json!({"status": "up to date", "id": args.id}).to_string());
            } else {
                outln!("{e}");
            }
            Ok(EXIT_COMPLETED)
        }
        Err(e @ UpgradeError::NoHub(_)) => Err(CliError::usage(e.to_string())),
    }
}
