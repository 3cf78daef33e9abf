//! Host directories served to `tdm exec` guests through core's `HostFs`, on `cap-std`, which
//! refuses every path (`..`, absolute, or symlink) that leads outside them: read-only (`--dir`)
//! or writable (`--dir-rw`, an explicit opt-in per preopen). Nothing here blocks: a FIFO,
//! socket or device can be stat'ed and listed but is never opened (reading or writing it is
//! `EPERM`), and a regular file is opened non-blocking and its handle re-checked. Writes make
//! only regular files and directories: never a symlink, link, FIFO or device. Every write
//! method refuses below a read-only preopen here too, whatever core checked first. Stat and
//! directory entries carry the real device and inode numbers (on Unix).

use crate::files;
use crate::files::output::open_in_preopen;
use contour_core::{errors::FsError, DirEntry, HostFs, NodeId, NodeKind, NodeStat, WriteOptions};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
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
/// where the OS gives none), and whether it is below a writable preopen.
struct Entry {
    node: Node,
    key: String,
    writable: bool,
}

/// One host directory to preopen: where it is, the path the guest sees, and whether the guest
/// may write below it (`--dir-rw`) or only read (`--dir`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreopenDir {
    /// The host directory.
    pub host: PathBuf,
    /// The path the guest sees it under.
    pub guest: String,
    /// The guest may create, write, rename and remove below it.
    pub writable: bool,
}

/// Preopened host directories, each read-only or writable.
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
        ErrorKind::AlreadyExists => FsError::Exists,
        ErrorKind::DirectoryNotEmpty => FsError::NotEmpty,
        ErrorKind::CrossesDevices => FsError::CrossDevice,
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded | ErrorKind::FileTooLarge => FsError::NoSpace,
        ErrorKind::ReadOnlyFilesystem => FsError::ReadOnly,
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
    /// Opens each host directory as a preopen at its guest path, writable where it says so.
    pub fn open(dirs: &[PreopenDir]) -> std::io::Result<Self> {
        let mut fs = Self { nodes: HashMap::new(), preopens: Vec::new(), next: 1 };
        for (index, preopen) in dirs.iter().enumerate() {
            let dir = cap_std::fs::Dir::open_ambient_dir(&preopen.host, cap_std::ambient_authority())?;
            let id = fs.insert(Node::Dir(dir), index.to_string(), preopen.writable);
            fs.preopens.push((id, preopen.guest.clone()));
        }
        Ok(fs)
    }

    fn insert(&mut self, node: Node, key: String, writable: bool) -> NodeId {
        let id = self.next;
        self.next += 1;
        self.nodes.insert(id, Entry { node, key, writable });
        id
    }

    /// The directory `dir` if it is below a writable preopen: `ReadOnly` if not.
    fn writable_dir(&self, dir: NodeId) -> Result<&cap_std::fs::Dir, FsError> {
        match self.nodes.get(&dir) {
            Some(Entry { node: Node::Dir(base), writable: true, .. }) => Ok(base),
            Some(Entry { node: Node::Dir(_), .. }) => Err(FsError::ReadOnly),
            _ => Err(FsError::NotADirectory),
        }
    }

    /// The file `node` if it was opened for writing below a writable preopen.
    fn written_file(&mut self, node: NodeId) -> Result<&mut cap_std::fs::File, FsError> {
        match self.nodes.get_mut(&node) {
            Some(Entry { node: Node::File(file), writable: true, .. }) => Ok(file),
            Some(Entry { node: Node::File(_), .. }) => Err(FsError::ReadOnly),
            Some(Entry { node: Node::Dir(_), .. }) => Err(FsError::IsADirectory),
            _ => Err(FsError::NotFound),
        }
    }
}

impl HostFs for DirFs {
    fn preopens(&self) -> Vec<(NodeId, String)> {
        self.preopens.clone()
    }

    fn writable(&self, preopen: NodeId) -> bool {
        self.nodes.get(&preopen).is_some_and(|entry| entry.writable)
    }

    fn open(&mut self, dir: NodeId, path: &str, follow_symlinks: bool) -> Result<NodeId, FsError> {
        let Some(Entry { node: Node::Dir(base), key, writable }) = self.nodes.get(&dir) else {
            return Err(FsError::NotADirectory);
        };
        let writable = *writable;
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
        // A file opened here is read-only whatever its preopen (no write handle); a directory
        // below a writable preopen stays writable.
        let writable = writable && matches!(node, Node::Dir(_));
        Ok(self.insert(node, key, writable))
    }

    fn stat(&mut self, node: NodeId) -> Result<NodeStat, FsError> {
        let Some(Entry { node, key, .. }) = self.nodes.get(&node) else {
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
        let Some(Entry { node: Node::Dir(dir), key, .. }) = self.nodes.get(&node) else {
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

    fn open_file(&mut self, dir: NodeId, path: &str, options: WriteOptions) -> Result<NodeId, FsError> {
        let base = self.writable_dir(dir)?;
        // Something that is there and not a regular file is never opened (a FIFO or device
        // could block, or do something on open); the handle is checked again after.
        let meta = if options.follow_symlinks { base.metadata(path) } else { base.symlink_metadata(path) };
        match meta {
            Ok(meta) if meta.is_dir() => return Err(FsError::IsADirectory),
            Ok(meta) if meta.file_type().is_symlink() => return Err(FsError::Loop),
            Ok(meta) if !meta.is_file() => return Err(FsError::AccessDenied),
            _ => {}
        }
        let file = open_in_preopen(base, Path::new(path), options).map_err(|e| fs_error(&e))?;
        match file.metadata() {
            Ok(now) if now.is_file() => {}
            Ok(now) if now.is_dir() => return Err(FsError::IsADirectory),
            Ok(_) => return Err(FsError::AccessDenied),
            Err(e) => return Err(fs_error(&e)),
        }
        let key = child_key(&self.nodes[&dir].key, path);
        Ok(self.insert(Node::File(file), key, true))
    }

    fn write_at(&mut self, node: NodeId, offset: u64, data: &[u8]) -> Result<usize, FsError> {
        let file = self.written_file(node)?;
        file.seek(SeekFrom::Start(offset)).map_err(|e| fs_error(&e))?;
        file.write_all(data).map_err(|e| fs_error(&e))?;
        Ok(data.len())
    }

    fn set_size(&mut self, node: NodeId, size: u64) -> Result<(), FsError> {
        self.written_file(node)?.set_len(size).map_err(|e| fs_error(&e))
    }

    fn sync(&mut self, node: NodeId) -> Result<(), FsError> {
        self.written_file(node)?.sync_all().map_err(|e| fs_error(&e))
    }

    fn create_dir(&mut self, dir: NodeId, path: &str) -> Result<(), FsError> {
        self.writable_dir(dir)?.create_dir(path).map_err(|e| fs_error(&e))
    }

    fn remove_dir(&mut self, dir: NodeId, path: &str) -> Result<(), FsError> {
        self.writable_dir(dir)?.remove_dir(path).map_err(|e| fs_error(&e))
    }

    fn unlink_file(&mut self, dir: NodeId, path: &str) -> Result<(), FsError> {
        self.writable_dir(dir)?.remove_file(path).map_err(|e| fs_error(&e))
    }

    fn rename(&mut self, from_dir: NodeId, from: &str, to_dir: NodeId, to: &str) -> Result<(), FsError> {
        let to_base = self.writable_dir(to_dir)?;
        self.writable_dir(from_dir)?.rename(from, to_base, to).map_err(|e| fs_error(&e))
    }
}
