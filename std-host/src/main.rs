//! The `tdm` binary: parses flags and hands over to `tdm_sdk::cli`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    tdm_sdk::cli::main()
}
