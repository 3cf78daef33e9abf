//! Where a user's workspace lives (state, vault, context, audit log): `--workspace DIR`, else
//! `$TDM_WORKSPACE`, else the platform data directory (`$XDG_DATA_HOME/tdm` or
//! `~/.local/share/tdm`).

use std::path::{Path, PathBuf};

/// The workspace folder's file names.
pub const AUDIT_FILE: &str = "audit.jsonl";
/// The vault file in the workspace.
pub const VAULT_FILE: &str = "vault.json";
/// The operator context file in the workspace.
pub const CONTEXT_FILE: &str = "context.json";

/// Resolves the workspace folder (it may not exist yet).
pub fn workspace_dir(flag: Option<&Path>) -> PathBuf {
    if let Some(dir) = flag {
        return dir.to_path_buf();
    }
    if let Some(dir) = std::env::var_os("TDM_WORKSPACE").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(data) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(data).join("tdm");
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(home) => PathBuf::from(home).join(".local/share/tdm"),
        None => PathBuf::from(".tdm"),
    }
}
