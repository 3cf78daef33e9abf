//! The operator's decisions on an installed plugin: `tdm approve ID` (shows what is approved:
//! hash, permissions, limits, intents; asks on a terminal unless `--yes`), `tdm revoke ID`,
//! `tdm uninstall ID`.

use super::args::{GlobalArgs, JsonArg, WorkspaceArg};
use super::report::CliError;
use crate::exit::{EXIT_COMPLETED, EXIT_FAILED};
use crate::table::Table;
use crate::terminal::{self, errln, outln};
use clap::Args;
use contour_core::Policy;
use serde_json::json;
use std::io::IsTerminal;
use tdm_sdk::changes::changes_since;
use tdm_sdk::limits::format_size;
use tdm_sdk::operator::{self, OperatorError};
use tdm_sdk::package::Package;
use tdm_sdk::workspace::{workspace_dir, Workspace};

/// `tdm approve`'s flags.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  tdm approve echo\n  tdm approve echo --yes --json   (for scripts)")]
pub struct ApproveArgs {
    /// The plugin id
    pub(crate) id: String,
    /// Approve without asking (for scripts)
    #[arg(long)]
    pub(crate) yes: bool,
    #[command(flatten)]
    pub(crate) ws: WorkspaceArg,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// `tdm revoke` / `tdm uninstall`'s flags.
#[derive(Debug, Args)]
pub struct IdArgs {
    /// The plugin id
    pub(crate) id: String,
    #[command(flatten)]
    pub(crate) ws: WorkspaceArg,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

fn open(ws: &WorkspaceArg) -> Result<Workspace, CliError> {
    Ok(Workspace::existing(workspace_dir(ws.workspace.as_deref())))
}

/// The limits an approval shows, on one line.
pub fn limits_line(policy: &Policy) -> String {
    format!(
        "memory {}, fuel {} per intent, deadline {} ms, request {}, response {}",
        format_size(policy.max_memory_bytes),
        policy.fuel_per_intent,
        policy.timeout_ms,
        format_size(u64::from(policy.max_request_bytes)),
        format_size(u64::from(policy.max_response_bytes))
    )
}

/// Runs `tdm approve`; the exit code.
pub fn approve(args: &ApproveArgs, _global: &GlobalArgs) -> u8 {
    run_approve(args).unwrap_or_else(|e| e.print(args.json.json))
}

/// The card's publisher line: the key whose signature verified, or a warning that nobody
/// signed the package.
fn publisher_line(package: &Package) -> String {
    match &package.files.publisher {
        Some((key, _)) => {
            format!("key {} (minisign; its signature of plugin.toml verified; the approval binds it)", key.id())
        }
        None => "UNSIGNED: nobody vouches for who made this package (installed with --allow-unsigned)".to_string(),
    }
}

fn run_approve(args: &ApproveArgs) -> Result<u8, CliError> {
    let workspace = open(&args.ws)?;
    let (installed, package) = operator::installed_package(&workspace, &args.id)?;
    // What changed since the last approval (one that no longer holds, or one an install
    // voided): shown before the card, so what a new approval would widen is read first.
    let base = installed.approval.as_ref().or(installed.voided.as_ref());
    let changes = base.map(|approved| changes_since(approved, &package)).unwrap_or_default();
    let permissions: Vec<String> = package.requested.iter().map(ToString::to_string).collect();
    let manifest = &package.manifest;
    // With --json, stdout holds one JSON document: what is to be approved and the question go
    // to stderr, where the operator at the terminal still reads them.
    let show = |line: &str| if args.json.json { terminal::err_line(line) } else { terminal::out_line(line) };
    if !args.json.json || !args.yes {
        if !changes.is_empty() {
            show("changed since the last approval:");
            for change in &changes {
                let widens = if change.widens() { "  (widens)" } else { "" };
                show(&format!("  {change}{widens}"));
            }
        }
        show(&format!("plugin:      {} {} ({})", manifest.id, manifest.version, manifest.name));
        show(&format!("module:      sha256 {}", manifest.sha256));
        show(&format!("publisher:   {}", publisher_line(&package)));
        show(&format!(
            "permissions: {}",
            if permissions.is_empty() { "none".to_string() } else { permissions.join(", ") }
        ));
        show(&format!("limits:      {}", limits_line(&package.policy())));
        if manifest.intents.is_empty() {
            show("intents:     none declared (no intent can be called)");
        } else {
            show("intents:");
            let mut table = Table::new(&["INTENT", "DESCRIPTION"]);
            for intent in &manifest.intents {
                table.row(vec![intent.name.clone(), intent.description.clone()]);
            }
            for line in table.lines() {
                show(&format!("  {line}"));
            }
            for line in super::inspect::declaration_lines(&manifest.intents) {
                show(&format!("  {line}"));
            }
        }
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(CliError::usage("refusing to approve without a terminal to confirm on")
                .hint(format!("pass --yes to approve from a script: tdm approve {} --yes", args.id)));
        }
        let question = "Approve this plugin to run with exactly these permissions and intents? [y/N] ";
        if args.json.json {
            terminal::err_prompt(question);
        } else {
            terminal::out_prompt(question);
        }
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer).map_err(|e| CliError::io(format!("reading the answer failed: {e}")))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            if args.json.json {
                terminal::out_json(&json!({"status": "not approved", "id": args.id}).to_string());
            } else {
                outln!("not approved");
            }
            return Ok(EXIT_FAILED);
        }
    }
    if let Some(warning) = operator::approve(&workspace, &args.id, &package)? {
        errln!("tdm: warning: {warning}");
    }
    if args.json.json {
        let intents: Vec<&str> = manifest.intents.iter().map(|i| i.name.as_str()).collect();
        let policy = package.policy();
        terminal::out_json(
            &json!({
                "status": "approved", "id": args.id, "version": manifest.version, "sha256": package.sha256,
                "publisher": package.files.publisher.as_ref().map(|(key, _)| key.id()),
                "permissions": permissions, "intents": intents,
                "declared": manifest.intents.iter().map(super::inspect::intent_json).collect::<Vec<_>>(),
                "changes": changes.iter().map(|c| json!({"change": c.to_string(), "widens": c.widens()})).collect::<Vec<_>>(),
                "limits": {"maxMemoryBytes": policy.max_memory_bytes, "fuelPerIntent": policy.fuel_per_intent, "timeoutMs": policy.timeout_ms},
            })
            .to_string(),
        );
    } else {
        outln!("approved {}", args.id);
    }
    Ok(EXIT_COMPLETED)
}

/// Runs a one-id operator command and reports it.
fn operate(
    args: &IdArgs,
    action: fn(&Workspace, &str) -> Result<Option<String>, OperatorError>,
    status: &str,
    done: &str,
) -> u8 {
    let result = open(&args.ws).and_then(|workspace| Ok(action(&workspace, &args.id)?));
    if let Ok(Some(warning)) = &result {
        errln!("tdm: warning: {warning}");
    }
    match result.map(drop) {
        Ok(()) if args.json.json => {
            terminal::out_json(&json!({"status": status, "id": args.id}).to_string());
            EXIT_COMPLETED
        }
        Ok(()) => {
            outln!("{}", done.replace("{}", &args.id));
            EXIT_COMPLETED
        }
        Err(e) => e.print(args.json.json),
    }
}

/// Runs `tdm revoke`; the exit code.
pub fn revoke(args: &IdArgs, _global: &GlobalArgs) -> u8 {
    operate(args, operator::revoke, "revoked", "revoked {}: it will not run until approved again")
}

/// Runs `tdm uninstall`; the exit code.
pub fn uninstall(args: &IdArgs, _global: &GlobalArgs) -> u8 {
    operate(args, operator::uninstall, "uninstalled", "uninstalled {} (the audit log is kept)")
}
