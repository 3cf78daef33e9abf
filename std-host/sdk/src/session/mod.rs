//! A session: one plugin and everything it runs with, put together in one place for every
//! runner (`tdm run`, `call`, `repl`, the benches, an embedder; a WASI command runs through
//! [`CommandSession`], a trace through [`Session::replay`]). It owns which environment the plugin sees (real clock or seeded,
//! cancellable by Ctrl-C), which host intents answer it and where their data comes from, its
//! grants, the limits it runs under (never above an installed plugin's approval), the intents
//! it declares (and, for an installed plugin, the refusal of any other), and its sandbox. One
//! call, [`Session::run`], takes a request end to end: the approval check, the intent (recorded
//! when a recording runs), its figures and what the host intents noticed; the audit log is
//! written by core's callback on the way. Core's `Environment` and `HostIntents` meet the front
//! end here and nowhere else.

use crate::declared::Declared;
use crate::environment::{Cancel, EnvironmentChoice};
use crate::files::output::Outputs;
use crate::files::FileKind;
use crate::intents::audit::AuditLog;
use crate::intents::context::Context;
use crate::intents::dist::Dist;
use crate::intents::log::{Log, LogLevel};
use crate::intents::net::Net;
use crate::intents::tool::{sha256_hex, Tools};
use crate::intents::vault::Vault;
use crate::intents::{take_notices, Notices, PluginIdentity, StdIntents};
use crate::limits::Limits;
use crate::module_file::read_module_within;
use crate::operator::{self, LaunchError};
use crate::package::Manifest;
use crate::workspace::{workspace_dir, InstalledPlugin, Workspace, AUDIT_FILE, CONTEXT_FILE, VAULT_FILE};
use contour_core::errors::TraceError;
use contour_core::{
    BlockedReason, Compilation, Environment, Failure, Permission, Permissions, Plugin, Policy, Record, Sandbox, Trace,
};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod command;
mod error;
mod host_files;
mod modules;
mod ran;
mod replay;
mod spares;
mod wasi_command;

pub use command::{command_environment, CommandOutput};
pub use error::{GrantError, SessionError};
pub use host_files::{outputs_of, HostFiles};
pub use modules::{ModuleCache, MAX_CACHED_MODULES};
pub use ran::{raw_method, RawRequestError, Request, RunReport};
pub use replay::{ReplayError, ReplayOptions, ReplayRun};
pub use spares::{Spares, MAX_SPARES};
pub use wasi_command::{CommandError, CommandOptions, CommandRequest, CommandRun, CommandSession};

/// The byte cap of one `dist.read` answer.
pub const DIST_MAX_BYTES: u64 = 1024 * 1024;
/// Log messages allowed per sandbox.
pub const LOG_MAX_COUNT: u32 = 100;
/// Log bytes allowed per sandbox.
pub const LOG_MAX_BYTES: u64 = 64 * 1024;
/// The cap of one `net.fetch` response body.
pub const NET_MAX_BODY_BYTES: u64 = 1024 * 1024;
/// How deep `tool.invoke` may nest.
pub const TOOL_MAX_DEPTH: u32 = 4;

/// How a session is opened.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Limit flags.
    pub limits: Limits,
    /// `--seed N`: virtual clock and seeded entropy.
    pub seed: Option<u64>,
    /// Cancels the running intent when set (the REPL's Ctrl-C).
    pub cancel: Option<Cancel>,
    /// `--grant` permissions (module files only).
    pub grants: Vec<String>,
    /// Where the host intents find their data.
    pub host: HostFiles,
    /// The lowest level of plugin log lines shown.
    pub log_level: LogLevel,
    /// `-q`: the plugin's captured output is not forwarded.
    pub quiet: bool,
    /// Compiled modules to share with other sessions (an installed plugin's, keyed by the hash
    /// of the bytes read and checked for this session); `None`: this session compiles its own.
    pub modules: Option<ModuleCache>,
    /// What every audit entry adds: who asked for the runs (`tdm mcp`: the MCP client's
    /// name), the trace they are recorded to.
    pub audit: crate::intents::audit::Tag,
}

/// What a session runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A module file, run as it is (`tdm run FILE`, `tdm repl FILE`).
    File(PathBuf),
    /// An installed plugin, cleared by the approved-launch check (`tdm call ID`, `tdm repl ID`).
    Installed {
        /// Its id.
        id: String,
        /// The workspace it is installed in.
        workspace: PathBuf,
        /// The policy its approval shows (its package's): limits may go lower, never higher.
        approved: Policy,
        /// Its state-file entry (last call aside) and its package's manifest when the session
        /// opened it: any change to either (a revoke, an uninstall, a new version, a new
        /// approval, an edited plugin.toml) stops the session's intents until `:reload` opens
        /// what is approved now.
        opened: Box<(InstalledPlugin, Manifest)>,
    },
}

/// A plugin and everything it runs with.
pub struct Session {
    /// Who it is (for the audit log and messages).
    pub identity: PluginIdentity,
    /// What it runs.
    pub origin: Origin,
    /// The module bytes loaded (shared with the verified package; never copied).
    bytes: Arc<Vec<u8>>,
    plugin: Arc<Plugin>,
    grants: Permissions,
    environment: EnvironmentChoice,
    options: SessionOptions,
    dist: Option<PathBuf>,
    declared: Declared,
    /// What the host intents noticed since the last run (the plugin's `log` lines, an audit
    /// write error): a host call never writes to tdm's stderr itself, which could block on a
    /// full pipe past the deadline; [`RunReport::notices`] hands them to the front end.
    notices: Notices,
    /// The sandbox the intents run in: made on first use, and made again after the plugin, its
    /// grants or its limits changed ([`Session::is_stale`]); the old one is kept until then so a
    /// recording on it can still be stopped and written.
    sandbox: Option<Sandbox>,
    /// The sandbox was made for a plugin, grants or limits the session no longer has.
    stale: bool,
}

/// A plugin's id for a module file: its file name without extension.
pub fn file_id(path: &Path) -> String {
    path.file_stem().map_or_else(|| "plugin".to_string(), |stem| stem.to_string_lossy().into_owned())
}

pub use crate::module_kind::{is_command, is_extism, other_kind};

/// Loads `bytes` under `policy`; a refusal says whether the module is a command or an Extism
/// plugin (another kind of module, for which the hint names what to do instead).
fn load(bytes: &[u8], policy: Policy) -> Result<Plugin, SessionError> {
    Plugin::load(bytes, policy).map_err(|failure| {
        let foreign = matches!(failure.reason, BlockedReason::AbiMismatch | BlockedReason::ImportNotAllowed);
        let other_kind = if foreign { other_kind(bytes) } else { None };
        SessionError::Load { failure, other_kind }
    })
}

impl Session {
    /// Opens a module file with `--grant`s and limit flags over the default policy.
    pub fn open_file(path: &Path, options: SessionOptions) -> Result<Self, SessionError> {
        let grants = Permissions::parse_all(options.grants.iter().map(String::as_str))
            .map_err(|e| SessionError::Usage(format!("--grant: {e}")))?;
        let policy = options.limits.apply(&Policy::default());
        policy.validate().map_err(|e| SessionError::Usage(e.to_string()))?;
        let bytes = read_module_within(path, policy.max_module_bytes)?;
        let plugin = load(&bytes, policy)?;
        let declared = Declared::from_section(&plugin.inspection().intents_section);
        let dist = match &options.host.dist {
            Some(dir) if !dir.is_dir() => {
                return Err(SessionError::Usage(format!("--dist {}: not a directory", dir.display())))
            }
            Some(dir) => Some(dir.clone()),
            None => Some(path.parent().unwrap_or(Path::new(".")).join("dist")).filter(|d| d.is_dir()),
        };
        let session = Self {
            identity: PluginIdentity { id: file_id(path), hash: sha256_hex(&bytes) },
            origin: Origin::File(path.to_path_buf()),
            bytes: Arc::new(bytes),
            plugin: Arc::new(plugin),
            grants,
            environment: EnvironmentChoice { seed: options.seed, cancel: options.cancel.clone() },
            options,
            dist,
            declared,
            notices: Notices::default(),
            sandbox: None,
            stale: false,
        };
        session.check_host_files()?;
        Ok(session)
    }

    /// Opens an installed plugin: the approved-launch check ([`operator::approved_plugin`]),
    /// then exactly the module bytes whose hash matched, under its approved policy lowered by
    /// the limit flags (a flag above the approval is refused).
    pub fn open_installed(workspace: &Workspace, id: &str, options: SessionOptions) -> Result<Self, SessionError> {
        if !options.grants.is_empty() {
            return Err(SessionError::Usage(
                "--grant is for module files; an installed plugin runs with its approved permissions".into(),
            ));
        }
        // Validated in full when it was installed, and these are the bytes whose hash the
        // approval binds: launching it validates nothing again (wasmi's lazy mode; fuel is the
        // same in every mode). An invalid body, which install would have refused, would end its
        // intent with invalid_module when called.
        let launch_policy = |manifest: &Manifest| Policy { compilation: Compilation::Lazy, ..manifest.policy() };
        // Without a module cache the module is parsed while its hash is computed; the parse is
        // kept only if the launch check clears the bytes it parsed (the same buffer), so the
        // refusals come in the order they always did: approval, limits, then the load's own.
        let preload = options.modules.is_none().then_some(|manifest: &Manifest, bytes: &[u8]| {
            let policy = options.limits.within(&launch_policy(manifest)).ok()?;
            Some(load(bytes, policy))
        });
        let (approved, preloaded) =
            operator::approved_plugin_preloading(workspace, id, preload).map_err(|e| match e {
                LaunchError::NotApproved(why) => {
                    SessionError::NotApproved(Failure::new(BlockedReason::NotApproved, why))
                }
                LaunchError::Workspace(e) => SessionError::Workspace(e),
            })?;
        let package = approved.package;
        let approved_policy = launch_policy(&package.manifest);
        let policy = options.limits.within(&approved_policy).map_err(SessionError::AboveApproval)?;
        let plugin = match (&options.modules, preloaded.flatten()) {
            (Some(cache), _) => cache.get_or_load(&package.sha256, &package.module, policy, load)?,
            (None, Some(loaded)) => Arc::new(loaded?),
            (None, None) => Arc::new(load(&package.module, policy)?),
        };
        let mut options = options;
        options.host.workspace = Some(workspace.dir.clone());
        let session = Self {
            identity: PluginIdentity { id: id.to_string(), hash: package.sha256.clone() },
            origin: Origin::Installed {
                id: id.to_string(),
                workspace: workspace.dir.clone(),
                approved: approved_policy,
                opened: Box::new((InstalledPlugin { last_call: None, ..approved.installed }, package.manifest.clone())),
            },
            bytes: Arc::clone(&package.module),
            plugin,
            grants: approved.grants,
            environment: EnvironmentChoice { seed: options.seed, cancel: options.cancel.clone() },
            options,
            dist: Some(package.dir.join("dist")).filter(|d| d.is_dir()),
            declared: Declared::Manifest(package.manifest.intents.clone()),
            notices: Notices::default(),
            sandbox: None,
            stale: false,
        };
        session.check_host_files()?;
        Ok(session)
    }

    /// A session of module bytes already in memory, with no host intents' files: for tests and
    /// embedders (`Origin::File` of `label`).
    pub fn from_bytes(label: &str, bytes: Vec<u8>, options: SessionOptions) -> Result<Self, SessionError> {
        let policy = options.limits.apply(&Policy::default());
        let plugin = load(&bytes, policy)?;
        let declared = Declared::from_section(&plugin.inspection().intents_section);
        Ok(Self {
            identity: PluginIdentity { id: label.to_string(), hash: sha256_hex(&bytes) },
            origin: Origin::File(PathBuf::from(label)),
            bytes: Arc::new(bytes),
            plugin: Arc::new(plugin),
            grants: Permissions::default(),
            environment: EnvironmentChoice { seed: options.seed, cancel: options.cancel.clone() },
            options,
            dist: None,
            declared,
            notices: Notices::default(),
            sandbox: None,
            stale: false,
        })
    }

    /// Whether this is an installed plugin (runs within its approval).
    pub fn is_installed(&self) -> bool {
        matches!(self.origin, Origin::Installed { .. })
    }

    /// The policy the plugin runs under.
    pub fn policy(&self) -> &Policy {
        self.plugin.policy()
    }

    /// The loaded plugin.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// The granted permissions.
    pub fn grants(&self) -> &Permissions {
        &self.grants
    }

    /// The intents the plugin declares.
    pub fn declared(&self) -> &Declared {
        &self.declared
    }

    /// What this session's commands write besides a recording ([`outputs_of`]).
    pub fn outputs(&self) -> Outputs {
        outputs_of(&self.options.host)
    }

    /// The cancel flag, when the session has one.
    pub fn cancel(&self) -> Option<&Cancel> {
        self.environment.cancel.as_ref()
    }

    /// Whether the plugin's captured output is to be forwarded (`false` with `-q`).
    pub fn quiet(&self) -> bool {
        self.options.quiet
    }

    /// Whether the sandbox in hand was made for a plugin, grants or limits the session no
    /// longer has (the next intent starts a fresh one).
    pub fn is_stale(&self) -> bool {
        self.stale
    }

    /// A new environment for one sandbox.
    fn environment(&self) -> Box<dyn Environment> {
        self.environment.environment(Duration::from_millis(self.policy().timeout_ms))
    }

    /// The workspace folder the host's files default to.
    fn workspace_dir(&self) -> PathBuf {
        workspace_dir(self.options.host.workspace.as_deref())
    }

    /// Checks that the files the host intents need are usable, so a session that opened can
    /// build its host intents later: a file a flag names must be there.
    fn check_host_files(&self) -> Result<(), SessionError> {
        for (flag, path) in [("--vault", &self.options.host.vault), ("--context", &self.options.host.context)] {
            if let Some(path) = path.as_ref().filter(|p| !p.exists()) {
                return Err(SessionError::Usage(format!("{flag} {}: no such file", path.display())));
            }
        }
        for (id, path) in &self.options.host.tools {
            if let Some(problem) = not_a_module_file(path) {
                return Err(SessionError::Usage(format!("--tool {id}={}: {problem}", path.display())));
            }
        }
        self.host_intents().map(drop)
    }

    /// The std host intents of one sandbox: flags first, else the workspace's files.
    fn host_intents(&self) -> Result<StdIntents, SessionError> {
        let workspace = self.workspace_dir();
        let host = &self.options.host;
        // A flag names a file that must be there (checked on open); the workspace's are optional.
        let existing = |path: PathBuf| path.exists().then_some(path);
        let vault_path = host.vault.clone().or_else(|| existing(workspace.join(VAULT_FILE)));
        let context_path = host.context.clone().or_else(|| existing(workspace.join(CONTEXT_FILE)));
        let audit_path = host.audit.clone().unwrap_or_else(|| workspace.join(AUDIT_FILE));
        if let Some(parent) = audit_path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| SessionError::Usage(format!("cannot create {}: {e}", parent.display())))?;
        }
        let registry = host.tools.iter().cloned().collect();
        Ok(StdIntents {
            tools: Tools::new(registry, vec![self.identity.id.clone()], TOOL_MAX_DEPTH)
                .with_audit(Some(audit_path.clone()))
                .with_audit_tag(self.options.audit.clone())
                .with_environment(self.environment.clone())
                .with_max_memory(self.policy().max_memory_bytes),
            identity: self.identity.clone(),
            dist: Dist::new(self.dist.clone(), DIST_MAX_BYTES),
            log: Log::new(LOG_MAX_COUNT, LOG_MAX_BYTES)
                .showing(self.options.log_level)
                .with_sink(Arc::clone(&self.notices)),
            net: Net::new(NET_MAX_BODY_BYTES).with_cancel(self.options.cancel.clone()),
            vault: Vault::load(vault_path.as_deref()).map_err(SessionError::Vault)?,
            context: Context::load(context_path.as_deref()).map_err(SessionError::Context)?,
            audit: AuditLog::new(Some(audit_path))
                .with_tag(self.options.audit.clone())
                .with_notices(Arc::clone(&self.notices)),
            grants: self.grants.clone(),
        })
    }

    /// A new sandbox: a fresh environment, the host intents for the current grants.
    fn new_sandbox(&self) -> Result<Sandbox, SessionError> {
        let host = self.host_intents()?;
        Ok(Sandbox::new(Arc::clone(&self.plugin), self.environment()).with_host(Box::new(host), self.grants.clone()))
    }

    /// Takes the sandbox the next intent runs in (made when there is none or it is stale); the
    /// caller puts it back. When none can be made, the one held stays.
    fn take_sandbox(&mut self) -> Result<Sandbox, SessionError> {
        match self.sandbox.take() {
            Some(sandbox) if !self.stale => Ok(sandbox),
            held => match self.new_sandbox() {
                Ok(made) => {
                    self.stale = false;
                    Ok(made)
                }
                Err(e) => {
                    self.sandbox = held;
                    Err(e)
                }
            },
        }
    }

    /// Where a trace of this session, written to `trace`, says its module came from: the
    /// file's path from the trace's folder ([`crate::traces::module_label`]), or `plugin:ID`
    /// for an installed plugin (`traces::module_for` finds it again from that).
    pub fn trace_label(&self, trace: &Path) -> String {
        match &self.origin {
            Origin::File(path) => crate::traces::module_label(path, trace),
            Origin::Installed { id, .. } => format!("{}{id}", crate::traces::INSTALLED_PREFIX),
        }
    }

    /// Starts recording the intents that follow (from a fresh instance: the live one is
    /// discarded first), for a trace to be written to `trace`: the trace names the module bytes
    /// this session loaded.
    pub fn start_recording(&mut self, trace: &Path) -> Result<(), SessionError> {
        let mut sandbox = self.take_sandbox()?;
        let started = sandbox.start_recording(&self.bytes, &self.trace_label(trace));
        self.sandbox = Some(sandbox);
        started.map_err(SessionError::Record)
    }

    /// Stops a recording and hands over its trace (`None`: nothing was being recorded). A
    /// recording survives a change of plugin, grants or limits until this is called: the
    /// trace holds what ran before the change.
    pub fn stop_recording(&mut self) -> Option<Result<Trace, TraceError>> {
        self.sandbox.as_mut().and_then(Sandbox::stop_recording)
    }

    /// Launches the plugin's instance now, which the first intent would otherwise do: for an
    /// embedder that wants a launch failure before any request, and the launch benches.
    pub fn launch(&mut self) -> Result<(), SessionError> {
        let mut sandbox = self.take_sandbox()?;
        let launched = sandbox.launch().map(drop);
        self.sandbox = Some(sandbox);
        launched.map_err(SessionError::Launch)
    }

    /// Discards the live instance: the next intent starts a fresh one.
    pub fn discard_instance(&mut self) {
        if let Some(sandbox) = self.sandbox.as_mut() {
            sandbox.discard();
        }
    }

    /// Why `method` may not run, when it may not: an installed plugin runs only the intents
    /// its `plugin.toml` declares (the surface its operator approved).
    pub fn refusal(&self, method: &str) -> Option<Failure> {
        self.is_installed().then(|| self.declared.undeclared_refusal(method)).flatten()
    }

    /// Why an installed plugin may no longer run in this open session, if so: its state-file
    /// entry or its package's plugin.toml is not the one the session opened (`tdm revoke`,
    /// `uninstall`, `install` of another version or `approve` in another shell while a REPL
    /// holds it), so what the session runs (its bytes, grants, intents and limits) may no
    /// longer be what is approved. Looked at before every intent; the module is not read again
    /// (the session runs the bytes it verified).
    fn withdrawn(&self) -> Option<Failure> {
        let Origin::Installed { id, workspace, opened, .. } = &self.origin else {
            return None;
        };
        let (entry, manifest) = &**opened;
        let state = Workspace { dir: workspace.clone() }.read_state();
        let now = state.ok().and_then(|mut state| state.plugins.remove(id));
        let unchanged = now.is_some_and(|now| {
            let same_manifest = Manifest::read(&workspace.join(&now.path)).is_ok_and(|now| now == *manifest);
            same_manifest && InstalledPlugin { last_call: None, ..now } == *entry
        });
        (!unchanged).then(|| {
            Failure::new(
                BlockedReason::NotApproved,
                "Its approval changed since this session opened it (revoked, uninstalled, reinstalled or approved again): nothing ran; :reload opens what is approved now.",
            )
        })
    }

    /// Runs one request end to end: an installed plugin's undeclared intent, one whose
    /// approval was withdrawn meanwhile, or params its declared schema refuses
    /// (`invalid_params`) are refused without running anything; otherwise the
    /// intent runs in the session's sandbox (recorded when a recording runs; the audit log is
    /// appended by core's callback). A Ctrl-C while it runs, or before it started, cancels it.
    /// A failed intent is a report too; an error means the sandbox could not be made (a vault
    /// or context file that no longer reads).
    pub fn run(&mut self, request: &Request) -> Result<RunReport, SessionError> {
        let undeclared = match request.method() {
            Some(method) => self.refusal(&method),
            None if self.is_installed() => self.refusal(""),
            None => None,
        };
        let is_undeclared = undeclared.is_some();
        let mismatched = || Some(self.declared.params_refusal(&request.method()?, &request.params_text()?)).flatten();
        if let Some(failure) = undeclared.or_else(|| self.withdrawn()).or_else(mismatched) {
            return Ok(RunReport::refused(failure, is_undeclared));
        }
        let mut sandbox = self.take_sandbox()?;
        // A cancel already set (a SIGINT while `tdm run` loaded the module) stops the intent at
        // its first deadline check; the REPL clears the flag before each entry.
        let started = Instant::now();
        let report = match request {
            Request::Intent { method, params } => sandbox.execute_raw_params(method, params.raw()),
            Request::Raw(text) => sandbox.execute_request(text.as_bytes()),
        };
        let elapsed = started.elapsed();
        let discarded = !sandbox.is_live();
        self.sandbox = Some(sandbox);
        let cancelled = self.cancel().is_some_and(Cancel::clear)
            && report.outcome.blocked_reason() == Some(BlockedReason::Cancelled);
        let launch_fuel = report.launch_fuel;
        let notices = take_notices(&self.notices);
        Ok(RunReport { discarded, report, elapsed, cancelled, launch_fuel, undeclared: false, notices })
    }

    /// Reloads the module under `policy` (from the bytes already read); the next intent
    /// starts a fresh sandbox.
    fn reload_with(&mut self, policy: Policy) -> Result<(), SessionError> {
        self.plugin = Arc::new(load(&self.bytes, policy)?);
        self.stale = true;
        Ok(())
    }

    /// Sets the fuel budget of the following intents (reloads the plugin: fresh instance). An
    /// installed plugin's budget stays within its approval.
    pub fn set_fuel(&mut self, fuel: u64) -> Result<(), SessionError> {
        self.options.limits.fuel = Some(fuel);
        let policy = match &self.origin {
            Origin::File(_) => self.options.limits.apply(&Policy::default()),
            Origin::Installed { approved, .. } => {
                let checked = self.options.limits.within(approved);
                if checked.is_err() {
                    self.options.limits.fuel = Some(self.policy().fuel_per_intent);
                }
                checked.map_err(SessionError::AboveApproval)?
            }
        };
        self.reload_with(policy)
    }

    /// Adds a permission (module files only); the confirmation, or why it was refused. A new
    /// permission makes the next intent start a fresh sandbox.
    pub fn grant(&mut self, text: &str) -> Result<String, GrantError> {
        if self.is_installed() {
            return Err(GrantError::Installed);
        }
        let permission = Permission::parse(text).map_err(|e| GrantError::Permission(e.to_string()))?;
        if self.grants.contains(&permission) {
            return Ok(format!("{permission} is already granted"));
        }
        let mut all: Vec<String> = self.grants.iter().map(ToString::to_string).collect();
        all.push(permission.to_string());
        self.grants = Permissions::parse_all(all.iter().map(String::as_str))
            .map_err(|e| GrantError::Permission(e.to_string()))?;
        self.stale = true;
        let now: Vec<String> = self.grants.iter().map(ToString::to_string).collect();
        Ok(format!("granted {permission} (now: {})", now.join(", ")))
    }

    /// Reads the plugin again: a module file from disk (under the same limits), an installed
    /// plugin through the approved-launch check again, so a module whose hash changed without
    /// a new approval is refused and the session keeps what it had. Returns whether the module
    /// changed.
    pub fn reload(&mut self) -> Result<bool, SessionError> {
        let reopened = match &self.origin {
            Origin::File(path) => {
                let mut options = self.options.clone();
                options.grants = self.grants.iter().map(ToString::to_string).collect();
                Self::open_file(path, options)?
            }
            Origin::Installed { id, workspace, .. } => {
                let workspace = Workspace { dir: workspace.clone() };
                let mut options = self.options.clone();
                if let Some(fuel) = options.limits.fuel {
                    options.limits.fuel = Some(fuel.min(self.policy().fuel_per_intent));
                }
                Self::open_installed(&workspace, id, options)?
            }
        };
        let changed = reopened.identity.hash != self.identity.hash;
        // The old sandbox stays until the next intent, so a recording on it can be written.
        let held = self.sandbox.take();
        *self = reopened;
        self.sandbox = held;
        self.stale = true;
        Ok(changed)
    }
}

/// Why `path` cannot be a tool's module file: missing, not a regular file (a directory, a FIFO,
/// ...; looked at with `stat`, never opened), or unreadable; `None` when it is a regular file.
fn not_a_module_file(path: &Path) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(meta) => match FileKind::of(meta.file_type())? {
            FileKind::Other => Some("not a regular file".to_string()),
            kind => Some(format!("{kind}, not a regular file")),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some("no such file".to_string()),
        Err(e) => Some(format!("cannot read it: {e}")),
    }
}
