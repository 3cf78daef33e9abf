//! Promise 2: a plugin cannot reach host files. No directory is preopened, and the WASI
//! filesystem imports are rejected at load in the `marketplace` profile.

use contour_conformance::{completed_output, fixture, load_failure, plugin_with_imports, run_once};
use contour_core::{run_command, CommandExit, Plugin, Policy, Profile, VirtualEnvironment, WasiConfig};
use contour_core::{Signature, ValType, PREVIEW1};

/// What docs/ABI.md section 5 lets a plugin import from WASI Preview1: everything else (every
/// filesystem and socket function) must be rejected at load. Written out here, as the contract
/// says it, so marking another function plugin-safe in the shim's table fails this test.
const PLUGIN_WASI: [&str; 17] = [
    "args_get",
    "args_sizes_get",
    "environ_get",
    "environ_sizes_get",
    "clock_res_get",
    "clock_time_get",
    "random_get",
    "fd_write",
    "fd_read",
    "fd_fdstat_get",
    "fd_close",
    "fd_seek",
    "fd_prestat_get",
    "fd_prestat_dir_name",
    "proc_exit",
    "sched_yield",
    "poll_oneoff",
];

/// The WAT function type of a signature from the shim's table.
fn wat_type(signature: &Signature) -> String {
    let names = |types: &[ValType]| {
        types.iter().map(|t| if *t == ValType::I64 { "i64" } else { "i32" }).collect::<Vec<_>>().join(" ")
    };
    format!("(param {}) (result {})", names(signature.params), names(signature.results))
}

#[test]
fn every_preview1_function_off_the_plugin_list_is_rejected_at_load() {
    let mut rejected = 0;
    for signature in &PREVIEW1 {
        let name = signature.name;
        let wasm = plugin_with_imports(&format!(
            r#"(import "wasi_snapshot_preview1" "{name}" (func {}))"#,
            wat_type(signature)
        ));
        match Plugin::load(&wasm, Policy::default()) {
            Ok(_) => assert!(PLUGIN_WASI.contains(&name), "{name} loads, but plugins may not import it"),
            Err(failure) => {
                assert!(!PLUGIN_WASI.contains(&name), "{name} is on the plugin list but refused: {failure}");
                assert_eq!(failure.reason.as_str(), "import_not_allowed", "{name}: {failure}");
                assert!(failure.detail.contains(&format!("wasi_snapshot_preview1.{name} ")), "{}", failure.detail);
                assert!(failure.detail.starts_with("1 rejected"), "{name}: {}", failure.detail);
                rejected += 1;
            }
        }
    }
    assert_eq!(rejected, PREVIEW1.len() - PLUGIN_WASI.len(), "every function off the list is refused");
}

#[test]
fn path_open_and_fd_readdir_are_both_named() {
    let wasm = plugin_with_imports(
        r#"(import "wasi_snapshot_preview1" "path_open" (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
           (import "wasi_snapshot_preview1" "fd_readdir" (func (param i32 i32 i32 i64 i32) (result i32)))"#,
    );
    let failure = load_failure(&wasm, Policy::default());
    assert_eq!(failure.reason.as_str(), "import_not_allowed");
    assert!(failure.detail.starts_with("2 rejected"), "{}", failure.detail);
    assert!(failure.detail.contains("wasi_snapshot_preview1.path_open"), "{}", failure.detail);
    assert!(failure.detail.contains("wasi_snapshot_preview1.fd_readdir"), "{}", failure.detail);
}

#[test]
fn the_marketplace_rejects_what_a_command_may_import() {
    let wasm = fixture("command_path_open");
    let failure = load_failure(&wasm, Policy::default());
    assert_eq!(failure.reason.as_str(), "import_not_allowed");
    assert!(failure.detail.contains("wasi_snapshot_preview1.path_open"), "{}", failure.detail);
    // The same bytes as a `tdm exec` command load, and with nothing preopened path_open on
    // fd 3 answers EBADF (8), which `_start` turns into its exit code.
    let command = Plugin::load_as(&wasm, Policy::default(), Profile::Command).expect("loads as a command");
    let report = run_command(&command, Box::new(VirtualEnvironment::new(0)), WasiConfig::plugin());
    assert_eq!(report.exit, CommandExit::Exited(8));
}

#[test]
fn no_directory_is_preopened() {
    let output = completed_output(&run_once(&fixture("preopen_scan")));
    assert_eq!(output[0], 0, "no fd in 0..64 is a preopen: {output}");
    assert_eq!(output[1], 8, "fd_prestat_dir_name(3) is EBADF: {output}");
}
