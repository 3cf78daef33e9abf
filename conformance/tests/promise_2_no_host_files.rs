//! Promise 2: a plugin cannot reach host files. No directory is preopened, and the WASI
//! filesystem imports are rejected at load in the `marketplace` profile.

use contour_conformance::{completed_output, fixture, load_failure, plugin_with_imports, run_once};
use contour_core::{run_command, CommandExit, Plugin, Policy, Profile, VirtualEnvironment, WasiConfig};

/// Preview1 filesystem (and socket) functions with their exact signatures, as WAT.
const FILESYSTEM_IMPORTS: [(&str, &str); 12] = [
    ("path_open", "(param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)"),
    ("fd_readdir", "(param i32 i32 i32 i64 i32) (result i32)"),
    ("fd_filestat_get", "(param i32 i32) (result i32)"),
    ("fd_filestat_set_size", "(param i32 i64) (result i32)"),
    ("fd_filestat_set_times", "(param i32 i64 i64 i32) (result i32)"),
    ("path_filestat_get", "(param i32 i32 i32 i32 i32) (result i32)"),
    ("path_create_directory", "(param i32 i32 i32) (result i32)"),
    ("path_unlink_file", "(param i32 i32 i32) (result i32)"),
    ("path_rename", "(param i32 i32 i32 i32 i32 i32) (result i32)"),
    ("path_readlink", "(param i32 i32 i32 i32 i32 i32) (result i32)"),
    ("fd_pwrite", "(param i32 i32 i32 i64 i32) (result i32)"),
    ("sock_accept", "(param i32 i32 i32) (result i32)"),
];

#[test]
fn every_filesystem_import_is_rejected_at_load() {
    for (name, signature) in FILESYSTEM_IMPORTS {
        let wasm = plugin_with_imports(&format!(r#"(import "wasi_snapshot_preview1" "{name}" (func {signature}))"#));
        let failure = load_failure(&wasm, Policy::default());
        assert_eq!(failure.reason.as_str(), "import_not_allowed", "{name}: {failure}");
        assert!(failure.detail.contains(&format!("wasi_snapshot_preview1.{name} ")), "{name}: {}", failure.detail);
        assert!(failure.detail.starts_with("1 rejected"), "{name}: {}", failure.detail);
    }
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
