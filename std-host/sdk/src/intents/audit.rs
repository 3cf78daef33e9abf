//! The audit log: one JSON line per host-call decision, appended to a file:
//! `{"time", "plugin", "hash", "method", "permission", "granted", "bytes", "fuel", "reason"}`,
//! with `time` in RFC 3339 UTC (milliseconds); `caller` when the run was asked for by someone the
//! host names (`tdm mcp`: the MCP client's name) and `trace` when it is being recorded (the
//! trace file that replays it). The record core hands over carries no params,
//! so no secret value (nor any header or body) can reach the file. A write error is reported
//! once per log as a [`Notice`] (tdm prints it on stderr), never a panic, and never stops the
//! plugin.

use super::{Notice, Notices, PluginIdentity};
use crate::files::{self, FileError};
use contour_core::AuditRecord;
use serde_json::{json, Value};
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where decisions are appended.
#[derive(Debug, Clone, Default)]
pub struct AuditLog {
    path: Option<PathBuf>,
    /// Who asked for the run, and where it is recorded (see [`Tag`]).
    tag: Tag,
    warned: bool,
    /// Where a write error is reported.
    notices: Notices,
}

/// What the host adds to each entry of a run, besides the decision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tag {
    /// Who asked for the run (`tdm mcp`: `mcp:` and the client's name, text a client chose).
    pub caller: Option<String>,
    /// The trace file the run is recorded to.
    pub trace: Option<String>,
}

/// `unix_ms` as RFC 3339 UTC with milliseconds, e.g. `2024-05-01T12:00:00.000Z`.
pub fn rfc3339_utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm), proleptic Gregorian calendar.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        unix_ms % 1000
    )
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl AuditLog {
    /// Appends to `path` (none: decisions are not recorded).
    pub fn new(path: Option<PathBuf>) -> Self {
        Self { path, tag: Tag::default(), warned: false, notices: Notices::default() }
    }

    /// Adds `tag`'s members to every entry.
    pub fn with_tag(mut self, tag: Tag) -> Self {
        self.tag = tag;
        self
    }

    /// Reports a write error into `notices` (a sandbox's, shared with its log).
    pub fn with_notices(mut self, notices: Notices) -> Self {
        self.notices = notices;
        self
    }

    /// The file decisions are appended to, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The JSON entry of one decision.
    pub fn entry(identity: &PluginIdentity, record: &AuditRecord, unix_ms: u64) -> Value {
        Self::entry_for(identity, record, unix_ms, &Tag::default())
    }

    /// [`AuditLog::entry`] with `tag`'s members.
    pub fn entry_for(identity: &PluginIdentity, record: &AuditRecord, unix_ms: u64, tag: &Tag) -> Value {
        let mut entry = json!({
            "time": rfc3339_utc(unix_ms),
            "plugin": identity.id,
            "hash": identity.hash,
            "method": record.method,
            "permission": record.permission,
            "granted": record.granted,
            "bytes": record.bytes,
            "fuel": record.fuel_used,
            "reason": record.reason.map(contour_core::BlockedReason::as_str),
        });
        if let Some(caller) = &tag.caller {
            entry["caller"] = json!(caller);
        }
        if let Some(trace) = &tag.trace {
            entry["trace"] = json!(trace);
        }
        entry
    }

    /// The JSON entry of an operator's action on plugin `id` (`kind: "operator"`; `action`:
    /// `install`, `approve`, `revoke`, `uninstall`, or `refused_launch` with the refusal's
    /// `reason` and why in `detail`), beside the host-call decisions, which have no `kind`.
    pub fn operator_entry(
        action: &str,
        id: &str,
        version: &str,
        hash: &str,
        refusal: Option<&str>,
        unix_ms: u64,
    ) -> Value {
        let mut entry = json!({
            "time": rfc3339_utc(unix_ms),
            "kind": "operator",
            "plugin": id,
            "hash": hash,
            "version": version,
            "action": action,
            "granted": refusal.is_none(),
        });
        if let Some(why) = refusal {
            entry["reason"] = json!(contour_core::BlockedReason::NotApproved.as_str());
            entry["detail"] = json!(why);
        }
        entry
    }

    /// Appends an operator's action (see [`AuditLog::operator_entry`]) to the log at `path`;
    /// an error when it cannot be written.
    pub fn append_operator(path: &Path, entry: &Value) -> Result<(), String> {
        let mut line = entry.to_string();
        line.push('\n');
        files::output::append(path, line.as_bytes()).map_err(|e| e.to_string())
    }

    /// Appends one decision.
    pub fn append(&mut self, identity: &PluginIdentity, record: &AuditRecord) {
        let Some(path) = &self.path else {
            return;
        };
        let mut line = Self::entry_for(identity, record, now_ms(), &self.tag).to_string();
        line.push('\n');
        // One write of the whole line on an O_APPEND file: concurrent writers do not interleave.
        // Opened non-blocking: a FIFO without a reader is an error, never a wait.
        // A regular file only: a FIFO with a reader or a device is refused, not written.
        if let Err(e) = files::output::append(path, line.as_bytes()) {
            if !self.warned {
                self.warned = true;
                let notice = Notice::AuditUnwritable { path: path.clone(), error: e.to_string() };
                if let Ok(mut held) = self.notices.lock() {
                    held.push(notice);
                }
            }
        }
    }
}

/// The longest audit line `tdm audit` parses; a longer one (an entry is ~300 bytes) is reported
/// as malformed and skipped without being held in memory.
pub const MAX_AUDIT_LINE_BYTES: usize = 64 * 1024;

/// Reads one line (without its `\n`) into `line`, keeping at most `max` bytes. Returns `None`
/// at the end, else whether the line was longer than `max` (the rest was skipped).
fn read_line_bounded(reader: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> std::io::Result<Option<bool>> {
    line.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(any.then_some(too_long));
        }
        any = true;
        let (chunk, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(end) => (&buffer[..end], Some(end + 1)),
            None => (buffer, None),
        };
        let room = max.saturating_sub(line.len());
        if chunk.len() > room {
            too_long = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(buffer.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(too_long));
        }
    }
}

/// Streams the audit log at `path` line by line, handing `each` the entries of `plugin` (all
/// when `None`). Only the bytes present when it is opened are read, one line of at most
/// [`MAX_AUDIT_LINE_BYTES`] at a time; the file must be a regular file (never a FIFO). A
/// missing file has no entries. A line that is not a JSON object (or is too long) is not
/// skipped silently: it comes as `{"malformed": true, "line": N, "error": "..."}` whatever the
/// filter, so tampering shows.
pub fn visit_entries(path: &Path, plugin: Option<&str>, mut each: impl FnMut(Value)) -> Result<(), AuditReadError> {
    let (file, size) = match files::open_regular(path) {
        Ok(opened) => opened,
        Err(FileError::NotFound { .. }) => return Ok(()),
        Err(e) => return Err(AuditReadError::Open(e)),
    };
    let mut reader = BufReader::new(file.take(size));
    let mut line = Vec::new();
    let mut index = 0usize;
    loop {
        let too_long = match read_line_bounded(&mut reader, &mut line, MAX_AUDIT_LINE_BYTES) {
            Ok(Some(too_long)) => too_long,
            Ok(None) => return Ok(()),
            Err(e) => return Err(AuditReadError::Read(path.to_path_buf(), e)),
        };
        index += 1;
        if too_long {
            let error = format!("the line is longer than {MAX_AUDIT_LINE_BYTES} bytes");
            each(json!({ "malformed": true, "line": index, "error": error }));
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(entry @ Value::Object(_)) => {
                if plugin.is_none_or(|id| entry.get("plugin").and_then(Value::as_str) == Some(id)) {
                    each(entry);
                }
            }
            Ok(_) => each(json!({ "malformed": true, "line": index, "error": "not a JSON object" })),
            Err(e) => each(json!({ "malformed": true, "line": index, "error": e.to_string() })),
        }
    }
}

/// Why the audit log could not be read.
#[derive(Debug)]
pub enum AuditReadError {
    /// It cannot be opened as a regular file.
    Open(FileError),
    /// Reading it failed part way.
    Read(PathBuf, std::io::Error),
}

impl fmt::Display for AuditReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Open(e) => write!(f, "the audit log: {e}"),
            Self::Read(path, e) => write!(f, "cannot read the audit log {}: {e}", path.display()),
        }
    }
}

impl std::error::Error for AuditReadError {}

/// [`visit_entries`] collected into a vector (for tests and small logs).
pub fn read_entries(path: &Path, plugin: Option<&str>) -> Result<Vec<Value>, AuditReadError> {
    let mut entries = Vec::new();
    visit_entries(path, plugin, |entry| entries.push(entry))?;
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn formats_rfc3339() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_utc(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(rfc3339_utc(1_714_564_800_000), "2024-05-01T12:00:00.000Z");
    }

    #[test]
    fn reads_back_and_flags_malformed_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut log = AuditLog::new(Some(path.clone()));
        let record = AuditRecord {
            method: "log".into(),
            permission: None,
            granted: true,
            bytes: 10,
            fuel_used: 5,
            reason: None,
        };
        log.append(&PluginIdentity { id: "a".into(), hash: "00".into() }, &record);
        log.append(&PluginIdentity { id: "b".into(), hash: "11".into() }, &record);
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"garbage\n[1]\n").unwrap();
        let all = read_entries(&path, None).unwrap();
        assert_eq!(all.len(), 4);
        let a = read_entries(&path, Some("a")).unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a[0]["plugin"], "a");
        assert_eq!(a[0]["fuel"], 5);
        assert_eq!(a[1]["malformed"], true);
        assert!(read_entries(&dir.path().join("none"), None).unwrap().is_empty());
        // An unwritable path warns once and does not panic.
        let mut bad = AuditLog::new(Some(dir.path().join("no/such/dir/audit.jsonl")));
        bad.append(&PluginIdentity { id: "a".into(), hash: "00".into() }, &record);
        bad.append(&PluginIdentity { id: "a".into(), hash: "00".into() }, &record);
    }
}
