//! The `tdm` command line: flags are parsed here and wired to `contour_core`; nothing else
//! lives here. The contract (stdout, exit codes) is documented in README.md and kept exactly:
//! `run` prints one JSON outcome and exits 0 (completed), 1 (failed) or 2 (usage or I/O error).

use crate::dirfs::DirFs;
use crate::environment::{HostEnvironment, SeededEnvironment};
use crate::files::FileError;
use crate::intents::audit::{visit_entries, AuditLog};
use crate::intents::context::Context;
use crate::intents::dist::Dist;
use crate::intents::log::Log;
use crate::intents::net::Net;
use crate::intents::tool::{sha256_hex, Tools};
use crate::intents::vault::Vault;
use crate::intents::{PluginIdentity, StdIntents};
use crate::module_file::{read_module, read_module_within, ModuleFileError};
use crate::operator::{self, LaunchError, OperatorError, Source};
use crate::package::{Hub, Package, PackageError};
use crate::package_copy::CopyError;
use crate::terminal::{self, errln, outln};
use crate::workspace::{now_ms, LastCall, PluginState, Workspace, WorkspaceError};
use crate::workspace::{workspace_dir, AUDIT_FILE, CONTEXT_FILE, VAULT_FILE};
use clap::{Args, Parser, Subcommand};
use contour_core::check::{ImportVerdict, Inspection};
use contour_core::env::Environment;
use contour_core::wasi::{OutputSink, Written};
use contour_core::{
    run_command, BlockedReason, CommandExit, Failure, IntentReport, Outcome, Permissions, Plugin, Policy, Profile,
    Sandbox, WasiConfig,
};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit code: the intent completed.
pub const EXIT_COMPLETED: u8 = 0;
/// Exit code: the intent (or the load) failed; stdout holds the failed outcome.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: bad usage or an I/O error; stderr says what.
pub const EXIT_USAGE: u8 = 2;
/// `tdm exec`: the module was rejected at load.
pub const EXIT_EXEC_REJECTED: u8 = 125;
/// `tdm exec`: the module trapped.
pub const EXIT_EXEC_TRAP: u8 = 126;
/// `tdm exec`: the module hit a limit (fuel, deadline, memory, stack).
pub const EXIT_EXEC_LIMIT: u8 = 127;

/// Contour: run untrusted WebAssembly plugins in a sandbox.
#[derive(Debug, Parser)]
#[command(name = "tdm", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one intent of a plugin and print its outcome as one JSON object.
    Run(RunArgs),
    /// Show a module's exports, imports (allowed or rejected, and why), memory and verdict.
    Inspect(InspectArgs),
    /// Run a WASI Preview1 command module's `_start` in the sandbox.
    Exec(ExecArgs),
    /// Print the audit log: one line per host-call decision.
    Audit(AuditArgs),
    /// List a hub folder's plugins.
    Hub(HubArgs),
    /// Install a plugin from a hub (ID[@VERSION] --hub DIR) or a package folder (PATH). Never runs it.
    Install(InstallArgs),
    /// Approve an installed plugin's launch, bound to its module hash and requested permissions.
    Approve(ApproveArgs),
    /// Withdraw a plugin's approval.
    Revoke(IdArgs),
    /// Remove an installed plugin and its approval (the audit log stays).
    Uninstall(IdArgs),
    /// Run one intent of an approved plugin with its approved permissions.
    Call(CallArgs),
    /// Show the workspace.
    Workspace(WorkspaceCommand),
    /// Explore a plugin interactively: a module file, or an approved plugin's id.
    Repl(ReplArgs),
}

#[derive(Debug, Args)]
struct ReplArgs {
    /// A module file (.wasm or .wat), or the id of an approved plugin in the workspace.
    target: String,
    /// Grant a permission (file plugins only; an installed plugin runs with its approval).
    #[arg(long = "grant", value_name = "PERM")]
    grants: Vec<String>,
    /// Use the virtual clock and a generator seeded with N.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    #[command(flatten)]
    ws: WorkspaceArg,
}

/// `--workspace DIR`.
#[derive(Debug, Args)]
struct WorkspaceArg {
    /// The workspace folder (default: $TDM_WORKSPACE, else the platform data dir).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct HubArgs {
    #[command(subcommand)]
    command: HubCommand,
}

#[derive(Debug, Subcommand)]
enum HubCommand {
    /// List the plugins a hub offers.
    List {
        /// The hub folder (holding index.json).
        #[arg(long, value_name = "DIR")]
        hub: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
struct InstallArgs {
    /// ID[@VERSION] with --hub, else a package folder.
    target: String,
    /// The hub folder.
    #[arg(long, value_name = "DIR")]
    hub: Option<PathBuf>,
    /// Accept a paid plugin's price (it still ends `installed`, pending approval).
    #[arg(long)]
    accept_price: bool,
    #[command(flatten)]
    ws: WorkspaceArg,
}

#[derive(Debug, Args)]
struct ApproveArgs {
    /// The plugin id.
    id: String,
    /// Approve without asking (for scripts).
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    ws: WorkspaceArg,
}

#[derive(Debug, Args)]
struct IdArgs {
    /// The plugin id.
    id: String,
    #[command(flatten)]
    ws: WorkspaceArg,
}

#[derive(Debug, Args)]
struct CallArgs {
    /// The plugin id.
    id: String,
    /// The intent to run.
    method: String,
    /// The intent's params, as JSON.
    #[arg(long, value_name = "JSON", default_value = "{}", value_parser = parse_json)]
    params: Value,
    /// Use the virtual clock and a generator seeded with N.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Print fuel used, peak memory and time to stderr.
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    ws: WorkspaceArg,
}

#[derive(Debug, Args)]
struct WorkspaceCommand {
    #[command(subcommand)]
    command: WorkspaceSub,
}

#[derive(Debug, Subcommand)]
enum WorkspaceSub {
    /// Every plugin's state, permissions, limits and last call; the workspace path and audit size.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        ws: WorkspaceArg,
    },
}

#[derive(Debug, Args)]
struct AuditArgs {
    /// Only this plugin's decisions.
    #[arg(long, value_name = "ID")]
    plugin: Option<String>,
    /// Print JSON lines instead of a table.
    #[arg(long)]
    json: bool,
    /// The audit file (default: the workspace's).
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// The workspace folder (default: $TDM_WORKSPACE, else the platform data dir).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
}

/// Limits shared by `run` and `exec`.
#[derive(Debug, Args)]
struct LimitArgs {
    /// Fuel budget (deterministic instruction count) for the intent.
    #[arg(long, value_name = "N")]
    fuel: Option<u64>,
    /// Wall-clock deadline in seconds (fractions allowed).
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    timeout: Option<Duration>,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The plugin module (.wasm or .wat).
    plugin: PathBuf,
    /// The intent to run.
    method: String,
    /// The intent's params, as JSON.
    #[arg(long, value_name = "JSON", default_value = "{}", value_parser = parse_json)]
    params: Value,
    /// Grant a permission for this run (network:HOST, network:*.DOMAIN, tool:ID, vault:read, context:read).
    #[arg(long = "grant", value_name = "PERM")]
    grants: Vec<String>,
    #[command(flatten)]
    limits: LimitArgs,
    /// Linear memory limit in bytes.
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<u64>,
    /// Use the virtual clock and a generator seeded with N instead of the real clock and OS entropy.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Print fuel used, peak memory and time to stderr.
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    host: HostArgs,
}

/// Where the host intents of `tdm run` find their data.
#[derive(Debug, Clone, Args)]
struct HostArgs {
    /// The plugin's assets for dist.read (default: `dist/` next to the module).
    #[arg(long, value_name = "DIR")]
    dist: Option<PathBuf>,
    /// The vault file (default: the workspace's vault.json).
    #[arg(long, value_name = "FILE")]
    vault: Option<PathBuf>,
    /// The operator context file (default: the workspace's context.json).
    #[arg(long, value_name = "FILE")]
    context: Option<PathBuf>,
    /// The audit log to append to (default: the workspace's audit.jsonl).
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// A plugin tool.invoke may run: ID=MODULE (repeatable; still needs --grant tool:ID).
    #[arg(long = "tool", value_name = "ID=MODULE", value_parser = parse_tool)]
    tools: Vec<(String, PathBuf)>,
    /// The workspace folder (default: $TDM_WORKSPACE, else the platform data dir).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct InspectArgs {
    /// The module (.wasm or .wat).
    plugin: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ExecArgs {
    /// The WASI command module (.wasm or .wat).
    module: PathBuf,
    /// Set an environment variable for the module (KEY=VALUE).
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    envs: Vec<String>,
    /// Preopen a host directory read-only as the guest's `/` (HOST) or at GUEST (HOST::GUEST).
    #[arg(long = "dir", value_name = "HOST_DIR")]
    dirs: Vec<String>,
    #[command(flatten)]
    limits: LimitArgs,
    /// Use the virtual clock and a generator seeded with N.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Arguments passed to the module after argv[0].
    #[arg(last = true, value_name = "ARGS")]
    args: Vec<String>,
}

fn parse_json(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))
}

fn parse_tool(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((id, path)) if !id.is_empty() && !path.is_empty() => Ok((id.to_string(), PathBuf::from(path))),
        _ => Err(format!("`{text}` is not ID=MODULE")),
    }
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    let secs: f64 = text.parse().map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 || secs > 86_400.0 {
        return Err(format!("`{text}` must be more than 0 and at most 86400 seconds"));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn parse_env(text: &str) -> Result<String, String> {
    match text.split_once('=') {
        Some((key, _)) if !key.is_empty() && !key.contains('\0') => Ok(text.to_string()),
        _ => Err(format!("`{text}` is not KEY=VALUE")),
    }
}

/// A usage or I/O problem: reported on stderr with exit code 2.
#[derive(Debug)]
struct UsageError(String);

impl<E: std::fmt::Display> From<E> for UsageError {
    fn from(e: E) -> Self {
        Self(e.to_string())
    }
}

/// Entry point of the `tdm` binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_COMPLETED };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Run(args) => run(&args),
        Command::Inspect(args) => inspect(&args),
        Command::Exec(args) => exec(&args),
        Command::Audit(args) => audit(&args),
        Command::Hub(HubArgs { command: HubCommand::List { hub, json } }) => hub_list(&hub, json),
        Command::Install(args) => install(&args),
        Command::Approve(args) => approve(&args),
        Command::Revoke(args) => operate(&args, operator::revoke, "revoked {}: it will not run until approved again"),
        Command::Uninstall(args) => operate(&args, operator::uninstall, "uninstalled {} (the audit log is kept)"),
        Command::Call(args) => call(&args),
        Command::Workspace(WorkspaceCommand { command: WorkspaceSub::Status { json, ws } }) => status(&ws, json),
        Command::Repl(args) => repl(&args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(UsageError(message)) => {
            errln!("tdm: error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn policy_from(limits: &LimitArgs) -> Policy {
    let mut policy = Policy::default();
    if let Some(fuel) = limits.fuel {
        policy.fuel_per_intent = fuel;
    }
    if let Some(timeout) = limits.timeout {
        policy.timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX).max(1);
    }
    policy
}

fn environment(seed: Option<u64>, policy: &Policy) -> Box<dyn Environment> {
    match seed {
        Some(seed) => Box::new(SeededEnvironment::new(seed)),
        None => Box::new(HostEnvironment::new(Duration::from_millis(policy.timeout_ms))),
    }
}

fn print_outcome(outcome: &Outcome) -> u8 {
    terminal::out_json(&outcome.json);
    if outcome.is_completed() {
        EXIT_COMPLETED
    } else {
        EXIT_FAILED
    }
}

/// Forwards a plugin's captured output to tdm's stderr, each line marked as the plugin's (and
/// escaped: a plugin's bytes never reach the terminal raw).
fn forward_plugin_output(report: &IntentReport) {
    for (stream, bytes) in [("stdout", &report.stdout), ("stderr", &report.stderr)] {
        for line in String::from_utf8_lossy(bytes).lines() {
            errln!("[plugin {stream}] {line}");
        }
    }
    if report.output_dropped > 0 {
        errln!("[plugin] {} bytes of output dropped (capture limit)", report.output_dropped);
    }
}

fn run(args: &RunArgs) -> Result<u8, UsageError> {
    let grants = Permissions::parse_all(args.grants.iter().map(String::as_str))?;
    let mut policy = policy_from(&args.limits);
    if let Some(bytes) = args.max_memory {
        policy.max_memory_bytes = bytes;
    }
    policy.validate()?;
    let bytes = match read_module_within(&args.plugin, policy.max_module_bytes) {
        Ok(bytes) => bytes,
        Err(ModuleFileError::Wat(path, e)) => {
            let failure = Failure::new(BlockedReason::InvalidModule, format!("{}: {e}", path.display()));
            return Ok(print_outcome(&Outcome::from_failure(failure)));
        }
        Err(e) => return Err(e.into()),
    };
    let plugin = match Plugin::load(&bytes, policy) {
        Ok(plugin) => Arc::new(plugin),
        Err(failure) => return Ok(print_outcome(&Outcome::from_failure(failure))),
    };
    let identity = PluginIdentity { id: plugin_id(&args.plugin), hash: sha256_hex(&bytes) };
    let intents = std_intents(&args.host, args.seed, &args.plugin, identity, &grants)?;
    let env = environment(args.seed, plugin.policy());
    let mut sandbox = Sandbox::new(plugin, env).with_host(Box::new(intents), grants);
    let (report, _) = execute_once(&mut sandbox, &args.method, &args.params, args.stats);
    Ok(print_outcome(&report.outcome))
}

/// Runs one intent, forwards the plugin's output to stderr and, with `stats`, the figures.
fn execute_once(sandbox: &mut Sandbox, method: &str, params: &Value, stats: bool) -> (IntentReport, Duration) {
    let started = Instant::now();
    let report = sandbox.execute(method, params);
    let elapsed = started.elapsed();
    forward_plugin_output(&report);
    if stats {
        errln!(
            "tdm: fuel_used={} peak_memory_bytes={} launch_fuel={} elapsed_us={}",
            report.fuel_used,
            report.peak_memory_bytes,
            sandbox.launch_fuel(),
            elapsed.as_micros()
        );
    }
    (report, elapsed)
}

/// A plugin's id for `tdm run`: its file name without extension.
fn plugin_id(path: &Path) -> String {
    path.file_stem().map_or_else(|| "plugin".to_string(), |stem| stem.to_string_lossy().into_owned())
}

/// The byte cap of one `dist.read` answer.
const DIST_MAX_BYTES: u64 = 1024 * 1024;
/// Log messages allowed per sandbox.
const LOG_MAX_COUNT: u32 = 100;
/// Log bytes allowed per sandbox.
const LOG_MAX_BYTES: u64 = 64 * 1024;
/// The cap of one `net.fetch` response body.
const NET_MAX_BODY_BYTES: u64 = 1024 * 1024;
/// How deep `tool.invoke` may nest.
const TOOL_MAX_DEPTH: u32 = 4;

/// Builds the std host intents of a `tdm run`, from flags or the workspace's files.
fn std_intents(
    host: &HostArgs,
    seed: Option<u64>,
    module: &Path,
    identity: PluginIdentity,
    grants: &Permissions,
) -> Result<StdIntents, UsageError> {
    let workspace = workspace_dir(host.workspace.as_deref());
    let dist_dir = host.dist.clone().or_else(|| {
        let beside = module.parent().unwrap_or(Path::new(".")).join("dist");
        beside.is_dir().then_some(beside)
    });
    if let Some(dir) = &dist_dir {
        if !dir.is_dir() {
            return Err(UsageError(format!("--dist {}: not a directory", dir.display())));
        }
    }
    // A flag names a file that must be there; the workspace's files are optional.
    let existing = |path: PathBuf| path.exists().then_some(path);
    let vault_path = host.vault.clone().or_else(|| existing(workspace.join(VAULT_FILE)));
    let context_path = host.context.clone().or_else(|| existing(workspace.join(CONTEXT_FILE)));
    let audit_path = host.audit.clone().unwrap_or_else(|| workspace.join(AUDIT_FILE));
    if let Some(parent) = audit_path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| UsageError(format!("cannot create {}: {e}", parent.display())))?;
    }
    let registry = host.tools.iter().cloned().collect();
    Ok(StdIntents {
        tools: Tools::new(registry, vec![identity.id.clone()], TOOL_MAX_DEPTH)
            .with_audit(Some(audit_path.clone()))
            .with_seed(seed),
        identity,
        dist: Dist::new(dist_dir, DIST_MAX_BYTES),
        log: Log::new(LOG_MAX_COUNT, LOG_MAX_BYTES),
        net: Net::new(NET_MAX_BODY_BYTES),
        vault: Vault::load(vault_path.as_deref()).map_err(UsageError)?,
        context: Context::load(context_path.as_deref()).map_err(UsageError)?,
        audit: AuditLog::new(Some(audit_path)),
        grants: grants.clone(),
    })
}

fn audit(args: &AuditArgs) -> Result<u8, UsageError> {
    let path = args.audit.clone().unwrap_or_else(|| workspace_dir(args.workspace.as_deref()).join(AUDIT_FILE));
    if !path.exists() {
        if !args.json {
            outln!("(no audit log at {})", path.display());
        }
        return Ok(EXIT_COMPLETED);
    }
    // Streamed: one bounded line at a time, never the whole log in memory.
    visit_entries(&path, args.plugin.as_deref(), |entry| {
        if args.json {
            terminal::out_json(&entry.to_string());
        } else {
            let field = |name: &str| {
                entry.get(name).map_or_else(String::new, |v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            };
            let verdict = if entry.get("granted") == Some(&Value::Bool(true)) { "granted" } else { "DENIED" };
            outln!(
                "{}  {:<16} {:<13} {:<24} {:<8} bytes={} fuel={}",
                field("time"),
                field("plugin"),
                field("method"),
                field("permission"),
                verdict,
                field("bytes"),
                field("fuel")
            );
        }
    })
    .map_err(UsageError)?;
    Ok(EXIT_COMPLETED)
}

/// Runs a one-id operator command and reports it.
fn operate(
    args: &IdArgs,
    action: fn(&Workspace, &str) -> Result<(), OperatorError>,
    done: &str,
) -> Result<u8, UsageError> {
    let workspace = open_workspace(&args.ws)?;
    match action(&workspace, &args.id) {
        Ok(()) => {
            outln!("{}", done.replace("{}", &args.id));
            Ok(EXIT_COMPLETED)
        }
        Err(e) => Ok(refused(&e)),
    }
}

fn open_workspace(ws: &WorkspaceArg) -> Result<Workspace, UsageError> {
    Ok(Workspace::open(workspace_dir(ws.workspace.as_deref()))?)
}

/// Operator refusals exit 1 with the reason on stderr; I/O problems exit 2.
fn refused(e: &OperatorError) -> u8 {
    errln!("tdm: {e}");
    match e {
        OperatorError::Io(..)
        | OperatorError::Copy(CopyError::Io(..))
        | OperatorError::Workspace(WorkspaceError::Io(..) | WorkspaceError::CorruptState(..))
        | OperatorError::Package(PackageError::Io(..) | PackageError::File(FileError::Io { .. })) => EXIT_USAGE,
        _ => EXIT_FAILED,
    }
}

/// The first 12 characters of a hash, for display (never slicing inside a character).
fn hub_list(dir: &Path, json: bool) -> Result<u8, UsageError> {
    let hub = match Hub::open(dir) {
        Ok(hub) => hub,
        Err(e) => return Ok(refused(&OperatorError::Package(e))),
    };
    for entry in &hub.entries {
        if json {
            terminal::out_json(
                &json!({"id": entry.id, "version": entry.version, "sha256": entry.sha256, "price": entry.price.to_string(), "path": entry.path}).to_string(),
            );
        } else {
            outln!(
                "{:<20} {:<10} {:<12} sha256:{}",
                entry.id,
                entry.version,
                entry.price.to_string(),
                prefix(&entry.sha256, 12)
            );
        }
    }
    Ok(EXIT_COMPLETED)
}

fn install(args: &InstallArgs) -> Result<u8, UsageError> {
    let workspace = open_workspace(&args.ws)?;
    let source = match &args.hub {
        Some(hub) => {
            let (id, version) = match args.target.split_once('@') {
                Some((id, version)) => (id.to_string(), Some(version.to_string())),
                None => (args.target.clone(), None),
            };
            Source::Hub { hub: hub.clone(), id, version }
        }
        None => Source::Folder(PathBuf::from(&args.target)),
    };
    match operator::install(&workspace, &source, args.accept_price) {
        Ok(report) => {
            outln!("installed {}@{} (sha256 {})", report.id, report.version, prefix(&report.sha256, 12));
            if report.approval_voided {
                outln!("its earlier approval no longer covers this module or its permissions: approve it again");
            }
            let state = if report.still_approved {
                "approved (same module and permissions)"
            } else {
                "installed, pending approval: nothing was run"
            };
            outln!("state: {state}");
            Ok(EXIT_COMPLETED)
        }
        Err(e) => Ok(refused(&e)),
    }
}

/// The first `chars` characters of `text` (a hash prefix to show; never splits a character).
fn prefix(text: &str, chars: usize) -> &str {
    text.char_indices().nth(chars).map_or(text, |(end, _)| &text[..end])
}

fn limits_line(policy: &Policy) -> String {
    format!(
        "memory {} MiB, fuel {} per intent, deadline {} ms, request {} B, response {} B",
        policy.max_memory_bytes / (1024 * 1024),
        policy.fuel_per_intent,
        policy.timeout_ms,
        policy.max_request_bytes,
        policy.max_response_bytes
    )
}

fn approve(args: &ApproveArgs) -> Result<u8, UsageError> {
    let workspace = open_workspace(&args.ws)?;
    let (_, package) = match operator::installed_package(&workspace, &args.id) {
        Ok(found) => found,
        Err(e) => return Ok(refused(&e)),
    };
    let permissions: Vec<String> = package.requested.iter().map(ToString::to_string).collect();
    outln!("plugin:      {} {} ({})", package.manifest.id, package.manifest.version, package.manifest.name);
    outln!("module:      sha256 {}", package.manifest.sha256);
    outln!("permissions: {}", if permissions.is_empty() { "none".to_string() } else { permissions.join(", ") });
    outln!("limits:      {}", limits_line(&package.policy()));
    if !args.yes {
        use std::io::IsTerminal;
        if !std::io::stdin().is_terminal() {
            errln!("tdm: refusing to approve without a terminal to confirm on; pass --yes to approve from a script");
            return Ok(EXIT_USAGE);
        }
        terminal::out_prompt("Approve this plugin to run with exactly these permissions? [y/N] ");
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            outln!("not approved");
            return Ok(EXIT_FAILED);
        }
    }
    if let Err(e) = operator::approve(&workspace, &args.id, &package.sha256, permissions) {
        return Ok(refused(&e));
    }
    outln!("approved {}", args.id);
    Ok(EXIT_COMPLETED)
}

/// An approved plugin ready to launch: its re-verified package, the approved grants, and where
/// its host intents find their data.
struct ApprovedLaunch {
    package: Package,
    grants: Permissions,
    host: HostArgs,
}

/// The one check before an installed plugin runs (`tdm call`, `tdm repl ID`), see
/// [`operator::approved_plugin`]: the package is read once and exactly the bytes whose hash
/// matched the approval are run. A refusal is the `not_approved` outcome to print.
fn approved_launch(workspace: &Workspace, id: &str) -> Result<Result<ApprovedLaunch, Outcome>, UsageError> {
    let approved = match operator::approved_plugin(workspace, id) {
        Ok(approved) => approved,
        Err(LaunchError::NotApproved(why)) => {
            return Ok(Err(Outcome::from_failure(Failure::new(BlockedReason::NotApproved, why))))
        }
        Err(LaunchError::Workspace(e)) => return Err(e.into()),
    };
    let package = approved.package;
    let host = HostArgs {
        dist: Some(package.dir.join("dist")).filter(|d| d.is_dir()),
        vault: None,
        context: None,
        audit: None,
        tools: Vec::new(),
        workspace: Some(workspace.dir.clone()),
    };
    Ok(Ok(ApprovedLaunch { package, grants: approved.grants, host }))
}

fn call(args: &CallArgs) -> Result<u8, UsageError> {
    let workspace = open_workspace(&args.ws)?;
    let ApprovedLaunch { package, grants, host } = match approved_launch(&workspace, &args.id)? {
        Ok(launch) => launch,
        Err(refusal) => return Ok(print_outcome(&refusal)),
    };
    let plugin = match Plugin::load(&package.module, package.policy()) {
        Ok(plugin) => Arc::new(plugin),
        Err(failure) => return Ok(print_outcome(&Outcome::from_failure(failure))),
    };
    let identity = PluginIdentity { id: args.id.clone(), hash: package.sha256.clone() };
    let intents = std_intents(&host, args.seed, &package.dir.join(&package.manifest.module), identity, &grants)?;
    let env = environment(args.seed, plugin.policy());
    let mut sandbox = Sandbox::new(plugin, env).with_host(Box::new(intents), grants);
    let (report, elapsed) = execute_once(&mut sandbox, &args.method, &args.params, args.stats);
    let last = LastCall {
        method: args.method.clone(),
        status: if report.outcome.is_completed() { "completed" } else { "failed" }.to_string(),
        blocked_reason: report.outcome.blocked_reason().map(str::to_string),
        fuel_used: report.fuel_used,
        peak_memory_bytes: report.peak_memory_bytes,
        duration_us: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        at_ms: now_ms(),
    };
    let recorded = workspace.update(|state| {
        if let Some(plugin) = state.plugins.get_mut(&args.id) {
            plugin.last_call = Some(last);
        }
        Ok(())
    });
    if let Err(e) = recorded {
        errln!("tdm: could not record the call in the workspace: {e}");
    }
    Ok(print_outcome(&report.outcome))
}

fn status(ws: &WorkspaceArg, json: bool) -> Result<u8, UsageError> {
    let workspace = open_workspace(ws)?;
    let state = match workspace.read_state() {
        Ok(state) => state,
        Err(e) => return Ok(refused(&OperatorError::Workspace(e))),
    };
    let audit_path = workspace.dir.join(AUDIT_FILE);
    let audit_bytes = std::fs::metadata(&audit_path).map_or(0, |m| m.len());
    let mut rows = Vec::new();
    for (id, plugin) in &state.plugins {
        // One read of the package gives both the state and the limits shown.
        let files = operator::read_installed(&workspace, plugin).ok();
        let plugin_state = operator::state_on_disk(plugin, files.as_ref());
        let policy = files.and_then(|f| Package::verify(f).ok()).map(|p| p.policy()).unwrap_or_default();
        let granted: Vec<String> = match plugin_state {
            PluginState::Approved => plugin.approval.as_ref().map(|a| a.permissions.clone()).unwrap_or_default(),
            _ => Vec::new(),
        };
        rows.push(json!({
            "id": id,
            "version": plugin.version,
            "hash": plugin.sha256,
            "hashPrefix": prefix(&plugin.sha256, 12),
            "state": plugin_state.as_str(),
            "requested": plugin.requested,
            "granted": granted,
            "price": plugin.price,
            "limits": {
                "maxMemoryBytes": policy.max_memory_bytes,
                "fuelPerIntent": policy.fuel_per_intent,
                "timeoutMs": policy.timeout_ms,
            },
            "lastCall": plugin.last_call.as_ref().map(|c| json!({
                "method": c.method,
                "status": c.status,
                "blockedReason": c.blocked_reason,
                "fuelUsed": c.fuel_used,
                "peakMemoryBytes": c.peak_memory_bytes,
                "durationUs": c.duration_us,
            })),
        }));
    }
    if json {
        terminal::out_json(
            &json!({"workspace": workspace.dir.display().to_string(), "auditLogBytes": audit_bytes, "plugins": rows})
                .to_string(),
        );
        return Ok(EXIT_COMPLETED);
    }
    outln!("workspace: {}", workspace.dir.display());
    outln!("audit log: {} ({audit_bytes} bytes)", audit_path.display());
    if rows.is_empty() {
        outln!("no plugins installed");
    }
    outln!(
        "{:<16} {:<9} {:<13} {:<15} {:<28} {:<28} LAST CALL",
        "ID",
        "VERSION",
        "HASH",
        "STATE",
        "REQUESTED",
        "GRANTED"
    );
    for row in &rows {
        let list = |key: &str| {
            let items: Vec<&str> =
                row[key].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            if items.is_empty() {
                "-".to_string()
            } else {
                items.join(",")
            }
        };
        let last = match &row["lastCall"] {
            Value::Null => "-".to_string(),
            c => format!(
                "{} {} fuel={} mem={} {}us",
                c["method"].as_str().unwrap_or(""),
                c["blockedReason"].as_str().unwrap_or(c["status"].as_str().unwrap_or("")),
                c["fuelUsed"],
                c["peakMemoryBytes"],
                c["durationUs"]
            ),
        };
        outln!(
            "{:<16} {:<9} {:<13} {:<15} {:<28} {:<28} {}",
            row["id"].as_str().unwrap_or(""),
            row["version"].as_str().unwrap_or(""),
            row["hashPrefix"].as_str().unwrap_or(""),
            row["state"].as_str().unwrap_or(""),
            list("requested"),
            list("granted"),
            last
        );
        outln!(
            "{:<16} limits: memory {} B, fuel {}, deadline {} ms",
            "",
            row["limits"]["maxMemoryBytes"],
            row["limits"]["fuelPerIntent"],
            row["limits"]["timeoutMs"]
        );
    }
    Ok(EXIT_COMPLETED)
}

fn repl(args: &ReplArgs) -> Result<u8, UsageError> {
    let workspace = open_workspace(&args.ws)?;
    let file = Path::new(&args.target);
    let (label, bytes, policy, grants, intents, module_path, host, allow_grant) = if file.is_file() {
        let bytes = read_module(file)?;
        let grants = Permissions::parse_all(args.grants.iter().map(String::as_str))?;
        let host = HostArgs {
            dist: None,
            vault: None,
            context: None,
            audit: None,
            tools: Vec::new(),
            workspace: Some(workspace.dir.clone()),
        };
        (plugin_id(file), bytes, Policy::default(), grants, Vec::new(), file.to_path_buf(), host, true)
    } else {
        if !args.grants.is_empty() {
            return Err(UsageError("--grant is for module files; an installed plugin runs with its approval".into()));
        }
        let ApprovedLaunch { package, grants, host } = match approved_launch(&workspace, &args.target)? {
            Ok(launch) => launch,
            Err(refusal) => return Ok(print_outcome(&refusal)),
        };
        let intents = package.manifest.intents.iter().map(|i| i.name.clone()).collect();
        let module_path = package.dir.join(&package.manifest.module);
        (args.target.clone(), package.module.clone(), package.policy(), grants, intents, module_path, host, false)
    };
    let plugin = match Plugin::load(&bytes, policy) {
        Ok(plugin) => Arc::new(plugin),
        Err(failure) => return Ok(print_outcome(&Outcome::from_failure(failure))),
    };
    let identity = PluginIdentity { id: label.clone(), hash: sha256_hex(&bytes) };
    // Check once that the host's files are usable, so the factory below cannot fail later.
    std_intents(&host, args.seed, &module_path, identity.clone(), &grants)?;
    let seed = args.seed;
    let timeout = plugin.policy().timeout_ms;
    let session = crate::repl::ReplSession {
        label,
        plugin,
        bytes,
        grants,
        allow_grant,
        intents,
        history: Some(workspace.dir.join("repl_history")),
        make_env: Box::new(move || match seed {
            Some(seed) => Box::new(SeededEnvironment::new(seed)),
            None => Box::new(HostEnvironment::new(Duration::from_millis(timeout))),
        }),
        make_host: Box::new(move |grants| match std_intents(&host, seed, &module_path, identity.clone(), grants) {
            Ok(intents) => Box::new(intents),
            Err(_) => Box::new(contour_core::NoHostIntents),
        }),
    };
    crate::repl::run(session).map_err(UsageError)
}

fn inspection_json(inspection: &Inspection) -> Value {
    let imports: Vec<Value> = inspection
        .imports
        .iter()
        .map(|i| {
            let (allowed, why) = match &i.verdict {
                ImportVerdict::Allowed => (true, Value::Null),
                ImportVerdict::Rejected(why) => (false, Value::from(why.as_str())),
            };
            json!({"module": i.module, "name": i.name, "type": i.ty, "allowed": allowed, "reason": why})
        })
        .collect();
    let exports: Vec<Value> = inspection.exports.iter().map(|e| json!({"name": e.name, "type": e.ty})).collect();
    let memory = inspection.memory.map(|m| json!({"minimumPages": m.minimum_pages, "maximumPages": m.maximum_pages}));
    let failures: Vec<Value> = inspection.failures.iter().map(failure_json).collect();
    let host_imports: Vec<&str> =
        inspection.imports.iter().filter(|i| i.module == contour_core::host::MODULE).map(|i| i.name.as_str()).collect();
    json!({
        "verdict": if inspection.failures.is_empty() { "accepted" } else { "rejected" },
        "hostImports": host_imports,
        "exports": exports,
        "imports": imports,
        "memory": memory,
        "failures": failures,
    })
}

fn failure_json(failure: &Failure) -> Value {
    json!({"blockedReason": failure.reason.as_str(), "message": failure.message()})
}

fn inspect(args: &InspectArgs) -> Result<u8, UsageError> {
    let bytes = read_module(&args.plugin)?;
    let policy = Policy::default();
    let inspection = match Plugin::inspect(&bytes, &policy, Profile::Marketplace) {
        Ok(inspection) => inspection,
        Err(failure) => {
            if args.json {
                terminal::out_json(&json!({"verdict": "rejected", "failures": [failure_json(&failure)]}).to_string());
            } else {
                outln!("verdict: rejected");
                outln!("  {}: {}", failure.reason, failure.message());
            }
            return Ok(EXIT_FAILED);
        }
    };
    if args.json {
        terminal::out_json(&inspection_json(&inspection).to_string());
    } else {
        print_inspection(&args.plugin, &inspection, &policy);
    }
    Ok(if inspection.failures.is_empty() { EXIT_COMPLETED } else { EXIT_FAILED })
}

fn print_inspection(path: &Path, inspection: &Inspection, policy: &Policy) {
    outln!("module: {}", path.display());
    outln!("exports:");
    for export in &inspection.exports {
        outln!("  {:<28} {}", export.name, export.ty);
    }
    outln!("imports:");
    if inspection.imports.is_empty() {
        outln!("  (none)");
    }
    for import in &inspection.imports {
        let verdict = match &import.verdict {
            ImportVerdict::Allowed => "allowed".to_string(),
            ImportVerdict::Rejected(why) => format!("REJECTED: {why}"),
        };
        outln!("  {}.{:<24} {:<28} {verdict}", import.module, import.name, import.ty);
    }
    let host_imports: Vec<&str> =
        inspection.imports.iter().filter(|i| i.module == contour_core::host::MODULE).map(|i| i.name.as_str()).collect();
    outln!(
        "host intents: {}",
        if host_imports.is_empty() {
            "none (compute, WASI stdio and clocks only)".to_string()
        } else {
            format!("uses {}", host_imports.join(", "))
        }
    );
    match inspection.memory {
        Some(m) => outln!(
            "memory: {} initial pages, maximum {}; policy limit {} bytes ({} pages)",
            m.minimum_pages,
            m.maximum_pages.map_or_else(|| "none".to_string(), |p| p.to_string()),
            policy.max_memory_bytes,
            policy.max_memory_pages()
        ),
        None => outln!("memory: none exported"),
    }
    if inspection.failures.is_empty() {
        outln!("verdict: accepted");
    } else {
        outln!("verdict: rejected");
        for failure in &inspection.failures {
            outln!("  {}: {}", failure.reason, failure.message());
        }
    }
}

/// Streams an exec'd module's stdout and stderr to tdm's own.
struct StdioSink;

impl OutputSink for StdioSink {
    fn write(&mut self, stderr: bool, bytes: &[u8]) -> Written {
        let written = if stderr {
            std::io::stderr().write_all(bytes)
        } else {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        };
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Written::Closed,
            _ => Written::Taken,
        }
    }
}

fn preopens(dirs: &[String]) -> Result<Vec<(PathBuf, String)>, UsageError> {
    let mut out: Vec<(PathBuf, String)> = Vec::new();
    for spec in dirs {
        let (host, guest) = match spec.split_once("::") {
            Some((host, guest)) => (host, guest.to_string()),
            None => (spec.as_str(), "/".to_string()),
        };
        if !Path::new(host).is_dir() {
            return Err(UsageError(format!("--dir {host}: not a directory")));
        }
        if out.iter().any(|(_, g)| *g == guest) {
            return Err(UsageError(format!("--dir {spec}: guest path {guest} is already preopened (use HOST::GUEST)")));
        }
        out.push((PathBuf::from(host), guest));
    }
    Ok(out)
}

fn exec(args: &ExecArgs) -> Result<u8, UsageError> {
    let policy = policy_from(&args.limits);
    let bytes = read_module_within(&args.module, policy.max_module_bytes)?;
    let plugin = match Plugin::load_as(&bytes, policy, Profile::Command) {
        Ok(plugin) => plugin,
        Err(failure) => {
            errln!("tdm: {} rejected: {} ({})", args.module.display(), failure.message(), failure.reason);
            return Ok(EXIT_EXEC_REJECTED);
        }
    };
    let dirs = preopens(&args.dirs)?;
    let fs: Option<Box<dyn contour_core::fs::ReadOnlyFs>> =
        if dirs.is_empty() { None } else { Some(Box::new(DirFs::open(&dirs)?)) };
    let argv0 = args.module.file_name().map_or_else(|| "module".to_string(), |n| n.to_string_lossy().into_owned());
    let mut argv = vec![argv0];
    argv.extend(args.args.iter().cloned());
    let wasi = WasiConfig { args: argv, environ: args.envs.clone(), fs, output: Some(Box::new(StdioSink)) };
    let env = environment(args.seed, plugin.policy());
    let report = run_command(&plugin, env, wasi);
    match report.exit {
        CommandExit::Exited(code) => Ok(u8::try_from(code).unwrap_or(EXIT_FAILED)),
        CommandExit::Failed(failure) => {
            errln!("tdm: {} stopped: {} ({})", args.module.display(), failure.message(), failure.reason);
            Ok(match failure.reason {
                BlockedReason::PluginTrap => EXIT_EXEC_TRAP,
                _ => EXIT_EXEC_LIMIT,
            })
        }
    }
}
