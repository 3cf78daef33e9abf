//! The publisher's side of signed packages and hubs, as library calls `tdm key generate`,
//! `tdm pack` and `tdm hub init`/`tdm hub publish` are thin layers over: a signing key pair
//! ([`generate_key`]), a package folder written from a module ([`pack`]: `plugin.toml` with the
//! module's and every asset's sha256, signed as `plugin.toml.minisig`), and a hub folder whose
//! `index.json` is signed by the hub's key ([`hub_init`], [`hub_publish`]). Everything is
//! written beside its destination first and renamed into place, so a failure leaves nothing
//! half-written; errors are data ([`PublishError`]), nothing here prints.
//!
//! Dates in a hub index are UTC, `YYYY-MM-DDTHH:MM:SSZ` ([`format_utc`], [`parse_utc`]).

mod hub;
mod pack;

/// UTC dates as a hub index writes them (one implementation for the writer and the reader).
pub use crate::utc::{format_utc, parse_utc};
pub use hub::{hub_init, hub_publish, HubReport, DEFAULT_EXPIRES_DAYS, MAX_EXPIRES_DAYS};
pub use pack::{pack, IntentFlag, IntentSource, PackOptions, PackReport, DEFAULT_VERSION};

use crate::files::{self, FileError};
use crate::intents::tool::sha256_hex;
use crate::package::PackageError;
use crate::package_copy::CopyError;
use crate::signing::{PublicKey, SecretKey, SigningError};
use std::fmt;
use std::path::{Path, PathBuf};

/// Why publishing (a key, a package, a hub) failed. Nothing half-written is left behind.
#[derive(Debug)]
pub enum PublishError {
    /// A key file could not be used (missing, too large, not minisign's format, encrypted).
    Key {
        /// The key file.
        path: PathBuf,
        /// Why.
        error: SigningError,
    },
    /// A public key (`NAME.pub`) was given where the secret key (`NAME.key`) signs.
    PublicKeyGiven(PathBuf),
    /// A key file to generate already exists (it is never overwritten).
    KeyExists(PathBuf),
    /// A file could not be read (the module, an asset, a hub's index).
    File(FileError),
    /// Writing or listing failed.
    Io {
        /// What was being written or listed.
        path: PathBuf,
        /// The I/O error's message.
        message: String,
    },
    /// The module is not one a package can hold: not WebAssembly, text that does not compile,
    /// rejected at load, a WASI command, or an unusable `tdm.intents` section.
    Module {
        /// The module file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// A value given is not acceptable (id, version, name, permission, intent, asset, days).
    Invalid {
        /// Which (`--id`, `--version`, ...).
        what: &'static str,
        /// Why.
        why: String,
    },
    /// The `--intent` flags and the module's `tdm.intents` section disagree; every difference.
    IntentsDisagree(String),
    /// Nothing declares an intent: the module has no `tdm.intents` section and no `--intent`
    /// was given.
    NoIntents(PathBuf),
    /// The folder to write exists and is not an empty folder.
    NotEmpty(PathBuf),
    /// The package just written does not read back as a valid package (the module changed
    /// while it was packed, or a limit of `plugin.toml` was passed).
    Written(PackageError),
    /// The package to publish is refused: it does not verify.
    Package(PackageError),
    /// The package to publish is not signed.
    Unsigned {
        /// The package folder.
        dir: PathBuf,
        /// What is missing.
        why: String,
    },
    /// The package's `plugin.toml.minisig` does not verify with the key its `plugin.toml`
    /// names.
    Signature {
        /// The signature file.
        path: PathBuf,
        /// Why.
        error: SigningError,
    },
    /// The package could not be copied into the hub.
    Copy(CopyError),
    /// The hub's `index.json` cannot be used (it does not parse, an entry is invalid, it
    /// would pass its size bound).
    HubIndex {
        /// The index file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The hub's `index.json.minisig` is missing or does not verify with the hub key given:
    /// nothing was changed or re-signed.
    HubSignature {
        /// The signature file.
        path: PathBuf,
        /// Why (`None`: there is no signature).
        error: Option<SigningError>,
    },
    /// The hub already lists this id at this version, with other contents.
    AlreadyPublished {
        /// The plugin id.
        id: String,
        /// The version.
        version: String,
    },
    /// The package's folder in the hub exists, though the index does not list it.
    Occupied(PathBuf),
    /// There is no hub in the folder (no `index.json`).
    NoHub(PathBuf),
}

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Key { path, error } => write!(f, "the key {}: {error}", path.display()),
            Self::PublicKeyGiven(path) => {
                write!(f, "{} is a public key; signing needs the secret key", path.display())
            }
            Self::KeyExists(path) => write!(f, "{} exists; a key file is never overwritten", path.display()),
            Self::File(e) => e.fmt(f),
            Self::Io { path, message } => write!(f, "cannot write {}: {message}", path.display()),
            Self::Module { path, why } => write!(f, "the module {}: {why}", path.display()),
            Self::Invalid { what, why } => write!(f, "{what}: {why}"),
            Self::IntentsDisagree(why) => {
                write!(f, "the --intent flags disagree with the module's tdm.intents section: {why}")
            }
            Self::NoIntents(path) => write!(
                f,
                "the module {} declares no intents (it has no tdm.intents section) and no --intent was given",
                path.display()
            ),
            Self::NotEmpty(path) => write!(f, "{} exists and is not an empty folder", path.display()),
            Self::Written(e) => write!(f, "the package written does not verify: {e}"),
            Self::Package(e) => write!(f, "the package is refused: {e}"),
            Self::Unsigned { dir, why } => write!(f, "the package {} is not signed: {why}", dir.display()),
            Self::Signature { path, error } => write!(f, "{}: {error}", path.display()),
            Self::Copy(e) => e.fmt(f),
            Self::HubIndex { path, why } => write!(f, "the hub index {}: {why}", path.display()),
            Self::HubSignature { path, error: None } => {
                write!(f, "the hub index is not signed: {} is missing; nothing was changed", path.display())
            }
            Self::HubSignature { path, error: Some(error) } => write!(
                f,
                "the hub index's signature {} does not verify with the hub key given ({error}); nothing was changed",
                path.display()
            ),
            Self::AlreadyPublished { id, version } => write!(
                f,
                "the hub already lists {id}@{version} with other contents; a published version is never replaced"
            ),
            Self::NoHub(dir) => write!(f, "{} is not a hub: it has no {}", dir.display(), crate::hub::HUB_INDEX),
            Self::Occupied(path) => {
                write!(f, "{} exists, though the hub's index does not list it; nothing was changed", path.display())
            }
        }
    }
}

impl std::error::Error for PublishError {}

impl PublishError {
    /// What to do about it, when there is something to say (a command or flag that exists).
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::PublicKeyGiven(path) => format!(
                "give the secret key made with it (`{}`), not the .pub file",
                path.with_extension("key").display()
            ),
            Self::Key { error: SigningError::File(FileError::NotFound { .. }), .. } => {
                "`tdm key generate NAME` makes NAME.key and NAME.pub".into()
            }
            Self::Key { .. } => "a key is NAME.key as `tdm key generate NAME` or `minisign -G -W` writes it".into(),
            Self::KeyExists(_) => "choose another NAME, or remove the old key files if they are not in use".into(),
            Self::Module { .. } => "`tdm inspect FILE` shows what is wrong with a module".into(),
            Self::IntentsDisagree(_) => {
                "leave out --intent (the section then declares the intents), or give exactly the section's intents".into()
            }
            Self::NoIntents(_) => {
                "give --intent NAME[=DESCRIPTION] for each intent, or declare them in the module (see docs/ABI.md 1a)".into()
            }
            Self::NotEmpty(_) => "give a folder that does not exist yet (it is created)".into(),
            Self::Written(PackageError::HashMismatch { .. } | PackageError::MissingModule(_)) => {
                "the module changed or went away while it was packed: wait for its build to finish, then run tdm pack again".into()
            }
            Self::Unsigned { .. } => "sign it: `tdm pack --key NAME.key ...` writes plugin.toml.minisig".into(),
            Self::Signature { .. }
            | Self::Package(PackageError::Signature(_))
            | Self::Copy(CopyError::Unlisted { .. }) => {
                "the package was changed after it was signed: pack and sign it again, or get it again from its publisher".into()
            }
            Self::HubSignature { error: None, .. } => {
                "`tdm hub init DIR --key HUB.key` makes a signed hub".into()
            }
            Self::HubSignature { .. } => "give --key the hub's own secret key (the one that signed its index)".into(),
            Self::AlreadyPublished { .. } => "publish it under a new version (`tdm pack --version ...`)".into(),
            Self::NoHub(_) => "`tdm hub init DIR --key HUB.key` makes a signed hub".into(),
            Self::Occupied(_) => "remove that folder (a publish that did not finish), then publish again".into(),
            _ => return None,
        })
    }
}

/// The two files [`generate_key`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedKey {
    /// `NAME.key`: the secret key (mode 0600 on Unix).
    pub secret: PathBuf,
    /// `NAME.pub`: the public key.
    pub public: PathBuf,
    /// The key id, as minisign prints it.
    pub key_id: String,
    /// The public key's base64 line (what a signed package's `publisher` holds).
    pub public_key: String,
}

/// `name` with `suffix` appended (`alice` -> `alice.key`); a `name` already ending in `.key`
/// or `.pub` loses that first, so `alice.key` names the same pair as `alice`.
fn key_file(name: &Path, suffix: &str) -> PathBuf {
    let base = match name.extension().and_then(|e| e.to_str()) {
        Some("key" | "pub") => name.with_extension(""),
        _ => name.to_path_buf(),
    };
    let mut path = base.into_os_string();
    path.push(suffix);
    PathBuf::from(path)
}

fn io_error(path: &Path, e: &std::io::Error) -> PublishError {
    PublishError::Io { path: path.to_path_buf(), message: e.to_string() }
}

/// Creates the file at `path`, which must not exist, writes `bytes` and syncs it; `private`
/// makes it readable by its owner only (mode 0600 on Unix, from its creation).
fn create_new(path: &Path, bytes: &[u8], private: bool) -> Result<(), PublishError> {
    let written = if private {
        files::output::write_new_private(path, bytes)
    } else {
        files::output::write_new(path, &mut &bytes[..]).map(drop)
    };
    written.map_err(|e| {
        let e = e.into_io();
        match e.kind() {
            std::io::ErrorKind::AlreadyExists => PublishError::KeyExists(path.to_path_buf()),
            _ => io_error(path, &e),
        }
    })
}

/// Generates a key pair and writes it as `NAME.key` (the secret key, unencrypted as
/// `minisign -G -W` writes it, mode 0600 on Unix) and `NAME.pub` (minisign's formats). Neither
/// file may exist: an existing key is never overwritten, and when the second file cannot be
/// written the first is removed.
pub fn generate_key(name: &Path) -> Result<GeneratedKey, PublishError> {
    let (secret_path, public_path) = (key_file(name, ".key"), key_file(name, ".pub"));
    for path in [&secret_path, &public_path] {
        if path.symlink_metadata().is_ok() {
            return Err(PublishError::KeyExists(path.clone()));
        }
    }
    let key = SecretKey::generate().map_err(|error| PublishError::Key { path: secret_path.clone(), error })?;
    let secret_text = key.file_text().map_err(|error| PublishError::Key { path: secret_path.clone(), error })?;
    create_new(&secret_path, secret_text.as_bytes(), true)?;
    if let Err(e) = create_new(&public_path, key.public().file_text().as_bytes(), false) {
        let _ = std::fs::remove_file(&secret_path);
        return Err(e);
    }
    Ok(GeneratedKey {
        secret: secret_path,
        public: public_path,
        key_id: key.public().id(),
        public_key: key.public().base64(),
    })
}

/// Reads the secret key at `path` (a minisign `.key` file, unencrypted); a public key given
/// instead is said as such.
pub fn read_secret_key(path: &Path) -> Result<SecretKey, PublishError> {
    SecretKey::read(path).map_err(|error| match error {
        SigningError::SecretKeyFormat(_) if PublicKey::read(path).is_ok() => {
            PublishError::PublicKeyGiven(path.to_path_buf())
        }
        error => PublishError::Key { path: path.to_path_buf(), error },
    })
}

/// Seconds since the Unix epoch, now (0 on a clock set before 1970).
fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A folder being written beside its destination: removed when dropped unless it was moved
/// into place ([`Staging::commit`]).
struct Staging {
    path: PathBuf,
    committed: bool,
}

impl Staging {
    /// Creates a new, empty folder beside `target` (in the same parent, so the final rename
    /// stays on one filesystem), named after it with a random tail; the parent is created
    /// when missing.
    fn beside(target: &Path) -> Result<Self, PublishError> {
        let parent = parent_of(target);
        std::fs::create_dir_all(&parent).map_err(|e| io_error(&parent, &e))?;
        let name = target.file_name().map_or_else(|| "package".into(), |n| n.to_string_lossy().into_owned());
        let mut random = [0u8; 8];
        getrandom::fill(&mut random)
            .map_err(|e| PublishError::Io { path: parent.clone(), message: format!("no random name: {e}") })?;
        let tail: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let path = parent.join(format!(".{name}.tdm-staging-{tail}"));
        std::fs::create_dir(&path).map_err(|e| io_error(&path, &e))?;
        Ok(Self { path, committed: false })
    }

    /// Moves the folder to `target`, which must not exist or be an empty folder.
    fn commit(mut self, target: &Path) -> Result<(), PublishError> {
        if target.symlink_metadata().is_ok() {
            // Fails unless it is an empty folder (checked before, and still so now).
            std::fs::remove_dir(target).map_err(|_| PublishError::NotEmpty(target.to_path_buf()))?;
        }
        std::fs::rename(&self.path, target).map_err(|e| io_error(target, &e))?;
        files::output::sync_dir(&parent_of(target));
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// The folder `path` is in (`.` for a bare name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Checks that `dir` does not exist or is an empty folder (not a link to one).
fn check_vacant(dir: &Path) -> Result<(), PublishError> {
    match dir.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(dir, &e)),
        Ok(metadata) if metadata.is_dir() => {
            let mut entries = std::fs::read_dir(dir).map_err(|e| io_error(dir, &e))?;
            match entries.next() {
                None => Ok(()),
                Some(_) => Err(PublishError::NotEmpty(dir.to_path_buf())),
            }
        }
        Ok(_) => Err(PublishError::NotEmpty(dir.to_path_buf())),
    }
}

#[cfg(test)]
mod tests;
