//! The WASI Preview1 shim (DESIGN section 5), no_std: the import table with exact signatures,
//! the per-instance WASI state (args, environ, fds, captured output), and the host functions.
//! Every nondeterministic answer comes from the `Environment`; files only from a `ReadOnlyFs`.

use crate::env::Clock;
use crate::fs::{self, FsError, NodeId, NodeKind, NodeStat, ReadOnlyFs};
use crate::state::HostState;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use wasmi::{Caller, Extern, Linker, Memory, ValType};

/// The import module name of WASI Preview1.
pub const MODULE: &str = "wasi_snapshot_preview1";

/// One Preview1 function: its exact signature and whether plugins may import it.
#[derive(Debug)]
pub struct Signature {
    /// The function name.
    pub name: &'static str,
    /// Parameter types.
    pub params: &'static [ValType],
    /// Result types.
    pub results: &'static [ValType],
    /// Allowed in the marketplace profile (no filesystem, no sockets).
    pub plugin_safe: bool,
}

const I: ValType = ValType::I32;
const L: ValType = ValType::I64;
const R: &[ValType] = &[I];

macro_rules! sig {
    ($name:literal, [$($p:expr),*], $r:expr, $safe:expr) => {
        Signature { name: $name, params: &[$($p),*], results: $r, plugin_safe: $safe }
    };
}

/// Every function of WASI Preview1, with its signature.
pub const PREVIEW1: [Signature; 46] = [
    sig!("args_get", [I, I], R, true),
    sig!("args_sizes_get", [I, I], R, true),
    sig!("environ_get", [I, I], R, true),
    sig!("environ_sizes_get", [I, I], R, true),
    sig!("clock_res_get", [I, I], R, true),
    sig!("clock_time_get", [I, L, I], R, true),
    sig!("fd_advise", [I, L, L, I], R, false),
    sig!("fd_allocate", [I, L, L], R, false),
    sig!("fd_close", [I], R, true),
    sig!("fd_datasync", [I], R, false),
    sig!("fd_fdstat_get", [I, I], R, true),
    sig!("fd_fdstat_set_flags", [I, I], R, false),
    sig!("fd_fdstat_set_rights", [I, L, L], R, false),
    sig!("fd_filestat_get", [I, I], R, false),
    sig!("fd_filestat_set_size", [I, L], R, false),
    sig!("fd_filestat_set_times", [I, L, L, I], R, false),
    sig!("fd_pread", [I, I, I, L, I], R, false),
    sig!("fd_prestat_get", [I, I], R, true),
    sig!("fd_prestat_dir_name", [I, I, I], R, true),
    sig!("fd_pwrite", [I, I, I, L, I], R, false),
    sig!("fd_read", [I, I, I, I], R, true),
    sig!("fd_readdir", [I, I, I, L, I], R, false),
    sig!("fd_renumber", [I, I], R, false),
    sig!("fd_seek", [I, L, I, I], R, true),
    sig!("fd_sync", [I], R, false),
    sig!("fd_tell", [I, I], R, false),
    sig!("fd_write", [I, I, I, I], R, true),
    sig!("path_create_directory", [I, I, I], R, false),
    sig!("path_filestat_get", [I, I, I, I, I], R, false),
    sig!("path_filestat_set_times", [I, I, I, I, L, L, I], R, false),
    sig!("path_link", [I, I, I, I, I, I, I], R, false),
    sig!("path_open", [I, I, I, I, I, L, L, I, I], R, false),
    sig!("path_readlink", [I, I, I, I, I, I], R, false),
    sig!("path_remove_directory", [I, I, I], R, false),
    sig!("path_rename", [I, I, I, I, I, I], R, false),
    sig!("path_symlink", [I, I, I, I, I], R, false),
    sig!("path_unlink_file", [I, I, I], R, false),
    sig!("poll_oneoff", [I, I, I, I], R, true),
    sig!("proc_exit", [I], &[], true),
    sig!("proc_raise", [I], R, false),
    sig!("sched_yield", [], R, true),
    sig!("random_get", [I, I], R, true),
    sig!("sock_accept", [I, I, I], R, false),
    sig!("sock_recv", [I, I, I, I, I, I], R, false),
    sig!("sock_send", [I, I, I, I, I], R, false),
    sig!("sock_shutdown", [I, I], R, false),
];

/// WASI errno values the shim answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum Errno {
    /// No error.
    Success = 0,
    /// Bad file descriptor.
    Badf = 8,
    /// Bad address (out-of-bounds pointer).
    Fault = 21,
    /// Invalid argument.
    Inval = 28,
    /// I/O error.
    Io = 29,
    /// Is a directory.
    Isdir = 31,
    /// Too many levels of symbolic links.
    Loop = 32,
    /// Filename too long.
    Nametoolong = 37,
    /// No such file or directory.
    Noent = 44,
    /// Function not supported.
    Nosys = 52,
    /// Not a directory.
    Notdir = 54,
    /// Not a socket.
    Notsock = 57,
    /// Not supported.
    Notsup = 58,
    /// Operation not permitted.
    Perm = 63,
    /// Invalid seek.
    Spipe = 70,
    /// Capabilities insufficient.
    Notcapable = 76,
}

impl From<FsError> for Errno {
    fn from(e: FsError) -> Self {
        match e {
            FsError::NotFound => Errno::Noent,
            FsError::NotADirectory => Errno::Notdir,
            FsError::IsADirectory => Errno::Isdir,
            FsError::Escapes | FsError::AccessDenied => Errno::Perm,
            FsError::Loop => Errno::Loop,
            FsError::InvalidName => Errno::Inval,
            FsError::Io => Errno::Io,
        }
    }
}

/// Where the guest's stdout and stderr go.
pub trait OutputSink: Send {
    /// Takes bytes written to fd 1 (`stderr == false`) or fd 2 (`stderr == true`).
    fn write(&mut self, stderr: bool, bytes: &[u8]);
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
    fn write(&mut self, stderr: bool, bytes: &[u8]) {
        let buf = if stderr { &mut self.stderr } else { &mut self.stdout };
        let room = self.limit.saturating_sub(buf.len());
        let kept = room.min(bytes.len());
        buf.extend_from_slice(&bytes[..kept]);
        self.dropped += (bytes.len() - kept) as u64;
    }

    fn take_captured(&mut self) -> Option<(Vec<u8>, Vec<u8>, u64)> {
        let dropped = core::mem::take(&mut self.dropped);
        Some((core::mem::take(&mut self.stdout), core::mem::take(&mut self.stderr), dropped))
    }
}

/// An open file descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fd {
    Stdin,
    Stdout,
    Stderr,
    /// A preopened directory, with the path the guest sees.
    Preopen {
        node: NodeId,
        path: String,
    },
    Dir {
        node: NodeId,
    },
    File {
        node: NodeId,
        position: u64,
    },
}

impl Fd {
    fn dir_node(&self) -> Option<NodeId> {
        match self {
            Fd::Preopen { node, .. } | Fd::Dir { node } => Some(*node),
            _ => None,
        }
    }
}

/// The WASI state of one instance.
pub struct WasiState {
    args: Vec<Vec<u8>>,
    environ: Vec<Vec<u8>>,
    fds: BTreeMap<u32, Fd>,
    fs: Option<Box<dyn ReadOnlyFs>>,
    /// Where stdout and stderr go.
    pub(crate) output: Box<dyn OutputSink>,
}

/// What a WASI instance starts with: argv, environment, files, and an output sink.
pub struct WasiConfig {
    /// `argv` (empty for plugins; `argv[0]` is the module name for `tdm exec`).
    pub args: Vec<String>,
    /// `KEY=VALUE` pairs (empty unless an operator passed `--env`).
    pub environ: Vec<String>,
    /// Preopened read-only directories, if any.
    pub fs: Option<Box<dyn ReadOnlyFs>>,
    /// Where stdout and stderr go; `None` means a bounded `Capture`.
    pub output: Option<Box<dyn OutputSink>>,
}

impl WasiConfig {
    /// The plugin configuration: no args, no env, no files, captured output.
    pub fn plugin() -> Self {
        Self { args: Vec::new(), environ: Vec::new(), fs: None, output: None }
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
                fds.insert(3 + index as u32, Fd::Preopen { node, path });
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
            output: config.output.unwrap_or_else(|| Box::new(Capture::new(capture_limit))),
        }
    }

    fn insert_fd(&mut self, fd: Fd) -> u32 {
        let next = self.fds.keys().next_back().map_or(3, |last| last + 1);
        self.fds.insert(next, fd);
        next
    }

    fn close_node(&mut self, fd: &Fd) {
        if let (Some(fs), Fd::File { node, .. } | Fd::Dir { node }) = (self.fs.as_mut(), fd) {
            fs.close(*node);
        }
    }
}

/// Bounds-checked access to guest memory.
struct Guest<'a>(&'a mut [u8]);

impl Guest<'_> {
    fn range(&self, ptr: u32, len: u32) -> Result<core::ops::Range<usize>, Errno> {
        let start = ptr as usize;
        let end = start.checked_add(len as usize).ok_or(Errno::Fault)?;
        if end > self.0.len() {
            return Err(Errno::Fault);
        }
        Ok(start..end)
    }
    fn bytes(&self, ptr: u32, len: u32) -> Result<&[u8], Errno> {
        let range = self.range(ptr, len)?;
        Ok(&self.0[range])
    }
    fn bytes_mut(&mut self, ptr: u32, len: u32) -> Result<&mut [u8], Errno> {
        let range = self.range(ptr, len)?;
        Ok(&mut self.0[range])
    }
    fn u32(&self, ptr: u32) -> Result<u32, Errno> {
        let b = self.bytes(ptr, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn set(&mut self, ptr: u32, bytes: &[u8]) -> Result<(), Errno> {
        self.bytes_mut(ptr, bytes.len() as u32)?.copy_from_slice(bytes);
        Ok(())
    }
    fn set_u32(&mut self, ptr: u32, v: u32) -> Result<(), Errno> {
        self.set(ptr, &v.to_le_bytes())
    }
    fn set_u64(&mut self, ptr: u32, v: u64) -> Result<(), Errno> {
        self.set(ptr, &v.to_le_bytes())
    }
    fn str(&self, ptr: u32, len: u32) -> Result<&str, Errno> {
        core::str::from_utf8(self.bytes(ptr, len)?).map_err(|_| Errno::Inval)
    }
    /// The (ptr, len) pairs of an iovec array.
    fn iovecs(&self, ptr: u32, count: u32) -> Result<Vec<(u32, u32)>, Errno> {
        let size = count.checked_mul(8).ok_or(Errno::Fault)?;
        self.range(ptr, size)?;
        (0..count).map(|i| Ok((self.u32(ptr + i * 8)?, self.u32(ptr + i * 8 + 4)?))).collect()
    }
}

/// The guest's exported memory: cached after instantiation, looked up while the start function
/// runs.
pub(crate) fn memory_of(caller: &Caller<'_, HostState>) -> Option<Memory> {
    caller.data().memory.or_else(|| match caller.get_export("memory") {
        Some(Extern::Memory(memory)) => Some(memory),
        _ => None,
    })
}

/// Runs `f` with the guest memory and host state; a missing memory is `EFAULT`.
fn with_memory(
    caller: &mut Caller<'_, HostState>,
    f: impl FnOnce(&mut Guest<'_>, &mut HostState) -> Result<(), Errno>,
) -> i32 {
    let Some(memory) = memory_of(caller) else {
        return Errno::Fault as i32;
    };
    let (data, state) = memory.data_and_store_mut(caller);
    match f(&mut Guest(data), state) {
        Ok(()) => Errno::Success as i32,
        Err(errno) => errno as i32,
    }
}

type C<'a> = Caller<'a, HostState>;

const FILETYPE_CHAR: u8 = 2;
const FILETYPE_DIR: u8 = 3;
const FILETYPE_FILE: u8 = 4;
const FILETYPE_SYMLINK: u8 = 7;
const FILETYPE_UNKNOWN: u8 = 0;

/// Rights reported for read-only files: read, seek, tell, advise, filestat_get, poll.
const RIGHTS_FILE: u64 = (1 << 1) | (1 << 2) | (1 << 5) | (1 << 7) | (1 << 21) | (1 << 27);
/// Rights reported for read-only directories: path_open, readdir, path_filestat_get, ...
const RIGHTS_DIR: u64 = (1 << 13) | (1 << 14) | (1 << 18) | (1 << 21) | (1 << 27);
/// Rights that mean write access when asked of `path_open`: fd_write, fd_allocate and
/// fd_filestat_set_size (wasi-libc and Rust std ask for none of them on a read-only open).
const RIGHTS_WRITE: u64 = (1 << 6) | (1 << 8) | (1 << 22);

/// What `fd_filestat_get` reports for stdin, stdout and stderr.
const STDIO_STAT: NodeStat = NodeStat {
    kind: NodeKind::CharacterDevice,
    size: 0,
    dev: 0,
    ino: 0,
    nlink: 1,
    atime_ns: 0,
    mtime_ns: 0,
    ctime_ns: 0,
};

fn filetype(kind: NodeKind) -> u8 {
    match kind {
        NodeKind::File => FILETYPE_FILE,
        NodeKind::Directory => FILETYPE_DIR,
        NodeKind::Symlink => FILETYPE_SYMLINK,
        NodeKind::CharacterDevice => FILETYPE_CHAR,
        NodeKind::Other => FILETYPE_UNKNOWN,
    }
}

fn write_filestat(guest: &mut Guest<'_>, ptr: u32, stat: &NodeStat) -> Result<(), Errno> {
    let mut buf = [0u8; 64];
    buf[0..8].copy_from_slice(&stat.dev.to_le_bytes());
    buf[8..16].copy_from_slice(&stat.ino.to_le_bytes());
    buf[16] = filetype(stat.kind);
    buf[24..32].copy_from_slice(&stat.nlink.to_le_bytes());
    buf[32..40].copy_from_slice(&stat.size.to_le_bytes());
    buf[40..48].copy_from_slice(&stat.atime_ns.to_le_bytes());
    buf[48..56].copy_from_slice(&stat.mtime_ns.to_le_bytes());
    buf[56..64].copy_from_slice(&stat.ctime_ns.to_le_bytes());
    guest.set(ptr, &buf)
}

/// Writes a NUL-terminated string list (args or environ) the way `*_get` expects.
fn write_list(guest: &mut Guest<'_>, list: &[Vec<u8>], ptrs: u32, buf: u32) -> Result<(), Errno> {
    let mut offset = buf;
    for (i, item) in list.iter().enumerate() {
        let slot = ptrs.checked_add(4 * i as u32).ok_or(Errno::Fault)?;
        guest.set_u32(slot, offset)?;
        guest.set(offset, item)?;
        offset = offset.checked_add(item.len() as u32).ok_or(Errno::Fault)?;
    }
    Ok(())
}

fn write_sizes(guest: &mut Guest<'_>, list: &[Vec<u8>], count_ptr: u32, size_ptr: u32) -> Result<(), Errno> {
    guest.set_u32(count_ptr, list.len() as u32)?;
    guest.set_u32(size_ptr, list.iter().map(|s| s.len() as u32).sum())
}

fn fd_of(state: &HostState, fd: u32) -> Result<&Fd, Errno> {
    state.wasi.fds.get(&fd).ok_or(Errno::Badf)
}

fn fs_of(state: &mut HostState) -> Result<&mut Box<dyn ReadOnlyFs>, Errno> {
    state.wasi.fs.as_mut().ok_or(Errno::Badf)
}

/// Resolves `path` below the directory fd `dirfd` and opens it.
fn open_path(state: &mut HostState, dirfd: u32, path: &str, follow: bool) -> Result<NodeId, Errno> {
    let dir = fd_of(state, dirfd)?.dir_node().ok_or(Errno::Notdir)?;
    let normalized = fs::normalize(path)?;
    Ok(fs_of(state)?.open(dir, &normalized, follow)?)
}

/// Refuses a mutation below a directory fd: `EPERM` on a read-only preopen, `ENOTDIR` on a
/// non-directory, `EBADF` on no fd.
fn read_only_dir(caller: C<'_>, dirfd: u32) -> i32 {
    match fd_of(caller.data(), dirfd) {
        Ok(fd) if fd.dir_node().is_some() => Errno::Perm as i32,
        Ok(_) => Errno::Notdir as i32,
        Err(errno) => errno as i32,
    }
}

/// Answers a socket call: `ENOTSOCK` for an open fd, `EBADF` otherwise.
fn not_a_socket(caller: C<'_>, fd: u32) -> i32 {
    match fd_of(caller.data(), fd) {
        Ok(_) => Errno::Notsock as i32,
        Err(errno) => errno as i32,
    }
}

/// Reads from an fd into iovecs at its position (`None`) or at an offset (`Some`).
fn read_into(
    guest: &mut Guest<'_>,
    state: &mut HostState,
    fd: u32,
    iovs: u32,
    n: u32,
    at: Option<u64>,
) -> Result<u32, Errno> {
    let (node, position) = match fd_of(state, fd)? {
        Fd::Stdin => return if at.is_some() { Err(Errno::Spipe) } else { Ok(0) },
        Fd::File { node, position } => (*node, at.unwrap_or(*position)),
        Fd::Preopen { .. } | Fd::Dir { .. } => return Err(Errno::Isdir),
        Fd::Stdout | Fd::Stderr => return Err(Errno::Badf),
    };
    let vecs = guest.iovecs(iovs, n)?;
    let fs = fs_of(state)?;
    let mut total: u64 = 0;
    for (ptr, len) in vecs {
        let buf = guest.bytes_mut(ptr, len)?;
        let read = fs.read_at(node, position + total, buf)?;
        total += read as u64;
        if read < len as usize {
            break;
        }
    }
    if at.is_none() {
        if let Some(Fd::File { position: p, .. }) = state.wasi.fds.get_mut(&fd) {
            *p += total;
        }
    }
    Ok(total as u32)
}

/// Defines every Preview1 function on `linker`. Which ones a module may import is decided by
/// the import check, before instantiation.
#[allow(clippy::too_many_lines)]
pub fn link(linker: &mut Linker<HostState>) -> Result<(), wasmi::Error> {
    let m = MODULE;
    linker.func_wrap(m, "args_sizes_get", |mut c: C<'_>, count: u32, size: u32| {
        with_memory(&mut c, |g, s| write_sizes(g, &s.wasi.args, count, size))
    })?;
    linker.func_wrap(m, "args_get", |mut c: C<'_>, ptrs: u32, buf: u32| {
        with_memory(&mut c, |g, s| write_list(g, &s.wasi.args, ptrs, buf))
    })?;
    linker.func_wrap(m, "environ_sizes_get", |mut c: C<'_>, count: u32, size: u32| {
        with_memory(&mut c, |g, s| write_sizes(g, &s.wasi.environ, count, size))
    })?;
    linker.func_wrap(m, "environ_get", |mut c: C<'_>, ptrs: u32, buf: u32| {
        with_memory(&mut c, |g, s| write_list(g, &s.wasi.environ, ptrs, buf))
    })?;
    linker.func_wrap(m, "clock_res_get", |mut c: C<'_>, id: u32, out: u32| {
        with_memory(&mut c, |g, s| {
            let clock = Clock::from_wasi(id).ok_or(Errno::Inval)?;
            g.set_u64(out, s.env.resolution_ns(clock))
        })
    })?;
    linker.func_wrap(m, "clock_time_get", |mut c: C<'_>, id: u32, _precision: u64, out: u32| {
        with_memory(&mut c, |g, s| {
            let clock = Clock::from_wasi(id).ok_or(Errno::Inval)?;
            g.set_u64(out, s.env.now_ns(clock))
        })
    })?;
    linker.func_wrap(m, "random_get", |mut c: C<'_>, buf: u32, len: u32| {
        with_memory(&mut c, |g, s| {
            let dest = g.bytes_mut(buf, len)?;
            s.env.fill_random(dest);
            Ok(())
        })
    })?;
    linker.func_wrap(m, "fd_write", |mut c: C<'_>, fd: u32, iovs: u32, n: u32, written: u32| {
        with_memory(&mut c, |g, s| {
            let stderr = match fd_of(s, fd)? {
                Fd::Stdout => false,
                Fd::Stderr => true,
                _ => return Err(Errno::Badf),
            };
            // Check every iovec and the result pointer before capturing anything.
            let vecs = g.iovecs(iovs, n)?;
            for (ptr, len) in &vecs {
                g.range(*ptr, *len)?;
            }
            g.range(written, 4)?;
            let mut total: u32 = 0;
            for (ptr, len) in vecs {
                s.wasi.output.write(stderr, g.bytes(ptr, len)?);
                total = total.saturating_add(len);
            }
            g.set_u32(written, total)
        })
    })?;
    linker.func_wrap(m, "fd_pwrite", |mut c: C<'_>, fd: u32, _iovs: u32, _n: u32, _at: u64, _w: u32| {
        with_memory(&mut c, |_, s| match fd_of(s, fd)? {
            Fd::Stdout | Fd::Stderr | Fd::Stdin => Err(Errno::Spipe),
            Fd::File { .. } => Err(Errno::Badf),
            _ => Err(Errno::Isdir),
        })
    })?;
    linker.func_wrap(m, "fd_read", |mut c: C<'_>, fd: u32, iovs: u32, n: u32, nread: u32| {
        with_memory(&mut c, |g, s| {
            let read = read_into(g, s, fd, iovs, n, None)?;
            g.set_u32(nread, read)
        })
    })?;
    linker.func_wrap(m, "fd_pread", |mut c: C<'_>, fd: u32, iovs: u32, n: u32, at: u64, nread: u32| {
        with_memory(&mut c, |g, s| {
            let read = read_into(g, s, fd, iovs, n, Some(at))?;
            g.set_u32(nread, read)
        })
    })?;
    linker.func_wrap(m, "fd_close", |mut c: C<'_>, fd: u32| {
        let state = c.data_mut();
        match state.wasi.fds.remove(&fd) {
            Some(entry) => {
                state.wasi.close_node(&entry);
                Errno::Success as i32
            }
            None => Errno::Badf as i32,
        }
    })?;
    linker.func_wrap(m, "fd_fdstat_get", |mut c: C<'_>, fd: u32, out: u32| {
        with_memory(&mut c, |g, s| {
            let (kind, rights, inheriting) = match fd_of(s, fd)? {
                Fd::Stdin => (FILETYPE_CHAR, 1 << 1, 0),
                Fd::Stdout | Fd::Stderr => (FILETYPE_CHAR, 1 << 6, 0),
                Fd::File { .. } => (FILETYPE_FILE, RIGHTS_FILE, 0),
                Fd::Preopen { .. } | Fd::Dir { .. } => (FILETYPE_DIR, RIGHTS_DIR, RIGHTS_DIR | RIGHTS_FILE),
            };
            let mut buf = [0u8; 24];
            buf[0] = kind;
            buf[8..16].copy_from_slice(&u64::to_le_bytes(rights));
            buf[16..24].copy_from_slice(&u64::to_le_bytes(inheriting));
            g.set(out, &buf)
        })
    })?;
    linker.func_wrap(m, "fd_fdstat_set_flags", |c: C<'_>, fd: u32, flags: u32| match fd_of(c.data(), fd) {
        Ok(_) if flags == 0 => Errno::Success as i32,
        Ok(_) => Errno::Notsup as i32,
        Err(e) => e as i32,
    })?;
    linker.func_wrap(m, "fd_fdstat_set_rights", |c: C<'_>, fd: u32, _base: u64, _inh: u64| {
        match fd_of(c.data(), fd) {
            Ok(_) => Errno::Notsup as i32,
            Err(e) => e as i32,
        }
    })?;
    linker.func_wrap(m, "fd_prestat_get", |mut c: C<'_>, fd: u32, out: u32| {
        with_memory(&mut c, |g, s| match fd_of(s, fd)? {
            Fd::Preopen { path, .. } => {
                let len = path.len() as u32;
                g.set_u32(out, 0)?;
                g.set_u32(out.checked_add(4).ok_or(Errno::Fault)?, len)
            }
            _ => Err(Errno::Badf),
        })
    })?;
    linker.func_wrap(m, "fd_prestat_dir_name", |mut c: C<'_>, fd: u32, buf: u32, len: u32| {
        with_memory(&mut c, |g, s| match fd_of(s, fd)? {
            Fd::Preopen { path, .. } => {
                if (len as usize) < path.len() {
                    return Err(Errno::Nametoolong);
                }
                let path = path.clone();
                g.set(buf, path.as_bytes())
            }
            _ => Err(Errno::Badf),
        })
    })?;
    linker.func_wrap(m, "fd_seek", |mut c: C<'_>, fd: u32, offset: i64, whence: u32, out: u32| {
        with_memory(&mut c, |g, s| {
            let (node, position) = match fd_of(s, fd)? {
                Fd::File { node, position } => (*node, *position),
                Fd::Stdin | Fd::Stdout | Fd::Stderr => return Err(Errno::Spipe),
                _ => return Err(Errno::Badf),
            };
            let base = match whence {
                0 => 0,
                1 => position,
                2 => fs_of(s)?.stat(node)?.size,
                _ => return Err(Errno::Inval),
            };
            let target = i128::from(base) + i128::from(offset);
            let target = u64::try_from(target).map_err(|_| Errno::Inval)?;
            if let Some(Fd::File { position, .. }) = s.wasi.fds.get_mut(&fd) {
                *position = target;
            }
            g.set_u64(out, target)
        })
    })?;
    linker.func_wrap(m, "fd_tell", |mut c: C<'_>, fd: u32, out: u32| {
        with_memory(&mut c, |g, s| match fd_of(s, fd)? {
            Fd::File { position, .. } => {
                let position = *position;
                g.set_u64(out, position)
            }
            Fd::Stdin | Fd::Stdout | Fd::Stderr => Err(Errno::Spipe),
            _ => Err(Errno::Badf),
        })
    })?;
    linker.func_wrap(m, "fd_filestat_get", |mut c: C<'_>, fd: u32, out: u32| {
        with_memory(&mut c, |g, s| {
            let stat = match fd_of(s, fd)? {
                Fd::Stdin | Fd::Stdout | Fd::Stderr => STDIO_STAT,
                Fd::File { node, .. } | Fd::Dir { node } | Fd::Preopen { node, .. } => {
                    let node = *node;
                    fs_of(s)?.stat(node)?
                }
            };
            write_filestat(g, out, &stat)
        })
    })?;
    linker.func_wrap(m, "fd_readdir", |mut c: C<'_>, fd: u32, buf: u32, len: u32, cookie: u64, used: u32| {
        with_memory(&mut c, |g, s| {
            let node = fd_of(s, fd)?.dir_node().ok_or(Errno::Notdir)?;
            let mut entries = fs_of(s)?.read_dir(node)?;
            entries.sort_by(|a, b| a.name.cmp(&b.name));
            let dot = |name: &str| fs::DirEntry { name: name.into(), kind: NodeKind::Directory, ino: 0 };
            entries.insert(0, dot(".."));
            entries.insert(0, dot("."));
            let mut out: Vec<u8> = Vec::new();
            for (index, entry) in entries.iter().enumerate().skip(cookie.min(usize::MAX as u64) as usize) {
                let mut header = [0u8; 24];
                header[0..8].copy_from_slice(&(index as u64 + 1).to_le_bytes());
                header[8..16].copy_from_slice(&entry.ino.to_le_bytes());
                header[16..20].copy_from_slice(&(entry.name.len() as u32).to_le_bytes());
                header[20] = filetype(entry.kind);
                out.extend_from_slice(&header);
                out.extend_from_slice(entry.name.as_bytes());
                if out.len() >= len as usize {
                    break;
                }
            }
            out.truncate(len as usize);
            g.set(buf, &out)?;
            g.set_u32(used, out.len() as u32)
        })
    })?;
    linker.func_wrap(
        m,
        "path_open",
        |mut c: C<'_>,
         dirfd: u32,
         dirflags: u32,
         path: u32,
         path_len: u32,
         oflags: u32,
         rights: u64,
         _inheriting: u64,
         fdflags: u32,
         out: u32| {
            with_memory(&mut c, |g, s| {
                fd_of(s, dirfd)?.dir_node().ok_or(Errno::Notdir)?;
                let wants_write =
                    oflags & (1 | 4 | 8) != 0 || fdflags & (1 | 2 | 8 | 16) != 0 || rights & RIGHTS_WRITE != 0;
                let path = g.str(path, path_len)?;
                if wants_write {
                    // Creating, truncating or writing anything under a read-only preopen.
                    fs::normalize(path)?;
                    return Err(Errno::Perm);
                }
                let node = open_path(s, dirfd, path, dirflags & 1 != 0)?;
                let kind = match fs_of(s)?.stat(node) {
                    Ok(stat) => stat.kind,
                    Err(e) => {
                        fs_of(s)?.close(node);
                        return Err(e.into());
                    }
                };
                let refusal = match kind {
                    NodeKind::File if oflags & 2 != 0 => Some(Errno::Notdir),
                    NodeKind::Symlink => Some(Errno::Loop),
                    _ => None,
                };
                if let Some(errno) = refusal {
                    fs_of(s)?.close(node);
                    return Err(errno);
                }
                let fd = match kind {
                    NodeKind::Directory => Fd::Dir { node },
                    _ => Fd::File { node, position: 0 },
                };
                let fd = s.wasi.insert_fd(fd);
                g.set_u32(out, fd)
            })
        },
    )?;
    linker.func_wrap(
        m,
        "path_filestat_get",
        |mut c: C<'_>, dirfd: u32, flags: u32, path: u32, len: u32, out: u32| {
            with_memory(&mut c, |g, s| {
                let path = g.str(path, len)?;
                let node = open_path(s, dirfd, path, flags & 1 != 0)?;
                let stat = fs_of(s)?.stat(node);
                fs_of(s)?.close(node);
                write_filestat(g, out, &stat?)
            })
        },
    )?;
    linker.func_wrap(
        m,
        "path_readlink",
        |mut c: C<'_>, dirfd: u32, path: u32, len: u32, _buf: u32, _cap: u32, _used: u32| {
            with_memory(&mut c, |g, s| {
                let path = g.str(path, len)?;
                let node = open_path(s, dirfd, path, false)?;
                fs_of(s)?.close(node);
                // Symlinks are resolved by the host and never shown to the guest as such.
                Err(Errno::Inval)
            })
        },
    )?;
    linker.func_wrap(m, "path_create_directory", |c: C<'_>, fd: u32, _p: u32, _l: u32| read_only_dir(c, fd))?;
    linker.func_wrap(m, "path_remove_directory", |c: C<'_>, fd: u32, _p: u32, _l: u32| read_only_dir(c, fd))?;
    linker.func_wrap(m, "path_unlink_file", |c: C<'_>, fd: u32, _p: u32, _l: u32| read_only_dir(c, fd))?;
    linker.func_wrap(
        m,
        "path_filestat_set_times",
        |c: C<'_>, fd: u32, _f: u32, _p: u32, _l: u32, _a: u64, _m: u64, _fl: u32| read_only_dir(c, fd),
    )?;
    linker.func_wrap(
        m,
        "path_link",
        |c: C<'_>, fd: u32, _f: u32, _p: u32, _l: u32, _nfd: u32, _np: u32, _nl: u32| read_only_dir(c, fd),
    )?;
    linker.func_wrap(m, "path_rename", |c: C<'_>, fd: u32, _p: u32, _l: u32, _nfd: u32, _np: u32, _nl: u32| {
        read_only_dir(c, fd)
    })?;
    linker
        .func_wrap(m, "path_symlink", |c: C<'_>, _p: u32, _l: u32, fd: u32, _np: u32, _nl: u32| read_only_dir(c, fd))?;
    linker.func_wrap(m, "fd_advise", |c: C<'_>, fd: u32, _o: u64, _l: u64, _a: u32| match fd_of(c.data(), fd) {
        Ok(Fd::File { .. }) => Errno::Success as i32,
        Ok(Fd::Stdin | Fd::Stdout | Fd::Stderr) => Errno::Spipe as i32,
        Ok(_) => Errno::Isdir as i32,
        Err(e) => e as i32,
    })?;
    linker.func_wrap(m, "fd_allocate", |c: C<'_>, fd: u32, _o: u64, _l: u64| write_to_fd(c, fd))?;
    linker.func_wrap(m, "fd_filestat_set_size", |c: C<'_>, fd: u32, _s: u64| write_to_fd(c, fd))?;
    linker.func_wrap(m, "fd_filestat_set_times", |c: C<'_>, fd: u32, _a: u64, _m: u64, _f: u32| write_to_fd(c, fd))?;
    linker.func_wrap(m, "fd_datasync", |c: C<'_>, fd: u32| sync_fd(c, fd))?;
    linker.func_wrap(m, "fd_sync", |c: C<'_>, fd: u32| sync_fd(c, fd))?;
    linker.func_wrap(m, "fd_renumber", |mut c: C<'_>, from: u32, to: u32| {
        let state = c.data_mut();
        if !state.wasi.fds.contains_key(&to) {
            return Errno::Badf as i32;
        }
        let Some(entry) = state.wasi.fds.remove(&from) else {
            return Errno::Badf as i32;
        };
        if let Some(old) = state.wasi.fds.insert(to, entry) {
            state.wasi.close_node(&old);
        }
        Errno::Success as i32
    })?;
    linker.func_wrap(m, "poll_oneoff", |mut c: C<'_>, subs: u32, events: u32, n: u32, nevents: u32| {
        with_memory(&mut c, |g, s| poll_oneoff(g, s, subs, events, n, nevents))
    })?;
    linker.func_wrap(m, "proc_exit", |_c: C<'_>, code: i32| -> Result<(), wasmi::Error> {
        Err(wasmi::Error::i32_exit(code))
    })?;
    linker.func_wrap(m, "proc_raise", |_c: C<'_>, _sig: u32| Errno::Nosys as i32)?;
    linker.func_wrap(m, "sched_yield", |_c: C<'_>| Errno::Success as i32)?;
    linker.func_wrap(m, "sock_accept", |c: C<'_>, fd: u32, _f: u32, _o: u32| not_a_socket(c, fd))?;
    linker.func_wrap(m, "sock_recv", |c: C<'_>, fd: u32, _a: u32, _b: u32, _d: u32, _e: u32, _f: u32| {
        not_a_socket(c, fd)
    })?;
    linker.func_wrap(m, "sock_send", |c: C<'_>, fd: u32, _a: u32, _b: u32, _d: u32, _e: u32| not_a_socket(c, fd))?;
    linker.func_wrap(m, "sock_shutdown", |c: C<'_>, fd: u32, _how: u32| not_a_socket(c, fd))?;
    Ok(())
}

/// Answers a write-like call on an fd: files and stdio are read-only here (`EBADF`, as for a
/// descriptor without write rights); directories are `EISDIR`.
fn write_to_fd(caller: C<'_>, fd: u32) -> i32 {
    match fd_of(caller.data(), fd) {
        Ok(Fd::File { .. } | Fd::Stdin | Fd::Stdout | Fd::Stderr) => Errno::Badf as i32,
        Ok(_) => Errno::Isdir as i32,
        Err(e) => e as i32,
    }
}

fn sync_fd(caller: C<'_>, fd: u32) -> i32 {
    match fd_of(caller.data(), fd) {
        Ok(Fd::Stdin | Fd::Stdout | Fd::Stderr) => Errno::Inval as i32,
        Ok(_) => Errno::Success as i32,
        Err(e) => e as i32,
    }
}

/// `poll_oneoff`: fd subscriptions on stdio and files are ready at once; otherwise the host
/// sleeps until the earliest clock subscription (a virtual clock just advances).
fn poll_oneoff(
    g: &mut Guest<'_>,
    s: &mut HostState,
    subs: u32,
    events: u32,
    n: u32,
    nevents: u32,
) -> Result<(), Errno> {
    if n == 0 {
        return Err(Errno::Inval);
    }
    let size = n.checked_mul(48).ok_or(Errno::Fault)?;
    let raw = g.bytes(subs, size)?.to_vec();
    g.range(events, n.checked_mul(32).ok_or(Errno::Fault)?)?;
    let mut ready: Vec<[u8; 32]> = Vec::new();
    let mut earliest: Option<(u64, Vec<u64>)> = None;
    for sub in raw.chunks_exact(48) {
        let field = |at: usize| u64::from_le_bytes(sub[at..at + 8].try_into().unwrap_or([0; 8]));
        let userdata = field(0);
        let tag = sub[8];
        let mut event = [0u8; 32];
        event[0..8].copy_from_slice(&userdata.to_le_bytes());
        event[10] = tag;
        match tag {
            0 => {
                let id = u32::from_le_bytes(sub[16..20].try_into().unwrap_or([0; 4]));
                let timeout = field(24);
                let absolute = u16::from_le_bytes([sub[40], sub[41]]) & 1 != 0;
                let Some(clock) = Clock::from_wasi(id) else {
                    event[8..10].copy_from_slice(&(Errno::Inval as u16).to_le_bytes());
                    ready.push(event);
                    continue;
                };
                let wait = if absolute { timeout.saturating_sub(s.env.now_ns(clock)) } else { timeout };
                match &mut earliest {
                    Some((best, who)) if wait == *best => who.push(userdata),
                    Some((best, _)) if wait > *best => {}
                    _ => earliest = Some((wait, alloc::vec![userdata])),
                }
            }
            1 | 2 => {
                let fd = u32::from_le_bytes(sub[16..20].try_into().unwrap_or([0; 4]));
                let errno = match (fd_of(s, fd), tag) {
                    (Err(e), _) => e,
                    (Ok(Fd::Stdin | Fd::File { .. }), 1) | (Ok(Fd::Stdout | Fd::Stderr), 2) => Errno::Success,
                    (Ok(_), _) => Errno::Badf,
                };
                event[8..10].copy_from_slice(&(errno as u16).to_le_bytes());
                ready.push(event);
            }
            _ => return Err(Errno::Inval),
        }
    }
    if ready.is_empty() {
        if let Some((wait, who)) = earliest {
            s.env.sleep_ns(wait);
            for userdata in who {
                let mut event = [0u8; 32];
                event[0..8].copy_from_slice(&userdata.to_le_bytes());
                ready.push(event);
            }
        }
    }
    for (i, event) in ready.iter().enumerate() {
        g.set(events + 32 * i as u32, event)?;
    }
    g.set_u32(nevents, ready.len() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview1_table_has_unique_names() {
        let mut names: Vec<&str> = PREVIEW1.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PREVIEW1.len());
    }

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
