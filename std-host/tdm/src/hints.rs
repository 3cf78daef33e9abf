//! Recovery hints that fit the front end the user typed into. Core's hint for a host failure
//! names knobs generically ("raise the policy limit"); here each is replaced by one that names
//! only what exists where the user is: a flag of that subcommand, a REPL command, or the fact
//! that a limit is fixed or bound by an approval. The hint is data handed to core's renderer
//! (`Outcome::from_failure_told`): the outcome keeps its shape and every other member; a
//! plugin's own failed outcome is never touched.

use contour_core::{BlockedReason, Failure, Outcome, Told};
use contour_core::{
    DEFAULT_MAX_CALL_DEPTH, DEFAULT_MAX_MEMORY_BYTES, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_REQUEST_DEPTH,
};
use std::borrow::Cow;
use tdm_sdk::module_kind::OtherKind;
use tdm_sdk::session::{RunReport, Session, SessionError};

/// Where the plugin runs, which decides what a hint may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Front {
    /// `tdm run FILE`: every limit flag and `--grant`.
    Run,
    /// `tdm call ID`: limit flags that may only lower the approval.
    Call,
    /// `tdm repl FILE`: `:fuel`, `:grant`, and the flags it was started with.
    ReplFile,
    /// `tdm repl ID`: within the approval.
    ReplInstalled,
    /// `tdm exec FILE`: limit flags.
    Exec,
}

impl Front {
    fn installed(self) -> bool {
        matches!(self, Self::Call | Self::ReplInstalled)
    }

    /// The REPL's front for `session`: within an approval or not.
    pub fn repl(session: &Session) -> Self {
        if session.is_installed() {
            Self::ReplInstalled
        } else {
            Self::ReplFile
        }
    }
}

/// What else is known about the failure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Context {
    /// The module was refused at load (nothing ran).
    pub at_load: bool,
    /// The module is another kind than a plugin (a WASI command, an Extism plugin).
    pub other_kind: Option<OtherKind>,
    /// The module is WebAssembly text that does not compile (its error names FILE:LINE:COL).
    pub wat: bool,
    /// An installed plugin was asked for an intent its plugin.toml does not declare (refused as
    /// `not_approved` before anything ran: the approval covers the declared intents only).
    pub undeclared: bool,
}

/// The hint for `failure` at `front`, when it should differ from core's.
pub fn recovery_hint(failure: &Failure, front: Front, context: Context) -> Option<String> {
    let installed = front.installed();
    let mib = |bytes: u64| bytes / (1024 * 1024);
    let hint = match failure.reason {
        BlockedReason::InvalidModule if context.wat => {
            "Fix the WebAssembly text at the line and column the error names (tdm reads .wat files directly).".into()
        }
        BlockedReason::NotApproved if context.undeclared => match front {
            Front::ReplInstalled => "Run one of the declared intents (:intents lists them).".into(),
            _ => "Call one of the declared intents (`tdm workspace status` lists them); a new intent needs a version that declares it, approved with `tdm approve ID`.".into(),
        },
        BlockedReason::AbiMismatch | BlockedReason::ImportNotAllowed
            if context.other_kind == Some(OtherKind::Command) =>
        {
            "This is a WASI command (it exports `_start`, not the plugin exports): run it with `tdm exec FILE`.".into()
        }
        BlockedReason::AbiMismatch | BlockedReason::ImportNotAllowed if context.other_kind == Some(OtherKind::Extism) => {
            "This is an Extism plugin (it imports `extism:host/...`): Contour runs plugins written to the TDM IPC ABI (docs/ABI.md; SDKs for Rust, C and AssemblyScript in guest-sdk/).".into()
        }
        BlockedReason::FuelExhausted => match front {
            Front::Run => "Send a smaller input or raise the fuel budget (--fuel N).".into(),
            Front::Exec => "Send a smaller input or raise the fuel budget (--fuel N, before the module).".into(),
            Front::ReplFile => "Send a smaller input or raise the fuel budget (:fuel N).".into(),
            Front::Call | Front::ReplInstalled => {
                "Send a smaller input: an installed plugin's fuel budget is its approved one (a limit flag can lower it, never raise it).".into()
            }
        },
        BlockedReason::Cancelled => match front {
            Front::ReplFile | Front::ReplInstalled => "The session goes on: run the next intent.".into(),
            Front::Run | Front::Call => "Run the command again to let the intent finish.".into(),
            Front::Exec => "Run tdm exec again to let the command finish.".into(),
        },
        BlockedReason::DeadlineExceeded => match front {
            Front::Run => "Send a smaller input or raise the deadline (--timeout SECS).".into(),
            Front::Exec => "Send a smaller input or raise the deadline (--timeout SECS, before the module).".into(),
            Front::ReplFile => "Send a smaller input, or start the REPL again with a longer --timeout SECS.".into(),
            Front::Call | Front::ReplInstalled => {
                "Send a smaller input or retry: an installed plugin's deadline is its approved one.".into()
            }
        },
        BlockedReason::MemoryLimitExceeded if installed => {
            "Send a smaller input: an installed plugin's memory limit is its approved one.".into()
        }
        BlockedReason::MemoryLimitExceeded if context.at_load => format!(
            "The module needs more memory at start than the limit allows: raise --max-memory (default {} MiB).",
            mib(DEFAULT_MAX_MEMORY_BYTES)
        ),
        BlockedReason::MemoryLimitExceeded if front == Front::ReplFile => {
            "Send a smaller input, or start the REPL again with a larger --max-memory SIZE.".into()
        }
        BlockedReason::MemoryLimitExceeded => {
            "Send a smaller input or raise the memory limit (--max-memory SIZE, e.g. 128MiB).".into()
        }
        BlockedReason::RequestTooLarge => format!(
            "Send smaller params: a request, params included, may be at most {} MiB (a fixed limit).",
            u64::from(DEFAULT_MAX_REQUEST_BYTES) / (1024 * 1024)
        ),
        BlockedReason::RequestTooDeep => format!(
            "Send params nested at most {DEFAULT_MAX_REQUEST_DEPTH} levels deep (arrays and objects; a fixed limit)."
        ),
        BlockedReason::ModuleTooLarge => {
            "Shrink the module (release build, LTO, strip): a module may be at most 32 MiB (a fixed limit).".into()
        }
        BlockedReason::ResponseTooLarge => {
            "Ask the plugin for less output: the response limit (4 MiB, or lower in plugin.toml) is not a flag.".into()
        }
        BlockedReason::ResourceLimitExceeded => {
            "Reduce the module's tables: at most 8 tables of 100000 elements (fixed limits).".into()
        }
        BlockedReason::StackExhausted => {
            format!("Avoid deep recursion: the call depth is fixed at {DEFAULT_MAX_CALL_DEPTH} frames.")
        }
        BlockedReason::HostCallLimitExceeded => {
            "Make fewer or smaller host calls per intent: at most 1000 calls and 16 MiB (fixed limits).".into()
        }
        BlockedReason::PermissionDenied => match front {
            Front::Run => "Grant the permission the message names with --grant PERM.".into(),
            Front::ReplFile => "Grant the permission the message names with :grant PERM.".into(),
            Front::Call | Front::ReplInstalled => {
                "Its approval does not include that permission: install a version asking for it, then `tdm approve ID`.".into()
            }
            Front::Exec => return None,
        },
        _ => return None,
    };
    Some(hint)
}

/// A failure's message as `tdm exec` prints it: about the command, where core's fixed message
/// speaks of an intent or a plugin.
pub fn command_message(failure: &Failure) -> String {
    if failure.reason == BlockedReason::AbiMismatch {
        // Core's fixed message is about the plugin ABI, which a command does not implement.
        return format!("The module is not a WASI command. {}", failure.detail);
    }
    let message = failure.message();
    let rest = ["The intent ", "The plugin "].iter().find_map(|subject| message.strip_prefix(subject));
    rest.map_or_else(|| message.clone(), |rest| format!("The command {rest}"))
}

/// The outcome's JSON as printed at `front`: a host failure re-rendered with the front's hint
/// (and, when cancelled, a message saying so); anything else as it is.
pub fn outcome_json(outcome: &Outcome, front: Front, context: Context) -> Cow<'_, str> {
    let Some(failure) = outcome.host_failure() else {
        return Cow::Borrowed(&outcome.json);
    };
    let message = if failure.reason == BlockedReason::Cancelled {
        // The one cancel a command-line front has is the user's Ctrl-C.
        "The intent was cancelled (Ctrl-C) before it finished.".to_string()
    } else if context.undeclared && failure.reason == BlockedReason::NotApproved {
        // The plugin is approved; this intent is outside what was approved.
        failure.detail.clone()
    } else {
        failure.message()
    };
    let hint = recovery_hint(failure, front, context);
    if hint.is_none() && message == failure.message() {
        return Cow::Borrowed(&outcome.json);
    }
    let told = Told { message: Some(&message), hint: hint.as_deref() };
    Cow::Owned(Outcome::from_failure_told(failure.clone(), told).json)
}

/// A run's outcome JSON as printed at `front`.
pub fn run_json(ran: &RunReport, front: Front) -> String {
    let context = Context { undeclared: ran.undeclared, ..Context::default() };
    outcome_json(&ran.report.outcome, front, context).into_owned()
}

/// The failed outcome's JSON a session error is, as printed at `front` (a load refusal,
/// `not_approved`, a `.wat` that does not compile); `None` for any other error.
pub fn refusal_json(error: &SessionError, front: Front) -> Option<String> {
    let failure = error.failure()?;
    let wat = matches!(error, SessionError::Wat(_));
    let context = Context { at_load: true, other_kind: error.other_kind(), wat, ..Context::default() };
    Some(outcome_json(&Outcome::from_failure(failure), front, context).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn every_front_names_only_its_own_knobs() {
        let fuel = Failure::new(BlockedReason::FuelExhausted, "The budget is 10 fuel.");
        let hint = |front| recovery_hint(&fuel, front, Context::default()).unwrap();
        assert!(hint(Front::Run).contains("--fuel"));
        assert!(hint(Front::ReplFile).contains(":fuel") && !hint(Front::ReplFile).contains("--fuel"));
        assert!(hint(Front::Call).contains("approved"));
        let request = Failure::new(BlockedReason::RequestTooLarge, "");
        assert!(!recovery_hint(&request, Front::Run, Context::default()).unwrap().contains("raise"));
        let outcome = Outcome::from_failure(fuel.clone());
        let rendered = outcome_json(&outcome, Front::ReplFile, Context::default());
        let value: Value = serde_json::from_str(&rendered).unwrap();
        let core: Value = serde_json::from_str(&Outcome::from_failure(fuel).json).unwrap();
        assert_eq!(value["message"], core["message"]);
        assert_eq!(value["output"], core["output"]);
        assert_eq!(value["recoveryHint"], "Send a smaller input or raise the fuel budget (:fuel N).");
    }

    #[test]
    fn a_command_is_told_about_as_a_command() {
        let fuel = Failure::new(BlockedReason::FuelExhausted, "The budget is 1000 fuel.");
        assert_eq!(command_message(&fuel), "The command used up its fuel budget. The budget is 1000 fuel.");
        let memory = Failure::new(BlockedReason::MemoryLimitExceeded, "");
        assert_eq!(command_message(&memory), "The command exceeded its linear memory limit.");
        let invalid = Failure::new(BlockedReason::InvalidModule, "bad magic");
        assert_eq!(command_message(&invalid), invalid.message());
        let cancelled = Failure::new(BlockedReason::Cancelled, "");
        let hint = recovery_hint(&cancelled, Front::Exec, Context::default()).unwrap();
        assert!(hint.contains("tdm exec again") && !hint.contains("intent"), "{hint}");
    }

    #[test]
    fn a_cancelled_intent_says_so_and_only_the_repl_says_the_session_goes_on() {
        let cancelled = Outcome::from_failure(Failure::new(BlockedReason::Cancelled, ""));
        for (front, hint) in [(Front::ReplFile, "session goes on"), (Front::Run, "again"), (Front::Call, "again")] {
            let value: Value = serde_json::from_str(&outcome_json(&cancelled, front, Context::default())).unwrap();
            assert!(value["message"].as_str().unwrap().contains("cancelled (Ctrl-C)"), "{value}");
            assert_eq!(value["blockedReason"], "cancelled", "{value}");
            assert_eq!(value["output"]["retryable"], true, "{value}");
            assert!(value["recoveryHint"].as_str().unwrap().contains(hint), "{front:?}: {value}");
        }
    }
}
