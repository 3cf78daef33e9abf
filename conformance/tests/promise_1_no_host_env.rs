//! Promise 1: a plugin cannot read host env vars; the WASI shim's environment (and argv) is
//! empty, whatever the host process has.

use contour_conformance::{completed_output, fixture, run_once};

#[test]
fn environ_and_args_are_empty() {
    // The host process has an environment and argv to leak (else this test would be vacuous).
    assert!(std::env::vars_os().next().is_some() && std::env::args_os().next().is_some());
    let report = run_once(&fixture("env_probe"));
    let output = completed_output(&report);
    // [environ_sizes_get errno, count, bytes, args_sizes_get errno, count, bytes, ...]
    assert_eq!(output[0], 0, "environ_sizes_get succeeds: {output}");
    assert_eq!(output[1], 0, "no env vars: {output}");
    assert_eq!(output[2], 0, "no env bytes: {output}");
    assert_eq!(output[3], 0, "args_sizes_get succeeds: {output}");
    assert_eq!(output[4], 0, "no args: {output}");
    assert_eq!(output[5], 0, "no arg bytes: {output}");
}

#[test]
fn environ_get_and_args_get_write_nothing() {
    let report = run_once(&fixture("env_probe"));
    let output = completed_output(&report);
    assert_eq!(output[6], 0, "environ_get succeeds on the empty list: {output}");
    assert_eq!(output[7], 0, "args_get succeeds on the empty list: {output}");
    assert_eq!(output[8], 0, "no byte of the guest's buffers was written: {output}");
    assert_eq!(output.as_array().map(Vec::len), Some(9), "{output}");
}
