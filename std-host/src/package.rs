//! Plugin packages and hubs: `plugin.toml` parsed strictly (unknown keys, a missing module, a
//! hash mismatch, a malformed permission and limits above the defaults are errors), and a hub
//! folder's `index.json`. Nothing here runs plugin code.

use contour_core::{Permission, Permissions, Policy};
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// The manifest file of a package.
pub const MANIFEST: &str = "plugin.toml";

/// One intent a plugin offers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntentInfo {
    /// The intent's method name.
    pub name: String,
    /// One line on what it does.
    pub description: String,
}

/// Policy overrides a package may ask for: each at most the default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
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
}

/// Why a package or hub was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageError {
    /// A file could not be read.
    Io(PathBuf, String),
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
    /// The hub's index does not parse, or has no such plugin.
    Hub(String),
}

impl fmt::Display for PackageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(path, e) => write!(f, "cannot read {}: {e}", path.display()),
            Self::Manifest(path, e) => write!(f, "{} is not a valid manifest: {e}", path.display()),
            Self::Invalid(field, why) => write!(f, "plugin.toml `{field}`: {why}"),
            Self::MissingModule(path) => write!(f, "the module {} is missing", path.display()),
            Self::HashMismatch { expected, actual } => {
                write!(f, "module hash mismatch: plugin.toml says {expected}, the file is {actual}; refusing a tampered package")
            }
            Self::Permission(e) => write!(f, "plugin.toml `permissions`: {e}"),
            Self::LimitAboveDefault(field, asked, default) => {
                write!(f, "plugin.toml `policy.{field}` = {asked} is above the default {default}")
            }
            Self::Hub(e) => write!(f, "hub: {e}"),
        }
    }
}

impl std::error::Error for PackageError {}

/// A package read from a folder and verified: manifest, module bytes, parsed permissions.
#[derive(Debug, Clone)]
pub struct Package {
    /// The folder it was read from.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// The module as binary WebAssembly (its file's hash verified).
    pub module: Vec<u8>,
    /// The requested permissions, parsed.
    pub requested: Permissions,
}

impl Manifest {
    /// Reads and parses `DIR/plugin.toml` (strictly: unknown keys are errors).
    pub fn read(dir: &Path) -> Result<Self, PackageError> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|e| PackageError::Io(path.clone(), e.to_string()))?;
        toml::from_str(&text).map_err(|e| PackageError::Manifest(path.clone(), e.message().to_string()))
    }
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        && !id.starts_with('.')
}

impl Package {
    /// Reads and verifies the package in `dir`.
    pub fn read(dir: &Path) -> Result<Self, PackageError> {
        let manifest = Manifest::read(dir)?;
        if !valid_id(&manifest.id) {
            return Err(PackageError::Invalid(
                "id",
                format!("`{}` is not letters, digits, `-`, `_` or `.`", manifest.id),
            ));
        }
        if !valid_id(&manifest.version) {
            return Err(PackageError::Invalid("version", format!("`{}` is not a plain version", manifest.version)));
        }
        let relative = Path::new(&manifest.module);
        let inside_dist =
            relative.starts_with("dist") && relative.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside_dist {
            return Err(PackageError::Invalid(
                "module",
                format!("`{}` must be a relative path under dist/", manifest.module),
            ));
        }
        let module_path = dir.join(relative);
        if !module_path.is_file() {
            return Err(PackageError::MissingModule(module_path));
        }
        let module = std::fs::read(&module_path).map_err(|e| PackageError::Io(module_path.clone(), e.to_string()))?;
        let actual = crate::intents::tool::sha256_hex(&module);
        if actual != manifest.sha256.to_ascii_lowercase() {
            return Err(PackageError::HashMismatch { expected: manifest.sha256.clone(), actual });
        }
        // A text module (`.wat`) is hashed as written and compiled to binary here.
        let module = if module_path.extension().is_some_and(|ext| ext == "wat") {
            wat::parse_bytes(&module).map(|cow| cow.into_owned()).map_err(|e| {
                PackageError::Invalid("module", format!("{} is not valid WebAssembly text: {e}", manifest.module))
            })?
        } else {
            module
        };
        let requested = Permissions::parse_all(manifest.permissions.iter().map(String::as_str))
            .map_err(|e| PackageError::Permission(e.to_string()))?;
        manifest.policy.applied_to(Policy::default())?;
        Ok(Self { dir: dir.to_path_buf(), manifest, module, requested })
    }

    /// The policy this package runs under: the defaults with its overrides applied.
    pub fn policy(&self) -> Policy {
        self.manifest.policy.applied_to(Policy::default()).unwrap_or_default()
    }
}

impl PolicyOverrides {
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

/// What a hub plugin costs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
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
}

/// A hub folder (a local mirror) and its index.
#[derive(Debug, Clone)]
pub struct Hub {
    /// The hub folder.
    pub dir: PathBuf,
    /// Its entries.
    pub entries: Vec<HubEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HubIndex {
    plugins: Vec<HubEntry>,
}

impl Hub {
    /// Reads `DIR/index.json`.
    pub fn open(dir: &Path) -> Result<Self, PackageError> {
        let path = dir.join("index.json");
        let text = std::fs::read_to_string(&path).map_err(|e| PackageError::Io(path.clone(), e.to_string()))?;
        let index: HubIndex =
            serde_json::from_str(&text).map_err(|e| PackageError::Hub(format!("{}: {e}", path.display())))?;
        Ok(Self { dir: dir.to_path_buf(), entries: index.plugins })
    }

    /// Finds `id` at `version` (or its last listed version).
    pub fn find(&self, id: &str, version: Option<&str>) -> Result<&HubEntry, PackageError> {
        self.entries.iter().rfind(|e| e.id == id && version.is_none_or(|v| e.version == v)).ok_or_else(|| {
            PackageError::Hub(format!(
                "no plugin `{id}`{} in {}",
                version.map_or(String::new(), |v| format!("@{v}")),
                self.dir.display()
            ))
        })
    }

    /// Reads an entry's package, checking the hub's hash against the package's.
    pub fn package(&self, entry: &HubEntry) -> Result<Package, PackageError> {
        let relative = Path::new(&entry.path);
        if !relative.components().all(|c| matches!(c, std::path::Component::Normal(_))) {
            return Err(PackageError::Hub(format!("entry path `{}` must be relative, inside the hub", entry.path)));
        }
        let package = Package::read(&self.dir.join(relative))?;
        if !package.manifest.sha256.eq_ignore_ascii_case(&entry.sha256)
            || package.manifest.id != entry.id
            || package.manifest.version != entry.version
        {
            return Err(PackageError::HashMismatch {
                expected: format!("{}@{} {}", entry.id, entry.version, entry.sha256),
                actual: format!("{}@{} {}", package.manifest.id, package.manifest.version, package.manifest.sha256),
            });
        }
        Ok(package)
    }
}

/// Whether every permission in `requested` is in `approved`.
pub fn covered(requested: &Permissions, approved: &Permissions) -> bool {
    requested.iter().all(|p: &Permission| approved.contains(p))
}
