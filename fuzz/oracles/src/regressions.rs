//! The regression corpus replay: every file in `ROOT/TARGET/` (an input that once crashed or hung
//! that fuzz target) runs through the target's function, and every panic (a violated oracle), an
//! unreadable file or a folder that names no target is a failure naming the file.

use crate::targets::Target;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Why one regression input failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The corpus folder or a file in it cannot be read.
    Unreadable {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        error: String,
    },
    /// A folder of the corpus is named after no target.
    UnknownTarget {
        /// The folder.
        path: PathBuf,
    },
    /// The target's oracle panicked on the input.
    Oracle {
        /// The input file.
        path: PathBuf,
        /// The panic message.
        message: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreadable { path, error } => write!(f, "{}: cannot be read: {error}", path.display()),
            Self::UnknownTarget { path } => write!(f, "{}: names no fuzz target", path.display()),
            Self::Oracle { path, message } => write!(f, "{}: the oracle failed: {message}", path.display()),
        }
    }
}

/// What a replay ran: inputs per target, in the corpus's order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// (target, inputs replayed).
    pub targets: Vec<(String, usize)>,
    /// Every failure.
    pub failures: Vec<Failure>,
}

/// The entries of `dir`, sorted, hidden ones (`.gitkeep`) left out.
fn entries(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let unreadable = |e: std::io::Error| Failure::Unreadable { path: dir.to_path_buf(), error: e.to_string() };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        if !path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.')) {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(message), _) => (*message).to_string(),
        (None, Some(message)) => message.clone(),
        (None, None) => String::from("a panic without a message"),
    }
}

/// Replays every input below `root` (one folder per target; files directly in `root`, such as
/// a README, are not inputs) through its target in `targets`.
pub fn replay(root: &Path, targets: &[(&str, Target)]) -> Replayed {
    let mut replayed = Replayed::default();
    let folders = match entries(root) {
        Ok(folders) => folders,
        Err(failure) => {
            replayed.failures.push(failure);
            return replayed;
        }
    };
    for folder in folders.into_iter().filter(|p| p.is_dir()) {
        let name = folder.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some((name, target)) = targets.iter().find(|(n, _)| *n == name) else {
            replayed.failures.push(Failure::UnknownTarget { path: folder });
            continue;
        };
        let inputs = match entries(&folder) {
            Ok(inputs) => inputs,
            Err(failure) => {
                replayed.failures.push(failure);
                continue;
            }
        };
        replayed.targets.push((name.to_string(), inputs.len()));
        for path in inputs {
            match std::fs::read(&path) {
                Err(e) => replayed.failures.push(Failure::Unreadable { path, error: e.to_string() }),
                Ok(data) => {
                    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| target(&data))) {
                        replayed.failures.push(Failure::Oracle { path, message: panic_message(payload.as_ref()) });
                    }
                }
            }
        }
    }
    replayed
}
