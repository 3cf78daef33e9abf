//! Modules compiled once and shared by the sessions that run the same bytes under the same
//! policy: a server that opens a fresh session for every call (`tdm mcp`) would otherwise spend
//! most of a call compiling. An entry is keyed by the sha256 of the module bytes the session
//! just read and checked against the approval, so what runs is always what was approved.

use super::SessionError;
use contour_core::{Plugin, Policy};
use std::sync::{Arc, Mutex};

/// The most compiled modules a cache keeps (the oldest goes first).
pub const MAX_CACHED_MODULES: usize = 32;

/// A compiled module and what it was compiled from.
struct Entry {
    sha256: String,
    policy: Policy,
    plugin: Arc<Plugin>,
}

/// Compiled modules shared between sessions (cheap to clone: one cache).
#[derive(Clone, Default)]
pub struct ModuleCache(Arc<Mutex<Vec<Entry>>>);

impl std::fmt::Debug for ModuleCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModuleCache").field("modules", &self.len()).finish()
    }
}

impl ModuleCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many modules it holds.
    pub fn len(&self) -> usize {
        self.0.lock().map_or(0, |entries| entries.len())
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The module of `bytes` (whose sha256 is `sha256`) compiled under `policy`: the cached one,
    /// or `load`'s, which is kept. Compiling happens outside the lock.
    pub(crate) fn get_or_load(
        &self,
        sha256: &str,
        bytes: &[u8],
        policy: Policy,
        load: impl FnOnce(&[u8], Policy) -> Result<Plugin, SessionError>,
    ) -> Result<Arc<Plugin>, SessionError> {
        let found = self.0.lock().ok().and_then(|entries| {
            entries.iter().find(|e| e.sha256 == sha256 && e.policy == policy).map(|e| Arc::clone(&e.plugin))
        });
        if let Some(plugin) = found {
            return Ok(plugin);
        }
        let plugin = Arc::new(load(bytes, policy.clone())?);
        if let Ok(mut entries) = self.0.lock() {
            if entries.len() >= MAX_CACHED_MODULES {
                entries.remove(0);
            }
            entries.push(Entry { sha256: sha256.to_string(), policy, plugin: Arc::clone(&plugin) });
        }
        Ok(plugin)
    }
}
