//! What changed in a package since an operator last approved it, for `tdm approve`'s diff: each
//! permission and intent added or removed, each intent whose declaration (title, description,
//! schemas) changed, the module's hash, and each limit, so an operator approving again sees what
//! the new approval would grant that the old one did not.

use crate::package::{Package, PolicyOverrides};
use crate::workspace::Approval;
use std::fmt;

/// One difference between an approval and a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A permission the package asks for that was not approved.
    PermissionAdded(String),
    /// An approved permission the package no longer asks for.
    PermissionRemoved(String),
    /// An intent the package declares that was not approved.
    IntentAdded(String),
    /// An approved intent the package no longer declares.
    IntentRemoved(String),
    /// An approved intent whose title, description or schemas changed.
    IntentChanged(String),
    /// The module is another one (the approved hash, the package's).
    Module(String, String),
    /// A limit changed (its name, the approved value, the package's; `None` is the default).
    Limit(&'static str, Option<u64>, Option<u64>),
    /// The package is signed by another publisher than the one approved (key ids; `None`:
    /// unsigned).
    Publisher(Option<String>, Option<String>),
}

impl Change {
    /// Whether the change grants more than the approval did.
    pub fn widens(&self) -> bool {
        match self {
            Self::PermissionAdded(_)
            | Self::IntentAdded(_)
            | Self::IntentChanged(_)
            | Self::Module(..)
            | Self::Publisher(..) => true,
            Self::PermissionRemoved(_) | Self::IntentRemoved(_) => false,
            // No value is the default, the most a package may ask for.
            Self::Limit(_, from, to) => match (from, to) {
                (_, None) => from.is_some(),
                (None, Some(_)) => false,
                (Some(from), Some(to)) => to > from,
            },
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = |value: &Option<u64>| value.map_or_else(|| "the default".to_string(), |v| v.to_string());
        match self {
            Self::PermissionAdded(p) => write!(f, "+ permission {p}"),
            Self::PermissionRemoved(p) => write!(f, "- permission {p}"),
            Self::IntentAdded(i) => write!(f, "+ intent {i}"),
            Self::IntentRemoved(i) => write!(f, "- intent {i}"),
            Self::IntentChanged(i) => write!(f, "~ intent {i}: its title, description or schemas changed"),
            Self::Module(from, to) => {
                write!(f, "~ module sha256 {} -> {}", &from[..from.len().min(16)], &to[..to.len().min(16)])
            }
            Self::Limit(name, from, to) => write!(f, "~ limit {name}: {} -> {}", limit(from), limit(to)),
            Self::Publisher(from, to) => {
                let key =
                    |k: &Option<String>| k.as_ref().map_or_else(|| "UNSIGNED".to_string(), |k| format!("key {k}"));
                write!(f, "! PUBLISHER CHANGED: {} -> {}", key(from), key(to))
            }
        }
    }
}

/// What `package` changes against `approved`, in the order an operator reads them:
/// publisher, permissions, intents, module, limits.
pub fn changes_since(approved: &Approval, package: &Package) -> Vec<Change> {
    let mut changes = Vec::new();
    let publisher = package.files.publisher.as_ref().map(|(key, _)| key.base64());
    if approved.publisher != publisher {
        let id = |base64: &Option<String>| {
            base64.as_deref().map(|k| crate::signing::PublicKey::id_of(k).unwrap_or_else(|| k.to_string()))
        };
        changes.push(Change::Publisher(id(&approved.publisher), id(&publisher)));
    }
    let asked: Vec<String> = package.requested.iter().map(ToString::to_string).collect();
    changes.extend(asked.iter().filter(|p| !approved.permissions.contains(p)).cloned().map(Change::PermissionAdded));
    changes.extend(approved.permissions.iter().filter(|p| !asked.contains(p)).cloned().map(Change::PermissionRemoved));
    let declared = &package.manifest.intents;
    for intent in declared {
        if !approved.intents.contains(&intent.name) {
            changes.push(Change::IntentAdded(intent.name.clone()));
        } else if !approved.covers_intents(std::slice::from_ref(intent)) {
            changes.push(Change::IntentChanged(intent.name.clone()));
        }
    }
    changes.extend(
        approved
            .intents
            .iter()
            .filter(|name| !declared.iter().any(|i| &i.name == *name))
            .cloned()
            .map(Change::IntentRemoved),
    );
    if approved.sha256 != package.sha256 {
        changes.push(Change::Module(approved.sha256.clone(), package.sha256.clone()));
    }
    let (from, to): (&PolicyOverrides, &PolicyOverrides) = (&approved.limits, &package.manifest.policy);
    for (name, a, b) in [
        ("max_memory_bytes", from.max_memory_bytes, to.max_memory_bytes),
        ("fuel_per_intent", from.fuel_per_intent, to.fuel_per_intent),
        ("timeout_ms", from.timeout_ms, to.timeout_ms),
        ("max_response_bytes", from.max_response_bytes.map(u64::from), to.max_response_bytes.map(u64::from)),
    ] {
        if a != b {
            changes.push(Change::Limit(name, a, b));
        }
    }
    changes
}
