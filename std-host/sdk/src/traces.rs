//! Trace files on a std host: writing a recorded session (`--record FILE`, REPL `:record`),
//! reading one back with a bound, finding the module it names (a file, or an installed plugin),
//! replaying it, and rendering it readably (`tdm replay --show`). Core owns the format and the
//! replay; this module owns the files.

use crate::files::output::{OutputError, Outputs};
use crate::files::{self, FileError};
use crate::module_file::{read_module_within, ModuleFileError};
use crate::operator;
use crate::workspace::Workspace;
use contour_core::{errors::PolicyError, Plugin, Policy};
use contour_core::{
    errors::TraceError, hex, Divergence, DivergenceKind, ReplayReport, Trace, TraceInput as Input, MAX_TRACE_BYTES,
};
use serde_json::{json, Value};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// How a trace names an installed plugin: `plugin:ID` (a file path otherwise).
pub const INSTALLED_PREFIX: &str = "plugin:";

/// Why a trace file could not be written, read or replayed.
#[derive(Debug)]
pub enum TraceFileError {
    /// The trace file could not be read.
    File(FileError),
    /// The bytes are not a usable trace (or the recording overflowed its bound).
    Trace(PathBuf, TraceError),
    /// The trace file could not be written.
    Write(PathBuf, std::io::Error),
    /// The trace file was refused where it is opened (another output of the command, not a
    /// regular file, not a trace).
    Output(OutputError),
    /// The trace's policy asks for more than the replay accepts (a forged trace could name any
    /// limit: a table of billions of elements, a start function that runs for hours).
    AboveCeiling(PathBuf, PolicyError),
    /// The module the trace names (or the one given) cannot be read.
    Module(String),
    /// No file is where the trace's module path leads, from the trace's folder or the working
    /// folder.
    ModuleNotFound {
        /// The path the trace holds.
        named: String,
        /// Where it was looked for.
        tried: Vec<PathBuf>,
    },
    /// The module found is not the one the trace recorded, and none was given on purpose.
    NotTheRecordedModule {
        /// Where it was found.
        module: String,
        /// The sha256 the trace recorded.
        recorded: String,
        /// The sha256 of the bytes found.
        found: String,
    },
}

impl fmt::Display for TraceFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => e.fmt(f),
            Self::Trace(path, e) => write!(f, "{}: {e}", path.display()),
            Self::Write(path, e) => write!(f, "cannot write the trace {}: {e}", path.display()),
            Self::Output(e) => e.fmt(f),
            Self::AboveCeiling(path, e) => write!(f, "{}: the trace's {e}", path.display()),
            Self::Module(why) => f.write_str(why),
            Self::ModuleNotFound { named, tried } => {
                let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
                write!(f, "cannot read {named}: no such file (looked for {})", tried.join(" and "))
            }
            Self::NotTheRecordedModule { module, recorded, found } => write!(
                f,
                "{module} is not the module the trace recorded (sha256 {found}, the trace has {recorded}); \
                 pass --plugin PATH to replay another module and see where it diverges"
            ),
        }
    }
}

impl std::error::Error for TraceFileError {}

/// Writes `trace` to `path` (replacing it), never blocking on a FIFO there, and only when the
/// file opened is a regular file that is empty or a trace, and none of the command's other
/// `outputs` (checked on the open handle, by device and inode).
pub fn write_trace(path: &Path, trace: &Trace, outputs: &Outputs) -> Result<(), TraceFileError> {
    let bytes = trace.encode().map_err(|e| TraceFileError::Trace(path.to_path_buf(), e))?;
    outputs.replace(path, &bytes, only_a_trace).map_err(TraceFileError::Output)
}

/// What a recording may overwrite: a trace (its magic bytes), nothing else.
fn only_a_trace(start: &[u8]) -> Result<(), String> {
    if start.starts_with(&contour_core::TRACE_MAGIC) {
        Ok(())
    } else {
        Err(NOT_A_TRACE.to_string())
    }
}

const NOT_A_TRACE: &str = "it exists and is not a trace, so it is not overwritten (the module, an audit log or a vault would be lost): remove it or record to another file";

/// Checks, before anything runs, that a trace can be written at `path` (`--record`, `:record`),
/// so a bad path is one error up front, not one after the outcome: it must be none of the
/// command's other `outputs` (stdout, stderr, the audit log even when not created yet, the
/// state), its folder must exist, and `path` must be a writable regular file or a name that
/// can be made there. A FIFO, a device or a socket is refused from its metadata, never opened;
/// a new name is made and removed again. An existing file is overwritten only when it is empty
/// or a trace (its magic bytes): a slip such as `--record` naming the module itself loses
/// nothing. [`write_trace`] checks all of it again on the file it opens.
pub fn check_trace_path(path: &Path, outputs: &Outputs) -> Result<(), TraceFileError> {
    let failed = |e: std::io::Error| TraceFileError::Write(path.to_path_buf(), e);
    let refused = |why: String| failed(std::io::Error::other(why));
    outputs.check_path(path).map_err(TraceFileError::Output)?;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(refused("it is a folder".into())),
        Ok(meta) if !meta.is_file() => Err(refused("it is not a regular file (a FIFO, a device or a socket)".into())),
        Ok(meta) if meta.len() > 0 && !starts_with_magic(path) => Err(refused(NOT_A_TRACE.into())),
        // Tried for writing without creating or truncating it: only the permission is tried.
        Ok(_) => files::output::writable(path).map_err(TraceFileError::Output),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if !folder.is_dir() {
                return Err(refused(format!("its folder {} does not exist", folder.display())));
            }
            files::output::write_new(path, &mut std::io::empty()).map_err(TraceFileError::Output)?;
            std::fs::remove_file(path).map_err(failed)
        }
        Err(e) => Err(failed(e)),
    }
}

/// Whether the regular file at `path` starts with a trace's magic bytes (opened without
/// blocking; only those bytes are read).
fn starts_with_magic(path: &Path) -> bool {
    use std::io::Read;
    let Ok((file, _)) = files::open_regular(path) else {
        return false;
    };
    let mut start = [0u8; 8];
    file.take(start.len() as u64).read_exact(&mut start).is_ok() && start == contour_core::TRACE_MAGIC
}

/// Reads and decodes the trace at `path`, at most [`MAX_TRACE_BYTES`].
pub fn read_trace(path: &Path) -> Result<Trace, TraceFileError> {
    let bytes = files::read_limited(path, MAX_TRACE_BYTES as u64).map_err(TraceFileError::File)?;
    Trace::decode(&bytes).map_err(|e| TraceFileError::Trace(path.to_path_buf(), e))
}

/// The module bytes a replay runs, and where they came from.
pub struct ReplayModule {
    /// The binary module (compiled, for `.wat`).
    pub bytes: Vec<u8>,
    /// Where it came from, for messages.
    pub shown: String,
    /// Whether its sha256 is the one the trace recorded.
    pub is_recorded: bool,
}

/// The most a replay accepts of a trace's policy: the default limits (what `tdm run` can ask
/// for without changing the code), with `max_memory_bytes` of linear memory. The intent budget
/// (fuel, deadline) is bounded from outside instead ([`replay_limit`]).
pub fn replay_ceiling(max_memory_bytes: u64) -> Policy {
    Policy { max_memory_bytes, ..Policy::default() }
}

/// The policy `trace` (read from `trace_path`) names, refused when it is above `ceiling`
/// ([`replay_ceiling`]).
pub fn trace_policy(trace: &Trace, trace_path: &Path, ceiling: &Policy) -> Result<Policy, TraceFileError> {
    let policy = trace.policy().map_err(|e| TraceFileError::Trace(trace_path.to_path_buf(), e))?;
    policy.check_within(ceiling).map_err(|e| TraceFileError::AboveCeiling(trace_path.to_path_buf(), e))?;
    Ok(policy)
}

/// How a trace written to `trace` names the module file `module`: its path from the trace's
/// folder (both made absolute from the working folder, the folders' symlinks resolved), so the
/// trace replays from any working folder and moves along with its module; `module` as given
/// when that cannot be worked out (not a file, a folder that cannot be resolved, no common
/// root, a path that is not UTF-8).
pub fn module_label(module: &Path, trace: &Path) -> String {
    module_from_trace_folder(module, trace)
        .and_then(|relative| relative.to_str().map(str::to_string))
        .unwrap_or_else(|| module.display().to_string())
}

fn module_from_trace_folder(module: &Path, trace: &Path) -> Option<PathBuf> {
    if !module.is_file() {
        return None;
    }
    let folder = |path: &Path| {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::canonicalize(parent).ok()
    };
    let module = folder(module)?.join(module.file_name()?);
    relative_path(&folder(trace)?, &module)
}

/// `target` as a path from the folder `from`, both absolute and without `.` or `..`; `None`
/// when they share no root (another drive).
fn relative_path(from: &Path, target: &Path) -> Option<PathBuf> {
    let from: Vec<_> = from.components().collect();
    let target: Vec<_> = target.components().collect();
    let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return None;
    }
    let mut relative: PathBuf = from[common..].iter().map(|_| std::path::Component::ParentDir).collect();
    relative.extend(&target[common..]);
    Some(relative)
}

/// Finds the module to replay `trace` (read from `trace_path`) with: `given` when the user
/// passed `--plugin`, else what the trace names (an installed plugin, or a file: its path is
/// taken from the trace's folder, where tdm records it from, and from the working folder, for
/// traces that hold it as it was typed; of the files found the first with the recorded hash
/// wins). A module whose hash differs from the trace's is an error unless it was given.
/// `policy` is the trace's, from [`trace_policy`].
pub fn module_for(
    trace: &Trace,
    trace_path: &Path,
    policy: &Policy,
    given: Option<&Path>,
    workspace: &Path,
) -> Result<ReplayModule, TraceFileError> {
    let limit = policy.max_module_bytes;
    let read = |path: &Path| {
        read_module_within(path, limit).map_err(|e: ModuleFileError| TraceFileError::Module(e.to_string()))
    };
    let named = &trace.header.module;
    // Each candidate with its sha256, hashed once.
    let hashed = |bytes: Vec<u8>, shown: String| {
        let found = contour_core::sha256(&bytes);
        (bytes, shown, found)
    };
    let (bytes, shown, found) = match (given, named.strip_prefix(INSTALLED_PREFIX)) {
        (Some(path), _) => hashed(read(path)?, path.display().to_string()),
        (None, Some(id)) => {
            let workspace = Workspace::existing(workspace.to_path_buf());
            let (_, package) = operator::installed_package(&workspace, id)
                .map_err(|e| TraceFileError::Module(format!("the trace names installed plugin `{id}`: {e}")))?;
            hashed(package.module.to_vec(), format!("installed plugin `{id}`"))
        }
        (None, None) => {
            let mut tried: Vec<PathBuf> = trace_path.parent().map(|dir| dir.join(named)).into_iter().collect();
            let as_named = PathBuf::from(named);
            if !tried.contains(&as_named) {
                tried.push(as_named);
            }
            let (mut other, mut failed) = (None, None);
            let mut recorded = None;
            for path in tried.iter().filter(|path| path.exists()) {
                match read(path).map(|bytes| hashed(bytes, path.display().to_string())) {
                    Ok(candidate) if candidate.2 == trace.header.module_sha256 => {
                        recorded = Some(candidate);
                        break;
                    }
                    Ok(candidate) => other = other.or(Some(candidate)),
                    Err(e) => failed = failed.or(Some(e)),
                }
            }
            match recorded.or(other) {
                Some(found) => found,
                None => return Err(failed.unwrap_or(TraceFileError::ModuleNotFound { named: named.clone(), tried })),
            }
        }
    };
    let is_recorded = found == trace.header.module_sha256;
    if !is_recorded && given.is_none() {
        return Err(TraceFileError::NotTheRecordedModule {
            module: shown,
            recorded: hex(&trace.header.module_sha256),
            found: hex(&found),
        });
    }
    if !is_recorded {
        // Another module is validated whole first, as `tdm run` would: under the trace's Lazy
        // mode (an installed plugin's) a function it never calls is never validated, and an
        // invalid module would replay as "identical".
        let whole = Policy { compilation: contour_core::Compilation::LazyTranslation, ..policy.clone() };
        let inspection = contour_core::Plugin::inspect(&bytes, &whole, contour_core::Profile::Marketplace)
            .map_err(|failure| TraceFileError::Module(format!("{shown}: {failure}")))?;
        if let Some(failure) = inspection.failures.first() {
            return Err(TraceFileError::Module(format!("{shown}: {failure}")));
        }
    }
    Ok(ReplayModule { bytes, shown, is_recorded })
}

/// The least and the most wall time [`replay_limit`] gives a replay by default.
pub const REPLAY_LIMIT_RANGE: (Duration, Duration) = (Duration::from_secs(10), Duration::from_secs(120));

/// How long a replay of `trace` may run by default: twice the deadlines its intents were
/// recorded under (`policy`, the trace's, from [`trace_policy`]; a replay does the same work as
/// the recording, which its deadlines bounded), kept within [`REPLAY_LIMIT_RANGE`]: a trace
/// names its own budget and deadline, so a forged one must not make a replay run for as long as
/// it says.
pub fn replay_limit(trace: &Trace, policy: &Policy) -> Duration {
    let per_intent_ms = policy.timeout_ms;
    let intents = u64::try_from(trace.intents.len()).unwrap_or(u64::MAX);
    let ms = per_intent_ms.saturating_mul(intents).saturating_mul(2);
    Duration::from_millis(ms).clamp(REPLAY_LIMIT_RANGE.0, REPLAY_LIMIT_RANGE.1)
}

/// Loads `module` under the trace's policy (from [`trace_policy`]) and replays the trace on it;
/// setting `stop` (from another thread) ends the replay with [`TraceError::Stopped`].
pub fn replay(
    trace: &Trace,
    trace_path: &Path,
    policy: Policy,
    module: &ReplayModule,
    stop: Arc<AtomicBool>,
) -> Result<ReplayReport, TraceFileError> {
    let plugin = Plugin::load(&module.bytes, policy)
        .map_err(|f| TraceFileError::Module(format!("{} does not load under the trace's policy: {f}", module.shown)))?;
    contour_core::replay_stoppable(trace, Arc::new(plugin), stop)
        .map_err(|e| TraceFileError::Trace(trace_path.to_path_buf(), e))
}

/// One line saying what a replay found (the CLI's text output).
pub fn summary(report: &ReplayReport) -> String {
    match &report.divergence {
        None => format!("replayed {} intents: identical (digest {})", report.intents, hex(&report.digest)),
        Some(divergence) => format!("diverged at {divergence}"),
    }
}

/// A replay's result as one JSON object (`tdm replay --json`).
pub fn report_json(report: &ReplayReport, module: &ReplayModule) -> Value {
    json!({
        "intents": report.intents,
        "identical": report.divergence.is_none(),
        "digest": hex(&report.digest),
        "module": module.shown,
        "moduleIsRecorded": module.is_recorded,
        "divergence": report.divergence.as_ref().map(divergence_json),
    })
}

/// A divergence for scripts: the intent (from 1), its kind, what was recorded and what the
/// replay gave where those are values, and the sentence the text output shows.
fn divergence_json(divergence: &Divergence) -> Value {
    let (kind, detail) = match &divergence.kind {
        DivergenceKind::InputMismatch { position, asked, recorded } => {
            ("input", json!({"position": position + 1, "asked": asked, "recorded": recorded}))
        }
        DivergenceKind::InputMissing { position, asked } => {
            ("inputMissing", json!({"position": position + 1, "asked": asked}))
        }
        DivergenceKind::InputsUnused { read, recorded } => {
            ("inputsUnused", json!({"read": read, "recorded": recorded}))
        }
        DivergenceKind::Response { at, recorded, replayed } => {
            ("response", json!({"at": at, "recorded": recorded, "replayed": replayed}))
        }
        DivergenceKind::Reason { recorded, replayed } => {
            ("reason", json!({"recorded": recorded, "replayed": replayed}))
        }
        DivergenceKind::Fuel { recorded, replayed } => ("fuel", json!({"recorded": recorded, "replayed": replayed})),
        DivergenceKind::PeakMemory { recorded, replayed } => {
            ("peakMemory", json!({"recorded": recorded, "replayed": replayed}))
        }
        DivergenceKind::Output => ("output", json!({})),
    };
    let mut value = json!({"intent": divergence.intent + 1, "kind": kind, "what": divergence.to_string()});
    if let (Value::Object(value), Value::Object(detail)) = (&mut value, detail) {
        value.extend(detail);
    }
    value
}

fn input_line(input: &Input) -> String {
    match input {
        Input::Clock { clock, ns } => format!("clock_time_get(clock {clock}) = {ns}"),
        Input::Resolution { clock, ns } => format!("clock_res_get(clock {clock}) = {ns}"),
        Input::Random { bytes } => {
            let shown: String = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
            let more = if bytes.len() > 16 { "..." } else { "" };
            format!("random_get({} bytes) = {shown}{more}", bytes.len())
        }
        Input::Sleep { ns, cut } => {
            format!("sleep {ns} ns{}", if *cut { " (cut by the deadline)" } else { "" })
        }
        Input::Host { call, answer } => {
            let result = match &answer.result {
                Ok(output) => files::truncated(output, 200),
                Err(failure) => format!("failed {}: {}", failure.reason, files::truncated(&failure.detail, 200)),
            };
            let spent = if answer.fuel > 0 { format!(" (spent {} fuel)", answer.fuel) } else { String::new() };
            format!("host call {} -> {result}{spent}", files::truncated(call, 200))
        }
    }
}

/// The trace, readably (`tdm replay --show`): the header, then per intent its request, inputs,
/// outcome and figures. Lines are plain text; the printer escapes them.
pub fn show(trace: &Trace) -> Vec<String> {
    let header = &trace.header;
    let policy = &header.policy;
    let mut lines = vec![
        format!("trace format {} (contour {}, wasmi {})", header.format, header.contour, header.wasmi),
        format!("module: {} (sha256 {})", header.module, hex(&header.module_sha256)),
        format!(
            "policy: memory {} B, fuel {} per intent, start fuel {}, deadline {} ms, response {} B",
            policy.max_memory_bytes,
            policy.fuel_per_intent,
            policy.start_fuel,
            policy.timeout_ms,
            policy.max_response_bytes
        ),
        format!("grants: {}", if header.grants.is_empty() { "none".into() } else { header.grants.join(", ") }),
        format!("intents: {}, digest {}", trace.intents.len(), hex(&contour_core::recorded_digest(trace))),
    ];
    for (index, intent) in trace.intents.iter().enumerate() {
        let status = intent.reason.as_deref().unwrap_or("completed");
        lines.push(format!(
            "intent {}: {status}, fuel {} (launch {}), peak memory {} B{}",
            index + 1,
            intent.fuel,
            intent.launch_fuel,
            intent.peak_memory,
            intent.cut.map_or_else(String::new, |c| format!(", cut by the deadline at fuel {}", c.fuel))
        ));
        lines.push(format!("  request:  {}", files::truncated(&String::from_utf8_lossy(&intent.request), 400)));
        for input in &intent.inputs {
            lines.push(format!("  input:    {}", input_line(input)));
        }
        lines.push(format!("  response: {}", files::truncated(&String::from_utf8_lossy(&intent.response), 400)));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::relative_path;
    use std::path::{Path, PathBuf};

    #[test]
    fn a_module_path_is_written_from_the_trace_folder() {
        let from = |dir: &str, target: &str| relative_path(Path::new(dir), Path::new(target));
        assert_eq!(from("/w", "/w/sub/e.wat"), Some(PathBuf::from("sub/e.wat")));
        assert_eq!(from("/w/traces", "/w/sub/e.wat"), Some(PathBuf::from("../sub/e.wat")));
        assert_eq!(from("/w/a/b", "/w/e.wat"), Some(PathBuf::from("../../e.wat")));
        assert_eq!(from("/", "/e.wat"), Some(PathBuf::from("e.wat")));
        assert_eq!(from("/w/sub", "/w/sub/e.wat"), Some(PathBuf::from("e.wat")));
    }
}
