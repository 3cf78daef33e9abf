//! The operator's workflow on a workspace: install from a hub or a folder (verifying, never
//! running), approve (bound to the hash and the exact permissions), revoke, uninstall, and the
//! checks `tdm call` makes before anything runs.

use crate::files;
use crate::intents::audit::AuditLog;
use crate::package::{blake3_hex, covered, valid_id, Manifest, Package, PackageError, PackageFiles, RecordedDigests};
use crate::package_copy::{self, CopyError};
use crate::signing::PublicKey;
use crate::trusted_hubs::{self, HubError};
use crate::workspace::{now_ms, Approval, InstalledPlugin, ModuleCheck, PluginState, Workspace, WorkspaceError};
use crate::workspace::{AUDIT_FILE, PACKAGES_DIR};
use contour_core::{Permissions, Plugin, Policy, Profile};
use std::fmt;
use std::path::PathBuf;

/// Why an operator command failed.
#[derive(Debug)]
pub enum OperatorError {
    /// The package or hub was refused.
    Package(PackageError),
    /// The workspace could not be read or written.
    Workspace(WorkspaceError),
    /// The module fails the load-time checks (nothing was written).
    Rejected(String),
    /// A paid plugin without `--accept-price`.
    PriceNotAccepted(String),
    /// The package cannot be copied: a symlink, FIFO, socket or device in it, or over a limit
    /// (nothing was installed).
    Copy(CopyError),
    /// Creating a folder in the workspace failed.
    Io(PathBuf, std::io::Error),
    /// A trusted hub, or its index, was refused.
    Hub(HubError),
    /// The package is unsigned and `--allow-unsigned` was not given (nothing was installed).
    Unsigned(String),
    /// The version is older than the one installed and `--allow-downgrade` was not given.
    Downgrade {
        /// The plugin.
        id: String,
        /// The installed version.
        installed: String,
        /// The version offered.
        offered: String,
    },
}

impl fmt::Display for OperatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Package(e) => e.fmt(f),
            Self::Workspace(e) => e.fmt(f),
            Self::Rejected(why) => write!(f, "the module is rejected: {why}; nothing was installed"),
            Self::PriceNotAccepted(price) => {
                write!(f, "this plugin costs {price}; pass --accept-price to install it (it will still need approval)")
            }
            Self::Copy(e) => write!(f, "{e}; nothing was installed"),
            Self::Io(path, e) => write!(f, "{}: {e}", path.display()),
            Self::Hub(e) => write!(f, "{e}; nothing was installed"),
            Self::Unsigned(id) => write!(
                f,
                "the package `{id}` is unsigned: nobody vouches for who made it. Ask its publisher for a package \
                 signed with `tdm pack --key`, or pass --allow-unsigned to install it anyway (its approval card \
                 will say it is unsigned); nothing was installed"
            ),
            Self::Downgrade { id, installed, offered } => write!(
                f,
                "`{id}` {installed} is installed and {offered} is older: pass --allow-downgrade to install an older \
                 version (an older version may carry fixed vulnerabilities); nothing was installed"
            ),
        }
    }
}

impl std::error::Error for OperatorError {}

impl From<PackageError> for OperatorError {
    fn from(e: PackageError) -> Self {
        Self::Package(e)
    }
}

impl From<HubError> for OperatorError {
    fn from(e: HubError) -> Self {
        Self::Hub(e)
    }
}

impl From<WorkspaceError> for OperatorError {
    fn from(e: WorkspaceError) -> Self {
        Self::Workspace(e)
    }
}

/// Where a package comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// `ID[@REQ]` from a hub: a trusted hub's name, or (with `allow_unsigned`) a hub folder.
    Hub {
        /// The trusted hub's name, or a hub folder.
        hub: String,
        /// The plugin id.
        id: String,
        /// A version or semver requirement, or none: the highest version listed.
        version: Option<String>,
    },
    /// A package folder.
    Folder(PathBuf),
}

/// What an install did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    /// The plugin id.
    pub id: String,
    /// The version installed.
    pub version: String,
    /// Its module hash.
    pub sha256: String,
    /// Whether an earlier approval was voided (new module, wider permissions or a new intent).
    pub approval_voided: bool,
    /// Whether an approval still holds (same module, permissions and intents within the
    /// approved sets).
    pub still_approved: bool,
    /// Why the audit log could not record the install, if it could not (it stands).
    pub audit_warning: Option<String>,
    /// The publisher's key id, `None` for an unsigned package.
    pub publisher: Option<String>,
    /// When an earlier approval's publisher differs from this package's: (approved, now), key
    /// ids (`None`: unsigned). Such an approval is voided.
    pub publisher_changed: Option<(Option<String>, Option<String>)>,
    /// The trusted hub it came from.
    pub hub: Option<String>,
}

/// What an install may accept beyond the defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InstallOptions {
    /// A paid plugin (`--accept-price`).
    pub accept_price: bool,
    /// An unsigned package, or a hub location that is not trusted (`--allow-unsigned`).
    pub allow_unsigned: bool,
    /// A version older than the one installed (`--allow-downgrade`).
    pub allow_downgrade: bool,
    /// An upgrade (`tdm upgrade`): a new module signed by the approved publisher keeps the
    /// approval when nothing else widened (permissions, intents, limits); the approval then
    /// binds the new hash.
    pub upgrade: bool,
}

/// The key id of a publisher key's base64 line (the line itself when it does not parse).
fn key_id(base64: &str) -> String {
    PublicKey::id_of(base64).unwrap_or_else(|| files::quoted(base64))
}

/// Whether `offered` is an older semver version than `installed` (versions that are not
/// semver are never called older).
fn older(offered: &str, installed: &str) -> bool {
    matches!((semver::Version::parse(offered), semver::Version::parse(installed)), (Ok(o), Ok(i)) if o < i)
}

/// Installs a package: verifies its hash and the module's load-time checks (no plugin code
/// runs), copies it into the workspace (the manifest and module from the bytes verified, see
/// [`package_copy`]) and records it as `installed`. A new module, a permission outside the
/// approved set or an intent that was not approved voids an earlier approval.
pub fn install(
    workspace: &Workspace,
    source: &Source,
    options: InstallOptions,
) -> Result<InstallReport, OperatorError> {
    match source {
        Source::Hub { hub, id, version } => {
            let opened = trusted_hubs::open(workspace, hub, options.allow_unsigned)?;
            let entry = opened.hub.find(id, version.as_deref())?;
            if entry.price.is_paid() && !options.accept_price {
                return Err(OperatorError::PriceNotAccepted(entry.price.to_string()));
            }
            // An HTTP hub's package is fetched here first; removed when the install ends.
            let download = workspace.dir.join(PACKAGES_DIR).join(format!(".download-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&download);
            let result = match opened.package(entry, &download) {
                Ok(package) => {
                    finish_install(workspace, package, entry.price.to_string(), opened.trusted.clone(), options)
                }
                Err(e) => Err(e.into()),
            };
            let _ = std::fs::remove_dir_all(&download);
            result
        }
        Source::Folder(dir) => finish_install(workspace, Package::read(dir)?, "free".to_string(), None, options),
    }
}

/// [`install`] of a package read and verified: the load-time checks, the publisher and
/// downgrade rules, the copy into the workspace and the state's record.
fn finish_install(
    workspace: &Workspace,
    package: Package,
    price: String,
    from_hub: Option<String>,
    options: InstallOptions,
) -> Result<InstallReport, OperatorError> {
    let publisher = package.files.publisher.as_ref().map(|(key, _)| key.base64());
    if publisher.is_none() && !options.allow_unsigned {
        return Err(OperatorError::Unsigned(files::quoted(&package.manifest.id)));
    }
    if !options.allow_downgrade {
        let state = workspace.read_state()?;
        if let Some(installed) = state.plugins.get(&package.manifest.id) {
            if older(&package.manifest.version, &installed.version) {
                return Err(OperatorError::Downgrade {
                    id: files::quoted(&package.manifest.id),
                    installed: files::quoted(&installed.version),
                    offered: files::quoted(&package.manifest.version),
                });
            }
        }
    }
    let inspection = Plugin::inspect(&package.module, &package.policy(), Profile::Marketplace)
        .map_err(|f| OperatorError::Rejected(f.to_string()))?;
    if let Some(failure) = inspection.failures.first() {
        return Err(OperatorError::Rejected(failure.to_string()));
    }
    let manifest = &package.manifest;
    let relative = InstalledPlugin::relative_dir(&manifest.id, &manifest.version);
    let staging = workspace.dir.join(PACKAGES_DIR).join(format!(".staging-{}-{}", manifest.id, std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    package_copy::copy_package(&package, &staging).map_err(OperatorError::Copy)?;
    let target = workspace.dir.join(&relative);
    let requested: Vec<String> = package.requested.iter().map(ToString::to_string).collect();
    let result = workspace.update(|state| {
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| WorkspaceError::Io(parent.to_path_buf(), e))?;
        }
        let _ = std::fs::remove_dir_all(&target);
        std::fs::rename(&staging, &target).map_err(|e| WorkspaceError::Io(target.clone(), e))?;
        let previous = state.plugins.get(&manifest.id);
        let mut approval = previous.and_then(|p| p.approval.clone());
        let mut voided = false;
        let mut publisher_changed = None;
        if let Some(existing) = &approval {
            let approved = contour_core::Permissions::parse_all(existing.permissions.iter().map(String::as_str))
                .unwrap_or_default();
            if existing.publisher != publisher {
                publisher_changed = Some((existing.publisher.as_deref().map(key_id), publisher.as_deref().map(key_id)));
            }
            // The approved publisher vouches for its new module in an upgrade; nothing else
            // may widen.
            let vouched = options.upgrade && publisher.is_some() && publisher_changed.is_none();
            if publisher_changed.is_some()
                || (existing.sha256 != package.sha256 && !vouched)
                || !covered(&package.requested, &approved)
                || !existing.covers_intents(&manifest.intents)
                || !manifest.policy.within(&existing.limits)
            {
                approval = None;
                voided = true;
            }
        }
        if let Some(kept) = approval.as_mut() {
            kept.sha256 = package.sha256.clone();
            kept.blake3 = Some(blake3_hex(&package.files.module_file));
        }
        let still_approved = approval.is_some();
        state.plugins.insert(
            manifest.id.clone(),
            InstalledPlugin {
                version: manifest.version.clone(),
                sha256: package.sha256.clone(),
                path: relative.clone(),
                requested: requested.clone(),
                price: price.clone(),
                voided: match (&approval, voided) {
                    (Some(_), _) => None,
                    (None, true) => previous.and_then(|p| p.approval.clone()),
                    // Installed again before an approval: the voided one stays the base.
                    (None, false) => previous.and_then(|p| p.voided.clone()),
                },
                approval,
                revoked: false,
                last_call: previous.and_then(|p| p.last_call.clone()),
                publisher: publisher.clone(),
                hub: from_hub.clone(),
            },
        );
        Ok(InstallReport {
            id: manifest.id.clone(),
            version: manifest.version.clone(),
            sha256: package.sha256.clone(),
            approval_voided: voided,
            still_approved,
            audit_warning: None,
            publisher: publisher.as_deref().map(key_id),
            publisher_changed,
            hub: from_hub.clone(),
        })
    });
    let _ = std::fs::remove_dir_all(&staging);
    let mut report = result?;
    let action = if options.upgrade { "upgrade" } else { "install" };
    report.audit_warning = audit_action(workspace, action, &report.id, &report.version, &report.sha256, None);
    Ok(report)
}

/// An installed plugin's package, re-read and re-verified from the workspace.
pub fn installed_package(workspace: &Workspace, id: &str) -> Result<(InstalledPlugin, Package), OperatorError> {
    let state = workspace.read_state()?;
    let plugin = state.plugins.get(id).cloned().ok_or_else(|| WorkspaceError::NotInstalled(id.to_string()))?;
    let package = Package::read(&workspace.dir.join(&plugin.path))?;
    Ok((plugin, package))
}

/// Reads an installed plugin's package files once (manifest and module, bounded).
pub fn read_installed(workspace: &Workspace, plugin: &InstalledPlugin) -> Result<PackageFiles, PackageError> {
    PackageFiles::read(&installed_dir(workspace, plugin))
}

/// The folder an installed plugin's package was copied to.
fn installed_dir(workspace: &Workspace, plugin: &InstalledPlugin) -> PathBuf {
    workspace.dir.join(&plugin.path)
}

/// The state `tdm workspace status` shows, from one read of the package: an unreadable
/// manifest or module is [`PluginState::Unverifiable`], never approved.
pub fn state_on_disk(plugin: &InstalledPlugin, files: Option<&PackageFiles>) -> PluginState {
    plugin.state(files.map_or(ModuleCheck::Unreadable, |f| ModuleCheck::Read {
        sha256: &f.sha256,
        intents: &f.manifest.intents,
        limits: &f.manifest.policy,
        publisher: f.manifest.publisher.as_deref().filter(|_| f.publisher.is_some()),
    }))
}

/// An installed plugin cleared to run: its package read once, the hash of the module bytes
/// read matched against the approval, and `package.module` compiled from exactly those bytes.
#[derive(Debug)]
pub struct ApprovedPlugin {
    /// The state file's entry.
    pub installed: InstalledPlugin,
    /// The package as read and verified: run `package.module`, nothing read later.
    pub package: Package,
    /// What it runs with: the permissions its package asks for now, every one approved.
    pub grants: Permissions,
}

/// Why an installed plugin may not run.
#[derive(Debug)]
pub enum LaunchError {
    /// It is not approved for what is on disk now: the `not_approved` message.
    NotApproved(String),
    /// The workspace state cannot be read.
    Workspace(WorkspaceError),
}

/// The one check before an installed plugin runs (`tdm call`, `tdm repl ID`): installed,
/// approved, its package readable and verified, the hash of the module bytes read equal to the
/// approved hash, every permission it asks for approved. Nothing of the plugin has run.
pub fn approved_plugin(workspace: &Workspace, id: &str) -> Result<ApprovedPlugin, LaunchError> {
    approved_plugin_preloading(workspace, id, None::<fn(&Manifest, &[u8])>).map(|(approved, _)| approved)
}

/// [`approved_plugin`], running `preload` on the package's manifest and binary module bytes
/// while they are hashed ([`PackageFiles::read_preloading`]): its result comes back only beside
/// a plugin that cleared the whole check, and is dropped with any refusal.
pub fn approved_plugin_preloading<T>(
    workspace: &Workspace,
    id: &str,
    preload: Option<impl FnOnce(&Manifest, &[u8]) -> T>,
) -> Result<(ApprovedPlugin, Option<T>), LaunchError> {
    let state = workspace.read_state().map_err(LaunchError::Workspace)?;
    let Some(installed) = state.plugins.get(id).cloned() else {
        // Nothing to approve: an id that names no installed plugin is a lookup error, not a
        // refusal of an approval (which would send the operator to `tdm approve`).
        return Err(LaunchError::Workspace(WorkspaceError::NotInstalled(id.to_string())));
    };
    // The one read of the package: everything below uses these bytes.
    // An approval that recorded the module's BLAKE3 lets the check hash with it alone.
    let recorded = installed.approval.as_ref().and_then(|approval| {
        approval.blake3.as_deref().map(|blake3| RecordedDigests { blake3, sha256: &approval.sha256 })
    });
    let (read, preloaded) =
        match PackageFiles::read_preloading(&installed_dir(workspace, &installed), recorded, preload) {
            Ok((files, preloaded)) => (Ok(files), preloaded),
            Err(e) => (Err(e), None),
        };
    if let Some(why) = launch_refusal(id, &installed, read.as_ref().ok()) {
        let detail = read.err().map_or_else(String::new, |e| format!(" ({e})"));
        let why = format!("{why}{detail}");
        // Best effort: the refusal itself is what the caller reports.
        let _ = audit_action(workspace, "refused_launch", id, &installed.version, &installed.sha256, Some(&why));
        return Err(LaunchError::NotApproved(why));
    }
    let Ok(files) = read else {
        return Err(LaunchError::NotApproved("Its package cannot be read.".into()));
    };
    let package = Package::verify(files)
        .map_err(|e| LaunchError::NotApproved(format!("The installed package no longer verifies: {e}.")))?;
    let approved = installed.approval.as_ref().map(|a| a.permissions.clone()).unwrap_or_default();
    let approved = Permissions::parse_all(approved.iter().map(String::as_str))
        .map_err(|e| LaunchError::NotApproved(format!("Its approved permissions do not parse: {e}.")))?;
    if !covered(&package.requested, &approved) {
        return Err(LaunchError::NotApproved(
            "Its manifest asks for permissions beyond its approval: approve it again.".into(),
        ));
    }
    // It runs with what it asks for now, all of it approved: a version asking for less never
    // keeps what an earlier version was approved for.
    let grants = package.requested.clone();
    Ok((ApprovedPlugin { installed, package, grants }, preloaded))
}

/// Records an operator's action in the workspace's audit log. The action stands when the log
/// cannot be written (it is not a regular file, the disk is full); the returned warning says
/// so, for the front end to show, since a lost record must not pass unnoticed.
fn audit_action(
    workspace: &Workspace,
    action: &str,
    id: &str,
    version: &str,
    hash: &str,
    refusal: Option<&str>,
) -> Option<String> {
    let entry = AuditLog::operator_entry(action, id, version, hash, refusal, now_ms());
    let path = workspace.dir.join(AUDIT_FILE);
    AuditLog::append_operator(&path, &entry).err().map(|e| {
        format!("the audit log {} could not record the {action} of {}: {e}", path.display(), files::quoted(id))
    })
}

/// Records an approval of `id` for what its installed `package` holds as read and verified:
/// the module hash, the requested permissions and the declared intents (each with its title,
/// description and schemas), and audits it; `Some` warning when the audit log could not record
/// it (the approval stands).
pub fn approve(workspace: &Workspace, id: &str, package: &Package) -> Result<Option<String>, OperatorError> {
    let approval = Approval {
        sha256: package.sha256.clone(),
        blake3: Some(blake3_hex(&package.files.module_file)),
        permissions: package.requested.iter().map(ToString::to_string).collect(),
        intents: package.manifest.intents.iter().map(|intent| intent.name.clone()).collect(),
        declarations: Some(
            package.manifest.intents.iter().map(|intent| (intent.name.clone(), intent.digest())).collect(),
        ),
        limits: package.manifest.policy.clone(),
        publisher: package.files.publisher.as_ref().map(|(key, _)| key.base64()),
        at_ms: now_ms(),
    };
    workspace.update(|state| {
        let plugin = state.plugins.get_mut(id).ok_or_else(|| WorkspaceError::NotInstalled(id.to_string()))?;
        plugin.approval = Some(approval);
        plugin.voided = None;
        plugin.revoked = false;
        Ok(())
    })?;
    Ok(audit_action(workspace, "approve", id, &package.manifest.version, &package.sha256, None))
}

/// Withdraws `id`'s approval, and audits it (the warning as for [`approve`]).
pub fn revoke(workspace: &Workspace, id: &str) -> Result<Option<String>, OperatorError> {
    let (version, hash) = workspace.update(|state| {
        let plugin = state.plugins.get_mut(id).ok_or_else(|| WorkspaceError::NotInstalled(id.to_string()))?;
        plugin.approval = None;
        plugin.revoked = true;
        Ok((plugin.version.clone(), plugin.sha256.clone()))
    })?;
    Ok(audit_action(workspace, "revoke", id, &version, &hash, None))
}

/// Removes `id` and its approval (the audit log stays, and records it: the warning as for
/// [`approve`]): only `packages/ID` goes, and only for
/// an id that is a plain name found in the (checked) state.
pub fn uninstall(workspace: &Workspace, id: &str) -> Result<Option<String>, OperatorError> {
    let removed = workspace
        .update(|state| state.plugins.remove(id).ok_or_else(|| WorkspaceError::NotInstalled(files::quoted(id))))?;
    let warning = audit_action(workspace, "uninstall", id, &removed.version, &removed.sha256, None);
    // The state was checked when read, so `id` is a plain name; checked again before it
    // becomes a path.
    if valid_id(id) {
        let _ = std::fs::remove_dir_all(workspace.dir.join(PACKAGES_DIR).join(id));
    }
    Ok(warning)
}

/// Why `tdm call` refuses to run a plugin, if it does, given its package files as read now
/// (`None`: they could not be read, which is never approved).
pub fn launch_refusal(id: &str, plugin: &InstalledPlugin, files: Option<&PackageFiles>) -> Option<String> {
    match state_on_disk(plugin, files) {
        PluginState::Approved => None,
        PluginState::Installed => Some(format!("It is installed but not approved: run `tdm approve {id}` first.")),
        PluginState::Revoked => Some("Its approval was revoked.".into()),
        PluginState::StaleApproval => {
            Some("Its approval no longer matches the module, its permissions, its intents, its limits or its publisher: approve it again (`tdm approve` shows what changed).".into())
        }
        PluginState::Modified => Some(
            "Its module in the workspace changed after it was installed (its hash is not the installed one): reinstall the package, then approve it."
                .into(),
        ),
        PluginState::Unverifiable => {
            Some("Its package cannot be read, so its approval cannot be checked: reinstall it.".into())
        }
    }
}

/// The effective policy of a package, for display.
pub fn effective_policy(package: &Package) -> Policy {
    package.policy()
}

/// Keeps the figures of `id`'s last call in the workspace (`tdm workspace status` shows them).
pub fn record_last_call(
    workspace: &Workspace,
    id: &str,
    last: crate::workspace::LastCall,
) -> Result<(), OperatorError> {
    record_last_calls(workspace, vec![(id.to_string(), last)])
}

/// Records several plugins' last calls in one state update (a server that runs many calls
/// writes them together); a plugin no longer installed is skipped.
pub fn record_last_calls(
    workspace: &Workspace,
    calls: Vec<(String, crate::workspace::LastCall)>,
) -> Result<(), OperatorError> {
    workspace.update(|state| {
        for (id, last) in calls {
            if let Some(plugin) = state.plugins.get_mut(&id) {
                plugin.last_call = Some(last);
            }
        }
        Ok(())
    })?;
    Ok(())
}
