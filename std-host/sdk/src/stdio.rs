//! The stdio of a `tdm exec` command: tdm's stdin passed through to the guest by a reader thread
//! that feeds a bounded channel (so the sandbox waits for input at most as long as core allows,
//! never past the run's deadline, and buffers at most `STDIN_CHUNKS` chunks), and what tdm's own
//! fds 0, 1 and 2 are (terminal, pipe, file or device), so the guest is told the truth.

use crate::environment::{Cancel, CANCEL_POLL};
use contour_core::{InputRead as Input, InputSource, StdioKind};
use std::io::Read;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// The most bytes the reader thread reads at once.
pub const STDIN_CHUNK_BYTES: usize = 64 * 1024;
/// Chunks the reader thread may read ahead of the guest: stdin buffering is bounded by
/// `STDIN_CHUNKS * STDIN_CHUNK_BYTES`.
pub const STDIN_CHUNKS: usize = 4;

/// What the reader thread hands over.
enum Chunk {
    Bytes(Vec<u8>),
    End,
    Failed,
}

/// Where the reader stands.
enum Stream {
    /// Not started: the thread is spawned at the guest's first read or poll, so a command that
    /// never reads stdin never touches tdm's.
    Idle(Box<dyn Read + Send>),
    Running(Receiver<Chunk>),
    Ended,
    Failed,
}

/// A command's stdin: bytes from a reader (tdm's stdin for `tdm exec`) read on a thread of its
/// own, handed to the guest through a bounded channel with waits bounded by what core allows.
pub struct StdinReader {
    stream: Stream,
    /// Ends a wait for input within [`CANCEL_POLL`] once set (Ctrl-C).
    cancel: Option<Cancel>,
    /// The chunk being handed out, and how much of it was.
    current: Vec<u8>,
    taken: usize,
}

impl std::fmt::Debug for StdinReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdinReader").field("buffered", &(self.current.len() - self.taken)).finish()
    }
}

impl StdinReader {
    /// Reads `source` for the guest.
    pub fn new(source: impl Read + Send + 'static) -> Self {
        Self { stream: Stream::Idle(Box::new(source)), cancel: None, current: Vec::new(), taken: 0 }
    }

    /// The same, whose waits for input end within [`CANCEL_POLL`] of `cancel` being set (the
    /// guest is told no input is ready, and the run ends at its next deadline check).
    pub fn with_cancel(mut self, cancel: Option<Cancel>) -> Self {
        self.cancel = cancel;
        self
    }

    /// Reads tdm's own stdin for the guest.
    pub fn stdin() -> Self {
        Self::new(std::io::stdin())
    }

    /// The receiver, spawning the reader thread on first use.
    fn receiver(&mut self) -> Option<&Receiver<Chunk>> {
        if matches!(self.stream, Stream::Idle(_)) {
            let Stream::Idle(source) = std::mem::replace(&mut self.stream, Stream::Ended) else {
                return None;
            };
            self.stream = spawn_reader(source);
        }
        match &self.stream {
            Stream::Running(receiver) => Some(receiver),
            _ => None,
        }
    }

    /// Takes the next chunk, waiting at most `wait` (`None`: as long as it takes). Returns
    /// whether a read would now not wait.
    fn fill(&mut self, wait: Option<Duration>) -> bool {
        if self.taken < self.current.len() || matches!(self.stream, Stream::Ended | Stream::Failed) {
            return true;
        }
        let cancel = self.cancel.clone();
        let Some(receiver) = self.receiver() else {
            return true;
        };
        let received = match (wait, cancel) {
            (Some(wait), _) if wait.is_zero() => receiver.try_recv().map_err(|e| match e {
                TryRecvError::Empty => RecvTimeoutError::Timeout,
                TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
            }),
            (wait, Some(cancel)) => wait_cancellable(receiver, wait, &cancel),
            (Some(wait), None) => receiver.recv_timeout(wait),
            (None, None) => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match received {
            Ok(Chunk::Bytes(bytes)) => {
                self.current = bytes;
                self.taken = 0;
            }
            Ok(Chunk::End) | Err(RecvTimeoutError::Disconnected) => self.stream = Stream::Ended,
            Ok(Chunk::Failed) => self.stream = Stream::Failed,
            Err(RecvTimeoutError::Timeout) => return false,
        }
        true
    }
}

/// Waits for the next chunk at most `wait` (`None`: as long as it takes) in steps of
/// [`CANCEL_POLL`], giving up (`Timeout`) once `cancel` is set.
fn wait_cancellable(
    receiver: &Receiver<Chunk>,
    wait: Option<Duration>,
    cancel: &Cancel,
) -> Result<Chunk, RecvTimeoutError> {
    let until = wait.and_then(|wait| Instant::now().checked_add(wait));
    loop {
        let left = until.map_or(CANCEL_POLL, |until| until.saturating_duration_since(Instant::now()));
        match receiver.recv_timeout(left.min(CANCEL_POLL)) {
            Err(RecvTimeoutError::Timeout) => {
                if cancel.is_set() || until.is_some_and(|until| Instant::now() >= until) {
                    return Err(RecvTimeoutError::Timeout);
                }
            }
            received => return received,
        }
    }
}

/// Starts the thread that reads `source` into a bounded channel. It blocks on the source (tdm's
/// stdin may be a terminal that never ends); the guest's side never does.
fn spawn_reader(mut source: Box<dyn Read + Send>) -> Stream {
    let (sender, receiver) = sync_channel(STDIN_CHUNKS);
    let spawned = std::thread::Builder::new().name("tdm-stdin".into()).spawn(move || loop {
        let mut buf = vec![0u8; STDIN_CHUNK_BYTES];
        let chunk = match source.read(&mut buf) {
            Ok(0) => Chunk::End,
            Ok(n) => {
                buf.truncate(n);
                Chunk::Bytes(buf)
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => Chunk::Failed,
        };
        let last = !matches!(chunk, Chunk::Bytes(_));
        // The guest is gone (its run ended): stop reading.
        if sender.send(chunk).is_err() || last {
            return;
        }
    });
    match spawned {
        Ok(_) => Stream::Running(receiver),
        Err(_) => Stream::Failed,
    }
}

impl InputSource for StdinReader {
    fn read(&mut self, buf: &mut [u8], max_wait_ns: Option<u64>) -> Input {
        if !self.fill(max_wait_ns.map(Duration::from_nanos)) {
            return Input::Pending;
        }
        let left = &self.current[self.taken..];
        if !left.is_empty() {
            let n = left.len().min(buf.len());
            buf[..n].copy_from_slice(&left[..n]);
            self.taken += n;
            return Input::Bytes(n);
        }
        match self.stream {
            Stream::Failed => Input::Failed,
            _ => Input::End,
        }
    }

    fn wait_ready(&mut self, max_wait_ns: u64) -> bool {
        self.fill(Some(Duration::from_nanos(max_wait_ns)))
    }
}

/// What tdm's own stdin, stdout and stderr are, for the guest's `fd_fdstat_get`.
pub fn stdio_kinds() -> [StdioKind; 3] {
    [kind_of(&std::io::stdin()), kind_of(&std::io::stdout()), kind_of(&std::io::stderr())]
}

/// What one of tdm's stdio handles is: a terminal, else what `fstat` says (a FIFO or socket is
/// a pipe; a regular file a file; any other character device, such as `/dev/null`, a device).
#[cfg(unix)]
fn kind_of(handle: &(impl std::os::fd::AsFd + std::io::IsTerminal)) -> StdioKind {
    use std::os::unix::fs::FileTypeExt;
    if handle.is_terminal() {
        return StdioKind::Terminal;
    }
    let meta = handle.as_fd().try_clone_to_owned().and_then(|fd| std::fs::File::from(fd).metadata());
    match meta.map(|m| m.file_type()) {
        Ok(ty) if ty.is_file() => StdioKind::File,
        Ok(ty) if ty.is_char_device() || ty.is_block_device() => StdioKind::Device,
        _ => StdioKind::Pipe,
    }
}

/// What one of tdm's stdio handles is: a terminal or, failing that, a pipe.
#[cfg(not(unix))]
fn kind_of(handle: &impl std::io::IsTerminal) -> StdioKind {
    if handle.is_terminal() {
        StdioKind::Terminal
    } else {
        StdioKind::Pipe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that never answers, like a terminal nobody types into.
    struct Silent;

    impl Read for Silent {
        fn read(&mut self, _buf: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_secs(3600));
            Ok(0)
        }
    }

    #[test]
    fn bytes_then_the_end_reach_the_guest_in_order() {
        let mut reader = StdinReader::new(std::io::Cursor::new(b"hello world".to_vec()));
        let mut buf = [0u8; 5];
        assert_eq!(reader.read(&mut buf, None), Input::Bytes(5));
        assert_eq!(&buf, b"hello");
        let mut rest = [0u8; 64];
        assert_eq!(reader.read(&mut rest, Some(1_000_000_000)), Input::Bytes(6));
        assert_eq!(&rest[..6], b" world");
        assert_eq!(reader.read(&mut rest, Some(1_000_000_000)), Input::End);
        assert!(reader.wait_ready(0));
    }

    #[test]
    fn a_silent_input_is_pending_once_the_wait_is_over() {
        let mut reader = StdinReader::new(Silent);
        let mut buf = [0u8; 8];
        assert_eq!(reader.read(&mut buf, Some(10_000_000)), Input::Pending);
        assert!(!reader.wait_ready(10_000_000));
    }

    #[test]
    fn a_failing_input_is_reported() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _buf: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("gone"))
            }
        }
        let mut reader = StdinReader::new(Broken);
        assert_eq!(reader.read(&mut [0u8; 8], None), Input::Failed);
    }
}
