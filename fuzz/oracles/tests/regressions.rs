//! The regression corpus (`fuzz/regressions/TARGET/`) replayed on the stable toolchain through
//! the same functions and oracles the libFuzzer targets run, and the harness's own checks: a
//! violated oracle, an unknown folder and an unreadable corpus each fail the replay.

use contour_core::{BlockedReason, Plugin};
use contour_fuzz_oracles::differential::{assert_agree, bare, contour, is_closed, End};
use contour_fuzz_oracles::regressions::{replay, Failure};
use contour_fuzz_oracles::small_policy;
use contour_fuzz_oracles::targets::{Target, TARGETS};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../regressions")
}

#[test]
fn every_regression_input_passes_its_targets_oracle() {
    let replayed = replay(&corpus(), TARGETS);
    for (target, inputs) in &replayed.targets {
        println!("{target}: {inputs} inputs replayed");
    }
    let messages: Vec<String> = replayed.failures.iter().map(ToString::to_string).collect();
    assert!(messages.is_empty(), "regressions failed:\n{}", messages.join("\n"));
    // The corpus was found and read: a wrong path must not pass as an empty corpus.
    let total: usize = replayed.targets.iter().map(|(_, n)| n).sum();
    assert!(total >= 6, "only {total} regression inputs were found in {}", corpus().display());
}

/// The campaign's `differential` finding, an endless `return_call` loop as the intent (its
/// wasm-smith input was lost): kept as the literal module below, which reaches both engines and
/// ends by fuel in both.
const ENDLESS_RETURN_CALL_LOOP: &str = r#"(module
  (memory (export "memory") 1 16)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    local.get 0
    local.get 1
    return_call 2))"#;

#[test]
fn the_endless_tail_call_regression_reaches_both_engines_and_ends_by_fuel() {
    let stored = std::fs::read(corpus().join("differential/endless-return-call-loop")).expect("stored");
    assert_eq!(stored, wat::parse_str(ENDLESS_RETURN_CALL_LOOP).expect("WAT"), "the file is this module");
    assert!(is_closed(&stored), "the target would skip it");
    let policy = small_policy();
    let ended = bare(&stored, &policy, b"{}").expect("bare wasmi runs it");
    assert_eq!(ended, End::Failed(Some(BlockedReason::FuelExhausted)));
    let plugin = Plugin::load(&stored, policy).expect("Contour loads it");
    assert_eq!(contour(plugin, b"{}"), End::Failed(Some(BlockedReason::FuelExhausted)));
}

#[test]
fn a_module_with_imports_or_a_start_function_is_not_compared() {
    let import = wat::parse_str(r#"(module (import "tdm" "tdm_host_call" (func (param i32 i32) (result i32))))"#);
    let start = wat::parse_str("(module (func $s) (start $s))");
    assert!(!is_closed(&import.expect("WAT")));
    assert!(!is_closed(&start.expect("WAT")));
    assert!(!is_closed(b"\0asm\x01\0\0\0\xff"), "a module that does not parse is skipped");
    assert!(is_closed(&wat::parse_str("(module (memory 1))").expect("WAT")));
}

#[test]
#[should_panic(expected = "bare wasmi and Contour disagree")]
fn the_differential_oracle_fails_when_the_engines_disagree() {
    let completed = End::Completed { json: String::from(r#"{"status":"completed"}"#), fuel: 10 };
    assert_agree(&completed, &End::Completed { json: String::from(r#"{"status":"completed"}"#), fuel: 11 });
}

/// A target whose oracle refuses one input, as a real oracle refuses a regressed finding.
fn strict(data: &[u8]) {
    assert!(data != b"bad", "the oracle refuses {data:?}");
}

const STRICT: &[(&str, Target)] = &[("strict", strict)];

#[test]
fn a_violated_oracle_fails_the_replay_and_names_the_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("strict")).expect("folder");
    std::fs::write(dir.path().join("strict/good"), b"good").expect("write");
    std::fs::write(dir.path().join("strict/regressed"), b"bad").expect("write");
    std::fs::write(dir.path().join("README.md"), b"not an input").expect("write");
    let replayed = replay(dir.path(), STRICT);
    assert_eq!(replayed.targets, vec![(String::from("strict"), 2)]);
    match replayed.failures.as_slice() {
        [Failure::Oracle { path, message }] => {
            assert!(path.ends_with("strict/regressed"), "{path:?}");
            assert!(message.contains("the oracle refuses"), "{message}");
        }
        other => panic!("expected one oracle failure, got {other:?}"),
    }
}

#[test]
fn a_folder_naming_no_target_or_a_missing_corpus_fails_the_replay() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("strickt")).expect("folder");
    let replayed = replay(dir.path(), STRICT);
    assert!(matches!(replayed.failures.as_slice(), [Failure::UnknownTarget { .. }]), "{:?}", replayed.failures);
    let missing = replay(&dir.path().join("nowhere"), STRICT);
    assert!(matches!(missing.failures.as_slice(), [Failure::Unreadable { .. }]), "{:?}", missing.failures);
}
