//! Why a session could not be opened or changed, and the failed outcome such an error is when
//! it is one (a module refused at load, `not_approved`), with the hint its front end gives.

use crate::hints::{self, Front};
use crate::limits::AboveApproval;
use crate::module_file::{ModuleFileError, WatError};
use crate::module_kind::OtherKind;
use crate::workspace::WorkspaceError;
use contour_core::{BlockedReason, Failure, Outcome};
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

    /// The failed outcome's JSON as printed at `front`, when this error is one.
    pub fn outcome_json(&self, front: Front) -> Option<String> {
        let failure = self.failure()?;
        let other_kind = match self {
            Self::Load { other_kind, .. } => *other_kind,
            _ => None,
        };
        let wat = matches!(self, Self::Wat(_));
        let context = hints::Context { at_load: true, other_kind, wat, ..hints::Context::default() };
        Some(hints::outcome_json(&Outcome::from_failure(failure), front, context).into_owned())
    }
}

impl From<ModuleFileError> for SessionError {
    fn from(e: ModuleFileError) -> Self {
        match e {
            ModuleFileError::File(e) => Self::Read(e),
            ModuleFileError::Wat(e) => Self::Wat(e),
        }
    }
}
