//! `tdm audit`: the audit log, one host-call decision per line: a table, or JSON lines with
//! `--json` (the log is a stream and may be long, so it is never gathered in memory: the table
//! reads it twice, once for its columns' widths).

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
#[command(after_help = "Examples:\n  tdm audit --plugin echo\n  tdm audit --json | jq 'select(.granted == false)'")]
pub struct AuditArgs {
    /// Only this plugin's decisions
    #[arg(long, value_name = "ID")]
    pub(crate) plugin: Option<String>,
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
            matched += 1;
            terminal::out_json(&entry.to_string());
        })
        .map_err(|e| CliError::io(e.to_string()))?;
    } else {
        // Two streamed passes: the columns' widths, then the rows (never the log in memory).
        let mut widths: Vec<usize> = HEADER.iter().map(|h| h.width()).collect();
        visit_entries(&path, plugin, |entry| {
            for (width, cell) in widths.iter_mut().zip(cells(&entry).unwrap_or_default()) {
                *width = (*width).max(cell.width());
            }
        })
        .map_err(|e| CliError::io(e.to_string()))?;
        table::fit(&mut widths, table::terminal_width());
        // The cells are escaped already; `outln!` escapes nothing more in them.
        outln!("{}", table::line(&HEADER.map(String::from), &widths));
        visit_entries(&path, plugin, |entry| {
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
        match plugin {
            Some(plugin) => errln!("tdm: no audit record of plugin `{plugin}` in {}", path.display()),
            None => errln!("tdm: no audit records in {}", path.display()),
        }
    }
    Ok(EXIT_COMPLETED)
}
