//! `tdm hub init` and `tdm hub publish`: a hub folder whose `index.json` (format 2: a `serial`
//! raised by every publish, an `expires` date) is signed by the hub's key as
//! `index.json.minisig`. A publish first checks the index's signature with the key given, so a
//! wrong key never re-signs someone else's hub; then it checks the package (valid, signed by
//! the key its `plugin.toml` names, holding exactly the files it lists), copies it into the
//! hub, and replaces the index and its signature.

use super::{check_vacant, format_utc, io_error, now, read_secret_key, sha256_hex, PublishError, Staging};
use crate::files::{self, FileError};
use crate::hub::{Hub, HubEntry, HubIndex, Price, HUB_INDEX, HUB_INDEX_SIGNATURE, MAX_HUB_INDEX_BYTES};
use crate::package::Package;
use crate::package_copy::copy_package;
use crate::publisher::SIGNATURE_FILE;
use crate::signing::{SecretKey, Signature, SigningError};
use std::path::{Path, PathBuf};

/// How many days a signed index stays trusted when no other number is given.
pub const DEFAULT_EXPIRES_DAYS: u32 = 365;
/// The most days a signed index may stay trusted (ten years).
pub const MAX_EXPIRES_DAYS: u32 = 3_653;

/// The index format this writes.
const WRITTEN_FORMAT: u32 = 2;

/// The lock a publish holds in the hub folder, so two publishes never interleave.
const LOCK_FILE: &str = ".tdm-hub.lock";

/// What [`hub_init`] or [`hub_publish`] left in the hub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubReport {
    /// The hub folder.
    pub dir: PathBuf,
    /// The index's serial now.
    pub serial: u64,
    /// When the index expires (UTC, `YYYY-MM-DDTHH:MM:SSZ`; empty for an index without one).
    pub expires: String,
    /// The id of the hub key that signed it.
    pub key_id: String,
    /// The entry published (`None` for `hub_init`).
    pub published: Option<HubEntry>,
    /// The package was already published with the same bytes: nothing was changed.
    pub unchanged: bool,
    /// How many entries the index lists.
    pub plugins: usize,
}

fn check_days(days: u32) -> Result<u64, PublishError> {
    if days == 0 || days > MAX_EXPIRES_DAYS {
        return Err(PublishError::Invalid {
            what: "--expires-days",
            why: format!("{days} is not a number of days from 1 to {MAX_EXPIRES_DAYS}"),
        });
    }
    Ok(u64::from(days) * 86_400)
}

/// The index's bytes (pretty JSON and a newline) and their signature by `key`.
fn signed(
    index: &HubIndex,
    key: &SecretKey,
    key_path: &Path,
    path: &Path,
    at: u64,
) -> Result<(Vec<u8>, String), PublishError> {
    let mut bytes = serde_json::to_vec_pretty(index)
        .map_err(|e| PublishError::HubIndex { path: path.to_path_buf(), why: e.to_string() })?;
    bytes.push(b'\n');
    if bytes.len() as u64 > MAX_HUB_INDEX_BYTES {
        return Err(PublishError::HubIndex {
            path: path.to_path_buf(),
            why: format!(
                "it would have {} bytes, more than the {MAX_HUB_INDEX_BYTES} a hub index may have",
                bytes.len()
            ),
        });
    }
    let comment = format!(
        "timestamp:{at}\tfile:{HUB_INDEX}\tserial:{}\texpires:{}",
        index.serial.unwrap_or(0),
        index.expires.as_deref().unwrap_or("")
    );
    let signature =
        key.sign(&bytes, &comment).map_err(|error| PublishError::Key { path: key_path.to_path_buf(), error })?;
    Ok((bytes, signature))
}

/// Creates the hub folder `dir` (it must not exist or be an empty folder) with an empty index
/// of format 2 (serial 1, expiring `expires_days` from now) signed by the secret key at
/// `hub_key`. The folder is written beside `dir` and renamed into place.
pub fn hub_init(dir: &Path, hub_key: &Path, expires_days: u32) -> Result<HubReport, PublishError> {
    hub_init_at(dir, hub_key, expires_days, now())
}

/// [`hub_init`] at the time `at` (seconds since the Unix epoch).
pub(super) fn hub_init_at(dir: &Path, hub_key: &Path, expires_days: u32, at: u64) -> Result<HubReport, PublishError> {
    let key = read_secret_key(hub_key)?;
    let lifetime = check_days(expires_days)?;
    check_vacant(dir)?;
    let expires = format_utc(at.saturating_add(lifetime));
    let index = HubIndex {
        version: Some(WRITTEN_FORMAT),
        serial: Some(1),
        expires: Some(expires.clone()),
        plugins: Vec::new(),
    };
    let (bytes, signature) = signed(&index, &key, hub_key, &dir.join(HUB_INDEX), at)?;
    let staging = Staging::beside(dir)?;
    for (name, contents) in [(HUB_INDEX, bytes.as_slice()), (HUB_INDEX_SIGNATURE, signature.as_bytes())] {
        let path = staging.path.join(name);
        files::output::write_new(&path, &mut &contents[..])
            .map_err(|e| PublishError::Io { path: path.clone(), message: e.to_string() })?;
    }
    staging.commit(dir)?;
    Ok(HubReport {
        dir: dir.to_path_buf(),
        serial: 1,
        expires,
        key_id: key.public().id(),
        published: None,
        unchanged: false,
        plugins: 0,
    })
}

/// Reads the hub's index and checks its signature with `key`: the index's bytes, parsed.
fn verified_index(dir: &Path, key: &SecretKey) -> Result<(Vec<u8>, HubIndex), PublishError> {
    let path = dir.join(HUB_INDEX);
    let bytes = files::read_limited_nofollow(&path, MAX_HUB_INDEX_BYTES).map_err(PublishError::File)?;
    let signature_path = dir.join(HUB_INDEX_SIGNATURE);
    let signature = match Signature::read(&signature_path) {
        Ok(signature) => signature,
        Err(SigningError::File(FileError::NotFound { .. })) => {
            return Err(PublishError::HubSignature { path: signature_path, error: None })
        }
        Err(error) => return Err(PublishError::HubSignature { path: signature_path, error: Some(error) }),
    };
    key.public()
        .verify(&bytes, &signature)
        .map_err(|error| PublishError::HubSignature { path: signature_path, error: Some(error) })?;
    // The entries are checked as a reader checks them.
    Hub::from_index(dir, &bytes).map_err(|e| PublishError::HubIndex { path: path.clone(), why: e.to_string() })?;
    let index: HubIndex = serde_json::from_slice(&bytes)
        .map_err(|e| PublishError::HubIndex { path, why: files::quoted(&e.to_string()) })?;
    Ok((bytes, index))
}

/// Writes `bytes` to `dir/name` through a temporary file renamed over it.
fn replace(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), PublishError> {
    let path = dir.join(name);
    let temporary = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let written = files::output::write_synced(&temporary, bytes)
        .map_err(|e| PublishError::Io { path: temporary.clone(), message: e.to_string() })
        .and_then(|()| std::fs::rename(&temporary, &path).map_err(|e| io_error(&path, &e)));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Publishes the package folder `package_dir` to the hub folder `dir`, signing the new index
/// with the secret key at `hub_key`; the index then expires `expires_days` from now.
///
/// Before anything changes: the current index's signature must verify with that key; the
/// package must read and verify ([`Package::read`]), name its `publisher`, and carry
/// `plugin.toml.minisig` by that key; its id and version must not be in the index yet (the very
/// same package again changes nothing); `DIR/ID-VERSION` must not exist. The package is copied
/// there ([`copy_package`]: regular files and folders only, within the package limits, exactly
/// the files its `[files]` lists with their hashes); the entry is
/// added (module and `plugin.toml` hashes, the publisher key, free), `serial` raised by one,
/// and `index.json` and its signature replaced, each through a temporary file.
pub fn hub_publish(
    dir: &Path,
    package_dir: &Path,
    hub_key: &Path,
    expires_days: u32,
) -> Result<HubReport, PublishError> {
    hub_publish_at(dir, package_dir, hub_key, expires_days, now())
}

/// [`hub_publish`] at the time `at` (seconds since the Unix epoch).
pub(super) fn hub_publish_at(
    dir: &Path,
    package_dir: &Path,
    hub_key: &Path,
    expires_days: u32,
    at: u64,
) -> Result<HubReport, PublishError> {
    let key = read_secret_key(hub_key)?;
    let lifetime = check_days(expires_days)?;
    let index_path = dir.join(HUB_INDEX);
    if !index_path.exists() {
        return Err(PublishError::NoHub(dir.to_path_buf()));
    }
    let lock_path = dir.join(LOCK_FILE);
    let lock = files::output::open_lock(&lock_path)
        .map_err(|e| PublishError::Io { path: lock_path.clone(), message: e.to_string() })?;
    lock.lock().map_err(|e| io_error(&lock_path, &e))?;
    let (old_bytes, mut index) = verified_index(dir, &key)?;

    // Reading verifies the module's hash and, for a signed package, its signature.
    let package = Package::read(package_dir).map_err(PublishError::Package)?;
    let Some((publisher, _)) = package.files.publisher.clone() else {
        return Err(PublishError::Unsigned {
            dir: package_dir.to_path_buf(),
            why: format!("its plugin.toml names no `publisher` key and it has no {SIGNATURE_FILE}"),
        });
    };
    let (id, version) = (package.manifest.id.clone(), package.manifest.version.clone());
    let manifest_sha256 = sha256_hex(package.files.manifest_text.as_bytes());
    let report = |index: &HubIndex, published: Option<HubEntry>, unchanged: bool| HubReport {
        dir: dir.to_path_buf(),
        serial: index.serial.unwrap_or(0),
        expires: index.expires.clone().unwrap_or_default(),
        key_id: key.public().id(),
        published,
        unchanged,
        plugins: index.plugins.len(),
    };
    if let Some(entry) = index.plugins.iter().find(|e| e.id == id && e.version == version) {
        let same = entry.sha256.eq_ignore_ascii_case(&package.sha256)
            && entry.manifest_sha256.as_deref() == Some(manifest_sha256.as_str())
            && entry.publisher.as_deref() == Some(publisher.base64().as_str());
        if same {
            return Ok(report(&index, Some(entry.clone()), true));
        }
        return Err(PublishError::AlreadyPublished { id, version });
    }
    let folder = format!("{id}-{version}");
    let target = dir.join(&folder);
    if target.symlink_metadata().is_ok() {
        return Err(PublishError::Occupied(target));
    }

    // The copy holds exactly the files `[files]` lists, with their hashes (checked on the bytes
    // written), and the manifest and signature verified; the signature is checked once more as
    // the hub will serve it.
    let staging = Staging::beside(&target)?;
    copy_package(&package, &staging.path).map_err(PublishError::Copy)?;
    let signature_path = staging.path.join(SIGNATURE_FILE);
    Signature::read(&signature_path)
        .and_then(|signature| publisher.verify(package.files.manifest_text.as_bytes(), &signature))
        .map_err(|error| PublishError::Signature { path: package_dir.join(SIGNATURE_FILE), error })?;

    let entry = HubEntry {
        id,
        version,
        sha256: package.sha256.clone(),
        price: Price::Free("free".into()),
        path: folder,
        publisher: Some(publisher.base64()),
        manifest_sha256: Some(manifest_sha256),
    };
    let serial = index.serial.unwrap_or(0).checked_add(1).ok_or_else(|| PublishError::HubIndex {
        path: index_path.clone(),
        why: "its serial cannot be raised any further".into(),
    })?;
    index.version = Some(WRITTEN_FORMAT);
    index.serial = Some(serial);
    index.expires = Some(format_utc(at.saturating_add(lifetime)));
    index.plugins.push(entry.clone());
    let (bytes, signature) = signed(&index, &key, hub_key, &index_path, at)?;

    staging.commit(&target)?;
    let written = replace(dir, HUB_INDEX, &bytes).and_then(|()| {
        replace(dir, HUB_INDEX_SIGNATURE, signature.as_bytes()).inspect_err(|_| {
            // The old index goes back beside its old signature, which still verifies it.
            let _ = replace(dir, HUB_INDEX, &old_bytes);
        })
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&target);
        return Err(e);
    }
    files::output::sync_dir(dir);
    drop(lock);
    Ok(report(&index, Some(entry), false))
}
