//! What kind of module some bytes are, for the hint a refusal gives: a TDM plugin (`tdm run`), a
//! WASI command (`tdm exec`) or an Extism plugin (another ABI). Each is judged by core's own
//! load checks, never by guessing from names.

use contour_core::{Plugin, Policy, Profile};

/// Whether `bytes` is a plugin: it passes the marketplace profile's checks.
pub fn is_plugin(bytes: &[u8]) -> bool {
    Plugin::inspect(bytes, &Policy::default(), Profile::Marketplace).is_ok_and(|i| i.failures.is_empty())
}

/// Whether `bytes` is a WASI command rather than a plugin (it passes the command profile).
pub fn is_command(bytes: &[u8]) -> bool {
    Plugin::inspect(bytes, &Policy::default(), Profile::Command).is_ok_and(|i| i.failures.is_empty())
}

/// Whether `bytes` is an Extism plugin: it imports from Extism's host modules.
pub fn is_extism(bytes: &[u8]) -> bool {
    Plugin::inspect(bytes, &Policy::default(), Profile::Marketplace)
        .is_ok_and(|i| i.imports.iter().any(|import| import.module.starts_with("extism:")))
}

/// A kind of module other than a TDM plugin, which a refusal's hint names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtherKind {
    /// A WASI command: `tdm exec` runs it.
    Command,
    /// An Extism plugin: another ABI.
    Extism,
}

/// What other kind of module `bytes` are, if one (a command is judged first).
pub fn other_kind(bytes: &[u8]) -> Option<OtherKind> {
    if is_command(bytes) {
        Some(OtherKind::Command)
    } else if is_extism(bytes) {
        Some(OtherKind::Extism)
    } else {
        None
    }
}
