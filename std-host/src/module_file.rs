//! Reading a module from disk: binary `.wasm` as is, `.wat` text compiled with the `wat` crate.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a module file could not be read or compiled from text.
#[derive(Debug)]
pub enum ModuleFileError {
    /// The file could not be read.
    Io(PathBuf, std::io::Error),
    /// The `.wat` text does not parse.
    Wat(PathBuf, String),
}

impl fmt::Display for ModuleFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(path, e) => write!(f, "cannot read {}: {e}", path.display()),
            Self::Wat(path, e) => write!(f, "{} is not valid WebAssembly text: {e}", path.display()),
        }
    }
}

impl std::error::Error for ModuleFileError {}

/// Reads a module: `.wat` files (or any file starting with `(`) are compiled from text;
/// anything else (empty and random files included) is passed on as binary for the sandbox to
/// validate and reject.
pub fn read_module(path: &Path) -> Result<Vec<u8>, ModuleFileError> {
    let bytes = std::fs::read(path).map_err(|e| ModuleFileError::Io(path.to_path_buf(), e))?;
    let is_text = path.extension().is_some_and(|ext| ext == "wat")
        || bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'(');
    if !is_text {
        return Ok(bytes);
    }
    wat::parse_bytes(&bytes)
        .map(|cow| cow.into_owned())
        .map_err(|e| ModuleFileError::Wat(path.to_path_buf(), e.to_string()))
}
