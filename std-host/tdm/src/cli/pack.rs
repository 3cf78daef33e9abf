//! `tdm pack --module FILE [...] OUTDIR`: a package folder from a module, over
//! [`tdm_sdk::publish::pack`]: `plugin.toml` (intents from the module's `tdm.intents` section
//! or `--intent`, the module's and every asset's sha256), `dist/`, and with `--key` the
//! signature `plugin.toml.minisig`. Exit 0 when written, 1 when the module or the intents are
//! refused, 2 for a flag given wrong or a file that cannot be read or written.

use super::args::{GlobalArgs, JsonArg};
use super::report::{missing_file_hint, CliError};
use crate::exit::EXIT_COMPLETED;
use crate::terminal::{self, outln};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use tdm_sdk::files::FileError;
use tdm_sdk::package::PackageError;
use tdm_sdk::package_copy::CopyError;
use tdm_sdk::publish::{self, IntentFlag, IntentSource, PackOptions, PublishError};

const EXAMPLES: &str = "\
Examples:
  tdm pack --module target/plugins/hello.wasm --version 1.0.0 --key alice.key out/hello
  tdm pack --module echo.wat --id echo --version 1.0.0 --intent 'greet=Echoes its params' --key alice.key out/echo
  tdm pack --module reader.wasm --asset data/ --permission context:read --key alice.key --json out/reader

A module with a tdm.intents section (the guest SDKs write one) declares its intents; --intent
is then optional and, when given, must name exactly the section's intents. Without --key the
package is unsigned, and `tdm install` takes it only with --allow-unsigned.";

/// `tdm pack`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES, disable_version_flag = true)]
pub struct PackArgs {
    /// The plugin module (.wasm, or WebAssembly text named .wat, packed as text)
    #[arg(long, value_name = "FILE")]
    pub(crate) module: PathBuf,
    /// The plugin id [default: the module's file name without its extension]
    #[arg(long, value_name = "ID")]
    pub(crate) id: Option<String>,
    /// Its version: semver MAJOR.MINOR.PATCH[-PRE]
    #[arg(long, value_name = "V", default_value = publish::DEFAULT_VERSION)]
    pub(crate) version: String,
    /// Its display name [default: the id]
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// One paragraph on what it does [default: empty]
    #[arg(long, value_name = "TEXT")]
    pub(crate) description: Option<String>,
    /// A permission it asks for (network:HOST, network:*.DOMAIN, tool:ID, vault:read, context:read); repeatable
    #[arg(long = "permission", value_name = "PERMISSION")]
    pub(crate) permissions: Vec<String>,
    /// An intent it offers, when the module has no tdm.intents section; repeatable
    #[arg(long = "intent", value_name = "NAME[=DESCRIPTION]")]
    pub(crate) intents: Vec<String>,
    /// A file or folder copied under dist/ (a folder as dist/ITS-NAME/) and hashed into plugin.toml; repeatable
    #[arg(long = "asset", value_name = "PATH")]
    pub(crate) assets: Vec<PathBuf>,
    /// The publisher's secret key (NAME.key, from `tdm key generate` or `minisign -G -W`): signs plugin.toml
    #[arg(long, value_name = "NAME.key")]
    pub(crate) key: Option<PathBuf>,
    /// The package folder to write (it must not exist, or be empty)
    pub(crate) out_dir: PathBuf,
    #[command(flatten)]
    pub(crate) json: JsonArg,
}

/// A publishing error as the command line reports it: flags and key files given wrong exit
/// 2, as files that cannot be read or written do; a module, package or hub refused exits 1.
pub(crate) fn publish_error(e: PublishError) -> CliError {
    let hint = e.hint();
    let error = match &e {
        // Its own kind and hint (where the path was looked for).
        PublishError::File(file) => return CliError::from(file.clone()),
        PublishError::Io { .. }
        | PublishError::Copy(CopyError::Io(..))
        | PublishError::Package(PackageError::Io(..) | PackageError::File(FileError::Io { .. })) => {
            CliError::io(e.to_string())
        }
        PublishError::Key { .. }
        | PublishError::PublicKeyGiven(_)
        | PublishError::KeyExists(_)
        | PublishError::Invalid { .. }
        | PublishError::IntentsDisagree(_)
        | PublishError::NoIntents(_)
        | PublishError::NotEmpty(_)
        | PublishError::NoHub(_)
        | PublishError::Package(PackageError::File(FileError::NotFound { .. })) => CliError::usage(e.to_string()),
        _ => CliError::refused(e.to_string()),
    };
    match hint {
        Some(hint) => error.hint(hint),
        None => error,
    }
}

/// Runs `tdm pack`; the exit code.
pub fn main(args: &PackArgs, _global: &GlobalArgs) -> u8 {
    pack(args).unwrap_or_else(|e| e.print(args.json.json))
}

fn pack(args: &PackArgs) -> Result<u8, CliError> {
    let options = PackOptions {
        module: args.module.clone(),
        out_dir: args.out_dir.clone(),
        id: args.id.clone(),
        version: Some(args.version.clone()),
        name: args.name.clone(),
        description: args.description.clone(),
        permissions: args.permissions.clone(),
        intents: args.intents.iter().map(|flag| IntentFlag::parse(flag)).collect(),
        assets: args.assets.clone(),
        key: args.key.clone(),
    };
    let report = publish::pack(&options).map_err(|e| match e {
        PublishError::File(e @ FileError::NotFound { .. }) if e.path() == args.module => {
            let hint = format!(
                "{}; a module is built first (`make examples` builds the examples into target/plugins/)",
                missing_file_hint(e.path())
            );
            CliError::from(e).hint(hint)
        }
        e => publish_error(e),
    })?;
    let from = match report.intents_from {
        IntentSource::Section => "the module's tdm.intents section",
        IntentSource::Flags => "--intent",
    };
    if args.json.json {
        terminal::out_json(
            &json!({
                "status": "packed", "dir": report.dir.display().to_string(), "id": report.id,
                "version": report.version, "name": report.name, "module": report.module, "sha256": report.sha256,
                "manifestSha256": report.manifest_sha256, "intents": report.intents,
                "intentsFrom": if report.intents_from == IntentSource::Section { "section" } else { "flags" },
                "files": report.files, "publisher": report.key_id,
                "signature": report.signature.as_ref().map(|p| p.display().to_string()),
            })
            .to_string(),
        );
        return Ok(EXIT_COMPLETED);
    }
    outln!(
        "packed {}@{} into {} (module {}, sha256 {})",
        report.id,
        report.version,
        report.dir.display(),
        report.module,
        super::install::prefix(&report.sha256, 12)
    );
    outln!("intents (from {from}): {}", report.intents.join(", "));
    if !report.files.is_empty() {
        let files: Vec<&str> = report.files.keys().map(String::as_str).collect();
        outln!("files: {}", files.join(", "));
    }
    match (&report.key_id, &report.signature) {
        (Some(key), Some(signature)) => outln!("signed by key {key}: {}", signature.display()),
        _ => outln!(
            "unsigned: `tdm install` takes it only with --allow-unsigned, and a hub only takes signed packages (sign with --key NAME.key)"
        ),
    }
    Ok(EXIT_COMPLETED)
}
