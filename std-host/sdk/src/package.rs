//! Plugin packages and hubs: `plugin.toml` parsed strictly (unknown keys, a missing module, a
//! hash mismatch, a malformed permission and limits above the defaults are errors), and a hub
//! folder's `index.json`. Nothing here runs plugin code.

pub use crate::declared::{IntentInfo, MAX_DECLARED_INTENTS, MAX_INTENT_DESCRIPTION_BYTES, MAX_INTENT_NAME_BYTES};
use crate::files::{self, FileError};
use crate::module_file;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use contour_core::{Permission, Permissions, Policy};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The manifest file of a package.
pub const MANIFEST: &str = "plugin.toml";

/// Policy overrides a package may ask for: each at most the default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyOverrides {
    /// Linear memory limit in bytes.
    pub max_memory_bytes: Option<u64>,
    /// Fuel per intent.
    pub fuel_per_intent: Option<u64>,
    /// Deadline per intent in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Maximum response bytes.
    pub max_response_bytes: Option<u32>,
}

/// `plugin.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The plugin id (letters, digits, `-`, `_`, `.`).
    pub id: String,
    /// Its version.
    pub version: String,
    /// A display name.
    pub name: String,
    /// One paragraph on what it is.
    pub description: String,
    /// The module's path inside the package, under `dist/`.
    pub module: String,
    /// sha256 of the module, lower-case hex.
    pub sha256: String,
    /// The permissions it asks for.
    #[serde(default)]
    pub permissions: Vec<String>,
    /// The intents it offers.
    #[serde(default)]
    pub intents: Vec<IntentInfo>,
    /// Policy overrides within the defaults.
    #[serde(default)]
    pub policy: PolicyOverrides,
    /// The publisher's minisign public key (its base64 line): the package is signed, and
    /// `plugin.toml.minisig` must be this key's signature of `plugin.toml` (see
    /// [`crate::publisher`]).
    #[serde(default)]
    pub publisher: Option<String>,
    /// sha256 (lower-case hex) of every other file of the package by its path (`dist/...`):
    /// the module and manifest aside, a signed package holds exactly these files, so its
    /// signature covers them through this table.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

/// The most files and directories a package may hold.
pub const MAX_PACKAGE_ENTRIES: u64 = 10_000;

/// The most bytes a `plugin.toml` may have (a manifest is a few hundred bytes; this leaves room
/// for long descriptions, many intents and their schemas).
pub const MAX_MANIFEST_BYTES: u64 = 256 * 1024;

/// Why a package or hub was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageError {
    /// A folder could not be opened.
    Io(PathBuf, String),
    /// A file was not read: not a regular file, too large, or an I/O error.
    File(FileError),
    /// `plugin.toml` does not parse (unknown key, wrong type, missing field).
    Manifest(PathBuf, String),
    /// A field's value is not acceptable.
    Invalid(&'static str, String),
    /// The module file is missing.
    MissingModule(PathBuf),
    /// The module's hash is not the one declared.
    HashMismatch {
        /// Declared.
        expected: String,
        /// Found.
        actual: String,
    },
    /// A permission string does not parse.
    Permission(String),
    /// A policy override is above the default.
    LimitAboveDefault(&'static str, u64, u64),
    /// The package's signature is missing, malformed, by another key, or does not match.
    Signature(crate::publisher::SignatureRefusal),
    /// The hub's index does not parse or has an invalid entry.
    Hub(String),
    /// The hub lists no such plugin (or not at that version).
    NotInHub(String),
}

impl fmt::Display for PackageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(path, e) => write!(f, "cannot read {}: {e}", path.display()),
            Self::File(e) => e.fmt(f),
            Self::Manifest(path, e) => write!(f, "{} is not a valid manifest: {e}", path.display()),
            Self::Invalid(field, why) => write!(f, "plugin.toml `{field}`: {why}"),
            Self::MissingModule(path) => write!(f, "the module {} is missing", path.display()),
            Self::HashMismatch { expected, actual } => {
                write!(
                    f,
                    "module hash mismatch: plugin.toml says {expected}, the file is {actual}; refusing it. A \
                     publisher who rebuilt the module: run `tdm pack` again (it writes the hash and signs); \
                     an operator: the package was altered after it was made, do not install it"
                )
            }
            Self::Permission(e) => write!(f, "plugin.toml `permissions`: {e}"),
            Self::LimitAboveDefault(field, asked, default) => {
                write!(f, "plugin.toml `policy.{field}` = {asked} is above the default {default}")
            }
            Self::Signature(e) => write!(f, "package signature: {e}"),
            Self::Hub(e) | Self::NotInHub(e) => write!(f, "hub: {e}"),
        }
    }
}

impl std::error::Error for PackageError {}

/// A package's files read from disk once: the manifest (text and parsed, its fields checked)
/// and the module file's bytes with their sha256. The hash is not yet compared with anything:
/// [`Package::verify`] does that, on these same bytes.
#[derive(Debug, Clone)]
pub struct PackageFiles {
    /// The folder they were read from.
    pub dir: PathBuf,
    /// That folder, opened once: the manifest and module were read through it, and an install
    /// lists and copies the other files through it (never by path again).
    pub root: Arc<Dir>,
    /// `plugin.toml` as read.
    pub manifest_text: String,
    /// `plugin.toml` parsed.
    pub manifest: Manifest,
    /// The module file's bytes as read (text for a `.wat` module); shared, never copied, with
    /// the verified package's `module` when it is binary.
    pub module_file: Arc<Vec<u8>>,
    /// sha256 of `module_file`, lower-case hex.
    pub sha256: String,
    /// The publisher whose signature of `manifest_text` verified, with the signature's text
    /// (`None`: an unsigned package).
    pub publisher: Option<(crate::signing::PublicKey, String)>,
}

/// A package read from a folder and verified: manifest, module bytes, parsed permissions.
#[derive(Debug, Clone)]
pub struct Package {
    /// The folder it was read from.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// The module as binary WebAssembly, compiled from exactly the bytes hashed (for a binary
    /// module, the very buffer that was read and hashed).
    pub module: Arc<Vec<u8>>,
    /// The requested permissions, parsed.
    pub requested: Permissions,
    /// sha256 of the module file's bytes read (equal to the manifest's, lower-case hex).
    pub sha256: String,
    /// The files it was verified from (what an install writes into the workspace).
    pub files: PackageFiles,
}

impl Manifest {
    /// Parses `plugin.toml` text strictly (unknown keys are errors) and checks its fields;
    /// `path` names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, PackageError> {
        let manifest: Manifest =
            toml::from_str(text).map_err(|e| PackageError::Manifest(path.to_path_buf(), files::quoted(e.message())))?;
        manifest.check()?;
        Ok(manifest)
    }

    /// Checks the fields that name things: id and version are plain names, the module is a
    /// relative path under `dist/`, the intents follow [`IntentInfo::problem`]. Errors quote at most [`files::MAX_QUOTED_BYTES`].
    pub fn check(&self) -> Result<(), PackageError> {
        if !valid_id(&self.id) {
            return Err(PackageError::Invalid(
                "id",
                format!("`{}` is not letters, digits, `-`, `_` or `.`", files::quoted(&self.id)),
            ));
        }
        if !valid_id(&self.version) {
            return Err(PackageError::Invalid(
                "version",
                format!("`{}` is not a plain version", files::quoted(&self.version)),
            ));
        }
        if !module_path_ok(&self.module) {
            return Err(PackageError::Invalid(
                "module",
                format!("`{}` must be a relative path under dist/", files::quoted(&self.module)),
            ));
        }
        if self.intents.len() > MAX_DECLARED_INTENTS {
            return Err(PackageError::Invalid("intents", format!("more than {MAX_DECLARED_INTENTS} are declared")));
        }
        for (n, intent) in self.intents.iter().enumerate() {
            if let Some(why) = intent.problem(&self.intents[..n]) {
                return Err(PackageError::Invalid("intents", format!("entry {}: {why}", n + 1)));
            }
        }
        if let Some(key) = &self.publisher {
            let parsed =
                crate::signing::PublicKey::parse(key).map_err(|e| PackageError::Invalid("publisher", e.to_string()))?;
            if parsed.base64() != *key {
                return Err(PackageError::Invalid("publisher", "must be the key's base64 line alone".into()));
            }
        }
        if self.files.len() as u64 > MAX_PACKAGE_ENTRIES {
            return Err(PackageError::Invalid("files", "lists more files than a package may hold".into()));
        }
        for (path, hash) in &self.files {
            if !module_path_ok(path) || *path == self.module {
                return Err(PackageError::Invalid(
                    "files",
                    format!("`{}` must be a relative path under dist/, not the module", files::quoted(path)),
                ));
            }
            if !valid_sha256(hash) {
                return Err(PackageError::Invalid(
                    "files",
                    format!("the hash of `{}` is not 64 lower-case hex digits", files::quoted(path)),
                ));
            }
        }
        Ok(())
    }
}

fn module_path_ok(module: &str) -> bool {
    let relative = Path::new(module);
    relative.starts_with("dist") && relative.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Whether `id` is a plain name: 1 to 64 ASCII letters, digits, `-`, `_`, `.`, not starting
/// with `.`. Plugin ids and versions (from a manifest, a hub index or the state file) must be.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        && !id.starts_with('.')
}

/// Whether `hash` is a sha256 in lower-case hex (64 digits).
pub fn valid_sha256(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Reads a regular file inside the package, never following a symlink at any component (a
/// package holds regular files and directories only) and checking the handle is the file that
/// was looked at, so a name swapped for a link in between is refused, not followed.
fn read_package_file(root: &Dir, dir: &Path, relative: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let (file, size) = files::open_regular_beneath(root, relative, dir, None)?;
    files::read_opened(file, size, limit, &dir.join(relative))
}

/// Reads and parses `plugin.toml` in the package folder opened as `root` (`dir` names it): its
/// text and the manifest.
fn read_manifest_in(root: &Dir, dir: &Path) -> Result<(String, Manifest), PackageError> {
    let manifest_path = dir.join(MANIFEST);
    let bytes = read_package_file(root, dir, Path::new(MANIFEST), MAX_MANIFEST_BYTES).map_err(PackageError::File)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| PackageError::Manifest(manifest_path.clone(), "it is not UTF-8 text".into()))?;
    let manifest = Manifest::parse(&text, &manifest_path)?;
    Ok((text, manifest))
}

impl Manifest {
    /// Reads `DIR/plugin.toml` alone (bounded, checked like [`PackageFiles::read`] reads it),
    /// for listings that show what a package says about itself: its module is neither read nor
    /// hashed.
    pub fn read(dir: &Path) -> Result<Self, PackageError> {
        let root = Dir::open_ambient_dir(dir, ambient_authority())
            .map_err(|e| PackageError::Io(dir.to_path_buf(), e.to_string()))?;
        read_manifest_in(&root, dir).map(|(_, manifest)| manifest)
    }
}

impl PackageFiles {
    /// Reads `DIR/plugin.toml` (strictly: unknown keys are errors) and the module it names, each
    /// a regular file inside `dir` within its bound ([`MAX_MANIFEST_BYTES`]; the module limit, or
    /// twice it for `.wat`), size-checked before it is read.
    pub fn read(dir: &Path) -> Result<Self, PackageError> {
        let root = Dir::open_ambient_dir(dir, ambient_authority())
            .map_err(|e| PackageError::Io(dir.to_path_buf(), e.to_string()))?;
        Self::read_in(root, dir)
    }

    /// [`PackageFiles::read`] from the package folder already opened as `root`; `dir` names it.
    pub fn read_in(root: Dir, dir: &Path) -> Result<Self, PackageError> {
        Self::read_parts(root, dir, None, None::<fn(&Manifest, &[u8])>).map(|(files, _)| files)
    }

    /// [`PackageFiles::read`] that also hands a binary module's bytes and the manifest to
    /// `preload` while a second thread hashes those same bytes, so a launch's parse need not
    /// wait for the hash. What `preload` returns is vouched for by nothing: keep it only once
    /// these files have cleared every check, and drop it otherwise. `None` when `preload` is
    /// `None` or the module is text (`.wat`, compiled later from what was hashed), or when the
    /// files are refused before the hash.
    /// With `recorded` (an approval's digests), the module's SHA-256 is `recorded.sha256` when
    /// its BLAKE3 is `recorded.blake3`, and computed otherwise ([`RecordedDigests::sha256_of`]).
    pub fn read_preloading<T>(
        dir: &Path,
        recorded: Option<RecordedDigests<'_>>,
        preload: Option<impl FnOnce(&Manifest, &[u8]) -> T>,
    ) -> Result<(Self, Option<T>), PackageError> {
        let root = Dir::open_ambient_dir(dir, ambient_authority())
            .map_err(|e| PackageError::Io(dir.to_path_buf(), e.to_string()))?;
        Self::read_parts(root, dir, recorded, preload)
    }

    /// The one reader of a package's files: manifest, module, publisher, then the hash (beside
    /// `preload`, for a binary module).
    fn read_parts<T>(
        root: Dir,
        dir: &Path,
        recorded: Option<RecordedDigests<'_>>,
        preload: Option<impl FnOnce(&Manifest, &[u8]) -> T>,
    ) -> Result<(Self, Option<T>), PackageError> {
        let (manifest_text, manifest) = read_manifest_in(&root, dir)?;
        let relative = Path::new(&manifest.module);
        let limit = module_file::file_limit(relative, Policy::default().max_module_bytes);
        let module_file = match read_package_file(&root, dir, relative, limit) {
            Ok(bytes) => bytes,
            Err(FileError::NotFound { path }) => return Err(PackageError::MissingModule(path)),
            Err(e) => return Err(PackageError::File(e)),
        };
        let publisher = crate::publisher::verified_publisher(&root, dir, manifest.publisher.as_deref(), &manifest_text)
            .map_err(PackageError::Signature)?;
        let sha256_of = |bytes: &[u8]| match recorded {
            Some(recorded) => recorded.sha256_of(bytes),
            None => crate::intents::tool::sha256_hex(bytes),
        };
        let (sha256, preloaded) = match preload {
            Some(preload) if !module_file::is_wat_path(relative) => {
                let (sha256, preloaded) = hashed_while(&module_file, sha256_of, || preload(&manifest, &module_file));
                (sha256, Some(preloaded))
            }
            _ => (sha256_of(&module_file), None),
        };
        let module_file = Arc::new(module_file);
        let files = Self {
            dir: dir.to_path_buf(),
            root: Arc::new(root),
            manifest_text,
            manifest,
            module_file,
            sha256,
            publisher,
        };
        Ok((files, preloaded))
    }
}

/// `hash(bytes)`, computed on a second thread while `work` runs on this one; both on this
/// thread when no thread can be started. Hashing a 1.1 MiB module takes about as long as
/// wasmi's lazy parse of it, so a launch that does both side by side waits for one.
fn hashed_while<T>(bytes: &[u8], hash: impl Fn(&[u8]) -> String + Sync, work: impl FnOnce() -> T) -> (String, T) {
    let hash = &hash;
    std::thread::scope(|scope| {
        match std::thread::Builder::new().name("tdm-hash".into()).spawn_scoped(scope, move || hash(bytes)) {
            Ok(hashing) => {
                let done = work();
                // The hash cannot panic; were it to, it is computed again here rather than lost.
                (hashing.join().unwrap_or_else(|_| hash(bytes)), done)
            }
            Err(_) => (hash(bytes), work()),
        }
    })
}

/// Two digests of one module's bytes recorded together (an approval's): when the BLAKE3 of the
/// bytes read is `blake3`, their SHA-256 is `sha256`, so only the faster hash is computed.
#[derive(Debug, Clone, Copy)]
pub struct RecordedDigests<'a> {
    /// BLAKE3, lower-case hex.
    pub blake3: &'a str,
    /// The SHA-256 of the same bytes, lower-case hex.
    pub sha256: &'a str,
}

impl RecordedDigests<'_> {
    /// The SHA-256 of `bytes`: the recorded one when their BLAKE3 is the recorded one (the
    /// same bytes, so the same SHA-256), computed from `bytes` otherwise.
    pub fn sha256_of(&self, bytes: &[u8]) -> String {
        if blake3_hex(bytes) == self.blake3 {
            self.sha256.to_string()
        } else {
            crate::intents::tool::sha256_hex(bytes)
        }
    }
}

/// The BLAKE3 of `bytes`, lower-case hex.
pub fn blake3_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

impl Package {
    /// Reads and verifies the package in `dir`.
    pub fn read(dir: &Path) -> Result<Self, PackageError> {
        Self::verify(PackageFiles::read(dir)?)
    }

    /// Verifies files already read: the module's hash is the manifest's, a `.wat` module
    /// compiles (from these bytes), the permissions parse and the policy is within the defaults.
    pub fn verify(files: PackageFiles) -> Result<Self, PackageError> {
        let manifest = files.manifest.clone();
        if files.sha256 != manifest.sha256.to_ascii_lowercase() {
            return Err(PackageError::HashMismatch {
                expected: files::quoted(&manifest.sha256),
                actual: files.sha256.clone(),
            });
        }
        // A text module (`.wat`) is hashed as written and compiled to binary here.
        let module_path = files.dir.join(&manifest.module);
        let module = if module_file::is_wat_path(&module_path) {
            Arc::new(module_file::compile_text(&files.module_file, &module_path).map_err(|e| {
                let e = e.headline();
                PackageError::Invalid("module", format!("{} is not valid WebAssembly text: {e}", manifest.module))
            })?)
        } else {
            Arc::clone(&files.module_file)
        };
        let requested = Permissions::parse_all(manifest.permissions.iter().map(String::as_str))
            .map_err(|e| PackageError::Permission(files::quoted(&e.to_string())))?;
        manifest.policy.applied_to(Policy::default())?;
        Ok(Self { dir: files.dir.clone(), sha256: files.sha256.clone(), manifest, module, requested, files })
    }

    /// The policy this package runs under: the defaults with its overrides applied.
    pub fn policy(&self) -> Policy {
        self.manifest.policy()
    }
}

impl Manifest {
    /// The policy a package with this manifest runs under: the defaults with its overrides
    /// applied ([`Package::verify`] refuses a manifest whose overrides exceed them).
    pub fn policy(&self) -> Policy {
        self.policy.applied_to(Policy::default()).unwrap_or_default()
    }
}

impl PolicyOverrides {
    /// Whether the limits `self` asks for are each at most those `approved` asked for (an
    /// absent limit is the default, the most any package may have).
    pub fn within(&self, approved: &PolicyOverrides) -> bool {
        let (asked, allowed) = (self.applied_to(Policy::default()), approved.applied_to(Policy::default()));
        let (Ok(asked), Ok(allowed)) = (asked, allowed) else {
            return false;
        };
        asked.max_memory_bytes <= allowed.max_memory_bytes
            && asked.fuel_per_intent <= allowed.fuel_per_intent
            && asked.timeout_ms <= allowed.timeout_ms
            && asked.max_response_bytes <= allowed.max_response_bytes
    }

    /// Applies the overrides to `base`, refusing any above it.
    pub fn applied_to(&self, mut base: Policy) -> Result<Policy, PackageError> {
        let check = |field: &'static str, asked: Option<u64>, default: u64| match asked {
            Some(asked) if asked > default => Err(PackageError::LimitAboveDefault(field, asked, default)),
            Some(0) => Err(PackageError::Invalid("policy", format!("`{field}` must be greater than zero"))),
            other => Ok(other.unwrap_or(default)),
        };
        base.max_memory_bytes = check("max_memory_bytes", self.max_memory_bytes, base.max_memory_bytes)?;
        base.fuel_per_intent = check("fuel_per_intent", self.fuel_per_intent, base.fuel_per_intent)?;
        base.timeout_ms = check("timeout_ms", self.timeout_ms, base.timeout_ms)?;
        let response =
            check("max_response_bytes", self.max_response_bytes.map(u64::from), u64::from(base.max_response_bytes))?;
        base.max_response_bytes = u32::try_from(response).unwrap_or(base.max_response_bytes);
        Ok(base)
    }
}

/// Whether every permission in `requested` is in `approved`.
pub fn covered(requested: &Permissions, approved: &Permissions) -> bool {
    requested.iter().all(|p: &Permission| approved.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest_declaring(intents: &str) -> Result<Manifest, PackageError> {
        let text = format!(
            "id = \"p\"\nversion = \"1\"\nname = \"p\"\ndescription = \"d\"\nmodule = \"dist/m.wasm\"\nsha256 = \"{}\"\n{intents}",
            "0".repeat(64)
        );
        Manifest::parse(&text, Path::new("plugin.toml"))
    }

    /// An `[[intents]]` table; `name` and `description` are TOML string contents (escapes
    /// written as TOML spells them).
    fn intent(name: &str, description: &str) -> String {
        format!("[[intents]]\nname = \"{name}\"\ndescription = \"{description}\"\n")
    }

    #[test]
    fn recorded_digests_vouch_only_for_the_bytes_they_were_recorded_from() {
        let (approved, other) = (b"approved module".as_slice(), b"another module".as_slice());
        // A recorded SHA-256 that is not approved's own shows which branch answered.
        let marker = "ab".repeat(32);
        let recorded = RecordedDigests { blake3: &blake3_hex(approved), sha256: &marker };
        assert_eq!(recorded.sha256_of(approved), marker, "a BLAKE3 match answers the recorded SHA-256");
        assert_eq!(recorded.sha256_of(other), crate::intents::tool::sha256_hex(other), "other bytes are hashed");
        assert_eq!(blake3_hex(b"").len(), 64);
        assert!(valid_sha256(&blake3_hex(b"")), "lower-case hex, as the state file checks it");
    }

    #[test]
    fn declared_intents_follow_the_section_rules() {
        let fine = manifest_declaring(&(intent("greet", "says hello") + &intent("wave", ""))).unwrap();
        assert_eq!(fine.intents.len(), 2);
        let long_description = "d".repeat(MAX_INTENT_DESCRIPTION_BYTES + 1);
        let refused = [
            (intent("", "empty"), "entry 1: `name` must be 1 to 128 bytes"),
            (intent("a\\u0000b", "nul"), "control characters"),
            (intent("a\\u001b[2Jb", "escape"), "control characters"),
            (intent(&"n".repeat(129), "long"), "1 to 128 bytes"),
            (intent("go", "a") + &intent("go", "b"), "entry 2: the name is listed twice"),
            (intent("go", &long_description), "at most 1024 bytes"),
        ];
        for (declared, expected) in refused {
            let error = manifest_declaring(&declared).expect_err(&declared).to_string();
            assert!(error.starts_with("plugin.toml `intents`: "), "{error}");
            assert!(error.contains(expected), "{expected:?} in {error}");
        }
    }
}
