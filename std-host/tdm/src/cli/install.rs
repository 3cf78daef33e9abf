//! `tdm install ID[@REQ] --hub NAME` or `tdm install PATH`: verifies and copies a package
//! into the workspace as `installed` (pending approval). Nothing of the plugin runs.

use super::args::{GlobalArgs, JsonArg, WorkspaceArg};
use super::misread;
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::terminal::{self, errln, outln};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use tdm_sdk::operator::{self, InstallOptions, InstallReport, Source};
use tdm_sdk::package::PackageError;
use tdm_sdk::workspace::{workspace_dir, Workspace};

const EXAMPLES: &str = "\
Examples:
  tdm hub add bundled examples/hub --key examples/keys/bundled-hub.pub
  tdm install echo --hub bundled
  tdm install echo@^1.0 --hub bundled --json
  tdm install ./my-plugin          (a folder holding plugin.toml, plugin.toml.minisig and dist/)
  tdm install ./unsigned-plugin --allow-unsigned";

/// `tdm install`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct InstallArgs {
    /// ID[@VERSION or semver requirement such as ^1.2] with --hub, else a package folder
    pub(crate) target: String,
    /// A trusted hub's name (`tdm hub add`), or with --allow-unsigned a hub folder
    #[arg(long, value_name = "NAME|DIR", env = "TDM_HUB")]
    pub(crate) hub: Option<String>,
    /// Accept a paid plugin's price (it still ends `installed`, pending approval)
    #[arg(long)]
    pub(crate) accept_price: bool,
    /// Install an unsigned package, or from a hub folder that is not trusted (the approval card
    /// says it is unsigned)
    #[arg(long)]
    pub(crate) allow_unsigned: bool,
    /// Install a version older than the one installed
    #[arg(long)]
    pub(crate) allow_downgrade: bool,
    #[command(flatten)]
    pub(crate) ws: WorkspaceArg,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// The first `chars` characters of `text` (a hash prefix to show; never splits a character).
pub fn prefix(text: &str, chars: usize) -> &str {
    text.char_indices().nth(chars).map_or(text, |(end, _)| &text[..end])
}

/// Who signed what was installed, as one line.
fn publisher_line(report: &InstallReport) -> String {
    let from = report.hub.as_ref().map_or_else(String::new, |hub| format!(", from the trusted hub {hub}"));
    match &report.publisher {
        Some(key) => format!("publisher: key {key} (signature verified{from})"),
        None => format!("publisher: UNSIGNED (installed with --allow-unsigned{from})"),
    }
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
    let options = InstallOptions {
        accept_price: args.accept_price,
        allow_unsigned: args.allow_unsigned,
        allow_downgrade: args.allow_downgrade,
        upgrade: false,
    };
    let report = operator::install(&workspace, &source, options).map_err(|e| {
        // Only a plugin the hub does not list: an index that does not parse fails `hub list` too.
        let missing = matches!(&e, operator::OperatorError::Package(PackageError::NotInHub(_)));
        let error = CliError::from(e);
        if missing {
            error.hint("`tdm hub list NAME` lists what the hub offers")
        } else {
            error
        }
    })?;
    print_report(&workspace, &report, args.json.json)
}

/// Prints what an install or upgrade did: one JSON document with `--json`, else lines.
pub(crate) fn print_report(workspace: &Workspace, report: &InstallReport, json: bool) -> Result<u8, CliError> {
    if let Some(warning) = &report.audit_warning {
        errln!("tdm: warning: {warning}");
    }
    let (_, package) = operator::installed_package(workspace, &report.id)?;
    let intents: Vec<String> = package.manifest.intents.iter().map(|i| i.name.clone()).collect();
    let state = if report.still_approved { "approved" } else { "installed" };
    if json {
        terminal::out_json(
            &json!({
                "status": "installed", "id": report.id, "version": report.version, "sha256": report.sha256,
                "state": state, "approvalVoided": report.approval_voided, "intents": intents,
                "publisher": report.publisher, "hub": report.hub,
                "publisherChanged": report.publisher_changed.as_ref().map(|(from, to)| json!({"from": from, "to": to})),
            })
            .to_string(),
        );
        return Ok(EXIT_COMPLETED);
    }
    outln!("installed {}@{} (sha256 {})", report.id, report.version, prefix(&report.sha256, 12));
    outln!("{}", publisher_line(report));
    if let Some((from, to)) = &report.publisher_changed {
        let key =
            |k: &Option<String>| k.as_ref().map_or_else(|| "nobody (unsigned)".to_string(), |k| format!("key {k}"));
        errln!(
            "tdm: WARNING: THE PUBLISHER CHANGED. The approved version was signed by {}; this one by {}. \
             The approval is void: approve it again only if you trust the new publisher.",
            key(from),
            key(to)
        );
    }
    if report.approval_voided {
        outln!("its earlier approval no longer covers this module, its permissions, its intents, its limits or its publisher: approve it again (`tdm approve {}` shows what changed)", report.id);
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
