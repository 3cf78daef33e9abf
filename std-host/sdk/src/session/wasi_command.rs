//! A WASI command's session: the module loaded under the command policy (the shared limit
//! flags over the command defaults), then one run end to end behind one call, with the
//! session's environment, tdm's own stdio (output written within the deadline) and its
//! preopens (each read-only unless asked writable), returning a typed report.

use super::command::{command_environment, CommandOutput};
use crate::command::command_policy;
use crate::dirfs::{DirFs, PreopenDir};
use crate::environment::Cancel;
use crate::limits::Limits;
use crate::module_file::{read_module_within, ModuleFileError};
use crate::module_kind::is_plugin;
use crate::stdio::{stdio_kinds, StdinReader};
use contour_core::{run_command, CommandReport, Failure, HostFs, Plugin, Profile, WasiConfig};
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

/// How a command session is opened: the shared limit flags and the seed.
#[derive(Debug, Clone, Default)]
pub struct CommandOptions {
    /// Limit flags, over the command defaults (a command's default fuel scales with its
    /// deadline: [`command_policy`]).
    pub limits: Limits,
    /// `--seed N`: virtual clock and seeded entropy.
    pub seed: Option<u64>,
}

/// What one command run is given.
#[derive(Debug, Clone, Default)]
pub struct CommandRequest {
    /// argv, `argv[0]` included.
    pub args: Vec<String>,
    /// The environment, as `KEY=VALUE` lines.
    pub environ: Vec<String>,
    /// Host directories to preopen, each at its guest path, read-only unless it says writable.
    pub preopens: Vec<PreopenDir>,
    /// Stops the command at its next deadline check (and its stdin and output waits) when set.
    pub cancel: Option<Cancel>,
}

/// What a command run did.
#[derive(Debug)]
pub struct CommandRun {
    /// Core's report: how it exited, its fuel and memory.
    pub report: CommandReport,
    /// The fuel budget it ran with.
    pub budget: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// The cancel was set while it ran (and is cleared now).
    pub cancelled: bool,
}

/// Why a command session did not open or run.
#[derive(Debug)]
pub enum CommandError {
    /// The module file could not be read, or its `.wat` text does not compile.
    Read(ModuleFileError),
    /// The sandbox refused the module at load.
    Refused {
        /// Why.
        failure: Failure,
        /// It is a TDM plugin (run with `tdm run`), not a command.
        is_plugin: bool,
    },
    /// A preopened directory could not be opened.
    Preopen(std::io::Error),
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read(e) => e.fmt(f),
            Self::Refused { failure, .. } => f.write_str(&failure.message()),
            Self::Preopen(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CommandError {}

/// A WASI command module loaded and ready to run.
pub struct CommandSession {
    plugin: Plugin,
    seed: Option<u64>,
}

impl fmt::Debug for CommandSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandSession").field("seed", &self.seed).finish_non_exhaustive()
    }
}

impl CommandSession {
    /// Reads the module at `path` and loads it as a command under the limit flags.
    pub fn open_file(path: &Path, options: &CommandOptions) -> Result<Self, CommandError> {
        let base = command_policy(options.limits.fuel, options.limits.timeout);
        let policy = options.limits.apply(&base);
        let bytes = read_module_within(path, policy.max_module_bytes).map_err(CommandError::Read)?;
        let plugin = Plugin::load_as(&bytes, policy, Profile::Command)
            .map_err(|failure| CommandError::Refused { failure, is_plugin: is_plugin(&bytes) })?;
        Ok(Self { plugin, seed: options.seed })
    }

    /// Runs the command's `_start` end to end; a command that fails is a report too.
    pub fn run(&self, request: CommandRequest) -> Result<CommandRun, CommandError> {
        let fs: Option<Box<dyn HostFs>> = if request.preopens.is_empty() {
            None
        } else {
            Some(Box::new(DirFs::open(&request.preopens).map_err(CommandError::Preopen)?))
        };
        let cancel = request.cancel;
        let wasi = WasiConfig {
            args: request.args,
            environ: request.environ,
            fs,
            output: Some(Box::new(CommandOutput::stdio(cancel.clone()))),
            stdin: Some(Box::new(StdinReader::stdin().with_cancel(cancel.clone()))),
            stdio: stdio_kinds(),
        };
        let budget = self.plugin.policy().fuel_per_intent;
        let env = command_environment(self.seed, self.plugin.policy(), cancel.clone());
        let started = Instant::now();
        let report = run_command(&self.plugin, env, wasi);
        let cancelled = cancel.as_ref().is_some_and(Cancel::clear);
        Ok(CommandRun { report, budget, elapsed: started.elapsed(), cancelled })
    }
}
