//! Who published a package: `plugin.toml.minisig`, the minisign signature of the exact
//! `plugin.toml` bytes read, checked against the key the manifest names (`publisher`). The
//! manifest pins the module by its hash and every other file by `files`, so one signature
//! covers the whole package. A package without either is unsigned; one with only one of them
//! is refused.

use crate::files::{self, FileError};
use crate::signing::{PublicKey, SigningError, MAX_SIGNATURE_BYTES};
use cap_std::fs::Dir;
use std::fmt;
use std::path::{Path, PathBuf};

/// The signature file of a package: `plugin.toml` plus minisign's `.minisig`.
pub const SIGNATURE_FILE: &str = "plugin.toml.minisig";

/// Why a package's signature was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureRefusal {
    /// The signature file could not be read (not a regular file, too large, I/O).
    File(FileError),
    /// A signature is there but the manifest names no publisher key.
    NoPublisher(PathBuf),
    /// The manifest names a publisher but the signature is missing.
    Missing(PathBuf),
    /// The manifest's `publisher` is not a key.
    Key(SigningError),
    /// The signature does not match the manifest (it was altered after signing).
    Altered {
        /// The signature file.
        path: PathBuf,
        /// The publisher's key id.
        key: String,
    },
    /// The signature is malformed or by another key.
    Signature(PathBuf, SigningError),
}

impl fmt::Display for SignatureRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => e.fmt(f),
            Self::NoPublisher(path) => write!(
                f,
                "{} is there but plugin.toml names no `publisher` key to check it with: sign it with `tdm pack --key`",
                path.display()
            ),
            Self::Missing(path) => write!(
                f,
                "plugin.toml names a publisher, but its signature {} is missing: the package is incomplete or was altered",
                path.display()
            ),
            Self::Key(e) => write!(f, "plugin.toml `publisher`: {e}"),
            Self::Altered { path, key } => write!(
                f,
                "{} does not match plugin.toml: the manifest was altered after it was signed by {key}",
                path.display()
            ),
            Self::Signature(path, e) => write!(f, "{}: {e}", path.display()),
        }
    }
}

impl std::error::Error for SignatureRefusal {}

/// The verified publisher of the package opened as `root` (`dir` names it) whose manifest
/// names `publisher` and was read as `manifest_text`: `Some((key, signature text))` for a
/// signed package, `None` for an unsigned one (no `publisher`, no signature file).
pub fn verified_publisher(
    root: &Dir,
    dir: &Path,
    publisher: Option<&str>,
    manifest_text: &str,
) -> Result<Option<(PublicKey, String)>, SignatureRefusal> {
    let shown = dir.join(SIGNATURE_FILE);
    let signature = match files::open_regular_beneath(root, Path::new(SIGNATURE_FILE), dir, None) {
        Ok((file, size)) => {
            Some(files::read_opened(file, size, MAX_SIGNATURE_BYTES, &shown).map_err(SignatureRefusal::File)?)
        }
        Err(FileError::NotFound { .. }) => None,
        Err(e) => return Err(SignatureRefusal::File(e)),
    };
    match (publisher, signature) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(SignatureRefusal::NoPublisher(shown)),
        (Some(_), None) => Err(SignatureRefusal::Missing(shown)),
        (Some(key), Some(signature)) => {
            let key = PublicKey::parse(key).map_err(SignatureRefusal::Key)?;
            let text = String::from_utf8(signature).map_err(|_| {
                SignatureRefusal::Signature(shown.clone(), SigningError::SignatureFormat("not UTF-8".into()))
            })?;
            match key.verify(manifest_text.as_bytes(), &text) {
                Ok(_) => Ok(Some((key, text))),
                Err(SigningError::Mismatch) => Err(SignatureRefusal::Altered { path: shown, key: key.id() }),
                Err(e) => Err(SignatureRefusal::Signature(shown, e)),
            }
        }
    }
}
