//! `dist.read {path}`: the plugin's own `dist/` folder, read-only.
//!
//! Paths are relative to the folder. Absolute paths, `..` components and empty paths are
//! refused up front (`permission_denied`); the open itself goes through cap-std, which also
//! refuses any symlink that leads out of the folder. The file is opened without blocking and
//! must be a regular file (a FIFO, socket or device is a failed answer, at once); a file larger
//! than the cap is refused without being read. The answer is `{"path", "size", "text"}`: assets must be UTF-8 text;
//! other bytes are a `host_intent_failed` answer ("not UTF-8 text"), never raw bytes.

use crate::files::{self, FileError};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use contour_core::{BlockedReason, HostAnswer};
use serde_json::json;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// The plugin's asset folder.
#[derive(Debug, Clone)]
pub struct Dist {
    dir: Option<PathBuf>,
    max_bytes: u64,
}

/// Why a path is refused before the filesystem is touched, if it is.
fn lexical_refusal(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("the path is empty");
    }
    if path.contains('\0') {
        return Some("the path contains a NUL byte");
    }
    // Windows-style roots and drive letters are refused on every OS, so a plugin behaves alike.
    if path.starts_with('/') || path.starts_with('\\') || path.contains(':') {
        return Some("absolute paths are refused; use a path relative to dist/");
    }
    let components = Path::new(path).components();
    for component in components {
        match component {
            Component::ParentDir => return Some("`..` is refused; paths stay inside dist/"),
            Component::RootDir | Component::Prefix(_) => {
                return Some("absolute paths are refused; use a path relative to dist/")
            }
            Component::CurDir | Component::Normal(_) => {}
        }
    }
    if path.split(['/', '\\']).any(|part| part == "..") {
        return Some("`..` is refused; paths stay inside dist/");
    }
    None
}

/// The failed answer for a file that was not read.
fn refusal(path: &str, e: &FileError) -> HostAnswer {
    let failed =
        |why: String| HostAnswer::failed(BlockedReason::HostIntentFailed, format!("dist.read `{path}`: {why}."));
    match e {
        FileError::NotFound { .. } => failed("no such file".into()),
        FileError::NotAFile { kind, .. } => failed(format!("not a file ({kind})")),
        FileError::Changed { .. } => failed("the file was replaced while it was being opened".into()),
        FileError::TooLarge { size, limit, .. } => {
            failed(format!("the file has {size} bytes; the cap is {limit} bytes"))
        }
        FileError::Io { kind: ErrorKind::PermissionDenied, .. } => HostAnswer::failed(
            BlockedReason::Forbidden,
            format!("dist.read `{path}`: the path leads outside dist/ (or the host may not read it); read a file inside the plugin's dist/ folder."),
        ),
        // A path through a file (`a.txt/b`) names nothing, as a missing file does.
        FileError::Io { kind: ErrorKind::NotADirectory, .. } => failed("no such file".into()),
        FileError::Io { message, .. } => failed(message.clone()),
    }
}

impl Dist {
    /// Serves `dir` (if any), answering at most `max_bytes` per read.
    pub fn new(dir: Option<PathBuf>, max_bytes: u64) -> Self {
        Self { dir, max_bytes }
    }

    /// Reads one asset: `{"path": path, "size": bytes, "text": contents}`.
    pub fn read(&self, path: &str) -> HostAnswer {
        let Some(root) = &self.dir else {
            return HostAnswer::failed(BlockedReason::HostIntentFailed, "This plugin has no dist/ folder.");
        };
        if let Some(why) = lexical_refusal(path) {
            return HostAnswer::failed(BlockedReason::Forbidden, format!("dist.read `{path}`: {why}."));
        }
        let dir = match Dir::open_ambient_dir(root, ambient_authority()) {
            Ok(dir) => dir,
            Err(e) => {
                return HostAnswer::failed(
                    BlockedReason::HostIntentFailed,
                    format!("The plugin's dist/ folder cannot be opened: {e}."),
                )
            }
        };
        // Opened without blocking (a FIFO is refused, never waited on), checked to be a regular
        // file and sized from the open handle, then read at most one byte past the cap.
        let shown = Path::new(path);
        let bytes = match files::open_regular_in(&dir, shown, shown)
            .and_then(|(file, size)| files::read_opened(file, size, self.max_bytes, shown))
        {
            Ok(bytes) => bytes,
            Err(e) => return refusal(path, &e),
        };
        let size = bytes.len() as u64;
        match String::from_utf8(bytes) {
            Ok(text) => HostAnswer::ok(json!({ "path": path, "size": size, "text": text })),
            Err(_) => HostAnswer::failed(
                BlockedReason::HostIntentFailed,
                format!("dist.read `{path}`: the file is not UTF-8 text (only text assets can be read)."),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_checks_refuse_escapes() {
        for bad in ["", "/etc/passwd", "..", "../x", "a/../../x", "a/..", "\\x", "C:\\x", "c:x", "a\0b"] {
            assert!(lexical_refusal(bad).is_some(), "{bad:?} passed");
        }
        for good in ["a.txt", "sub/a.txt", "./a.txt", "a..b"] {
            assert!(lexical_refusal(good).is_none(), "{good:?} refused");
        }
    }
}
