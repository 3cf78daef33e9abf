//! `tdm install ID[@VERSION] --hub DIR` or `tdm install PATH`: verifies and copies a package
//! into the workspace as `installed` (pending approval). Nothing of the plugin runs.

use super::args::{GlobalArgs, JsonArg, WorkspaceArg};
use super::misread;
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::terminal::{self, errln, outln};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use tdm_sdk::operator::{self, Source};
use tdm_sdk::package::PackageError;
use tdm_sdk::workspace::{workspace_dir, Workspace};

const EXAMPLES: &str = "\
Examples:
  tdm install echo --hub examples/hub
  tdm install echo@1.0.0 --hub examples/hub --json
  tdm install ./my-plugin          (a folder holding plugin.toml and dist/)";

/// `tdm install`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct InstallArgs {
    /// ID[@VERSION] with --hub, else a package folder
    pub(crate) target: String,
    /// The hub folder (holding index.json)
    #[arg(long, value_name = "DIR")]
    pub(crate) hub: Option<PathBuf>,
    /// Accept a paid plugin's price (it still ends `installed`, pending approval)
    #[arg(long)]
    pub(crate) accept_price: bool,
    #[command(flatten)]
    pub(crate) ws: WorkspaceArg,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// The first `chars` characters of `text` (a hash prefix to show; never splits a character).
pub fn prefix(text: &str, chars: usize) -> &str {
    text.char_indices().nth(chars).map_or(text, |(end, _)| &text[..end])
}

/// Runs `tdm install`; the exit code.
pub fn main(args: &InstallArgs, _global: &GlobalArgs) -> u8 {
    install(args).unwrap_or_else(|e| e.print(args.json.json))
}

fn install(args: &InstallArgs) -> Result<u8, CliError> {
    let source = match &args.hub {
        Some(hub) => {
            let (id, version) = match args.target.split_once('@') {
                Some((id, version)) => (id.to_string(), Some(version.to_string())),
                None => (args.target.clone(), None),
            };
            Source::Hub { hub: hub.clone(), id, version }
        }
        None => {
            if let Some(hint) = misread::install_without_hub(&args.target) {
                return Err(
                    CliError::usage(format!("cannot install {}: no such package folder", args.target)).hint(hint)
                );
            }
            Source::Folder(PathBuf::from(&args.target))
        }
    };
    let workspace = Workspace::open(workspace_dir(args.ws.workspace.as_deref()))?;
    let report = operator::install(&workspace, &source, args.accept_price).map_err(|e| {
        // Only a plugin the hub does not list: an index that does not parse fails `hub list` too.
        let missing = matches!(&e, operator::OperatorError::Package(PackageError::NotInHub(_)));
        let error = CliError::from(e);
        if missing {
            error.hint("`tdm hub list --hub DIR` lists what the hub offers")
        } else {
            error
        }
    })?;
    if let Some(warning) = &report.audit_warning {
        errln!("tdm: warning: {warning}");
    }
    let (_, package) = operator::installed_package(&workspace, &report.id)?;
    let intents: Vec<String> = package.manifest.intents.iter().map(|i| i.name.clone()).collect();
    let state = if report.still_approved { "approved" } else { "installed" };
    if args.json.json {
        terminal::out_json(
            &json!({
                "status": "installed", "id": report.id, "version": report.version, "sha256": report.sha256,
                "state": state, "approvalVoided": report.approval_voided, "intents": intents,
            })
            .to_string(),
        );
        return Ok(EXIT_COMPLETED);
    }
    outln!("installed {}@{} (sha256 {})", report.id, report.version, prefix(&report.sha256, 12));
    if report.approval_voided {
        outln!("its earlier approval no longer covers this module, its permissions, its intents or its limits: approve it again (`tdm approve {}` shows what changed)", report.id);
    }
    if intents.is_empty() {
        outln!("intents: none declared in its plugin.toml, so `tdm call` will refuse every intent");
    } else {
        outln!("intents: {}", intents.join(", "));
    }
    let state = if report.still_approved {
        "approved (same module; permissions and intents within its approval)".to_string()
    } else {
        format!("installed, pending approval: nothing was run (next: tdm approve {})", report.id)
    };
    outln!("state: {state}");
    Ok(EXIT_COMPLETED)
}
