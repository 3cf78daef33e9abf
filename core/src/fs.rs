//! The read-only filesystem behind `tdm exec --dir`: a trait the embedder implements (core is
//! no_std and never touches a host file), plus the lexical path rules core applies before the
//! embedder sees a path. Plugins never get one: their filesystem imports are rejected at load.

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
    /// Any other I/O failure.
    Io,
}

/// A read-only tree of preopened directories, served by the embedder.
pub trait ReadOnlyFs: Send {
    /// The preopened roots: the node of each and the path the guest sees it under.
    fn preopens(&self) -> Vec<(NodeId, String)>;
    /// Opens `path` (relative, already normalized by core: no `.`/`..`, no leading `/`, may be
    /// empty for the directory itself) below directory `dir`. Must refuse any symlink that
    /// leads outside the preopened root.
    fn open(&mut self, dir: NodeId, path: &str, follow_symlinks: bool) -> Result<NodeId, FsError>;
    /// Metadata of an open node.
    fn stat(&mut self, node: NodeId) -> Result<NodeStat, FsError>;
    /// Reads from an open file at `offset`; returns the bytes read (0 at end of file).
    fn read_at(&mut self, node: NodeId, offset: u64, buf: &mut [u8]) -> Result<usize, FsError>;
    /// Lists an open directory (without `.` and `..`).
    fn read_dir(&mut self, node: NodeId) -> Result<Vec<DirEntry>, FsError>;
    /// Releases an open node. Preopened roots are never closed.
    fn close(&mut self, node: NodeId);
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
