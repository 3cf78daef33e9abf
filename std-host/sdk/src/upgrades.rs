//! What the trusted hubs offer newer than what is installed (`tdm outdated`), and installing
//! it (`tdm upgrade`): each plugin is looked up in the trusted hub it was installed from, its
//! index verified as for any install.

use crate::hub::Hub;
use crate::operator::{install, InstallOptions, InstallReport, OperatorError, Source};
use crate::trusted_hubs;
use crate::workspace::{Workspace, WorkspaceError};
use semver::Version;

/// One installed plugin and the newest version its hub lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outdated {
    /// The plugin id.
    pub id: String,
    /// The version installed.
    pub installed: String,
    /// The newest version the hub lists (higher, by semver).
    pub available: String,
    /// The trusted hub.
    pub hub: String,
}

/// The highest version of `id` in `hub` above `installed` (semver), if any.
fn newer(hub: &Hub, id: &str, installed: &str) -> Option<String> {
    let installed = Version::parse(installed).ok()?;
    let entry = hub.find(id, None).ok()?;
    let offered = Version::parse(&entry.version).ok()?;
    (offered > installed).then(|| entry.version.clone())
}

/// What [`outdated`] found: the plugins with a newer version, and each hub that could not be
/// read (refused, unreachable) with why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutdatedReport {
    /// The plugins a trusted hub lists newer, by id.
    pub plugins: Vec<Outdated>,
    /// (hub, why) for each hub not read.
    pub unreadable: Vec<(String, String)>,
}

/// Every installed plugin from a trusted hub that lists a newer version, by id; the hubs that
/// could not be read beside them.
pub fn outdated(workspace: &Workspace) -> Result<OutdatedReport, WorkspaceError> {
    let state = workspace.read_state()?;
    let mut found = Vec::new();
    let mut failed: Vec<(String, String)> = Vec::new();
    let mut opened: Vec<(String, Hub)> = Vec::new();
    for (id, plugin) in &state.plugins {
        let Some(name) = &plugin.hub else { continue };
        if failed.iter().any(|(hub, _)| hub == name) {
            continue;
        }
        if !opened.iter().any(|(hub, _)| hub == name) {
            match trusted_hubs::open(workspace, name, false) {
                Ok(hub) => opened.push((name.clone(), hub.hub)),
                Err(e) => {
                    failed.push((name.clone(), e.to_string()));
                    continue;
                }
            }
        }
        let Some((_, hub)) = opened.iter().find(|(hub, _)| hub == name) else { continue };
        if let Some(available) = newer(hub, id, &plugin.version) {
            found.push(Outdated { id: id.clone(), installed: plugin.version.clone(), available, hub: name.clone() });
        }
    }
    Ok(OutdatedReport { plugins: found, unreadable: failed })
}

/// Why `tdm upgrade` did nothing or failed.
#[derive(Debug)]
pub enum UpgradeError {
    /// The plugin was not installed from a trusted hub: there is nowhere to look.
    NoHub(String),
    /// Its hub lists nothing newer.
    UpToDate {
        /// The plugin.
        id: String,
        /// Its version.
        version: String,
    },
    /// Reading the hub or installing failed.
    Operator(OperatorError),
}

impl std::fmt::Display for UpgradeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoHub(id) => write!(
                f,
                "`{id}` was not installed from a trusted hub, so tdm does not know where to look for a newer \
                 version: install the new version with `tdm install {id} --hub NAME`"
            ),
            Self::UpToDate { id, version } => write!(f, "`{id}` {version} is the newest version its hub lists"),
            Self::Operator(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for UpgradeError {}

/// Installs the newest version of `id` from the trusted hub it came from. The approval stays
/// only when the same publisher signed it and nothing widened (see [`InstallOptions::upgrade`]).
pub fn upgrade(workspace: &Workspace, id: &str, accept_price: bool) -> Result<InstallReport, UpgradeError> {
    let state = workspace.read_state().map_err(|e| UpgradeError::Operator(e.into()))?;
    let plugin = state
        .plugins
        .get(id)
        .ok_or_else(|| UpgradeError::Operator(WorkspaceError::NotInstalled(crate::files::quoted(id)).into()))?;
    let Some(name) = plugin.hub.clone() else {
        return Err(UpgradeError::NoHub(crate::files::quoted(id)));
    };
    let hub = trusted_hubs::open(workspace, &name, false).map_err(|e| UpgradeError::Operator(e.into()))?;
    let Some(version) = newer(&hub.hub, id, &plugin.version) else {
        return Err(UpgradeError::UpToDate { id: id.to_string(), version: plugin.version.clone() });
    };
    let source = Source::Hub { hub: name, id: id.to_string(), version: Some(version) };
    let options = InstallOptions { accept_price, upgrade: true, ..InstallOptions::default() };
    install(workspace, &source, options).map_err(UpgradeError::Operator)
}
