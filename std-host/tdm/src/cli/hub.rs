//! `tdm hub`: trusting hubs by key (`add`, `remove`, `list`), and a hub's plugins (`list NAME`
//! verified, `list --hub DIR` unverified), each with the intents its package declares (read
//! from its `plugin.toml`, bounded; nothing runs).

use super::args::WorkspaceArg;
use super::args::{GlobalArgs, JsonArg};
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::table::Table;
use crate::terminal::{self, outln};
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use tdm_sdk::hub::{Hub, HubEntry};
use tdm_sdk::operator::OperatorError;
use tdm_sdk::package::{IntentInfo, Manifest};
use tdm_sdk::signing::PublicKey;
use tdm_sdk::trusted_hubs::{self, HubError, OpenedHub};
use tdm_sdk::workspace::{workspace_dir, Workspace};

/// `tdm hub`'s subcommands.
#[derive(Debug, Args)]
pub struct HubArgs {
    #[command(subcommand)]
    pub(crate) command: HubCommand,
}

/// `tdm hub ...`.
#[derive(Debug, Subcommand)]
pub enum HubCommand {
    /// Trust a hub by its key: its index must be signed by KEY, fresh, and never older than seen.
    #[command(
        after_help = "Examples:\n  tdm hub add bundled examples/hub --key examples/keys/bundled-hub.pub\n  tdm hub add acme https://hub.example.com/tdm --key acme-hub.pub --timeout 60"
    )]
    Add {
        /// A name for the hub (letters, digits, `-`, `_`, `.`)
        name: String,
        /// The hub: a folder, or an https:// URL (http:// only on this machine), holding index.json and index.json.minisig
        location: String,
        /// The hub's minisign public key file (HUB.pub)
        #[arg(long, value_name = "HUB.pub")]
        key: PathBuf,
        /// How long one read of the hub (an index, or one package) may take, in seconds
        #[arg(long, value_name = "SECS", default_value_t = tdm_sdk::hub_fetch::DEFAULT_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..=3600))]
        timeout: u64,
        #[command(flatten)]
        ws: WorkspaceArg,
        #[command(flatten)]
        json: JsonArg,
    },
    /// List the trusted hubs, or the plugins a hub offers (verified, by NAME; or a folder, unverified, by --hub).
    #[command(
        after_help = "Examples:\n  tdm hub list\n  tdm hub list bundled\n  tdm hub list --hub examples/hub --json"
    )]
    List {
        /// A trusted hub's name
        name: Option<String>,
        /// A hub folder read without verifying its signature
        #[arg(long, value_name = "DIR", conflicts_with = "name")]
        hub: Option<PathBuf>,
        #[command(flatten)]
        ws: WorkspaceArg,
        #[command(flatten)]
        json: JsonArg,
    },
    /// Make an empty hub folder with a signed index (for publishers).
    Init(super::hub_publish::HubInitArgs),
    /// Add a signed package to a hub folder and re-sign its index (for publishers).
    Publish(super::hub_publish::HubPublishArgs),
    /// Stop trusting a hub (installed plugins and their approvals stay).
    #[command(after_help = "Examples:\n  tdm hub remove bundled\n  tdm hub remove bundled --json")]
    Remove {
        /// The trusted hub's name
        name: String,
        #[command(flatten)]
        ws: WorkspaceArg,
        #[command(flatten)]
        json: JsonArg,
    },
}

/// Runs `tdm hub`; the exit code.
pub fn main(args: &HubArgs, _global: &GlobalArgs) -> u8 {
    let (result, json) = match &args.command {
        HubCommand::Add { name, location, key, timeout, ws, json } => {
            (add(name, location, key, *timeout, ws, json.json), json.json)
        }
        HubCommand::List { name, hub, ws, json } => {
            (list_command(name.as_deref(), hub.as_deref(), ws, json.json), json.json)
        }
        HubCommand::Remove { name, ws, json } => (remove(name, ws, json.json), json.json),
        HubCommand::Init(args) => return super::hub_publish::init_main(args),
        HubCommand::Publish(args) => return super::hub_publish::publish_main(args),
    };
    result.unwrap_or_else(|e| e.print(json))
}

fn open_workspace(ws: &WorkspaceArg) -> Result<Workspace, CliError> {
    Ok(Workspace::open(workspace_dir(ws.workspace.as_deref()))?)
}

fn hub_error(e: HubError) -> CliError {
    CliError::from(OperatorError::Hub(e))
}

fn add(name: &str, location: &str, key: &Path, timeout: u64, ws: &WorkspaceArg, json: bool) -> Result<u8, CliError> {
    let key = PublicKey::read(key).map_err(|e| CliError::usage(format!("--key {}: {e}", key.display())))?;
    let workspace = open_workspace(ws)?;
    let hub = trusted_hubs::add(&workspace, name, location, &key, timeout).map_err(hub_error)?;
    if json {
        terminal::out_json(
            &json!({"status": "added", "name": name, "location": hub.location, "key": key.id(), "serial": hub.serial})
                .to_string(),
        );
    } else {
        outln!("trusted hub {name}: {} (key {}, index serial {})", hub.location, key.id(), hub.serial);
    }
    Ok(EXIT_COMPLETED)
}

fn remove(name: &str, ws: &WorkspaceArg, json: bool) -> Result<u8, CliError> {
    let workspace = open_workspace(ws)?;
    let hub = trusted_hubs::remove(&workspace, name).map_err(hub_error)?;
    if json {
        terminal::out_json(&json!({"status": "removed", "name": name, "location": hub.location}).to_string());
    } else {
        outln!("no longer trusted: hub {name} ({}); installed plugins stay", hub.location);
    }
    Ok(EXIT_COMPLETED)
}

fn list_command(name: Option<&str>, dir: Option<&Path>, ws: &WorkspaceArg, json: bool) -> Result<u8, CliError> {
    let opened = match (name, dir) {
        (Some(name), _) => trusted_hubs::open(&open_workspace(ws)?, name, false).map_err(hub_error)?,
        (None, Some(dir)) => OpenedHub::unverified(dir).map_err(hub_error)?,
        (None, None) => return trusted(ws, json),
    };
    list(&opened, json)
}

/// `tdm hub list`: the trusted hubs.
fn trusted(ws: &WorkspaceArg, json: bool) -> Result<u8, CliError> {
    let state = open_workspace(ws)?.read_state()?;
    let key_id = |key: &str| PublicKey::id_of(key).unwrap_or_else(|| "(unreadable key)".to_string());
    if json {
        let hubs: Vec<Value> = state
            .hubs
            .iter()
            .map(|(name, hub)| json!({"name": name, "location": hub.location, "key": key_id(&hub.key), "serial": hub.serial}))
            .collect();
        terminal::out_json(&json!({ "hubs": hubs }).to_string());
        return Ok(EXIT_COMPLETED);
    }
    if state.hubs.is_empty() {
        outln!("(no trusted hubs: `tdm hub add NAME LOCATION --key HUB.pub` trusts one)");
        return Ok(EXIT_COMPLETED);
    }
    let mut table = Table::new(&["NAME", "LOCATION", "KEY", "SERIAL"]);
    for (name, hub) in &state.hubs {
        table.row(vec![name.clone(), hub.location.clone(), key_id(&hub.key), hub.serial.to_string()]);
    }
    table.print();
    Ok(EXIT_COMPLETED)
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

fn list(opened: &OpenedHub, json: bool) -> Result<u8, CliError> {
    let hub = &opened.hub;
    let dir = &hub.dir;
    // An HTTP hub's packages are not fetched to list them (one request per entry).
    let remote = tdm_sdk::hub_fetch::is_url(&opened.location);
    let mut rows = Vec::new();
    // Each package folder is read once, however many entries name it.
    let mut read: HashMap<&str, Option<SelfDescription>> = HashMap::new();
    for entry in &hub.entries {
        let manifest = if remote {
            None
        } else {
            read.entry(entry.path.as_str()).or_insert_with(|| manifest_of(hub, entry)).clone()
        };
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
            "publisher": entry.publisher.as_deref().map(|k| PublicKey::id_of(k).unwrap_or_default()),
            "name": manifest.as_ref().map(|m| m.0.clone()),
            "description": manifest.as_ref().map(|m| m.1.clone()),
            "intents": intents,
            "intentsNotListed": declared.len().saturating_sub(LISTED_INTENTS),
        }));
    }
    if json {
        terminal::out_json(
            &json!({
                "hub": dir.display().to_string(), "trusted": opened.trusted, "signer": opened.signer,
                "serial": hub.serial, "expires": hub.expires, "plugins": rows,
            })
            .to_string(),
        );
        return Ok(EXIT_COMPLETED);
    }
    match (&opened.trusted, &opened.signer) {
        (Some(name), Some(key)) => outln!(
            "hub {name}: index serial {} signed by key {key}, expires {} (verified)",
            hub.serial.unwrap_or(0),
            hub.expires.as_deref().unwrap_or("-")
        ),
        _ => outln!("hub {}: NOT VERIFIED (read as it is; `tdm hub add` trusts a hub by key)", dir.display()),
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
            if remote {
                "(not fetched: `tdm install` reads the package)".to_string()
            } else {
                "(package unreadable)".to_string()
            }
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
