//! The `tdm` binary: parses flags and hands over to the library (`tdm_sdk::cli`).
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    tdm_sdk::cli::main()
}
