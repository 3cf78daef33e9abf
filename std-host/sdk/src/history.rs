//! The REPL's history of entries (`repl_history` in the workspace), read and written
//! like every other workspace file ([`crate::files`], [`crate::files::output`]): opened without
//! blocking, a regular file only, never through a symlink (a FIFO, a link to `/dev/zero` or to
//! a file outside the workspace is refused with a warning and the REPL starts without it), read
//! up to [`MAX_HISTORY_BYTES`]. The format is rustyline's: a `#V2` line, then one entry per
//! line with `\` and line feeds escaped, so histories written before still read.

use crate::files::output::{self, OutputError};
use crate::files::{self, FileError};
use std::path::Path;

/// The most bytes of history read (1,000 entries of about 1 KiB).
pub const MAX_HISTORY_BYTES: u64 = 1024 * 1024;
/// The most entries kept (the newest).
pub const MAX_ENTRIES: usize = 1000;

const VERSION_LINE: &str = "#V2";

/// The folder and the plain name of the history file at `path`.
fn split(path: &Path) -> (&Path, &str) {
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    (folder, path.file_name().and_then(|n| n.to_str()).unwrap_or(crate::workspace::HISTORY_FILE))
}

/// The entries of the history file at `path`, oldest first (none when it does not exist).
pub fn load(path: &Path) -> Result<Vec<String>, FileError> {
    let (folder, name) = split(path);
    if !folder.is_dir() {
        return Ok(Vec::new());
    }
    let root = cap_std::fs::Dir::open_ambient_dir(folder, cap_std::ambient_authority()).map_err(|e| FileError::Io {
        path: folder.to_path_buf(),
        kind: e.kind(),
        message: e.to_string(),
    })?;
    let (file, size) = match files::open_regular_beneath(&root, Path::new(name), folder, None) {
        Ok(opened) => opened,
        Err(FileError::NotFound { .. }) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let bytes = files::read_opened(file, size, MAX_HISTORY_BYTES, path)?;
    Ok(parse(&String::from_utf8_lossy(&bytes)))
}

/// The entries of history text (rustyline's format; a file without the `#V2` line holds one
/// entry per line, unescaped).
fn parse(text: &str) -> Vec<String> {
    let mut lines = text.lines().peekable();
    let v2 = lines.peek() == Some(&VERSION_LINE);
    if v2 {
        lines.next();
    }
    let mut entries: Vec<String> =
        lines.filter(|line| !line.is_empty()).map(|line| if v2 { unescape(line) } else { line.to_string() }).collect();
    let extra = entries.len().saturating_sub(MAX_ENTRIES);
    entries.drain(..extra);
    entries
}

fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

/// Writes `entries` (oldest first) to the history file at `path`, replacing it; its folder is
/// made when missing.
pub fn save(path: &Path, entries: &[String]) -> Result<(), OutputError> {
    let (folder, name) = split(path);
    std::fs::create_dir_all(folder).map_err(|error| OutputError::Io { path: folder.to_path_buf(), error })?;
    let mut text = String::from(VERSION_LINE);
    text.push('\n');
    for entry in entries.iter().skip(entries.len().saturating_sub(MAX_ENTRIES)) {
        text.push_str(&entry.replace('\\', "\\\\").replace('\n', "\\n"));
        text.push('\n');
    }
    output::replace_in_dir(folder, name, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_with_escapes() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("ws/repl_history");
        let entries = vec!["greet {}".to_string(), "multi\nline \\ entry".to_string()];
        save(&path, &entries).unwrap();
        assert_eq!(load(&path).unwrap(), entries);
        assert!(load(&tmp.path().join("none/repl_history")).unwrap().is_empty());
        assert_eq!(parse("old\nformat\n"), vec!["old", "format"]);
    }
}
