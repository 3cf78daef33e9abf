//! Promise 4: a plugin cannot read host memory. The host touches only the plugin's exported
//! linear memory, and only after bounds checks, pointer + length overflow included: the
//! response pointer and length (docs/ABI.md section 2, step 4), the region `tdm_alloc` returns
//! (step 2), and every pointer the plugin hands the WASI shim.

use contour_conformance::{completed_output, fixture, framed, pointing_plugin, run_once, sandbox, wat};
use contour_core::{IntentReport, Policy};

const PAGE: u32 = 65_536;
const BODY: &[u8] = br#"{"status":"completed","output":1}"#;

fn run(wasm: &[u8], policy: Policy) -> IntentReport {
    sandbox(wasm, policy).execute("probe", &serde_json::json!({}))
}

fn blocked(report: &IntentReport) -> Option<&str> {
    report.outcome.blocked_reason_text()
}

#[test]
fn a_response_pointer_past_memory_is_invalid() {
    for ptr in [u32::MAX, u32::MAX - 3, PAGE, PAGE + 16, 0x8000_0000] {
        let report = run(&pointing_plugin(ptr, 16, &framed(BODY)), Policy::default());
        assert_eq!(blocked(&report), Some("invalid_response"), "ptr {ptr:#x}: {}", report.outcome.json);
    }
}

#[test]
fn a_response_pointer_without_room_for_its_length_is_invalid() {
    for ptr in [PAGE - 1, PAGE - 2, PAGE - 3] {
        let report = run(&pointing_plugin(ptr, PAGE - 4, &[0, 0, 0, 0]), Policy::default());
        assert_eq!(blocked(&report), Some("invalid_response"), "ptr {ptr:#x}: {}", report.outcome.json);
    }
}

#[test]
fn a_response_ending_exactly_at_the_end_of_memory_is_read() {
    let ptr = PAGE - 4 - BODY.len() as u32;
    let report = run(&pointing_plugin(ptr, ptr, &framed(BODY)), Policy::default());
    assert_eq!(completed_output(&report), 1);
    assert_eq!(report.outcome.json.as_bytes(), BODY);
}

#[test]
fn a_response_length_one_past_the_end_of_memory_is_invalid() {
    let ptr = PAGE - 4 - BODY.len() as u32;
    let mut data = framed(BODY);
    data[0] += 1;
    let report = run(&pointing_plugin(ptr, ptr, &data), Policy::default());
    assert_eq!(blocked(&report), Some("invalid_response"), "{}", report.outcome.json);
}

#[test]
fn a_response_length_that_overflows_the_address_space_is_invalid() {
    // With no size limit in the way, the length alone must be bounds-checked: 16 + 4 + len
    // wraps a u32 to exactly 0 (len = 2^32 - 20), or to 19 (len = u32::MAX).
    let policy = Policy { max_response_bytes: u32::MAX, ..Policy::default() };
    for len in [u32::MAX, u32::MAX - 19, u32::MAX - 16, PAGE] {
        let mut data = len.to_le_bytes().to_vec();
        data.extend_from_slice(BODY);
        let report = run(&pointing_plugin(16, 16, &data), policy.clone());
        assert_eq!(blocked(&report), Some("invalid_response"), "len {len:#x}: {}", report.outcome.json);
    }
}

/// A plugin whose `tdm_alloc` runs `alloc` (WAT instructions leaving an i32) and whose every
/// intent answers `BODY`.
fn allocating(alloc: &str) -> Vec<u8> {
    wat(&format!(
        r#"(module
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) {alloc})
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16)
  (data (i32.const 16) "{}"))"#,
        contour_conformance::wat_data(&framed(BODY))
    ))
}

const REQUEST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"probe","params":{}}"#;

#[test]
fn an_allocator_returning_zero_fails_the_intent() {
    let mut sandbox = sandbox(&allocating("i32.const 0"), Policy::default());
    let report = sandbox.execute_request(REQUEST);
    assert_eq!(blocked(&report), Some("allocation_failed"), "{}", report.outcome.json);
}

#[test]
fn an_allocator_returning_a_region_past_memory_fails_the_intent() {
    let len = REQUEST.len() as u32;
    for ptr in [u32::MAX, u32::MAX - len + 1, PAGE, PAGE - len + 1, PAGE - 1] {
        let mut sandbox = sandbox(&allocating(&format!("i32.const {ptr}")), Policy::default());
        let report = sandbox.execute_request(REQUEST);
        assert_eq!(blocked(&report), Some("allocation_failed"), "ptr {ptr:#x}: {}", report.outcome.json);
    }
}

#[test]
fn an_allocation_ending_exactly_at_the_end_of_memory_is_used() {
    let ptr = PAGE - REQUEST.len() as u32;
    let mut sandbox = sandbox(&allocating(&format!("i32.const {ptr}")), Policy::default());
    let report = sandbox.execute_request(REQUEST);
    assert_eq!(completed_output(&report), 1);
}

#[test]
fn an_allocator_that_grows_memory_may_return_the_new_pages() {
    // memory.grow returns the old size in pages (1): the new page starts at 65536.
    let wasm = allocating("(i32.mul (memory.grow (i32.const 1)) (i32.const 65536))");
    let mut sandbox = sandbox(&wasm, Policy::default());
    let report = sandbox.execute_request(REQUEST);
    assert_eq!(completed_output(&report), 1);
    assert_eq!(report.peak_memory_bytes, 2 * u64::from(PAGE));
}

#[test]
fn wasi_calls_with_out_of_bounds_pointers_get_efault() {
    let report = run_once(&fixture("bad_pointers"));
    let output = completed_output(&report);
    let errnos = output.as_array().expect("an array");
    assert_eq!(errnos.len(), 10, "{output}");
    for (index, errno) in errnos.iter().enumerate() {
        assert_eq!(errno, 21, "call [{index}] should be EFAULT: {output}");
    }
    assert!(report.stdout.is_empty(), "nothing was written: {:?}", report.stdout);
}
