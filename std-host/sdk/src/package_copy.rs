//! Copying a verified package into the workspace: the manifest and module are written from the
//! exact bytes that were verified (never read again), every other file is checked from its
//! metadata first (regular files and directories only, no symlink, within the count, depth and
//! total size limits) and then copied with a bounded read. Everything is listed and opened
//! through the package folder handle the manifest was read from, one name at a time, never
//! following a symlink, and each file opened must be the very file the listing recorded
//! (device and inode): a package changed during the copy is refused, never read outside.

use crate::files::{self, FileError, FileId, FileKind};
use crate::package::{Package, MANIFEST};
use crate::publisher::SIGNATURE_FILE;
use cap_std::fs::Dir;
use sha2::{Digest, Sha256};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes a package may hold in all (manifest, module and every other file): room for a
/// module at its 32 MiB limit and three times as much of assets.
pub const MAX_PACKAGE_BYTES: u64 = 128 * 1024 * 1024;
pub use crate::package::MAX_PACKAGE_ENTRIES;
/// The most directory levels below the package folder.
pub const MAX_PACKAGE_DEPTH: usize = 16;

/// Why a package could not be copied. Nothing is left in the workspace when it fails.
#[derive(Debug)]
pub enum CopyError {
    /// An entry is not a regular file or directory (a symlink, FIFO, socket or device), a
    /// file could not be read within its checked size, or it changed after it was checked.
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
    /// A file of a signed package (or one with a `[files]` table) is not listed there, is
    /// missing, or its bytes are not the listed hash: the signature does not cover it.
    Unlisted {
        /// The file, relative to the package.
        file: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Listing the package or writing the copy failed.
    Io(PathBuf, std::io::Error),
}

impl fmt::Display for CopyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e @ FileError::Changed { .. }) => {
                write!(f, "{e}: the package changed while it was being installed; nothing was installed")
            }
            Self::File(e) => write!(f, "{e}: a package holds only regular files and directories"),
            Self::Limit { dir, what, found, limit } => {
                write!(f, "the package {} has at least {found} {what}; the limit is {limit}", dir.display())
            }
            Self::Unlisted { file, why } => write!(
                f,
                "{}: {why}; plugin.toml's `[files]` (which its signature covers) must list every file of the \
                 package with its sha256: run `tdm pack` again",
                files::quoted(file)
            ),
            Self::Io(path, e) => write!(f, "{}: {e}", path.display()),
        }
    }
}

impl std::error::Error for CopyError {}

/// One regular file to copy, with its size and identity from the listing.
struct Planned {
    relative: PathBuf,
    size: u64,
    id: FileId,
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

/// Lists `dir` (the package's `relative` folder, `root` naming the package) into `plan` without
/// following any link, refusing what cannot be copied; subfolders are opened from `dir`.
fn walk(
    dir: &Dir,
    root: &Path,
    relative: &Path,
    depth: usize,
    skip: &[PathBuf],
    plan: &mut Plan,
) -> Result<(), CopyError> {
    if depth > MAX_PACKAGE_DEPTH {
        return Err(limit(root, "directory levels", depth as u64, MAX_PACKAGE_DEPTH as u64));
    }
    let here = root.join(relative);
    let entries = dir.entries().map_err(|e| CopyError::Io(here.clone(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| CopyError::Io(here.clone(), e))?;
        let name = PathBuf::from(entry.file_name());
        let child = relative.join(&name);
        // `DirEntry::metadata` does not follow a symlink: a link is seen as a link.
        let metadata = entry.metadata().map_err(|e| CopyError::Io(root.join(&child), e))?;
        let id = FileId::of(&metadata);
        match FileKind::of_entry(metadata.file_type()) {
            None if skip.contains(&child) => {}
            None => {
                plan.count(root, metadata.len())?;
                plan.files.push(Planned { relative: child, size: metadata.len(), id });
            }
            Some(FileKind::Directory) => {
                plan.count(root, 0)?;
                plan.dirs.push(child.clone());
                let sub = files::open_subdir(dir, &name, Some(id), &root.join(&child)).map_err(CopyError::File)?;
                walk(&sub, root, &child, depth + 1, skip, plan)?;
            }
            Some(kind) => return Err(CopyError::File(FileError::NotAFile { path: root.join(&child), kind })),
        }
    }
    Ok(())
}

fn write_new(path: &Path, mut bytes: &[u8]) -> Result<(), CopyError> {
    files::output::write_new(path, &mut bytes).map(drop).map_err(|e| CopyError::Io(path.to_path_buf(), e.into_io()))
}

/// Copies one planned file: opened from the package folder handle one name at a time without
/// following a link or blocking, the very file listed (same device and inode), a regular file
/// no larger than listed, read at most one byte past that.
fn copy_file(
    root: &Dir,
    shown_root: &Path,
    planned: &Planned,
    to: &Path,
    listed: Option<&str>,
) -> Result<(), CopyError> {
    let from = shown_root.join(&planned.relative);
    let (file, size) =
        files::open_regular_beneath(root, &planned.relative, shown_root, Some(planned.id)).map_err(CopyError::File)?;
    if size > planned.size {
        return Err(CopyError::File(FileError::TooLarge { path: from, size, limit: planned.size }));
    }
    let mut reader = Hashing { inner: file.take(planned.size.saturating_add(1)), hash: Sha256::new() };
    let copied = files::output::write_new(to, &mut reader).map_err(|e| CopyError::Io(from.clone(), e.into_io()))?;
    if copied > planned.size {
        return Err(CopyError::File(FileError::TooLarge { path: from, size: copied, limit: planned.size }));
    }
    // The hash of the bytes written, not of a read before or after.
    if let Some(expected) = listed {
        let actual = contour_core::hex(&reader.hash.finalize().into());
        if actual != expected {
            return Err(CopyError::Unlisted {
                file: listed_name(&planned.relative),
                why: "its sha256 is not the listed one",
            });
        }
    }
    Ok(())
}

/// A reader that hashes what passes through it.
struct Hashing<R> {
    inner: R,
    hash: Sha256,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// A package path as `[files]` names it: components joined by `/`.
fn listed_name(relative: &Path) -> String {
    relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// Whether the package's `[files]` must list exactly its other files: a signed package, or
/// one with the table.
fn strict(package: &Package) -> bool {
    package.files.publisher.is_some() || !package.manifest.files.is_empty()
}

/// Checks the planned files against `[files]` (when [`strict`]): each listed, each listed one
/// there.
fn check_listed(package: &Package, plan: &Plan) -> Result<(), CopyError> {
    if !strict(package) {
        return Ok(());
    }
    let names: Vec<String> = plan.files.iter().map(|f| listed_name(&f.relative)).collect();
    if let Some(name) = names.iter().find(|name| !package.manifest.files.contains_key(*name)) {
        return Err(CopyError::Unlisted { file: name.clone(), why: "it is not listed" });
    }
    if let Some(name) = package.manifest.files.keys().find(|listed| !names.contains(listed)) {
        return Err(CopyError::Unlisted { file: name.clone(), why: "it is listed but not in the package" });
    }
    Ok(())
}

/// Copies `package` into `to` (which must not exist): its manifest and module from the bytes
/// verified, every other file after the whole tree was checked. On error `to` is removed.
pub fn copy_package(package: &Package, to: &Path) -> Result<(), CopyError> {
    let plan = plan(package)?;
    copy_planned(package, &plan, to)
}

/// Checks the whole package tree before anything is created.
fn plan(package: &Package) -> Result<Plan, CopyError> {
    let module = PathBuf::from(&package.manifest.module);
    let skip = [PathBuf::from(MANIFEST), module, PathBuf::from(SIGNATURE_FILE)];
    let mut plan = Plan::default();
    plan.count(&package.dir, package.files.manifest_text.len() as u64)?;
    plan.count(&package.dir, package.files.module_file.len() as u64)?;
    walk(&package.files.root, &package.dir, Path::new(""), 0, &skip, &mut plan)?;
    check_listed(package, &plan)?;
    Ok(plan)
}

/// Copies what `plan` lists into `to`; on error `to` is removed.
fn copy_planned(package: &Package, plan: &Plan, to: &Path) -> Result<(), CopyError> {
    let result = copy_into(package, plan, to);
    if result.is_err() {
        let _ = std::fs::remove_dir_all(to);
    }
    result
}

fn copy_into(package: &Package, plan: &Plan, to: &Path) -> Result<(), CopyError> {
    let module = PathBuf::from(&package.manifest.module);
    std::fs::create_dir_all(to).map_err(|e| CopyError::Io(to.to_path_buf(), e))?;
    for dir in &plan.dirs {
        std::fs::create_dir(to.join(dir)).map_err(|e| CopyError::Io(to.join(dir), e))?;
    }
    if let Some(parent) = module.parent() {
        std::fs::create_dir_all(to.join(parent)).map_err(|e| CopyError::Io(to.join(parent), e))?;
    }
    write_new(&to.join(MANIFEST), package.files.manifest_text.as_bytes())?;
    write_new(&to.join(&module), &package.files.module_file)?;
    if let Some((_, signature)) = &package.files.publisher {
        write_new(&to.join(SIGNATURE_FILE), signature.as_bytes())?;
    }
    let listed = strict(package).then_some(&package.manifest.files);
    for file in &plan.files {
        let expected = listed.and_then(|l| l.get(&listed_name(&file.relative))).map(String::as_str);
        copy_file(&package.files.root, &package.dir, file, &to.join(&file.relative), expected)?;
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const MODULE: &str = "(module)";

    /// A package in `dir` with `dist/sub/a.txt` and `dist/b.txt`, read and verified.
    fn package(dir: &Path) -> Package {
        std::fs::create_dir_all(dir.join("dist/sub")).unwrap();
        std::fs::write(dir.join("dist/plugin.wat"), MODULE).unwrap();
        std::fs::write(dir.join("dist/sub/a.txt"), "asset a").unwrap();
        std::fs::write(dir.join("dist/b.txt"), "asset b").unwrap();
        let sha = crate::intents::tool::sha256_hex(MODULE.as_bytes());
        let manifest = format!(
            "id = \"p\"\nversion = \"1.0.0\"\nname = \"P\"\ndescription = \"d\"\nmodule = \"dist/plugin.wat\"\nsha256 = \"{sha}\"\n"
        );
        std::fs::write(dir.join(MANIFEST), manifest).unwrap();
        Package::read(dir).unwrap()
    }

    /// Whether any file under `dir` holds `needle`.
    fn holds(dir: &Path, needle: &str) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else { return false };
        entries.flatten().any(|entry| {
            let path = entry.path();
            if path.is_dir() {
                holds(&path, needle)
            } else {
                std::fs::read_to_string(&path).is_ok_and(|text| text.contains(needle))
            }
        })
    }

    #[test]
    fn a_file_swapped_for_a_symlink_after_the_walk_is_not_copied() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside.txt");
        std::fs::write(&outside, "SECRET").unwrap();
        let dir = tmp.path().join("pkg");
        let package = package(&dir);
        let plan = plan(&package).unwrap();
        // The race, made deterministic: the checked file becomes a link to a file outside.
        let swapped = dir.join("dist/b.txt");
        symlink(&outside, dir.join("dist/b.txt.l")).unwrap();
        std::fs::rename(dir.join("dist/b.txt.l"), &swapped).unwrap();
        let to = tmp.path().join("staging");
        let result = copy_planned(&package, &plan, &to);
        assert!(matches!(result, Err(CopyError::File(FileError::Changed { .. }))), "{result:?}");
        let message = result.unwrap_err().to_string();
        assert!(message.contains("changed while it was being installed"), "{message}");
        assert!(!to.exists(), "the staging folder was left behind");
        assert!(!holds(&to, "SECRET"));
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_after_the_walk_is_not_copied() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("a.txt"), "SECRET").unwrap();
        let dir = tmp.path().join("pkg");
        let package = package(&dir);
        let plan = plan(&package).unwrap();
        std::fs::rename(dir.join("dist/sub"), tmp.path().join("moved")).unwrap();
        symlink(&outside, dir.join("dist/sub")).unwrap();
        let to = tmp.path().join("staging");
        let result = copy_planned(&package, &plan, &to);
        assert!(result.is_err(), "the copy went through: {result:?}");
        assert!(!to.exists(), "the staging folder was left behind");
    }

    #[test]
    fn a_file_replaced_by_another_after_the_walk_is_not_copied() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("pkg");
        let package = package(&dir);
        let plan = plan(&package).unwrap();
        // A hard link keeps no symlink anywhere: only the identity check sees the swap.
        let outside = tmp.path().join("outside.txt");
        std::fs::write(&outside, "SECRET").unwrap();
        std::fs::remove_file(dir.join("dist/b.txt")).unwrap();
        std::fs::hard_link(&outside, dir.join("dist/b.txt")).unwrap();
        let to = tmp.path().join("staging");
        let result = copy_planned(&package, &plan, &to);
        assert!(matches!(result, Err(CopyError::File(FileError::Changed { .. }))), "{result:?}");
        assert!(!to.exists());
    }

    #[test]
    fn an_unchanged_package_is_copied() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("pkg");
        let package = package(&dir);
        let to = tmp.path().join("staging");
        copy_package(&package, &to).unwrap();
        assert_eq!(std::fs::read_to_string(to.join("dist/sub/a.txt")).unwrap(), "asset a");
        assert_eq!(std::fs::read_to_string(to.join("dist/b.txt")).unwrap(), "asset b");
        assert_eq!(std::fs::read_to_string(to.join("dist/plugin.wat")).unwrap(), MODULE);
    }
}
