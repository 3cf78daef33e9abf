//! The `tdm` command line: flags are parsed here and handed to one module per subcommand, each
//! a thin layer over the library (`session`, `operator`, `repl`, ...). The contract (stdout,
//! exit codes, the `--json` shapes) is documented in README.md and kept exactly.
//!
//! Adding a subcommand: a module with its `Args` struct and a `pub fn main(&Args, &GlobalArgs)
//! -> u8`, a variant in [`Command`] and one line in [`dispatch`]. Adding a flag to every runner:
//! a field in one of the groups of [`args`].

pub mod approve;
pub mod args;
pub mod audit;
pub mod call;
pub mod completions;
pub mod exec;
pub mod hub;
pub mod hub_publish;
pub mod inspect;
pub mod install;
pub mod key;
pub mod misread;
pub mod new;
pub mod pack;
pub mod repl;
pub mod replay;
pub mod report;
pub mod run;
pub mod status;
pub mod upgrade;

pub use crate::exit::*;

use args::GlobalArgs;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

/// The examples under `tdm --help`.
const EXAMPLES: &str = "\
Examples:
  tdm run examples/echo/echo.wat greet --params '{\"name\":\"Ada\"}'
  tdm run plugin.wasm sum --params @big.json --fuel 10_000_000 --max-memory 16MiB
  tdm inspect plugin.wasm --json
  tdm repl plugin.wasm
  tdm run plugin.wasm greet --record greet.trace && tdm replay greet.trace
  tdm hub add bundled examples/hub --key examples/keys/bundled-hub.pub
  tdm install echo --hub bundled && tdm approve echo --yes && tdm call echo greet
  tdm completions bash > ~/.local/share/bash-completion/completions/tdm";

/// What `tdm --help` opens with: what tdm is.
const ABOUT: &str = "tdm: run untrusted WebAssembly plugins in a sandbox (Contour), each intent \
within fuel, memory and time limits, every host call checked against its grants and audited.";

/// Contour: run untrusted WebAssembly plugins in a sandbox.
#[derive(Debug, Parser)]
// `--version`: tdm's version, the commit it was built from, wasmi's version and the wasmi
// features enabled (build.rs).
#[command(
    name = "tdm",
    version = env!("TDM_BUILD_VERSION"),
    about = ABOUT,
    propagate_version = true,
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    global: GlobalArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one intent of a plugin file and print its outcome as one JSON object.
    Run(run::RunArgs),
    /// Run one intent of an installed, approved plugin with its approved permissions.
    Call(call::CallArgs),
    /// Explore a plugin interactively: a module file, or an installed plugin's id.
    Repl(repl::ReplArgs),
    /// Run a WASI Preview1 command module's `_start` in the sandbox.
    Exec(exec::ExecArgs),
    /// Show a module's intents, exports, imports (allowed or rejected, and why), memory and verdict.
    Inspect(inspect::InspectArgs),
    /// Write a package folder from a module: plugin.toml, dist/, and signed with --key.
    Pack(pack::PackArgs),
    /// Make a signing key pair (NAME.key, NAME.pub) for packages and hubs.
    Key(key::KeyArgs),
    /// List a hub folder's plugins.
    Hub(hub::HubArgs),
    /// Install a plugin from a trusted hub (ID[@VERSION] --hub NAME) or a package folder (PATH). Never runs it.
    Install(install::InstallArgs),
    /// List the installed plugins whose trusted hub offers a newer version.
    Outdated(upgrade::OutdatedArgs),
    /// Install the newest version of a plugin from its trusted hub.
    Upgrade(upgrade::UpgradeArgs),
    /// Approve an installed plugin's launch, bound to its module hash and requested permissions.
    Approve(approve::ApproveArgs),
    /// Withdraw a plugin's approval.
    #[command(after_help = "Examples:\n  tdm revoke echo\n  tdm revoke echo --json   (for scripts)")]
    Revoke(approve::IdArgs),
    /// Remove an installed plugin and its approval (the audit log stays).
    #[command(after_help = "Examples:\n  tdm uninstall echo\n  tdm uninstall echo --json   (for scripts)")]
    Uninstall(approve::IdArgs),
    /// Show the workspace.
    Workspace(status::WorkspaceCommand),
    /// Print the audit log: one line per host-call decision.
    Audit(audit::AuditArgs),
    /// Replay a recorded session (--record FILE): the same bytes and fuel, or the first divergence.
    Replay(replay::ReplayArgs),
    /// Serve the approved plugins' intents as MCP tools to an agent, over stdio.
    Mcp(crate::mcp::McpArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Create a plugin project folder (Rust, C or AssemblyScript) that builds with one `make`.
    New(new::NewArgs),
}

/// Runs one parsed subcommand; the exit code.
fn dispatch(command: &Command, global: &GlobalArgs) -> u8 {
    match command {
        Command::Run(args) => run::main(args, global),
        Command::Call(args) => call::main(args, global),
        Command::Repl(args) => repl::main(args, global),
        Command::Exec(args) => exec::main(args, global),
        Command::Inspect(args) => inspect::main(args, global),
        Command::Pack(args) => pack::main(args, global),
        Command::Key(args) => key::main(args, global),
        Command::Hub(args) => hub::main(args, global),
        Command::Install(args) => install::main(args, global),
        Command::Outdated(args) => upgrade::outdated(args, global),
        Command::Upgrade(args) => upgrade::upgrade(args, global),
        Command::Approve(args) => approve::approve(args, global),
        Command::Revoke(args) => approve::revoke(args, global),
        Command::Uninstall(args) => approve::uninstall(args, global),
        Command::Workspace(args) => status::main(args, global),
        Command::Audit(args) => audit::main(args, global),
        Command::Replay(args) => replay::main(args, global),
        Command::Mcp(args) => crate::mcp::main(args, global),
        Command::Completions(args) => completions::main(args, global),
        Command::New(args) => new::main(args, global),
    }
}

/// The clap command, as `--help` and completions see it: each subcommand's `--version` says
/// `tdm`, not `tdm-run`.
pub fn command() -> clap::Command {
    fn named(command: clap::Command) -> clap::Command {
        command.mut_subcommands(|sub| named(sub.display_name("tdm")))
    }
    named(Cli::command())
}

/// Entry point of the `tdm` binary.
pub fn main() -> ExitCode {
    crate::stdout_delivery::note_closed_at_start();
    let parsed = command().try_get_matches().and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return ExitCode::from(delivered(usage_error(&e))),
    };
    ExitCode::from(delivered(dispatch(&cli.command, &cli.global)))
}

/// The exit code of a command that would exit `code`, once stdout is flushed: 2 with one line
/// on stderr when something meant for stdout was not delivered ([`crate::stdout_delivery`]).
fn delivered(code: u8) -> u8 {
    let Some(why) = crate::stdout_delivery::flushed_failure() else {
        return code;
    };
    crate::terminal::err_line(&format!(
        "tdm: error: the output could not be written to stdout ({why}); what was printed there is incomplete"
    ));
    crate::stdout_delivery::failed_exit_code(code)
}

/// A flag clap refused (or `--help`/`--version`): printed as clap renders it (escaped, like
/// every line tdm prints), and with `--json` among the arguments also as the error object on
/// stdout, so `--json` always prints JSON. `tdm exec`'s stdout is the command's: there the
/// error object is the one line on stderr, as every other message of tdm's is with `--json`.
fn usage_error(e: &clap::Error) -> u8 {
    if !e.use_stderr() {
        crate::stdout_delivery::note(e.print());
        return EXIT_COMPLETED;
    }
    let rendered = e.render().to_string();
    let json = std::env::args_os().take_while(|a| a != "--").any(|a| a == "--json");
    let exec = subcommand_typed().as_deref() == Some("exec");
    let exec_only = exec_only_hint(&rendered);
    if !(json && exec) {
        for line in rendered.lines() {
            crate::terminal::err_line(line);
        }
        if let Some(hint) = exec_only {
            crate::terminal::err_line(&format!("hint: {hint}"));
        }
    }
    if json {
        // The error's first paragraph (a missing argument's name is on the lines after the first).
        let lines: Vec<&str> = rendered.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
        let first = lines.join(" ");
        let first = first.trim_start_matches("error: ");
        let error = report::CliError::usage(if first.is_empty() { "invalid arguments" } else { first })
            .hint(exec_only.unwrap_or("run the subcommand with --help for its flags"));
        if exec {
            crate::terminal::err_json(&error.json().to_string());
        } else {
            crate::terminal::out_json(&error.json().to_string());
        }
    }
    EXIT_USAGE
}

/// The hint for a preopen flag given to a subcommand that runs plugins: only `tdm exec` has
/// them (a plugin never gets a filesystem, writable least of all).
fn exec_only_hint(rendered: &str) -> Option<&'static str> {
    let unexpected = |flag: &str| rendered.contains(&format!("unexpected argument '{flag}'"));
    (unexpected("--dir-rw") || unexpected("--dir")).then_some(
        "--dir and --dir-rw preopen host folders for WASI commands only: `tdm exec [--dir|--dir-rw HOST[::GUEST]] MODULE`; \
         a plugin never gets a filesystem",
    )
}

/// The subcommand the arguments name, read past the errors that made the parse fail.
fn subcommand_typed() -> Option<String> {
    let matches = command().ignore_errors(true).try_get_matches().ok()?;
    matches.subcommand_name().map(str::to_string)
}
