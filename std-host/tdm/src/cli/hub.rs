//! `tdm hub list --hub DIR`: a hub folder's plugins, each with the intents its package
//! declares (read from its `plugin.toml`, bounded; nothing runs).

use super::args::{GlobalArgs, JsonArg};
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::table::Table;
use crate::terminal::{self, outln};
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use tdm_sdk::operator::OperatorError;
use tdm_sdk::package::{Hub, HubEntry, IntentInfo, Manifest};

/// `tdm hub`'s subcommands.
#[derive(Debug, Args)]
pub struct HubArgs {
    #[command(subcommand)]
    pub(crate) command: HubCommand,
}

/// `tdm hub ...`.
#[derive(Debug, Subcommand)]
pub enum HubCommand {
    /// List the plugins a hub offers, with their intents.
    #[command(after_help = "Examples:\n  tdm hub list --hub examples/hub\n  tdm hub list --hub examples/hub --json")]
    List {
        /// The hub folder (holding index.json)
        #[arg(long, value_name = "DIR")]
        hub: PathBuf,
        /// `--json`.
        #[command(flatten)]
        json: JsonArg,
    },
}

/// Runs `tdm hub`; the exit code.
pub fn main(args: &HubArgs, _global: &GlobalArgs) -> u8 {
    let HubCommand::List { hub, json } = &args.command;
    list(hub, json.json).unwrap_or_else(|e| e.print(json.json))
}

/// The most intents `hub list` shows of one entry (`intentsNotListed` counts the rest).
const LISTED_INTENTS: usize = 32;

/// What a package says about itself: its name, description and intents.
type SelfDescription = (String, String, Vec<IntentInfo>);

/// What an entry's package says about itself (`None` when its manifest cannot be read): its
/// `plugin.toml` alone, never its module (install reads and verifies that).
fn manifest_of(hub: &Hub, entry: &HubEntry) -> Option<SelfDescription> {
    let relative = Path::new(&entry.path);
    if !relative.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let manifest = Manifest::read(&hub.dir.join(relative)).ok()?;
    Some((manifest.name, manifest.description, manifest.intents))
}

fn list(dir: &Path, json: bool) -> Result<u8, CliError> {
    let hub = Hub::open(dir).map_err(|e| CliError::from(OperatorError::Package(e)))?;
    let mut rows = Vec::new();
    // Each package folder is read once, however many entries name it.
    let mut read: HashMap<&str, Option<SelfDescription>> = HashMap::new();
    for entry in &hub.entries {
        let manifest = read.entry(entry.path.as_str()).or_insert_with(|| manifest_of(&hub, entry)).clone();
        // A listing shows the first intents of each entry: the index is the hub's, and entries
        // naming a package of many intents would otherwise make the listing as large as their
        // product (2,000 entries of 1,000 intents printed 100 MB from a 356 KB hub).
        let declared = manifest.as_ref().map_or(&[][..], |(_, _, intents)| intents.as_slice());
        let intents: Vec<Value> = declared
            .iter()
            .take(LISTED_INTENTS)
            .map(|i| json!({"name": i.name, "description": i.description}))
            .collect();
        rows.push(json!({
            "id": entry.id, "version": entry.version, "sha256": entry.sha256, "price": entry.price.to_string(),
            "path": entry.path,
            "name": manifest.as_ref().map(|m| m.0.clone()),
            "description": manifest.as_ref().map(|m| m.1.clone()),
            "intents": intents,
            "intentsNotListed": declared.len().saturating_sub(LISTED_INTENTS),
        }));
    }
    if json {
        terminal::out_json(&json!({"hub": dir.display().to_string(), "plugins": rows}).to_string());
        return Ok(EXIT_COMPLETED);
    }
    if rows.is_empty() {
        outln!("(the hub lists no plugins)");
        return Ok(EXIT_COMPLETED);
    }
    let mut table = Table::new(&["ID", "VERSION", "PRICE", "SHA256", "INTENTS"]);
    for (entry, row) in hub.entries.iter().zip(&rows) {
        let names: Vec<&str> = row["intents"]
            .as_array()
            .map(|a| a.iter().filter_map(|i| i["name"].as_str()).collect())
            .unwrap_or_default();
        let more = row["intentsNotListed"].as_u64().unwrap_or(0);
        let intents = if row["name"].is_null() {
            "(package unreadable)".to_string()
        } else if names.is_empty() {
            "-".to_string()
        } else if more > 0 {
            format!("{} and {more} more (tdm install shows them all)", names.join(", "))
        } else {
            names.join(", ")
        };
        table.row(vec![
            entry.id.clone(),
            entry.version.clone(),
            entry.price.to_string(),
            format!("sha256:{}", super::install::prefix(&entry.sha256, 12)),
            intents,
        ]);
    }
    table.print();
    Ok(EXIT_COMPLETED)
}
