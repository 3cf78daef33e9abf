//! Sessions opened and launched ahead of the calls that will take them. A server that gives
//! every call a fresh instance (`tdm mcp`'s default) prepares the next one after a call ends,
//! off the path of any call: the approved-launch check (state, package, module hash), the
//! instance and its start function. A call then takes an instance that has run its start
//! function and nothing else, and runs at a warm instance's speed; the approval is looked at
//! again before its intent runs ([`Session::run`]), so a revoke or a new version between the
//! two is never missed (the caller opens afresh when the spare is refused as withdrawn).

use super::{Session, SessionError, SessionOptions};
use crate::environment::Cancel;
use crate::workspace::Workspace;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The most spare sessions kept (the oldest goes first): each holds an instance's memory.
pub const MAX_SPARES: usize = 8;

/// A spare: the plugin, who it was opened for (the audit names them), the session.
type Spare = (String, Option<String>, Session);

/// Spare sessions shared by a server's calls (cheap to clone: one pool).
#[derive(Clone, Default)]
pub struct Spares(Arc<Mutex<VecDeque<Spare>>>);

impl std::fmt::Debug for Spares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spares").field("kept", &self.len()).finish()
    }
}

impl Spares {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many spares are kept.
    pub fn len(&self) -> usize {
        self.0.lock().map_or(0, |spares| spares.len())
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A spare session of installed plugin `id` opened for `caller`, if one is kept. It has its
    /// own cancel flag ([`Session::cancel`]), which the call takes over.
    pub fn take(&self, id: &str, caller: &Option<String>) -> Option<Session> {
        let mut spares = self.0.lock().ok()?;
        let at = spares.iter().position(|(plugin, opened_for, _)| plugin == id && opened_for == caller)?;
        spares.remove(at).map(|(_, _, session)| session)
    }

    /// Opens installed plugin `id` in `workspace` with `options` (their cancel flag replaced by
    /// one of its own, their trace ignored: a spare is never recorded, since its launch would
    /// be missing from the trace), launches its instance and keeps it for the next call of `id`
    /// by `options.audit.caller`, unless one is kept for them already.
    pub fn prepare(&self, workspace: &Workspace, id: &str, mut options: SessionOptions) -> Result<(), SessionError> {
        let caller = options.audit.caller.clone();
        let kept = |spares: &VecDeque<Spare>| spares.iter().any(|(plugin, by, _)| plugin == id && *by == caller);
        if self.0.lock().map_or(true, |spares| kept(&spares)) {
            return Ok(());
        }
        options.cancel = Some(Cancel::new());
        options.audit.trace = None;
        let mut session = Session::open_installed(workspace, id, options)?;
        session.launch()?;
        if let Ok(mut spares) = self.0.lock() {
            if kept(&spares) {
                return Ok(());
            }
            if spares.len() >= MAX_SPARES {
                spares.pop_front();
            }
            spares.push_back((id.to_string(), caller, session));
        }
        Ok(())
    }
}
