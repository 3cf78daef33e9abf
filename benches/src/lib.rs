//! Fixtures for the Contour benchmarks: small TDM ABI plugins in WAT and a generator for a large module.
//!
//! Every plugin shares one prelude: an exported memory of 2 pages, a bump allocator `tdm_alloc` whose arena is
//! reset at the end of each intent (so a warm instance never grows), a no-op `tdm_free`, and helpers that find
//! `"n":<digits>` in the request and answer `{"status":"completed","output":{"value":<u64>}}`.

#![deny(missing_docs)]

pub mod baseline;
pub mod contour;
pub mod installed;
pub mod peers;
pub mod rounds;

use std::fmt::Write as _;

/// The outcome the echo plugin answers for every request.
pub const ECHO_OUTCOME: &str = r#"{"status":"completed","output":{}}"#;

/// Where the benches' outputs go (criterion's estimates, `density.json`, `profile.json`): `$CARGO_TARGET_DIR`
/// when set, else the workspace's `target/`.
pub fn target_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"), std::path::PathBuf::from)
}

/// Iterations of the callgrind profile's short run of each scenario (warms caches and lazy compilation).
pub const PROFILE_BASE_ITERATIONS: u64 = 20;

/// Extra iterations of the profile's long run: (long - short) / this is one iteration.
pub const PROFILE_EXTRA_ITERATIONS: u64 = 200;

/// How many generated functions the large module has.
pub const LARGE_FUNCTIONS: usize = 3000;

/// Unrolled rounds of arithmetic in each generated function of the large module.
pub const LARGE_ROUNDS: usize = 4;

/// The ABI prelude every fixture shares. Memory layout: the constant echo response at 16, the value
/// response at 64 (its length) and 68 (the JSON, prefix from a data segment, digits from 108), the heap from 4096.
const PRELUDE: &str = r#"
  (memory (export "memory") 2)
  (global $bump (mut i32) (i32.const 4096))
  (data (i32.const 16) "\22\00\00\00{\"status\":\"completed\",\"output\":{}}")
  (data (i32.const 68) "{\"status\":\"completed\",\"output\":{\"value\":")
  (func $tdm_alloc (export "tdm_alloc") (param $len i32) (result i32)
    (local $ptr i32) (local $end i32) (local $have i32)
    (local.set $ptr (i32.and (i32.add (global.get $bump) (i32.const 7)) (i32.const -8)))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (local.set $have (i32.shl (memory.size) (i32.const 16)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq
              (memory.grow (i32.shr_u (i32.add (i32.sub (local.get $end) (local.get $have)) (i32.const 65535))
                                      (i32.const 16)))
              (i32.const -1))
          (then (return (i32.const 0))))))
    (global.set $bump (local.get $end))
    (local.get $ptr))
  (func $tdm_free (export "tdm_free") (param i32 i32))
  (func $reset (global.set $bump (i32.const 4096)))
  (func $completed (result i32) (call $reset) (i32.const 16))
  (func $param_n (param $ptr i32) (param $len i32) (result i64)
    (local $i i32) (local $end i32) (local $c i32) (local $n i64)
    (if (i32.lt_u (local.get $len) (i32.const 4)) (then (return (i64.const 0))))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (local.set $i (local.get $ptr))
    (block $found
      (loop $scan
        (br_if $found (i32.eq (i32.load (local.get $i)) (i32.const 0x3a226e22)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $scan (i32.le_u (i32.add (local.get $i) (i32.const 4)) (local.get $end)))
        (return (i64.const 0))))
    (local.set $i (i32.add (local.get $i) (i32.const 4)))
    (block $done
      (loop $digits
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $c (i32.sub (i32.load8_u (local.get $i)) (i32.const 48)))
        (br_if $done (i32.gt_u (local.get $c) (i32.const 9)))
        (local.set $n (i64.add (i64.mul (local.get $n) (i64.const 10)) (i64.extend_i32_u (local.get $c))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $digits)))
    (local.get $n))
  (func $respond_value (param $v i64) (result i32)
    (local $digits i32) (local $t i64) (local $pos i32)
    (local.set $digits (i32.const 1))
    (local.set $t (local.get $v))
    (block $counted
      (loop $count
        (br_if $counted (i64.lt_u (local.get $t) (i64.const 10)))
        (local.set $t (i64.div_u (local.get $t) (i64.const 10)))
        (local.set $digits (i32.add (local.get $digits) (i32.const 1)))
        (br $count)))
    (local.set $pos (i32.add (i32.const 108) (local.get $digits)))
    (i32.store16 (local.get $pos) (i32.const 0x7d7d))
    (loop $write
      (local.set $pos (i32.sub (local.get $pos) (i32.const 1)))
      (i32.store8 (local.get $pos) (i32.add (i32.wrap_i64 (i64.rem_u (local.get $v) (i64.const 10))) (i32.const 48)))
      (local.set $v (i64.div_u (local.get $v) (i64.const 10)))
      (br_if $write (i64.ne (local.get $v) (i64.const 0))))
    (i32.store (i32.const 64) (i32.add (i32.const 42) (local.get $digits)))
    (call $reset)
    (i32.const 64))
"#;

fn module(body: &str) -> String {
    format!("(module{PRELUDE}{body})\n")
}

fn assemble(wat: &str) -> Vec<u8> {
    wat::parse_str(wat).expect("the fixture WAT is valid")
}

/// The echo plugin's WAT: it answers [`ECHO_OUTCOME`] to any request without reading it.
pub fn echo_wat() -> String {
    module(
        r#"
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) (call $completed))
"#,
    )
}

/// The echo plugin's bytes.
pub fn echo_wasm() -> Vec<u8> {
    assemble(&echo_wat())
}

/// The fib plugin's WAT: recursive `fib(n)` for the request's `"n"`, answered as `{"value":fib(n)}` (an `i32`
/// result, so it wraps past n = 47). It also exports `fib (i32) -> i32` for the bare-wasmi baseline.
pub fn fib_wat() -> String {
    module(
        r#"
  (func $fib (export "fib") (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                     (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func (export "tdm_plugin_execute_intent") (param $ptr i32) (param $len i32) (result i32)
    (call $respond_value
      (i64.extend_i32_u (call $fib (i32.wrap_i64 (call $param_n (local.get $ptr) (local.get $len)))))))
"#,
    )
}

/// The fib plugin's bytes.
pub fn fib_wasm() -> Vec<u8> {
    assemble(&fib_wat())
}

/// The tight-loop plugin's WAT: `n` iterations of `acc = acc * 31 + i` (i64) for the request's `"n"`, answered
/// as `{"value":acc}`. It also exports `spin (i64) -> i64`.
pub fn loop_wat() -> String {
    module(
        r#"
  (func $spin (export "spin") (param $n i64) (result i64)
    (local $i i64) (local $acc i64)
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (local.set $acc (i64.add (i64.mul (local.get $acc) (i64.const 31)) (local.get $i)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $next)))
    (local.get $acc))
  (func (export "tdm_plugin_execute_intent") (param $ptr i32) (param $len i32) (result i32)
    (call $respond_value (call $spin (call $param_n (local.get $ptr) (local.get $len)))))
"#,
    )
}

/// The tight-loop plugin's bytes.
pub fn loop_wasm() -> Vec<u8> {
    assemble(&loop_wat())
}

/// How many `tdm_host_call`s of `log` the host-call plugin makes per intent (so one intent's own cost is spread
/// thin over the calls).
pub const HOST_CALLS_PER_INTENT: u32 = 100;

/// Where the host-call plugin keeps its `log` request.
const LOG_REQUEST_AT: usize = 1024;

/// The `log` request the host-call plugin sends, as JSON-RPC bytes.
pub fn log_request() -> Vec<u8> {
    contour_core::intent_request(1, "log", &serde_json::json!({ "level": "info", "message": "hello from the plugin" }))
}

/// The host-call plugin's WAT: it imports `tdm.tdm_host_call` and `tdm.tdm_host_response`, and each intent calls
/// `tdm_host_call` with [`log_request`] [`HOST_CALLS_PER_INTENT`] times (checking each answer is a positive
/// length), then answers [`ECHO_OUTCOME`]. Exported `log_calls (i32) -> i32` does the same loop `n` times for
/// the bare-wasmi baseline and answers how many calls succeeded.
pub fn host_log_wat() -> String {
    let request = log_request();
    let escaped: String = request.iter().map(|b| format!("\\{b:02x}")).collect();
    let len = request.len();
    let body = format!(
        r#"
  (func $log_calls (export "log_calls") (param $n i32) (result i32)
    (local $i i32) (local $ok i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.gt_s (call $host_call (i32.const {LOG_REQUEST_AT}) (i32.const {len})) (i32.const 0))
          (then (local.set $ok (i32.add (local.get $ok) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $ok))
  (data (i32.const {LOG_REQUEST_AT}) "{escaped}")
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32)
    (if (i32.ne (call $log_calls (i32.const {HOST_CALLS_PER_INTENT})) (i32.const {HOST_CALLS_PER_INTENT}))
      (then unreachable))
    (call $completed))
"#
    );
    let imports = r#"
  (import "tdm" "tdm_host_call" (func $host_call (param i32 i32) (result i32)))
  (import "tdm" "tdm_host_response" (func $host_response (param i32 i32) (result i32)))"#;
    format!("(module{imports}{PRELUDE}{body})\n")
}

/// The host-call plugin's bytes.
pub fn host_log_wasm() -> Vec<u8> {
    assemble(&host_log_wat())
}

/// A small deterministic generator for the constants of the large module.
struct Constants(u64);

impl Constants {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }
}

/// The indices of the generated functions the large module's intent calls (spread over the whole module, so
/// lazy compilation has to translate functions far apart).
pub fn large_called(functions: usize) -> Vec<usize> {
    let last = functions.saturating_sub(1);
    let mut called = vec![0, 1.min(last), functions / 7, functions / 3, functions / 2, 2 * functions / 3, last];
    called.dedup();
    called
}

/// The WAT of a large plugin: `functions` generated functions `$f<i> (i32, i32) -> i32`, each a 4-iteration loop
/// over `rounds` unrolled rounds of arithmetic, a branch and a store with per-function constants, plus the ABI
/// prelude. Its intent calls [`large_called`] with the request's `"n"` and answers the wrapped sum as `"value"`.
pub fn large_wat(functions: usize, rounds: usize) -> String {
    let mut constants = Constants(0x00C0_FFEE);
    let mut body = String::with_capacity(functions * rounds * 700);
    for index in 0..functions {
        let address = 1024 + (index % 64) * 32;
        writeln!(
            body,
            "  (func $f{index} (param $a i32) (param $b i32) (result i32) (local $x i32) (local $y i32) (local $k i32)
    (local.set $x (i32.add (local.get $a) (i32.const {c0})))
    (local.set $y (i32.xor (local.get $b) (i32.const {c1})))
    (block $done
      (loop $again
        (br_if $done (i32.ge_u (local.get $k) (i32.const 4)))",
            c0 = constants.next() as i32,
            c1 = constants.next() as i32,
        )
        .expect("writing to a String cannot fail");
        for round in 0..rounds {
            writeln!(
                body,
                "        (local.set $x (i32.rotl (i32.add (local.get $x) (i32.mul (local.get $y) (i32.const {mul})))
                                (i32.const {rot})))
        (local.set $y (i32.sub (i32.xor (local.get $y) (local.get $x)) (i32.const {sub})))
        (if (i32.and (local.get $x) (i32.const {bit}))
          (then (local.set $y (i32.add (local.get $y) (i32.const {add}))))
          (else (local.set $x (i32.sub (local.get $x) (i32.const {dec})))))
        (i32.store offset={offset} (i32.const {address}) (local.get $x))",
                mul = constants.next() as i32 | 1,
                rot = constants.next() % 31 + 1,
                sub = constants.next() as i32,
                bit = (1u32 << (constants.next() % 32)) as i32,
                add = constants.next() as i32,
                dec = constants.next() as i32,
                offset = (round % 8) * 4,
            )
            .expect("writing to a String cannot fail");
        }
        body.push_str(
            "        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $again)))
    (i32.add (local.get $x) (local.get $y)))
",
        );
    }
    body.push_str(
        "  (func (export \"tdm_plugin_execute_intent\") (param $ptr i32) (param $len i32) (result i32)
    (local $n i32) (local $sum i32)
    (local.set $n (i32.wrap_i64 (call $param_n (local.get $ptr) (local.get $len))))\n",
    );
    for (k, index) in large_called(functions).into_iter().enumerate() {
        writeln!(
            body,
            "    (local.set $sum (i32.add (local.get $sum) (call $f{index} (local.get $n) (i32.const {k}))))"
        )
        .expect("writing to a String cannot fail");
    }
    body.push_str("    (call $respond_value (i64.extend_i32_u (local.get $sum))))\n");
    module(&body)
}

/// The bytes of the large plugin with [`LARGE_FUNCTIONS`] functions of [`LARGE_ROUNDS`] rounds (about 1 MiB).
pub fn large_wasm() -> Vec<u8> {
    assemble(&large_wat(LARGE_FUNCTIONS, LARGE_ROUNDS))
}

/// A JSON-RPC request for `method` of exactly `len` bytes (padded with a `"pad"` string param), or the shortest
/// such request when `len` is smaller than that.
pub fn request_of_size(method: &str, len: usize) -> Vec<u8> {
    let build = |pad: usize| contour_core::intent_request(1, method, &serde_json::json!({ "pad": "x".repeat(pad) }));
    let shortest = build(0).len();
    build(len.saturating_sub(shortest))
}

/// One build of the `greet` plugin of a guest SDK, as `make examples` writes it into `target/plugins/`.
#[derive(Debug, Clone, Copy)]
pub struct GreetBuild {
    /// Its key in `target/sdk_fuel.json`.
    pub key: &'static str,
    /// Its bench name in `greet/<size>`.
    pub bench: &'static str,
    /// Its module, relative to `target/plugins/` (and to `target/plugins/fuel-marks/` for the marked build).
    pub file: &'static str,
    /// Its name in the report.
    pub label: &'static str,
}

/// The `greet` builds the benches compare: each SDK's scalar build, then its build with wasm SIMD
/// (`target/plugins/simd/`, issue 25). `make sdk-fuel`, the `greet` benches and the report read this one list.
pub const GREET_BUILDS: [GreetBuild; 6] = [
    GreetBuild { key: "rust", bench: "contour_rust", file: "hello.wasm", label: "Rust" },
    GreetBuild {
        key: "rust-simd",
        bench: "contour_rust_simd",
        file: "simd/hello.wasm",
        label: "Rust, SIMD, opt-level 3, inline threshold 1500",
    },
    GreetBuild { key: "c", bench: "contour_c", file: "hello-c.wasm", label: "C" },
    GreetBuild { key: "c-simd", bench: "contour_c_simd", file: "simd/hello-c.wasm", label: "C, SIMD" },
    GreetBuild { key: "assemblyscript", bench: "contour_as", file: "hello-as.wasm", label: "AssemblyScript" },
    GreetBuild {
        key: "assemblyscript-simd",
        bench: "contour_as_simd",
        file: "simd/hello-as.wasm",
        label: "AssemblyScript, SIMD",
    },
];

/// One `greet {name}` of `examples/rust/hello` (and of the same plugin in C, AssemblyScript and for Extism).
pub struct Greet {
    /// The JSON-RPC request as the host writes it, exactly the size asked for.
    pub request: Vec<u8>,
    /// The name it carries (`x` repeated).
    pub name: String,
    /// The outcome the plugin answers.
    pub outcome: String,
}

/// The `greet` whose request is exactly `size` bytes (at least the shortest such request, with a 1-byte name).
pub fn greet(size: usize) -> Greet {
    let build = |name: &str| contour_core::intent_request(1, "greet", &serde_json::json!({ "name": name }));
    let name = "x".repeat(size.saturating_sub(build("").len()).max(1));
    let outcome = format!(r#"{{"status":"completed","output":{{"greeting":"Hello, {name}!"}}}}"#);
    Greet { request: build(&name), name, outcome }
}

/// The same greet as [`greet`] (the same size, name and outcome) with its request written
/// `jsonrpc` first, the order most JSON-RPC writers use and the host does not: the SDKs' envelope
/// cost must not depend on it (issue 25).
pub fn greet_jsonrpc_first(size: usize) -> Greet {
    let Greet { name, outcome, .. } = greet(size);
    let request = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"greet","params":{{"name":"{name}"}}}}"#).into_bytes();
    Greet { request, name, outcome }
}

/// A JSON-RPC request for `method` with params `{"n": n}`.
pub fn request_with_n(method: &str, n: u64) -> Vec<u8> {
    contour_core::intent_request(1, method, &serde_json::json!({ "n": n }))
}

/// The expected outcome JSON of a plugin that answers `value`.
pub fn value_outcome(value: u64) -> String {
    format!(r#"{{"status":"completed","output":{{"value":{value}}}}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jsonrpc_first_greet_is_the_hosts_greet_reordered() {
        for size in [128, 4096] {
            let (host, other) = (greet(size), greet_jsonrpc_first(size));
            assert_eq!(host.request.len(), other.request.len());
            assert_ne!(host.request, other.request);
            assert!(other.request.starts_with(br#"{"jsonrpc":"2.0","id":1,"#));
            let parsed = |bytes: &[u8]| serde_json::from_slice::<serde_json::Value>(bytes).unwrap();
            assert_eq!(parsed(&host.request), parsed(&other.request));
        }
    }
    use contour_core::{Plugin, Policy, Sandbox, VirtualEnvironment};
    use std::sync::Arc;

    fn run(wasm: &[u8], request: &[u8]) -> String {
        let plugin = Arc::new(Plugin::load(wasm, Policy::default()).expect("the fixture loads"));
        let mut sandbox = Sandbox::new(plugin, Box::new(VirtualEnvironment::new(1)));
        let report = sandbox.execute_request(request);
        assert!(report.outcome.is_completed(), "{}", report.outcome.json);
        report.outcome.json
    }

    #[test]
    fn echo_answers_the_constant_outcome_at_every_size() {
        assert_eq!(ECHO_OUTCOME.len(), 0x22);
        for len in [0, 128, 4096, 65_536, 300_000] {
            let request = request_of_size("echo", len);
            assert_eq!(request.len(), len.max(request_of_size("echo", 0).len()));
            assert_eq!(run(&echo_wasm(), &request), ECHO_OUTCOME);
        }
    }

    #[test]
    fn a_greet_request_has_the_size_asked_for() {
        for size in [128, 4096, 65_536] {
            let greet = greet(size);
            assert_eq!(greet.request.len(), size);
            assert!(greet.outcome.contains(&greet.name));
        }
        assert_eq!(greet(0).name, "x");
    }

    #[test]
    fn fib_answers_fib_of_n() {
        assert_eq!(run(&fib_wasm(), &request_with_n("fib", 0)), value_outcome(0));
        assert_eq!(run(&fib_wasm(), &request_with_n("fib", 10)), value_outcome(55));
        assert_eq!(run(&fib_wasm(), &request_with_n("fib", 25)), value_outcome(75_025));
    }

    #[test]
    fn the_loop_answers_its_checksum() {
        let expected = (0..1000u64).fold(0u64, |acc, i| acc.wrapping_mul(31).wrapping_add(i));
        assert_eq!(run(&loop_wasm(), &request_with_n("spin", 1000)), value_outcome(expected));
    }

    #[test]
    fn the_host_call_plugin_logs_through_the_host() {
        struct Logs;
        impl contour_core::HostIntents for Logs {
            fn call(&mut self, _: &contour_core::HostCall, _: &contour_core::CallContext) -> contour_core::HostAnswer {
                contour_core::HostAnswer::ok(serde_json::json!({ "logged": true }))
            }
        }
        assert!(log_request().len() < 3072, "the request fits below the heap");
        let plugin = Arc::new(Plugin::load(&host_log_wasm(), Policy::default()).expect("the fixture loads"));
        let mut sandbox = Sandbox::new(plugin, Box::new(VirtualEnvironment::new(1)))
            .with_host(Box::new(Logs), contour_core::Permissions::default());
        let report = sandbox.execute_request(&request_of_size("log_many", 0));
        assert!(report.outcome.is_completed(), "{}", report.outcome.json);
        assert_eq!(report.outcome.json, ECHO_OUTCOME);
    }

    #[test]
    fn the_large_module_is_about_one_mebibyte_and_runs() {
        let wasm = large_wasm();
        assert!((900 * 1024..1400 * 1024).contains(&wasm.len()), "{} bytes", wasm.len());
        let json = run(&wasm, &request_with_n("large", 3));
        assert!(json.starts_with(r#"{"status":"completed","output":{"value":"#), "{json}");
    }
}
