//! The cross-architecture differential's cases (`make fuzz-cross`, docs/fuzzing.md): modules from
//! the wasm-smith configuration of targets 2 and 12, generated from a seed and recorded on this
//! host (two intents under [`small_policy`] with [`EchoHost`] and every grant), so that
//! `contour-replay --cases` on another architecture replays each recording and must reach the
//! digest, outcomes and fuel recorded here.

use crate::{all_grants, small_policy, smith_module, EchoHost, SmithKind};
use contour_core::errors::TraceError;
use contour_core::{Failure, Plugin, Record, Sandbox, VirtualEnvironment};
use std::sync::Arc;

/// Bytes of pseudo-random input wasm-smith reads per module (what `smith_yield` uses).
pub const INPUT_BYTES: usize = 4096;

/// One case: a module and the trace of its two intents, recorded here.
pub struct Case {
    /// The module's name, its index in six digits (`000042`).
    pub name: String,
    /// The module bytes.
    pub module: Vec<u8>,
    /// The encoded trace.
    pub trace: Vec<u8>,
    /// The inputs it recorded (clock and random reads, host calls), all intents together.
    pub inputs: usize,
}

/// Why a generated module has no case.
#[derive(Debug)]
pub enum Skipped {
    /// wasm-smith made nothing of the input.
    NotGenerated,
    /// Contour refused to load it (counted, not compared: it has nothing to replay).
    NotLoaded(Failure),
    /// The recording failed (its footprint, say).
    NotRecorded(TraceError),
}

/// `len` pseudo-random bytes from `state` (splitmix64: the same on every host, no dependency).
pub fn pseudo_random_bytes(mut state: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// The pseudo-random input of module `index` from `seed`.
pub fn input(seed: u64, index: u64) -> Vec<u8> {
    pseudo_random_bytes(
        seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03),
        INPUT_BYTES,
    )
}

/// Case `index` of `seed`: even indices are plugin modules (imports off the allowlist, a start
/// function), odd ones closed modules (the differential target's).
pub fn case(seed: u64, index: u64) -> Result<Case, Skipped> {
    let kind = if index.is_multiple_of(2) { SmithKind::Plugin } else { SmithKind::Closed };
    let bytes = input(seed, index);
    let module = smith_module(&mut arbitrary::Unstructured::new(&bytes), kind).map_err(|_| Skipped::NotGenerated)?;
    record(format!("{index:06}"), module, seed ^ index)
}

/// Records two intents of `module` on one sandbox under [`small_policy`], with [`EchoHost`],
/// every grant and a virtual environment seeded with `env_seed`.
pub fn record(name: String, module: Vec<u8>, env_seed: u64) -> Result<Case, Skipped> {
    let plugin = Plugin::load(&module, small_policy()).map_err(Skipped::NotLoaded)?;
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(env_seed)))
        .with_host(Box::new(EchoHost), all_grants());
    sandbox.start_recording(&module, &format!("{name}.wasm")).map_err(Skipped::NotRecorded)?;
    for n in 0..2 {
        sandbox.execute("cross", &serde_json::json!({ "n": n }));
    }
    let (trace, inputs) = match sandbox.stop_recording() {
        Some(Ok(trace)) => {
            (trace.encode().map_err(Skipped::NotRecorded)?, trace.intents.iter().map(|i| i.inputs.len()).sum())
        }
        Some(Err(e)) => return Err(Skipped::NotRecorded(e)),
        None => return Err(Skipped::NotRecorded(TraceError::Recording("the recording was lost"))),
    };
    Ok(Case { name, module, trace, inputs })
}
