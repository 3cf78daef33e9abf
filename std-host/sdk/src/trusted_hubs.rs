//! Hubs the operator trusts by key (`tdm hub add NAME LOCATION --key HUB.pub`): each index is
//! read with its signature (`index.json.minisig`) and accepted only when the hub's key signed
//! it, it has not expired, and it is not older than the newest index seen from that hub
//! (rollback), nor another index of the same serial (a replayed or forked index). The newest
//! serial seen is kept in the workspace state.

use crate::files::{self, FileError};
use crate::hub::{check_entry, Hub, HubEntry, HUB_INDEX, HUB_INDEX_SIGNATURE, MAX_HUB_INDEX_BYTES};
use crate::hub_fetch::{self, FetchError};
use crate::intents::tool::sha256_hex;
use crate::module_file;
use crate::package::{valid_id, PackageError};
use crate::package::{Manifest, Package, MANIFEST, MAX_MANIFEST_BYTES};
use crate::package_copy::MAX_PACKAGE_BYTES;
use crate::publisher::SIGNATURE_FILE;
use crate::signing::{PublicKey, SigningError, MAX_SIGNATURE_BYTES};
use crate::utc::{format_utc, parse_utc};
use crate::workspace::{now_ms, TrustedHub, Workspace, WorkspaceError};
use contour_core::Policy;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a hub's index was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubRefusal {
    /// `--hub` names no trusted hub, and unverified hubs were not allowed.
    NotTrusted(String),
    /// The index has no signature beside it.
    Unsigned(String),
    /// The signature is not the hub key's, or does not match the index.
    Signature(String, SigningError),
    /// The index lacks what a signed index must carry (format 2, serial, expiry) or does not parse.
    Format(String),
    /// The index expired.
    Expired {
        /// The hub.
        hub: String,
        /// Its `expires`.
        expires: String,
    },
    /// The index is older than one already seen (a rollback).
    Rollback {
        /// The hub.
        hub: String,
        /// The serial served.
        served: u64,
        /// The newest serial seen.
        seen: u64,
    },
    /// Another index with the same serial was seen before.
    Forked {
        /// The hub.
        hub: String,
        /// The serial.
        serial: u64,
    },
    /// `hub add` of a name already trusted, or `hub remove` of one that is not.
    Name(String),
}

impl fmt::Display for HubRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotTrusted(hub) => write!(
                f,
                "the hub {hub} is not a trusted hub: trust it with `tdm hub add NAME {hub} --key HUB.pub` and \
                 install with `--hub NAME`, or pass --allow-unsigned to install from it unverified"
            ),
            Self::Unsigned(hub) => {
                write!(f, "the hub {hub} serves no {HUB_INDEX_SIGNATURE}: its index is unsigned, refusing it")
            }
            Self::Signature(hub, e) => write!(f, "the index of the hub {hub} is refused: {e}"),
            Self::Format(why) => write!(f, "{why}"),
            Self::Expired { hub, expires } => write!(
                f,
                "the index of the hub {hub} expired at {expires}: the hub must sign a fresh one (`tdm hub publish` \
                 re-signs); an expired index may be a frozen mirror serving old versions"
            ),
            Self::Rollback { hub, served, seen } => write!(
                f,
                "the hub {hub} serves index serial {served}, older than serial {seen} already seen from it: \
                 refusing a rollback to an older index"
            ),
            Self::Forked { hub, serial } => write!(
                f,
                "the hub {hub} serves an index of serial {serial} that differs from the serial {serial} already \
                 seen: refusing it (a hub must raise the serial with every change)"
            ),
            Self::Name(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for HubRefusal {}

/// Why a trusted-hub operation failed.
#[derive(Debug)]
pub enum HubError {
    /// The hub or its index was refused.
    Refused(HubRefusal),
    /// A file of the hub could not be read, or the index has an invalid entry.
    Package(PackageError),
    /// The workspace state could not be read or written.
    Workspace(WorkspaceError),
    /// A file of an HTTP hub could not be fetched.
    Fetch(FetchError),
}

impl fmt::Display for HubError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused(e) => e.fmt(f),
            Self::Package(e) => e.fmt(f),
            Self::Workspace(e) => e.fmt(f),
            Self::Fetch(e) => write!(f, "hub: {e}"),
        }
    }
}

impl std::error::Error for HubError {}

impl From<HubRefusal> for HubError {
    fn from(e: HubRefusal) -> Self {
        Self::Refused(e)
    }
}

impl From<PackageError> for HubError {
    fn from(e: PackageError) -> Self {
        Self::Package(e)
    }
}

impl From<FetchError> for HubError {
    fn from(e: FetchError) -> Self {
        Self::Fetch(e)
    }
}

impl From<WorkspaceError> for HubError {
    fn from(e: WorkspaceError) -> Self {
        Self::Workspace(e)
    }
}

/// A hub opened for reading: its index, and the trusted name it was verified under.
#[derive(Debug, Clone)]
pub struct OpenedHub {
    /// The index read (and verified, when `trusted`).
    pub hub: Hub,
    /// The trusted hub's name; `None` for a location read unverified (`--allow-unsigned`).
    pub trusted: Option<String>,
    /// The id of the key that signed the index, when verified.
    pub signer: Option<String>,
    /// Where it is: a folder or a URL.
    pub location: String,
    /// How long one read of it may take (HTTP), in seconds.
    pub timeout_secs: u64,
}

impl OpenedHub {
    /// A hub folder read as it is, unverified.
    pub fn unverified(dir: &Path) -> Result<Self, HubError> {
        let location = dir.display().to_string();
        Self::read_unverified(&location, hub_fetch::DEFAULT_TIMEOUT_SECS)
    }

    fn read_unverified(location: &str, timeout_secs: u64) -> Result<Self, HubError> {
        let hub = if hub_fetch::is_url(location) {
            let deadline = hub_fetch::deadline(timeout_secs);
            let bytes =
                read_hub_file(location, HUB_INDEX, MAX_HUB_INDEX_BYTES, deadline, timeout_secs)?.ok_or_else(|| {
                    PackageError::File(FileError::NotFound { path: PathBuf::from(location).join(HUB_INDEX) })
                })?;
            Hub::from_index(Path::new(location), &bytes)?
        } else {
            Hub::open(Path::new(location))?
        };
        Ok(Self { hub, trusted: None, signer: None, location: location.to_string(), timeout_secs })
    }

    /// The package `entry` names, read and verified, and checked to be the one the entry
    /// names ([`crate::hub::check_entry`]). A folder hub's package is read in place; an HTTP
    /// hub's is fetched into `staging` (a new folder the caller removes afterwards), file by
    /// file within its bounds and the hub's timeout, then read from there.
    pub fn package(&self, entry: &HubEntry, staging: &Path) -> Result<Package, HubError> {
        if !hub_fetch::is_url(&self.location) {
            return Ok(self.hub.package(entry)?);
        }
        download(&self.location, entry, staging, self.timeout_secs)?;
        let package = Package::read(staging)?;
        check_entry(&package, entry)?;
        Ok(package)
    }
}

/// Fetches the package `entry` names from the HTTP hub at `location` into `staging`: its
/// manifest, its signature (when there is one), its module and every file `[files]` lists,
/// each within its bound and all within [`MAX_PACKAGE_BYTES`].
fn download(location: &str, entry: &HubEntry, staging: &Path, secs: u64) -> Result<(), HubError> {
    let deadline = hub_fetch::deadline(secs);
    let base = hub_fetch::join(location, &entry.path);
    let fetch = |name: &str, limit: u64| hub_fetch::get(&hub_fetch::join(&base, name), limit, deadline, secs);
    let missing = |name: &str| PackageError::File(FileError::NotFound { path: PathBuf::from(&base).join(name) });
    let manifest_bytes = fetch(MANIFEST, MAX_MANIFEST_BYTES)?.ok_or_else(|| missing(MANIFEST))?;
    let text = String::from_utf8(manifest_bytes.clone())
        .map_err(|_| PackageError::Manifest(PathBuf::from(&base).join(MANIFEST), "it is not UTF-8 text".into()))?;
    let manifest = Manifest::parse(&text, &PathBuf::from(&base).join(MANIFEST))?;
    let write = |name: &str, bytes: &[u8]| -> Result<(), HubError> {
        let path = name.split('/').fold(staging.to_path_buf(), |path, part| path.join(part));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| PackageError::Io(parent.to_path_buf(), e.to_string()))?;
        }
        files::output::write_new(&path, &mut &bytes[..]).map_err(|e| PackageError::Io(path.clone(), e.to_string()))?;
        Ok(())
    };
    write(MANIFEST, &manifest_bytes)?;
    if let Some(signature) = fetch(SIGNATURE_FILE, MAX_SIGNATURE_BYTES)? {
        write(SIGNATURE_FILE, &signature)?;
    }
    let module_limit = module_file::file_limit(Path::new(&manifest.module), Policy::default().max_module_bytes);
    let module = fetch(&manifest.module, module_limit)?.ok_or_else(|| missing(&manifest.module))?;
    let mut total = (manifest_bytes.len() + module.len()) as u64;
    write(&manifest.module, &module)?;
    for name in manifest.files.keys() {
        let left = MAX_PACKAGE_BYTES.saturating_sub(total);
        let bytes = fetch(name, left)?.ok_or_else(|| missing(name))?;
        total += bytes.len() as u64;
        write(name, &bytes)?;
    }
    Ok(())
}

/// Reads a file of a hub location (a folder, or a URL fetched before `deadline`) of at most
/// `limit` bytes; `Ok(None)` when it is not there.
fn read_hub_file(
    location: &str,
    name: &str,
    limit: u64,
    deadline: std::time::Instant,
    secs: u64,
) -> Result<Option<Vec<u8>>, HubError> {
    if hub_fetch::is_url(location) {
        return Ok(hub_fetch::get(&hub_fetch::join(location, name), limit, deadline, secs)?);
    }
    let path = Path::new(location).join(name);
    match files::read_limited(&path, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(FileError::NotFound { .. }) => Ok(None),
        Err(e) => Err(PackageError::File(e).into()),
    }
}

/// Reads and verifies a hub's index at `location` with `key`, as of `now_secs`; `seen` is the
/// newest (serial, index sha256) seen from it. Returns the hub and its (serial, sha256).
fn verified_index(
    name: &str,
    location: &str,
    key: &PublicKey,
    seen: Option<(u64, &str)>,
    (now_secs, timeout_secs): (u64, u64),
) -> Result<(Hub, u64, String), HubError> {
    let refused = HubError::Refused;
    let shown = files::quoted(name);
    let deadline = hub_fetch::deadline(timeout_secs);
    let index = read_hub_file(location, HUB_INDEX, MAX_HUB_INDEX_BYTES, deadline, timeout_secs)?
        .ok_or_else(|| PackageError::File(FileError::NotFound { path: Path::new(location).join(HUB_INDEX) }))?;
    let signature = read_hub_file(location, HUB_INDEX_SIGNATURE, MAX_SIGNATURE_BYTES, deadline, timeout_secs)?
        .ok_or_else(|| refused(HubRefusal::Unsigned(shown.clone())))?;
    let signature = String::from_utf8(signature).map_err(|_| {
        refused(HubRefusal::Signature(shown.clone(), SigningError::SignatureFormat("not UTF-8".into())))
    })?;
    // The signature first: nothing of an unverified index is parsed.
    key.verify(&index, &signature).map_err(|e| refused(HubRefusal::Signature(shown.clone(), e)))?;
    let hub = Hub::from_index(Path::new(location), &index)?;
    let format = |why: &str| refused(HubRefusal::Format(format!("the index of the hub {shown} {why}")));
    if hub.format != Some(2) {
        return Err(format("is not of format 2 (a signed index carries `version: 2`, `serial` and `expires`)"));
    }
    let serial = hub.serial.ok_or_else(|| format("has no `serial`"))?;
    let expires = hub.expires.clone().ok_or_else(|| format("has no `expires`"))?;
    let expires_secs =
        parse_utc(&expires).ok_or_else(|| format("has an `expires` that is not YYYY-MM-DDTHH:MM:SSZ"))?;
    if expires_secs <= now_secs {
        return Err(refused(HubRefusal::Expired { hub: shown, expires: files::quoted(&expires) }));
    }
    let sha = sha256_hex(&index);
    if let Some((seen_serial, seen_sha)) = seen {
        if serial < seen_serial {
            return Err(refused(HubRefusal::Rollback { hub: shown, served: serial, seen: seen_serial }));
        }
        if serial == seen_serial && !seen_sha.is_empty() && seen_sha != sha {
            return Err(refused(HubRefusal::Forked { hub: shown, serial }));
        }
    }
    Ok((hub, serial, sha))
}

/// The current time in seconds since the epoch.
fn now_secs() -> u64 {
    now_ms() / 1000
}

/// Trusts the hub at `location` under `name` with `key`: its index must verify now (signature,
/// format, expiry), and its serial becomes the floor for later reads. The location is kept as
/// given when it is a URL, as an absolute path when it is a folder.
pub fn add(
    workspace: &Workspace,
    name: &str,
    location: &str,
    key: &PublicKey,
    timeout_secs: u64,
) -> Result<TrustedHub, HubError> {
    if !valid_id(name) {
        return Err(HubError::Refused(HubRefusal::Name(format!(
            "hub name `{}` is not letters, digits, `-`, `_` or `.`",
            files::quoted(name)
        ))));
    }
    let location = if hub_fetch::is_url(location) {
        hub_fetch::check_location(location)?;
        location.to_string()
    } else {
        match std::path::absolute(location) {
            Ok(path) => path.display().to_string(),
            Err(e) => return Err(PackageError::Io(PathBuf::from(location), e.to_string()).into()),
        }
    };
    let (_, serial, sha) = verified_index(name, &location, key, None, (now_secs(), timeout_secs))?;
    let hub = TrustedHub { location, key: key.base64(), serial, index_sha256: sha, timeout_secs, added_ms: now_ms() };
    let added = hub.clone();
    let inserted = workspace.update(|state| {
        if state.hubs.contains_key(name) {
            return Ok(false);
        }
        state.hubs.insert(name.to_string(), hub);
        Ok(true)
    })?;
    if !inserted {
        return Err(HubError::Refused(HubRefusal::Name(format!(
            "a hub named `{name}` is trusted already: `tdm hub remove {name}` first to trust another key or location"
        ))));
    }
    Ok(added)
}

/// Stops trusting the hub `name` (installed plugins stay, and keep their approvals).
pub fn remove(workspace: &Workspace, name: &str) -> Result<TrustedHub, HubError> {
    workspace.update(|state| Ok(state.hubs.remove(name)))?.ok_or_else(|| {
        HubError::Refused(HubRefusal::Name(format!(
            "no hub named `{}` is trusted: `tdm hub list` shows them",
            files::quoted(name)
        )))
    })
}

/// Opens `hub` for reading: a trusted hub's name (its index verified, and the serial seen
/// recorded), or, with `allow_unverified`, a hub folder read as it is.
pub fn open(workspace: &Workspace, hub: &str, allow_unverified: bool) -> Result<OpenedHub, HubError> {
    let state = workspace.read_state()?;
    let Some(trusted) = state.hubs.get(hub) else {
        if !allow_unverified {
            return Err(HubError::Refused(HubRefusal::NotTrusted(files::quoted(hub))));
        }
        return OpenedHub::read_unverified(hub, hub_fetch::DEFAULT_TIMEOUT_SECS);
    };
    let key = PublicKey::parse(&trusted.key).map_err(|e| PackageError::Invalid("hub key", e.to_string()))?;
    let seen = (trusted.serial, trusted.index_sha256.as_str());
    let (opened, serial, sha) =
        verified_index(hub, &trusted.location, &key, Some(seen), (now_secs(), trusted.timeout_secs))?;
    if serial > trusted.serial || trusted.index_sha256.is_empty() {
        // Best effort: the index verified either way; the floor rises for the next read.
        let _ = workspace.update(|state| {
            if let Some(entry) = state.hubs.get_mut(hub).filter(|entry| serial >= entry.serial) {
                entry.serial = serial;
                entry.index_sha256 = sha;
            }
            Ok(())
        });
    }
    Ok(OpenedHub {
        hub: opened,
        trusted: Some(hub.to_string()),
        signer: Some(key.id()),
        location: trusted.location.clone(),
        timeout_secs: trusted.timeout_secs,
    })
}

/// `expires` for an index signed now, valid for `days`.
pub fn expiry_in(days: u64) -> String {
    format_utc(now_secs().saturating_add(days.saturating_mul(86_400)))
}

#[cfg(test)]
mod tests;
