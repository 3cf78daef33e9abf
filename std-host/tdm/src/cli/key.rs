//! `tdm key generate NAME`: a signing key pair in minisign's formats, `NAME.key` (the secret
//! key, readable by its owner only, never overwritten) and `NAME.pub` (the public key), over
//! [`tdm_sdk::publish::generate_key`]. Debian's `minisign` reads both.

use super::args::{GlobalArgs, JsonArg};
use super::pack::publish_error;
use super::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::terminal::{self, outln};
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::PathBuf;
use tdm_sdk::publish::generate_key;

const GENERATE_EXAMPLES: &str = "\
Examples:
  tdm key generate alice             (writes alice.key and alice.pub)
  tdm pack --module plugin.wasm --key alice.key out/plugin
  minisign -V -p alice.pub -m out/plugin/plugin.toml";

/// `tdm key`'s subcommands.
#[derive(Debug, Args)]
pub struct KeyArgs {
    #[command(subcommand)]
    pub(crate) command: KeyCommand,
}

/// `tdm key ...`.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Make a signing key pair: NAME.key (secret, mode 0600, unencrypted) and NAME.pub (public).
    #[command(after_help = GENERATE_EXAMPLES)]
    Generate {
        /// The key pair's path without extension: NAME.key and NAME.pub are written (neither may exist)
        name: PathBuf,
        #[command(flatten)]
        json: JsonArg,
    },
}

/// Runs `tdm key`; the exit code.
pub fn main(args: &KeyArgs, _global: &GlobalArgs) -> u8 {
    let KeyCommand::Generate { name, json } = &args.command;
    generate(name, json.json).unwrap_or_else(|e| e.print(json.json))
}

fn generate(name: &std::path::Path, json: bool) -> Result<u8, CliError> {
    let made = generate_key(name).map_err(publish_error)?;
    if json {
        terminal::out_json(
            &json!({
                "status": "generated", "secretKey": made.secret.display().to_string(),
                "publicKey": made.public.display().to_string(), "keyId": made.key_id, "publisher": made.public_key,
            })
            .to_string(),
        );
        return Ok(EXIT_COMPLETED);
    }
    outln!("secret key: {} (keep it private: it signs as you; `tdm pack --key` takes it)", made.secret.display());
    outln!("public key: {} (give it to whoever checks your packages or hub)", made.public.display());
    outln!("key id: {}", made.key_id);
    Ok(EXIT_COMPLETED)
}
