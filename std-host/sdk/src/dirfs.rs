//! A read-only host directory served to `tdm exec` guests through core's `ReadOnlyFs`, on
//! `cap-std`, which refuses every path (`..`, absolute, or symlink) that leads outside it.
//! Nothing here blocks: a FIFO, socket or device can be stat'ed and listed but is never opened
//! (reading it is `EPERM`), and a regular file is opened non-blocking and its handle re-checked.
//! Stat and directory entries carry the real device and inode numbers (on Unix).

use crate::files;
use contour_core::{errors::FsError, DirEntry, NodeId, NodeKind, NodeStat, ReadOnlyFs};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

enum Node {
    Dir(cap_std::fs::Dir),
    File(cap_std::fs::File),
    /// A symlink opened without following it: only its metadata.
    Link(cap_std::fs::Metadata),
    /// A FIFO, socket or device: only its metadata, never opened (it could block).
    Special(cap_std::fs::Metadata),
}

/// A node and where it is: the preopen's index and its path below it (the inode fallback
/// where the OS gives none).
struct Entry {
    node: Node,
    key: String,
}

/// Preopened host directories, read-only.
pub struct DirFs {
    nodes: HashMap<NodeId, Entry>,
    preopens: Vec<(NodeId, String)>,
    next: NodeId,
}

impl std::fmt::Debug for DirFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirFs").field("preopens", &self.preopens).finish()
    }
}

fn fs_error(e: &std::io::Error) -> FsError {
    match e.kind() {
        ErrorKind::NotFound => FsError::NotFound,
        ErrorKind::PermissionDenied => FsError::Escapes,
        ErrorKind::NotADirectory => FsError::NotADirectory,
        ErrorKind::IsADirectory => FsError::IsADirectory,
        ErrorKind::InvalidInput | ErrorKind::InvalidFilename => FsError::InvalidName,
        _ if e.raw_os_error() == Some(40) => FsError::Loop,
        _ => FsError::Io,
    }
}

fn kind_of(ty: cap_std::fs::FileType) -> NodeKind {
    if ty.is_dir() {
        NodeKind::Directory
    } else if ty.is_file() {
        NodeKind::File
    } else if ty.is_symlink() {
        NodeKind::Symlink
    } else if is_char_device(ty) {
        NodeKind::CharacterDevice
    } else {
        NodeKind::Other
    }
}

#[cfg(unix)]
fn is_char_device(ty: cap_std::fs::FileType) -> bool {
    use cap_std::fs::FileTypeExt;
    ty.is_char_device()
}

#[cfg(not(unix))]
fn is_char_device(_ty: cap_std::fs::FileType) -> bool {
    false
}

/// The device and inode numbers of a node: the real ones on Unix.
#[cfg(unix)]
fn dev_ino(meta: &cap_std::fs::Metadata, _key: &str) -> (u64, u64, u64) {
    use cap_std::fs::MetadataExt;
    (meta.dev(), meta.ino(), meta.nlink())
}

/// Where the OS gives no inode: a stable number from the node's place (FNV-1a of its key), the
/// same for the same path, different for different paths.
#[cfg(not(unix))]
fn dev_ino(_meta: &cap_std::fs::Metadata, key: &str) -> (u64, u64, u64) {
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    (0, hash.max(1), 1)
}

fn child_key(parent: &str, path: &str) -> String {
    if path.is_empty() || path == "." {
        parent.to_string()
    } else {
        format!("{parent}/{path}")
    }
}

fn ns(time: std::io::Result<cap_std::time::SystemTime>) -> u64 {
    time.ok()
        .map(cap_std::time::SystemTime::into_std)
        .and_then(|t: SystemTime| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn stat_of(meta: &cap_std::fs::Metadata, key: &str) -> NodeStat {
    let (dev, ino, nlink) = dev_ino(meta, key);
    NodeStat {
        kind: kind_of(meta.file_type()),
        size: meta.len(),
        dev,
        ino,
        nlink,
        atime_ns: ns(meta.accessed()),
        mtime_ns: ns(meta.modified()),
        ctime_ns: ns(meta.created()),
    }
}

impl DirFs {
    /// Opens each `(host directory, guest path)` pair as a read-only preopen.
    pub fn open(dirs: &[(std::path::PathBuf, String)]) -> std::io::Result<Self> {
        let mut fs = Self { nodes: HashMap::new(), preopens: Vec::new(), next: 1 };
        for (index, (host, guest)) in dirs.iter().enumerate() {
            let dir = cap_std::fs::Dir::open_ambient_dir(Path::new(host), cap_std::ambient_authority())?;
            let id = fs.insert(Node::Dir(dir), index.to_string());
            fs.preopens.push((id, guest.clone()));
        }
        Ok(fs)
    }

    fn insert(&mut self, node: Node, key: String) -> NodeId {
        let id = self.next;
        self.next += 1;
        self.nodes.insert(id, Entry { node, key });
        id
    }
}

impl ReadOnlyFs for DirFs {
    fn preopens(&self) -> Vec<(NodeId, String)> {
        self.preopens.clone()
    }

    fn open(&mut self, dir: NodeId, path: &str, follow_symlinks: bool) -> Result<NodeId, FsError> {
        let Some(Entry { node: Node::Dir(base), key }) = self.nodes.get(&dir) else {
            return Err(FsError::NotADirectory);
        };
        let path = if path.is_empty() { "." } else { path };
        let key = child_key(key, path);
        let meta = if follow_symlinks { base.metadata(path) } else { base.symlink_metadata(path) };
        let meta = meta.map_err(|e| fs_error(&e))?;
        let node = if meta.file_type().is_symlink() {
            Node::Link(meta)
        } else if meta.is_dir() {
            // O_DIRECTORY: something swapped in for the directory fails instead of blocking.
            Node::Dir(base.open_dir(path).map_err(|e| fs_error(&e))?)
        } else if meta.is_file() {
            // Non-blocking, and the handle re-checked: a FIFO swapped in is never read.
            let file = files::open_nonblocking_in(base, Path::new(path)).map_err(|e| fs_error(&e))?;
            match file.metadata() {
                Ok(now) if now.is_file() => Node::File(file),
                Ok(now) => Node::Special(now),
                Err(e) => return Err(fs_error(&e)),
            }
        } else {
            Node::Special(meta)
        };
        Ok(self.insert(node, key))
    }

    fn stat(&mut self, node: NodeId) -> Result<NodeStat, FsError> {
        let Some(Entry { node, key }) = self.nodes.get(&node) else {
            return Err(FsError::NotFound);
        };
        match node {
            Node::Dir(dir) => dir.dir_metadata().map(|m| stat_of(&m, key)).map_err(|e| fs_error(&e)),
            Node::File(file) => file.metadata().map(|m| stat_of(&m, key)).map_err(|e| fs_error(&e)),
            Node::Link(meta) | Node::Special(meta) => Ok(stat_of(meta, key)),
        }
    }

    fn read_at(&mut self, node: NodeId, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        match self.nodes.get_mut(&node).map(|entry| &mut entry.node) {
            Some(Node::File(file)) => {
                file.seek(SeekFrom::Start(offset)).map_err(|e| fs_error(&e))?;
                file.read(buf).map_err(|e| fs_error(&e))
            }
            Some(Node::Dir(_)) => Err(FsError::IsADirectory),
            // A FIFO, socket or device is not served: reading it could block or never end.
            Some(Node::Special(_)) => Err(FsError::AccessDenied),
            _ => Err(FsError::NotFound),
        }
    }

    fn read_dir(&mut self, node: NodeId) -> Result<Vec<DirEntry>, FsError> {
        let Some(Entry { node: Node::Dir(dir), key }) = self.nodes.get(&node) else {
            return Err(FsError::NotADirectory);
        };
        let mut entries = Vec::new();
        for entry in dir.entries().map_err(|e| fs_error(&e))? {
            let entry = entry.map_err(|e| fs_error(&e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            // The entry's own metadata (a symlink is not followed), as `d_ino` is.
            let (kind, ino) = match entry.metadata() {
                Ok(meta) => (kind_of(meta.file_type()), dev_ino(&meta, &child_key(key, &name)).1),
                Err(_) => (entry.file_type().map_or(NodeKind::Other, kind_of), 0),
            };
            entries.push(DirEntry { name, kind, ino });
        }
        Ok(entries)
    }

    fn close(&mut self, node: NodeId) {
        if !self.preopens.iter().any(|(id, _)| *id == node) {
            self.nodes.remove(&node);
        }
    }
}
