//! `tdm audit`: the audit log, one record per line (a host-call decision, or an operator's
//! action: install, approve, revoke, uninstall, a refused launch), filtered by plugin, time,
//! denial and kind: a table, or JSON lines with `--json` (the log is a stream and may be long,
//! so it is never gathered in memory: the table reads it twice, once for its columns' widths).

use super::args::{GlobalArgs, JsonArg, WorkspaceArg};
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::table;
use crate::terminal::{self, errln, outln};
use clap::Args;
use serde_json::Value;
use std::path::PathBuf;
use tdm_sdk::intents::audit::visit_entries;
use tdm_sdk::workspace::{workspace_dir, AUDIT_FILE};
use unicode_width::UnicodeWidthStr;

/// `tdm audit`'s flags.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  tdm audit --plugin echo\n  tdm audit --denied --since 2026-12-01\n  tdm audit --operator\n  tdm audit --json | jq 'select(.granted == false)'"
)]
pub struct AuditArgs {
    /// Only this plugin's records
    #[arg(long, value_name = "ID")]
    pub(crate) plugin: Option<String>,
    /// Only records at or after TIME (UTC, RFC 3339 or a prefix of it: 2026-12-03, 2026-12-03T10:00)
    #[arg(long, value_name = "TIME")]
    pub(crate) since: Option<String>,
    /// Only what was refused: denied host calls and refused launches
    #[arg(long)]
    pub(crate) denied: bool,
    /// Only operators' actions (install, approve, revoke, uninstall, refused launches)
    #[arg(long, conflicts_with = "host")]
    pub(crate) operator: bool,
    /// Only host-call decisions
    #[arg(long)]
    pub(crate) host: bool,
    /// The audit file [default: the workspace's audit.jsonl]
    #[arg(long, value_name = "FILE")]
    pub(crate) audit: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) ws: WorkspaceArg,
    /// Print JSON lines, one object per decision (a stream: one line each, not one document)
    #[arg(long)]
    pub(crate) json: bool,
}

/// Runs `tdm audit`; the exit code.
pub fn main(args: &AuditArgs, _global: &GlobalArgs) -> u8 {
    let json = JsonArg { json: args.json };
    audit(args).unwrap_or_else(|e| e.print(json.json))
}

/// The audit table's columns.
const HEADER: [&str; 8] = ["TIME", "PLUGIN", "METHOD", "PERMISSION", "VERDICT", "REASON", "BYTES", "FUEL"];

/// Whether `entry` passes the filters of `args` other than the plugin (which the reader applies).
fn selected(entry: &Value, args: &AuditArgs) -> bool {
    let operator = entry.get("kind").and_then(Value::as_str) == Some("operator");
    if (args.operator && !operator) || (args.host && operator) {
        return false;
    }
    if args.denied && entry.get("granted") != Some(&Value::Bool(false)) {
        return false;
    }
    match &args.since {
        // RFC 3339 UTC times of one shape compare as text.
        Some(since) => entry.get("time").and_then(Value::as_str).is_some_and(|time| time >= since.as_str()),
        None => true,
    }
}

/// An entry's cells, escaped; `Err` with the line for one that is not an audit record.
fn cells(entry: &Value) -> Result<Vec<String>, String> {
    let field = |name: &str| match entry.get(name) {
        None | Some(Value::Null) => "-".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    if entry.get("malformed") == Some(&Value::Bool(true)) {
        // Not a decision at all: said as such, never shown as a denial.
        return Err(format!("(line {} of the log is not an audit record: {})", field("line"), field("error")));
    }
    if entry.get("kind").and_then(Value::as_str) == Some("operator") {
        let verdict = if entry.get("granted") == Some(&Value::Bool(false)) { "REFUSED" } else { "operator" };
        let cells = [
            field("time"),
            field("plugin"),
            field("action"),
            "-".into(),
            verdict.into(),
            field("reason"),
            "-".into(),
            "-".into(),
        ];
        return Ok(cells.iter().map(|c| terminal::escape(c).into_owned()).collect());
    }
    let verdict = match entry.get("granted") {
        Some(Value::Bool(true)) => "granted",
        Some(Value::Bool(false)) => "DENIED",
        _ => "?",
    };
    let cells = [
        field("time"),
        field("plugin"),
        field("method"),
        field("permission"),
        verdict.to_string(),
        field("reason"),
        field("bytes"),
        field("fuel"),
    ];
    Ok(cells.iter().map(|c| terminal::escape(c).into_owned()).collect())
}

fn audit(args: &AuditArgs) -> Result<u8, CliError> {
    let path = args.audit.clone().unwrap_or_else(|| workspace_dir(args.ws.workspace.as_deref()).join(AUDIT_FILE));
    if !path.exists() {
        if !args.json {
            outln!("(no audit log at {})", path.display());
        }
        return Ok(EXIT_COMPLETED);
    }
    let plugin = args.plugin.as_deref();
    let mut matched = 0_u64;
    if args.json {
        // Streamed: one bounded line at a time, never the whole log in memory.
        visit_entries(&path, plugin, |entry| {
            if selected(&entry, args) {
                matched += 1;
                terminal::out_json(&entry.to_string());
            }
        })
        .map_err(|e| CliError::io(e.to_string()))?;
    } else {
        // Two streamed passes: the columns' widths, then the rows (never the log in memory).
        let mut widths: Vec<usize> = HEADER.iter().map(|h| h.width()).collect();
        visit_entries(&path, plugin, |entry| {
            if !selected(&entry, args) {
                return;
            }
            for (width, cell) in widths.iter_mut().zip(cells(&entry).unwrap_or_default()) {
                *width = (*width).max(cell.width());
            }
        })
        .map_err(|e| CliError::io(e.to_string()))?;
        table::fit(&mut widths, table::terminal_width());
        // The cells are escaped already; `outln!` escapes nothing more in them.
        outln!("{}", table::line(&HEADER.map(String::from), &widths));
        visit_entries(&path, plugin, |entry| {
            if !selected(&entry, args) {
                return;
            }
            matched += 1;
            match cells(&entry) {
                Ok(cells) => outln!("{}", table::line(&cells, &widths)),
                Err(line) => outln!("{line}"),
            }
        })
        .map_err(|e| CliError::io(e.to_string()))?;
    }
    if matched == 0 {
        // Said on stderr (stdout keeps its shape: the header, or no JSON line); not an error.
        let filtered = args.since.is_some() || args.denied || args.operator || args.host;
        match plugin {
            Some(plugin) => errln!("tdm: no audit record of plugin `{plugin}` matches in {}", path.display()),
            None if filtered => errln!("tdm: no audit record matches the filters in {}", path.display()),
            None => errln!("tdm: no audit records in {}", path.display()),
        }
    }
    Ok(EXIT_COMPLETED)
}
