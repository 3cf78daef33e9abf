//! `tdm pack`: a package folder written from a module file. The module is checked as `tdm run`
//! would load it, its intents come from its `tdm.intents` section or from `--intent` flags (both
//! given: they must agree), assets are copied under `dist/` and hashed into `plugin.toml`'s
//! `[files]`, and with a key `plugin.toml` is signed (`plugin.toml.minisig`). The folder is
//! written beside its destination, read back with [`Package::read`], and only then renamed
//! into place.

use super::{check_vacant, io_error, now, read_secret_key, sha256_hex, PublishError, Staging};
use crate::command::{inspect_module, ModuleKind};
use crate::declared::{Declared, IntentInfo};
use crate::files::{self, FileError};
use crate::module_file;
use crate::package::{valid_id, Package, MANIFEST, MAX_MANIFEST_BYTES};
use crate::package_copy::{MAX_PACKAGE_BYTES, MAX_PACKAGE_DEPTH, MAX_PACKAGE_ENTRIES};
use crate::signing::SIGNATURE_SUFFIX;
use contour_core::{Permissions, Policy};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The version a package gets when none is given.
pub const DEFAULT_VERSION: &str = "0.1.0";

/// The longest display name, in bytes.
const MAX_NAME_BYTES: usize = 128;

/// One `--intent NAME[=DESCRIPTION]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntentFlag {
    /// The intent's name.
    pub name: String,
    /// Its description, when given.
    pub description: Option<String>,
}

impl IntentFlag {
    /// Reads `NAME[=DESCRIPTION]`, split at the first `=`.
    pub fn parse(text: &str) -> Self {
        match text.split_once('=') {
            Some((name, description)) => Self { name: name.into(), description: Some(description.into()) },
            None => Self { name: text.into(), description: None },
        }
    }
}

/// What [`pack`] writes, from what.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackOptions {
    /// The module file (`.wasm`, or WebAssembly text named `.wat`, packed as text).
    pub module: PathBuf,
    /// The package folder to write: it must not exist or be an empty folder.
    pub out_dir: PathBuf,
    /// The plugin id (default: the module's file name without its extension).
    pub id: Option<String>,
    /// Its version, semver without build metadata (default: [`DEFAULT_VERSION`]).
    pub version: Option<String>,
    /// Its display name (default: the id).
    pub name: Option<String>,
    /// One paragraph on what it is (default: empty).
    pub description: Option<String>,
    /// The permissions it asks for, each as `tdm` grants them (`network:HOST`, ...).
    pub permissions: Vec<String>,
    /// `--intent` flags: the intents when the module has no `tdm.intents` section, else (when
    /// given) exactly the section's.
    pub intents: Vec<IntentFlag>,
    /// Files and folders copied under `dist/` (a folder as `dist/ITS-NAME/...`).
    pub assets: Vec<PathBuf>,
    /// The publisher's secret key (`NAME.key`): the package is signed with it.
    pub key: Option<PathBuf>,
}

impl PackOptions {
    /// Options packing `module` into `out_dir`, everything else by default.
    pub fn new(module: impl Into<PathBuf>, out_dir: impl Into<PathBuf>) -> Self {
        Self { module: module.into(), out_dir: out_dir.into(), ..Self::default() }
    }
}

/// Where a packed plugin's intents came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntentSource {
    /// The module's `tdm.intents` section (with its titles and schemas).
    Section,
    /// The `--intent` flags.
    Flags,
}

/// What [`pack`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackReport {
    /// The package folder.
    pub dir: PathBuf,
    /// The plugin id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Its display name.
    pub name: String,
    /// The module's path in the package (`dist/FILE`).
    pub module: String,
    /// sha256 of the module, lower-case hex.
    pub sha256: String,
    /// sha256 of the `plugin.toml` written (what a hub index pins).
    pub manifest_sha256: String,
    /// The intents declared, by name.
    pub intents: Vec<String>,
    /// Where they came from.
    pub intents_from: IntentSource,
    /// The assets, by path in the package, with their sha256.
    pub files: BTreeMap<String, String>,
    /// The signing key's id, when signed.
    pub key_id: Option<String>,
    /// `plugin.toml.minisig`, when signed.
    pub signature: Option<PathBuf>,
}

/// `plugin.toml` as written. Schemas are written as strings of JSON (which `plugin.toml`
/// reads too): TOML has no `null`, which a JSON Schema may hold (`"const": null`).
#[derive(Serialize)]
struct ManifestOut<'a> {
    id: &'a str,
    version: &'a str,
    name: &'a str,
    description: &'a str,
    module: &'a str,
    sha256: &'a str,
    permissions: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    publisher: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    files: &'a BTreeMap<String, String>,
    intents: Vec<IntentOut<'a>>,
}

#[derive(Serialize)]
struct IntentOut<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<String>,
}

impl<'a> IntentOut<'a> {
    fn of(intent: &'a IntentInfo) -> Self {
        Self {
            name: &intent.name,
            description: &intent.description,
            title: intent.title.as_deref(),
            params: intent.params.as_ref().map(|schema| schema.to_string()),
            result: intent.result.as_ref().map(|schema| schema.to_string()),
        }
    }
}

fn invalid(what: &'static str, why: impl Into<String>) -> PublishError {
    PublishError::Invalid { what, why: why.into() }
}

/// Checks a version: semver (`MAJOR.MINOR.PATCH[-PRE]`), without build metadata (`+...`, which
/// a package version, a plain name, may not hold).
fn check_version(version: &str) -> Result<(), PublishError> {
    let shown = files::truncated(version, 80);
    let parsed = semver::Version::parse(version).map_err(|e| {
        invalid("--version", format!("`{shown}` is not a semver version (MAJOR.MINOR.PATCH, e.g. 1.0.0): {e}"))
    })?;
    if !parsed.build.is_empty() || !valid_id(version) {
        return Err(invalid(
            "--version",
            format!("`{shown}` holds build metadata (`+...`) or is over 64 bytes; give MAJOR.MINOR.PATCH[-PRE]"),
        ));
    }
    Ok(())
}

/// The module's file name (UTF-8) and its stem.
fn module_names(module: &Path) -> Result<(String, String), PublishError> {
    let name = module.file_name().and_then(|n| n.to_str()).filter(|n| !n.is_empty());
    let Some(name) = name else {
        return Err(invalid("--module", format!("{} has no UTF-8 file name", module.display())));
    };
    let stem = Path::new(name).file_stem().and_then(|s| s.to_str()).unwrap_or(name);
    Ok((name.to_string(), stem.to_string()))
}

/// Reads the module (bounded) and checks it loads as a plugin: its bytes and what it declares.
fn read_module(path: &Path) -> Result<(Vec<u8>, Declared), PublishError> {
    let module_error = |why: String| PublishError::Module { path: path.to_path_buf(), why };
    let limit = module_file::file_limit(path, Policy::default().max_module_bytes);
    let bytes = files::read_limited(path, limit).map_err(PublishError::File)?;
    let binary = if module_file::is_wat_path(path) {
        module_file::compile_text(&bytes, path)
            .map_err(|e| module_error(format!("it is not valid WebAssembly text: {}", e.headline())))?
    } else if bytes.starts_with(b"\0asm") {
        bytes.clone()
    } else if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'(') {
        return Err(module_error(
            "it is WebAssembly text: name it .wat (a package's module is read by its extension)".into(),
        ));
    } else {
        return Err(module_error(
            "it is not a WebAssembly module (no `\\0asm` header); give a .wasm file, or WebAssembly text named .wat"
                .into(),
        ));
    };
    let (inspection, kind) =
        inspect_module(&binary, &Policy::default()).map_err(|failure| module_error(failure.message()))?;
    if kind == ModuleKind::Command {
        return Err(module_error(
            "it is a WASI command (it exports `_start`), not a plugin: `tdm exec` runs it, a package holds a plugin"
                .into(),
        ));
    }
    if !inspection.failures.is_empty() {
        let failures: Vec<String> =
            inspection.failures.iter().map(|f| format!("{}: {}", f.reason, f.message())).collect();
        return Err(module_error(format!("it would be rejected at load: {}", failures.join("; "))));
    }
    Ok((bytes, Declared::from_section(&inspection.intents_section)))
}

/// The intents to declare: the section's (checked against `flags` when any are given), else
/// the flags'.
fn intents(
    module: &Path,
    declared: Declared,
    flags: &[IntentFlag],
) -> Result<(Vec<IntentInfo>, IntentSource), PublishError> {
    match declared {
        Declared::Malformed(why) => Err(PublishError::Module {
            path: module.to_path_buf(),
            why: format!("its tdm.intents section is unusable ({why}); fix its intent declarations"),
        }),
        Declared::Section(section) => {
            if flags.is_empty() && section.is_empty() {
                return Err(PublishError::Module {
                    path: module.to_path_buf(),
                    why: "its tdm.intents section declares no intents, and a package declaring none cannot be called"
                        .into(),
                });
            }
            if !flags.is_empty() {
                agree(&section, flags)?;
            }
            Ok((section, IntentSource::Section))
        }
        Declared::Undeclared | Declared::Manifest(_) => {
            if flags.is_empty() {
                return Err(PublishError::NoIntents(module.to_path_buf()));
            }
            let mut intents: Vec<IntentInfo> = Vec::with_capacity(flags.len());
            for flag in flags {
                let intent = IntentInfo::named(&flag.name, flag.description.as_deref().unwrap_or(""));
                if let Some(why) = intent.problem(&intents) {
                    return Err(invalid("--intent", format!("`{}`: {why}", files::truncated(&flag.name, 128))));
                }
                intents.push(intent);
            }
            Ok((intents, IntentSource::Flags))
        }
    }
}

/// Checks that `flags` name exactly the section's intents, with its descriptions where given.
fn agree(section: &[IntentInfo], flags: &[IntentFlag]) -> Result<(), PublishError> {
    let quoted = |text: &str| files::truncated(text, 128);
    let mut differences = Vec::new();
    let mut seen = BTreeSet::new();
    for flag in flags {
        if !seen.insert(flag.name.as_str()) {
            differences.push(format!("--intent `{}` is given twice", quoted(&flag.name)));
            continue;
        }
        match section.iter().find(|intent| intent.name == flag.name) {
            None => differences.push(format!("the section declares no intent `{}`", quoted(&flag.name))),
            Some(intent) => match &flag.description {
                Some(description) if *description != intent.description => differences.push(format!(
                    "the section describes `{}` as \"{}\", not \"{}\"",
                    quoted(&flag.name),
                    quoted(&intent.description),
                    quoted(description)
                )),
                _ => {}
            },
        }
    }
    for intent in section.iter().filter(|intent| !seen.contains(intent.name.as_str())) {
        differences.push(format!("the section also declares `{}`, which no --intent names", quoted(&intent.name)));
    }
    if differences.is_empty() {
        Ok(())
    } else {
        Err(PublishError::IntentsDisagree(differences.join("; ")))
    }
}

/// How much of the package's bounds the files written so far use.
struct Budget {
    bytes: u64,
    entries: u64,
}

impl Budget {
    fn take(&mut self, bytes: u64) -> Result<(), PublishError> {
        self.entries += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        if self.entries > MAX_PACKAGE_ENTRIES {
            return Err(invalid("--asset", format!("a package holds at most {MAX_PACKAGE_ENTRIES} files and folders")));
        }
        if self.bytes > MAX_PACKAGE_BYTES {
            return Err(invalid("--asset", format!("a package holds at most {MAX_PACKAGE_BYTES} bytes in all")));
        }
        Ok(())
    }
}

/// Copies the asset `source` to `relative` (`dist/...`) in the staging folder `to`, hashing
/// every file into `hashes`. The path given is followed when it is a link (`top`); inside a
/// folder a link, FIFO, socket or device is refused (a package holds regular files and folders).
fn copy_asset(
    source: &Path,
    relative: &str,
    to: &Path,
    depth: usize,
    hashes: &mut BTreeMap<String, String>,
    budget: &mut Budget,
) -> Result<(), PublishError> {
    let top = depth == 0;
    let metadata = if top { source.metadata() } else { source.symlink_metadata() };
    let metadata = metadata.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => PublishError::File(FileError::NotFound { path: source.to_path_buf() }),
        _ => io_error(source, &e),
    })?;
    let destination = to.join(relative);
    if metadata.is_dir() {
        // `dist` is one level; the asset folder and its folders below it.
        if depth + 2 > MAX_PACKAGE_DEPTH {
            return Err(invalid(
                "--asset",
                format!("{} nests more than {MAX_PACKAGE_DEPTH} folders deep", source.display()),
            ));
        }
        budget.take(0)?;
        std::fs::create_dir(&destination).map_err(|e| io_error(&destination, &e))?;
        let mut names = Vec::new();
        for entry in std::fs::read_dir(source).map_err(|e| io_error(source, &e))? {
            let name = entry.map_err(|e| io_error(source, &e))?.file_name();
            let Some(text) = name.to_str() else {
                return Err(invalid(
                    "--asset",
                    format!("{} has a name that is not UTF-8", source.join(&name).display()),
                ));
            };
            names.push(text.to_string());
            if names.len() as u64 > MAX_PACKAGE_ENTRIES {
                return Err(invalid(
                    "--asset",
                    format!("a package holds at most {MAX_PACKAGE_ENTRIES} files and folders"),
                ));
            }
        }
        names.sort();
        for name in names {
            copy_asset(&source.join(&name), &format!("{relative}/{name}"), to, depth + 1, hashes, budget)?;
        }
        return Ok(());
    }
    if !metadata.is_file() {
        let kind = files::FileKind::of(metadata.file_type()).map_or("not a regular file".into(), |k| k.to_string());
        return Err(invalid(
            "--asset",
            format!("{} is {kind}; a package holds regular files and folders only", source.display()),
        ));
    }
    let room = MAX_PACKAGE_BYTES.saturating_sub(budget.bytes);
    let read = if top { files::read_limited(source, room) } else { files::read_limited_nofollow(source, room) };
    let bytes = read.map_err(PublishError::File)?;
    budget.take(bytes.len() as u64)?;
    files::output::write_new(&destination, &mut bytes.as_slice())
        .map_err(|e| PublishError::Io { path: destination.clone(), message: e.to_string() })?;
    hashes.insert(relative.to_string(), sha256_hex(&bytes));
    Ok(())
}

/// Writes the package described by `options` into a new folder and returns what it holds.
///
/// Defaults: the id is the module's file name without its extension, the version
/// [`DEFAULT_VERSION`], the name the id, the description empty. The id must be a plain name
/// ([`valid_id`]), the version semver without build metadata, each permission one `tdm`
/// parses; the module must load as a plugin. The folder (`options.out_dir`, created with its
/// parents) must not exist or be empty; the package is written beside it and moved there only
/// once it reads back as a valid package ([`Package::read`]) whose signature verifies.
pub fn pack(options: &PackOptions) -> Result<PackReport, PublishError> {
    let key = options.key.as_deref().map(read_secret_key).transpose()?;
    let (module_name, stem) = module_names(&options.module)?;
    let id = options.id.clone().unwrap_or(stem);
    if !valid_id(&id) {
        let why = if options.id.is_some() { "it" } else { "the module's file name without its extension" };
        return Err(invalid(
            "--id",
            format!(
                "`{}` ({why}) is not a plain id: 1 to 64 letters, digits, `-`, `_` or `.`, not starting with `.`",
                files::truncated(&id, 80)
            ),
        ));
    }
    let version = options.version.clone().unwrap_or_else(|| DEFAULT_VERSION.to_string());
    check_version(&version)?;
    let name = options.name.clone().unwrap_or_else(|| id.clone());
    if name.is_empty() || name.len() > MAX_NAME_BYTES || name.chars().any(char::is_control) {
        return Err(invalid("--name", format!("a name is 1 to {MAX_NAME_BYTES} bytes without control characters")));
    }
    let description = options.description.clone().unwrap_or_default();
    Permissions::parse_all(options.permissions.iter().map(String::as_str))
        .map_err(|e| invalid("--permission", files::quoted(&e.to_string())))?;
    let mut permissions: Vec<String> = Vec::new();
    for permission in &options.permissions {
        if !permissions.contains(permission) {
            permissions.push(permission.clone());
        }
    }
    check_vacant(&options.out_dir)?;
    let (module_bytes, declared) = read_module(&options.module)?;
    let (intents, intents_from) = intents(&options.module, declared, &options.intents)?;

    let staging = Staging::beside(&options.out_dir)?;
    let dist = staging.path.join("dist");
    std::fs::create_dir(&dist).map_err(|e| io_error(&dist, &e))?;
    let module = format!("dist/{module_name}");
    let module_path = staging.path.join(&module);
    files::output::write_new(&module_path, &mut module_bytes.as_slice())
        .map_err(|e| PublishError::Io { path: module_path.clone(), message: e.to_string() })?;
    let sha256 = sha256_hex(&module_bytes);
    let mut budget = Budget { bytes: module_bytes.len() as u64, entries: 2 };
    let mut hashes = BTreeMap::new();
    let mut taken = BTreeSet::from([module.clone()]);
    for asset in &options.assets {
        let asset_name = asset.file_name().and_then(|n| n.to_str()).filter(|n| *n != "..");
        let Some(asset_name) = asset_name else {
            return Err(invalid("--asset", format!("{} has no UTF-8 file name to copy it as", asset.display())));
        };
        let relative = format!("dist/{asset_name}");
        if !taken.insert(relative.clone()) {
            return Err(invalid(
                "--asset",
                format!("{} would be {relative}, which the module or another --asset already is", asset.display()),
            ));
        }
        copy_asset(asset, &relative, &staging.path, 0, &mut hashes, &mut budget)?;
    }

    let publisher = key.as_ref().map(|key| key.public().base64());
    let manifest = ManifestOut {
        id: &id,
        version: &version,
        name: &name,
        description: &description,
        module: &module,
        sha256: &sha256,
        permissions: &permissions,
        publisher,
        files: &hashes,
        intents: intents.iter().map(IntentOut::of).collect(),
    };
    let text = toml::to_string(&manifest).map_err(|e| invalid("plugin.toml", e.to_string()))?;
    if text.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(invalid(
            "plugin.toml",
            format!("it would have {} bytes, more than {MAX_MANIFEST_BYTES}: shorten the description", text.len()),
        ));
    }
    let manifest_path = staging.path.join(MANIFEST);
    files::output::write_new(&manifest_path, &mut text.as_bytes())
        .map_err(|e| PublishError::Io { path: manifest_path.clone(), message: e.to_string() })?;
    let signature_name = format!("{MANIFEST}{SIGNATURE_SUFFIX}");
    if let (Some(key), Some(path)) = (&key, &options.key) {
        let comment = format!("timestamp:{}\tfile:{MANIFEST}\tid:{id}\tversion:{version}", now());
        let signature =
            key.sign(text.as_bytes(), &comment).map_err(|error| PublishError::Key { path: path.clone(), error })?;
        let signature_path = staging.path.join(&signature_name);
        files::output::write_new(&signature_path, &mut signature.as_bytes())
            .map_err(|e| PublishError::Io { path: signature_path.clone(), message: e.to_string() })?;
    }

    let package = Package::read(&staging.path).map_err(PublishError::Written)?;
    if package.files.manifest_text != text || package.manifest.intents != intents || package.sha256 != sha256 {
        return Err(PublishError::Written(crate::package::PackageError::Invalid(
            "intents",
            "plugin.toml did not read back as it was written".into(),
        )));
    }
    // Reading it back verified the signature against the key plugin.toml names: it must be
    // this key's.
    if let Some(key) = &key {
        let path = options.out_dir.join(&signature_name);
        match &package.files.publisher {
            Some((signer, _)) if signer == key.public() => {}
            _ => return Err(PublishError::Signature { path, error: crate::signing::SigningError::Mismatch }),
        }
    }
    staging.commit(&options.out_dir)?;
    Ok(PackReport {
        dir: options.out_dir.clone(),
        id,
        version,
        name,
        module,
        sha256,
        manifest_sha256: sha256_hex(text.as_bytes()),
        intents: intents.iter().map(|intent| intent.name.clone()).collect(),
        intents_from,
        files: hashes,
        key_id: key.as_ref().map(|key| key.public().id()),
        signature: key.is_some().then(|| options.out_dir.join(signature_name)),
    })
}
