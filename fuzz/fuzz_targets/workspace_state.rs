//! Target 10: a workspace state file's bytes (`State::parse`). Oracles: no panic; an accepted
//! state serializes and parses back to an accepted state.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use tdm_sdk::workspace::State;

fuzz_target!(|data: &[u8]| {
    if let Ok(state) = State::parse(data, Path::new("state.json")) {
        let bytes = serde_json::to_vec(&state).expect("a state serializes");
        State::parse(&bytes, Path::new("state.json")).expect("a written state reads back");
    }
});
