//! Reading a module from disk: binary `.wasm` as is, `.wat` text compiled with the `wat` crate,
//! both through [`crate::files`] (never blocking, size-checked before a byte is read).

use crate::files::{self, FileError};
use contour_core::policy::DEFAULT_MAX_MODULE_BYTES;
use std::fmt;
use std::path::{Path, PathBuf};

/// A `.wat` file may be this many times the module limit (64 MiB with the default 32 MiB): text
/// is larger than the binary it compiles to, and the binary must still fit the module limit.
pub const WAT_TEXT_FACTOR: u64 = 2;

/// Why a module file could not be read or compiled from text.
#[derive(Debug)]
pub enum ModuleFileError {
    /// The file could not be read: missing, not a regular file, too large, or an I/O error.
    File(FileError),
    /// The `.wat` text does not parse; the message names the file and is truncated.
    Wat(PathBuf, String),
}

impl fmt::Display for ModuleFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => e.fmt(f),
            Self::Wat(path, e) => write!(f, "{} is not valid WebAssembly text: {e}", path.display()),
        }
    }
}

impl std::error::Error for ModuleFileError {}

/// Whether `path` names a text module by its extension.
pub fn is_wat_path(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "wat")
}

/// The byte bound of a module file: `max_module_bytes` for binary, [`WAT_TEXT_FACTOR`] times
/// that for a `.wat` file.
pub fn file_limit(path: &Path, max_module_bytes: usize) -> u64 {
    let binary = u64::try_from(max_module_bytes).unwrap_or(u64::MAX);
    if is_wat_path(path) {
        binary.saturating_mul(WAT_TEXT_FACTOR)
    } else {
        binary
    }
}

/// Compiles WebAssembly text read from `path`. The error names the file (line and column) and
/// is cut at [`files::MAX_QUOTED_BYTES`].
pub fn compile_text(bytes: &[u8], path: &Path) -> Result<Vec<u8>, String> {
    wat::Parser::new().parse_bytes(Some(path), bytes).map(|cow| cow.into_owned()).map_err(|e| files::quoted_display(&e))
}

/// Reads a module within the default module limit (see [`read_module_within`]).
pub fn read_module(path: &Path) -> Result<Vec<u8>, ModuleFileError> {
    read_module_within(path, DEFAULT_MAX_MODULE_BYTES)
}

/// Reads a module: `.wat` files (or any file starting with `(`) are compiled from text;
/// anything else (empty and random files included) is passed on as binary for the sandbox to
/// validate and reject. The file must be a regular file within [`file_limit`]; it is never
/// read past that bound.
pub fn read_module_within(path: &Path, max_module_bytes: usize) -> Result<Vec<u8>, ModuleFileError> {
    let bytes = files::read_limited(path, file_limit(path, max_module_bytes)).map_err(ModuleFileError::File)?;
    let is_text = is_wat_path(path) || bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'(');
    if !is_text {
        return Ok(bytes);
    }
    compile_text(&bytes, path).map_err(|e| ModuleFileError::Wat(path.to_path_buf(), e))
}
