//! The exit codes of `tdm` (README's CLI contract), in one place for every subcommand.

/// The intent completed (or the command did what it was asked).
pub const EXIT_COMPLETED: u8 = 0;
/// The intent, the load or an operator action failed or was refused; stdout or stderr says why.
/// A module that does not compile (`.wasm` or `.wat`) is this everywhere but `exec`.
pub const EXIT_FAILED: u8 = 1;
/// Bad usage or an I/O error; stderr says what (and `--json` prints the error object).
pub const EXIT_USAGE: u8 = 2;
/// `tdm exec`: the module was rejected at load (a `.wat` that does not compile too).
pub const EXIT_EXEC_REJECTED: u8 = 125;
/// `tdm exec`: the module trapped.
pub const EXIT_EXEC_TRAP: u8 = 126;
/// `tdm exec`: the module hit a limit (fuel, deadline, memory, stack).
pub const EXIT_EXEC_LIMIT: u8 = 127;
/// `tdm exec`: Ctrl-C (SIGINT) stopped the module (128 + SIGINT, as a shell reports a process
/// the signal ended; tdm still flushes, reports and prints `--stats`).
pub const EXIT_EXEC_CANCELLED: u8 = 130;
