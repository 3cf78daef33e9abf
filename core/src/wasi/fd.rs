//! The fd_* functions: stdio, preopened directories and files. Writes to stdout and stderr go
//! to the output sink here, writes to a file to `write`; stdin reads from the embedder's
//! `InputSource`, never waiting past the run's deadline; bytes moved are charged at the
//! bulk-memory rate and every call into the embedder's filesystem costs `FS_CALL_FUEL`.

use super::call::Shim;
use super::errno::{Errno, WasiError};
use super::state::Fd;
use super::stdio::{Input, StdioKind, Written};
use crate::fs::{self, NodeKind, NodeStat};
use crate::guest::Guest;
use crate::meter::{fuel_for_bytes, FS_CALL_FUEL};
use alloc::vec::Vec;

const FILETYPE_UNKNOWN: u8 = 0;
const FILETYPE_CHAR: u8 = 2;
const FILETYPE_DIR: u8 = 3;
const FILETYPE_FILE: u8 = 4;
const FILETYPE_SYMLINK: u8 = 7;

const RIGHT_FD_READ: u64 = 1 << 1;
const RIGHT_FD_SEEK: u64 = 1 << 2;
const RIGHT_FD_TELL: u64 = 1 << 5;
const RIGHT_FD_WRITE: u64 = 1 << 6;

/// Rights reported for read-only files: read, seek, tell, advise, filestat_get, poll.
pub(super) const RIGHTS_FILE: u64 = RIGHT_FD_READ | RIGHT_FD_SEEK | RIGHT_FD_TELL | (1 << 7) | (1 << 21) | (1 << 27);
/// Rights a file opened for writing reports besides [`RIGHTS_FILE`]: datasync, sync, write,
/// filestat_set_size.
const RIGHTS_FILE_WRITE: u64 = (1 << 0) | (1 << 4) | RIGHT_FD_WRITE | (1 << 22);
/// Rights reported for directories: the set wasmtime reports for every directory (path_open,
/// readdir, the path_* calls, filestat), which programs built against it expect. Rights are
/// advisory in Preview1; read-only is enforced by refusing each mutation, not by these bits.
pub(super) const RIGHTS_DIR: u64 = (1 << 9)
    | (1 << 10)
    | (1 << 11)
    | (1 << 12)
    | (1 << 13)
    | (1 << 14)
    | (1 << 15)
    | (1 << 16)
    | (1 << 17)
    | (1 << 18)
    | (1 << 20)
    | (1 << 21)
    | (1 << 23)
    | (1 << 24)
    | (1 << 25)
    | (1 << 26);
/// Rights a directory reports as inheritable: its own plus the fd_* rights of what is opened
/// below it (wasmtime's set).
const RIGHTS_DIR_INHERITING: u64 = RIGHTS_DIR
    | (1 << 0)
    | RIGHT_FD_READ
    | RIGHT_FD_SEEK
    | (1 << 3)
    | (1 << 4)
    | RIGHT_FD_TELL
    | RIGHT_FD_WRITE
    | (1 << 7)
    | (1 << 8)
    | (1 << 22)
    | (1 << 27);

/// The filetype and rights `fd_fdstat_get` reports for a stdio fd of `kind` with `rights`
/// (read for stdin, write for stdout and stderr).
fn stdio_fdstat(kind: StdioKind, rights: u64) -> (u8, u64) {
    match kind {
        StdioKind::Terminal => (FILETYPE_CHAR, rights),
        StdioKind::Pipe => (FILETYPE_UNKNOWN, rights),
        StdioKind::File => (FILETYPE_FILE, rights),
        StdioKind::Device => (FILETYPE_CHAR, rights | RIGHT_FD_SEEK | RIGHT_FD_TELL),
    }
}

/// What `fd_filestat_get` reports for a stdio fd of `kind`.
fn stdio_stat(kind: StdioKind) -> NodeStat {
    let kind = match kind {
        StdioKind::Terminal | StdioKind::Device => NodeKind::CharacterDevice,
        StdioKind::Pipe => NodeKind::Other,
        StdioKind::File => NodeKind::File,
    };
    NodeStat { kind, size: 0, dev: 0, ino: 0, nlink: 1, atime_ns: 0, mtime_ns: 0, ctime_ns: 0 }
}

/// The WASI filetype of a node kind.
pub(super) fn filetype(kind: NodeKind) -> u8 {
    match kind {
        NodeKind::File => FILETYPE_FILE,
        NodeKind::Directory => FILETYPE_DIR,
        NodeKind::Symlink => FILETYPE_SYMLINK,
        NodeKind::CharacterDevice => FILETYPE_CHAR,
        NodeKind::Other => FILETYPE_UNKNOWN,
    }
}

/// Writes a WASI `filestat` at `ptr`.
pub(super) fn write_filestat(guest: &mut Guest<'_>, ptr: u32, stat: &NodeStat) -> Result<(), WasiError> {
    let mut buf = [0u8; 64];
    buf[0..8].copy_from_slice(&stat.dev.to_le_bytes());
    buf[8..16].copy_from_slice(&stat.ino.to_le_bytes());
    buf[16] = filetype(stat.kind);
    buf[24..32].copy_from_slice(&stat.nlink.to_le_bytes());
    buf[32..40].copy_from_slice(&stat.size.to_le_bytes());
    buf[40..48].copy_from_slice(&stat.atime_ns.to_le_bytes());
    buf[48..56].copy_from_slice(&stat.mtime_ns.to_le_bytes());
    buf[56..64].copy_from_slice(&stat.ctime_ns.to_le_bytes());
    Ok(guest.set(ptr, &buf)?)
}

/// The metadata of an open node, charged as one filesystem call.
pub(super) fn stat_node(state: &mut Shim<'_>, node: fs::NodeId) -> Result<NodeStat, WasiError> {
    state.run.charge(FS_CALL_FUEL)?;
    Ok(state.wasi.fs()?.stat(node)?)
}

/// `fd_write`: gathers the iovecs into stdout or stderr. Every iovec and the result pointer are
/// checked, and the whole write charged, before anything is written. The sink waits for its
/// reader at most until the run's deadline: a write the deadline cuts short ends the run with
/// `deadline_exceeded`.
fn write(
    guest: &mut Guest<'_>,
    state: &mut Shim<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    written: u32,
) -> Result<(), WasiError> {
    let stderr = match state.wasi.fd(fd)? {
        Fd::Stdout => false,
        Fd::Stderr => true,
        _ => {
            guest.range(written, 4)?;
            let done = super::write::write_file(guest, state, fd, (iovs, n), None)?;
            return Ok(guest.set_u32(written, done)?);
        }
    };
    let mut total: u64 = 0;
    for (ptr, len) in guest.iovecs(iovs, n)? {
        guest.range(ptr, len)?;
        total += u64::from(len);
    }
    guest.range(written, 4)?;
    state.run.charge_bytes(u64::from(n) * 8 + total)?;
    let mut done: u64 = 0;
    for (ptr, len) in guest.iovecs(iovs, n)? {
        if len == 0 {
            continue;
        }
        let wait = state.run.deadline_wait_ns();
        match state.wasi.output.write(stderr, guest.bytes(ptr, len)?, wait) {
            Written::Taken => done += u64::from(len),
            Written::Closed if done == 0 => return Err(Errno::Pipe.into()),
            Written::Pending if wait.is_some() => return Err(state.run.stop_failure().into()),
            Written::Pending if done == 0 => return Err(Errno::Again.into()),
            Written::Closed | Written::Pending => break,
        }
    }
    Ok(guest.set_u32(written, u32::try_from(done).unwrap_or(u32::MAX))?)
}

/// Buffers (each at most one filesystem call) one `fd_read`/`fd_pread`/`fd_write`/`fd_pwrite`
/// goes through between looks at the deadline.
const IOVECS_PER_DEADLINE_CHECK: u32 = 256;

/// Goes through the non-empty buffers of an iovec array already checked to lie in memory (as
/// readv and writev do, an empty one costs no filesystem call), looking at the deadline every
/// `IOVECS_PER_DEADLINE_CHECK` of them: millions of buffers are as many filesystem calls.
/// `each` answers whether to go on.
pub(super) fn each_buffer(
    guest: &mut Guest<'_>,
    state: &mut Shim<'_>,
    (iovs, n): (u32, u32),
    mut each: impl FnMut(&mut Guest<'_>, &mut Shim<'_>, u32, u32) -> Result<bool, WasiError>,
) -> Result<(), WasiError> {
    for index in 0..n {
        if index % IOVECS_PER_DEADLINE_CHECK == IOVECS_PER_DEADLINE_CHECK - 1 {
            state.run.deadline_remaining(state.run.fuel_used())?;
        }
        // The array was checked, so these offsets do not overflow.
        let entry = iovs + index * 8;
        let (ptr, len) = (guest.u32(entry)?, guest.u32(entry + 4)?);
        if len > 0 && !each(guest, state, ptr, len)? {
            break;
        }
    }
    Ok(())
}

/// Reads from an fd into iovecs at its position (`None`) or at an offset (`Some`); returns the
/// bytes read. Each read from the filesystem costs `FS_CALL_FUEL` plus the bytes it moved.
fn read_into(
    guest: &mut Guest<'_>,
    state: &mut Shim<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    at: Option<u64>,
) -> Result<u32, WasiError> {
    let (node, position) = match state.wasi.fd(fd)? {
        Fd::Stdin => return if at.is_some() { Err(Errno::Spipe.into()) } else { read_stdin(guest, state, iovs, n) },
        Fd::File { write: Some(write), .. } if !write.readable => return Err(Errno::Badf.into()),
        Fd::File { node, position, .. } => (*node, at.unwrap_or(*position)),
        Fd::Preopen { .. } | Fd::Dir { .. } => return Err(Errno::Isdir.into()),
        Fd::Stdout | Fd::Stderr => return Err(Errno::Badf.into()),
    };
    guest.iovecs(iovs, n)?;
    state.run.charge_bytes(u64::from(n) * 8)?;
    let mut total: u64 = 0;
    each_buffer(guest, state, (iovs, n), |guest, state, ptr, len| {
        state.run.charge(FS_CALL_FUEL)?;
        let buf = guest.bytes_mut(ptr, len)?;
        let read = state.wasi.fs()?.read_at(node, position.saturating_add(total), buf)?;
        state.run.charge(fuel_for_bytes(read as u64))?;
        total += read as u64;
        Ok(read == len as usize)
    })?;
    if at.is_none() {
        if let Some(Fd::File { position: p, .. }) = state.wasi.fds.get_mut(&fd) {
            *p += total;
        }
    }
    Ok(u32::try_from(total).unwrap_or(u32::MAX))
}

/// Reads stdin into the first non-empty iovec, waiting for input at most until the run's
/// deadline: a read the deadline cuts short ends the run with `deadline_exceeded`.
fn read_stdin(guest: &mut Guest<'_>, state: &mut Shim<'_>, iovs: u32, n: u32) -> Result<u32, WasiError> {
    let target = guest.iovecs(iovs, n)?.find(|(_, len)| *len > 0);
    state.run.charge_bytes(u64::from(n) * 8)?;
    let Some((ptr, len)) = target else {
        return Ok(0);
    };
    guest.range(ptr, len)?;
    let remaining = state.run.deadline_remaining(state.run.fuel_used())?;
    let buf = guest.bytes_mut(ptr, len)?;
    match state.wasi.stdin.read(buf, remaining) {
        Input::Bytes(read) => {
            let read = read.min(len as usize);
            state.run.charge(fuel_for_bytes(read as u64))?;
            Ok(read as u32)
        }
        Input::End => Ok(0),
        Input::Pending if remaining.is_some() => Err(state.run.stop_failure().into()),
        Input::Pending => Err(Errno::Again.into()),
        Input::Failed => Err(Errno::Io.into()),
    }
}

/// The entries of one `fd_readdir` call: the listing (read when it starts at cookie 0, with
/// `.` and `..` first and the rest sorted by name) serialized from `cookie` into at most `len`
/// bytes.
fn readdir(state: &mut Shim<'_>, fd: u32, len: u32, cookie: u64) -> Result<Vec<u8>, WasiError> {
    let node = state.wasi.fd(fd)?.dir_node().ok_or(Errno::Notdir)?;
    if cookie == 0 || !state.wasi.listings.contains_key(&fd) {
        state.run.charge(FS_CALL_FUEL)?;
        let mut entries = state.wasi.fs()?.read_dir(node)?;
        state.run.charge_bytes(entries.iter().map(|e| 24 + e.name.len() as u64).sum())?;
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        // `.` is the directory itself (its inode, as `d_ino` is); `..` may be above the preopen.
        let ino = stat_node(state, node).map_or(0, |stat| stat.ino);
        let dot = |name: &str, ino: u64| fs::DirEntry { name: name.into(), kind: NodeKind::Directory, ino };
        entries.insert(0, dot("..", 0));
        entries.insert(0, dot(".", ino));
        state.wasi.listings.insert(fd, entries);
    }
    let entries = state.wasi.listings.get(&fd).map_or(&[][..], Vec::as_slice);
    let mut out: Vec<u8> = Vec::new();
    let skip = usize::try_from(cookie).unwrap_or(usize::MAX);
    for (index, entry) in entries.iter().enumerate().skip(skip) {
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
    state.run.charge_bytes(out.len() as u64)?;
    Ok(out)
}

fn fdstat(guest: &mut Guest<'_>, state: &Shim<'_>, fd: u32, out: u32) -> Result<(), WasiError> {
    let stdio = state.wasi.stdio;
    let mut flags: u16 = 0;
    let ((kind, rights), inheriting) = match state.wasi.fd(fd)? {
        Fd::Stdin => (stdio_fdstat(stdio[0], RIGHT_FD_READ), 0),
        Fd::Stdout => (stdio_fdstat(stdio[1], RIGHT_FD_WRITE), 0),
        Fd::Stderr => (stdio_fdstat(stdio[2], RIGHT_FD_WRITE), 0),
        Fd::File { write: None, .. } => ((FILETYPE_FILE, RIGHTS_FILE), 0),
        Fd::File { write: Some(write), .. } => {
            flags = write.fdflags;
            let read = if write.readable { RIGHTS_FILE } else { RIGHTS_FILE & !RIGHT_FD_READ };
            ((FILETYPE_FILE, read | RIGHTS_FILE_WRITE), 0)
        }
        Fd::Preopen { .. } | Fd::Dir { .. } => ((FILETYPE_DIR, RIGHTS_DIR), RIGHTS_DIR_INHERITING),
    };
    let mut buf = [0u8; 24];
    buf[0] = kind;
    buf[2..4].copy_from_slice(&flags.to_le_bytes());
    buf[8..16].copy_from_slice(&u64::to_le_bytes(rights));
    buf[16..24].copy_from_slice(&u64::to_le_bytes(inheriting));
    Ok(guest.set(out, &buf)?)
}

fn seek(
    guest: &mut Guest<'_>,
    state: &mut Shim<'_>,
    fd: u32,
    offset: i64,
    whence: u32,
    out: u32,
) -> Result<(), WasiError> {
    let (node, position) = match state.wasi.fd(fd)? {
        Fd::File { node, position, .. } => (*node, *position),
        Fd::Stdin | Fd::Stdout | Fd::Stderr => return Err(Errno::Spipe.into()),
        _ => return Err(Errno::Badf.into()),
    };
    let base = match whence {
        0 => 0,
        1 => position,
        2 => stat_node(state, node)?.size,
        _ => return Err(Errno::Inval.into()),
    };
    let target = i128::from(base) + i128::from(offset);
    if target > i128::from(i64::MAX) {
        // A position a guest's signed `off_t` cannot hold (it would read it as negative).
        return Err(Errno::Overflow.into());
    }
    let target = u64::try_from(target).map_err(|_| Errno::Inval)?;
    guest.range(out, 8)?;
    if let Some(Fd::File { position, .. }) = state.wasi.fds.get_mut(&fd) {
        *position = target;
    }
    Ok(guest.set_u64(out, target)?)
}

/// Answers a call that would change times on an fd: times are never changed (`EBADF` on
/// files and stdio, as for a descriptor without the right; `EISDIR` on directories).
fn set_times(state: &Shim<'_>, fd: u32) -> Result<(), WasiError> {
    Err(match state.wasi.fd(fd)? {
        Fd::File { .. } | Fd::Stdin | Fd::Stdout | Fd::Stderr => Errno::Badf,
        _ => Errno::Isdir,
    }
    .into())
}

/// `fd_write`.
pub(crate) fn fd_write(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    written: u32,
) -> Result<(), WasiError> {
    write(g, s, fd, iovs, n, written)
}

/// `fd_read`.
pub(crate) fn fd_read(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    nread: u32,
) -> Result<(), WasiError> {
    g.range(nread, 4)?;
    let read = read_into(g, s, fd, iovs, n, None)?;
    Ok(g.set_u32(nread, read)?)
}

/// `fd_pread`.
pub(crate) fn fd_pread(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    at: u64,
    nread: u32,
) -> Result<(), WasiError> {
    g.range(nread, 4)?;
    let read = read_into(g, s, fd, iovs, n, Some(at))?;
    Ok(g.set_u32(nread, read)?)
}

/// `fd_close`.
pub(crate) fn fd_close(_g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32) -> Result<(), WasiError> {
    Ok(s.wasi.close(fd)?)
}

/// `fd_fdstat_get`.
pub(crate) fn fd_fdstat_get(g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32, out: u32) -> Result<(), WasiError> {
    fdstat(g, s, fd, out)
}

/// `fd_fdstat_set_rights`: not supported.
pub(crate) fn fd_fdstat_set_rights(
    _g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    _base: u64,
    _inheriting: u64,
) -> Result<(), WasiError> {
    s.wasi.fd(fd)?;
    Err(Errno::Notsup.into())
}

/// `fd_prestat_get`: a preopen's name length.
pub(crate) fn fd_prestat_get(g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32, out: u32) -> Result<(), WasiError> {
    match s.wasi.fd(fd)? {
        Fd::Preopen { path, .. } => {
            let len = u32::try_from(path.len()).map_err(|_| Errno::Nametoolong)?;
            g.range(out, 8)?;
            g.set_u32(out, 0)?;
            Ok(g.set_u32(out + 4, len)?)
        }
        _ => Err(Errno::Badf.into()),
    }
}

/// `fd_prestat_dir_name`: a preopen's name.
pub(crate) fn fd_prestat_dir_name(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    buf: u32,
    len: u32,
) -> Result<(), WasiError> {
    match s.wasi.fd(fd)? {
        Fd::Preopen { path, .. } => {
            if (len as usize) < path.len() {
                return Err(Errno::Nametoolong.into());
            }
            Ok(g.set(buf, path.as_bytes())?)
        }
        _ => Err(Errno::Badf.into()),
    }
}

/// `fd_seek`.
pub(crate) fn fd_seek(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    offset: i64,
    whence: u32,
    out: u32,
) -> Result<(), WasiError> {
    seek(g, s, fd, offset, whence, out)
}

/// `fd_tell`.
pub(crate) fn fd_tell(g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32, out: u32) -> Result<(), WasiError> {
    match s.wasi.fd(fd)? {
        Fd::File { position, .. } => Ok(g.set_u64(out, *position)?),
        Fd::Stdin | Fd::Stdout | Fd::Stderr => Err(Errno::Spipe.into()),
        _ => Err(Errno::Badf.into()),
    }
}

/// `fd_filestat_get`.
pub(crate) fn fd_filestat_get(g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32, out: u32) -> Result<(), WasiError> {
    let stat = match s.wasi.fd(fd)? {
        Fd::Stdin => stdio_stat(s.wasi.stdio[0]),
        Fd::Stdout => stdio_stat(s.wasi.stdio[1]),
        Fd::Stderr => stdio_stat(s.wasi.stdio[2]),
        Fd::File { node, .. } | Fd::Dir { node, .. } | Fd::Preopen { node, .. } => {
            let node = *node;
            stat_node(s, node)?
        }
    };
    write_filestat(g, out, &stat)
}

/// `fd_readdir`.
pub(crate) fn fd_readdir(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    buf: u32,
    len: u32,
    cookie: u64,
    used: u32,
) -> Result<(), WasiError> {
    g.range(buf, len)?;
    g.range(used, 4)?;
    let out = readdir(s, fd, len, cookie)?;
    g.set(buf, &out)?;
    Ok(g.set_u32(used, out.len() as u32)?)
}

/// `fd_advise`: accepted on files, nothing to do.
pub(crate) fn fd_advise(
    _g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    _offset: u64,
    _len: u64,
    _advice: u32,
) -> Result<(), WasiError> {
    match s.wasi.fd(fd)? {
        Fd::File { .. } => Ok(()),
        Fd::Stdin | Fd::Stdout | Fd::Stderr => Err(Errno::Spipe.into()),
        _ => Err(Errno::Isdir.into()),
    }
}

/// `fd_renumber`: moves fd `from` onto `to`, closing what `to` held.
pub(crate) fn fd_renumber(_g: &mut Guest<'_>, s: &mut Shim<'_>, from: u32, to: u32) -> Result<(), WasiError> {
    s.wasi.fd(to)?;
    if from == to {
        s.wasi.fd(from)?;
        return Ok(());
    }
    let entry = s.wasi.fds.remove(&from).ok_or(Errno::Badf)?;
    let listing = s.wasi.listings.remove(&from);
    s.wasi.close(to)?;
    s.wasi.fds.insert(to, entry);
    if let Some(listing) = listing {
        s.wasi.listings.insert(to, listing);
    }
    Ok(())
}

fd_only! {
    /// `fd_filestat_set_times`: times are never changed.
    fd_filestat_set_times(u64, u64, u32) => set_times;
}
