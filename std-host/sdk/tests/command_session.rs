//! A WASI command runs end to end through the library's session, as an embedder (or `tdm
//! exec`) runs it: the exit code, the command budget and the argv it is given.

use contour_core::{BlockedReason, CommandExit};
use tdm_sdk::command::default_command_fuel;
use tdm_sdk::limits::Limits;
use tdm_sdk::session::{CommandError, CommandOptions, CommandRequest, CommandSession};

/// Exits with its argc: `proc_exit(argc)`.
const EXIT_ARGC: &str = r#"(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (drop (call $sizes (i32.const 0) (i32.const 4)))
    (call $exit (i32.load (i32.const 0)))))"#;

fn session_of(wat: &str, options: &CommandOptions) -> Result<CommandSession, CommandError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("command.wat");
    std::fs::write(&path, wat).unwrap();
    CommandSession::open_file(&path, options)
}

#[test]
fn a_command_runs_with_its_argv_and_the_command_budget() {
    let session = session_of(EXIT_ARGC, &CommandOptions::default()).unwrap();
    let args = ["command.wat", "a", "b"].map(String::from).to_vec();
    let run = session.run(CommandRequest { args, ..CommandRequest::default() }).unwrap();
    assert!(matches!(run.report.exit, CommandExit::Exited(3)), "{:?}", run.report.exit);
    assert_eq!(run.budget, default_command_fuel(5_000));
    assert!(!run.cancelled);
}

#[test]
fn the_limit_flags_bound_a_command() {
    let spin = r#"(module (memory (export "memory") 1) (func (export "_start") (loop (br 0))))"#;
    let options = CommandOptions { limits: Limits { fuel: Some(10_000), ..Limits::default() }, seed: Some(1) };
    let run = session_of(spin, &options).unwrap().run(CommandRequest::default()).unwrap();
    match run.report.exit {
        CommandExit::Failed(failure) => assert_eq!(failure.reason, BlockedReason::FuelExhausted),
        other => panic!("{other:?}"),
    }
    assert_eq!(run.budget, 10_000);
}

#[test]
fn a_plugin_is_refused_as_a_command_and_said_to_be_a_plugin() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/repl_counter.wat");
    let plugin = std::fs::read_to_string(fixture).unwrap();
    match session_of(&plugin, &CommandOptions::default()) {
        Err(CommandError::Refused { is_plugin, .. }) => assert!(is_plugin),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_memory_flag_bounds_a_command_at_load() {
    let big = r#"(module (memory (export "memory") 2) (func (export "_start")))"#;
    let options = CommandOptions { limits: Limits { max_memory: Some(65_536), ..Limits::default() }, seed: None };
    assert!(matches!(session_of(big, &options), Err(CommandError::Refused { is_plugin: false, .. })));
    assert!(session_of(big, &CommandOptions::default()).is_ok());
}
