//! Promise 9, record and replay: a session recorded through the real sandbox replays with the
//! same response bytes, fuel and peak memory for every intent, its inputs (clock, entropy,
//! sleeps, host answers) served from the trace and the real host never asked; anything edited
//! in the trace, or a different module, is reported as the first divergence, never a panic.

use contour_conformance::{fixture, load, stepping_wall, ScriptedWall, WallScript, SEED};
use contour_core::{errors::TraceError, recorded_digest, DivergenceKind, Record, Trace, TraceInput as Input};
use contour_core::{
    CallContext, Environment, HostAnswer, HostCall, HostIntents, Permissions, Plugin, Policy, Sandbox, Slept,
    VirtualEnvironment,
};
use serde_json::json;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Records `requests` (method, params) of `wasm` with `env` and `intents` under `policy`.
fn record(
    wasm: &[u8],
    policy: Policy,
    env: Box<dyn Environment>,
    intents: Box<dyn HostIntents>,
    grants: &[&str],
    requests: &[(&str, serde_json::Value)],
) -> Trace {
    let grants = Permissions::parse_all(grants.iter().copied()).unwrap();
    let mut sandbox = Sandbox::new(load(wasm, policy), env).with_host(intents, grants);
    sandbox.start_recording(wasm, "test").expect("recording starts");
    for (method, params) in requests {
        sandbox.execute(method, params);
    }
    sandbox.stop_recording().expect("was recording").expect("the trace fits")
}

fn replay(trace: &Trace, wasm: &[u8]) -> contour_core::ReplayReport {
    let plugin = Arc::new(Plugin::load(wasm, trace.policy().unwrap()).unwrap());
    contour_core::replay(trace, plugin).expect("the trace replays")
}

fn probe_trace() -> (Vec<u8>, Trace) {
    let wasm = fixture("wasi_probe");
    let requests = [("probe", json!({})), ("probe", json!({"again": true})), ("probe", json!({}))];
    let trace = record(
        &wasm,
        Policy::default(),
        Box::new(VirtualEnvironment::new(SEED)),
        Box::new(contour_core::NoHostIntents),
        &[],
        &requests,
    );
    (wasm, trace)
}

#[test]
fn a_recorded_session_replays_identically() {
    let (wasm, trace) = probe_trace();
    assert_eq!(trace.intents.len(), 3);
    assert!(trace.intents.iter().all(|i| !i.inputs.is_empty()), "clock, random and sleep inputs were recorded");
    // Through the bytes, as a file would be.
    let bytes = trace.encode().unwrap();
    let decoded = Trace::decode(&bytes).unwrap();
    assert_eq!(decoded, trace);
    let report = contour_core::replay_bytes(&bytes, &wasm).unwrap();
    assert_eq!(report.divergence, None);
    assert_eq!(report.intents, 3);
    assert_eq!(report.digest, recorded_digest(&trace));
}

#[test]
fn a_changed_module_is_refused_by_hash() {
    let (_, trace) = probe_trace();
    let other = fixture("echo");
    let error = contour_core::replay_bytes(&trace.encode().unwrap(), &other).unwrap_err();
    assert!(matches!(error, TraceError::Module(_)), "{error}");
    // Given anyway (tdm replay --plugin), it runs and the divergence is named.
    let report = replay(&trace, &other);
    assert_eq!(report.divergence.map(|d| d.intent), Some(0));
}

#[test]
fn edits_to_a_trace_are_reported_at_the_right_intent() {
    let (wasm, trace) = probe_trace();
    let mut edited = trace.clone();
    edited.intents[1].response[40] ^= 1;
    let divergence = replay(&edited, &wasm).divergence.expect("diverges");
    assert_eq!(divergence.intent, 1);
    assert!(matches!(divergence.kind, DivergenceKind::Response { at: 40, .. }), "{divergence}");

    let mut edited = trace.clone();
    edited.intents[2].fuel += 1;
    let divergence = replay(&edited, &wasm).divergence.expect("diverges");
    assert_eq!(
        (divergence.intent, &divergence.kind),
        (2, &DivergenceKind::Fuel { recorded: trace.intents[2].fuel + 1, replayed: trace.intents[2].fuel })
    );

    // A different random byte: the plugin's output changes at that intent.
    let mut edited = trace.clone();
    let random = edited.intents[1].inputs.iter_mut().find_map(|i| match i {
        Input::Random { bytes } if !bytes.is_empty() => Some(bytes),
        _ => None,
    });
    random.expect("the probe reads entropy")[0] ^= 0xff;
    let divergence = replay(&edited, &wasm).divergence.expect("diverges");
    assert_eq!(divergence.intent, 1, "{divergence}");
}

#[test]
fn a_missing_or_extra_input_is_a_divergence_not_a_panic() {
    let (wasm, trace) = probe_trace();
    let mut short = trace.clone();
    short.intents[0].inputs.pop();
    let divergence = replay(&short, &wasm).divergence.expect("diverges");
    assert_eq!(divergence.intent, 0);
    assert!(matches!(divergence.kind, DivergenceKind::InputMissing { .. }), "{divergence}");

    let mut long = trace.clone();
    long.intents[0].inputs.push(Input::Clock { clock: 1, ns: 5 });
    let divergence = replay(&long, &wasm).divergence.expect("diverges");
    assert!(matches!(divergence.kind, DivergenceKind::InputsUnused { .. }), "{divergence}");

    // The first input is a clock reading; put the entropy there instead.
    let mut swapped = trace.clone();
    let inputs = &mut swapped.intents[0].inputs;
    assert!(matches!(inputs[0], Input::Clock { .. }), "{:?}", inputs[0]);
    let random = inputs.iter().position(|i| matches!(i, Input::Random { .. })).expect("entropy was read");
    inputs.swap(0, random);
    let divergence = replay(&swapped, &wasm).divergence.expect("diverges");
    assert!(matches!(divergence.kind, DivergenceKind::InputMismatch { position: 0, .. }), "{divergence}");
}

/// Answers every allowed call with a fixed output and counts the calls.
struct CannedHost(Arc<AtomicU32>);

impl HostIntents for CannedHost {
    fn call(&mut self, call: &HostCall, _: &CallContext) -> HostAnswer {
        self.0.fetch_add(1, Ordering::SeqCst);
        HostAnswer::ok(json!({"served": call.method().as_str(), "status": 200}))
    }
}

#[test]
fn host_answers_are_replayed_without_asking_the_host() {
    let wasm = fixture("forward");
    let fetch =
        json!({"jsonrpc": "2.0", "id": 1, "method": "net.fetch", "params": {"url": "https://api.example.com/x"}});
    let denied = json!({"jsonrpc": "2.0", "id": 2, "method": "vault.read", "params": {"name": "k"}});
    let served = Arc::new(AtomicU32::new(0));
    let trace = record(
        &wasm,
        Policy::default(),
        Box::new(VirtualEnvironment::new(SEED)),
        Box::new(CannedHost(Arc::clone(&served))),
        &["network:api.example.com"],
        &[("forward", fetch), ("forward", denied)],
    );
    assert_eq!(served.load(Ordering::SeqCst), 1, "only the granted call reached the host");
    assert!(matches!(trace.intents[0].inputs[..], [Input::Host { .. }]), "{:?}", trace.intents[0].inputs);
    assert!(trace.intents[1].inputs.is_empty(), "a denied call is core's answer, not an input");
    // Replay: no host at all (the replayer serves the recorded answer), same bytes.
    let report = replay(&trace, &wasm);
    assert_eq!(report.divergence, None);
    assert_eq!(served.load(Ordering::SeqCst), 1);
}

#[test]
fn a_deadline_cut_replays_as_cut_at_the_same_fuel() {
    let wasm = fixture("misbehave");
    let policy = Policy { fuel_slice: 10_000, ..Policy::default() };
    let requests = [("count", json!({})), ("loop", json!({})), ("count", json!({}))];
    let env = stepping_wall(SEED, 100_000_000);
    let trace = record(&wasm, policy, Box::new(env), Box::new(contour_core::NoHostIntents), &[], &requests);
    let cut = &trace.intents[1];
    assert_eq!(cut.reason.as_deref(), Some("deadline_exceeded"));
    assert_eq!(cut.cut.map(|c| c.fuel), Some(cut.fuel));
    // The replay has no wall clock at all: only the recorded cut can stop the loop, at its fuel.
    let report = replay(&trace, &wasm);
    assert_eq!(report.divergence, None);
}

/// A wall whose caller cancels the run: after `reads_left` deadline-clock reads, or during the
/// first sleep (cut short), it reads `u64::MAX`, the embedder's cancel.
struct CancelledMidway {
    reads_left: u64,
    cancelled: bool,
}

impl WallScript for CancelledMidway {
    fn read(&mut self) -> Option<u64> {
        self.reads_left = self.reads_left.saturating_sub(1);
        self.cancelled |= self.reads_left == 0;
        Some(if self.cancelled { u64::MAX } else { 0 })
    }
    fn sleep(&mut self, _ns: u64, _left: Option<u64>) -> (u64, Slept) {
        self.cancelled = true;
        (0, Slept::CutAtDeadline)
    }
}

#[test]
fn a_cancelled_intent_is_cancelled_not_timed_out_and_replays_as_cancelled() {
    let wasm = fixture("misbehave");
    let policy = Policy { fuel_slice: 10_000, ..Policy::default() };
    let env = ScriptedWall::new(SEED, CancelledMidway { reads_left: 40, cancelled: false });
    let requests = [("count", json!({})), ("loop", json!({}))];
    let trace = record(&wasm, policy, Box::new(env), Box::new(contour_core::NoHostIntents), &[], &requests);
    let cut = &trace.intents[1];
    assert_eq!(cut.reason.as_deref(), Some("cancelled"), "{}", String::from_utf8_lossy(&cut.response));
    let outcome: serde_json::Value = serde_json::from_slice(&cut.response).unwrap();
    assert_eq!(outcome["output"]["retryable"], true);
    assert_eq!(cut.cut.map(|c| c.fuel), Some(cut.fuel), "a cancelled run is replayed by where it stopped");
    // No clock in the replay: the recorded cut stops the loop, as a cancel, at the same fuel.
    let report = replay(&trace, &wasm);
    assert_eq!(report.divergence, None);
}

#[test]
fn a_sleep_cut_short_by_a_cancel_replays_as_cancelled() {
    let wasm = fixture("wasi_probe");
    let env = ScriptedWall::new(SEED, CancelledMidway { reads_left: u64::MAX, cancelled: false });
    let trace = record(
        &wasm,
        Policy::default(),
        Box::new(env),
        Box::new(contour_core::NoHostIntents),
        &[],
        &[("probe", json!({}))],
    );
    let cut = &trace.intents[0];
    assert_eq!(cut.reason.as_deref(), Some("cancelled"), "{}", String::from_utf8_lossy(&cut.response));
    assert!(cut.inputs.iter().any(|i| matches!(i, Input::Sleep { cut: true, .. })), "{:?}", cut.inputs);
    let report = replay(&trace, &wasm);
    assert_eq!(report.divergence, None);
}

#[test]
fn damaged_trace_bytes_are_errors_never_panics() {
    let (_, trace) = probe_trace();
    let bytes = trace.encode().unwrap();
    for len in 0..bytes.len() {
        assert!(Trace::decode(&bytes[..len]).is_err(), "a trace cut at {len} bytes decoded");
    }
    assert_eq!(Trace::decode(b"not a trace at all"), Err(TraceError::NotATrace));
    let mut versioned = bytes.clone();
    versioned[8] = 9;
    assert_eq!(Trace::decode(&versioned), Err(TraceError::UnsupportedVersion { found: 9 }));
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert_eq!(Trace::decode(&trailing), Err(TraceError::TrailingBytes { count: 1 }));
    // Pseudo-random edits: every one decodes or fails cleanly.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..2_000 {
        let mut damaged = bytes.clone();
        for _ in 0..4 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state % damaged.len() as u64) as usize;
            damaged[at] = (state >> 32) as u8;
        }
        let _ = Trace::decode(&damaged);
    }
}

#[test]
fn a_trace_that_would_decode_into_far_more_than_its_bytes_is_refused_before_decoding() {
    // A clock input is 3 bytes on the wire and a whole record decoded: 60 MB of them took
    // 5.6 GB to decode before the footprint was counted.
    let (_, mut trace) = probe_trace();
    let per_input = 16 + contour_core::INPUT_COST;
    let fits = (contour_core::MAX_TRACE_FOOTPRINT - 1_000_000) / per_input;
    trace.intents[0].inputs = vec![Input::Clock { clock: 0, ns: 0 }; fits];
    let bytes = trace.encode().expect("small on the wire");
    assert!(bytes.len() < fits * 4, "{} bytes", bytes.len());
    assert_eq!(Trace::decode(&bytes).map(|t| t.intents[0].inputs.len()), Ok(fits), "under the limit it decodes");
    trace.intents[0].inputs.resize(fits + 1_000_000 / per_input + 1, Input::Clock { clock: 0, ns: 0 });
    let bytes = trace.encode().expect("still small on the wire");
    match Trace::decode(&bytes) {
        Err(TraceError::Footprint { size }) => assert!(size > contour_core::MAX_TRACE_FOOTPRINT as u64),
        other => panic!("decoded past the footprint: {:?}", other.map(|t| t.intents.len())),
    }
}
