//! Every file tdm reads goes through here: opened without blocking (a FIFO, socket or device
//! is refused before a byte is read), its size checked from the open handle's metadata against
//! a bound before reading, then read with at most one byte past the bound so a file that grew
//! is refused too. Also the truncation of file content quoted in an error message.

use std::fmt;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

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
        if ty.is_file() {
            return None;
        }
        if ty.is_dir() {
            return Some(Self::Directory);
        }
        if ty.is_symlink() {
            return Some(Self::Symlink);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if ty.is_fifo() {
                return Some(Self::Fifo);
            }
            if ty.is_socket() {
                return Some(Self::Socket);
            }
            if ty.is_char_device() {
                return Some(Self::CharDevice);
            }
            if ty.is_block_device() {
                return Some(Self::BlockDevice);
            }
        }
        Some(Self::Other)
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

/// Write options that never block on a FIFO (on Unix `O_NONBLOCK`: with no reader the open
/// fails at once with `ENXIO` instead of waiting for one); harmless for a regular file. For the
/// files tdm appends to or replaces: the audit log, the state lock, the state's temporary file.
pub fn nonblocking_write() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
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

/// Reads the regular file at `path`, at most `limit` bytes (see [`open_regular`], [`read_opened`]).
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let (file, size) = open_regular(path)?;
    read_opened(file, size, limit, path)
}

/// Reads the regular file at `relative` inside `dir`, at most `limit` bytes.
pub fn read_limited_in(
    dir: &cap_std::fs::Dir,
    relative: &Path,
    limit: u64,
    shown: &Path,
) -> Result<Vec<u8>, FileError> {
    let (file, size) = open_regular_in(dir, relative, shown)?;
    read_opened(file, size, limit, shown)
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
}
