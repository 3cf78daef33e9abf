//! Why a session could not be opened, changed or run, and the failed outcome such an error is
//! when it is one (a module refused at load, `not_approved`).

use crate::intents::context::ContextError;
use crate::intents::vault::VaultError;
use crate::limits::AboveApproval;
use crate::module_file::{ModuleFileError, WatError};
use crate::module_kind::OtherKind;
use crate::workspace::WorkspaceError;
use contour_core::errors::TraceError;
use contour_core::{BlockedReason, Failure};
use std::fmt;

/// Why a session could not be opened or changed.
#[derive(Debug)]
pub enum SessionError {
    /// Bad usage: a flag, a permission, a file the user named (exit 2).
    Usage(String),
    /// The module file could not be read (exit 2).
    Read(crate::files::FileError),
    /// The `.wat` text does not compile: an `invalid_module` failure to print (exit 1).
    Wat(WatError),
    /// The module was refused at load: the failure to print (exit 1).
    Load {
        /// The failure.
        failure: Failure,
        /// The kind of module it is when not a plugin (for the hint: what to do instead).
        other_kind: Option<OtherKind>,
    },
    /// An installed plugin may not run: the `not_approved` failure to print (exit 1).
    NotApproved(Failure),
    /// A limit flag above the approval (exit 2).
    AboveApproval(AboveApproval),
    /// The workspace cannot be used (exit 2).
    Workspace(WorkspaceError),
    /// A recording could not be started (exit 2).
    Record(TraceError),
    /// The vault file cannot be used (exit 2).
    Vault(VaultError),
    /// The context file cannot be used (exit 2).
    Context(ContextError),
    /// The plugin's instance could not be launched ([`super::Session::launch`]).
    Launch(Failure),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(message) => f.write_str(message),
            Self::Read(e) => e.fmt(f),
            Self::Wat(e) => write!(f, "{} is not valid WebAssembly text: {e}", e.path.display()),
            Self::Load { failure, .. } | Self::NotApproved(failure) => write!(f, "{}", failure.message()),
            Self::AboveApproval(e) => e.fmt(f),
            Self::Workspace(e) => e.fmt(f),
            Self::Record(e) => e.fmt(f),
            Self::Vault(e) => e.fmt(f),
            Self::Context(e) => e.fmt(f),
            Self::Launch(failure) => write!(f, "{}", failure.message()),
        }
    }
}

impl std::error::Error for SessionError {}

impl SessionError {
    /// The failed outcome this error is, when it is one (a load refusal, `not_approved`).
    pub fn failure(&self) -> Option<Failure> {
        match self {
            Self::Wat(e) => Some(Failure::new(BlockedReason::InvalidModule, e.headline())),
            Self::Load { failure, .. } | Self::NotApproved(failure) => Some(failure.clone()),
            _ => None,
        }
    }

    /// The kind of module it is when a plugin was expected and it is not one (for the hint).
    pub fn other_kind(&self) -> Option<OtherKind> {
        match self {
            Self::Load { other_kind, .. } => *other_kind,
            _ => None,
        }
    }
}

/// Why `:grant` did not add a permission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantError {
    /// An installed plugin runs with its approved permissions.
    Installed,
    /// The permission does not parse (why).
    Permission(String),
}

impl fmt::Display for GrantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Installed => f.write_str(
                ":grant works on a plugin file only; an installed plugin runs with its approved permissions",
            ),
            Self::Permission(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for GrantError {}

impl From<ModuleFileError> for SessionError {
    fn from(e: ModuleFileError) -> Self {
        match e {
            ModuleFileError::File(e) => Self::Read(e),
            ModuleFileError::Wat(e) => Self::Wat(e),
        }
    }
}
