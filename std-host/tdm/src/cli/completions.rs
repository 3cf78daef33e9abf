//! `tdm completions SHELL`: a completion script generated from the same clap definitions as
//! `--help`, so it knows every subcommand and flag.

use super::args::GlobalArgs;
use crate::exit::EXIT_COMPLETED;
use clap::Args;
use clap_complete::Shell;

/// `tdm completions`'s flags.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  tdm completions bash > ~/.local/share/bash-completion/completions/tdm
  tdm completions zsh > ~/.zfunc/_tdm          (with fpath+=~/.zfunc before compinit)
  tdm completions fish > ~/.config/fish/completions/tdm.fish")]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    pub(crate) shell: Shell,
}

/// Prints the script on stdout; the exit code.
pub fn main(args: &CompletionsArgs, _global: &GlobalArgs) -> u8 {
    let mut command = super::command();
    // Generated into memory first: clap_complete panics on a failed write.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "tdm", &mut script);
    crate::stdout_delivery::note(std::io::Write::write_all(&mut std::io::stdout().lock(), &script));
    EXIT_COMPLETED
}
