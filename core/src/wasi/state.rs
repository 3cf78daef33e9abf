//! The WASI state of one instance: argv, environment, the fd table (stdio, preopens, open
//! files and directories, each knowing whether it may be written through), where output goes,
//! what stdin reads and what stdio is reported as.

use super::errno::Errno;
use super::stdio::{Capture, InputSource, NoInput, OutputSink, StdioKind};
use crate::fs::{DirEntry, HostFs, NodeId};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

/// The most fds a guest may hold open at once, stdio and preopens included (`path_open`
/// answers `EMFILE` past it): each holds a node of the embedder's filesystem, which may be a
/// host file handle, so a guest that opens without closing cannot run the host out of handles
/// or memory.
pub const MAX_OPEN_FDS: usize = 1024;

/// An open file descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fd {
    Stdin,
    Stdout,
    Stderr,
    /// A preopened directory, with the path the guest sees and whether the embedder made it
    /// writable.
    Preopen {
        node: NodeId,
        path: String,
        writable: bool,
    },
    /// An open directory; writable when opened below a writable preopen.
    Dir {
        node: NodeId,
        writable: bool,
    },
    /// An open file; `write` is `None` when opened for reading only.
    File {
        node: NodeId,
        position: u64,
        write: Option<FileWrite>,
    },
}

/// How a file fd opened for writing writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileWrite {
    /// The fdflags it was opened with or last set to (`APPEND`: every `fd_write` goes to the
    /// end of the file; the sync flags are reported, each write is synced by the host's own
    /// rules).
    pub(crate) fdflags: u16,
    /// It was opened with the right to read too (a write-only fd answers `EBADF` to a read).
    pub(crate) readable: bool,
    /// A length the file is known to have (its size when last looked at, or the end of the
    /// last write through this fd): a write that starts past it looks at the size first and
    /// pays for the gap it would leave, which the host stores or zero-fills.
    pub(crate) reached: u64,
}

impl FileWrite {
    /// `O_APPEND`.
    pub(crate) fn append(&self) -> bool {
        self.fdflags & 1 != 0
    }
}

impl Fd {
    /// The node of a directory fd.
    pub(crate) fn dir_node(&self) -> Option<NodeId> {
        match self {
            Fd::Preopen { node, .. } | Fd::Dir { node, .. } => Some(*node),
            _ => None,
        }
    }

    /// The node of a directory fd that may be written below (`None` for a read-only one).
    pub(crate) fn writable_dir(&self) -> Option<NodeId> {
        match self {
            Fd::Preopen { node, writable: true, .. } | Fd::Dir { node, writable: true } => Some(*node),
            _ => None,
        }
    }
}

/// The WASI state of one instance.
pub struct WasiState {
    pub(crate) args: Vec<Vec<u8>>,
    pub(crate) environ: Vec<Vec<u8>>,
    pub(crate) fds: BTreeMap<u32, Fd>,
    pub(crate) fs: Option<Box<dyn HostFs>>,
    /// The listing `fd_readdir` pages through, per directory fd: read when a listing starts
    /// (cookie 0), so paging through a large directory reads it once.
    pub(crate) listings: BTreeMap<u32, Vec<DirEntry>>,
    /// Where stdout and stderr go.
    pub(crate) output: Box<dyn OutputSink>,
    /// What stdin reads.
    pub(crate) stdin: Box<dyn InputSource>,
    /// What fds 0, 1 and 2 are reported as.
    pub(crate) stdio: [StdioKind; 3],
}

/// What a WASI instance starts with: argv, environment, files, stdin, an output sink, and
/// what its stdio fds are.
pub struct WasiConfig {
    /// `argv` (empty for plugins; `argv[0]` is the module name for `tdm exec`).
    pub args: Vec<String>,
    /// `KEY=VALUE` pairs (empty unless an operator passed `--env`).
    pub environ: Vec<String>,
    /// Preopened directories, if any (each read-only unless the filesystem says otherwise).
    pub fs: Option<Box<dyn HostFs>>,
    /// Where stdout and stderr go; `None` means a bounded `Capture`.
    pub output: Option<Box<dyn OutputSink>>,
    /// What stdin reads; `None` means an empty stdin (at its end at once), as plugins have.
    pub stdin: Option<Box<dyn InputSource>>,
    /// What fds 0, 1 and 2 are reported as.
    pub stdio: [StdioKind; 3],
}

impl WasiConfig {
    /// The plugin configuration: no args, no env, no files, an empty stdin, captured output,
    /// stdio reported as terminals (so a libc line-buffers, and each intent's output is in
    /// its own report).
    pub fn plugin() -> Self {
        Self {
            args: Vec::new(),
            environ: Vec::new(),
            fs: None,
            output: None,
            stdin: None,
            stdio: [StdioKind::Terminal; 3],
        }
    }
}

impl WasiState {
    /// Sets up stdio and preopens from the configuration.
    pub fn new(config: WasiConfig, capture_limit: usize) -> Self {
        let mut fds = BTreeMap::new();
        fds.insert(0, Fd::Stdin);
        fds.insert(1, Fd::Stdout);
        fds.insert(2, Fd::Stderr);
        if let Some(fs) = &config.fs {
            for (index, (node, path)) in fs.preopens().into_iter().enumerate() {
                let writable = fs.writable(node);
                fds.insert(3 + index as u32, Fd::Preopen { node, path, writable });
            }
        }
        let nul_terminated = |s: String| {
            let mut bytes = s.into_bytes();
            bytes.push(0);
            bytes
        };
        Self {
            args: config.args.into_iter().map(nul_terminated).collect(),
            environ: config.environ.into_iter().map(nul_terminated).collect(),
            fds,
            fs: config.fs,
            listings: BTreeMap::new(),
            output: config.output.unwrap_or_else(|| Box::new(Capture::new(capture_limit))),
            stdin: config.stdin.unwrap_or_else(|| Box::new(NoInput)),
            stdio: config.stdio,
        }
    }

    /// What the output sink captured since the last take: (stdout, stderr, bytes dropped),
    /// empty for a sink that streams. A sink that holds nothing is not asked to hand it over.
    pub(crate) fn take_output(&mut self) -> (Vec<u8>, Vec<u8>, u64) {
        if !self.output.may_hold_captured() {
            return (Vec::new(), Vec::new(), 0);
        }
        self.output.take_captured().unwrap_or_default()
    }

    /// The open fd `fd`.
    pub(crate) fn fd(&self, fd: u32) -> Result<&Fd, Errno> {
        self.fds.get(&fd).ok_or(Errno::Badf)
    }

    /// The embedder's filesystem (`EBADF` when nothing is preopened).
    pub(crate) fn fs(&mut self) -> Result<&mut Box<dyn HostFs>, Errno> {
        self.fs.as_mut().ok_or(Errno::Badf)
    }

    /// Whether the guest may open one more fd (fewer than [`MAX_OPEN_FDS`] are open).
    pub(crate) fn can_open(&self) -> bool {
        self.fds.len() < MAX_OPEN_FDS
    }

    /// Adds `fd` under the number after the highest open one.
    pub(crate) fn insert_fd(&mut self, fd: Fd) -> u32 {
        let next = self.fds.keys().next_back().map_or(3, |last| last + 1);
        self.fds.insert(next, fd);
        next
    }

    /// Removes fd `number` and releases its node and listing.
    pub(crate) fn close(&mut self, number: u32) -> Result<(), Errno> {
        let fd = self.fds.remove(&number).ok_or(Errno::Badf)?;
        self.listings.remove(&number);
        self.close_node(&fd);
        Ok(())
    }

    /// Releases the node behind a closed fd.
    pub(crate) fn close_node(&mut self, fd: &Fd) {
        if let (Some(fs), Fd::File { node, .. } | Fd::Dir { node, .. }) = (self.fs.as_mut(), fd) {
            fs.close(*node);
        }
    }
}
