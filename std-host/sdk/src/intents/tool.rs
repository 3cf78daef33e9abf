//! `tool.invoke {tool, intent, params}`: another plugin's intent in its own sandbox.
//!
//! Core has already checked `tool:<id>`. Here the call is refused when the tool is already on
//! the call chain (`permission_denied`, "cycle: a -> b -> a"), when it would nest deeper than
//! `max_depth` (`host_intent_failed`, "depth limit N"), or when the id is not in the registry
//! (`host_intent_failed`). Otherwise the tool's module is loaded and run in a fresh sandbox:
//! the default policy, with fuel capped at what the caller has left, the deadline at the
//! caller's remaining time and linear memory at the caller's limit; its own `StdIntents` (no dist/, a fresh log, an empty vault and
//! context, the grants configured for that tool, the same audit file) and a nested `Tools` one
//! level deeper. It runs within what is left of the caller's budgets (fuel for launch and
//! intent together, time, host calls and bytes) and logs against the caller's log counters;
//! what it spent, and its captured output, come back in `HostAnswer::spent`, which core
//! charges to the caller. A failed nested outcome is a `host_intent_failed` answer whose
//! message carries the nested `blockedReason` and message.

use super::{audit, context, log, net, vault, PluginIdentity, StdIntents};
use crate::environment::EnvironmentChoice;
use contour_core::Blocked;
use contour_core::{BlockedReason, CallContext, HostAnswer, IntentReport, Permissions, Plugin, Policy, Sandbox, Spent};
use serde_json::value::RawValue;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Default maximum nesting of `tool.invoke` (the root plugin is depth 0).
pub const DEFAULT_MAX_DEPTH: u32 = 4;
/// Cap on a nested sandbox's `net.fetch` response bodies.
pub const NESTED_MAX_BODY_BYTES: u64 = 1 << 20;

/// The plugins this sandbox may invoke, and where it sits in the call chain.
#[derive(Debug, Clone)]
pub struct Tools {
    /// Tool id -> its module file (`.wasm` or `.wat`).
    pub registry: HashMap<String, PathBuf>,
    /// How deep this sandbox is nested (the root plugin is 0).
    pub depth: u32,
    /// The deepest nesting allowed.
    pub max_depth: u32,
    /// Plugin ids from the root caller down to this plugin, for cycle detection.
    pub chain: Vec<String>,
    /// Grants of each tool when it runs nested (none when absent).
    pub grants: HashMap<String, Permissions>,
    /// The audit file nested sandboxes append to.
    pub audit_path: Option<PathBuf>,
    /// Who asked for the root run and where it is recorded, in nested sandboxes' audit entries too.
    pub audit_tag: audit::Tag,
    /// The environment of nested sandboxes: the caller's choice (seed, Ctrl-C cancel).
    pub environment: EnvironmentChoice,
    /// The most linear memory a nested sandbox may have: the caller's own limit (a tool never
    /// gets more memory than the plugin that invoked it).
    pub max_memory_bytes: u64,
}

impl Default for Tools {
    fn default() -> Self {
        Self::new(HashMap::new(), Vec::new(), DEFAULT_MAX_DEPTH)
    }
}

/// sha256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl Tools {
    /// A root `Tools` (depth 0): `registry` maps tool ids to module files, `chain` holds the ids
    /// from the root caller to this plugin (normally just its own id), `max_depth` bounds
    /// nesting.
    pub fn new(registry: HashMap<String, PathBuf>, chain: Vec<String>, max_depth: u32) -> Self {
        Self {
            registry,
            depth: 0,
            max_depth,
            chain,
            grants: HashMap::new(),
            audit_path: None,
            audit_tag: audit::Tag::default(),
            environment: EnvironmentChoice::default(),
            max_memory_bytes: Policy::default().max_memory_bytes,
        }
    }

    /// Nested sandboxes get at most `bytes` of linear memory (the caller's limit).
    pub fn with_max_memory(mut self, bytes: u64) -> Self {
        self.max_memory_bytes = bytes;
        self
    }

    /// Grants `grants` to tool `id` when it runs nested.
    pub fn with_grants(mut self, id: impl Into<String>, grants: Permissions) -> Self {
        self.grants.insert(id.into(), grants);
        self
    }

    /// Nested sandboxes append their decisions to `path`.
    pub fn with_audit(mut self, path: Option<PathBuf>) -> Self {
        self.audit_path = path;
        self
    }

    /// Nested sandboxes' audit entries carry `tag` (who asked for the root run, its trace).
    pub fn with_audit_tag(mut self, tag: audit::Tag) -> Self {
        self.audit_tag = tag;
        self
    }

    /// Nested sandboxes run in a `SeededEnvironment` with `seed` (virtual clock and entropy).
    pub fn with_seed(mut self, seed: Option<u64>) -> Self {
        self.environment.seed = seed;
        self
    }

    /// Nested sandboxes get the caller's environment choice (its seed and its cancel flag).
    pub fn with_environment(mut self, environment: EnvironmentChoice) -> Self {
        self.environment = environment;
        self
    }

    /// The `Tools` of a sandbox running `tool` one level below this one.
    fn nested(&self, tool: &str) -> Self {
        let mut chain = self.chain.clone();
        chain.push(tool.to_string());
        Self { chain, depth: self.depth + 1, ..self.clone() }
    }

    /// Runs one intent of `tool` within what is left of the caller's budgets: its launch and
    /// intent together spend at most the caller's remaining fuel, time, host calls and host
    /// bytes; it logs against the caller's `log` counters; its output goes to the caller's.
    pub fn invoke(
        &mut self,
        tool: &str,
        intent: &str,
        params: &Value,
        context: &CallContext,
        log: &log::Log,
    ) -> HostAnswer {
        let module_path = match self.module_of(tool, context) {
            Ok(path) => path.clone(),
            Err(refused) => return refused,
        };
        let bytes = match crate::module_file::read_module(&module_path) {
            Ok(bytes) => bytes,
            Err(e) => return HostAnswer::failed(BlockedReason::HostIntentFailed, format!("Tool `{tool}`: {e}.")),
        };
        let policy = self.nested_policy(context);
        let timeout_ms = policy.timeout_ms;
        let plugin = match Plugin::load(&bytes, policy) {
            Ok(plugin) => plugin,
            Err(failure) => {
                return HostAnswer::failed(
                    BlockedReason::HostIntentFailed,
                    format!("Tool `{tool}` cannot be loaded: {}.", failure.to_string().trim_end_matches('.')),
                )
            }
        };
        let grants = self.grants.get(tool).cloned().unwrap_or_default();
        let intents = StdIntents {
            identity: PluginIdentity { id: tool.to_string(), hash: sha256_hex(&bytes) },
            dist: super::dist::Dist::new(None, 0),
            log: log.shared(),
            net: net::Net::new(NESTED_MAX_BODY_BYTES),
            vault: vault::Vault::default(),
            context: context::Context::default(),
            tools: self.nested(tool),
            audit: audit::AuditLog::new(self.audit_path.clone())
                .with_tag(self.audit_tag.clone())
                .with_notices(log.notices()),
            grants: grants.clone(),
        };
        let env = self.environment.environment(Duration::from_millis(timeout_ms));
        // One run: the launch and the intent share the budgets handed down above.
        let mut sandbox = Sandbox::new(Arc::new(plugin), env).with_host(Box::new(intents), grants);
        tool_answer(sandbox.execute(intent, params), tool, intent)
    }

    /// The module file of `tool`, or the answer refusing the call: a cycle, the depth limit, a
    /// tool that is not registered, no fuel left.
    fn module_of(&self, tool: &str, context: &CallContext) -> Result<&PathBuf, HostAnswer> {
        if self.chain.iter().any(|id| id == tool) {
            let mut cycle = self.chain.clone();
            cycle.push(tool.to_string());
            return Err(HostAnswer::failed(
                BlockedReason::Forbidden,
                format!(
                    "tool.invoke refused: cycle: {}; a tool may not call back into its caller.",
                    cycle.join(" -> ")
                ),
            ));
        }
        if self.depth >= self.max_depth {
            return Err(HostAnswer::failed(
                BlockedReason::HostIntentFailed,
                format!("tool.invoke `{tool}` refused: depth limit {} reached.", self.max_depth),
            ));
        }
        let Some(module_path) = self.registry.get(tool) else {
            return Err(HostAnswer::failed(BlockedReason::HostIntentFailed, format!("No tool `{tool}` is installed.")));
        };
        if context.fuel_remaining == 0 {
            return Err(HostAnswer::failed(BlockedReason::FuelExhausted, "No fuel is left for a nested tool call."));
        }
        Ok(module_path)
    }

    /// The policy of a nested run: the defaults, within the caller's remaining fuel, time, host
    /// calls and host bytes and this host's memory cap.
    fn nested_policy(&self, context: &CallContext) -> Policy {
        let defaults = Policy::default();
        let timeout_ms =
            context.remaining_ns.map_or(defaults.timeout_ms, |ns| ns.div_ceil(1_000_000).min(defaults.timeout_ms));
        Policy {
            fuel_per_intent: defaults.fuel_per_intent.min(context.fuel_remaining),
            timeout_ms,
            max_host_calls: context.host_calls_remaining,
            max_host_bytes: context.host_bytes_remaining,
            max_memory_bytes: defaults.max_memory_bytes.min(self.max_memory_bytes),
            ..defaults
        }
    }
}

/// The caller's answer for a tool's run: its output as the text it wrote, or why it failed,
/// with what it spent either way.
fn tool_answer(report: IntentReport, tool: &str, intent: &str) -> HostAnswer {
    let spent = Spent {
        fuel: report.fuel_used,
        host_calls: report.host_calls,
        host_bytes: report.host_bytes,
        stdout: report.stdout,
        stderr: report.stderr,
    };
    let outcome = &report.outcome;
    if outcome.is_completed() {
        // The tool's output passes on as the text it wrote, at any depth.
        let output = outcome.output_json().and_then(|text| RawValue::from_string(text.to_string()).ok());
        return match output {
            Some(output) => HostAnswer { result: Ok(output), spent },
            None => HostAnswer {
                spent,
                ..HostAnswer::failed(BlockedReason::HostFault, format!("Tool `{tool}` answered no readable output."))
            },
        };
    }
    let reason = outcome.blocked_reason_text().unwrap_or("unknown");
    let message = match &outcome.blocked {
        Some(Blocked::Host(failure)) => failure.message(),
        _ => serde_json::from_str::<Value>(&outcome.json)
            .ok()
            .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default(),
    };
    HostAnswer {
        spent,
        ..HostAnswer::failed(
            BlockedReason::HostIntentFailed,
            format!("Tool `{tool}` intent `{intent}` failed with `{reason}`: {message}"),
        )
    }
}
