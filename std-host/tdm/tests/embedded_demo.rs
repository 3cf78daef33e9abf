//! The embedded demo gives the host's outcomes: every case the firmware printed under QEMU
//! (target/embedded/TARGET.log, written by `make embedded` for both boards) is run again on the
//! host, with the same module bytes, method, params, seed and limits, two ways: through
//! contour-core with the very policy the firmware uses (`Policy::embedded()`), and through the
//! built `tdm run --seed --fuel --max-memory --stats`. The outcome line must be the same bytes
//! and the fuel the same figure; both boards must print the same cases, outcomes and fuel; each
//! log must end with the firmware's own verdict that every outcome was as expected.
//!
//! The firmware also replays every conformance trace and prints `trace=NAME digest=HEX` lines:
//! each must be the digest the host replays the same trace to (conformance/traces/digests.txt,
//! checked on the host by conformance/tests/traces.rs).

use contour_core::{Outcome, Plugin, Policy, Sandbox, VirtualEnvironment};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// The boards `make embedded` runs.
const TARGETS: [&str; 2] = ["thumbv7em-none-eabihf", "riscv32imac-unknown-none-elf"];
/// The cases the firmware runs (embedded-demo/src/cases.rs).
const CASES: usize = 6;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `key=value` fields of a line, up to `params=`, which takes the rest of the line.
fn fields(line: &str) -> HashMap<String, String> {
    let (head, params) = match line.split_once(" params=") {
        Some((head, params)) => (head, Some(params)),
        None => (line, None),
    };
    let mut map: HashMap<String, String> = head
        .split(' ')
        .filter_map(|field| field.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Some(params) = params {
        map.insert("params".into(), params.into());
    }
    map
}

/// One case as the firmware printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BoardCase {
    name: String,
    module: String,
    module_bytes: usize,
    module_fnv1a64: String,
    method: String,
    params: String,
    outcome: String,
    fuel_used: u64,
    peak_memory_bytes: u64,
}

/// What one board's log says: its seed and limits, and every case.
struct BoardLog {
    seed: u64,
    fuel_per_intent: u64,
    max_memory_bytes: u64,
    cases: Vec<BoardCase>,
}

fn parse_log(target: &str) -> BoardLog {
    parse_log_named(&format!("{target}.log"), target)
}

/// `make embedded-part`'s log of the 256 KiB-RAM part (embedded-demo feature `part-256k`).
fn parse_log_named(file: &str, target: &str) -> BoardLog {
    let path = repo().join("target/embedded").join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}; run `make embedded` first", path.display()));
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("[plugin ")).collect();
    let header = fields(lines.iter().find(|l| l.starts_with("embedded-demo target=")).expect("a header line"));
    assert_eq!(header["target"], target, "{}", path.display());
    assert_eq!(header["policy"], "embedded");
    let number = |map: &HashMap<String, String>, key: &str| -> u64 {
        map.get(key).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{key} in {map:?}"))
    };
    let mut cases = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with("case=") {
            continue;
        }
        let head = fields(line);
        let outcome = lines.get(i + 1).expect("an outcome line after each case line").to_string();
        let figures = fields(lines.get(i + 2).expect("a figures line after each outcome"));
        assert_eq!(figures["case"], head["case"], "{line}");
        assert_eq!(figures["result"], "as_expected", "the firmware's own check failed: {line}\n{outcome}");
        cases.push(BoardCase {
            name: head["case"].clone(),
            module: head["module"].clone(),
            module_bytes: number(&head, "module_bytes") as usize,
            module_fnv1a64: head["module_fnv1a64"].clone(),
            method: head["method"].clone(),
            params: head["params"].clone(),
            outcome,
            fuel_used: number(&figures, "fuel_used"),
            peak_memory_bytes: number(&figures, "peak_memory_bytes"),
        });
    }
    assert_eq!(cases.len(), CASES, "{}: every case printed", path.display());
    let verdict = format!("embedded-demo: {CASES} of {CASES} outcomes as expected");
    assert!(lines.contains(&verdict.as_str()), "{}: no `{verdict}` line", path.display());
    BoardLog {
        seed: number(&header, "seed"),
        fuel_per_intent: number(&header, "fuel_per_intent"),
        max_memory_bytes: number(&header, "max_memory_bytes"),
        cases,
    }
}

/// FNV-1a 64, as embedded-demo/src/digest.rs computes it.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
}

/// The module the board ran, from the same source, checked to be the same bytes.
fn module_bytes(case: &BoardCase) -> Vec<u8> {
    let path = repo().join(&case.module);
    let bytes = if case.module.ends_with(".wat") {
        wat::parse_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    } else {
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}; run `make embedded` first", path.display()))
    };
    assert_eq!(bytes.len(), case.module_bytes, "{}: not the bytes the board ran", case.module);
    assert_eq!(
        format!("{:016x}", fnv1a64(&bytes)),
        case.module_fnv1a64,
        "{}: not the bytes the board ran",
        case.module
    );
    bytes
}

/// The case through contour-core on the host, under the firmware's policy and seed: the outcome
/// JSON, the fuel and the memory.
fn through_core(case: &BoardCase, bytes: &[u8], seed: u64, max_memory_bytes: u64) -> (String, u64, u64) {
    let params: Value = serde_json::from_str(&case.params).expect("the board's params are JSON");
    match Plugin::load(bytes, Policy { max_memory_bytes, ..Policy::embedded() }) {
        Ok(plugin) => {
            let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(seed)));
            let report = sandbox.execute(&case.method, &params);
            (report.outcome.json, report.fuel_used, report.peak_memory_bytes)
        }
        Err(failure) => (Outcome::from_failure(failure).json, 0, 0),
    }
}

/// The case through the built `tdm run`: its stdout line and the fuel `--stats` reports (`None`
/// when nothing ran: a module rejected at load).
fn through_tdm(case: &BoardCase, log: &BoardLog) -> (String, Option<u64>) {
    let module = repo().join(&case.module);
    let workspace = std::env::temp_dir().join(format!("tdm-embedded-demo-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_tdm"))
        .arg("run")
        .arg(&module)
        .args([&case.method, "--params", &case.params, "--stats"])
        .args(["--seed", &log.seed.to_string()])
        .args(["--fuel", &log.fuel_per_intent.to_string()])
        .args(["--max-memory", &log.max_memory_bytes.to_string()])
        .env("TDM_WORKSPACE", workspace)
        .output()
        .expect("tdm runs");
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let fuel = stderr
        .lines()
        .find_map(|l| l.strip_prefix("tdm: "))
        .map(|l| fields(l)["fuel_used"].parse().expect("fuel_used is a number"));
    (stdout.strip_suffix('\n').unwrap_or(&stdout).to_string(), fuel)
}

#[test]
fn every_board_outcome_is_the_hosts_byte_for_byte_with_the_same_fuel() {
    let logs: Vec<BoardLog> = TARGETS.iter().map(|t| parse_log(t)).collect();
    compare_with_host(&logs, Policy::embedded().max_memory_bytes);
}

/// The 256 KiB-RAM part's runs (`make embedded-part`): its policy is `Policy::embedded()` with
/// 128 KiB of linear memory, so the host runs each case under that policy.
#[test]
fn every_256k_part_outcome_is_the_hosts_byte_for_byte_with_the_same_fuel() {
    let logs: Vec<BoardLog> = TARGETS.iter().map(|t| parse_log_named(&format!("{t}-part.log"), t)).collect();
    compare_with_host(&logs, 128 * 1024);
}

fn compare_with_host(logs: &[BoardLog], max_memory_bytes: u64) {
    let policy = Policy { max_memory_bytes, ..Policy::embedded() };
    for (target, log) in TARGETS.iter().zip(logs) {
        assert_eq!(log.fuel_per_intent, policy.fuel_per_intent, "{target}: the board's policy is Policy::embedded()");
        assert_eq!(log.max_memory_bytes, policy.max_memory_bytes, "{target}: the board's memory limit");
        for case in &log.cases {
            let bytes = module_bytes(case);
            let (json, fuel, memory) = through_core(case, &bytes, log.seed, log.max_memory_bytes);
            assert_eq!(case.outcome, json, "{target} {}: outcome bytes, board vs host core", case.name);
            assert_eq!(case.fuel_used, fuel, "{target} {}: fuel, board vs host core", case.name);
            assert_eq!(case.peak_memory_bytes, memory, "{target} {}: memory, board vs host core", case.name);
            let (line, tdm_fuel) = through_tdm(case, log);
            // `tdm run` prints the same outcome, except that a host failure's recovery hint names
            // what exists in the CLI (std-host/tdm/src/hints.rs): compare everything else.
            let board: Value = serde_json::from_str(&case.outcome).expect("the board's outcome is JSON");
            let host: Value = serde_json::from_str(&line).expect("tdm run prints JSON");
            let without_hint = |mut v: Value| {
                if let Some(object) = v.as_object_mut() {
                    object.remove("recoveryHint");
                }
                v
            };
            assert_eq!(without_hint(board), without_hint(host), "{target} {}: outcome, board vs `tdm run`", case.name);
            if !case.outcome.contains("\"status\":\"failed\"") {
                assert_eq!(case.outcome, line, "{target} {}: outcome bytes, board vs `tdm run`", case.name);
            }
            assert_eq!(tdm_fuel.unwrap_or(0), case.fuel_used, "{target} {}: fuel, board vs `tdm run`", case.name);
        }
    }
    assert_eq!(logs[0].cases, logs[1].cases, "both boards print the same cases, outcomes and fuel");
}

#[test]
fn every_board_replays_the_conformance_traces_to_the_hosts_digests() {
    let digests = std::fs::read_to_string(repo().join("conformance/traces/digests.txt")).expect("digests.txt");
    // Traces marked `simd` in traces.txt are left out of the firmware (built without SIMD).
    let list = std::fs::read_to_string(repo().join("conformance/traces/traces.txt")).expect("traces.txt");
    let simd: Vec<&str> = list
        .lines()
        .filter(|l| !l.starts_with('#') && l.split_whitespace().nth(2) == Some("simd"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let expected: Vec<(&str, &str)> =
        digests.lines().filter_map(|l| l.split_once(' ')).filter(|(name, _)| !simd.contains(name)).collect();
    assert!(expected.len() >= 6, "{digests}");
    // The default map's logs and the 256 KiB-RAM part's (`make embedded-part`): the part replays
    // every trace too (none recorded with more linear memory than it allows).
    for log in TARGETS.iter().flat_map(|t| [format!("{t}.log"), format!("{t}-part.log")]) {
        let target = log.as_str();
        let path = repo().join("target/embedded").join(&log);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run `make embedded` first", path.display()));
        for (name, digest) in &expected {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("trace={name} ")))
                .unwrap_or_else(|| panic!("{target} printed no line for trace {name}"));
            let fields = fields(line);
            assert_eq!(fields.get("digest").map(String::as_str), Some(*digest), "{target}: {line}");
            assert!(line.ends_with(" ok"), "{target}: {line}");
        }
    }
}
