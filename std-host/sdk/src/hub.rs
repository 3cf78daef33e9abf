//! Hubs: a hub folder's `index.json` read and checked (every entry a plain id and version, a
//! hash, a path inside the hub), the entry for `ID[@REQ]` chosen by semver, and the package an
//! entry names read from inside the hub and checked to be the one the index names.

use crate::files::{self, FileError};
use crate::package::{valid_id, valid_sha256, Package, PackageError, PackageFiles};
use crate::strict_map::first_repeat;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use semver::{Version, VersionReq};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// What a hub plugin costs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Price {
    /// `"free"`.
    Free(String),
    /// `{"amount": "4.99", "currency": "USD"}`.
    Paid {
        /// The amount, as text.
        amount: String,
        /// The currency code.
        currency: String,
    },
}

impl Price {
    /// Whether installing needs `--accept-price`.
    pub fn is_paid(&self) -> bool {
        !matches!(self, Self::Free(word) if word == "free")
    }
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Free(word) => f.write_str(word),
            Self::Paid { amount, currency } => write!(f, "{amount} {currency}"),
        }
    }
}

/// One entry of a hub's `index.json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HubEntry {
    /// Plugin id.
    pub id: String,
    /// Version.
    pub version: String,
    /// sha256 of the module.
    pub sha256: String,
    /// `"free"` or a price.
    pub price: Price,
    /// The package folder, relative to the hub.
    pub path: String,
    /// The publisher's minisign public key (its base64 line), as the hub recorded it when the
    /// package was published: the package's `plugin.toml.minisig` must be this key's. An
    /// index of format 1 has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// sha256 of the package's `plugin.toml`, lower-case hex: the manifest served must be the
    /// one the index names (a signed index pins the permissions, not only the module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_sha256: Option<String>,
}

impl HubEntry {
    /// What is wrong with this entry, if anything.
    fn problem(&self) -> Option<String> {
        if !valid_id(&self.id) {
            return Some("the id is not letters, digits, `-`, `_` or `.`".into());
        }
        if !valid_id(&self.version) {
            return Some("the version is not a plain version".into());
        }
        if !valid_sha256(&self.sha256.to_ascii_lowercase()) {
            return Some(format!("sha256 `{}` is not 64 hex digits", files::truncated(&self.sha256, 80)));
        }
        if self.manifest_sha256.as_ref().is_some_and(|hash| !valid_sha256(hash)) {
            return Some("manifest_sha256 is not 64 lower-case hex digits".into());
        }
        if let Some(Err(e)) = self.publisher.as_ref().map(|key| crate::signing::PublicKey::parse(key)) {
            return Some(format!("publisher: {e}"));
        }
        if !Path::new(&self.path).components().all(|c| matches!(c, Component::Normal(_))) || self.path.is_empty() {
            return Some(format!("path `{}` must be relative, inside the hub", files::truncated(&self.path, 200)));
        }
        None
    }
}

/// The index file of a hub folder.
pub const HUB_INDEX: &str = "index.json";
/// The most bytes a hub's `index.json` may have (about 20,000 entries).
pub const MAX_HUB_INDEX_BYTES: u64 = 4 * 1024 * 1024;

/// A hub folder (a local mirror) and its index.
#[derive(Debug, Clone)]
pub struct Hub {
    /// The hub folder.
    pub dir: PathBuf,
    /// Its entries.
    pub entries: Vec<HubEntry>,
    /// The index's format (`version`; absent is format 1).
    pub format: Option<u32>,
    /// The index's serial (format 2).
    pub serial: Option<u64>,
    /// The index's expiry (format 2).
    pub expires: Option<String>,
}

/// The newest format of a hub index this tdm reads: 2 adds `serial`, `expires` and each
/// entry's `publisher` and `manifest_sha256` (an index without `version` is format 1).
pub const HUB_INDEX_VERSION: u32 = 2;
/// The signature beside a hub's index: `index.json.minisig`, by the hub's key.
pub const HUB_INDEX_SIGNATURE: &str = "index.json.minisig";

/// A hub's `index.json`, as read and as `tdm hub publish` writes it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HubIndex {
    /// The format: 1 (or absent) or 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The index's own version (TUF's): every publish increases it; an index older than the
    /// last one seen from this hub is refused (rollback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<u64>,
    /// When the index stops being trusted, UTC, `YYYY-MM-DDTHH:MM:SSZ` (a hub re-signs
    /// before then; an expired index is refused, so a frozen mirror cannot serve old
    /// versions forever).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// The packages.
    pub plugins: Vec<HubEntry>,
}

impl Hub {
    /// Reads `DIR/index.json` (a regular file of at most [`MAX_HUB_INDEX_BYTES`]) and checks
    /// every entry: id and version are plain names, `sha256` is 64 hex digits, `path` is
    /// relative and inside the hub. A bad entry refuses the whole index, naming the entry.
    pub fn open(dir: &Path) -> Result<Self, PackageError> {
        let path = dir.join(HUB_INDEX);
        let bytes = files::read_limited(&path, MAX_HUB_INDEX_BYTES).map_err(PackageError::File)?;
        Self::from_index(dir, &bytes)
    }

    /// Parses and checks the bytes of the `index.json` of the hub folder `dir` (see [`Hub::open`]).
    pub fn from_index(dir: &Path, bytes: &[u8]) -> Result<Self, PackageError> {
        let path = dir.join(HUB_INDEX);
        let index: HubIndex = serde_json::from_slice(bytes)
            .map_err(|e| PackageError::Hub(format!("{}: {}", path.display(), files::quoted(&e.to_string()))))?;
        if let Some(version) = index.version.filter(|v| !(1..=HUB_INDEX_VERSION).contains(v)) {
            return Err(PackageError::Hub(format!(
                "{}: the index's format version is {version}, and this tdm reads versions 1 to \
                 {HUB_INDEX_VERSION}: update tdm, or ask the hub for an index of version {HUB_INDEX_VERSION}",
                path.display()
            )));
        }
        if let Some((first, again)) = first_repeat(index.plugins.iter().map(|e| (&e.id, &e.version))) {
            let entry = &index.plugins[again];
            return Err(PackageError::Hub(format!(
                "{}: entries {} and {} both list `{}@{}`; which one to install is not for tdm to guess: \
                 the hub must list each version once",
                path.display(),
                first + 1,
                again + 1,
                files::truncated(&entry.id, 80),
                files::truncated(&entry.version, 80)
            )));
        }
        for (n, entry) in index.plugins.iter().enumerate() {
            if let Some(why) = entry.problem() {
                return Err(PackageError::Hub(format!(
                    "{}: entry {} (`{}@{}`): {why}",
                    path.display(),
                    n + 1,
                    files::truncated(&entry.id, 80),
                    files::truncated(&entry.version, 80)
                )));
            }
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            entries: index.plugins,
            format: index.version,
            serial: index.serial,
            expires: index.expires,
        })
    }

    /// Finds `id` matching `requirement`: an exact version (`1.2.0`, or any version string
    /// listed as is), a semver requirement (`^1.2`, `~1.2.3`, `>=1, <2`; a bare `1.2` is
    /// `^1.2` as in cargo), or none: the highest semver version listed (the last listed when
    /// none of its versions is semver).
    pub fn find(&self, id: &str, requirement: Option<&str>) -> Result<&HubEntry, PackageError> {
        let listed = || self.entries.iter().filter(move |e| e.id == id);
        let not_found = || {
            PackageError::NotInHub(format!(
                "no plugin `{}`{} in {}",
                files::quoted(id),
                requirement.map_or(String::new(), |v| format!("@{}", files::quoted(v))),
                self.dir.display()
            ))
        };
        let highest = |matching: &dyn Fn(&Version) -> bool| {
            listed()
                .filter_map(|e| Version::parse(&e.version).ok().map(|v| (v, e)))
                .filter(|(v, _)| matching(v))
                .max_by(|a, b| a.0.cmp(&b.0))
                .map(|(_, e)| e)
        };
        let Some(requirement) = requirement else {
            return highest(&|_| true).or_else(|| listed().next_back()).ok_or_else(not_found);
        };
        if let Some(exact) = listed().find(|e| e.version == requirement) {
            return Ok(exact);
        }
        let req = VersionReq::parse(requirement).map_err(|e| {
            PackageError::NotInHub(format!(
                "`{}` is neither a listed version nor a semver requirement: {e}",
                files::quoted(requirement)
            ))
        })?;
        highest(&|v| req.matches(v)).ok_or_else(not_found)
    }

    /// Reads an entry's package, checking the hub's hash against the package's. The package
    /// folder is opened from the hub folder one name at a time, never through a symlink, so it
    /// is inside the hub whatever changes after the entry was checked.
    pub fn package(&self, entry: &HubEntry) -> Result<Package, PackageError> {
        let relative = Path::new(&entry.path);
        if !relative.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(PackageError::Hub(format!("entry path `{}` must be relative, inside the hub", entry.path)));
        }
        let hub = Dir::open_ambient_dir(&self.dir, ambient_authority())
            .map_err(|e| PackageError::Io(self.dir.clone(), e.to_string()))?;
        let dir = self.dir.join(relative);
        let root = files::open_dir_beneath(&hub, relative, &self.dir).map_err(|e| match e {
            FileError::NotAFile { kind, .. } => PackageError::Hub(format!(
                "entry `{}@{}`: {} is {kind}; a package folder must be a directory inside the hub",
                entry.id,
                entry.version,
                e.path().display()
            )),
            e => PackageError::File(e),
        })?;
        let package = Package::verify(PackageFiles::read_in(root, &dir)?)?;
        check_entry(&package, entry)?;
        Ok(package)
    }
}

/// Checks that `package` is the one `entry` names: id, version and module hash, and (when the
/// entry records them) the manifest's hash and the publisher's key, so a hub cannot pair an
/// entry with another package (mix-and-match).
pub fn check_entry(package: &Package, entry: &HubEntry) -> Result<(), PackageError> {
    if !package.manifest.sha256.eq_ignore_ascii_case(&entry.sha256)
        || package.manifest.id != entry.id
        || package.manifest.version != entry.version
    {
        return Err(PackageError::HashMismatch {
            expected: format!("{}@{} {}", entry.id, entry.version, entry.sha256),
            actual: format!("{}@{} {}", package.manifest.id, package.manifest.version, package.manifest.sha256),
        });
    }
    // Mix-and-match: the manifest and publisher the index names, not another package's
    // that shares the module.
    let mismatch = |what: &str| {
        PackageError::Hub(format!(
            "entry `{}@{}`: the package served is not the one the index names (its {what} differs): \
                 refusing a mixed-up or altered package",
            entry.id, entry.version
        ))
    };
    if let Some(expected) = &entry.manifest_sha256 {
        if crate::intents::tool::sha256_hex(package.files.manifest_text.as_bytes()) != *expected {
            return Err(mismatch("plugin.toml"));
        }
    }
    if let Some(expected) = &entry.publisher {
        if package.files.publisher.as_ref().map(|(key, _)| key.base64()).as_deref() != Some(expected.as_str()) {
            return Err(mismatch("publisher"));
        }
    }
    Ok(())
}
