//! dist-reader: uses a host intent. `read {path?}` reads a text file of the plugin's own
//! `dist/` folder through `dist.read` (default `greeting.txt`) and answers `{path, text}`. A
//! refused or failed read (`..`, a missing file) passes the host's failed outcome on.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use serde::{Deserialize, Serialize};
use tdm_plugin::{host, Failure};

/// The params of `read`.
#[derive(Deserialize)]
struct ReadParams {
    /// A path relative to `dist/`.
    #[serde(default = "default_path")]
    path: String,
}

fn default_path() -> String {
    "greeting.txt".into()
}

/// The output of `read`.
#[derive(Serialize)]
struct Text {
    path: String,
    text: String,
}

/// `read {path?}`: the bundled file's text.
fn read(params: ReadParams) -> Result<Text, Failure> {
    let file = host::dist_read(&params.path)?;
    Ok(Text { path: file.path, text: file.text })
}

tdm_plugin::plugin! { "read" => read }
