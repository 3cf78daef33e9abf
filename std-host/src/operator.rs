//! The operator's workflow on a workspace: install from a hub or a folder (verifying, never
//! running), approve (bound to the hash and the exact permissions), revoke, uninstall, and the
//! checks `tdm call` makes before anything runs.

use crate::package::{covered, Hub, Package, PackageError};
use crate::workspace::{now_ms, Approval, InstalledPlugin, PluginState, Workspace, WorkspaceError, PACKAGES_DIR};
use contour_core::{Plugin, Policy, Profile};
use std::fmt;
use std::path::{Path, PathBuf};

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
    /// Copying the package failed.
    Io(PathBuf, std::io::Error),
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
            Self::Io(path, e) => write!(f, "{}: {e}", path.display()),
        }
    }
}

impl std::error::Error for OperatorError {}

impl From<PackageError> for OperatorError {
    fn from(e: PackageError) -> Self {
        Self::Package(e)
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
    /// `ID[@VERSION]` from a hub folder.
    Hub {
        /// The hub folder.
        hub: PathBuf,
        /// The plugin id.
        id: String,
        /// A version, or the last listed.
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
    /// Whether an earlier approval was voided (new module or wider permissions).
    pub approval_voided: bool,
    /// Whether an approval still holds (same module, permissions within the approved set).
    pub still_approved: bool,
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), OperatorError> {
    std::fs::create_dir_all(to).map_err(|e| OperatorError::Io(to.to_path_buf(), e))?;
    let entries = std::fs::read_dir(from).map_err(|e| OperatorError::Io(from.to_path_buf(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| OperatorError::Io(from.to_path_buf(), e))?;
        let kind = entry.file_type().map_err(|e| OperatorError::Io(entry.path(), e))?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(|e| OperatorError::Io(entry.path(), e))?;
        }
        // Symlinks are not copied: a package holds plain files only.
    }
    Ok(())
}

/// Installs a package: verifies its hash and the module's load-time checks (no plugin code
/// runs), copies it into the workspace and records it as `installed`. A new module or a
/// permission outside the approved set voids an earlier approval.
pub fn install(workspace: &Workspace, source: &Source, accept_price: bool) -> Result<InstallReport, OperatorError> {
    let (package, price) = match source {
        Source::Hub { hub, id, version } => {
            let hub = Hub::open(hub)?;
            let entry = hub.find(id, version.as_deref())?;
            if entry.price.is_paid() && !accept_price {
                return Err(OperatorError::PriceNotAccepted(entry.price.to_string()));
            }
            (hub.package(entry)?, entry.price.to_string())
        }
        Source::Folder(dir) => (Package::read(dir)?, "free".to_string()),
    };
    let inspection = Plugin::inspect(&package.module, &package.policy(), Profile::Marketplace)
        .map_err(|f| OperatorError::Rejected(f.to_string()))?;
    if let Some(failure) = inspection.failures.first() {
        return Err(OperatorError::Rejected(failure.to_string()));
    }
    let manifest = &package.manifest;
    let relative = format!("{PACKAGES_DIR}/{}/{}", manifest.id, manifest.version);
    let staging = workspace.dir.join(PACKAGES_DIR).join(format!(".staging-{}-{}", manifest.id, std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    copy_dir(&package.dir, &staging)?;
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
        if let Some(existing) = &approval {
            let approved = contour_core::Permissions::parse_all(existing.permissions.iter().map(String::as_str))
                .unwrap_or_default();
            if existing.sha256 != manifest.sha256 || !covered(&package.requested, &approved) {
                approval = None;
                voided = true;
            }
        }
        let still_approved = approval.is_some();
        state.plugins.insert(
            manifest.id.clone(),
            InstalledPlugin {
                version: manifest.version.clone(),
                sha256: manifest.sha256.to_ascii_lowercase(),
                path: relative.clone(),
                requested: requested.clone(),
                price: price.clone(),
                approval,
                revoked: false,
                last_call: previous.and_then(|p| p.last_call.clone()),
            },
        );
        Ok(InstallReport {
            id: manifest.id.clone(),
            version: manifest.version.clone(),
            sha256: manifest.sha256.to_ascii_lowercase(),
            approval_voided: voided,
            still_approved,
        })
    });
    let _ = std::fs::remove_dir_all(&staging);
    Ok(result?)
}

/// An installed plugin's package, re-read and re-verified from the workspace.
pub fn installed_package(workspace: &Workspace, id: &str) -> Result<(InstalledPlugin, Package), OperatorError> {
    let state = workspace.read_state()?;
    let plugin = state.plugins.get(id).cloned().ok_or_else(|| WorkspaceError::NotInstalled(id.to_string()))?;
    let package = Package::read(&workspace.dir.join(&plugin.path))?;
    Ok((plugin, package))
}

/// The module hash on disk now, if the module can be read.
pub fn hash_on_disk(workspace: &Workspace, plugin: &InstalledPlugin) -> Option<String> {
    let dir = workspace.dir.join(&plugin.path);
    let manifest = crate::package::Manifest::read(&dir).ok()?;
    std::fs::read(dir.join(manifest.module)).ok().map(|bytes| crate::intents::tool::sha256_hex(&bytes))
}

/// Records an approval of `id` for its current module hash and requested permissions.
pub fn approve(workspace: &Workspace, id: &str, sha256: &str, permissions: Vec<String>) -> Result<(), OperatorError> {
    workspace.update(|state| {
        let plugin = state.plugins.get_mut(id).ok_or_else(|| WorkspaceError::NotInstalled(id.to_string()))?;
        plugin.approval = Some(Approval { sha256: sha256.to_string(), permissions, at_ms: now_ms() });
        plugin.revoked = false;
        Ok(())
    })?;
    Ok(())
}

/// Withdraws `id`'s approval.
pub fn revoke(workspace: &Workspace, id: &str) -> Result<(), OperatorError> {
    workspace.update(|state| {
        let plugin = state.plugins.get_mut(id).ok_or_else(|| WorkspaceError::NotInstalled(id.to_string()))?;
        plugin.approval = None;
        plugin.revoked = true;
        Ok(())
    })?;
    Ok(())
}

/// Removes `id` and its approval (the audit log stays).
pub fn uninstall(workspace: &Workspace, id: &str) -> Result<(), OperatorError> {
    let removed = workspace
        .update(|state| state.plugins.remove(id).ok_or_else(|| WorkspaceError::NotInstalled(id.to_string())))?;
    let dir = workspace.dir.join(PACKAGES_DIR).join(id);
    if dir.starts_with(workspace.dir.join(PACKAGES_DIR)) && !removed.path.is_empty() {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok(())
}

/// Why `tdm call` refuses to run a plugin, if it does.
pub fn launch_refusal(plugin: &InstalledPlugin, hash_now: Option<&str>) -> Option<String> {
    match plugin.state(hash_now) {
        PluginState::Approved => None,
        PluginState::Installed => Some("It is installed but not approved: run `tdm approve ID` first.".into()),
        PluginState::Revoked => Some("Its approval was revoked.".into()),
        PluginState::StaleApproval => {
            Some("Its approval no longer matches the module or its permissions: approve it again.".into())
        }
    }
}

/// The effective policy of a package, for display.
pub fn effective_policy(package: &Package) -> Policy {
    package.policy()
}
