//! `tdm workspace status`: every installed plugin's state, intents, permissions, limits and
//! last call; the workspace path and the audit log's size. `--json` prints one object.

use super::args::{GlobalArgs, JsonArg, WorkspaceArg};
use super::install::prefix;
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::table::Table;
use crate::terminal::{self, outln};
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use tdm_sdk::limits::format_size;
use tdm_sdk::operator;
use tdm_sdk::package::Package;
use tdm_sdk::workspace::{workspace_dir, InstalledPlugin, PluginState, Workspace, AUDIT_FILE};

/// `tdm workspace`'s subcommands.
#[derive(Debug, Args)]
pub struct WorkspaceCommand {
    #[command(subcommand)]
    pub(crate) command: WorkspaceSub,
}

/// `tdm workspace ...`.
#[derive(Debug, Subcommand)]
pub enum WorkspaceSub {
    /// Every plugin's state, intents, permissions, limits and last call; the workspace path and audit size.
    #[command(after_help = "Examples:\n  tdm workspace status\n  tdm workspace status --json | jq '.plugins[].state'")]
    Status {
        /// `--json`.
        #[command(flatten)]
        json: JsonArg,
        /// `--workspace`.
        #[command(flatten)]
        ws: WorkspaceArg,
    },
}

/// Runs `tdm workspace`; the exit code.
pub fn main(args: &WorkspaceCommand, _global: &GlobalArgs) -> u8 {
    let WorkspaceSub::Status { json, ws } = &args.command;
    status(ws, json.json).unwrap_or_else(|e| e.print(json.json))
}

fn names(row: &Value, key: &str) -> String {
    let items: Vec<&str> = row[key]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().or_else(|| v["name"].as_str())).collect())
        .unwrap_or_default();
    if row[key].is_null() {
        "?".to_string()
    } else if items.is_empty() {
        "-".to_string()
    } else {
        items.join(",")
    }
}

fn status(ws: &WorkspaceArg, json: bool) -> Result<u8, CliError> {
    let workspace = Workspace::existing(workspace_dir(ws.workspace.as_deref()));
    let state = workspace.read_state()?;
    let audit_path = workspace.dir.join(AUDIT_FILE);
    let audit_bytes = std::fs::metadata(&audit_path).map_or(0, |m| m.len());
    let rows: Vec<Value> = state.plugins.iter().map(|(id, plugin)| row(&workspace, id, plugin)).collect();
    if json {
        terminal::out_json(
            &json!({"workspace": workspace.dir.display().to_string(), "auditLogBytes": audit_bytes, "plugins": rows})
                .to_string(),
        );
        return Ok(EXIT_COMPLETED);
    }
    outln!("workspace: {}", workspace.dir.display());
    if audit_path.exists() {
        outln!("audit log: {} ({audit_bytes} bytes)", audit_path.display());
    } else {
        outln!("audit log: none yet (it will be {})", audit_path.display());
    }
    if rows.is_empty() {
        outln!("no plugins installed (tdm install ID --hub NAME, or tdm install PATH)");
        return Ok(EXIT_COMPLETED);
    }
    table(&rows).print();
    Ok(EXIT_COMPLETED)
}

/// One installed plugin as `--json` shows it (the table is made from the same values).
fn row(workspace: &Workspace, id: &str, plugin: &InstalledPlugin) -> Value {
    // One read of the package gives the state, the limits and the intents shown.
    let files = operator::read_installed(workspace, plugin).ok();
    let plugin_state = operator::state_on_disk(plugin, files.as_ref());
    let package = files.and_then(|f| Package::verify(f).ok());
    // A package that no longer reads or verifies has no limits or intents to show: null
    // (`?` in the table), never the defaults, which could read as more than was approved.
    let limits = package.as_ref().map_or(Value::Null, |p| {
        let policy = p.policy();
        json!({
            "maxMemoryBytes": policy.max_memory_bytes,
            "fuelPerIntent": policy.fuel_per_intent,
            "timeoutMs": policy.timeout_ms,
        })
    });
    let intents = package.as_ref().map_or(Value::Null, |p| {
        p.manifest.intents.iter().map(|i| json!({"name": i.name, "description": i.description})).collect()
    });
    // What a call runs with: everything it asks for, when all of it is approved (never an
    // approved permission a later version stopped asking for).
    let granted: Vec<String> = match plugin_state {
        PluginState::Approved => plugin.requested.clone(),
        _ => Vec::new(),
    };
    json!({
        "id": id,
        "version": plugin.version,
        "hash": plugin.sha256,
        "hashPrefix": prefix(&plugin.sha256, 12),
        "state": plugin_state.as_str(),
        "intents": intents,
        "requested": plugin.requested,
        "granted": granted,
        "price": plugin.price,
        "limits": limits,
        "lastCall": plugin.last_call.as_ref().map(|c| json!({
            "method": c.method,
            "status": c.status,
            "blockedReason": c.blocked_reason,
            "fuelUsed": c.fuel_used,
            "peakMemoryBytes": c.peak_memory_bytes,
            "durationUs": c.duration_us,
        })),
    })
}

/// The status table of `rows`.
fn table(rows: &[Value]) -> Table {
    let mut table =
        Table::new(&["ID", "VERSION", "HASH", "STATE", "INTENTS", "REQUESTED", "GRANTED", "LIMITS", "LAST CALL"]);
    for row in rows {
        let limits = match &row["limits"] {
            Value::Null => "?".to_string(),
            limits => format!(
                "{} fuel={} {}ms",
                format_size(limits["maxMemoryBytes"].as_u64().unwrap_or(0)),
                limits["fuelPerIntent"],
                limits["timeoutMs"]
            ),
        };
        let last = match &row["lastCall"] {
            Value::Null => "-".to_string(),
            c => format!(
                "{} {} fuel={} mem={} {}us",
                c["method"].as_str().unwrap_or(""),
                c["blockedReason"].as_str().unwrap_or(c["status"].as_str().unwrap_or("")),
                c["fuelUsed"],
                c["peakMemoryBytes"],
                c["durationUs"]
            ),
        };
        let text = |key: &str| row[key].as_str().unwrap_or("").to_string();
        table.row(vec![
            text("id"),
            text("version"),
            text("hashPrefix"),
            text("state"),
            names(row, "intents"),
            names(row, "requested"),
            names(row, "granted"),
            limits,
            last,
        ]);
    }
    table
}
