//! Conformance plugins (WAT fixtures under `fixtures/`) and the helpers the tests under `tests/`
//! use to run them through a real Contour `Sandbox`, one test file per promise or ABI rule.

mod wall;

pub use wall::{stepping_wall, ScriptedWall, SteppingWall, WallScript};

use contour_core::{Failure, IntentReport, Plugin, Policy, Sandbox, VirtualEnvironment};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// The seed of the `VirtualEnvironment` the helpers run plugins with.
pub const SEED: u64 = 7;

/// The path of fixture `name` (`fixtures/NAME.wat`).
pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(format!("{name}.wat"))
}

/// The WebAssembly bytes of fixture `name`, parsed from `fixtures/NAME.wat`.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixture_path(name);
    wat::parse_file(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// The WebAssembly bytes of a module given as WAT text.
pub fn wat(text: &str) -> Vec<u8> {
    wat::parse_str(text).unwrap_or_else(|e| panic!("bad test WAT: {e}\n{text}"))
}

/// Loads `wasm` as a marketplace plugin, panicking with the failure when a load check refuses it.
pub fn load(wasm: &[u8], policy: Policy) -> Arc<Plugin> {
    match Plugin::load(wasm, policy) {
        Ok(plugin) => Arc::new(plugin),
        Err(failure) => panic!("the plugin should load, but: {failure}"),
    }
}

/// Loads `wasm` as a marketplace plugin and returns the failure, panicking when it loads.
pub fn load_failure(wasm: &[u8], policy: Policy) -> Failure {
    match Plugin::load(wasm, policy) {
        Ok(_) => panic!("the plugin should be refused at load, but it loaded"),
        Err(failure) => failure,
    }
}

/// A fresh sandbox for `wasm` (loaded under `policy`) with a `VirtualEnvironment` seeded `seed`.
pub fn sandbox_with_seed(wasm: &[u8], policy: Policy, seed: u64) -> Sandbox {
    Sandbox::new(load(wasm, policy), Box::new(VirtualEnvironment::new(seed)))
}

/// A fresh sandbox for `wasm` (loaded under `policy`) with a `VirtualEnvironment` seeded `SEED`.
pub fn sandbox(wasm: &[u8], policy: Policy) -> Sandbox {
    sandbox_with_seed(wasm, policy, SEED)
}

/// Runs one intent `method` with `params` through a fresh sandbox and returns its report.
pub fn run_intent(wasm: &[u8], policy: Policy, method: &str, params: &Value) -> IntentReport {
    sandbox(wasm, policy).execute(method, params)
}

/// Runs one intent (`method` "probe", no params) through a fresh sandbox with the default policy.
pub fn run_once(wasm: &[u8]) -> IntentReport {
    run_intent(wasm, Policy::default(), "probe", &serde_json::json!({}))
}

/// The outcome JSON of a report, parsed.
pub fn outcome_json(report: &IntentReport) -> Value {
    serde_json::from_str(&report.outcome.json)
        .unwrap_or_else(|e| panic!("the outcome is not JSON ({e}): {}", report.outcome.json))
}

/// The `output` of a completed outcome, panicking (with the outcome) when it did not complete.
pub fn completed_output(report: &IntentReport) -> Value {
    assert!(report.outcome.is_completed(), "the intent should complete: {}", report.outcome.json);
    outcome_json(report)["output"].clone()
}

/// Bytes as a WAT data string body: every byte escaped as `\hh`.
pub fn wat_data(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("\\{b:02x}")).collect()
}

/// A response as the ABI frames it: the body's length as u32 little-endian, then the body.
pub fn framed(body: &[u8]) -> Vec<u8> {
    let mut bytes = u32::try_from(body.len()).expect("body under 4 GiB").to_le_bytes().to_vec();
    bytes.extend_from_slice(body);
    bytes
}

/// A plugin of one page whose every intent answers with `resp_ptr`, with `data` placed at
/// offset `data_at`; `tdm_alloc` returns 1024, so the request overwrites whatever `data` puts
/// at 1024 and after it (keep data below 1024, or past the request).
pub fn pointing_plugin(resp_ptr: u32, data_at: u32, data: &[u8]) -> Vec<u8> {
    wat(&format!(
        r#"(module
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const {resp_ptr})
  (data (i32.const {data_at}) "{}"))"#,
        wat_data(data)
    ))
}

/// A plugin whose every intent answers with exactly `body` (framed at offset 16, so at most
/// 1004 bytes).
pub fn responder(body: &[u8]) -> Vec<u8> {
    assert!(body.len() <= 1004, "the response would overlap the request at 1024");
    pointing_plugin(16, 16, &framed(body))
}

/// A valid plugin answering `{"status":"completed","output":1}` that also declares `imports`
/// (WAT import fields, e.g. `(import "env" "system" (func (param i32) (result i32)))`).
pub fn plugin_with_imports(imports: &str) -> Vec<u8> {
    wat(&format!(
        r#"(module
  {imports}
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16)
  (data (i32.const 16) "{}"))"#,
        wat_data(&framed(br#"{"status":"completed","output":1}"#))
    ))
}
