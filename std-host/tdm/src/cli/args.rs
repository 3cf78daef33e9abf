//! Flag groups shared by several subcommands, each defined once (so `--help`, completions and
//! every subcommand agree): the workspace, the limit flags, the host's data files, the params.
//! A subcommand flattens the groups it takes; adding a flag to a group adds it everywhere.

use super::report::CliError;
use clap::Args;
use contour_core::DEFAULT_MAX_REQUEST_BYTES;
use std::path::PathBuf;
use std::time::Duration;
use tdm_sdk::intents::log::LogLevel;
use tdm_sdk::limits::{self, Limits};
use tdm_sdk::params::{self, Params, ParamsError, ParamsSource};
use tdm_sdk::session::{CommandOptions, HostFiles, SessionOptions};

/// `--workspace DIR`.
#[derive(Debug, Clone, Args)]
pub struct WorkspaceArg {
    /// The workspace folder [default: tdm in the platform's data folder, e.g. ~/.local/share/tdm]
    #[arg(long, value_name = "DIR", env = "TDM_WORKSPACE", value_parser = path_or_empty)]
    pub(crate) workspace: Option<PathBuf>,
}

/// A path as given; empty (an empty `$TDM_WORKSPACE`) means the default, as unset does.
fn path_or_empty(text: &str) -> Result<PathBuf, std::convert::Infallible> {
    Ok(PathBuf::from(text))
}

/// `--json`.
#[derive(Debug, Clone, Copy, Args)]
pub struct JsonArg {
    /// Print JSON (one document; errors as {"status":"error",...}).
    #[arg(long)]
    pub(crate) json: bool,
}

/// The limit flags of every subcommand that runs guest code.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Fuel budget per intent (deterministic instruction count; `_` may group digits)
    /// [default: 2_000_000_000, or the approved budget]
    #[arg(long, value_name = "N", value_parser = limits::parse_fuel, allow_negative_numbers = true)]
    pub(crate) fuel: Option<u64>,
    /// Wall-clock deadline per intent: seconds (2, 0.5, 2s) or milliseconds (500ms)
    /// [default: 5s, or the approved deadline]
    #[arg(long, value_name = "SECS", value_parser = limits::parse_timeout, allow_negative_numbers = true)]
    pub(crate) timeout: Option<Duration>,
    /// Linear memory limit: bytes or a size with a unit (64MiB, 512KiB, 1GiB)
    /// [default: 64MiB, or the approved limit]
    #[arg(long, value_name = "SIZE", value_parser = limits::parse_memory, allow_negative_numbers = true)]
    pub(crate) max_memory: Option<u64>,
    /// Refuse a module that uses SIMD (v128 instructions) at load, as the firmware does
    #[arg(long)]
    pub(crate) no_simd: bool,
    /// Print fuel used, launch fuel, peak memory, time and host calls to stderr (JSON with --json)
    #[arg(long)]
    pub(crate) stats: bool,
}

impl LimitArgs {
    /// The limits asked for.
    pub fn limits(&self) -> Limits {
        Limits { fuel: self.fuel, timeout: self.timeout, max_memory: self.max_memory, no_simd: self.no_simd }
    }
}

/// The flags every subcommand that runs guest code takes (run, call, repl, exec): the limits
/// and `--seed`, one group so each runner flattens it once.
#[derive(Debug, Clone, Args)]
pub struct RunnerArgs {
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
    #[command(flatten)]
    pub(crate) seed: SeedArg,
}

impl RunnerArgs {
    /// The session options these flags and the global flags ask for: the one conversion from
    /// flags to library options every runner of intents (run, call, repl) makes. What only
    /// some runners have (`--grant`, the host's files, a cancel flag) is set on top.
    pub fn session_options(&self, global: &GlobalArgs) -> SessionOptions {
        SessionOptions {
            limits: self.limits.limits(),
            seed: self.seed.seed,
            log_level: global.shown_log_level(),
            quiet: global.quiet,
            ..SessionOptions::default()
        }
    }

    /// The options of a command session (`tdm exec`) these flags ask for: the same conversion
    /// of the limit flags and `--seed`.
    pub fn command_options(&self) -> CommandOptions {
        CommandOptions { limits: self.limits.limits(), seed: self.seed.seed }
    }
}

/// `--seed N`.
#[derive(Debug, Clone, Args)]
pub struct SeedArg {
    /// Use the virtual clock and a generator seeded with N instead of the real clock and OS entropy
    #[arg(long, value_name = "N", value_parser = parse_seed, allow_negative_numbers = true)]
    pub(crate) seed: Option<u64>,
}

/// `--record FILE`.
#[derive(Debug, Clone, Args)]
pub struct RecordArg {
    /// Record the session (every input the plugin reads, every outcome and fuel figure) into
    /// FILE, for `tdm replay FILE`
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<std::path::PathBuf>,
}

/// `--params JSON|@FILE|-` or `--input TEXT`.
#[derive(Debug, Clone, Args)]
pub struct ParamsArg {
    /// The intent's params: JSON, @FILE (read from a file) or - (read from stdin), up to the
    /// 1 MiB request limit
    #[arg(long, value_name = "JSON|@FILE|-", default_value = "{}", allow_hyphen_values = true)]
    pub(crate) params: String,
    /// The intent's params as raw text: sent as one JSON string (as `extism call --input`)
    #[arg(long, value_name = "TEXT", conflicts_with = "params", allow_hyphen_values = true)]
    pub(crate) input: Option<String>,
}

impl ParamsArg {
    /// Where the params come from: `--input`'s text as a JSON string, else `--params`.
    pub fn source(&self) -> ParamsSource {
        match &self.input {
            Some(text) => ParamsSource::Inline(serde_json::Value::from(text.as_str()).to_string()),
            None => ParamsSource::parse(&self.params),
        }
    }

    /// The params, read (from stdin for `-`) up to the default request limit; a problem with
    /// them is a usage error (params that are not JSON: with a hint showing the JSON form).
    pub fn read(&self) -> Result<Params, CliError> {
        let source = self.source();
        params::read(&source, u64::from(DEFAULT_MAX_REQUEST_BYTES), std::io::stdin().lock()).map_err(|e| {
            let error = CliError::usage(e.to_string());
            match (&e, &source) {
                (ParamsError::NotJson { .. }, ParamsSource::Inline(text)) => error.hint(not_json_hint(text)),
                (ParamsError::NotJson { .. }, _) => {
                    error.hint("params are JSON: a string is quoted (\"hello\"), an object is {\"key\": ...}")
                }
                _ => error,
            }
        })
    }
}

/// The hint for `--params TEXT` that is not JSON: params are JSON, here is TEXT quoted as a
/// JSON string (in single quotes for the shell), or `--input` takes it raw.
fn not_json_hint(text: &str) -> String {
    let quoted = serde_json::Value::from(text).to_string();
    if quoted.contains('\'') {
        return "params are JSON: quote a string (--params '\"hello\"'), or pass raw text with --input TEXT"
            .to_string();
    }
    format!("params are JSON: for the text as a string, --params '{quoted}' (or --input TEXT for raw text)")
}

/// Where the host intents of a module file find their data.
#[derive(Debug, Clone, Args)]
pub struct HostArgs {
    /// The plugin's assets for dist.read [default: dist/ next to the module]
    #[arg(long, value_name = "DIR")]
    pub(crate) dist: Option<PathBuf>,
    /// The vault file (must exist) [default: the workspace's vault.json, if any]
    #[arg(long, value_name = "FILE")]
    pub(crate) vault: Option<PathBuf>,
    /// The operator context file (must exist) [default: the workspace's context.json, if any]
    #[arg(long, value_name = "FILE")]
    pub(crate) context: Option<PathBuf>,
    /// The audit log to append to [default: the workspace's audit.jsonl]
    #[arg(long, value_name = "FILE")]
    pub(crate) audit: Option<PathBuf>,
    /// A plugin tool.invoke may run: ID=MODULE (repeatable; still needs --grant tool:ID)
    #[arg(long = "tool", value_name = "ID=MODULE", value_parser = parse_tool)]
    pub(crate) tools: Vec<(String, PathBuf)>,
    #[command(flatten)]
    pub(crate) ws: WorkspaceArg,
}

impl HostArgs {
    /// The session's view of these flags.
    pub fn files(&self) -> HostFiles {
        HostFiles {
            dist: self.dist.clone(),
            vault: self.vault.clone(),
            context: self.context.clone(),
            audit: self.audit.clone(),
            tools: self.tools.clone(),
            workspace: self.ws.workspace.clone(),
        }
    }
}

/// Flags every subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Show less: no plugin output or plugin log lines on stderr (errors still show)
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
    /// The lowest level of plugin log lines shown on stderr: debug, info, warn, error or off
    #[arg(long, value_name = "LEVEL", global = true, default_value = "debug", value_parser = parse_log_level)]
    pub(crate) log_level: LogLevel,
}

impl GlobalArgs {
    /// The log level in effect (`-q` is `off`).
    pub fn shown_log_level(&self) -> LogLevel {
        if self.quiet {
            LogLevel::Off
        } else {
            self.log_level
        }
    }
}

fn parse_log_level(text: &str) -> Result<LogLevel, String> {
    LogLevel::from_name(text).ok_or_else(|| format!("`{text}` is not a level: use debug, info, warn, error or off"))
}

fn parse_seed(text: &str) -> Result<u64, String> {
    text.trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{text}` is not a seed: give a whole number from 0 to {}", u64::MAX))
}

fn parse_tool(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((id, path)) if !id.is_empty() && !path.is_empty() => Ok((id.to_string(), PathBuf::from(path))),
        _ => Err(format!("`{text}` is not ID=MODULE")),
    }
}

/// Parses `--env K=V` or `--env NAME` (inherit NAME from tdm's environment).
pub fn parse_env(text: &str) -> Result<String, String> {
    let key = text.split_once('=').map_or(text, |(key, _)| key);
    if key.is_empty() || key.contains('\0') {
        return Err(format!("`{text}` is not KEY=VALUE or a variable NAME"));
    }
    Ok(text.to_string())
}
