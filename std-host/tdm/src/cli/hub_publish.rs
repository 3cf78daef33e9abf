//! `tdm hub init` and `tdm hub publish`, the hub owner's side: a hub folder whose
//! `index.json` is signed by the hub's key, and a signed package added to it (the index's
//! serial raised, its expiry renewed, re-signed), over [`tdm_sdk::publish::hub_init`] and
//! [`tdm_sdk::publish::hub_publish`]. A publish checks the index's signature with the key
//! given first, so a wrong key changes nothing. Exit 0 when done (or already published with
//! the same bytes), 1 when a package or the hub is refused, 2 for flags, keys or files given
//! wrong.

use super::args::JsonArg;
use super::pack::publish_error;
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::terminal::{self, outln};
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};
use tdm_sdk::publish::{self, HubReport, DEFAULT_EXPIRES_DAYS};
use tdm_sdk::signing::PublicKey;

const INIT_EXAMPLES: &str = "\
Examples:
  tdm key generate hub
  tdm hub init my-hub --key hub.key
  tdm hub add mine my-hub --key hub.pub      (on each machine that installs from it)";

const PUBLISH_EXAMPLES: &str = "\
Examples:
  tdm pack --module hello.wasm --version 1.0.0 --key alice.key out/hello
  tdm hub publish my-hub out/hello --key hub.key
  tdm hub publish my-hub out/hello --key hub.key --expires-days 30 --json";

/// `tdm hub init`'s flags.
#[derive(Debug, Args)]
#[command(after_help = INIT_EXAMPLES)]
pub struct HubInitArgs {
    /// The hub folder to create (it must not exist, or be empty)
    #[arg(value_name = "DIR")]
    pub(crate) hub: PathBuf,
    /// The hub's secret key (HUB.key, from `tdm key generate HUB`): signs index.json
    #[arg(long, value_name = "HUB.key")]
    pub(crate) key: PathBuf,
    /// Days until the signed index expires (installs then refuse it until the next publish re-signs it)
    #[arg(long, value_name = "DAYS", default_value_t = DEFAULT_EXPIRES_DAYS)]
    pub(crate) expires_days: u32,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// `tdm hub publish`'s flags.
#[derive(Debug, Args)]
#[command(after_help = PUBLISH_EXAMPLES)]
pub struct HubPublishArgs {
    /// The hub folder (from `tdm hub init`)
    #[arg(value_name = "HUB")]
    pub(crate) hub: PathBuf,
    /// The signed package folder to publish (from `tdm pack --key`)
    pub(crate) package: PathBuf,
    /// The hub's secret key (HUB.key): the index's signature must be its own, and it signs the new index
    #[arg(long, value_name = "HUB.key")]
    pub(crate) key: PathBuf,
    /// Days from now until the new index expires
    #[arg(long, value_name = "DAYS", default_value_t = DEFAULT_EXPIRES_DAYS)]
    pub(crate) expires_days: u32,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// Runs `tdm hub init` from its flags; the exit code.
pub fn init_main(args: &HubInitArgs) -> u8 {
    init(&args.hub, &args.key, args.expires_days, args.json.json)
}

/// Runs `tdm hub publish` from its flags; the exit code.
pub fn publish_main(args: &HubPublishArgs) -> u8 {
    publish(&args.hub, &args.package, &args.key, args.expires_days, args.json.json)
}

/// `tdm hub init`: creates the hub folder `dir` with an empty index signed by the secret key
/// at `key`, expiring in `expires_days`; the exit code.
pub fn init(dir: &Path, key: &Path, expires_days: u32, json: bool) -> u8 {
    let report = match publish::hub_init(dir, key, expires_days) {
        Ok(report) => report,
        Err(e) => return publish_error(e).print(json),
    };
    if json {
        terminal::out_json(
            &json!({"status": "created", "hub": dir.display().to_string(), "index": index_json(&report)}).to_string(),
        );
    } else {
        outln!("created hub {} (an empty index: {})", dir.display(), index_line(&report));
    }
    EXIT_COMPLETED
}

/// `tdm hub publish`: adds the signed package folder `package` to the hub folder `dir`,
/// re-signing its index with the secret key at `key`, the new index expiring in
/// `expires_days`; the exit code.
pub fn publish(dir: &Path, package: &Path, key: &Path, expires_days: u32, json: bool) -> u8 {
    publish_checked(dir, package, key, expires_days, json).unwrap_or_else(|e| e.print(json))
}

fn publish_checked(dir: &Path, package: &Path, key: &Path, expires_days: u32, json: bool) -> Result<u8, CliError> {
    let report = publish::hub_publish(dir, package, key, expires_days).map_err(publish_error)?;
    let Some(entry) = &report.published else {
        return Err(CliError::io("the hub reported no entry for the package"));
    };
    let publisher = entry.publisher.as_deref().map(|key| PublicKey::id_of(key).unwrap_or_else(|| key.to_string()));
    if json {
        terminal::out_json(
            &json!({
                "status": if report.unchanged { "unchanged" } else { "published" },
                "hub": dir.display().to_string(), "id": entry.id, "version": entry.version, "path": entry.path,
                "sha256": entry.sha256, "manifestSha256": entry.manifest_sha256, "publisher": publisher,
                "index": index_json(&report),
            })
            .to_string(),
        );
        return Ok(EXIT_COMPLETED);
    }
    if report.unchanged {
        outln!(
            "{}@{} is already published in {} with these very bytes: nothing changed",
            entry.id,
            entry.version,
            dir.display()
        );
        return Ok(EXIT_COMPLETED);
    }
    outln!(
        "published {}@{} to {} (sha256 {}, publisher key {})",
        entry.id,
        entry.version,
        dir.join(&entry.path).display(),
        super::install::prefix(&entry.sha256, 12),
        publisher.as_deref().unwrap_or("none")
    );
    outln!("index: {}", index_line(&report));
    Ok(EXIT_COMPLETED)
}

/// The index's serial, expiry and signer, for `--json`.
fn index_json(report: &HubReport) -> serde_json::Value {
    json!({"serial": report.serial, "expires": report.expires, "key": report.key_id, "plugins": report.plugins})
}

/// The index's serial, expiry and signer, on one line.
fn index_line(report: &HubReport) -> String {
    format!(
        "serial {}, {} plugin(s), expires {}, signed by hub key {}",
        report.serial, report.plugins, report.expires, report.key_id
    )
}
