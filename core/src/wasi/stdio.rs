//! The guest's stdio: where stdout and stderr go (the `OutputSink` trait an embedder may
//! implement, and `Capture`, the bounded default that keeps a plugin's output for its intent
//! report), what stdin reads (the `InputSource` trait, and `NoInput`, the empty default), and
//! what each stdio fd is reported as (`StdioKind`).

use alloc::vec::Vec;

/// What a write to a sink did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The bytes were taken (kept, or counted as dropped by a bounded capture).
    Taken,
    /// The reader is gone (a closed pipe): the guest gets `EPIPE`.
    Closed,
    /// The bytes were not taken within the wait the sink was given: the run's deadline came
    /// first (a reader that stopped reading), and the run ends with `deadline_exceeded`.
    Pending,
}

/// Where the guest's stdout and stderr go. Core never blocks on it: every write says how long
/// the sink may wait (the time left before the run's deadline), and a sink must return by then.
pub trait OutputSink: Send {
    /// Takes bytes written to fd 1 (`stderr == false`) or fd 2 (`stderr == true`), waiting at
    /// most `max_wait_ns` for its reader; `None` means the run has no wall-clock deadline, so
    /// the sink may wait as long as its reader takes.
    fn write(&mut self, stderr: bool, bytes: &[u8], max_wait_ns: Option<u64>) -> Written;
    /// Hands over and clears what was captured: (stdout, stderr, bytes dropped). Sinks that
    /// stream instead of capturing return `None`.
    fn take_captured(&mut self) -> Option<(Vec<u8>, Vec<u8>, u64)> {
        None
    }

    /// Whether [`OutputSink::take_captured`] may have anything to hand over. The sandbox asks
    /// this after every intent and calls `take_captured` only on a yes; the default says yes.
    fn may_hold_captured(&self) -> bool {
        true
    }
}

/// The default sink: bounded capture buffers; bytes past the bound are counted, not kept.
#[derive(Debug, Default)]
pub struct Capture {
    /// Captured stdout.
    pub stdout: Vec<u8>,
    /// Captured stderr.
    pub stderr: Vec<u8>,
    /// Bytes dropped because a buffer was full.
    pub dropped: u64,
    limit: usize,
}

impl Capture {
    /// A capture keeping at most `limit` bytes of each stream.
    pub fn new(limit: usize) -> Self {
        Self { limit, ..Self::default() }
    }
}

impl OutputSink for Capture {
    fn write(&mut self, stderr: bool, bytes: &[u8], _max_wait_ns: Option<u64>) -> Written {
        let buf = if stderr { &mut self.stderr } else { &mut self.stdout };
        let room = self.limit.saturating_sub(buf.len());
        let kept = room.min(bytes.len());
        buf.extend_from_slice(&bytes[..kept]);
        self.dropped += (bytes.len() - kept) as u64;
        Written::Taken
    }

    fn may_hold_captured(&self) -> bool {
        !self.stdout.is_empty() || !self.stderr.is_empty() || self.dropped != 0
    }

    fn take_captured(&mut self) -> Option<(Vec<u8>, Vec<u8>, u64)> {
        let dropped = core::mem::take(&mut self.dropped);
        Some((core::mem::take(&mut self.stdout), core::mem::take(&mut self.stderr), dropped))
    }
}

/// What one read from an `InputSource` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// This many bytes were read into the buffer (at least one).
    Bytes(usize),
    /// The input is at its end (the writer closed it): the guest reads 0 bytes.
    End,
    /// Nothing arrived within the wait the source was given: the run's deadline came first.
    Pending,
    /// The input failed: the guest gets `EIO`.
    Failed,
}

/// What the guest's stdin (fd 0) reads. Core never blocks on it: every call says how long the
/// source may wait (the time left before the run's deadline), and a source must return by then.
pub trait InputSource: Send {
    /// Reads into `buf` (never empty), waiting at most `max_wait_ns` for bytes or the end of the
    /// input; `None` means the run has no wall-clock deadline, so the source may wait as long as
    /// its input takes.
    fn read(&mut self, buf: &mut [u8], max_wait_ns: Option<u64>) -> Input;
    /// Waits at most `max_wait_ns` until a `read` would not wait (bytes, the end or a failure are
    /// there); returns whether one would not.
    fn wait_ready(&mut self, max_wait_ns: u64) -> bool;
}

/// The default stdin, and every plugin's: at its end from the start.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoInput;

impl InputSource for NoInput {
    fn read(&mut self, _buf: &mut [u8], _max_wait_ns: Option<u64>) -> Input {
        Input::End
    }

    fn wait_ready(&mut self, _max_wait_ns: u64) -> bool {
        true
    }
}

/// What a stdio fd is, as `fd_fdstat_get` and `fd_filestat_get` report it (libc's `isatty` is
/// a character device without seek rights).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioKind {
    /// A terminal: a character device without seek or tell rights (`isatty` is true).
    Terminal,
    /// A pipe or socket: WASI Preview1 has no filetype for these, so `unknown`, as wasmtime
    /// reports them.
    Pipe,
    /// A regular file (`< in.txt`, `> out.txt`).
    File,
    /// A character device that is not a terminal (`/dev/null`): seek and tell rights are
    /// reported, so `isatty` is false.
    Device,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_at_most_its_limit() {
        let mut capture = Capture::new(4);
        capture.write(false, b"hello", None);
        capture.write(true, b"ab", Some(0));
        assert_eq!(capture.stdout, b"hell");
        assert_eq!(capture.stderr, b"ab");
        assert_eq!(capture.dropped, 1);
    }

    #[test]
    fn no_input_is_at_its_end_at_once() {
        let mut buf = [0u8; 4];
        assert_eq!(NoInput.read(&mut buf, Some(0)), Input::End);
        assert!(NoInput.wait_ready(0));
    }
}
