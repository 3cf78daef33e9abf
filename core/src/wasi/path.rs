//! The path_* functions that read the embedder's filesystem (`tdm exec --dir`; plugins cannot
//! import them), and `path_open`, which hands an open for writing below a writable preopen to
//! `write`. Paths are normalized lexically by core before the embedder sees them. Below a
//! read-only preopen anything that would create, change or remove answers `EPERM`; links,
//! symlinks and times are never changed, below any preopen. Every path costs its bytes and
//! every call into the filesystem `FS_CALL_FUEL`.

use super::call::Shim;
use super::errno::{Errno, WasiError};
use super::fd::write_filestat;
use super::state::Fd;
use super::write::{self, O_CREAT, O_EXCL, O_TRUNC, RIGHTS_WRITE};
use crate::fs::{self, NodeId, NodeKind};
use crate::guest::Guest;
use crate::meter::FS_CALL_FUEL;
use alloc::string::String;

/// The path at `[ptr, ptr + len)`, charged for its bytes.
pub(super) fn path_arg(guest: &Guest<'_>, state: &mut Shim<'_>, ptr: u32, len: u32) -> Result<String, WasiError> {
    let bytes = guest.bytes(ptr, len)?;
    state.run.charge_bytes(u64::from(len))?;
    Ok(String::from(core::str::from_utf8(bytes).map_err(|_| Errno::Inval)?))
}

/// Resolves `path` below the directory fd `dirfd` and opens it (one filesystem call).
pub(super) fn open_path(state: &mut Shim<'_>, dirfd: u32, path: &str, follow: bool) -> Result<NodeId, WasiError> {
    let dir = state.wasi.fd(dirfd)?.dir_node().ok_or(Errno::Notdir)?;
    let normalized = fs::normalize(path)?;
    state.run.charge(FS_CALL_FUEL)?;
    Ok(state.wasi.fs()?.open(dir, &normalized, follow)?)
}

/// Refuses a mutation no preopen allows (links, symlinks, times): `EPERM` on a directory,
/// `ENOTDIR` on a non-directory, `EBADF` on no fd.
fn read_only_dir(state: &Shim<'_>, dirfd: u32) -> Result<(), WasiError> {
    let fd = state.wasi.fd(dirfd)?;
    Err(if fd.dir_node().is_some() { Errno::Perm } else { Errno::Notdir }.into())
}

/// The errno of an open that would create, truncate or write under a read-only preopen, as a
/// read-only file system answers it: `EISDIR` for a directory, `EEXIST` for `O_CREAT|O_EXCL` on
/// something that exists, the lookup's own error (`ENOENT`, ...) when nothing is there to open
/// and nothing may be created, `EPERM` otherwise.
fn refuse_write_open(state: &mut Shim<'_>, dirfd: u32, path: &str, follow: bool, oflags: u32) -> WasiError {
    const CREAT: u32 = O_CREAT;
    const EXCL: u32 = O_EXCL;
    let node = match open_path(state, dirfd, path, follow) {
        Ok(node) => node,
        Err(WasiError::Errno(Errno::Noent)) if oflags & CREAT != 0 => return Errno::Perm.into(),
        Err(error) => return error,
    };
    let stat = super::fd::stat_node(state, node);
    if let Ok(fs) = state.wasi.fs() {
        fs.close(node);
    }
    match stat {
        Err(error) => error,
        Ok(_) if oflags & (CREAT | EXCL) == CREAT | EXCL => Errno::Exist.into(),
        Ok(stat) if stat.kind == NodeKind::Directory => Errno::Isdir.into(),
        Ok(_) => Errno::Perm.into(),
    }
}

#[allow(clippy::too_many_arguments)]
fn open(
    guest: &mut Guest<'_>,
    state: &mut Shim<'_>,
    dirfd: u32,
    dirflags: u32,
    path: u32,
    path_len: u32,
    oflags: u32,
    rights: u64,
    fdflags: u32,
    out: u32,
) -> Result<(), WasiError> {
    let writable = state.wasi.fd(dirfd)?.writable_dir();
    state.wasi.fd(dirfd)?.dir_node().ok_or(Errno::Notdir)?;
    guest.range(out, 4)?;
    let wants_write =
        oflags & (O_CREAT | O_EXCL | O_TRUNC) != 0 || fdflags & (1 | 2 | 8 | 16) != 0 || rights & RIGHTS_WRITE != 0;
    let path = path_arg(guest, state, path, path_len)?;
    let follow = dirflags & 1 != 0;
    if wants_write && writable.is_none() {
        return Err(refuse_write_open(state, dirfd, &path, follow, oflags));
    }
    // Each open fd holds a node of the embedder's filesystem (a host file handle, memory): a
    // guest that opens without closing gets `EMFILE`, as from a process's fd limit.
    if !state.wasi.can_open() {
        return Err(Errno::Mfile.into());
    }
    let (node, file_write) = match writable {
        Some(dir) if wants_write => write::open_file(state, dir, &path, follow, (oflags, fdflags), rights)?,
        _ => (open_path(state, dirfd, &path, follow)?, None),
    };
    let kind = match super::fd::stat_node(state, node) {
        Ok(stat) => stat.kind,
        Err(e) => {
            state.wasi.fs()?.close(node);
            return Err(e);
        }
    };
    // `name/` names a directory: a file there is `ENOTDIR`, as POSIX says.
    let oflags = if path.ends_with('/') { oflags | write::O_DIRECTORY } else { oflags };
    if let Some(errno) = write::refusal(kind, oflags, file_write.is_some()) {
        state.wasi.fs()?.close(node);
        return Err(errno.into());
    }
    let fd = match kind {
        NodeKind::Directory => Fd::Dir { node, writable: writable.is_some() },
        _ => Fd::File { node, position: 0, write: file_write },
    };
    let fd = state.wasi.insert_fd(fd);
    Ok(guest.set_u32(out, fd)?)
}

/// `path_open`: opens below a directory fd (for writing only below a writable one).
#[allow(clippy::too_many_arguments)]
pub(crate) fn path_open(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    dirfd: u32,
    dirflags: u32,
    path: u32,
    path_len: u32,
    oflags: u32,
    rights: u64,
    _inheriting: u64,
    fdflags: u32,
    out: u32,
) -> Result<(), WasiError> {
    open(g, s, dirfd, dirflags, path, path_len, oflags, rights, fdflags, out)
}

/// `path_filestat_get`.
pub(crate) fn path_filestat_get(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    dirfd: u32,
    flags: u32,
    path: u32,
    len: u32,
    out: u32,
) -> Result<(), WasiError> {
    g.range(out, 64)?;
    let path = path_arg(g, s, path, len)?;
    let node = open_path(s, dirfd, &path, flags & 1 != 0)?;
    let stat = super::fd::stat_node(s, node);
    s.wasi.fs()?.close(node);
    write_filestat(g, out, &stat?)
}

/// `path_readlink`: symlinks are resolved by the host and never shown to the guest as such.
#[allow(clippy::too_many_arguments)]
pub(crate) fn path_readlink(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    dirfd: u32,
    path: u32,
    len: u32,
    _buf: u32,
    _cap: u32,
    _used: u32,
) -> Result<(), WasiError> {
    let path = path_arg(g, s, path, len)?;
    let node = open_path(s, dirfd, &path, false)?;
    s.wasi.fs()?.close(node);
    Err(Errno::Inval.into())
}

/// `path_symlink`: no symlink is ever made (one could point anywhere on the host).
pub(crate) fn path_symlink(
    _g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    _p: u32,
    _l: u32,
    fd: u32,
    _new_p: u32,
    _new_l: u32,
) -> Result<(), WasiError> {
    read_only_dir(s, fd)
}

fd_only! {
    /// `path_filestat_set_times`: times are never changed.
    path_filestat_set_times(u32, u32, u32, u64, u64, u32) => read_only_dir;
    /// `path_link`: no hard link is ever made.
    path_link(u32, u32, u32, u32, u32, u32) => read_only_dir;
}
