//! Every file tdm writes goes through here, as every file it reads goes through [`super`]:
//! opened without blocking (a FIFO without a reader fails at once), and the open handle checked
//! to be a regular file before a byte is written (a FIFO with a reader, a device, `/dev/zero`
//! behind a link are refused). Files of the workspace are opened one name at a time from the
//! workspace folder without following a symlink, so a link planted there (to a device, to a
//! file outside) is refused, never written through. And no two outputs of one command are the
//! same file or stream: a file written next to others ([`Outputs`]: stdout, stderr, the audit
//! log, the state, the REPL history) is compared with each of them, by path before the run and
//! by device and inode of the handle where it is opened. A `tdm exec --dir-rw` command's files
//! are opened here too ([`open_in_preopen`]), below its preopen with `cap-std`.

use super::{FileId, FileKind};
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Why a file was not written.
#[derive(Debug)]
pub enum OutputError {
    /// The path names something other than a regular file (or a symlink where none is
    /// followed); nothing was written.
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: FileKind,
    },
    /// The path is (or will be) another output of the same command; nothing was written.
    SameAs {
        /// The path.
        path: PathBuf,
        /// Which output it is (`stdout`, `the audit log`, ...).
        other: String,
    },
    /// The file holds something tdm did not write there (checked by the caller); it was left
    /// as it was.
    Foreign {
        /// The path.
        path: PathBuf,
        /// What it is taken to be, and what to do.
        why: String,
    },
    /// Opening or writing failed.
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        error: io::Error,
    },
}

impl OutputError {
    fn io(path: &Path, error: io::Error) -> Self {
        Self::Io { path: path.to_path_buf(), error }
    }

    /// As an I/O error (for callers whose errors carry one): the error itself, or one whose
    /// message says why the file was refused.
    pub fn into_io(self) -> io::Error {
        match self {
            Self::Io { error, .. } => error,
            other => io::Error::other(other.to_string()),
        }
    }
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAFile { path, kind } => {
                write!(f, "cannot write {}: it is {kind}, not a regular file; nothing was written", path.display())
            }
            Self::SameAs { path, other } => write!(
                f,
                "cannot write {}: it is {other}, another output of this command; give it a file of its own",
                path.display()
            ),
            Self::Foreign { path, why } => write!(f, "cannot write {}: {why}", path.display()),
            Self::Io { path, error } => write!(f, "cannot write {}: {error}", path.display()),
        }
    }
}

impl std::error::Error for OutputError {}

/// Write options that never block on a FIFO (on Unix `O_NONBLOCK`: with no reader the open
/// fails at once with `ENXIO` instead of waiting for one); the handle is checked before writing.
fn nonblocking(read: bool) -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).read(read);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options
}

/// [`nonblocking`] write options that also never follow a symlink at the file's own name (on
/// Unix `O_NOFOLLOW`): for the files tdm keeps in the workspace, where a link planted in place
/// of one (to a device, to a file outside) must be refused, never written through.
fn nofollow() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    options
}

/// Opens with `options`, a symlink met by `O_NOFOLLOW` said as such.
fn open_nofollow(options: &std::fs::OpenOptions, path: &Path) -> Result<File, OutputError> {
    match options.open(path) {
        Ok(file) => Ok(file),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            Err(OutputError::NotAFile { path: path.to_path_buf(), kind: FileKind::Symlink })
        }
        Err(e) => Err(OutputError::io(path, e)),
    }
}

/// Checks that an opened handle is a regular file.
fn regular(file: &File, path: &Path) -> Result<std::fs::Metadata, OutputError> {
    let metadata = file.metadata().map_err(|e| OutputError::io(path, e))?;
    match FileKind::of(metadata.file_type()) {
        None => Ok(metadata),
        Some(kind) => Err(OutputError::NotAFile { path: path.to_path_buf(), kind }),
    }
}

/// Appends `bytes` to the file at `path` in one write (created when missing), never blocking,
/// never through a symlink and only to a regular file: the audit log.
pub fn append(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut file = open_nofollow(nofollow().create(true).append(true), path)?;
    regular(&file, path)?;
    file.write_all(bytes).map_err(|e| OutputError::io(path, e))
}

/// Creates the file at `path`, which must not exist yet (not even as a symlink), and writes
/// `bytes` (a package copy).
pub fn write_new(path: &Path, bytes: &mut dyn Read) -> Result<u64, OutputError> {
    let mut file = open_nofollow(nofollow().create_new(true), path)?;
    regular(&file, path)?;
    io::copy(bytes, &mut file).map_err(|e| OutputError::io(path, e))
}

/// [`write_new`] for a secret (a signing key): the file is created readable and writable by its
/// owner only (mode 0600 on Unix, from its creation, never widened later), and synced.
pub fn write_new_private(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut options = nofollow();
    options.create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = open_nofollow(&options, path)?;
    regular(&file, path)?;
    io::Write::write_all(&mut file, bytes).and_then(|()| file.sync_all()).map_err(|e| OutputError::io(path, e))
}

/// Checks that the existing file at `path` can be opened for writing (it is neither created
/// nor truncated) and is a regular file.
pub fn writable(path: &Path) -> Result<(), OutputError> {
    let file = nonblocking(false).open(path).map_err(|e| OutputError::io(path, e))?;
    regular(&file, path).map(drop)
}

/// Opens (creating it) the lock file at `path`, a regular file and not a symlink, without
/// truncating it.
pub fn open_lock(path: &Path) -> Result<File, OutputError> {
    let file = open_nofollow(nofollow().create(true).truncate(false), path)?;
    regular(&file, path)?;
    Ok(file)
}

/// Writes `bytes` to the file at `path` (not a symlink), created or emptied first, and syncs it
/// to disk (the state's temporary file, renamed over the state afterwards).
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut file = open_nofollow(nofollow().create(true).truncate(false), path)?;
    regular(&file, path)?;
    file.set_len(0)
        .and_then(|()| file.write_all(bytes))
        .and_then(|()| file.sync_all())
        .map_err(|e| OutputError::io(path, e))
}

/// Syncs the folder `dir` (after a rename in it), as far as the platform allows.
pub fn sync_dir(dir: &Path) {
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// Writes `bytes` to `name` (one plain name) in the folder `dir`, replacing what it held,
/// without following a symlink at `name` (a link planted there is refused, wherever it leads)
/// and without blocking: a workspace file such as the REPL history.
pub fn replace_in_dir(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), OutputError> {
    let path = dir.join(name);
    let root =
        cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority()).map_err(|e| OutputError::io(dir, e))?;
    let mut options = cap_std::fs::OpenOptions::new();
    options.write(true).create(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    if root.symlink_metadata(name).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(OutputError::NotAFile { path, kind: FileKind::Symlink });
    }
    let mut file = match root.open_with(name, &options) {
        Ok(file) => file.into_std(),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(OutputError::NotAFile { path, kind: FileKind::Symlink })
        }
        Err(e) => return Err(OutputError::io(&path, e)),
    };
    regular(&file, &path)?;
    file.set_len(0).and_then(|()| file.write_all(bytes)).map_err(|e| OutputError::io(&path, e))
}

/// The other outputs of one command, so that none of its files is written over another: its
/// stdout and stderr, and named files (the audit log, the state, ...), which may not exist yet.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    files: Vec<(String, PathBuf)>,
}

/// Device and inode of tdm's own stdout (`false`) or stderr (`true`), where it has them.
fn stream_id(stderr: bool) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd =
            if stderr { io::stderr().as_fd().try_clone_to_owned() } else { io::stdout().as_fd().try_clone_to_owned() };
        let metadata = File::from(fd.ok()?).metadata().ok()?;
        Some(FileId::of_handle(&metadata))
    }
    #[cfg(not(unix))]
    {
        let _ = stderr;
        None
    }
}

/// Where `path` is or would be created: its folder resolved (symlinks and `..`), joined with
/// its name; the path made absolute when the folder does not exist.
fn resolved(path: &Path) -> PathBuf {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    match (std::fs::canonicalize(parent), path.file_name()) {
        (Ok(folder), Some(name)) => folder.join(name),
        _ => std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
    }
}

impl Outputs {
    /// A command's stdout and stderr.
    pub fn of_command() -> Self {
        Self::default()
    }

    /// The same, and the file `path` (`what` names it in messages: `the audit log`).
    pub fn with(mut self, what: impl Into<String>, path: PathBuf) -> Self {
        self.files.push((what.into(), path));
        self
    }

    /// The streams' identities with their names.
    fn streams() -> impl Iterator<Item = (&'static str, FileId)> {
        [("stdout", stream_id(false)), ("stderr", stream_id(true))]
            .into_iter()
            .filter_map(|(what, id)| id.map(|id| (what, id)))
    }

    /// Which other output `path` is or will be (before anything is opened): the same path
    /// once resolved, or the same file as an output that exists.
    pub fn check_path(&self, path: &Path) -> Result<(), OutputError> {
        let same = |other: &str| Err(OutputError::SameAs { path: path.to_path_buf(), other: other.to_string() });
        let here = resolved(path);
        let existing = std::fs::metadata(path).ok().map(|m| FileId::of_handle(&m));
        if let Some(id) = existing {
            if let Some((what, _)) = Self::streams().find(|(_, other)| *other == id) {
                return same(what);
            }
        }
        for (what, other) in &self.files {
            let other_id = std::fs::metadata(other).ok().map(|m| FileId::of_handle(&m));
            if resolved(other) == here || (existing.is_some() && other_id == existing) {
                return same(what);
            }
        }
        Ok(())
    }

    /// Checks an opened `file` (at `path`) against every other output by device and inode:
    /// where the file is opened, so a path that became another output since it was checked
    /// (a link swapped in, an audit log created meanwhile) is caught.
    fn check_handle(&self, file: &File, path: &Path) -> Result<(), OutputError> {
        let metadata = file.metadata().map_err(|e| OutputError::io(path, e))?;
        let id = FileId::of_handle(&metadata);
        let same = |other: &str| Err(OutputError::SameAs { path: path.to_path_buf(), other: other.to_string() });
        if let Some((what, _)) = Self::streams().find(|(_, other)| *other == id) {
            return same(what);
        }
        for (what, other) in &self.files {
            if std::fs::metadata(other).is_ok_and(|m| FileId::of_handle(&m) == id) {
                return same(what);
            }
        }
        Ok(())
    }

    /// Replaces the content of the file at `path` with `bytes`, when it is a regular file (or
    /// a new one), none of the other outputs, and `keep` accepts what it holds now (its first
    /// bytes are handed over; an empty file always may be replaced). Checked on the open
    /// handle, before it is truncated; a file created by this call and refused is removed.
    pub fn replace(
        &self,
        path: &Path,
        bytes: &[u8],
        keep: impl Fn(&[u8]) -> Result<(), String>,
    ) -> Result<(), OutputError> {
        let existed = std::fs::symlink_metadata(path).is_ok();
        let mut file =
            nonblocking(true).create(true).truncate(false).open(path).map_err(|e| OutputError::io(path, e))?;
        let checked = self.check_opened(&mut file, path, keep);
        if let Err(e) = checked {
            if !existed && file.metadata().is_ok_and(|m| m.len() == 0) {
                // What this call created (through a link, it may be the file the link names).
                let _ = std::fs::canonicalize(path).and_then(std::fs::remove_file);
            }
            return Err(e);
        }
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(bytes))
            .map_err(|e| OutputError::io(path, e))
    }

    fn check_opened(
        &self,
        file: &mut File,
        path: &Path,
        keep: impl Fn(&[u8]) -> Result<(), String>,
    ) -> Result<(), OutputError> {
        let metadata = regular(file, path)?;
        self.check_handle(file, path)?;
        if metadata.len() > 0 {
            let mut start = Vec::new();
            file.take(64).read_to_end(&mut start).map_err(|e| OutputError::io(path, e))?;
            keep(&start).map_err(|why| OutputError::Foreign { path: path.to_path_buf(), why })?;
        }
        Ok(())
    }
}

/// Opens (creating or truncating as `how` says) the file at `relative` below a writable
/// preopen for a `tdm exec --dir-rw` command: read and write, never blocking, with `cap-std`
/// (no path or symlink, dangling or not, leads outside `dir`), and without following a symlink
/// in the last component unless asked to. The caller checks the handle is a regular file.
pub fn open_in_preopen(
    dir: &cap_std::fs::Dir,
    relative: &Path,
    how: contour_core::WriteOptions,
) -> io::Result<cap_std::fs::File> {
    let mut open = cap_std::fs::OpenOptions::new();
    // Creating or truncating needs a handle with write access even for an fd the guest gets
    // no write right on (`O_RDONLY|O_CREAT`).
    open.read(true).write(how.write || how.create || how.truncate).truncate(how.truncate);
    if how.create && how.exclusive {
        open.create_new(true);
    } else {
        open.create(how.create);
    }
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        let nofollow = if how.follow_symlinks { 0 } else { libc::O_NOFOLLOW };
        open.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    dir.open_with(relative, &open)
}
