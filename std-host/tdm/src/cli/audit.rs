//! `tdm audit`: the audit log, one host-call decision per line: a table, or JSON lines with
//! `--json` (the log is a stream and may be long, so it is never gathered in memory).

use super::args::{GlobalArgs, JsonArg, WorkspaceArg};
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::terminal::{self, outln};
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

/// Column widths of the streamed table: fixed, since rows are printed as they are read (a
/// wider cell pushes its row's later columns right, never the header's).
const WIDTHS: [usize; 5] = [24, 16, 13, 24, 8];

fn pad(text: &str, width: usize) -> String {
    let shown = terminal::escape(text);
    let fill = width.saturating_sub(shown.width());
    format!("{shown}{}", " ".repeat(fill))
}

fn audit(args: &AuditArgs) -> Result<u8, CliError> {
    let path = args.audit.clone().unwrap_or_else(|| workspace_dir(args.ws.workspace.as_deref()).join(AUDIT_FILE));
    if !path.exists() {
        if !args.json {
            outln!("(no audit log at {})", path.display());
        }
        return Ok(EXIT_COMPLETED);
    }
    if !args.json {
        let header = ["TIME", "PLUGIN", "METHOD", "PERMISSION", "VERDICT"];
        let cells: Vec<String> = header.iter().zip(WIDTHS).map(|(h, w)| pad(h, w)).collect();
        outln!("{}  BYTES FUEL", cells.join("  "));
    }
    // Streamed: one bounded line at a time, never the whole log in memory.
    visit_entries(&path, args.plugin.as_deref(), |entry| {
        if args.json {
            terminal::out_json(&entry.to_string());
            return;
        }
        let field = |name: &str| match entry.get(name) {
            None | Some(Value::Null) => "-".to_string(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
        };
        if entry.get("malformed") == Some(&Value::Bool(true)) {
            // Not a decision at all: said as such, never shown as a denial.
            outln!("(line {} of the log is not an audit record: {})", field("line"), field("error"));
            return;
        }
        let verdict = match entry.get("granted") {
            Some(Value::Bool(true)) => "granted",
            Some(Value::Bool(false)) => "DENIED",
            _ => "?",
        };
        let cells = [field("time"), field("plugin"), field("method"), field("permission"), verdict.to_string()];
        let cells: Vec<String> = cells.iter().zip(WIDTHS).map(|(c, w)| pad(c, w)).collect();
        // The cells are escaped already; `outln!` escapes nothing more in them.
        outln!("{}  {} {}", cells.join("  "), field("bytes"), field("fuel"));
    })
    .map_err(|e| CliError::io(e.to_string()))?;
    Ok(EXIT_COMPLETED)
}
