//! Copying a verified package into the workspace: the manifest and module are written from the
//! exact bytes that were verified (never read again), every other file is checked from its
//! metadata first (regular files and directories only, no symlink, within the count, depth and
//! total size limits) and then copied with a bounded read.

use crate::files::{self, FileError, FileKind};
use crate::package::{Package, MANIFEST};
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The most bytes a package may hold in all (manifest, module and every other file): room for a
/// `.wat` module at its 64 MiB limit and as much again of assets.
pub const MAX_PACKAGE_BYTES: u64 = 128 * 1024 * 1024;
/// The most files and directories a package may hold.
pub const MAX_PACKAGE_ENTRIES: u64 = 10_000;
/// The most directory levels below the package folder.
pub const MAX_PACKAGE_DEPTH: usize = 16;

/// Why a package could not be copied. Nothing is left in the workspace when it fails.
#[derive(Debug)]
pub enum CopyError {
    /// An entry is not a regular file or directory (a symlink, FIFO, socket or device), or a
    /// file could not be read within its checked size.
    File(FileError),
    /// The package is over a limit.
    Limit {
        /// The package folder.
        dir: PathBuf,
        /// Which limit: "bytes", "files and directories" or "directory levels".
        what: &'static str,
        /// How much was found (at least).
        found: u64,
        /// The limit.
        limit: u64,
    },
    /// Listing the package or writing the copy failed.
    Io(PathBuf, std::io::Error),
}

impl fmt::Display for CopyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => write!(f, "{e}: a package holds only regular files and directories"),
            Self::Limit { dir, what, found, limit } => {
                write!(f, "the package {} has at least {found} {what}; the limit is {limit}", dir.display())
            }
            Self::Io(path, e) => write!(f, "{}: {e}", path.display()),
        }
    }
}

impl std::error::Error for CopyError {}

/// One regular file to copy, with its size from metadata.
struct Planned {
    relative: PathBuf,
    size: u64,
}

/// Everything a package copy will create, checked before anything is created.
#[derive(Default)]
struct Plan {
    dirs: Vec<PathBuf>,
    files: Vec<Planned>,
    bytes: u64,
    entries: u64,
}

impl Plan {
    fn count(&mut self, dir: &Path, bytes: u64) -> Result<(), CopyError> {
        self.entries += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        if self.entries > MAX_PACKAGE_ENTRIES {
            return Err(limit(dir, "files and directories", self.entries, MAX_PACKAGE_ENTRIES));
        }
        if self.bytes > MAX_PACKAGE_BYTES {
            return Err(limit(dir, "bytes", self.bytes, MAX_PACKAGE_BYTES));
        }
        Ok(())
    }
}

fn limit(dir: &Path, what: &'static str, found: u64, limit: u64) -> CopyError {
    CopyError::Limit { dir: dir.to_path_buf(), what, found, limit }
}

/// Lists `root/relative` into `plan` without following any link, refusing what cannot be copied.
fn walk(root: &Path, relative: &Path, depth: usize, skip: &[PathBuf], plan: &mut Plan) -> Result<(), CopyError> {
    if depth > MAX_PACKAGE_DEPTH {
        return Err(limit(root, "directory levels", depth as u64, MAX_PACKAGE_DEPTH as u64));
    }
    let here = root.join(relative);
    let entries = std::fs::read_dir(&here).map_err(|e| CopyError::Io(here.clone(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| CopyError::Io(here.clone(), e))?;
        let child = relative.join(entry.file_name());
        // `DirEntry::metadata` does not follow a symlink: a link is seen as a link.
        let metadata = entry.metadata().map_err(|e| CopyError::Io(root.join(&child), e))?;
        match FileKind::of(metadata.file_type()) {
            None if skip.contains(&child) => {}
            None => {
                plan.count(root, metadata.len())?;
                plan.files.push(Planned { relative: child, size: metadata.len() });
            }
            Some(FileKind::Directory) => {
                plan.count(root, 0)?;
                plan.dirs.push(child.clone());
                walk(root, &child, depth + 1, skip, plan)?;
            }
            Some(kind) => return Err(CopyError::File(FileError::NotAFile { path: root.join(&child), kind })),
        }
    }
    Ok(())
}

fn write_new(path: &Path, bytes: &[u8]) -> Result<(), CopyError> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| CopyError::Io(path.to_path_buf(), e))?;
    file.write_all(bytes).map_err(|e| CopyError::Io(path.to_path_buf(), e))
}

/// Copies one planned file: opened without blocking, a regular file no larger than planned,
/// read at most one byte past that.
fn copy_file(from: &Path, to: &Path, planned: u64) -> Result<(), CopyError> {
    let (file, size) = files::open_regular(from).map_err(CopyError::File)?;
    if size > planned {
        return Err(CopyError::File(FileError::TooLarge { path: from.to_path_buf(), size, limit: planned }));
    }
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(|e| CopyError::Io(to.to_path_buf(), e))?;
    let copied = std::io::copy(&mut file.take(planned.saturating_add(1)), &mut out)
        .map_err(|e| CopyError::Io(from.to_path_buf(), e))?;
    if copied > planned {
        return Err(CopyError::File(FileError::TooLarge { path: from.to_path_buf(), size: copied, limit: planned }));
    }
    Ok(())
}

/// Copies `package` into `to` (which must not exist): its manifest and module from the bytes
/// verified, every other file after the whole tree was checked. On error `to` is removed.
pub fn copy_package(package: &Package, to: &Path) -> Result<(), CopyError> {
    let result = copy_into(package, to);
    if result.is_err() {
        let _ = std::fs::remove_dir_all(to);
    }
    result
}

fn copy_into(package: &Package, to: &Path) -> Result<(), CopyError> {
    let module = PathBuf::from(&package.manifest.module);
    let skip = [PathBuf::from(MANIFEST), module.clone()];
    let mut plan = Plan::default();
    plan.count(&package.dir, package.files.manifest_text.len() as u64)?;
    plan.count(&package.dir, package.files.module_file.len() as u64)?;
    walk(&package.dir, Path::new(""), 0, &skip, &mut plan)?;
    std::fs::create_dir_all(to).map_err(|e| CopyError::Io(to.to_path_buf(), e))?;
    for dir in &plan.dirs {
        std::fs::create_dir(to.join(dir)).map_err(|e| CopyError::Io(to.join(dir), e))?;
    }
    if let Some(parent) = module.parent() {
        std::fs::create_dir_all(to.join(parent)).map_err(|e| CopyError::Io(to.join(parent), e))?;
    }
    write_new(&to.join(MANIFEST), package.files.manifest_text.as_bytes())?;
    write_new(&to.join(&module), &package.files.module_file)?;
    for file in &plan.files {
        copy_file(&package.dir.join(&file.relative), &to.join(&file.relative), file.size)?;
    }
    Ok(())
}
