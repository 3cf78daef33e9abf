//! Where a guest's stdout and stderr go: the `OutputSink` trait an embedder may implement, and
//! `Capture`, the bounded default that keeps a plugin's output for its intent report.

use alloc::vec::Vec;

/// What a write to a sink did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The bytes were taken (kept, or counted as dropped by a bounded capture).
    Taken,
    /// The reader is gone (a closed pipe): the guest gets `EPIPE`.
    Closed,
}

/// Where the guest's stdout and stderr go.
pub trait OutputSink: Send {
    /// Takes bytes written to fd 1 (`stderr == false`) or fd 2 (`stderr == true`).
    fn write(&mut self, stderr: bool, bytes: &[u8]) -> Written;
    /// Hands over and clears what was captured: (stdout, stderr, bytes dropped). Sinks that
    /// stream instead of capturing return `None`.
    fn take_captured(&mut self) -> Option<(Vec<u8>, Vec<u8>, u64)> {
        None
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
    fn write(&mut self, stderr: bool, bytes: &[u8]) -> Written {
        let buf = if stderr { &mut self.stderr } else { &mut self.stdout };
        let room = self.limit.saturating_sub(buf.len());
        let kept = room.min(bytes.len());
        buf.extend_from_slice(&bytes[..kept]);
        self.dropped += (bytes.len() - kept) as u64;
        Written::Taken
    }

    fn take_captured(&mut self) -> Option<(Vec<u8>, Vec<u8>, u64)> {
        let dropped = core::mem::take(&mut self.dropped);
        Some((core::mem::take(&mut self.stdout), core::mem::take(&mut self.stderr), dropped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_at_most_its_limit() {
        let mut capture = Capture::new(4);
        capture.write(false, b"hello");
        capture.write(true, b"ab");
        assert_eq!(capture.stdout, b"hell");
        assert_eq!(capture.stderr, b"ab");
        assert_eq!(capture.dropped, 1);
    }
}
