//! `tdm exec [FLAGS] MODULE [ARGS...]`: a WASI Preview1 command's `_start` in the sandbox. Its stdout
//! and stderr are the command's own; the exit code is its `proc_exit` code, or 125 (rejected at
//! load), 126 (trapped), 127 (a limit), 130 (Ctrl-C: SIGINT stops the module at its next
//! deadline check, as it stops `tdm run`'s intent; a second SIGINT ends tdm at once). tdm's own
//! messages go to stderr (JSON lines with `--json`).

use super::args::{parse_env, GlobalArgs, JsonArg, RunnerArgs};
use super::report::CliError;
use crate::exit::{EXIT_EXEC_CANCELLED, EXIT_EXEC_LIMIT, EXIT_EXEC_REJECTED, EXIT_EXEC_TRAP, EXIT_FAILED};
use crate::hints::{command_message, recovery_hint, Context, Front};
use crate::terminal::{self, errln};
use clap::Args;
use contour_core::{BlockedReason, CommandExit, Failure};
use serde_json::{json, Value};
use std::path::PathBuf;
use tdm_sdk::command::stats_line;
use tdm_sdk::dirfs::PreopenDir;
use tdm_sdk::environment::Cancel;
use tdm_sdk::module_file::ModuleFileError;
use tdm_sdk::session::{CommandError, CommandRequest, CommandRun, CommandSession};

const EXAMPLES: &str = "\
Examples:
  tdm exec hello.wasm --name Ada                 everything after the module is the module's
  tdm exec --dir ./data --env LANG=C --env HOME --fuel 100_000_000 --max-memory 32MiB --stats tool.wasm ARGS
  tdm exec --dir ./src::/src --dir-rw ./out::/out --stats fmt.wasm /src/a.txt /out/a.txt
                                                 /src is read-only, /out writable";

/// `--fuel` as `tdm exec` takes it: a command's default budget scales with its deadline.
const FUEL_HELP: &str = "Fuel budget of the command (deterministic instruction count; `_` may group digits) \
     [default: 100_000_000_000 per second of the deadline, 500_000_000_000 for the default 5s]";
/// `--timeout` as `tdm exec` takes it: no approval to bound it.
const TIMEOUT_HELP: &str =
    "Wall-clock deadline of the command: seconds (2, 0.5, 2s) or milliseconds (500ms) [default: 5s]";
/// `--max-memory` as `tdm exec` takes it.
const MAX_MEMORY_HELP: &str = "Linear memory limit: bytes or a size with a unit (64MiB, 512KiB, 1GiB) [default: 64MiB]";
/// `--stats` as `tdm exec` prints them.
const STATS_HELP: &str = "Print fuel used, fuel budget, peak memory, time and each preopen (ro or rw) to stderr \
     (a JSON line with --json)";

/// `--json` as `tdm exec` takes it: stdout stays the command's.
const JSON_HELP: &str =
    "Print tdm's own messages (errors, the stop report, --stats) as JSON lines on stderr; stdout stays the command's";

/// `tdm exec`'s flags.
#[derive(Debug, Args)]
#[command(
    after_help = EXAMPLES,
    mut_arg("fuel", |a| a.help(FUEL_HELP)),
    mut_arg("timeout", |a| a.help(TIMEOUT_HELP)),
    mut_arg("max_memory", |a| a.help(MAX_MEMORY_HELP)),
    mut_arg("stats", |a| a.help(STATS_HELP)),
    mut_arg("json", |a| a.help(JSON_HELP)),
)]
pub struct ExecArgs {
    /// The WASI command module (.wasm or .wat); tdm's flags go before it
    pub(crate) module: PathBuf,
    /// Set an environment variable for the module: KEY=VALUE, or NAME for tdm's own NAME (left
    /// unset when tdm has none, as `wasmtime run` does)
    #[arg(long = "env", value_name = "K=V|NAME", value_parser = parse_env)]
    pub(crate) envs: Vec<String>,
    /// Preopen a host directory read-only as the guest's `/` (HOST) or at GUEST (HOST::GUEST)
    #[arg(long = "dir", value_name = "HOST_DIR")]
    pub(crate) dirs: Vec<String>,
    /// Preopen a host directory WRITABLE (HOST or HOST::GUEST, as --dir): the command may create,
    /// write, truncate, rename and remove files and directories below it, never outside it
    /// (no symlinks or links are made); preopened after every --dir
    #[arg(long = "dir-rw", value_name = "HOST_DIR")]
    pub(crate) dirs_rw: Vec<String>,
    #[command(flatten)]
    pub(crate) runner: RunnerArgs,
    #[command(flatten)]
    pub(crate) json: JsonArg,
    /// Arguments passed to the module after argv[0]: everything after MODULE (tdm's own flags
    /// go before it, as with `wasmtime run`; a first `--` is dropped)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "ARGS")]
    pub(crate) args: Vec<String>,
}

/// Runs `tdm exec`; the exit code.
pub fn main(args: &ExecArgs, _global: &GlobalArgs) -> u8 {
    exec(args).unwrap_or_else(|e| {
        if args.json.json {
            // stdout is the command's: tdm's error object goes to stderr.
            errln_json(&e.json());
            e.kind.exit_code()
        } else {
            e.print(false)
        }
    })
}

/// The context of a failure before anything ran.
fn at_load() -> Context {
    Context { at_load: true, ..Context::default() }
}

/// One JSON line on stderr.
fn errln_json(value: &Value) {
    terminal::err_json(&value.to_string());
}

/// Reports a module that stopped or was rejected: text, or a JSON line, on stderr. `hint`
/// defaults to the one [`Front::Exec`] gives for the failure (`context`).
fn report(args: &ExecArgs, what: &str, failure: &Failure, hint: Option<String>, context: Context) {
    let hint = hint.or_else(|| recovery_hint(failure, Front::Exec, context));
    let message = if failure.reason == BlockedReason::Cancelled {
        "The command was cancelled (Ctrl-C) before it finished.".to_string()
    } else {
        command_message(failure)
    };
    if args.json.json {
        errln_json(&json!({
            "status": what, "module": args.module.display().to_string(),
            "blockedReason": failure.reason.as_str(), "message": message, "hint": hint,
        }));
    } else {
        errln!("tdm: {} {what}: {message} ({})", args.module.display(), failure.reason);
        if let Some(hint) = hint {
            errln!("tdm: hint: {hint}");
        }
    }
}

/// A preopen's guest path in one spelling: `.` and empty segments dropped (`//a/./b/` is
/// `/a/b`, `.` stays `.`), so two spellings of one path are one preopen; empty, `..` and control
/// characters are refused (a guest resolves paths under the preopen's name).
fn guest_path(guest: &str) -> Result<String, String> {
    if guest.is_empty() {
        return Err("the guest path is empty".into());
    }
    if guest.chars().any(char::is_control) {
        return Err("the guest path holds a control character".into());
    }
    let mut parts = Vec::new();
    for part in guest.split('/').filter(|part| !part.is_empty() && *part != ".") {
        if part == ".." {
            return Err("the guest path may not hold `..`".into());
        }
        parts.push(part);
    }
    Ok(match (guest.starts_with('/'), parts.is_empty()) {
        (true, _) => format!("/{}", parts.join("/")),
        (false, true) => ".".to_string(),
        (false, false) => parts.join("/"),
    })
}

/// The preopens `--dir` (read-only) then `--dir-rw` (writable) ask for, each in the order
/// given; one guest path is preopened once.
fn preopens(dirs: &[String], dirs_rw: &[String]) -> Result<Vec<PreopenDir>, CliError> {
    let mut out: Vec<PreopenDir> = Vec::new();
    let flagged = dirs.iter().map(|d| (d, false)).chain(dirs_rw.iter().map(|d| (d, true)));
    for (spec, writable) in flagged {
        let flag = if writable { "--dir-rw" } else { "--dir" };
        let (host, guest) = match spec.split_once("::") {
            Some((host, guest)) => (host, guest),
            None => (spec.as_str(), "/"),
        };
        let guest = guest_path(guest).map_err(|why| CliError::usage(format!("{flag} {spec}: {why}")))?;
        match std::fs::metadata(host) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(CliError::usage(format!("{flag} {host}: not a directory"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CliError::usage(format!("{flag} {host}: no such directory")))
            }
            Err(e) => return Err(CliError::usage(format!("{flag} {host}: {e}"))),
        }
        if out.iter().any(|p| p.guest == guest) {
            return Err(CliError::usage(format!(
                "{flag} {spec}: guest path {guest} is already preopened (use HOST::GUEST)"
            )));
        }
        out.push(PreopenDir { host: PathBuf::from(host), guest, writable });
    }
    Ok(out)
}

fn exec(args: &ExecArgs) -> Result<u8, CliError> {
    let session = match CommandSession::open_file(&args.module, &args.runner.command_options()) {
        Ok(session) => session,
        Err(e) => return refused_at_load(args, e),
    };
    let cancel = super::run::sigint_cancel();
    let request = request(args, cancel)?;
    let preopened = request.preopens.clone();
    let run = session.run(request).map_err(|e| CliError::usage(e.to_string()))?;
    if args.runner.limits.stats {
        print_stats(args, &run, &preopened);
    }
    match run.report.exit {
        CommandExit::Exited(code) => Ok(u8::try_from(code).unwrap_or(EXIT_FAILED)),
        CommandExit::Failed(failure) if failure.reason == BlockedReason::Cancelled => {
            report(args, "cancelled", &failure, None, Context::default());
            Ok(EXIT_EXEC_CANCELLED)
        }
        CommandExit::Failed(failure) => {
            report(args, "stopped", &failure, None, Context::default());
            Ok(match failure.reason {
                BlockedReason::PluginTrap => EXIT_EXEC_TRAP,
                _ => EXIT_EXEC_LIMIT,
            })
        }
    }
}

/// A command session that did not open: the exit code of a rejection (said on stderr: a
/// `.wat` error with its line, a plugin with the command that runs it), or an error.
fn refused_at_load(args: &ExecArgs, e: CommandError) -> Result<u8, CliError> {
    match e {
        CommandError::Read(ModuleFileError::Wat(e)) => {
            let error = CliError::wat(&e);
            let failure = Failure::new(BlockedReason::InvalidModule, e.headline());
            if args.json.json {
                report(args, "rejected", &failure, None, at_load());
            } else {
                errln!("tdm: error: {}", error.message);
                for line in &error.detail {
                    errln!("  {line}");
                }
            }
            Ok(EXIT_EXEC_REJECTED)
        }
        CommandError::Read(ModuleFileError::File(e)) => Err(e.into()),
        CommandError::Refused { failure, is_plugin } => {
            let hint = is_plugin.then(|| {
                format!(
                    "{} is a plugin, not a WASI command (it exports tdm_plugin_execute_intent, not _start): \
                     run one of its intents with `tdm run {} METHOD`",
                    args.module.display(),
                    args.module.display()
                )
            });
            report(args, "rejected", &failure, hint, at_load());
            Ok(EXIT_EXEC_REJECTED)
        }
        CommandError::Preopen(e) => Err(CliError::usage(e.to_string())),
    }
}

/// What the command sees: argv (the module's file name, then ARGS), `--env`, the `--dir`
/// preopens read-only and the `--dir-rw` ones writable; `cancel` (Ctrl-C) stops it.
fn request(args: &ExecArgs, cancel: Option<Cancel>) -> Result<CommandRequest, CliError> {
    let preopens = preopens(&args.dirs, &args.dirs_rw)?;
    let argv0 = args.module.file_name().map_or_else(|| "module".to_string(), |n| n.to_string_lossy().into_owned());
    let mut argv = vec![argv0];
    argv.extend(args.args.iter().cloned());
    Ok(CommandRequest { args: argv, environ: environ(&args.envs)?, preopens, cancel })
}

/// The command's environment from `--env`: KEY=VALUE as given; a bare NAME takes tdm's own
/// value of NAME, and is left out when tdm has none (as `wasmtime run` does). A value that is
/// not UTF-8 is a usage error (WASI's environment is text).
fn environ(envs: &[String]) -> Result<Vec<String>, CliError> {
    let mut environ = Vec::with_capacity(envs.len());
    for entry in envs {
        if entry.contains('=') {
            environ.push(entry.clone());
            continue;
        }
        match std::env::var(entry) {
            Ok(value) => environ.push(format!("{entry}={value}")),
            Err(std::env::VarError::NotPresent) => {}
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(CliError::usage(format!("--env {entry}: tdm's value of {entry} is not UTF-8"))
                    .hint(format!("give the value as text with --env {entry}=VALUE")));
            }
        }
    }
    Ok(environ)
}

/// `--stats` of a command on stderr: a text line and one line per preopen (`ro` or `rw`), or
/// one JSON line with `--json`.
fn print_stats(args: &ExecArgs, run: &CommandRun, preopens: &[PreopenDir]) {
    let access = |p: &PreopenDir| if p.writable { "rw" } else { "ro" };
    if args.json.json {
        let elapsed_us = u64::try_from(run.elapsed.as_micros()).unwrap_or(u64::MAX);
        let preopens: Vec<Value> = preopens
            .iter()
            .map(|p| json!({ "host": p.host.display().to_string(), "guest": p.guest, "access": access(p) }))
            .collect();
        let stats = json!({
            "fuelUsed": run.report.fuel_used,
            "fuelBudget": run.budget,
            "peakMemoryBytes": run.report.peak_memory_bytes,
            "elapsedUs": elapsed_us,
            "cancelled": run.cancelled,
            "preopens": preopens,
        });
        errln_json(&json!({ "stats": stats }));
    } else {
        errln!("{}", stats_line(&run.report, run.budget, run.elapsed));
        for preopen in preopens {
            errln!("tdm: preopen {} {} <- {}", preopen.guest, access(preopen), preopen.host.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guest_path_has_one_spelling_and_never_climbs() {
        for (given, spelled) in
            [("/", "/"), ("/x", "/x"), ("/x/", "/x"), ("//x", "/x"), ("/./x/.", "/x"), (".", "."), ("a/b", "a/b")]
        {
            assert_eq!(guest_path(given).as_deref(), Ok(spelled), "{given}");
        }
        for bad in ["", "..", "/a/../b", "a/..", "/x\u{1b}[2J"] {
            assert!(guest_path(bad).is_err(), "{bad:?}");
        }
        let dir = std::env::temp_dir().display().to_string();
        let twice = [format!("{dir}::/x"), format!("{dir}::/./x/")];
        assert!(preopens(&twice, &[]).is_err(), "one guest path, two spellings");
        assert!(preopens(&twice[..1], &twice[1..]).is_err(), "one guest path, read-only and writable");
    }
}
