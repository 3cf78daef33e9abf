//! The fuzz targets, one function of the input bytes each, with their oracles as assertions: a
//! violated oracle panics, which libFuzzer reports as a crash and the regression replay as a
//! failure. [`TARGETS`] names them as `make fuzz` and `fuzz/regressions/` do.

use crate::{adversarial_plugin, all_grants, assert_tree_json, check_report, run_module, small_policy};
use crate::{smith_module, SmithKind};
use contour_core::Outcome;
use contour_core::{read_host_request as read_request, Method};
use contour_core::{replay, Trace};
use contour_core::{Permission, Permissions, Plugin, Policy, Sandbox, VirtualEnvironment};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use tdm_sdk::workspace::State;

/// A fuzz target: the input bytes in, a panic when an oracle is violated.
pub type Target = fn(&[u8]);

/// Every target by its name (the binary's in `fuzz/fuzz_targets/`, the folder's in
/// `fuzz/regressions/`), in `make fuzz`'s order.
pub const TARGETS: &[(&str, Target)] = &[
    ("raw_module", raw_module),
    ("smith_module", smith_module_target),
    ("adversarial_plugin", adversarial_plugin_target),
    ("request_params", request_params),
    ("response_bytes", response_bytes),
    ("host_request", host_request),
    ("permissions", permissions),
    ("plugin_toml", plugin_toml),
    ("hub_index", hub_index),
    ("workspace_state", workspace_state),
    ("trace_decode", trace_decode),
    ("differential", crate::differential::differential),
    ("minisign", minisign),
];

/// The target named `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Target 1: any bytes as a module, through load -> launch -> two intents under a small policy.
/// Input that is WebAssembly text is compiled first (binary input passes through `wat` as it
/// is): the conformance plugins are its seeds, and their mutations reach the sandbox as valid
/// modules far more often than mutated binaries do. Anything else goes to the sandbox as is.
pub fn raw_module(data: &[u8]) {
    match wat::parse_bytes(data) {
        Ok(wasm) => run_module(&wasm),
        Err(_) => run_module(data),
    };
}

/// Target 2: wasm-smith modules that export the TDM ABI and may import WASI and host functions
/// off the allowlist ([`smith_module`]), through load -> launch -> two intents.
pub fn smith_module_target(data: &[u8]) {
    if let Ok(wasm) = smith_module(&mut arbitrary::Unstructured::new(data), SmithKind::Plugin) {
        run_module(&wasm);
    }
}

/// Target 3: the adversarial plugin run with the input as its request bytes, which choose its
/// response pointer and length, its allocator's answer and the arguments of its host and WASI
/// calls. Three intents on one sandbox, so a chosen allocation is used by the next one.
pub fn adversarial_plugin_target(data: &[u8]) {
    let policy = small_policy();
    let mut sandbox = Sandbox::new(adversarial_plugin(), Box::new(VirtualEnvironment::new(3)))
        .with_host(Box::new(crate::EchoHost), all_grants());
    for _ in 0..3 {
        check_report(&sandbox.execute_request(data), &policy);
    }
}

/// Target 4: params text through the `--params` reader and, when accepted, into a JSON-RPC
/// request run by the adversarial plugin. Oracle: the request is JSON that holds the params text
/// byte for byte, and the run satisfies the common oracles.
pub fn request_params(data: &[u8]) {
    let Ok(params) = tdm_sdk::params::parse(data, "fuzz") else { return };
    let request = contour_core::intent_request_raw(1, "fuzz", params.raw());
    let expected = format!(r#"{{"id":1,"jsonrpc":"2.0","method":"fuzz","params":{}}}"#, params.text());
    assert_eq!(request, expected.as_bytes(), "the params changed on the way");
    let whole = serde_json::from_slice::<Box<serde_json::value::RawValue>>(&request);
    assert!(whole.is_ok(), "the request is not JSON: {whole:?}");
    let policy = small_policy();
    let mut sandbox = Sandbox::new(adversarial_plugin(), Box::new(VirtualEnvironment::new(3)));
    check_report(&sandbox.execute_request(&request), &policy);
}

/// Target 5: response bytes through core's framing (the input read as guest memory, its first 4
/// bytes as the response pointer) and its outcome reader. Oracle: a response core accepts is
/// JSON a tree reader takes, with the status core read, and its output is JSON.
pub fn response_bytes(data: &[u8]) {
    if let [a, b, c, d, memory @ ..] = data {
        let ptr = u32::from_le_bytes([*a, *b, *c, *d]) % 64;
        if let Ok(range) = contour_core::response_range(memory, ptr, 4096) {
            assert!(range.end <= memory.len() && range.start == ptr as usize + 4);
        }
    }
    if let Ok(outcome) = Outcome::from_response(data.to_vec()) {
        if let Some(value) = assert_tree_json(&outcome.json) {
            let status = if outcome.is_completed() { "completed" } else { "failed" };
            assert_eq!(value.get("status").and_then(|s| s.as_str()), Some(status));
        }
        if let Some(output) = outcome.output_json() {
            assert_tree_json(output);
        }
    }
}

/// Target 6: host-call request bytes through core's reader (what `tdm_host_call` runs). Oracle:
/// an accepted call's method is the method named; its permission and description are computed.
pub fn host_request(data: &[u8]) {
    if let Some((name, Ok(call))) = read_request(data) {
        assert_eq!(Method::from_name(&name), Some(call.method()));
        let _ = call.permission();
        let _ = call.describe();
        let _ = call.allowed_by(&all_grants());
    }
}

/// Target 7: permission strings, URL hosts and the limit flags. Oracles: a parsed permission
/// prints as a string that parses back to the same permission; a grant list covers itself.
pub fn permissions(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(permission) = Permission::parse(text) {
        let printed = permission.to_string();
        assert_eq!(Permission::parse(&printed).as_ref(), Ok(&permission), "{printed:?} does not parse back");
        if let Ok(url_host) = contour_core::url_host(&format!("https://{text}/")) {
            let _ = permission.allows_host(&url_host);
        }
    }
    if let Ok(grants) = Permissions::parse_all(text.split('\n')) {
        assert!(tdm_sdk::package::covered(&grants, &grants));
    }
    let _ = contour_core::url_host(text);
    let _ = tdm_sdk::limits::parse_fuel(text);
    let _ = tdm_sdk::limits::parse_timeout(text);
    let _ = tdm_sdk::limits::parse_memory(text);
    if let Ok(size) = tdm_sdk::limits::parse_size(text) {
        let _ = tdm_sdk::limits::format_size(size);
    }
}

/// Target 8: `plugin.toml` text, then its permissions and policy as a package verification
/// reads them. Oracle: a manifest's policy, applied to the defaults, validates.
pub fn plugin_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(manifest) = tdm_sdk::package::Manifest::parse(text, Path::new("plugin.toml")) {
        let _ = Permissions::parse_all(manifest.permissions.iter().map(String::as_str));
        if let Ok(policy) = manifest.policy.applied_to(Policy::default()) {
            assert!(policy.validate().is_ok(), "a manifest's policy is unusable: {policy:?}");
        }
    }
}

/// Target 9: a hub's `index.json` bytes. Oracle: every entry of an accepted index is found by
/// its id and version.
pub fn hub_index(data: &[u8]) {
    if let Ok(hub) = tdm_sdk::hub::Hub::from_index(Path::new("hub"), data) {
        for entry in &hub.entries {
            let found = hub.find(&entry.id, Some(&entry.version)).expect("a listed entry is found");
            assert_eq!((&found.id, &found.version), (&entry.id, &entry.version));
        }
    }
}

/// Target 10: a workspace state file's bytes. Oracle: an accepted state serializes and reads back.
pub fn workspace_state(data: &[u8]) {
    if let Ok(state) = State::parse(data, Path::new("state.json")) {
        let bytes = serde_json::to_vec(&state).expect("a state serializes");
        State::parse(&bytes, Path::new("state.json")).expect("a written state reads back");
    }
}

/// The bundled publisher's public key (examples/keys/bundled-publisher.pub).
const BUNDLED_PUBLISHER: &str = include_str!("../../../examples/keys/bundled-publisher.pub");

/// Target 13: bytes as a minisign signature, public key and secret key (what a package, a hub
/// and `tdm pack --key` read). Oracle: the input verifies with the bundled publisher's key only
/// when it is the bundled echo package's own signature of its manifest; nothing panics.
pub fn minisign(data: &[u8]) {
    use tdm_sdk::signing::{PublicKey, SecretKey, Signature};
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = Signature::parse(text);
    let _ = PublicKey::parse(text);
    let _ = SecretKey::parse(text);
    let key = PublicKey::parse(BUNDLED_PUBLISHER).expect("the bundled key parses");
    let manifest = include_bytes!("../../../examples/hub/echo-1.0.0/plugin.toml");
    if key.verify(manifest, text).is_ok() {
        let signature = include_str!("../../../examples/hub/echo-1.0.0/plugin.toml.minisig");
        let parsed = Signature::parse(text).expect("a verifying signature parses");
        let expected = Signature::parse(signature).expect("the bundled signature parses");
        assert_eq!(parsed.trusted_comment(), expected.trusted_comment(), "a forged signature verified");
    }
    assert!(key.verify(data, text).is_err(), "a signature verified over its own text");
}

/// The plugin target 11 replays traces on: it reads the clock, spins as many times as the low 16
/// bits of the reading say (so a trace's recorded inputs steer its fuel, up to about a million),
/// and answers a fixed completed outcome.
const FIXED_WAT: &str = r#"(module
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (data (i32.const 16) "\21\00\00\00{\"status\":\"completed\",\"output\":1}")
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (local $n i32)
    (drop (call $clock (i32.const 0) (i64.const 0) (i32.const 512)))
    (local.set $n (i32.and (i32.load (i32.const 512)) (i32.const 0xffff)))
    (block $done (loop $spin
      (br_if $done (i32.eqz (local.get $n)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $spin)))
    i32.const 16))"#;

fn fixed_module() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| wat::parse_str(FIXED_WAT).expect("fixed WAT"))
}

/// Target 11: trace bytes through core's decoder, then re-encoded and replayed on the fixed
/// plugin loaded under the trace's own policy. Oracles: decode(encode(trace)) encodes to the same
/// bytes; replay ends (the fixed plugin spins at most 65,535 times).
pub fn trace_decode(data: &[u8]) {
    let Ok(trace) = Trace::decode(data) else { return };
    let bytes = trace.encode().expect("a decoded trace encodes");
    assert_eq!(Trace::decode(&bytes).expect("an encoded trace decodes").encode().ok(), Some(bytes));
    let Ok(policy) = trace.policy() else { return };
    let Ok(plugin) = Plugin::load(fixed_module(), policy) else { return };
    let _ = replay(&trace, Arc::new(plugin));
}
