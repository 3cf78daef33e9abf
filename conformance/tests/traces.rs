//! The conformance traces (conformance/traces/): each is recorded here through the real sandbox
//! and must equal the committed file byte for byte (recording is deterministic), and each
//! committed trace must replay to the digest in digests.txt (the digest every other host, and
//! the firmware, must reproduce: `make cross`, `make embedded`). To re-record after a change
//! that moves fuel or bytes on purpose: `CONTOUR_BLESS_TRACES=1 cargo test -p
//! contour-conformance --test traces`, and say why in the commit.

use contour_conformance::{stepping_wall, SEED};
use contour_core::{hex, recorded_digest, Record, Trace};
use contour_core::{Environment, HostIntents, NoHostIntents, Permissions, Plugin, Policy, Sandbox, VirtualEnvironment};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tdm_sdk::intents::audit::AuditLog;
use tdm_sdk::intents::context::Context;
use tdm_sdk::intents::dist::Dist;
use tdm_sdk::intents::log::Log;
use tdm_sdk::intents::tool::Tools;
use tdm_sdk::intents::{net, vault, PluginIdentity, StdIntents};

fn conformance() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// NAME -> module path, from traces.txt.
fn manifest() -> Vec<(String, PathBuf)> {
    let text = std::fs::read_to_string(conformance().join("traces/traces.txt")).expect("traces.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut fields = l.split_whitespace();
            let (Some(name), Some(module)) = (fields.next(), fields.next()) else { panic!("NAME MODULE [simd]: {l}") };
            (name.to_string(), conformance().join(module))
        })
        .collect()
}

fn module_bytes(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path)
        .unwrap_or_else(|e| panic!("{}: {e} (the Rust examples are built by `make examples`)", path.display()));
    if path.extension().is_some_and(|e| e == "wat") {
        wat::parse_bytes(&bytes).expect("fixture compiles").into_owned()
    } else {
        bytes
    }
}

/// The policy the traces run under: the embedded profile (the firmware replays them on a
/// board's heap), with fuel slices small enough for the deadline trace's simulated clock.
fn board_policy() -> Policy {
    Policy { fuel_slice: 100_000, ..Policy::embedded() }
}

/// The linear memory the `limits` trace may grow to: what a 256 KiB-RAM part's build allows
/// (embedded-demo's `part-256k`), so that part replays it too; the trace carries its policy, so
/// every host and board replays it under this limit.
const LIMITS_TRACE_MEMORY_BYTES: u64 = 128 * 1024;

/// The policy trace `name` is recorded under.
fn policy_of(name: &str) -> Policy {
    match name {
        "limits" => Policy { max_memory_bytes: LIMITS_TRACE_MEMORY_BYTES, ..board_policy() },
        // The embedded profile turns SIMD off (the firmware has none); the trace proves it on
        // every other host.
        "simd" => Policy { simd: true, ..board_policy() },
        _ => board_policy(),
    }
}

fn rpc(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

/// The std host intents of the `host` trace: a dist folder with one file, one context key, a
/// captured log.
fn std_intents(dist: &Path) -> StdIntents {
    let mut context = serde_json::Map::new();
    context.insert("region".into(), json!("eu-west"));
    StdIntents {
        identity: PluginIdentity { id: "forward".into(), hash: "00".into() },
        dist: Dist::new(Some(dist.to_path_buf()), 1 << 20),
        log: Log::new(100, 1 << 16).with_sink(Arc::new(Mutex::new(Vec::new()))),
        net: net::Net::new(1 << 20),
        vault: vault::Vault::default(),
        context: Context::from_values(context),
        tools: Tools::default(),
        audit: AuditLog::new(None),
        grants: Permissions::parse_all(["context:read"]).unwrap(),
    }
}

/// How a trace is recorded: its environment, host intents, grants and requests.
type Session = (Box<dyn Environment>, Box<dyn HostIntents>, &'static [&'static str], Vec<(&'static str, Value)>);

/// Records trace `name` of `wasm`.
fn record(name: &str, wasm: &[u8], module: &str) -> Trace {
    let dist = tempfile::tempdir().unwrap();
    std::fs::write(dist.path().join("greeting.txt"), "hello from dist").unwrap();
    let seeded = || -> Box<dyn Environment> { Box::new(VirtualEnvironment::new(SEED)) };
    let (env, intents, grants, requests): Session = match name {
        "floats" => (seeded(), Box::new(NoHostIntents), &[], vec![("floats", json!({}))]),
        "inputs" => (seeded(), Box::new(NoHostIntents), &[], vec![("probe", json!({})), ("probe", json!({"n": 2}))]),
        "host" => (
            seeded(),
            Box::new(std_intents(dist.path())),
            &["context:read"],
            vec![
                ("forward", rpc("log", json!({"level": "info", "message": "traced"}))),
                ("forward", rpc("dist.read", json!({"path": "greeting.txt"}))),
                ("forward", rpc("context.read", json!({"key": "region"}))),
                ("forward", rpc("vault.read", json!({"name": "token"}))),
            ],
        ),
        "limits" => (
            seeded(),
            Box::new(NoHostIntents),
            &[],
            vec![
                ("count", json!({})),
                ("grow", json!({})),
                ("count", json!({})),
                ("loop", json!({})),
                ("unreachable", json!({})),
                ("count", json!({})),
            ],
        ),
        "deadline" => (
            Box::new(stepping_wall(SEED, 100_000_000)),
            Box::new(NoHostIntents),
            &[],
            vec![("count", json!({})), ("loop", json!({})), ("count", json!({}))],
        ),
        "hello" => (
            seeded(),
            Box::new(NoHostIntents),
            &[],
            vec![("greet", json!({"name": "Ada"})), ("greet", json!({"name": "  Grace  "})), ("greet", json!({}))],
        ),
        "simd" => (seeded(), Box::new(NoHostIntents), &[], vec![("lanes", json!({}))]),
        other => panic!("traces.txt names {other}, which tests/traces.rs does not record"),
    };
    let grants = Permissions::parse_all(grants.iter().copied()).unwrap();
    let plugin = Arc::new(Plugin::load(wasm, policy_of(name)).unwrap_or_else(|f| panic!("{name}: {f}")));
    let mut sandbox = Sandbox::new(plugin, env).with_host(intents, grants);
    sandbox.start_recording(wasm, module).unwrap();
    for (method, params) in &requests {
        sandbox.execute(method, params);
    }
    sandbox.stop_recording().expect("recording").expect("the trace fits")
}

fn digests() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(conformance().join("traces/digests.txt")).unwrap_or_default();
    text.lines().filter_map(|l| l.split_once(' ').map(|(n, d)| (n.to_string(), d.trim().to_string()))).collect()
}

#[test]
fn every_conformance_trace_records_identically_and_replays_to_its_digest() {
    let bless = std::env::var_os("CONTOUR_BLESS_TRACES").is_some();
    let mut blessed = Vec::new();
    let expected = digests();
    for (name, module_path) in manifest() {
        let wasm = module_bytes(&module_path);
        // Named from the traces' folder, as `tdm --record` names a module from its trace's folder,
        // so `tdm replay conformance/traces/NAME.trace` finds it from any working folder.
        let relative = module_path.strip_prefix(conformance()).unwrap_or(&module_path);
        let module = Path::new("..").join(relative).display().to_string();
        let trace = record(&name, &wasm, &module);
        let bytes = trace.encode().unwrap();
        let file = conformance().join(format!("traces/{name}.trace"));
        if bless {
            std::fs::write(&file, &bytes).unwrap();
            blessed.push(format!("{name} {}", hex(&recorded_digest(&trace))));
            continue;
        }
        let committed = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            committed == bytes,
            "recording {name} again gives another trace than {}: if the change is meant, re-record with \
             CONTOUR_BLESS_TRACES=1 cargo test -p contour-conformance --test traces",
            file.display()
        );
        let report = contour_core::replay_bytes(&committed, &wasm).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(report.divergence, None, "{name}");
        let want = expected.iter().find(|(n, _)| *n == name).map(|(_, d)| d.as_str());
        assert_eq!(Some(hex(&report.digest).as_str()), want, "{name}: the replay digest");
    }
    if bless {
        blessed.push(String::new());
        std::fs::write(conformance().join("traces/digests.txt"), blessed.join("\n")).unwrap();
    }
}

#[test]
fn the_traces_cover_what_the_cross_check_must_prove() {
    // Reasons the traces must hold, so the cross-architecture digest covers each path.
    let mut reasons = std::collections::BTreeSet::new();
    let mut inputs = std::collections::BTreeSet::new();
    for (name, _) in manifest() {
        let bytes = std::fs::read(conformance().join(format!("traces/{name}.trace"))).unwrap();
        let trace = Trace::decode(&bytes).unwrap();
        for intent in &trace.intents {
            reasons.insert(intent.reason.clone().unwrap_or_else(|| "completed".into()));
            for input in &intent.inputs {
                inputs.insert(
                    input
                        .kind()
                        .split('(')
                        .next()
                        .unwrap_or_default()
                        .split(' ')
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                );
            }
        }
    }
    for reason in ["completed", "memory_limit_exceeded", "fuel_exhausted", "deadline_exceeded", "plugin_trap"] {
        assert!(reasons.contains(reason), "no trace ends {reason}: {reasons:?}");
    }
    // The host trace holds a granted and a denied call (a denied one is core's answer).
    let host = Trace::decode(&std::fs::read(conformance().join("traces/host.trace")).unwrap()).unwrap();
    let responses: Vec<String> =
        host.intents.iter().map(|i| String::from_utf8_lossy(&i.response).into_owned()).collect();
    assert!(responses.iter().any(|r| r.contains("permission_denied")), "{responses:?}");
    assert!(responses.iter().any(|r| r.contains("hello from dist")), "{responses:?}");
    for kind in ["clock_time_get", "random_get", "host"] {
        assert!(inputs.contains(kind), "no trace reads {kind}: {inputs:?}");
    }
}
