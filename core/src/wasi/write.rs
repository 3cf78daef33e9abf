//! The write half of the shim, over a writable preopen (`tdm exec --dir-rw`; plugins cannot
//! import any of it): `path_open` that creates, truncates or opens for writing, `fd_write` and
//! `fd_pwrite` to a file, `fd_filestat_set_size`, `fd_sync`/`fd_datasync`, and
//! `path_create_directory`, `path_remove_directory`, `path_unlink_file`, `path_rename`.
//!
//! Below a read-only preopen (and any directory opened from one) every mutation answers `EPERM`,
//! as wasmtime answers for a preopen without mutate permission; a file opened for reading only
//! answers `EBADF` to a write, as a descriptor without write access does. Every byte written is
//! charged at the bulk-memory rate before any is written, every call into the filesystem costs
//! `FS_CALL_FUEL`, and a write of many buffers looks at the deadline between them. Paths are
//! normalized by core before the embedder sees them; the embedder keeps symlinks inside.

use super::call::Shim;
use super::errno::{Errno, WasiError};
use super::path::path_arg;
use super::state::{Fd, FileWrite};
use crate::fs::{self, FsError, HostFs, NodeId, NodeKind, WriteOptions};
use crate::guest::Guest;
use crate::meter::{fuel_for_bytes, FS_CALL_FUEL};
use alloc::string::String;

/// `path_open`'s `oflags`.
pub(super) const O_CREAT: u32 = 1;
/// `O_DIRECTORY`.
pub(super) const O_DIRECTORY: u32 = 2;
/// `O_EXCL`.
pub(super) const O_EXCL: u32 = 4;
/// `O_TRUNC`.
pub(super) const O_TRUNC: u32 = 8;
/// The `fdflags` bit of `O_APPEND`.
pub(super) const FDFLAG_APPEND: u32 = 1;
/// The fdflags a file opened for writing keeps: append, dsync, nonblock, rsync, sync.
const FDFLAGS_KEPT: u32 = 0x1f;
/// The right to read.
const RIGHT_FD_READ: u64 = 1 << 1;
/// Rights that mean write access when asked of `path_open`: fd_write, fd_allocate and
/// fd_filestat_set_size (wasi-libc and Rust std ask for none of them on a read-only open).
pub(super) const RIGHTS_WRITE: u64 = (1 << 6) | (1 << 8) | (1 << 22);

/// The node of directory fd `dirfd` if it may be written below: `EPERM` below a read-only
/// preopen, `ENOTDIR` on anything but a directory.
fn writable_dir(state: &Shim<'_>, dirfd: u32) -> Result<NodeId, WasiError> {
    let fd = state.wasi.fd(dirfd)?;
    match (fd.writable_dir(), fd.dir_node()) {
        (Some(node), _) => Ok(node),
        (None, Some(_)) => Err(Errno::Perm.into()),
        (None, None) => Err(Errno::Notdir.into()),
    }
}

/// The guest's path at `[ptr, ptr + len)` below directory `dir`, charged and normalized,
/// naming something below it (`root` is the errno when it names the directory itself). A path
/// with a trailing `/` names a directory: a file there is `ENOTDIR`, as POSIX says.
fn target(
    guest: &Guest<'_>,
    state: &mut Shim<'_>,
    dir: NodeId,
    (ptr, len): (u32, u32),
    root: Errno,
) -> Result<String, WasiError> {
    let path = path_arg(guest, state, ptr, len)?;
    let normalized = fs::normalize(&path)?;
    if normalized.is_empty() {
        return Err(root.into());
    }
    if path.ends_with('/') {
        state.run.charge(FS_CALL_FUEL)?;
        if let Ok(node) = state.wasi.fs()?.open(dir, &normalized, false) {
            let stat = super::fd::stat_node(state, node);
            state.wasi.fs()?.close(node);
            if stat?.kind != NodeKind::Directory {
                return Err(Errno::Notdir.into());
            }
        }
    }
    Ok(normalized)
}

/// Opens `path` below the writable directory `dir` for writing, as `oflags`, `fdflags` and
/// `rights` ask: the fd gets write access for a write right, `O_APPEND` or `O_TRUNC`, and read
/// access only with the right to read.
pub(super) fn open_file(
    state: &mut Shim<'_>,
    dir: NodeId,
    path: &str,
    follow_symlinks: bool,
    (oflags, fdflags): (u32, u32),
    rights: u64,
) -> Result<(NodeId, Option<FileWrite>), WasiError> {
    if oflags & (O_CREAT | O_DIRECTORY) == O_CREAT | O_DIRECTORY {
        return Err(Errno::Inval.into());
    }
    let normalized = fs::normalize(path)?;
    let write = rights & RIGHTS_WRITE != 0 || oflags & O_TRUNC != 0 || fdflags & FDFLAG_APPEND != 0;
    let options = WriteOptions {
        create: oflags & O_CREAT != 0,
        exclusive: oflags & O_EXCL != 0,
        truncate: oflags & O_TRUNC != 0,
        write,
        follow_symlinks,
    };
    if normalized.is_empty() {
        // The directory itself: a file cannot be made or cut there.
        return Err(if options.exclusive { Errno::Exist } else { Errno::Isdir }.into());
    }
    state.run.charge(FS_CALL_FUEL)?;
    let node = state.wasi.fs()?.open_file(dir, &normalized, options)?;
    let fdflags = (fdflags & FDFLAGS_KEPT) as u16;
    Ok((node, write.then_some(FileWrite { fdflags, readable: rights & RIGHT_FD_READ != 0, reached: 0 })))
}

/// Writes the iovecs to file fd `fd` at `at` (`fd_pwrite`) or at its position (`fd_write`; its
/// end with `O_APPEND`), moving the position past what was written; returns the bytes written.
/// The whole write is paid for before a byte is written.
pub(super) fn write_file(
    guest: &mut Guest<'_>,
    state: &mut Shim<'_>,
    fd: u32,
    (iovs, n): (u32, u32),
    at: Option<u64>,
) -> Result<u32, WasiError> {
    let (node, position, write) = match state.wasi.fd(fd)? {
        Fd::File { node, position, write } => (*node, *position, *write),
        Fd::Preopen { .. } | Fd::Dir { .. } => return Err(Errno::Isdir.into()),
        Fd::Stdin | Fd::Stdout | Fd::Stderr => return Err(Errno::Badf.into()),
    };
    let Some(mut write) = write else {
        return Err(Errno::Badf.into());
    };
    let (mut total, mut calls) = (0u64, 0u64);
    for (ptr, len) in guest.iovecs(iovs, n)? {
        guest.range(ptr, len)?;
        total += u64::from(len);
        calls += u64::from(len > 0);
    }
    state.run.charge_bytes(u64::from(n) * 8 + total)?;
    state.run.charge(calls.saturating_mul(FS_CALL_FUEL))?;
    let start = match at {
        Some(offset) => offset,
        None if write.append() => {
            let size = super::fd::stat_node(state, node)?.size;
            write.reached = size;
            size
        }
        None => position,
    };
    if start > write.reached {
        // A write past the end leaves a gap the host stores (or zero-fills, where files cannot
        // be sparse): it is paid for as written, before anything is written.
        let size = super::fd::stat_node(state, node)?.size;
        state.run.charge_bytes(start.saturating_sub(size))?;
        write.reached = size;
    }
    let mut done: u64 = 0;
    super::fd::each_buffer(guest, state, (iovs, n), |guest, state, ptr, len| {
        let offset = start.checked_add(done).filter(|o| *o <= i64::MAX as u64).ok_or(Errno::Fbig)?;
        match state.wasi.fs()?.write_at(node, offset, guest.bytes(ptr, len)?) {
            Ok(written) => {
                done += written as u64;
                Ok(written == len as usize)
            }
            Err(error) if done == 0 => Err(error.into()),
            Err(_) => Ok(false),
        }
    })?;
    if done > 0 {
        write.reached = write.reached.max(start + done);
    }
    if let Some(Fd::File { position: p, write: Some(w), .. }) = state.wasi.fds.get_mut(&fd) {
        if at.is_none() {
            *p = start + done;
        }
        w.reached = write.reached;
    }
    Ok(u32::try_from(done).unwrap_or(u32::MAX))
}

/// `fd_pwrite`: a write at an offset, to a file opened for writing.
pub(crate) fn fd_pwrite(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    at: u64,
    written: u32,
) -> Result<(), WasiError> {
    if matches!(s.wasi.fd(fd)?, Fd::Stdin | Fd::Stdout | Fd::Stderr) {
        return Err(Errno::Spipe.into());
    }
    g.range(written, 4)?;
    let done = write_file(g, s, fd, (iovs, n), Some(at))?;
    Ok(g.set_u32(written, done)?)
}

/// The node of file fd `fd` if it was opened for writing (`EBADF` if not, `EISDIR` on a
/// directory, `EINVAL` on stdio).
fn written_file(state: &Shim<'_>, fd: u32) -> Result<NodeId, WasiError> {
    match state.wasi.fd(fd)? {
        Fd::File { node, write: Some(_), .. } => Ok(*node),
        Fd::File { .. } => Err(Errno::Badf.into()),
        Fd::Preopen { .. } | Fd::Dir { .. } => Err(Errno::Isdir.into()),
        Fd::Stdin | Fd::Stdout | Fd::Stderr => Err(Errno::Inval.into()),
    }
}

/// `fd_fdstat_set_flags`: a file opened for writing takes append and the sync flags (append
/// is how its next writes go); anything else accepts only no flags at all.
pub(crate) fn fd_fdstat_set_flags(_g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32, flags: u32) -> Result<(), WasiError> {
    match s.wasi.fds.get_mut(&fd).ok_or(Errno::Badf)? {
        Fd::File { write: Some(write), .. } if flags & !FDFLAGS_KEPT == 0 => {
            write.fdflags = flags as u16;
            Ok(())
        }
        _ if flags == 0 => Ok(()),
        _ => Err(Errno::Notsup.into()),
    }
}

/// `fd_filestat_set_size`: cuts or extends a file opened for writing. Bytes an extension adds
/// are charged as written (the host stores them, holes or not).
pub(crate) fn fd_filestat_set_size(_g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32, size: u64) -> Result<(), WasiError> {
    let node = written_file(s, fd)?;
    if size > i64::MAX as u64 {
        return Err(Errno::Fbig.into());
    }
    let now = super::fd::stat_node(s, node)?.size;
    s.run.charge(fuel_for_bytes(size.saturating_sub(now)).saturating_add(FS_CALL_FUEL))?;
    s.wasi.fs()?.set_size(node, size)?;
    if let Some(Fd::File { write: Some(write), .. }) = s.wasi.fds.get_mut(&fd) {
        write.reached = size;
    }
    Ok(())
}

/// `fd_allocate`: not supported on a file opened for writing (as wasmtime answers), `EBADF`
/// on one opened for reading only.
pub(crate) fn fd_allocate(
    _g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    _offset: u64,
    _len: u64,
) -> Result<(), WasiError> {
    written_file(s, fd)?;
    Err(Errno::Notsup.into())
}

/// Flushes a file opened for writing; anything else but stdio has nothing to flush.
fn sync(state: &mut Shim<'_>, fd: u32) -> Result<(), WasiError> {
    match state.wasi.fd(fd)? {
        Fd::Stdin | Fd::Stdout | Fd::Stderr => Err(Errno::Inval.into()),
        Fd::File { node, write: Some(_), .. } => {
            let node = *node;
            state.run.charge(FS_CALL_FUEL)?;
            Ok(state.wasi.fs()?.sync(node)?)
        }
        _ => Ok(()),
    }
}

/// `fd_sync`.
pub(crate) fn fd_sync(_g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32) -> Result<(), WasiError> {
    sync(s, fd)
}

/// `fd_datasync`.
pub(crate) fn fd_datasync(_g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32) -> Result<(), WasiError> {
    sync(s, fd)
}

/// A change to one path below the writable directory fd `fd`: the path charged and
/// normalized (`root` when it names the directory itself), then one filesystem call.
fn change(
    guest: &Guest<'_>,
    state: &mut Shim<'_>,
    (fd, ptr, len): (u32, u32, u32),
    root: Errno,
    call: fn(&mut dyn HostFs, NodeId, &str) -> Result<(), FsError>,
) -> Result<(), WasiError> {
    let dir = writable_dir(state, fd)?;
    let path = target(guest, state, dir, (ptr, len), root)?;
    state.run.charge(FS_CALL_FUEL)?;
    Ok(call(state.wasi.fs()?.as_mut(), dir, &path)?)
}

/// Shim functions that change one path below a writable directory fd through [`change`].
/// Each row: doc, name, the errno when the path names the directory itself, the `HostFs`
/// method.
macro_rules! path_changes {
    ($($(#[doc = $doc:literal])+ $name:ident => $root:ident, $method:ident;)*) => {$(
        $(#[doc = $doc])+
        pub(crate) fn $name(g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32, p: u32, l: u32) -> Result<(), WasiError> {
            change(g, s, (fd, p, l), Errno::$root, |fs, dir, path| fs.$method(dir, path))
        }
    )*};
}

path_changes! {
    /// `path_create_directory`.
    path_create_directory => Exist, create_dir;
    /// `path_remove_directory`.
    path_remove_directory => Inval, remove_dir;
    /// `path_unlink_file`.
    path_unlink_file => Isdir, unlink_file;
}

/// `path_rename`: both ends below writable directories.
#[allow(clippy::too_many_arguments)]
pub(crate) fn path_rename(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    p: u32,
    l: u32,
    new_fd: u32,
    new_p: u32,
    new_l: u32,
) -> Result<(), WasiError> {
    let from_dir = writable_dir(s, fd)?;
    let to_dir = writable_dir(s, new_fd)?;
    let from = target(g, s, from_dir, (p, l), Errno::Inval)?;
    let to = target(g, s, to_dir, (new_p, new_l), Errno::Inval)?;
    s.run.charge(FS_CALL_FUEL)?;
    Ok(s.wasi.fs()?.rename(from_dir, &from, to_dir, &to)?)
}

/// Whether the node `path_open` gave may become an fd: a directory opened for writing is
/// `EISDIR`, a file asked for with `O_DIRECTORY` is `ENOTDIR`, a symlink (not followed) `ELOOP`.
pub(super) fn refusal(kind: NodeKind, oflags: u32, write: bool) -> Option<Errno> {
    match kind {
        NodeKind::Directory if write => Some(Errno::Isdir),
        NodeKind::File if oflags & O_DIRECTORY != 0 => Some(Errno::Notdir),
        NodeKind::Symlink => Some(Errno::Loop),
        _ => None,
    }
}
