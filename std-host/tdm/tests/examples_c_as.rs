//! The C and AssemblyScript example plugins (built by `make examples` into `target/plugins/`),
//! run through the built `tdm` binary and through `contour_core` directly: their intents give the
//! expected outputs, a C plugin's malformed responses are caught by the host (not the SDK), and
//! every module passes the ABI conformance checks all languages share (exports accepted by
//! `tdm inspect`, a completed framed outcome, and constant memory once the host frees each
//! request and response).

use contour_core::{Plugin, Policy, Sandbox, VirtualEnvironment};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

#[path = "support/key_order.rs"]
mod key_order;

/// The built module `target/plugins/NAME.wasm`, or a failed test saying how to build it.
fn module(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/plugins").join(format!("{name}.wasm"));
    assert!(path.is_file(), "{} is missing: run `make examples` first", path.display());
    path
}

fn tdm(args: &[&str]) -> Output {
    // A workspace of this test process's own, so no run touches the user's data directory.
    let workspace = std::env::temp_dir().join(format!("tdm-examples-c-as-{}", std::process::id()));
    Command::new(env!("CARGO_BIN_EXE_tdm")).args(args).env("TDM_WORKSPACE", workspace).output().expect("tdm runs")
}

/// `tdm run MODULE METHOD --params PARAMS`: the exit code and the one JSON outcome on stdout.
fn run(name: &str, method: &str, params: &Value) -> (Option<i32>, Value) {
    let path = module(name);
    let out = tdm(&["run", &path.display().to_string(), method, "--params", &params.to_string()]);
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    assert_eq!(stdout.lines().count(), 1, "stdout must be one outcome line: {stdout:?}");
    let outcome = serde_json::from_str(&stdout).expect("stdout is JSON");
    (out.status.code(), outcome)
}

/// A sandbox for the built module `name`, with the default policy and a virtual environment.
fn sandbox(name: &str) -> Sandbox {
    let bytes = std::fs::read(module(name)).expect("read the module");
    let plugin = match Plugin::load(&bytes, Policy::default()) {
        Ok(plugin) => plugin,
        Err(failure) => panic!("{name} should load, but: {failure}"),
    };
    Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(7)))
}

fn completed_output(sandbox: &mut Sandbox, method: &str, params: &Value) -> Value {
    let report = sandbox.execute(method, params);
    assert!(report.outcome.is_completed(), "{method} should complete: {}", report.outcome.json);
    let outcome: Value = serde_json::from_str(&report.outcome.json).expect("the outcome is JSON");
    outcome["output"].clone()
}

#[test]
fn counter_increment_answers_the_count() {
    let (code, outcome) = run("counter", "increment", &json!({"by": 5}));
    assert_eq!(code, Some(0), "{outcome}");
    assert_eq!(outcome, json!({"status": "completed", "output": {"count": 5}}));
    // `by` defaults to 1; each `tdm run` is a fresh instance, so the count starts at 0.
    let (code, outcome) = run("counter", "increment", &json!({}));
    assert_eq!(code, Some(0));
    assert_eq!(outcome["output"], json!({"count": 1}));
    let (code, outcome) = run("counter", "get", &json!({}));
    assert_eq!(code, Some(0));
    assert_eq!(outcome["output"], json!({"count": 0}));
}

#[test]
fn counter_keeps_its_count_across_intents_in_one_instance() {
    let mut sandbox = sandbox("counter");
    for expected in 1..=3 {
        assert_eq!(completed_output(&mut sandbox, "increment", &json!({"by": 1})), json!({"count": expected}));
    }
    assert_eq!(completed_output(&mut sandbox, "get", &json!({})), json!({"count": 3}));
    assert_eq!(completed_output(&mut sandbox, "increment", &json!({"by": -10})), json!({"count": -7}));
}

#[test]
fn counter_refuses_bad_params_and_unknown_intents_with_its_own_failed_outcome() {
    let (code, outcome) = run("counter", "increment", &json!({"by": "two"}));
    assert_eq!(code, Some(1));
    assert_eq!(outcome["status"], "failed");
    assert_eq!(outcome["blockedReason"], "invalid_params");
    assert_eq!(outcome["output"]["retryable"], false);
    let (code, outcome) = run("counter", "reset", &json!({}));
    assert_eq!(code, Some(1));
    assert_eq!(outcome["blockedReason"], "unknown_intent");
    assert!(outcome["message"].is_string() && outcome["recoveryHint"].is_string());
}

#[test]
fn the_host_not_the_sdk_rejects_a_c_plugins_malformed_responses() {
    for (method, detail) in [
        ("not_json", "not JSON"),
        ("past_memory", "past the end of memory"),
        ("bad_shape", "not an outcome"),
        ("bad_utf8", "not UTF-8"),
    ] {
        let (code, outcome) = run("malformed", method, &json!({}));
        assert_eq!(code, Some(1), "{method}: {outcome}");
        assert_eq!(outcome["status"], "failed", "{method}");
        assert_eq!(outcome["blockedReason"], "invalid_response", "{method}: {outcome}");
        assert_eq!(outcome["output"]["retryable"], false, "{method}");
        let message = outcome["message"].as_str().expect("a message");
        assert!(message.contains(detail), "{method}: {message}");
    }
}

#[test]
fn a_malformed_response_discards_the_instance_and_the_next_intent_still_runs() {
    let mut sandbox = sandbox("malformed");
    let report = sandbox.execute("not_json", &json!({}));
    assert!(!report.outcome.is_completed());
    assert!(report.outcome.json.contains("invalid_response"), "{}", report.outcome.json);
    assert!(!sandbox.is_live(), "after a host-side failure the instance is discarded");
    let report = sandbox.execute("past_memory", &json!({}));
    assert!(report.outcome.json.contains("invalid_response"), "{}", report.outcome.json);
}

#[test]
fn wordcount_counts_words_and_lines_exactly() {
    for (text, words, lines) in [
        ("", 0, 0),
        ("one", 1, 1),
        ("hello world\nfoo  bar baz\n", 5, 2),
        ("  leading and trailing  ", 3, 1),
        ("tabs\tand\r\nwindows\r\nlines", 4, 3),
        ("\n\n\n", 0, 3),
        ("été über \"quoted\" \\ back\u{1F600}slash", 5, 1),
    ] {
        let (code, outcome) = run("wordcount", "count", &json!({ "text": text }));
        assert_eq!(code, Some(0), "{text:?}: {outcome}");
        assert_eq!(outcome, json!({"status": "completed", "output": {"words": words, "lines": lines}}), "{text:?}");
    }
}

#[test]
fn wordcount_refuses_missing_text() {
    let (code, outcome) = run("wordcount", "count", &json!({"txt": "typo"}));
    assert_eq!(code, Some(1));
    assert_eq!(outcome["blockedReason"], "invalid_params");
    let (code, outcome) = run("wordcount", "sum", &json!({}));
    assert_eq!(code, Some(1));
    assert_eq!(outcome["blockedReason"], "unknown_intent");
}

#[test]
fn wordcount_handles_a_text_larger_than_its_initial_memory() {
    let text = "word ".repeat(20_000);
    let mut sandbox = sandbox("wordcount");
    assert_eq!(completed_output(&mut sandbox, "count", &json!({ "text": text })), json!({"words": 20_000, "lines": 1}));
}

#[test]
fn hello_in_c_and_assemblyscript_greets_like_the_rust_hello() {
    for name in ["hello-c", "hello-as"] {
        let mut sandbox = sandbox(name);
        let report = sandbox.execute("greet", &json!({"name": " Ada\n"}));
        assert_eq!(report.outcome.json, r#"{"status":"completed","output":{"greeting":"Hello, Ada!"}}"#, "{name}");
        // Quotes, backslashes and control characters come back escaped.
        let output = completed_output(&mut sandbox, "greet", &json!({"name": "a\"b\\c\u{1}d é"}));
        assert_eq!(output, json!({"greeting": "Hello, a\"b\\c\u{1}d é!"}), "{name}");
        let report = sandbox.execute("greet", &json!({"name": "  "}));
        let outcome: Value = serde_json::from_str(&report.outcome.json).expect("JSON");
        assert_eq!(
            outcome,
            json!({"status": "failed", "message": "`name` is empty.", "blockedReason": "empty_name",
                   "recoveryHint": "Pass a non-empty `name`, e.g. {\"name\":\"Ada\"}.", "output": {"retryable": false}}),
            "{name}"
        );
        let report = sandbox.execute("greet", &json!({"name": 7}));
        assert!(report.outcome.json.contains(r#""blockedReason":"invalid_params""#), "{name}: {}", report.outcome.json);
        let report = sandbox.execute("wave", &json!({}));
        assert!(report.outcome.json.contains(r#""blockedReason":"unknown_intent""#), "{name}: {}", report.outcome.json);
        assert!(sandbox.is_live(), "{name}: its own failed outcomes keep the instance");
        // It declares `greet` (a tdm.intents section), so inspect and the REPL offer it.
        let out = tdm(&["inspect", &module(name).display().to_string(), "--json"]);
        let inspected: Value = serde_json::from_slice(&out.stdout).expect("inspect --json is JSON");
        assert_eq!(inspected["intents"]["declared"][0]["name"], "greet", "{name}: {inspected}");
    }
}

/// A `greet` request whose `name` is the raw JSON string text `inside` (between the quotes), as the
/// host writes requests.
fn greet_request_raw(inside: &[u8]) -> Vec<u8> {
    let mut request = br#"{"id":1,"jsonrpc":"2.0","method":"greet","params":{"name":""#.to_vec();
    request.extend_from_slice(inside);
    request.extend_from_slice(br#""}}"#);
    request
}

/// The completed outcome, byte for byte, of a greet of `name` (already trimmed): the greeting
/// escaped as serde_json escapes it.
fn greeting_outcome(name: &str) -> String {
    let greeting = serde_json::to_string(&format!("Hello, {name}!")).expect("a string serializes");
    format!(r#"{{"status":"completed","output":{{"greeting":{greeting}}}}}"#)
}

#[test]
fn the_assemblyscript_sdk_reads_and_writes_strings_of_every_length_and_character() {
    // The SDK reads a plain ASCII string 32 bytes a round (then 16, the last from padding) and writes
    // 16 code units a round (then 8, the last from padding), and leaves the rounds for a unit at a
    // time where a character needs escaping or is not ASCII. So every length and every position of a
    // special character, around each round's edges, must give the same text as serde_json. The same
    // for the SIMD build (16 bytes a vector, 128 a round).
    for module in ["hello-as", "simd/hello-as"] {
        let mut sandbox = sandbox(module);
        let mut check = |name: &str| {
            let report = sandbox.execute("greet", &json!({ "name": name }));
            assert_eq!(
                report.outcome.json,
                greeting_outcome(name.trim()),
                "{module}: name of {} bytes: {name:?}",
                name.len()
            );
        };
        // Long ASCII names of every length up to 130, and around a few larger round boundaries.
        for len in (1..=130).chain([255, 256, 257, 4095, 4096, 4097, 4099, 65_535]) {
            let name: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            check(&name);
        }
        // Escapes in the middle of ASCII, at every position of a 70-byte name (several rounds each way),
        // alone and two in a row.
        for special in ["\"", "\\", "\n", "\t", "\u{1}", "\u{1f}", "\u{8}\u{c}", "\"\\"] {
            for at in 0..=70 {
                let name = format!("{}{special}{}", "x".repeat(at), "y".repeat(70 - at));
                check(&name);
            }
        }
        // Multibyte UTF-8 (2, 3 and 4 bytes; the last a surrogate pair in UTF-16) at every position,
        // so a character straddles each round edge on both sides, and names of only such characters.
        for wide in ["é", "€", "😀", "é€😀"] {
            for at in 0..=70 {
                check(&format!("{}{wide}{}", "x".repeat(at), "y".repeat(70 - at)));
            }
            for count in 1..=40 {
                check(&wide.repeat(count));
            }
        }
        // DEL and `/` need no escape; a long name with a special character every 37 bytes.
        check(&"a\u{7f}b/c".repeat(20));
        check(&(0..3000).map(|i| if i % 37 == 36 { '"' } else { 'q' }).collect::<String>());
    }
}

#[test]
fn the_assemblyscript_sdk_decodes_escaped_and_invalid_input_after_plain_runs_as_it_does_alone() {
    // The request's own escapes (`\"`, `\u00e9`, a surrogate pair) and invalid UTF-8 end the fast read
    // wherever they sit; what follows decodes as it does without a plain run before it.
    for (module, at) in ["hello-as", "simd/hello-as"]
        .into_iter()
        .flat_map(|module| [0, 1, 7, 15, 16, 17, 31, 32, 33, 47, 64, 100, 127, 128, 129, 200].map(|at| (module, at)))
    {
        let mut sandbox = sandbox(module);
        let prefix = "x".repeat(at);
        let inside = format!(r#"{prefix}a\"b\\c\u00e9\ud83d\ude00\/d"#);
        let report = sandbox.execute_request(&greet_request_raw(inside.as_bytes()));
        assert_eq!(report.outcome.json, greeting_outcome(&format!("{prefix}a\"b\\cé😀/d")), "{module} {at}");
        // Invalid UTF-8: a stray byte or a cut-off sequence ends the text there.
        for bad in [&b"\xffcd"[..], b"\xc3"] {
            let mut inside = format!("{prefix}ab").into_bytes();
            inside.extend_from_slice(bad);
            let report = sandbox.execute_request(&greet_request_raw(&inside));
            assert_eq!(report.outcome.json, greeting_outcome(&format!("{prefix}ab")), "{module} {at}: {bad:?}");
        }
        // A lone surrogate is written as its WTF-8 bytes, which the host refuses as a response.
        let report = sandbox.execute_request(&greet_request_raw(format!(r#"{prefix}\ud800z"#).as_bytes()));
        assert!(
            report.outcome.json.contains(r#""blockedReason":"invalid_response""#),
            "{module} {at}: {}",
            report.outcome.json
        );
    }
}

/// A `greet` request of exactly `size` bytes (the name padded with `x`), as the host writes it.
fn greet_request(size: usize) -> Vec<u8> {
    let build = |pad: usize| contour_core::intent_request(1, "greet", &json!({ "name": "x".repeat(pad) }));
    let request = build(size.saturating_sub(build(0).len()));
    assert_eq!(request.len(), size);
    request
}

/// The fuel of one warm `greet` of the built module `name` (the second intent on one sandbox) with a
/// `size`-byte request.
fn warm_greet_fuel(name: &str, size: usize) -> u64 {
    warm_request_fuel(name, &greet_request(size))
}

/// The fuel of one warm run of `request` (raw JSON-RPC bytes) by the built module `name`: the second
/// intent on one sandbox, both completed.
fn warm_request_fuel(name: &str, request: &[u8]) -> u64 {
    let mut sandbox = sandbox(name);
    let first = sandbox.execute_request(request);
    assert!(first.outcome.is_completed(), "{name}: {}", first.outcome.json);
    let warm = sandbox.execute_request(request);
    assert!(warm.outcome.is_completed(), "{name}: {}", warm.outcome.json);
    warm.fuel_used
}

/// (fuel at 128 B, fuel per byte of name from 128 B to 64 KiB) of a warm greet.
fn greet_costs(name: &str) -> (u64, f64) {
    let small = warm_greet_fuel(name, 128);
    let large = warm_greet_fuel(name, 65_536);
    (small, (large - small) as f64 / (65_536 - 128) as f64)
}

#[test]
fn the_c_and_assemblyscript_greets_cost_about_what_the_rust_one_does() {
    // Issue 15: the same greet written with each SDK. Fuel is deterministic, so the bounds are exact
    // measurements: each SDK's warm 128-byte greet within 1.5x of the Rust SDK's (measured here, in the
    // same run) and within 12,500 fuel (1.5x what the Rust SDK's greet cost when the bound was set).
    // Per byte of the name: the C SDK within 1.5x of Rust's (7.91 against 5.42, both reading long runs
    // in long rounds; 11.60 against 8.93 before). The AssemblyScript SDK widens every string to UTF-16
    // and narrows it back, 32 bytes and 16 code units a round: 12.91 fuel a byte (20.4 before, 208 at
    // first), 1.45x Rust's before the Rust SDK's long rounds and 2.4x since; its bound is its own
    // figure, so that it cannot get dearer unseen.
    let (rust, rust_per_byte) = greet_costs("hello");
    for (name, per_byte_bound) in [("hello-c", 1.5 * rust_per_byte), ("hello-as", 13.0)] {
        let (fuel, per_byte) = greet_costs(name);
        println!(
            "{name}: {fuel} fuel at 128 B ({:.2}x Rust's {rust}), {per_byte:.2} per byte",
            fuel as f64 / rust as f64
        );
        assert!(fuel as f64 <= 1.5 * rust as f64, "{name}: {fuel} fuel at 128 B, over 1.5x Rust's {rust}");
        assert!(fuel <= 12_500, "{name}: {fuel} fuel at 128 B, over 12,500");
        assert!(per_byte <= per_byte_bound, "{name}: {per_byte:.2} fuel per byte, over {per_byte_bound:.2}");
    }
}

#[test]
fn the_c_and_assemblyscript_envelopes_cost_the_same_in_any_key_order() {
    // Issue 25: a request written in another member order (`jsonrpc` first, `id` last) or spaced
    // costs within 5% of the host's own order (pretty-printed, within 15%), small and large.
    for name in ["hello-c", "hello-as"] {
        for size in [128, 4096] {
            key_order::assert_order_free(name, size, |request| warm_request_fuel(name, request));
        }
    }
}

// ---- ABI conformance: the same checks for every language's plugins ------------------------------

/// One intent per example that completes, to drive the conformance checks.
const CONFORMING: [(&str, &str, &str); 4] = [
    ("counter", "increment", r#"{"by":1}"#),
    ("wordcount", "count", r#"{"text":"a b\nc"}"#),
    ("hello-c", "greet", r#"{"name":"Ada"}"#),
    ("hello-as", "greet", r#"{"name":"Ada"}"#),
];

#[test]
fn abi_every_module_is_accepted_by_tdm_inspect() {
    for name in ["counter", "malformed", "wordcount", "hello-c", "hello-as"] {
        let path = module(name);
        let out = tdm(&["inspect", "--json", &path.display().to_string()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&out.stdout));
        let inspection: Value = serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON");
        assert_eq!(inspection["verdict"], "accepted", "{name}: {inspection}");
        assert_eq!(inspection["failures"], json!([]), "{name}");
        let exports: Vec<(String, String)> = inspection["exports"]
            .as_array()
            .expect("exports")
            .iter()
            .map(|e| (e["name"].as_str().unwrap_or_default().into(), e["type"].as_str().unwrap_or_default().into()))
            .collect();
        for required in ["memory", "tdm_alloc", "tdm_free", "tdm_plugin_execute_intent"] {
            assert!(exports.iter().any(|(n, _)| n == required), "{name} must export {required}: {exports:?}");
        }
        // Pure compute: no host intents and nothing off the allowlist.
        assert_eq!(inspection["hostImports"], json!([]), "{name}");
        assert_eq!(inspection["imports"], json!([]), "{name}");
    }
}

#[test]
fn abi_every_module_answers_a_completed_framed_outcome() {
    for (name, method, params) in CONFORMING {
        let params: Value = serde_json::from_str(params).unwrap();
        let report = sandbox(name).execute(method, &params);
        // The host passes a valid response on byte for byte: the outcome is the plugin's JSON.
        assert!(report.outcome.is_completed(), "{name}: {}", report.outcome.json);
        let outcome: Value = serde_json::from_str(&report.outcome.json).expect("JSON");
        assert_eq!(outcome["status"], "completed", "{name}");
        assert!(outcome.get("output").is_some(), "{name}");
        assert!(report.fuel_used > 0, "{name}");
    }
}

#[test]
fn abi_memory_stays_constant_because_the_host_frees_each_request_and_response() {
    // 1 kB per request: were the requests or responses leaked, 200 intents would need about
    // 200 kB more memory than any of these modules has free at the start.
    let pad = "z".repeat(1024);
    let cases = [
        ("counter", "increment", json!({"by": 1, "pad": pad})),
        ("wordcount", "count", json!({ "text": pad })),
        ("hello-c", "greet", json!({ "name": pad })),
        ("hello-as", "greet", json!({ "name": pad })),
    ];
    for (name, method, params) in &cases {
        let mut sandbox = sandbox(name);
        let peaks: Vec<u64> = (0..200)
            .map(|i| {
                let report = sandbox.execute(method, params);
                assert!(report.outcome.is_completed(), "{name} intent {i}: {}", report.outcome.json);
                report.peak_memory_bytes
            })
            .collect();
        // After a few intents (allocator and GC warm-up) memory never grows again.
        let settled = peaks[5];
        assert!(peaks[5..].iter().all(|&p| p == settled), "{name}: memory kept growing: {peaks:?}");
        assert!(settled <= 4 * 65536, "{name}: {settled} bytes for a small intent");
    }
    // The same with requests that need many pages: the freed request's memory is reused.
    let pad = "z ".repeat(50_000);
    for (name, method, params) in [
        ("counter", "increment", json!({"by": 1, "pad": pad})),
        ("wordcount", "count", json!({ "text": pad })),
        ("hello-c", "greet", json!({ "name": pad })),
        ("hello-as", "greet", json!({ "name": pad })),
    ] {
        let mut sandbox = sandbox(name);
        let peaks: Vec<u64> = (0..10).map(|_| sandbox.execute(method, &params).peak_memory_bytes).collect();
        assert!(peaks[0] > 2 * 65536, "{name}: a 100 kB request needs more than its initial memory: {peaks:?}");
        assert!(peaks[3..].iter().all(|&p| p == peaks[3]), "{name}: memory kept growing: {peaks:?}");
    }
}

/// The intents a module declares in its `tdm.intents` section, as `tdm inspect --json` reads them.
fn declared(name: &str) -> Value {
    let out = tdm(&["inspect", &module(name).display().to_string(), "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("inspect --json is JSON");
    assert_eq!(report["intents"]["source"], "tdm.intents section", "{name}: {report}");
    report["intents"]["declared"].clone()
}

#[test]
fn the_hellos_declare_the_schemas_their_plugin_toml_lists() {
    for name in ["hello-c", "hello-as"] {
        let declared = declared(name);
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/packages").join(name);
        let package = tdm_sdk::package::Package::read(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let intent = &package.manifest.intents[0];
        assert!(intent.params.is_some() && intent.result.is_some() && intent.title.is_some(), "{name}");
        assert_eq!(declared[0]["title"], serde_json::json!(intent.title), "{name}");
        assert_eq!(declared[0]["params"], serde_json::json!(intent.params), "{name}");
        assert_eq!(declared[0]["result"], serde_json::json!(intent.result), "{name}");
    }
}

#[test]
fn the_c_and_assemblyscript_sdks_declare_the_intents_plugin_toml_lists() {
    let counter = declared("counter");
    assert_eq!(counter[0]["name"], "increment");
    assert_eq!(counter[0]["description"], "Adds `by` (an integer, default 1) to the count and answers {\"count\": N}.");
    assert_eq!(counter[1]["name"], "get");
    let wordcount = declared("wordcount");
    assert_eq!(
        wordcount,
        json!([{"name": "count", "description": "Counts the words and lines of `text` and answers {\"words\": N, \"lines\": M}."}])
    );
    // The same names as each package's plugin.toml, which is what an operator approves.
    for (name, folder) in [("counter", "examples/c/counter"), ("wordcount", "examples/assemblyscript/wordcount")] {
        let manifest = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(folder).join("plugin.toml"),
        )
        .unwrap();
        let listed: Vec<&str> =
            manifest.lines().filter_map(|l| l.strip_prefix("name = \"")).map(|l| l.trim_end_matches('"')).collect();
        let declared: Vec<String> =
            declared(name).as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_string()).collect();
        assert_eq!(listed[1..], declared[..], "{name}");
    }
}

// ---- The SIMD builds (target/plugins/simd/): the same answers as the scalar ones, for less fuel ---

/// The hellos built twice: scalar (`target/plugins/NAME.wasm`) and with wasm SIMD
/// (`target/plugins/simd/NAME.wasm`, whose SDK scans strings 16 bytes a vector).
const SIMD_PAIRS: [(&str, &str); 2] = [("hello-c", "simd/hello-c"), ("hello-as", "simd/hello-as")];

/// The names that exercise the string scans' edges: each character that ends a plain run or not
/// (controls, `"`, `\`, DEL, 2-, 3- and 4-byte UTF-8) at each position around a vector's and a long
/// round's edges of a name of `x`s 5 bytes longer, and plain names of every length up to 300.
fn scan_edge_names() -> Vec<String> {
    // U+0000, U+0001, U+0008, U+000A, U+001F, space, `!`, `"`, `#`, `[`, `\`, `]`, `~`, U+007F, U+0080,
    // U+00E9, U+07FF, U+0800, U+FFFF and U+1F600.
    const SPECIALS: &str = "\u{0}\u{1}\u{8}\n\u{1f} !\"#[\\]~\u{7f}\u{80}\u{e9}\u{7ff}\u{800}\u{ffff}\u{1f600}";
    // Past 1,024 bytes, the scalar C SDK reads a run 128 bytes a round.
    const POSITIONS: [usize; 22] =
        [0, 1, 15, 16, 17, 31, 32, 63, 64, 127, 128, 129, 255, 256, 300, 1023, 1024, 1025, 1151, 1152, 1153, 1500];
    let mut names = Vec::new();
    assert_eq!(SPECIALS.chars().count(), 20);
    for special in SPECIALS.chars() {
        for at in POSITIONS {
            let mut name = "x".repeat(at);
            name.push(special);
            // A name of `at + 5` bytes: the character and `x`s after it.
            let rest = (at + 5).saturating_sub(name.len());
            name.push_str(&"x".repeat(rest));
            names.push(name);
        }
    }
    names.extend((0..=300).chain(1000..=1200).map(|len| "x".repeat(len)));
    // Each class of stop alone in its long round (300 plain bytes after it, so no closing quote
    // shares the round), at every position: a round that misses it skips it.
    for at in 0..=300 {
        for special in ['"', '\\', '\u{1f}', '\u{7f}', '\u{e9}'] {
            names.push(format!("{}{special}{}", "x".repeat(at), "x".repeat(300)));
        }
    }
    names
}

#[test]
fn the_simd_builds_answer_every_greet_byte_for_byte_as_the_scalar_builds() {
    let names = scan_edge_names();
    for (scalar, simd) in SIMD_PAIRS {
        // One warm sandbox per build: the instance keeps its memory between greets.
        let (mut scalar_box, mut simd_box) = (sandbox(scalar), sandbox(simd));
        for name in &names {
            let params = json!({ "name": name });
            let expected = scalar_box.execute("greet", &params).outcome.json;
            let got = simd_box.execute("greet", &params).outcome.json;
            assert_eq!(got, expected, "{simd} vs {scalar}: name of {} bytes: {name:?}", name.len());
        }
        assert!(simd_box.is_live(), "{simd}");
        // And the scalar builds as the Rust SDK's hello answers (its scanners are tested against a
        // byte-by-byte scan in guest-sdk/rust).
        let mut rust_box = sandbox("hello");
        for name in &names {
            let params = json!({ "name": name });
            let expected = rust_box.execute("greet", &params).outcome.json;
            let got = scalar_box.execute("greet", &params).outcome.json;
            assert_eq!(got, expected, "{scalar} vs Rust: name of {} bytes: {name:?}", name.len());
        }
        // The params scan (a value's end) with a bracket or a quote alone in its long round: a
        // member skipped over whitespace runs, the stop at every position up to 300.
        for at in 0..=300 {
            let (before, after) = (" ".repeat(at), " ".repeat(300));
            for pad in [format!("[{after}]"), format!("{{{after}}}"), format!("\"s\"{after}")] {
                let params = format!(r#"{{"pad":{before}{pad},"name":"Ada"}}"#);
                let request = format!(r#"{{"id":1,"jsonrpc":"2.0","method":"greet","params":{params}}}"#);
                let expected = scalar_box.execute_request(request.as_bytes()).outcome.json;
                let got = simd_box.execute_request(request.as_bytes()).outcome.json;
                assert!(expected.contains("Hello, Ada!"), "{scalar}: {params}: {expected}");
                assert_eq!(got, expected, "{simd} vs {scalar}: {params}");
            }
        }
    }
}

#[test]
fn the_simd_builds_cost_less_fuel_per_byte_than_the_scalar_builds() {
    // Fuel is deterministic, so the bounds are measurements with a little room: a warm greet's fuel
    // per byte of name from 128 B to 64 KiB (see `greet_costs`), and at 128 B no more than scalar.
    for ((scalar, simd), simd_per_byte_bound) in SIMD_PAIRS.into_iter().zip([SIMD_C_PER_BYTE, SIMD_AS_PER_BYTE]) {
        let (scalar_fuel, scalar_per_byte) = greet_costs(scalar);
        let (simd_fuel, simd_per_byte) = greet_costs(simd);
        let (scalar_4k, simd_4k) = (warm_greet_fuel(scalar, 4096), warm_greet_fuel(simd, 4096));
        let (scalar_64k, simd_64k) = (warm_greet_fuel(scalar, 65_536), warm_greet_fuel(simd, 65_536));
        println!(
            "{scalar}: scalar {scalar_fuel} / {scalar_4k} / {scalar_64k} fuel at 128 B / 4 KiB / 64 KiB, \
             {scalar_per_byte:.3} per byte; simd {simd_fuel} / {simd_4k} / {simd_64k}, {simd_per_byte:.3} per byte"
        );
        assert!(
            simd_per_byte < scalar_per_byte,
            "{simd}: {simd_per_byte:.3} fuel per byte, not below scalar's {scalar_per_byte:.3}"
        );
        assert!(
            simd_per_byte <= simd_per_byte_bound,
            "{simd}: {simd_per_byte:.3} fuel per byte, over {simd_per_byte_bound}"
        );
        assert!(simd_fuel <= scalar_fuel, "{simd}: {simd_fuel} fuel at 128 B, over scalar's {scalar_fuel}");
    }
}

/// The bound on the SIMD C hello's fuel per byte of name (measured 3.81; the scalar build 11.60).
/// Its long rounds test each vector with 64-bit word arithmetic, which wasmi runs in about half
/// the time of byte-lane compares, for more instructions (2.84 fuel per byte with the compares).
const SIMD_C_PER_BYTE: f64 = 4.0;
/// The bound on the SIMD AssemblyScript hello's fuel per byte of name (measured 3.99; the scalar
/// build 12.91). Its scans test each vector with 64-bit word arithmetic: 3.45 fuel per byte with
/// byte-lane compares, which wasmi runs lane by lane, for 1.37x the time at 64 KiB.
const SIMD_AS_PER_BYTE: f64 = 4.2;
