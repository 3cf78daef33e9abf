//! Every file tdm reads goes through here (and every file it writes through [`output`]): opened without blocking (a FIFO, socket or device
//! is refused before a byte is read), its size checked from the open handle's metadata against
//! a bound before reading, then read with at most one byte past the bound so a file that grew
//! is refused too. Files inside a package are opened one name at a time from a directory handle,
//! never following a symlink, and checked to be the very file looked at (device and inode).
//! Also the truncation of file content quoted in an error message.

pub mod output;

use std::fmt;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Component, Path, PathBuf};

/// The most bytes of file content (or of a message quoting it) an error message carries.
pub const MAX_QUOTED_BYTES: usize = 1024;

/// What a path names when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A directory.
    Directory,
    /// A symbolic link (seen only where links are not followed).
    Symlink,
    /// A named pipe: opening or reading it could block.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Anything else that is not a regular file.
    Other,
}

impl FileKind {
    /// The kind of a non-regular file type (`None` for a regular file).
    pub fn of(ty: std::fs::FileType) -> Option<Self> {
        #[cfg(unix)]
        use std::os::unix::fs::FileTypeExt;
        #[cfg(unix)]
        let special = [ty.is_fifo(), ty.is_socket(), ty.is_char_device(), ty.is_block_device()];
        #[cfg(not(unix))]
        let special = [false; 4];
        Self::classify(ty.is_file(), ty.is_dir(), ty.is_symlink(), special)
    }

    /// The kind of a non-regular cap-std file type, as from a directory listing (`None` for a
    /// regular file).
    pub fn of_entry(ty: cap_std::fs::FileType) -> Option<Self> {
        #[cfg(unix)]
        use cap_std::fs::FileTypeExt;
        #[cfg(unix)]
        let special = [ty.is_fifo(), ty.is_socket(), ty.is_char_device(), ty.is_block_device()];
        #[cfg(not(unix))]
        let special = [false; 4];
        Self::classify(ty.is_file(), ty.is_dir(), ty.is_symlink(), special)
    }

    /// The kind from what a file type says it is; `special` is FIFO, socket, character device
    /// and block device.
    fn classify(file: bool, dir: bool, symlink: bool, special: [bool; 4]) -> Option<Self> {
        if file {
            return None;
        }
        if dir {
            return Some(Self::Directory);
        }
        if symlink {
            return Some(Self::Symlink);
        }
        let kinds = [Self::Fifo, Self::Socket, Self::CharDevice, Self::BlockDevice];
        Some(special.iter().zip(kinds).find(|(is, _)| **is).map_or(Self::Other, |(_, kind)| kind))
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Directory => "a directory",
            Self::Symlink => "a symbolic link",
            Self::Fifo => "a named pipe (FIFO)",
            Self::Socket => "a socket",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
            Self::Other => "not a regular file",
        })
    }
}

/// Why a file was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    /// Nothing is at the path.
    NotFound {
        /// The path.
        path: PathBuf,
    },
    /// The path names something other than a regular file; nothing was read.
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: FileKind,
    },
    /// The file is larger than the bound (from its metadata, or it grew while being read).
    TooLarge {
        /// The path.
        path: PathBuf,
        /// Its size in bytes (at least this many when it grew during the read).
        size: u64,
        /// The bound.
        limit: u64,
    },
    /// The name now leads to another file than the one checked before (it was swapped, for
    /// a symlink or another file, while tdm was working); nothing was read.
    Changed {
        /// The path.
        path: PathBuf,
    },
    /// Opening or reading failed.
    Io {
        /// The path.
        path: PathBuf,
        /// The kind of the I/O error (`PermissionDenied` also for a path leading outside a
        /// capability directory).
        kind: ErrorKind,
        /// The I/O error's message.
        message: String,
    },
}

impl FileError {
    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Self::NotFound { path }
            | Self::NotAFile { path, .. }
            | Self::TooLarge { path, .. }
            | Self::Changed { path }
            | Self::Io { path, .. } => path,
        }
    }

    fn io(path: &Path, e: &std::io::Error) -> Self {
        if e.kind() == ErrorKind::NotFound {
            Self::NotFound { path: path.to_path_buf() }
        } else {
            Self::Io { path: path.to_path_buf(), kind: e.kind(), message: e.to_string() }
        }
    }
}

impl FileError {
    /// What went wrong, without the path (for messages that name the file themselves).
    pub fn why(&self) -> String {
        match self {
            Self::NotFound { .. } => "no such file".to_string(),
            Self::NotAFile { kind, .. } => format!("it is {kind}, not a regular file; it was not read"),
            Self::TooLarge { size, limit, .. } => {
                format!("it has {size} bytes; the limit is {limit} bytes; it was not read")
            }
            Self::Changed { .. } => {
                "it was replaced after it was checked (it is no longer the same file); it was not read".to_string()
            }
            Self::Io { message, .. } => message.clone(),
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read {}: {}", self.path().display(), self.why())
    }
}

impl std::error::Error for FileError {}

/// Open options that never block on a FIFO or a device: on Unix `O_NONBLOCK` (harmless for a
/// regular file, and the handle is checked before any read).
fn nonblocking_std() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options
}

/// Read-only open options for a cap-std directory that never block on a FIFO or a device (on
/// Unix `O_NONBLOCK`, harmless for a regular file). Check the opened handle's type before
/// reading.
pub fn nonblocking_read() -> cap_std::fs::OpenOptions {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options
}

/// Opens `relative` inside `dir` for reading (cap-std: nothing outside it), never blocking;
/// the caller checks the handle's type before reading (`tdm exec --dir`).
pub fn open_nonblocking_in(dir: &cap_std::fs::Dir, relative: &Path) -> std::io::Result<cap_std::fs::File> {
    dir.open_with(relative, &nonblocking_read())
}

/// Checks that an opened handle is a regular file; returns its size.
fn regular_size(file: &File, shown: &Path) -> Result<u64, FileError> {
    let metadata = file.metadata().map_err(|e| FileError::io(shown, &e))?;
    match FileKind::of(metadata.file_type()) {
        None => Ok(metadata.len()),
        Some(kind) => Err(FileError::NotAFile { path: shown.to_path_buf(), kind }),
    }
}

/// Opens the regular file at `path` for reading, never blocking; returns it and its size from
/// the open handle. A FIFO, socket, device or directory is refused (`NotAFile`).
pub fn open_regular(path: &Path) -> Result<(File, u64), FileError> {
    // Where `O_NONBLOCK` does not exist, look before opening (the handle is checked again).
    #[cfg(not(unix))]
    {
        let metadata = std::fs::metadata(path).map_err(|e| FileError::io(path, &e))?;
        if let Some(kind) = FileKind::of(metadata.file_type()) {
            return Err(FileError::NotAFile { path: path.to_path_buf(), kind });
        }
    }
    let file = nonblocking_std().open(path).map_err(|e| FileError::io(path, &e))?;
    let size = regular_size(&file, path)?;
    Ok((file, size))
}

/// Opens the regular file at `relative` inside `dir` (cap-std: no path leads outside it, a
/// symlink included), never blocking; returns it and its size. `shown` names it in errors.
pub fn open_regular_in(dir: &cap_std::fs::Dir, relative: &Path, shown: &Path) -> Result<(File, u64), FileError> {
    #[cfg(not(unix))]
    {
        let metadata = dir.metadata(relative).map_err(|e| FileError::io(shown, &e))?;
        if !metadata.is_file() {
            let kind = if metadata.is_dir() { FileKind::Directory } else { FileKind::Other };
            return Err(FileError::NotAFile { path: shown.to_path_buf(), kind });
        }
    }
    let file = dir.open_with(relative, &nonblocking_read()).map_err(|e| FileError::io(shown, &e))?.into_std();
    let size = regular_size(&file, shown)?;
    Ok((file, size))
}

/// Which file a directory entry or an open handle is: device and inode on Unix, so a file
/// opened by name can be checked to be the very one looked at before. Elsewhere there is
/// nothing to compare and every identity matches (cap-std still keeps opens inside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    #[cfg(unix)]
    dev: u64,
    #[cfg(unix)]
    ino: u64,
}

impl FileId {
    /// The identity in cap-std metadata (of the entry itself when it came from
    /// `symlink_metadata` or a directory listing).
    pub fn of(metadata: &cap_std::fs::Metadata) -> Self {
        #[cfg(unix)]
        {
            use cap_std::fs::MetadataExt;
            Self { dev: metadata.dev(), ino: metadata.ino() }
        }
        #[cfg(not(unix))]
        {
            let _ = metadata;
            Self {}
        }
    }

    /// The identity of an open handle's metadata (or of a path's, following links).
    pub(crate) fn of_handle(metadata: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Self { dev: metadata.dev(), ino: metadata.ino() }
        }
        #[cfg(not(unix))]
        {
            let _ = metadata;
            Self {}
        }
    }
}

/// Read options that never follow a symlink at the name opened and never block (on Unix
/// `O_NOFOLLOW | O_NONBLOCK`, and `O_DIRECTORY` for a directory).
fn nofollow_read(directory: bool) -> cap_std::fs::OpenOptions {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        let directory = if directory { libc::O_DIRECTORY } else { 0 };
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | directory);
    }
    #[cfg(not(unix))]
    let _ = directory;
    options
}

/// Opens the entry `name` (one plain name) of `dir` without following a symlink: looked at
/// first (a symlink is refused; when `expected` is given the entry must be that file), opened
/// with `O_NOFOLLOW`, and the handle must be the entry looked at (so a swap in between, even
/// one cap-std would follow inside `dir`, is refused). `shown` names it in errors.
fn open_entry(
    dir: &cap_std::fs::Dir,
    name: &Path,
    directory: bool,
    expected: Option<FileId>,
    shown: &Path,
) -> Result<File, FileError> {
    let seen = dir.symlink_metadata(name).map_err(|e| FileError::io(shown, &e))?;
    let id = FileId::of(&seen);
    if expected.is_some_and(|want| want != id) {
        return Err(FileError::Changed { path: shown.to_path_buf() });
    }
    if seen.file_type().is_symlink() {
        return Err(FileError::NotAFile { path: shown.to_path_buf(), kind: FileKind::Symlink });
    }
    #[cfg(not(unix))]
    if directory {
        let file = dir.open_dir(name).map_err(|e| FileError::io(shown, &e))?.into_std_file();
        return same_file(file, id, shown);
    }
    let file = match dir.open_with(name, &nofollow_read(directory)) {
        Ok(file) => file.into_std(),
        // `O_NOFOLLOW` met a symlink that was not there when looked at.
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(FileError::Changed { path: shown.to_path_buf() })
        }
        Err(e) => return Err(FileError::io(shown, &e)),
    };
    same_file(file, id, shown)
}

/// `file` if its handle is the file `id` names.
fn same_file(file: File, id: FileId, shown: &Path) -> Result<File, FileError> {
    let metadata = file.metadata().map_err(|e| FileError::io(shown, &e))?;
    if FileId::of_handle(&metadata) != id {
        return Err(FileError::Changed { path: shown.to_path_buf() });
    }
    Ok(file)
}

/// The plain names of `relative`, or an error for a path that is absolute or has `..`.
fn plain_names<'a>(relative: &'a Path, shown: &Path) -> Result<Vec<&'a Path>, FileError> {
    relative
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| match c {
            Component::Normal(name) => Ok(Path::new(name)),
            _ => Err(FileError::Io {
                path: shown.to_path_buf(),
                kind: ErrorKind::PermissionDenied,
                message: "the path must be relative, with plain names only".into(),
            }),
        })
        .collect()
}

/// Opens the subdirectory `name` (one plain name) of `dir`, never following a symlink; when
/// `expected` is given it must be that directory (as listed before). `shown` names it in errors.
pub fn open_subdir(
    dir: &cap_std::fs::Dir,
    name: &Path,
    expected: Option<FileId>,
    shown: &Path,
) -> Result<cap_std::fs::Dir, FileError> {
    let file = open_entry(dir, name, true, expected, shown)?;
    Ok(cap_std::fs::Dir::from_std_file(file))
}

/// Opens the directory `relative` (plain names) inside `root` one name at a time, never
/// following a symlink at any of them; `shown_root` names `root` in errors.
pub fn open_dir_beneath(
    root: &cap_std::fs::Dir,
    relative: &Path,
    shown_root: &Path,
) -> Result<cap_std::fs::Dir, FileError> {
    let mut dir = root.try_clone().map_err(|e| FileError::io(shown_root, &e))?;
    let mut shown = shown_root.to_path_buf();
    for name in plain_names(relative, &shown_root.join(relative))? {
        shown.push(name);
        dir = open_subdir(&dir, name, None, &shown)?;
    }
    Ok(dir)
}

/// Opens the regular file `relative` (plain names) inside `root` for reading, one name at a
/// time, never following a symlink at any of them, never blocking; each directory on the way
/// and the file are checked to be what was looked at just before, and the file to be
/// `expected` when given (its identity recorded earlier). Returns it and its size from the
/// handle. `shown_root` names `root` in errors.
pub fn open_regular_beneath(
    root: &cap_std::fs::Dir,
    relative: &Path,
    shown_root: &Path,
    expected: Option<FileId>,
) -> Result<(File, u64), FileError> {
    let shown = shown_root.join(relative);
    let names = plain_names(relative, &shown)?;
    let Some((last, parents)) = names.split_last() else {
        return Err(FileError::NotAFile { path: shown, kind: FileKind::Directory });
    };
    let dir = open_dir_beneath(root, &parents.iter().collect::<PathBuf>(), shown_root)?;
    let file = open_entry(&dir, last, false, expected, &shown)?;
    let size = regular_size(&file, &shown)?;
    Ok((file, size))
}

/// Reads an opened regular file of `size` bytes (from its metadata): refused without reading
/// when `size > limit`, read with at most `limit + 1` bytes and refused if it grew past `limit`.
pub fn read_opened(file: File, size: u64, limit: u64, shown: &Path) -> Result<Vec<u8>, FileError> {
    if size > limit {
        return Err(FileError::TooLarge { path: shown.to_path_buf(), size, limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| FileError::io(shown, &e))?;
    let read = bytes.len() as u64;
    if read > limit {
        return Err(FileError::TooLarge { path: shown.to_path_buf(), size: read, limit });
    }
    Ok(bytes)
}

/// Reads the regular file at `path`, at most `limit` bytes, refusing a symlink at its own name
/// (on Unix `O_NOFOLLOW`): a workspace file such as the state, where a link planted in its
/// place (to a device, to a file outside the workspace) is never read through.
pub fn read_limited_nofollow(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let mut options = nonblocking_std();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(FileError::NotAFile { path: path.to_path_buf(), kind: FileKind::Symlink })
        }
        Err(e) => return Err(FileError::io(path, &e)),
    };
    let size = regular_size(&file, path)?;
    read_opened(file, size, limit, path)
}

/// Reads the regular file at `path`, at most `limit` bytes (see [`open_regular`], [`read_opened`]).
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let (file, size) = open_regular(path)?;
    read_opened(file, size, limit, path)
}

/// `text` cut to at most `limit` bytes (at a character boundary), with a note of how much was
/// cut; unchanged when it fits. Every error message quoting file content goes through this.
pub fn truncated(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} more bytes cut)", &text[..end], text.len() - end)
}

/// [`truncated`] at [`MAX_QUOTED_BYTES`].
pub fn quoted(text: &str) -> String {
    truncated(text, MAX_QUOTED_BYTES)
}

/// A `fmt::Write` keeping the first `limit` bytes and counting the rest.
struct Capped {
    kept: String,
    limit: usize,
    cut: usize,
}

impl fmt::Write for Capped {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = self.limit.saturating_sub(self.kept.len());
        if s.len() <= room {
            self.kept.push_str(s);
            return Ok(());
        }
        let mut end = room;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.kept.push_str(&s[..end]);
        self.cut = self.cut.saturating_add(s.len() - end);
        // Nothing more is kept from here on.
        self.limit = self.kept.len();
        Ok(())
    }
}

/// `value` rendered to at most [`MAX_QUOTED_BYTES`] with a note of how much was cut, without
/// ever holding the whole rendering (an error over a huge file can render to hundreds of MB).
pub fn quoted_display(value: &dyn fmt::Display) -> String {
    let mut capped = Capped { kept: String::new(), limit: MAX_QUOTED_BYTES, cut: 0 };
    let _ = fmt::write(&mut capped, format_args!("{value}"));
    if capped.cut > 0 {
        capped.kept.push_str(&format!("... ({} more bytes cut)", capped.cut));
    }
    capped.kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_cuts_at_a_character_boundary_and_says_how_much() {
        assert_eq!(truncated("short", 10), "short");
        let cut = truncated("ééééé", 3);
        assert_eq!(cut, "é... (8 more bytes cut)");
        assert!(quoted(&"x".repeat(10_000)).len() < MAX_QUOTED_BYTES + 64);
        let long = "y".repeat(5_000);
        let shown = quoted_display(&long);
        assert!(shown.starts_with(&"y".repeat(MAX_QUOTED_BYTES)), "{shown}");
        assert!(shown.ends_with(&format!("({} more bytes cut)", 5_000 - MAX_QUOTED_BYTES)), "{shown}");
        assert_eq!(quoted_display(&"fits"), "fits");
    }

    #[cfg(unix)]
    #[test]
    fn opening_beneath_follows_no_symlink_and_checks_the_file_is_the_one_seen() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("real")).unwrap();
        std::fs::write(tmp.path().join("real/a.txt"), "a").unwrap();
        std::fs::write(tmp.path().join("b.txt"), "b").unwrap();
        // Links that stay inside: cap-std alone would follow them.
        std::os::unix::fs::symlink("real", tmp.path().join("link")).unwrap();
        std::os::unix::fs::symlink("b.txt", tmp.path().join("alias.txt")).unwrap();
        let root = cap_std::fs::Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
        let shown = Path::new("pkg");
        assert!(open_regular_in(&root, Path::new("link/a.txt"), shown).is_ok());
        for (path, at) in [("link/a.txt", "pkg/link"), ("alias.txt", "pkg/alias.txt")] {
            let error = open_regular_beneath(&root, Path::new(path), shown, None).unwrap_err();
            assert_eq!(error, FileError::NotAFile { path: PathBuf::from(at), kind: FileKind::Symlink }, "{path}");
        }
        assert!(matches!(
            open_dir_beneath(&root, Path::new("link"), shown),
            Err(FileError::NotAFile { kind: FileKind::Symlink, .. })
        ));
        let (_, size) = open_regular_beneath(&root, Path::new("real/a.txt"), shown, None).unwrap();
        assert_eq!(size, 1);
        // Another file than the one recorded is refused, not read.
        let a = FileId::of(&root.symlink_metadata("real/a.txt").unwrap());
        let error = open_regular_beneath(&root, Path::new("b.txt"), shown, Some(a)).unwrap_err();
        assert_eq!(error, FileError::Changed { path: PathBuf::from("pkg/b.txt") });
        assert!(open_regular_beneath(&root, Path::new("../b.txt"), shown, None).is_err());
    }
}
