//! What a command run (`tdm exec`) takes from the session: its environment and its output sink,
//! which writes on a thread of its own so a reader that stops reading never holds the sandbox
//! past its deadline.

use crate::environment::{Cancel, EnvironmentChoice, CANCEL_POLL};
use contour_core::{Environment, Policy};
use contour_core::{OutputSink, Written};
use std::io::{self, Write};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// Where one of a command's streams goes.
pub type Destination = Box<dyn Write + Send>;

/// One write for the writer thread: which stream, and the bytes.
struct Block {
    stderr: bool,
    bytes: Vec<u8>,
}

/// The writer thread's ends: blocks go in, one answer per block comes back, in order.
struct Writer {
    blocks: Sender<Block>,
    answers: Receiver<Written>,
}

/// Streams a command's (`tdm exec`) stdout and stderr to tdm's own, byte for byte and in the
/// order written: a command's output is its own, not the plugin output tdm marks and escapes.
/// A closed reader (EPIPE) is reported to the guest. The writes happen on a thread that owns
/// the destinations (duplicates of fds 1 and 2, never std's locked handles, so tdm's own
/// messages never wait on it); the sink waits for each at most as long as core allows (the
/// deadline) or until `cancel` is set, and once one is cut short it takes nothing more: the
/// run is ending, and what was still queued is lost.
pub struct CommandOutput {
    /// `None`: the thread could not be started, so nothing can be written.
    writer: Option<Writer>,
    cancel: Option<Cancel>,
    /// A write outlived its wait (the reader stopped reading).
    stalled: bool,
}

impl std::fmt::Debug for CommandOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandOutput").field("stalled", &self.stalled).finish_non_exhaustive()
    }
}

impl CommandOutput {
    /// Writes to `stdout` and `stderr` on a thread of its own; waits end early once `cancel`
    /// is set.
    pub fn new(stdout: Destination, stderr: Destination, cancel: Option<Cancel>) -> Self {
        Self { writer: spawn_writer(stdout, stderr), cancel, stalled: false }
    }

    /// Writes to tdm's own stdout and stderr.
    pub fn stdio(cancel: Option<Cancel>) -> Self {
        Self::new(own(&io::stdout()), own(&io::stderr()), cancel)
    }
}

/// A handle of tdm's own on `stdio`'s file description (its blocking mode untouched), or a
/// sink when it is closed: writing to a closed stdout loses the bytes, as it does in std.
#[cfg(unix)]
fn own(stdio: &impl std::os::fd::AsFd) -> Destination {
    match stdio.as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(io::sink()),
    }
}

/// std's own handle (no duplicate to be had here).
#[cfg(not(unix))]
fn own<T: Write + Send + Clone + 'static>(stdio: &T) -> Destination {
    Box::new(stdio.clone())
}

/// Starts the thread that writes each block to its stream and answers what the write did. It
/// blocks on its destinations (a full pipe nobody reads); the guest's side never does. It ends
/// when the sink is dropped and its write returns (or with the process).
fn spawn_writer(mut stdout: Destination, mut stderr: Destination) -> Option<Writer> {
    let (blocks, queue) = channel::<Block>();
    let (answer, answers) = channel();
    let spawned = std::thread::Builder::new().name("tdm-output".into()).spawn(move || {
        for block in queue {
            let out = if block.stderr { &mut stderr } else { &mut stdout };
            let written = match out.write_all(&block.bytes).and_then(|()| out.flush()) {
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Written::Closed,
                _ => Written::Taken,
            };
            if answer.send(written).is_err() {
                return;
            }
        }
    });
    spawned.ok().map(|_| Writer { blocks, answers })
}

impl OutputSink for CommandOutput {
    fn write(&mut self, stderr: bool, bytes: &[u8], max_wait_ns: Option<u64>) -> Written {
        if self.stalled {
            return Written::Pending;
        }
        let Some(writer) = &self.writer else {
            return Written::Closed;
        };
        if writer.blocks.send(Block { stderr, bytes: bytes.to_vec() }).is_err() {
            return Written::Closed;
        }
        // `None`, or a wait past what an Instant holds: as long as the reader takes.
        let until = max_wait_ns.and_then(|ns| Instant::now().checked_add(Duration::from_nanos(ns)));
        loop {
            let slice = until.map_or(CANCEL_POLL, |until| until.saturating_duration_since(Instant::now()));
            match writer.answers.recv_timeout(slice.min(CANCEL_POLL)) {
                Ok(written) => return written,
                Err(RecvTimeoutError::Disconnected) => return Written::Closed,
                Err(RecvTimeoutError::Timeout) => {
                    let cancelled = self.cancel.as_ref().is_some_and(Cancel::is_set);
                    if cancelled || until.is_some_and(|until| Instant::now() >= until) {
                        self.stalled = true;
                        return Written::Pending;
                    }
                }
            }
        }
    }
}

/// The environment of a command run (`tdm exec`): the same choice as a plugin's, cancellable
/// when `cancel` is given (Ctrl-C).
pub fn command_environment(seed: Option<u64>, policy: &Policy, cancel: Option<Cancel>) -> Box<dyn Environment> {
    EnvironmentChoice { seed, cancel }.environment(Duration::from_millis(policy.timeout_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Every write as (stderr, bytes), in the order the thread did them.
    type Log = Arc<Mutex<Vec<(bool, Vec<u8>)>>>;

    /// Records every write of one stream into a log shared by both.
    #[derive(Clone, Default)]
    struct Recorder {
        stderr: bool,
        log: Log,
    }

    impl Write for Recorder {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.log.lock().unwrap().push((self.stderr, buf.to_vec()));
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A reader that stopped reading: a write blocks until the test is over.
    struct Stuck(Receiver<()>);

    impl Write for Stuck {
        fn write(&mut self, _buf: &[u8]) -> io::Result<usize> {
            let _ = self.0.recv();
            Err(io::ErrorKind::BrokenPipe.into())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A closed pipe.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _buf: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn stdout_and_stderr_are_written_in_the_order_the_guest_wrote_them() {
        let out = Recorder::default();
        let err = Recorder { stderr: true, log: Arc::clone(&out.log) };
        let mut sink = CommandOutput::new(Box::new(out.clone()), Box::new(err), None);
        for (stderr, bytes) in [(false, b"a"), (true, b"b"), (false, b"c")] {
            assert_eq!(sink.write(stderr, bytes, None), Written::Taken);
        }
        let log = out.log.lock().unwrap().clone();
        assert_eq!(log, [(false, b"a".to_vec()), (true, b"b".to_vec()), (false, b"c".to_vec())]);
    }

    #[test]
    fn a_closed_reader_is_reported() {
        let mut sink = CommandOutput::new(Box::new(Closed), Box::new(Recorder::default()), None);
        assert_eq!(sink.write(false, b"y\n", None), Written::Closed);
        assert_eq!(sink.write(true, b"e\n", None), Written::Taken);
    }

    #[test]
    fn a_reader_that_stopped_reading_holds_a_write_no_longer_than_its_wait() {
        let (release, stuck) = channel();
        let mut sink = CommandOutput::new(Box::new(Stuck(stuck)), Box::new(Recorder::default()), None);
        assert_eq!(sink.write(false, b"x", Some(1_000_000)), Written::Pending);
        // The run is ending: nothing more is taken, not even for the other stream.
        assert_eq!(sink.write(true, b"y", None), Written::Pending);
        drop(release);
    }

    #[test]
    fn a_cancel_ends_a_wait_with_no_deadline() {
        let (release, stuck) = channel();
        let cancel = Cancel::new();
        cancel.set();
        let mut sink = CommandOutput::new(Box::new(Stuck(stuck)), Box::new(Recorder::default()), Some(cancel));
        assert_eq!(sink.write(false, b"x", None), Written::Pending);
        drop(release);
    }
}
