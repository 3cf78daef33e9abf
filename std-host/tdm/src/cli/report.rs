//! How a subcommand ends: its error type (what happened, what to do next, which exit code) and
//! the printers every subcommand shares (outcomes, errors, figures), text or `--json`. Every
//! line goes through [`crate::terminal`].

use crate::exit::{EXIT_COMPLETED, EXIT_FAILED, EXIT_USAGE};
use crate::terminal::{self, errln};
use serde_json::{json, Value};
use tdm_sdk::files::output::Outputs;
use tdm_sdk::files::FileError;
use tdm_sdk::hub_fetch::FetchError;
use tdm_sdk::module_file::WatError;
use tdm_sdk::operator::OperatorError;
use tdm_sdk::package::PackageError;
use tdm_sdk::package_copy::CopyError;
use tdm_sdk::session::{RunReport, Session, SessionError};
use tdm_sdk::trusted_hubs::HubError;
use tdm_sdk::workspace::WorkspaceError;

/// What kind of failure ended a subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A flag or argument is wrong (exit 2).
    Usage,
    /// A file or the workspace could not be read or written (exit 2).
    Io,
    /// The request was understood and refused, or what it names is invalid (exit 1).
    Refused,
}

impl ErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Usage => "usage",
            Self::Io => "io",
            Self::Refused => "refused",
        }
    }

    /// The exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Usage | Self::Io => EXIT_USAGE,
            Self::Refused => EXIT_FAILED,
        }
    }
}

/// A subcommand's error: what happened, and (when there is one) the command that fixes it.
#[derive(Debug, Clone)]
pub struct CliError {
    /// The kind (and so the exit code).
    pub(crate) kind: ErrorKind,
    /// What happened, to what.
    pub(crate) message: String,
    /// What to do next: a command or flag that exists.
    pub(crate) hint: Option<String>,
    /// Extra lines shown under the message (a `.wat` error's source line).
    pub(crate) detail: Vec<String>,
}

impl CliError {
    /// A usage error.
    pub fn usage(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Usage, message: message.into(), hint: None, detail: Vec::new() }
    }

    /// An I/O error.
    pub fn io(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Io, message: message.into(), hint: None, detail: Vec::new() }
    }

    /// A refusal.
    pub fn refused(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Refused, message: message.into(), hint: None, detail: Vec::new() }
    }

    /// The same, with a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// A `.wat` error: `FILE:LINE:COL: message` and the source line with a caret.
    pub fn wat(error: &WatError) -> Self {
        let detail = error.snippet().map(|(source, caret)| vec![source, caret]).unwrap_or_default();
        Self { kind: ErrorKind::Refused, message: error.headline(), hint: None, detail }
    }

    /// Prints it: on stderr as text; with `json` also on stdout as one error object.
    pub fn print(&self, json: bool) -> u8 {
        errln!("tdm: error: {}", self.message);
        for line in &self.detail {
            errln!("  {line}");
        }
        if let Some(hint) = &self.hint {
            errln!("tdm: hint: {hint}");
        }
        if json {
            terminal::out_json(&self.json().to_string());
        }
        self.kind.exit_code()
    }

    /// The error object `--json` prints.
    pub fn json(&self) -> Value {
        json!({"status": "error", "error": self.kind.as_str(), "message": self.message, "hint": self.hint})
    }
}

impl From<SessionError> for CliError {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Wat(e) => Self::wat(&e),
            SessionError::Read(e) => Self::from(e),
            SessionError::Workspace(e) => Self::from(e),
            SessionError::AboveApproval(e) => Self::usage(e.to_string()),
            SessionError::Usage(message) => Self::usage(message),
            e @ (SessionError::Vault(_) | SessionError::Context(_) | SessionError::Record(_)) => {
                Self::usage(e.to_string())
            }
            other => Self::refused(other.to_string()),
        }
    }
}

impl From<FileError> for CliError {
    fn from(e: FileError) -> Self {
        match &e {
            FileError::Io { .. } => Self::io(e.to_string()),
            // A file that is not there is an I/O error (exit 2), with where to look.
            FileError::NotFound { path } => Self::io(e.to_string()).hint(missing_file_hint(path)),
            _ => Self::usage(e.to_string()),
        }
    }
}

/// What to do about a file that is not there: the module beside it that was likely meant, or
/// the folder the path was looked up in.
pub fn missing_file_hint(path: &std::path::Path) -> String {
    if let Some(sibling) = super::misread::sibling_module(path) {
        return format!("did you mean {}?", sibling.display());
    }
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).map(std::path::Path::to_path_buf);
    let folder = match folder {
        Some(folder) if folder.is_absolute() => folder,
        Some(folder) => std::env::current_dir().map(|cwd| cwd.join(&folder)).unwrap_or(folder),
        None => std::env::current_dir().unwrap_or_default(),
    };
    if folder.is_dir() {
        format!("check the path: the file is looked for in {}", folder.display())
    } else {
        format!("check the path: there is no folder {}", folder.display())
    }
}

impl From<WorkspaceError> for CliError {
    fn from(e: WorkspaceError) -> Self {
        match e {
            // An id that names nothing is typed wrong, like a file that is not there (exit 2).
            WorkspaceError::NotInstalled(_) => {
                Self::usage(e.to_string()).hint("`tdm workspace status` lists the installed plugins")
            }
            _ => Self::io(e.to_string()),
        }
    }
}

impl From<OperatorError> for CliError {
    /// Operator refusals exit 1; I/O problems exit 2.
    fn from(e: OperatorError) -> Self {
        let kind = match &e {
            OperatorError::Io(..)
            | OperatorError::Copy(CopyError::Io(..))
            | OperatorError::Workspace(WorkspaceError::Io(..) | WorkspaceError::CorruptState(..))
            | OperatorError::Package(PackageError::Io(..) | PackageError::File(FileError::Io { .. }))
            | OperatorError::Hub(
                HubError::Workspace(WorkspaceError::Io(..) | WorkspaceError::CorruptState(..))
                | HubError::Package(PackageError::Io(..) | PackageError::File(FileError::Io { .. }))
                | HubError::Fetch(FetchError::Transport { .. } | FetchError::Timeout { .. } | FetchError::Status { .. }),
            ) => ErrorKind::Io,
            // A hub folder or package file that is not there is a path typed wrong, as for
            // every other file tdm is given (exit 2), not a refusal.
            OperatorError::Package(PackageError::File(FileError::NotFound { .. }))
            | OperatorError::Package(PackageError::NotInHub(_))
            | OperatorError::Hub(HubError::Package(PackageError::File(FileError::NotFound { .. })))
            | OperatorError::Workspace(WorkspaceError::NotInstalled(_)) => ErrorKind::Usage,
            _ => ErrorKind::Refused,
        };
        let error = Self { kind, message: e.to_string(), hint: None, detail: Vec::new() };
        match e {
            OperatorError::Workspace(WorkspaceError::NotInstalled(_)) => {
                error.hint("`tdm workspace status` lists the installed plugins")
            }
            _ => error,
        }
    }
}

/// Checks the `--record` path before the plugin runs ([`tdm_sdk::traces::check_trace_path`]), so
/// a path that cannot be written is the command's one error, not a second document after the
/// outcome.
pub fn check_record(record: Option<&std::path::Path>, outputs: &Outputs) -> Result<(), CliError> {
    match record {
        // A path that cannot be written is a flag given wrong, as a file that is not there is.
        Some(path) => tdm_sdk::traces::check_trace_path(path, outputs).map_err(|e| {
            CliError::usage(format!("--record: {e}"))
                .hint("give --record a file in a folder that exists and tdm can write")
        }),
        None => Ok(()),
    }
}

/// Starts recording the session when `--record` was given.
pub fn start_recording(session: &mut Session, record: Option<&std::path::Path>) -> Result<(), CliError> {
    match record {
        Some(path) => session.start_recording(path).map_err(|e| match e {
            SessionError::Record(e) => CliError::usage(format!("--record: {e}")),
            other => CliError::from(other),
        }),
        None => Ok(()),
    }
}

/// Writes the recorded trace to `record` (after the outcome was printed): `None` when it was
/// written or nothing was recorded, else the exit code of the failure (said on stderr, so
/// stdout keeps its one document).
pub fn finish_recording(
    session: &mut Session,
    record: Option<&std::path::Path>,
    outputs: &Outputs,
    json: bool,
) -> Option<u8> {
    let path = record?;
    let written = match session.stop_recording() {
        Some(Ok(trace)) => tdm_sdk::traces::write_trace(path, &trace, outputs).map(|()| trace.intents.len()),
        Some(Err(e)) => Err(tdm_sdk::traces::TraceFileError::Trace(path.to_path_buf(), e)),
        None => Ok(0),
    };
    match written {
        Ok(intents) => {
            if !json {
                errln!("tdm: recorded {intents} intent(s) to {}", path.display());
            }
            None
        }
        // Said on stderr even with --json: stdout already holds the one document, the outcome.
        Err(e) => Some(CliError::io(e.to_string()).print(false)),
    }
}

/// Prints an outcome (one JSON line on stdout); the exit code it implies.
pub fn print_outcome(json: &str, completed: bool) -> u8 {
    terminal::out_json(json);
    if completed {
        EXIT_COMPLETED
    } else {
        EXIT_FAILED
    }
}

/// Prints the figures of a run on stderr (`--stats`): text, or one JSON object with `json`.
pub fn print_stats(ran: &RunReport, json: bool) {
    if json {
        terminal::write_json(
            &mut std::io::stderr().lock(),
            &json!({"stats": ran.stats_json()}).to_string(),
            terminal::Layout::Line,
        )
        .unwrap_or(());
    } else {
        errln!("tdm: {}", ran.stats_line());
    }
}
