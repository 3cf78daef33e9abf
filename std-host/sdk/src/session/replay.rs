//! A recorded session replayed end to end behind one call ([`Session::replay`]): the trace's
//! policy checked against the ceiling, the module it names found (or the one given), and every
//! intent re-executed with the trace's inputs within a wall-clock limit, stopped early by a
//! cancel (Ctrl-C).

use super::Session;
use crate::environment::Cancel;
use crate::traces::{self, ReplayModule, TraceFileError};
use contour_core::errors::TraceError;
use contour_core::{ReplayReport, Trace};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// How a trace is replayed.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// Replay this module instead of the one the trace names (its divergences are reported).
    pub plugin: Option<PathBuf>,
    /// Wall-clock limit of the whole replay (`None`: [`traces::replay_limit`]).
    pub timeout: Option<Duration>,
    /// The most linear memory the trace's policy may allow, in bytes.
    pub max_memory: u64,
    /// The workspace an installed plugin the trace names is found in.
    pub workspace: PathBuf,
    /// Stops the replay at once when set (Ctrl-C).
    pub cancel: Option<Cancel>,
}

/// What a replay found.
pub struct ReplayRun {
    /// Core's report: the intents replayed, the digest, the first divergence.
    pub report: ReplayReport,
    /// The module replayed.
    pub module: ReplayModule,
}

impl fmt::Debug for ReplayRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayRun").field("module", &self.module.shown).finish_non_exhaustive()
    }
}

/// Why a replay did not finish.
#[derive(Debug)]
pub enum ReplayError {
    /// The trace, its policy or its module could not be used.
    File(TraceFileError),
    /// The replay was stopped during an intent.
    Stopped {
        /// The trace file.
        path: PathBuf,
        /// The intent (0-based) it was stopped in.
        intent: usize,
        /// The wall-clock limit stopped it (otherwise the cancel did).
        timed_out: bool,
        /// The wall-clock limit it ran within.
        limit: Duration,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => e.fmt(f),
            Self::Stopped { path, intent, .. } => {
                write!(f, "{}: replay stopped during intent {}", path.display(), intent + 1)
            }
        }
    }
}

impl std::error::Error for ReplayError {}

impl Session {
    /// Replays `trace` (read from `trace_path`) end to end; a divergence is a report too.
    pub fn replay(trace: &Trace, trace_path: &Path, options: ReplayOptions) -> Result<ReplayRun, ReplayError> {
        let ceiling = traces::replay_ceiling(options.max_memory);
        let policy = traces::trace_policy(trace, trace_path, &ceiling).map_err(ReplayError::File)?;
        let module = traces::module_for(trace, trace_path, &policy, options.plugin.as_deref(), &options.workspace)
            .map_err(ReplayError::File)?;
        let limit = options.timeout.unwrap_or_else(|| traces::replay_limit(trace, &policy));
        let stop = options.cancel.unwrap_or_default().flag();
        let report = within(limit, stop, |stop| traces::replay(trace, trace_path, policy, &module, stop)).map_err(
            |(e, timed_out)| match e {
                TraceFileError::Trace(path, TraceError::Stopped { intent }) => {
                    ReplayError::Stopped { path, intent, timed_out, limit }
                }
                other => ReplayError::File(other),
            },
        )?;
        Ok(ReplayRun { report, module })
    }
}

/// Runs `replay` with the `stop` flag, which a watchdog sets after `limit`; an error comes
/// back with whether the watchdog (not the cancel) stopped it.
fn within<T>(
    limit: Duration,
    stop: Arc<AtomicBool>,
    replay: impl FnOnce(Arc<AtomicBool>) -> Result<T, TraceFileError>,
) -> Result<T, (TraceFileError, bool)> {
    let timed_out = Arc::new(AtomicBool::new(false));
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = {
        let (stop, timed_out) = (Arc::clone(&stop), Arc::clone(&timed_out));
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(limit) {
                timed_out.store(true, Ordering::SeqCst);
                stop.store(true, Ordering::SeqCst);
            }
        })
    };
    let result = replay(stop);
    drop(done);
    let _ = watchdog.join();
    result.map_err(|e| (e, timed_out.load(Ordering::SeqCst)))
}
