//! A read-only host directory served to `tdm exec` guests through core's `ReadOnlyFs`, on
//! `cap-std`, which refuses every path (`..`, absolute, or symlink) that leads outside it.

use contour_core::fs::{DirEntry, FsError, NodeId, NodeKind, NodeStat, ReadOnlyFs};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

enum Node {
    Dir(cap_std::fs::Dir),
    File(cap_std::fs::File),
    /// A symlink opened without following it: only its metadata.
    Link(cap_std::fs::Metadata),
}

/// Preopened host directories, read-only.
pub struct DirFs {
    nodes: HashMap<NodeId, Node>,
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
    } else {
        NodeKind::Other
    }
}

fn ns(time: std::io::Result<cap_std::time::SystemTime>) -> u64 {
    time.ok()
        .map(cap_std::time::SystemTime::into_std)
        .and_then(|t: SystemTime| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn stat_of(meta: &cap_std::fs::Metadata) -> NodeStat {
    NodeStat {
        kind: kind_of(meta.file_type()),
        size: meta.len(),
        dev: 0,
        ino: 0,
        nlink: 1,
        atime_ns: ns(meta.accessed()),
        mtime_ns: ns(meta.modified()),
        ctime_ns: ns(meta.created()),
    }
}

impl DirFs {
    /// Opens each `(host directory, guest path)` pair as a read-only preopen.
    pub fn open(dirs: &[(std::path::PathBuf, String)]) -> std::io::Result<Self> {
        let mut fs = Self { nodes: HashMap::new(), preopens: Vec::new(), next: 1 };
        for (host, guest) in dirs {
            let dir = cap_std::fs::Dir::open_ambient_dir(Path::new(host), cap_std::ambient_authority())?;
            let id = fs.insert(Node::Dir(dir));
            fs.preopens.push((id, guest.clone()));
        }
        Ok(fs)
    }

    fn insert(&mut self, node: Node) -> NodeId {
        let id = self.next;
        self.next += 1;
        self.nodes.insert(id, node);
        id
    }
}

impl ReadOnlyFs for DirFs {
    fn preopens(&self) -> Vec<(NodeId, String)> {
        self.preopens.clone()
    }

    fn open(&mut self, dir: NodeId, path: &str, follow_symlinks: bool) -> Result<NodeId, FsError> {
        let Some(Node::Dir(base)) = self.nodes.get(&dir) else {
            return Err(FsError::NotADirectory);
        };
        let path = if path.is_empty() { "." } else { path };
        let meta = if follow_symlinks { base.metadata(path) } else { base.symlink_metadata(path) };
        let meta = meta.map_err(|e| fs_error(&e))?;
        let node = if meta.file_type().is_symlink() {
            Node::Link(meta)
        } else if meta.is_dir() {
            Node::Dir(base.open_dir(path).map_err(|e| fs_error(&e))?)
        } else {
            Node::File(base.open(path).map_err(|e| fs_error(&e))?)
        };
        Ok(self.insert(node))
    }

    fn stat(&mut self, node: NodeId) -> Result<NodeStat, FsError> {
        match self.nodes.get(&node) {
            Some(Node::Dir(dir)) => dir.dir_metadata().map(|m| stat_of(&m)).map_err(|e| fs_error(&e)),
            Some(Node::File(file)) => file.metadata().map(|m| stat_of(&m)).map_err(|e| fs_error(&e)),
            Some(Node::Link(meta)) => Ok(stat_of(meta)),
            None => Err(FsError::NotFound),
        }
    }

    fn read_at(&mut self, node: NodeId, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        match self.nodes.get_mut(&node) {
            Some(Node::File(file)) => {
                file.seek(SeekFrom::Start(offset)).map_err(|e| fs_error(&e))?;
                file.read(buf).map_err(|e| fs_error(&e))
            }
            Some(Node::Dir(_)) => Err(FsError::IsADirectory),
            _ => Err(FsError::NotFound),
        }
    }

    fn read_dir(&mut self, node: NodeId) -> Result<Vec<DirEntry>, FsError> {
        let Some(Node::Dir(dir)) = self.nodes.get(&node) else {
            return Err(FsError::NotADirectory);
        };
        let mut entries = Vec::new();
        for entry in dir.entries().map_err(|e| fs_error(&e))? {
            let entry = entry.map_err(|e| fs_error(&e))?;
            let kind = entry.file_type().map_or(NodeKind::Other, kind_of);
            entries.push(DirEntry { name: entry.file_name().to_string_lossy().into_owned(), kind, ino: 0 });
        }
        Ok(entries)
    }

    fn close(&mut self, node: NodeId) {
        if !self.preopens.iter().any(|(id, _)| *id == node) {
            self.nodes.remove(&node);
        }
    }
}
