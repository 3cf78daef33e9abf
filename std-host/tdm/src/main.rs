//! The `tdm` binary: the command line over `tdm-sdk`. It parses flags into the library's
//! options once per subcommand ([`cli`]), runs the REPL ([`repl`]), chooses the recovery hint
//! that names what exists where the user is ([`hints`]), and prints every line through the one
//! escaping writer ([`terminal`], [`table`]) with the exit codes of [`exit`]. Nothing here is a
//! library other programs import: they embed `tdm-sdk`.
#![forbid(unsafe_code)]

mod cli;
mod exit;
mod hints;
mod mcp;
mod plugin_lines;
mod repl;
mod stdout_delivery;
mod table;
mod terminal;

fn main() -> std::process::ExitCode {
    cli::main()
}
