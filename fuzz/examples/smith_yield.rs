//! How many wasm-smith modules of each kind load in Contour and how their first intent ends:
//! a check that targets 2 and 12 reach the sandbox and not only the loader.
//! `cargo +nightly run --release --example smith_yield [COUNT]` in fuzz/.
use contour_core::{Plugin, Sandbox, VirtualEnvironment};
use contour_fuzz_oracles::{small_policy, smith_module, SmithKind};
use std::collections::BTreeMap;
use std::sync::Arc;

fn main() {
    let count: u64 = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(500);
    for kind in [SmithKind::Plugin, SmithKind::Closed] {
        let mut ends: BTreeMap<String, u64> = BTreeMap::new();
        for seed in 0..count {
            // A deterministic pseudo-random input per seed (splitmix64).
            let state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
            let bytes = contour_fuzz_oracles::cross::pseudo_random_bytes(state, 4096);
            let end = match smith_module(&mut arbitrary::Unstructured::new(&bytes), kind) {
                Err(_) => "not generated".to_string(),
                Ok(wasm) => match Plugin::load(&wasm, small_policy()) {
                    Err(failure) => format!(
                        "load: {} {}",
                        failure.reason.as_str(),
                        failure.message().chars().take(60).collect::<String>()
                    ),
                    Ok(plugin) => {
                        let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(1)));
                        let report = sandbox.execute("probe", &serde_json::json!({}));
                        format!("intent: {}", report.outcome.blocked_reason_text().unwrap_or("completed"))
                    }
                },
            };
            *ends.entry(end).or_default() += 1;
        }
        println!("{kind:?}: {ends:?}");
    }
}
