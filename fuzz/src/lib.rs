//! What the fuzz targets share: the small policy every execution runs under (so one input
//! runs in milliseconds), a host that answers every granted host call, the run of one module
//! through load -> launch -> intent with the oracles every run must satisfy, and the
//! adversarial plugin whose pointers come from the fuzz input.

use contour_core::{
    CallContext, HostAnswer, HostCall, HostIntents, IntentReport, Permissions, Plugin, Policy, Sandbox,
    VirtualEnvironment,
};
use std::sync::{Arc, OnceLock};

/// The limits of every fuzzed execution: little fuel, 1 MiB of memory, a short deadline.
pub fn small_policy() -> Policy {
    Policy {
        max_memory_bytes: 1024 * 1024,
        fuel_per_intent: 200_000,
        start_fuel: 50_000,
        timeout_ms: 2_000,
        max_call_depth: 200,
        max_module_bytes: 1024 * 1024,
        fuel_slice: 20_000,
        max_request_bytes: 64 * 1024,
        max_response_bytes: 64 * 1024,
        max_output_bytes: 4 * 1024,
        max_host_calls: 16,
        max_host_bytes: 256 * 1024,
        max_host_request_bytes: 16 * 1024,
        ..Policy::default()
    }
}

/// Grants for every permission kind, so a host call reaches the embedder.
pub fn all_grants() -> Permissions {
    Permissions::parse_all(["network:example.com", "tool:echo", "vault:read", "context:read"])
        .expect("fixed grants parse")
}

/// A host that answers every call with a small JSON object naming it.
pub struct EchoHost;

impl HostIntents for EchoHost {
    fn call(&mut self, call: &HostCall, _context: &CallContext) -> HostAnswer {
        HostAnswer::ok(serde_json::json!({ "call": call.describe() }))
    }
}

/// Asserts that `text` is JSON a std reader takes into a tree (what every embedder does with an
/// outcome); only nesting past serde_json's depth limit is allowed, since an outcome's output
/// passes on at any depth the response limit allows.
pub fn assert_tree_json(text: &str) -> Option<serde_json::Value> {
    match serde_json::from_str(text) {
        Ok(value) => Some(value),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => None,
        Err(e) => panic!("a std reader refuses it ({e}): {text:?}"),
    }
}

/// The oracles of every intent, whatever the module did: the outcome is one JSON object with
/// a `status`, and fuel, memory and captured output stay within the policy.
pub fn check_report(report: &IntentReport, policy: &Policy) {
    if let Some(value) = assert_tree_json(&report.outcome.json) {
        assert!(value.get("status").is_some_and(serde_json::Value::is_string), "no status: {value}");
    }
    assert!(report.fuel_used <= policy.fuel_per_intent, "fuel {} over the budget", report.fuel_used);
    assert!(report.launch_fuel <= report.fuel_used, "launch fuel over the intent's");
    assert!(report.peak_memory_bytes <= policy.max_memory_bytes, "memory {} over the limit", report.peak_memory_bytes);
    assert!(report.stdout.len() <= policy.max_output_bytes && report.stderr.len() <= policy.max_output_bytes);
}

/// Loads `wasm` under [`small_policy`] and, when it loads, runs two intents through one sandbox
/// (the first launches it), checking every report. Returns the reports.
pub fn run_module(wasm: &[u8]) -> Vec<IntentReport> {
    let policy = small_policy();
    let Ok(plugin) = Plugin::load(wasm, policy.clone()) else { return Vec::new() };
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(7)))
        .with_host(Box::new(EchoHost), all_grants());
    let mut reports = Vec::new();
    for n in 0..2 {
        let report = sandbox.execute("fuzz", &serde_json::json!({ "n": n }));
        check_report(&report, &policy);
        reports.push(report);
    }
    reports
}

/// The adversarial plugin (WAT): everything it does with pointers comes from the request bytes,
/// read as little-endian words `w[i]` at `req + 4 i` (0 past the end):
///
/// - `w0` flags: 1 `tdm_host_call(w1, w2)`, 2 `tdm_host_response(w3, w4)`, 4
///   `fd_write(w5 & 3, w6, w7, w8)`, 8 `random_get(w9, w10)`, 16 `memory.grow(w11 & 7)`, 32 copy
///   the request from byte 68 (word 17) on as the response body at `w13` and return `w13`, else return
///   `w13` as is; 64 `tdm_free` traps; 128 the next `tdm_alloc` returns `w14` (else 4096);
///   256 `clock_time_get(w15 & 3, 0, w16)`.
pub const ADVERSARIAL_WAT: &str = r#"(module
  (import "tdm" "tdm_host_call" (func $call (param i32 i32) (result i32)))
  (import "tdm" "tdm_host_response" (func $response (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (memory (export "memory") 2 16)
  (global $next_alloc (mut i32) (i32.const 0))
  (global $trap_free (mut i32) (i32.const 0))
  (global $req (mut i32) (i32.const 0))
  (global $len (mut i32) (i32.const 0))
  (func (export "tdm_alloc") (param $size i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $next_alloc))
    (global.set $next_alloc (i32.const 0))
    (if (result i32) (local.get $p) (then (local.get $p)) (else (i32.const 4096))))
  (func (export "tdm_free") (param i32 i32)
    (if (global.get $trap_free) (then (global.set $trap_free (i32.const 0)) (unreachable))))
  ;; Word i of the request, 0 past its end.
  (func $w (param $i i32) (result i32)
    (if (result i32) (i32.le_u (i32.mul (i32.add (local.get $i) (i32.const 1)) (i32.const 4)) (global.get $len))
      (then (i32.load (i32.add (global.get $req) (i32.mul (local.get $i) (i32.const 4)))))
      (else (i32.const 0))))
  (func (export "tdm_plugin_execute_intent") (param $req i32) (param $len i32) (result i32)
    (local $flags i32) (local $at i32) (local $n i32)
    (global.set $req (local.get $req))
    (global.set $len (local.get $len))
    (local.set $flags (call $w (i32.const 0)))
    (if (i32.and (local.get $flags) (i32.const 1))
      (then (drop (call $call (call $w (i32.const 1)) (call $w (i32.const 2))))))
    (if (i32.and (local.get $flags) (i32.const 2))
      (then (drop (call $response (call $w (i32.const 3)) (call $w (i32.const 4))))))
    (if (i32.and (local.get $flags) (i32.const 4))
      (then (drop (call $fd_write (i32.and (call $w (i32.const 5)) (i32.const 3))
        (call $w (i32.const 6)) (call $w (i32.const 7)) (call $w (i32.const 8))))))
    (if (i32.and (local.get $flags) (i32.const 8))
      (then (drop (call $random (call $w (i32.const 9)) (call $w (i32.const 10))))))
    (if (i32.and (local.get $flags) (i32.const 16))
      (then (drop (memory.grow (i32.and (call $w (i32.const 11)) (i32.const 7))))))
    (if (i32.and (local.get $flags) (i32.const 64)) (then (global.set $trap_free (i32.const 1))))
    (if (i32.and (local.get $flags) (i32.const 128)) (then (global.set $next_alloc (call $w (i32.const 14)))))
    (if (i32.and (local.get $flags) (i32.const 256))
      (then (drop (call $clock (i32.and (call $w (i32.const 15)) (i32.const 3)) (i64.const 0) (call $w (i32.const 16))))))
    (local.set $at (call $w (i32.const 13)))
    (if (i32.and (local.get $flags) (i32.const 32))
      (then
        (local.set $n (select (i32.sub (local.get $len) (i32.const 68)) (i32.const 0)
          (i32.gt_u (local.get $len) (i32.const 68))))
        (i32.store (local.get $at) (local.get $n))
        (memory.copy (i32.add (local.get $at) (i32.const 4)) (i32.add (local.get $req) (i32.const 68)) (local.get $n))))
    (local.get $at)))"#;

/// The adversarial plugin, compiled and loaded once.
pub fn adversarial_plugin() -> Arc<Plugin> {
    static PLUGIN: OnceLock<Arc<Plugin>> = OnceLock::new();
    Arc::clone(PLUGIN.get_or_init(|| {
        let wasm = wat::parse_str(ADVERSARIAL_WAT).expect("the adversarial plugin compiles");
        Arc::new(Plugin::load(&wasm, small_policy()).expect("the adversarial plugin loads"))
    }))
}

/// The exports every generated module has, with the ABI's types (wasm-smith's `exports`). The
/// memory is the module's only one, its maximum the small policy's 1 MiB.
const ABI_EXPORTS: &str = r#"(module
  (memory (export "memory") 1 16)
  (func (export "tdm_alloc") (param i32) (result i32) unreachable)
  (func (export "tdm_free") (param i32 i32) unreachable)
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) unreachable))"#;

/// Imports a generated module may use: a few of the allowlist, with their exact types.
const ALLOWED_IMPORTS: &str = r#"(module
  (import "tdm" "tdm_host_call" (func (param i32 i32) (result i32)))
  (import "tdm" "tdm_host_response" (func (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func (param i32))))"#;

/// Which modules [`smith_module`] generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmithKind {
    /// May import from [`ALLOWED_IMPORTS`] and have a start function.
    Plugin,
    /// No imports, no start function, memories and tables with a declared maximum within
    /// [`small_policy`] (the differential target's modules).
    Closed,
}

/// A wasm-smith module exporting the TDM ABI, with only the features wasmi and Contour take
/// (no SIMD, threads, GC, exceptions, memory64, custom page sizes, wide arithmetic, compact
/// imports; one memory).
pub fn smith_module(u: &mut arbitrary::Unstructured<'_>, kind: SmithKind) -> arbitrary::Result<Vec<u8>> {
    let mut config: wasm_smith::Config = u.arbitrary()?;
    config.exports = Some(wat::parse_str(ABI_EXPORTS).expect("fixed WAT"));
    // The exported memory is generated on top of `max_memories`, and Contour takes one memory.
    config.max_memories = 0;
    config.max_memory32_bytes = 1 << 20;
    // wasmi's parser predates the compact import section encoding.
    config.compact_imports_enabled = false;
    config.memory64_enabled = false;
    config.threads_enabled = false;
    config.shared_everything_threads_enabled = false;
    config.simd_enabled = false;
    config.relaxed_simd_enabled = false;
    config.gc_enabled = false;
    config.exceptions_enabled = false;
    config.custom_page_sizes_enabled = false;
    config.wide_arithmetic_enabled = false;
    match kind {
        SmithKind::Plugin => config.available_imports = Some(wat::parse_str(ALLOWED_IMPORTS).expect("fixed WAT")),
        SmithKind::Closed => {
            config.max_imports = 0;
            config.allow_start_export = false;
            config.memory_max_size_required = true;
            config.max_tables = 2;
            config.max_table_elements = 1_000;
            config.table_max_size_required = true;
        }
    }
    Ok(wasm_smith::Module::new(config, u)?.to_bytes())
}
