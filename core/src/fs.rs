//! The host filesystem behind `tdm exec --dir` and `--dir-rw`: a trait the embedder implements
//! (core is no_std and never touches a host file), plus the lexical path rules core applies
//! before the embedder sees a path. Every preopen is read-only unless the embedder says it is
//! writable; the write methods default to refusing, so an embedder serving a read-only tree
//! implements only the read half. Plugins never get one: their filesystem imports are rejected
//! at load.

use alloc::string::String;
use alloc::vec::Vec;

/// A node (file or directory) the embedder has opened, named by an id of its choosing.
pub type NodeId = u64;

/// What kind of node a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (only seen when not following links).
    Symlink,
    /// A character device (how stdio is reported).
    CharacterDevice,
    /// Anything else (block device, socket, fifo).
    Other,
}

/// The metadata the WASI shim reports for a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeStat {
    /// The node's kind.
    pub kind: NodeKind,
    /// Size in bytes.
    pub size: u64,
    /// Device id.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// Number of hard links.
    pub nlink: u64,
    /// Last access, ns since the epoch.
    pub atime_ns: u64,
    /// Last modification, ns since the epoch.
    pub mtime_ns: u64,
    /// Last status change, ns since the epoch.
    pub ctime_ns: u64,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's file name.
    pub name: String,
    /// Its kind.
    pub kind: NodeKind,
    /// Its inode number (0 when unknown).
    pub ino: u64,
}

/// Why a filesystem operation failed, in WASI terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsError {
    /// No such file or directory.
    NotFound,
    /// A path component is not a directory.
    NotADirectory,
    /// The node is a directory.
    IsADirectory,
    /// The path would leave the preopened directory (`..`, absolute path, symlink).
    Escapes,
    /// The host refused access.
    AccessDenied,
    /// Too many levels of symbolic links.
    Loop,
    /// The name is too long or not valid.
    InvalidName,
    /// The tree (or this preopen) is read-only: a write method the embedder does not serve.
    ReadOnly,
    /// Something already exists at the path (exclusive create, mkdir, rename onto a directory).
    Exists,
    /// The directory is not empty.
    NotEmpty,
    /// A rename across devices or preopens the host cannot move between.
    CrossDevice,
    /// No space left (or a quota hit) on the host.
    NoSpace,
    /// Any other I/O failure.
    Io,
}

/// How [`HostFs::open_file`] opens a file for writing below a writable directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteOptions {
    /// Create the file if nothing is at the path (`O_CREAT`).
    pub create: bool,
    /// Fail with [`FsError::Exists`] if something is at the path (`O_EXCL`, with `create`).
    pub exclusive: bool,
    /// Cut the file to length 0 (`O_TRUNC`).
    pub truncate: bool,
    /// Open for writing (a write right, `O_APPEND`, or `O_TRUNC` asked for).
    pub write: bool,
    /// Follow a symlink in the last component (never out of the preopen).
    pub follow_symlinks: bool,
}

/// The tree of preopened host directories a WASI command sees, served by the embedder. Paths
/// reach it relative and already normalized by core ([`normalize`]: no `.`/`..`, no leading
/// `/`; empty for the directory itself). Core calls a write method only below a preopen that
/// [`HostFs::writable`] says is writable (and on a file core opened for writing from one), and
/// charges fuel for every byte before it is written; the embedder must still refuse any path or
/// symlink that leads outside its preopened roots, and never block.
pub trait HostFs: Send {
    /// The preopened roots: the node of each and the path the guest sees it under.
    fn preopens(&self) -> Vec<(NodeId, String)>;
    /// Whether the preopened root `preopen` may be written below (default: no, read-only).
    fn writable(&self, _preopen: NodeId) -> bool {
        false
    }
    /// Opens `path` below directory `dir` for reading. Must refuse any symlink that leads
    /// outside the preopened root.
    fn open(&mut self, dir: NodeId, path: &str, follow_symlinks: bool) -> Result<NodeId, FsError>;
    /// Metadata of an open node.
    fn stat(&mut self, node: NodeId) -> Result<NodeStat, FsError>;
    /// Reads from an open file at `offset`; returns the bytes read (0 at end of file).
    fn read_at(&mut self, node: NodeId, offset: u64, buf: &mut [u8]) -> Result<usize, FsError>;
    /// Lists an open directory (without `.` and `..`).
    fn read_dir(&mut self, node: NodeId) -> Result<Vec<DirEntry>, FsError>;
    /// Releases an open node. Preopened roots are never closed.
    fn close(&mut self, node: NodeId);
    /// Opens (creating or truncating as `options` say) a regular file below the writable
    /// directory `dir`, for reading and writing. Never creates anything but a regular file.
    fn open_file(&mut self, _dir: NodeId, _path: &str, _options: WriteOptions) -> Result<NodeId, FsError> {
        Err(FsError::ReadOnly)
    }
    /// Writes all of `data` to a file opened by [`HostFs::open_file`] at `offset`; returns the
    /// bytes written.
    fn write_at(&mut self, _node: NodeId, _offset: u64, _data: &[u8]) -> Result<usize, FsError> {
        Err(FsError::ReadOnly)
    }
    /// Sets the length of a file opened by [`HostFs::open_file`] (cuts or extends with zeros).
    fn set_size(&mut self, _node: NodeId, _size: u64) -> Result<(), FsError> {
        Err(FsError::ReadOnly)
    }
    /// Flushes a file opened by [`HostFs::open_file`] to the host's storage.
    fn sync(&mut self, _node: NodeId) -> Result<(), FsError> {
        Ok(())
    }
    /// Creates the directory `path` below the writable directory `dir`.
    fn create_dir(&mut self, _dir: NodeId, _path: &str) -> Result<(), FsError> {
        Err(FsError::ReadOnly)
    }
    /// Removes the empty directory `path` below the writable directory `dir`.
    fn remove_dir(&mut self, _dir: NodeId, _path: &str) -> Result<(), FsError> {
        Err(FsError::ReadOnly)
    }
    /// Removes the file (or symlink, never what it points to) `path` below the writable
    /// directory `dir`.
    fn unlink_file(&mut self, _dir: NodeId, _path: &str) -> Result<(), FsError> {
        Err(FsError::ReadOnly)
    }
    /// Moves `from` below the writable directory `from_dir` to `to` below the writable
    /// directory `to_dir`, replacing what `to` names as rename(2) does.
    fn rename(&mut self, _from_dir: NodeId, _from: &str, _to_dir: NodeId, _to: &str) -> Result<(), FsError> {
        Err(FsError::ReadOnly)
    }
}

/// Normalizes a guest path relative to a preopen: splits on `/`, drops `.` and empty
/// components, resolves `..` lexically, and refuses an absolute path or a `..` that climbs
/// above the preopen.
pub fn normalize(path: &str) -> Result<String, FsError> {
    if path.starts_with('/') {
        return Err(FsError::Escapes);
    }
    if path.contains('\0') {
        return Err(FsError::InvalidName);
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(FsError::Escapes);
                }
            }
            other => parts.push(other),
        }
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_keeps_paths_inside_the_root() {
        assert_eq!(normalize("a/./b//c").unwrap(), "a/b/c");
        assert_eq!(normalize("a/../b").unwrap(), "b");
        assert_eq!(normalize(".").unwrap(), "");
        assert_eq!(normalize("../etc/passwd"), Err(FsError::Escapes));
        assert_eq!(normalize("a/../../b"), Err(FsError::Escapes));
        assert_eq!(normalize("/etc/passwd"), Err(FsError::Escapes));
        assert_eq!(normalize("a\0b"), Err(FsError::InvalidName));
    }
}
