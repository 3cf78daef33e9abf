//! Where a user's workspace lives (state, vault, context, audit log): the folder an embedder or
//! `tdm`'s `--workspace DIR` (or `$TDM_WORKSPACE`, which clap reads for it) names, else `tdm` in
//! the platform's data folder ([`default_workspace`]).

use std::path::{Path, PathBuf};

/// The workspace folder's file names.
pub const AUDIT_FILE: &str = "audit.jsonl";
/// The vault file in the workspace.
pub const VAULT_FILE: &str = "vault.json";
/// The operator context file in the workspace.
pub const CONTEXT_FILE: &str = "context.json";

/// Resolves the workspace folder (it may not exist yet): `flag` when given and not empty, else
/// [`default_workspace`].
pub fn workspace_dir(flag: Option<&Path>) -> PathBuf {
    match flag.filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) => dir.to_path_buf(),
        None => default_workspace(),
    }
}

/// `tdm` in the platform's data folder: `$XDG_DATA_HOME/tdm` or `~/.local/share/tdm` on Linux,
/// `~/Library/Application Support/tdm` on macOS, `%APPDATA%\tdm` on Windows; `.tdm` in the
/// current folder only where the platform has none (no home folder at all).
pub fn default_workspace() -> PathBuf {
    dirs::data_dir().map_or_else(|| PathBuf::from(".tdm"), |data| data.join("tdm"))
}

/// The state file in the workspace.
pub const STATE_FILE: &str = "state.json";
/// The lock guarding the state file.
pub const LOCK_FILE: &str = "state.lock";
/// The terminal REPL's history of entries.
pub const HISTORY_FILE: &str = "repl_history";
/// Installed packages live under this folder.
pub const PACKAGES_DIR: &str = "packages";
/// The most bytes the state file may have (an entry is under 2 KiB: thousands of plugins).
pub const MAX_STATE_BYTES: u64 = 16 * 1024 * 1024;

use crate::files::{self, quoted, FileError};
use crate::package::{valid_id, valid_sha256, IntentInfo, PolicyOverrides};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// An operator's approval: bound to the module hash and the exact permission set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// The module hash approved.
    pub sha256: String,
    /// The BLAKE3 (lower-case hex) of the same module bytes, recorded with `sha256`: the launch
    /// check hashes the bytes it read with BLAKE3 (faster) and, when they match this, knows
    /// their SHA-256 is `sha256`. An approval recorded before it has none: the launch check
    /// computes the SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blake3: Option<String>,
    /// The permissions granted.
    pub permissions: Vec<String>,
    /// The intents approved: the names plugin.toml declared when it was approved (an approval
    /// recorded before intents were bound has none, so it covers no declared intent).
    #[serde(default)]
    pub intents: Vec<String>,
    /// What each approved intent declared (title, description, schemas), as
    /// [`IntentInfo::digest`] by name: a changed declaration voids the approval. An approval
    /// recorded before declarations were bound has none: it covers only intents that declare
    /// no title and no schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declarations: Option<BTreeMap<String, String>>,
    /// The limits approved: plugin.toml's `[policy]` when it was approved (an approval recorded
    /// before limits were bound has none: the defaults, the most a package may ask for).
    #[serde(default)]
    pub limits: PolicyOverrides,
    /// The publisher approved: the minisign public key (base64) whose signature the package
    /// carried, `None` for an unsigned package. A package signed by another key (or unsigned
    /// now) does not hold this approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// When, in ms since the epoch.
    pub at_ms: u64,
}

impl Approval {
    /// Whether every intent in `declared` was approved as declared now (a narrower set still
    /// is).
    pub fn covers_intents(&self, declared: &[IntentInfo]) -> bool {
        declared.iter().all(|intent| {
            self.intents.contains(&intent.name)
                && match &self.declarations {
                    Some(digests) => digests.get(&intent.name) == Some(&intent.digest()),
                    None => intent.title.is_none() && intent.params.is_none() && intent.result.is_none(),
                }
        })
    }
}

/// Figures of a plugin's last call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LastCall {
    /// The intent.
    pub method: String,
    /// `completed` or `failed`.
    pub status: String,
    /// The `blockedReason` of a failure.
    pub blocked_reason: Option<String>,
    /// Fuel used.
    pub fuel_used: u64,
    /// Peak linear memory in bytes.
    pub peak_memory_bytes: u64,
    /// Wall-clock time in microseconds.
    pub duration_us: u64,
    /// When, in ms since the epoch.
    pub at_ms: u64,
}

/// One installed plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstalledPlugin {
    /// Installed version.
    pub version: String,
    /// Module hash at install.
    pub sha256: String,
    /// The package folder, relative to the workspace: always `packages/ID/VERSION` (checked
    /// when the state is read).
    pub path: String,
    /// The permissions the package asks for.
    pub requested: Vec<String>,
    /// The price accepted at install (`free` when free).
    pub price: String,
    /// The operator's approval, if any.
    pub approval: Option<Approval>,
    /// Set by `tdm revoke`.
    pub revoked: bool,
    /// The last call's figures.
    pub last_call: Option<LastCall>,
    /// The approval an install of another package voided, kept so `tdm approve` can show what
    /// changed since; cleared by the next approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voided: Option<Approval>,
    /// The publisher's key (base64) whose signature verified at install; `None`: installed
    /// unsigned (`--allow-unsigned`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// The trusted hub it was installed from, by name (`tdm outdated` and `tdm upgrade` look
    /// there); `None` for a folder or an untrusted hub location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub: Option<String>,
}

/// A hub the operator trusts (`tdm hub add`): where it is, the key its index must be signed
/// by, and the newest index seen from it (an older one is a rollback and is refused).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustedHub {
    /// A folder path or an `https://` URL (`http://` for loopback only).
    pub location: String,
    /// The hub's minisign public key (base64).
    pub key: String,
    /// The `serial` of the newest index seen.
    #[serde(default)]
    pub serial: u64,
    /// sha256 of that index's bytes: another index with the same serial is refused too.
    #[serde(default)]
    pub index_sha256: String,
    /// How long one read of an HTTP hub may take, in seconds.
    #[serde(default = "default_hub_timeout")]
    pub timeout_secs: u64,
    /// When it was added, in ms since the epoch.
    pub added_ms: u64,
}

/// The workspace state file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// Format version ([`STATE_VERSION`]; any other is refused, never read as this one).
    pub version: u32,
    /// Installed plugins by id (an id listed twice is refused).
    #[serde(deserialize_with = "unique_plugins")]
    pub plugins: BTreeMap<String, InstalledPlugin>,
    /// Trusted hubs by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "unique_hubs")]
    pub hubs: BTreeMap<String, TrustedHub>,
}

/// The format version of the state file this tdm reads and writes.
pub const STATE_VERSION: u32 = 1;

fn default_hub_timeout() -> u64 {
    crate::hub_fetch::DEFAULT_TIMEOUT_SECS
}

fn unique_hubs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, TrustedHub>, D::Error> {
    crate::strict_map::unique_keys(d, "hub")
}

fn unique_plugins<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, InstalledPlugin>, D::Error> {
    crate::strict_map::unique_keys(d, "plugin")
}

/// A plugin's lifecycle state, as `tdm workspace status` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginState {
    /// Installed, pending approval.
    Installed,
    /// Approved for its current hash and permissions.
    Approved,
    /// Approval withdrawn.
    Revoked,
    /// An approval exists but no longer matches the module on disk or its permissions.
    StaleApproval,
    /// An approval exists but the package (manifest or module) cannot be read: not approved.
    Unverifiable,
    /// The module in the workspace is not the one installed (its hash changed on disk): never
    /// approved, and approving cannot fix it; reinstalling does.
    Modified,
}

/// What reading an installed plugin's package found, for [`InstalledPlugin::state`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleCheck<'a> {
    /// The manifest and module file were read.
    Read {
        /// The sha256 of the module bytes read, lower-case hex.
        sha256: &'a str,
        /// The intent names the manifest declares.
        intents: &'a [IntentInfo],
        /// The limits the manifest asks for.
        limits: &'a PolicyOverrides,
        /// The publisher whose signature verified (its key, base64), `None` when unsigned.
        publisher: Option<&'a str>,
    },
    /// The manifest or the module could not be read: nothing is verified, nothing is approved.
    Unreadable,
}

impl PluginState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Installed => "installed",
            Self::Approved => "approved",
            Self::Revoked => "revoked",
            Self::StaleApproval => "stale approval",
            Self::Unverifiable => "unverifiable",
            Self::Modified => "modified",
        }
    }
}

impl InstalledPlugin {
    /// The lifecycle state, given what reading the package found now. Fails closed: approved
    /// only when the module bytes were read and their hash is the approved one (and the one
    /// installed), every requested permission was approved, every declared intent too, and no
    /// limit is above the approved one.
    pub fn state(&self, on_disk: ModuleCheck<'_>) -> PluginState {
        if self.revoked {
            return PluginState::Revoked;
        }
        if matches!(on_disk, ModuleCheck::Read { sha256, .. } if sha256 != self.sha256) {
            return PluginState::Modified;
        }
        let Some(approval) = &self.approval else {
            return PluginState::Installed;
        };
        let ModuleCheck::Read { sha256: hash_on_disk, intents, limits, publisher } = on_disk else {
            return PluginState::Unverifiable;
        };
        let hash_ok = approval.sha256 == self.sha256 && hash_on_disk == approval.sha256;
        let perms_ok = self.requested.iter().all(|p| approval.permissions.contains(p));
        let publisher_ok = approval.publisher.as_deref() == publisher && self.publisher.as_deref() == publisher;
        if hash_ok && perms_ok && publisher_ok && approval.covers_intents(intents) && limits.within(&approval.limits) {
            PluginState::Approved
        } else {
            PluginState::StaleApproval
        }
    }

    /// The package folder relative to the workspace: `packages/ID/VERSION`, derived from the
    /// (validated) id and version, never taken from the file.
    pub fn relative_dir(id: &str, version: &str) -> String {
        format!("{PACKAGES_DIR}/{id}/{version}")
    }

    /// What is wrong with the entry `id`, if anything: every value later used as a path or
    /// compared as a hash is checked exactly like a manifest's.
    fn problem(&self, id: &str) -> Option<String> {
        if !valid_id(id) {
            return Some("the id is not letters, digits, `-`, `_` or `.`".into());
        }
        if !valid_id(&self.version) {
            return Some(format!("version `{}` is not a plain version", quoted(&self.version)));
        }
        if self.path != Self::relative_dir(id, &self.version) {
            return Some(format!("path `{}` is not `{}`", quoted(&self.path), Self::relative_dir(id, &self.version)));
        }
        if !valid_sha256(&self.sha256) {
            return Some(format!("sha256 `{}` is not 64 lower-case hex digits", quoted(&self.sha256)));
        }
        let keys = [self.publisher.as_ref(), self.approval.as_ref().and_then(|a| a.publisher.as_ref())];
        if let Some(e) = keys.into_iter().flatten().find_map(|key| crate::signing::PublicKey::parse(key).err()) {
            return Some(format!("a publisher key: {e}"));
        }
        if let Some(approval) = &self.approval {
            if !valid_sha256(&approval.sha256) {
                return Some(format!(
                    "the approval's sha256 `{}` is not 64 lower-case hex digits",
                    quoted(&approval.sha256)
                ));
            }
            if let Some(blake3) = approval.blake3.as_deref().filter(|hash| !valid_sha256(hash)) {
                return Some(format!("the approval's blake3 `{}` is not 64 lower-case hex digits", quoted(blake3)));
            }
        }
        None
    }
}

impl State {
    /// The state of a workspace with nothing installed (no state file yet).
    pub fn empty() -> Self {
        Self { version: STATE_VERSION, plugins: BTreeMap::new(), hubs: BTreeMap::new() }
    }

    /// Parses the bytes of a state file and checks every entry; `path` names the file in errors.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Self, WorkspaceError> {
        let state: State = serde_json::from_slice(bytes).map_err(|e| {
            WorkspaceError::CorruptState(path.to_path_buf(), format!("it does not parse: {}", quoted(&e.to_string())))
        })?;
        match state.problem() {
            Some(why) => Err(WorkspaceError::CorruptState(path.to_path_buf(), why)),
            None => Ok(state),
        }
    }

    /// What is wrong with the state, named: an unknown format version, or the first bad entry
    /// (see [`InstalledPlugin`]); `None` when the state is sound.
    fn problem(&self) -> Option<String> {
        if self.version != STATE_VERSION {
            return Some(format!(
                "its format version is {}, and this tdm reads version {STATE_VERSION} only (a newer or older \
                 tdm wrote it): use the tdm that wrote it, or move the file away and install again",
                self.version
            ));
        }
        let plugin = self.plugins.iter().find_map(|(id, plugin)| {
            plugin.problem(id).map(|why| format!("entry `{}`: {why}", files::truncated(id, 80)))
        });
        plugin.or_else(|| {
            self.hubs.iter().find_map(|(name, hub)| {
                let why = if !valid_id(name) {
                    Some("the name is not letters, digits, `-`, `_` or `.`".to_string())
                } else {
                    crate::signing::PublicKey::parse(&hub.key).err().map(|e| format!("its key: {e}"))
                };
                why.map(|why| format!("hub `{}`: {why}", files::truncated(name, 80)))
            })
        })
    }
}

/// Why a workspace operation failed.
#[derive(Debug)]
pub enum WorkspaceError {
    /// I/O on a workspace file.
    Io(PathBuf, std::io::Error),
    /// The state file does not parse or holds an invalid entry (named); it is left as it is.
    CorruptState(PathBuf, String),
    /// No such plugin installed.
    NotInstalled(String),
    /// The change would make the state file larger than [`MAX_STATE_BYTES`]; nothing was
    /// written.
    StateTooLarge(PathBuf, u64),
}

impl fmt::Display for WorkspaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(path, e) => write!(f, "{}: {e}", path.display()),
            Self::CorruptState(path, e) => write!(
                f,
                "the workspace state {} is unusable ({e}); it was left untouched: repair or move it away",
                path.display()
            ),
            Self::NotInstalled(id) => write!(f, "no plugin `{id}` is installed in this workspace"),
            Self::StateTooLarge(path, size) => write!(
                f,
                "the workspace state {} would grow to {size} bytes, over its {MAX_STATE_BYTES}-byte limit; it was left as it was",
                path.display()
            ),
        }
    }
}

impl std::error::Error for WorkspaceError {}

/// A workspace folder: state, packages, vault, context, audit log.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The folder.
    pub dir: PathBuf,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Workspace {
    /// The workspace at `dir` as it is, for commands that only read it or change a plugin that
    /// must already be installed: nothing is created (a missing folder reads as an empty
    /// workspace, so a mistyped `--workspace` leaves no folder behind).
    pub fn existing(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The workspace at `dir`, created if missing (`tdm install`).
    pub fn open(dir: PathBuf) -> Result<Self, WorkspaceError> {
        std::fs::create_dir_all(dir.join(PACKAGES_DIR)).map_err(|e| WorkspaceError::Io(dir.clone(), e))?;
        Ok(Self { dir })
    }

    /// The state file's path.
    pub fn state_path(&self) -> PathBuf {
        self.dir.join(STATE_FILE)
    }

    /// Reads the state (an absent file is an empty state) without taking the lock: a regular
    /// file of at most [`MAX_STATE_BYTES`], every entry checked.
    pub fn read_state(&self) -> Result<State, WorkspaceError> {
        let path = self.state_path();
        let bytes = match files::read_limited_nofollow(&path, MAX_STATE_BYTES) {
            Ok(bytes) => bytes,
            Err(FileError::NotFound { .. }) => return Ok(State::empty()),
            Err(FileError::Io { kind, message, .. }) => {
                return Err(WorkspaceError::Io(path, std::io::Error::new(kind, message)))
            }
            Err(e) => return Err(WorkspaceError::CorruptState(path, e.to_string())),
        };
        State::parse(&bytes, &path)
    }

    /// Runs `change` on the state under the workspace lock and writes the result atomically
    /// (write a temporary file, fsync, rename over the state, fsync the folder). Two `tdm`
    /// processes never interleave; a process killed at any point leaves the old or the new
    /// state, never a half-written one. A state that does not parse is never overwritten.
    pub fn update<T>(&self, change: impl FnOnce(&mut State) -> Result<T, WorkspaceError>) -> Result<T, WorkspaceError> {
        if !self.dir.is_dir() {
            // No workspace yet: nothing is installed, so a change to a plugin fails (`not
            // installed`) before any folder is created for it.
            let mut state = State::empty();
            let result = change(&mut state)?;
            Self::open(self.dir.clone())?;
            let _lock = self.lock()?;
            if self.state_path().exists() {
                return Err(WorkspaceError::Io(
                    self.dir.clone(),
                    std::io::Error::other("another tdm created this workspace meanwhile; run the command again"),
                ));
            }
            self.write_state(&state)?;
            return Ok(result);
        }
        let lock = self.lock()?;
        let mut state = self.read_state()?;
        let result = change(&mut state)?;
        self.write_state(&state)?;
        drop(lock);
        Ok(result)
    }

    /// Takes the workspace lock (waiting for another tdm process that holds it).
    fn lock(&self) -> Result<std::fs::File, WorkspaceError> {
        let lock_path = self.dir.join(LOCK_FILE);
        // Opened non-blocking (a FIFO planted here fails, never waits); `lock` still waits for
        // another tdm process, as it should.
        let lock =
            files::output::open_lock(&lock_path).map_err(|e| WorkspaceError::Io(lock_path.clone(), e.into_io()))?;
        lock.lock().map_err(|e| WorkspaceError::Io(lock_path.clone(), e))?;
        Ok(lock)
    }

    fn write_state(&self, state: &State) -> Result<(), WorkspaceError> {
        let path = self.state_path();
        let tmp = self.dir.join(format!("{STATE_FILE}.tmp-{}", std::process::id()));
        let io = |e| WorkspaceError::Io(tmp.clone(), e);
        let bytes = serde_json::to_vec_pretty(state).map_err(|e| io(std::io::Error::other(e)))?;
        if bytes.len() as u64 > MAX_STATE_BYTES {
            // Never write a state the reader would refuse: the workspace would be stuck.
            return Err(WorkspaceError::StateTooLarge(path, bytes.len() as u64));
        }
        let written = files::output::write_synced(&tmp, &bytes).map_err(|e| e.into_io());
        // A full disk fails here: the state stays as it was, and no half-written copy is left.
        let renamed = written
            .map_err(io)
            .and_then(|()| std::fs::rename(&tmp, &path).map_err(|e| WorkspaceError::Io(path.clone(), e)));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        renamed?;
        files::output::sync_dir(&self.dir);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_over_its_limit_is_never_written() {
        let tmp = tempfile::tempdir().unwrap();
        let workspace = Workspace::open(tmp.path().join("ws")).unwrap();
        let entry = |price: String| InstalledPlugin {
            version: "1".into(),
            sha256: "0".repeat(64),
            path: InstalledPlugin::relative_dir("p", "1"),
            requested: Vec::new(),
            price,
            approval: None,
            revoked: false,
            last_call: None,
            voided: None,
            publisher: None,
            hub: None,
        };
        workspace.update(|state| Ok(state.plugins.insert("p".into(), entry("free".into())))).unwrap();
        let before = std::fs::read(workspace.state_path()).unwrap();
        let huge = "x".repeat(MAX_STATE_BYTES as usize);
        let refused = workspace.update(|state| Ok(state.plugins.insert("q".into(), entry(huge))));
        assert!(matches!(refused, Err(WorkspaceError::StateTooLarge(..))), "{refused:?}");
        assert_eq!(std::fs::read(workspace.state_path()).unwrap(), before, "the state is as it was");
        assert_eq!(workspace.read_state().unwrap().plugins.len(), 1, "and still readable");
    }
}
