//! Deterministic record and replay (docs/ABI.md section 8). A `Trace` (postcard) holds a
//! versioned header (magic, format version, contour and wasmi versions, the module's sha256,
//! the policy and the grants) and, per intent, the request bytes, every input in the order the
//! guest read it, the response bytes, the reason, fuel, launch fuel, peak memory, a digest of
//! the captured stdout/stderr, and where a deadline cut it. Recording wraps the embedder's
//! `Environment` and `HostIntents` (`record`); replay is a second implementation of the same two
//! traits that serves the recorded inputs (`replay`), so both run the one execution path.
//!
//! | module | owns |
//! |---|---|
//! | `footprint` | what a trace's decoded form may hold, counted before it is decoded |
//! | `record` | the recording decorators and `Record`, recording added to `Sandbox` |
//! | `replay` | the replaying environment, `replay`, and the first divergence |

mod footprint;
mod record;
mod replay;

pub use footprint::{INPUT_COST, INTENT_COST, MAX_TRACE_FOOTPRINT};

pub use record::Record;
pub use replay::{replay, replay_bytes, replay_stoppable, Divergence, DivergenceKind, ReplayReport};

pub use crate::meter::Cut;
pub use crate::policy::PolicyRecord;
use crate::policy::{Policy, PolicyError};
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The first bytes of every trace.
pub const MAGIC: [u8; 8] = *b"CONTOURT";
/// The trace format version this build writes and reads.
pub const FORMAT_VERSION: u16 = 1;
/// The largest trace this build writes or reads: 64 MiB. A recording that would grow past it
/// fails when it is finished; a larger file is refused before it is decoded.
pub const MAX_TRACE_BYTES: usize = 64 * 1024 * 1024;
/// The wasmi version this build runs (traces name it; a different one may change fuel).
pub const WASMI_VERSION: &str = "2.0.0";

/// A sha256 digest.
pub type Digest = [u8; 32];

/// sha256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> Digest {
    Sha256::digest(bytes).into()
}

/// A digest as lower-case hex.
pub fn hex(digest: &Digest) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a trace starts with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: [u8; 8],
    /// The trace format version (1 in this build).
    pub format: u16,
    /// The contour-core version that recorded it.
    pub contour: String,
    /// The wasmi version that ran it.
    pub wasmi: String,
    /// sha256 of the module bytes that ran.
    pub module_sha256: Digest,
    /// Where the module came from when it was recorded (a file path or a plugin id); a hint for
    /// finding it again, never trusted as a path by core.
    pub module: String,
    /// The policy it ran under.
    pub policy: PolicyRecord,
    /// The permissions it was granted.
    pub grants: Vec<String>,
}

/// One input, as the guest read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Input {
    /// `clock_time_get` (and `poll_oneoff` with an absolute deadline): the clock's WASI id and
    /// the value read.
    Clock {
        /// WASI clock id.
        clock: u8,
        /// Nanoseconds read.
        ns: u64,
    },
    /// `clock_res_get`: the clock's WASI id and its resolution.
    Resolution {
        /// WASI clock id.
        clock: u8,
        /// Nanoseconds.
        ns: u64,
    },
    /// `random_get`: the bytes handed out.
    Random {
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// A `poll_oneoff` sleep: how long was asked for, and whether the deadline cut it.
    Sleep {
        /// Nanoseconds asked for.
        ns: u64,
        /// Whether the deadline cut it short.
        cut: bool,
    },
    /// A host call the embedder served: the call (as canonical JSON) and its answer.
    Host {
        /// `HostCall::describe()` of the call.
        call: String,
        /// What the embedder answered (boxed: it keeps every other input small).
        answer: Box<RecordedAnswer>,
    },
}

impl Input {
    /// A short name of the kind of input, for divergence reports.
    pub fn kind(&self) -> String {
        match self {
            Self::Clock { clock, .. } => format!("clock_time_get(clock {clock})"),
            Self::Resolution { clock, .. } => format!("clock_res_get(clock {clock})"),
            Self::Random { bytes } => format!("random_get({} bytes)", bytes.len()),
            Self::Sleep { ns, .. } => format!("a sleep of {ns} ns"),
            Self::Host { call, .. } => format!("host call {call}"),
        }
    }

    fn size(&self) -> usize {
        match self {
            Self::Clock { .. } | Self::Resolution { .. } | Self::Sleep { .. } => 16,
            Self::Random { bytes } => bytes.len() + 8,
            Self::Host { call, answer } => call.len() + answer.size(),
        }
    }
}

/// A failure an embedder answered, by reason name and detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedFailure {
    /// The `blockedReason` wire name.
    pub reason: String,
    /// The failure's detail.
    pub detail: String,
}

/// An embedder's answer to a host call, with what it spent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedAnswer {
    /// The output JSON text, or the failure.
    pub result: Result<String, RecordedFailure>,
    /// Fuel spent on the plugin's behalf.
    pub fuel: u64,
    /// Host calls made on its behalf.
    pub host_calls: u32,
    /// Host-call bytes moved on its behalf.
    pub host_bytes: u64,
    /// Output written on its behalf to stdout.
    pub stdout: Vec<u8>,
    /// And to stderr.
    pub stderr: Vec<u8>,
}

impl RecordedAnswer {
    fn size(&self) -> usize {
        let result = match &self.result {
            Ok(output) => output.len(),
            Err(failure) => failure.reason.len() + failure.detail.len(),
        };
        result + self.stdout.len() + self.stderr.len() + 32
    }
}

/// One intent of a trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntentTrace {
    /// The JSON-RPC request bytes.
    pub request: Vec<u8>,
    /// Every input read, in order (the launch this intent triggered included).
    pub inputs: Vec<Input>,
    /// The outcome JSON bytes.
    pub response: Vec<u8>,
    /// The `blockedReason` of a failed outcome.
    pub reason: Option<String>,
    /// Fuel used (launch included).
    pub fuel: u64,
    /// The part of `fuel` spent launching.
    pub launch_fuel: u64,
    /// Peak linear memory in bytes.
    pub peak_memory: u64,
    /// sha256 over the captured stdout, stderr and the count of dropped bytes.
    pub output_digest: Digest,
    /// Where the deadline cut this intent, when it did.
    pub cut: Option<Cut>,
}

/// A recorded session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// The header.
    pub header: Header,
    /// The intents, in order.
    pub intents: Vec<IntentTrace>,
}

/// Why trace bytes could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceError {
    /// More than [`MAX_TRACE_BYTES`].
    TooLarge {
        /// Bytes found.
        size: u64,
    },
    /// Its records come to more than [`MAX_TRACE_FOOTPRINT`] (their bytes plus [`INPUT_COST`]
    /// per input and a cost per intent): found before decoding, or while recording.
    Footprint {
        /// The footprint found (or that the recording would have needed, at least).
        size: u64,
    },
    /// The bytes do not start with [`MAGIC`]: not a Contour trace.
    NotATrace,
    /// A format version this build does not read.
    UnsupportedVersion {
        /// The version found.
        found: u16,
    },
    /// The bytes end in the middle of the trace.
    Truncated,
    /// Bytes follow the end of the trace.
    TrailingBytes {
        /// How many.
        count: usize,
    },
    /// The bytes do not decode as a trace.
    Malformed(String),
    /// The trace's policy cannot be held on this host (the field named).
    Policy(&'static str),
    /// The module given to replay fails to load under the trace's policy, or is not the one
    /// the trace recorded.
    Module(String),
    /// Recording could not start.
    Recording(&'static str),
    /// The replay was stopped from outside (its embedder's wall-clock limit or Ctrl-C) while
    /// it replayed this intent (0-based): nothing is known of that intent or the ones after.
    Stopped {
        /// The intent that was running.
        intent: usize,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { size } => write!(f, "the trace has {size} bytes; the limit is {MAX_TRACE_BYTES}"),
            Self::Footprint { size } => write!(
                f,
                "the trace's records come to {size} bytes (their bytes plus {INPUT_COST} per input and {INTENT_COST} per intent); the limit is {MAX_TRACE_FOOTPRINT}"
            ),
            Self::NotATrace => f.write_str("not a Contour trace (the magic bytes are missing)"),
            Self::UnsupportedVersion { found } => {
                write!(f, "trace format version {found}; this build reads version {FORMAT_VERSION}")
            }
            Self::Truncated => f.write_str("the trace is truncated"),
            Self::TrailingBytes { count } => write!(f, "{count} bytes follow the end of the trace"),
            Self::Malformed(why) => write!(f, "the trace is malformed: {why}"),
            Self::Policy(field) => write!(f, "the trace's policy field `{field}` does not fit this host"),
            Self::Module(why) => write!(f, "the module cannot be replayed: {why}"),
            Self::Recording(why) => write!(f, "cannot record: {why}"),
            Self::Stopped { intent } => write!(f, "the replay was stopped during intent {}", intent + 1),
        }
    }
}

impl core::error::Error for TraceError {}

/// The part of the header read before anything else, so a wrong file or version is named
/// exactly.
#[derive(Deserialize)]
struct Preamble {
    magic: [u8; 8],
    format: u16,
}

impl Trace {
    /// The trace as bytes (postcard).
    pub fn encode(&self) -> Result<Vec<u8>, TraceError> {
        let bytes = postcard::to_allocvec(self).map_err(|e| TraceError::Malformed(format!("{e}")))?;
        if bytes.len() > MAX_TRACE_BYTES {
            return Err(TraceError::TooLarge { size: bytes.len() as u64 });
        }
        Ok(bytes)
    }

    /// Reads untrusted trace bytes: bounded, versioned, never a panic.
    pub fn decode(bytes: &[u8]) -> Result<Self, TraceError> {
        if bytes.len() > MAX_TRACE_BYTES {
            return Err(TraceError::TooLarge { size: bytes.len() as u64 });
        }
        if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
            return Err(TraceError::NotATrace);
        }
        let (preamble, _) = postcard::take_from_bytes::<Preamble>(bytes).map_err(decode_error)?;
        if preamble.magic != MAGIC {
            return Err(TraceError::NotATrace);
        }
        if preamble.format != FORMAT_VERSION {
            return Err(TraceError::UnsupportedVersion { found: preamble.format });
        }
        let footprint = footprint::of(bytes).map_err(decode_error)?;
        if footprint > MAX_TRACE_FOOTPRINT {
            return Err(TraceError::Footprint { size: footprint as u64 });
        }
        let (trace, rest) = postcard::take_from_bytes::<Self>(bytes).map_err(decode_error)?;
        if !rest.is_empty() {
            return Err(TraceError::TrailingBytes { count: rest.len() });
        }
        Ok(trace)
    }

    /// The policy the trace was recorded under.
    pub fn policy(&self) -> Result<Policy, TraceError> {
        self.header.policy.policy().map_err(|e| match e {
            PolicyError::DoesNotFit(field) => TraceError::Policy(field),
            _ => TraceError::Policy("policy"),
        })
    }
}

fn decode_error(e: postcard::Error) -> TraceError {
    match e {
        postcard::Error::DeserializeUnexpectedEnd => TraceError::Truncated,
        other => TraceError::Malformed(format!("{other}")),
    }
}

/// The digest of a run: sha256 over every intent's response bytes, reason, fuel and peak
/// memory, in order. The same trace replayed on any host must give the same digest.
#[derive(Clone)]
pub struct RunDigest(Sha256);

impl Default for RunDigest {
    fn default() -> Self {
        Self(Sha256::new())
    }
}

impl RunDigest {
    /// Adds one intent.
    pub fn add(&mut self, response: &[u8], reason: Option<&str>, fuel: u64, peak_memory: u64) {
        self.0.update((response.len() as u64).to_le_bytes());
        self.0.update(response);
        let reason = reason.unwrap_or("");
        self.0.update((reason.len() as u64).to_le_bytes());
        self.0.update(reason.as_bytes());
        self.0.update(fuel.to_le_bytes());
        self.0.update(peak_memory.to_le_bytes());
    }

    /// The digest so far.
    pub fn finish(self) -> Digest {
        self.0.finalize().into()
    }
}

/// The digest of an intent's captured output: stdout, stderr and the dropped count.
pub fn output_digest(stdout: &[u8], stderr: &[u8], dropped: u64) -> Digest {
    let mut hasher = Sha256::new();
    hasher.update((stdout.len() as u64).to_le_bytes());
    hasher.update(stdout);
    hasher.update((stderr.len() as u64).to_le_bytes());
    hasher.update(stderr);
    hasher.update(dropped.to_le_bytes());
    hasher.finalize().into()
}

/// The digest a trace's own records give (what a faithful replay must reproduce).
pub fn recorded_digest(trace: &Trace) -> Digest {
    let mut digest = RunDigest::default();
    for intent in &trace.intents {
        digest.add(&intent.response, intent.reason.as_deref(), intent.fuel, intent.peak_memory);
    }
    digest.finish()
}

/// The footprint of an input (for the recording bound): see [`footprint`].
pub(crate) fn input_size(input: &Input) -> usize {
    footprint::input(input)
}
