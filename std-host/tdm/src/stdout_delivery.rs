//! Whether everything `tdm` printed on stdout got there. Every printer of stdout (the
//! terminal writers, tables, completion scripts) reports its write here instead of
//! dropping the error; when the command ends, stdout is flushed and a failed write (a closed
//! stdout, a reader that went away (`EPIPE`), a full disk) turns the exit code into 2 with one
//! line on stderr: an outcome or a JSON document that never arrived is not a success.

use crate::exit::EXIT_USAGE;
use std::io::{self, Write};
use std::sync::OnceLock;

/// The first stdout write that failed, as its error's message.
static FAILED: OnceLock<String> = OnceLock::new();

/// Records the result of a write to stdout (only the first failure is kept).
pub fn note(result: io::Result<()>) {
    if let Err(e) = result {
        let _ = FAILED.set(e.to_string());
    }
}

/// Notes a stdout that was closed when tdm started (`tdm ... >&-`). Rust's runtime opens
/// `/dev/null` read-write on a closed standard descriptor (so no file tdm opens later lands on
/// it), and writes there succeed: on Linux that `/dev/null` is told from a `> /dev/null` the
/// user chose by its access mode (a shell opens it write-only). Elsewhere nothing is noted.
pub fn note_closed_at_start() {
    if closed_at_start() {
        note(Err(io::Error::new(io::ErrorKind::BrokenPipe, "stdout was closed when tdm started")));
    }
}

fn closed_at_start() -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let is_null = std::fs::read_link("/proc/self/fd/1").is_ok_and(|target| target.as_os_str() == "/dev/null");
    if !is_null {
        return false;
    }
    let Ok(info) = tdm_sdk::files::read_limited(std::path::Path::new("/proc/self/fdinfo/1"), 4096) else {
        return false;
    };
    let flags = String::from_utf8_lossy(&info)
        .lines()
        .find_map(|line| line.strip_prefix("flags:").map(|v| v.trim().to_string()))
        .and_then(|octal| u32::from_str_radix(&octal, 8).ok());
    // O_ACCMODE is 3 and O_RDWR 2 on Linux.
    flags.is_some_and(|flags| flags & 3 == 2)
}

/// Why a write to stdout failed, if one did.
pub fn failure() -> Option<&'static str> {
    FAILED.get().map(String::as_str)
}

/// Flushes stdout and says why something meant for it was not delivered, if anything was not.
pub fn flushed_failure() -> Option<&'static str> {
    note(io::stdout().lock().flush());
    failure()
}

/// The exit code of a command that would exit `code` after a failed stdout write: 2 (a code
/// above 2, such as `tdm exec`'s, is kept: it already says the run did not complete).
pub fn failed_exit_code(code: u8) -> u8 {
    if code > EXIT_USAGE {
        code
    } else {
        EXIT_USAGE
    }
}
