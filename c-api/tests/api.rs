//! The C API called as C calls it, from Rust: policies and their setters, the environment
//! through callbacks, refusals with their reasons, record and replay (a divergence, a policy
//! above the ceiling), state errors, and the last error being per thread.

use contour::*;
use std::ffi::{c_void, CStr};
use std::path::Path;
use std::ptr::null_mut;

fn fixture(path: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    wat::parse_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn last_error() -> String {
    // SAFETY: contour_last_error never returns NULL and the text is NUL-terminated.
    unsafe { CStr::from_ptr(contour_last_error()) }.to_string_lossy().into_owned()
}

fn bytes_of(buffer: *const ContourBuffer) -> Vec<u8> {
    let (data, len) = (contour_buffer_data(buffer), contour_buffer_len(buffer));
    assert!(!data.is_null(), "{}", last_error());
    // SAFETY: a live buffer's data is valid for its length until it is freed.
    unsafe { std::slice::from_raw_parts(data, len) }.to_vec()
}

/// A runtime, a plugin of `module` under `policy` and a sandbox seeded with 0.
struct Loaded {
    runtime: *mut ContourRuntime,
    plugin: *mut ContourPlugin,
    sandbox: *mut ContourSandbox,
}

impl Loaded {
    fn new(module: &[u8], policy: *const ContourPolicy) -> Self {
        let (mut runtime, mut plugin, mut sandbox) = (null_mut(), null_mut(), null_mut());
        assert_eq!(contour_runtime_new(policy, &mut runtime, null_mut()), ContourStatus::Ok, "{}", last_error());
        let status =
            contour_plugin_load(runtime, module.as_ptr(), module.len(), policy, &mut plugin, null_mut(), null_mut());
        assert_eq!(status, ContourStatus::Ok, "{}", last_error());
        assert_eq!(contour_sandbox_new(plugin, 0, &mut sandbox), ContourStatus::Ok);
        Self { runtime, plugin, sandbox }
    }

    /// Runs `method` with `params`: the outcome JSON and the report's figures.
    fn run(&self, method: &str, params: &str) -> (String, ContourReport) {
        let mut report = std::mem::MaybeUninit::<ContourReport>::uninit();
        let status = contour_sandbox_execute(
            self.sandbox,
            method.as_ptr(),
            method.len(),
            params.as_ptr(),
            params.len(),
            report.as_mut_ptr(),
        );
        assert_eq!(status, ContourStatus::Ok, "{}", last_error());
        // SAFETY: OK means the report was written.
        let mut report = unsafe { report.assume_init() };
        let outcome = String::from_utf8(bytes_of(report.outcome)).expect("UTF-8");
        assert_eq!(contour_report_free(&mut report), ContourStatus::Ok);
        (outcome, report)
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        assert_eq!(contour_sandbox_free(self.sandbox), ContourStatus::Ok);
        assert_eq!(contour_plugin_free(self.plugin), ContourStatus::Ok);
        assert_eq!(contour_runtime_free(self.runtime), ContourStatus::Ok);
    }
}

fn new_policy() -> *mut ContourPolicy {
    let mut policy = null_mut();
    assert_eq!(contour_policy_new(&mut policy), ContourStatus::Ok);
    policy
}

fn get(policy: *const ContourPolicy, name: &str) -> u64 {
    let mut value = 0;
    assert_eq!(
        contour_policy_get(policy, name.as_ptr(), name.len(), &mut value),
        ContourStatus::Ok,
        "{}",
        last_error()
    );
    value
}

#[test]
fn every_setter_sets_its_field_and_the_embedded_profile_is_cores() {
    let policy = new_policy();
    type Setter = extern "C" fn(*mut ContourPolicy, u64) -> ContourStatus;
    let setters: [(&str, Setter); 17] = [
        ("max_memory_bytes", contour_policy_set_max_memory_bytes),
        ("fuel_per_intent", contour_policy_set_fuel_per_intent),
        ("start_fuel", contour_policy_set_start_fuel),
        ("timeout_ms", contour_policy_set_timeout_ms),
        ("max_call_depth", contour_policy_set_max_call_depth),
        ("max_request_bytes", contour_policy_set_max_request_bytes),
        ("max_response_bytes", contour_policy_set_max_response_bytes),
        ("max_output_bytes", contour_policy_set_max_output_bytes),
        ("max_module_bytes", contour_policy_set_max_module_bytes),
        ("max_table_elements", contour_policy_set_max_table_elements),
        ("max_tables", contour_policy_set_max_tables),
        ("max_instances", contour_policy_set_max_instances),
        ("fuel_slice", contour_policy_set_fuel_slice),
        ("max_host_calls", contour_policy_set_max_host_calls),
        ("max_host_bytes", contour_policy_set_max_host_bytes),
        ("max_host_request_bytes", contour_policy_set_max_host_request_bytes),
        ("max_request_depth", contour_policy_set_max_request_depth),
    ];
    assert_eq!(setters.len() + 2, contour_core::Policy::FIELDS.len(), "a setter per field (and compilation, simd)");
    for (at, (name, set)) in setters.iter().enumerate() {
        let value = 1000 + at as u64;
        assert_eq!(set(policy, value), ContourStatus::Ok, "{name}");
        assert_eq!(get(policy, name), value, "{name}");
    }
    assert_eq!(contour_policy_set_max_request_bytes(policy, u64::MAX), ContourStatus::InvalidArgument);
    assert!(last_error().contains("max_request_bytes"), "{}", last_error());
    assert_eq!(contour_policy_set_compilation(policy, 2), ContourStatus::Ok);
    assert_eq!(get(policy, "compilation"), 2);
    assert_eq!(contour_policy_set_compilation(policy, 3), ContourStatus::InvalidArgument);
    assert_eq!(get(policy, "simd"), 1, "SIMD is on by default");
    assert_eq!(contour_policy_set_simd(policy, 0), ContourStatus::Ok);
    assert_eq!(get(policy, "simd"), 0);
    assert_eq!(contour_policy_set_simd(policy, 2), ContourStatus::InvalidArgument);
    let mut value = 0;
    assert_eq!(contour_policy_get(policy, b"nope".as_ptr(), 4, &mut value), ContourStatus::InvalidArgument);
    assert_eq!(contour_policy_set_fuel_per_intent(policy, 0), ContourStatus::Ok);
    assert_eq!(contour_policy_validate(policy), ContourStatus::Refused);
    assert!(last_error().contains("fuel_per_intent"), "{}", last_error());
    assert_eq!(contour_policy_free(policy), ContourStatus::Ok);

    let mut embedded = null_mut();
    assert_eq!(contour_policy_new_embedded(&mut embedded), ContourStatus::Ok);
    assert_eq!(get(embedded, "max_memory_bytes"), contour_core::Policy::embedded().max_memory_bytes);
    assert_eq!(get(embedded, "fuel_per_intent"), contour_core::Policy::embedded().fuel_per_intent);
    assert_eq!(contour_policy_validate(embedded), ContourStatus::Ok);
    assert_eq!(contour_policy_free(embedded), ContourStatus::Ok);
}

#[test]
fn a_zero_limit_refuses_the_load_with_invalid_policy() {
    let policy = new_policy();
    assert_eq!(contour_policy_set_max_call_depth(policy, 0), ContourStatus::Ok);
    let echo = fixture("examples/echo/echo.wat");
    let (mut runtime, mut plugin, mut refusal) = (null_mut(), null_mut(), null_mut());
    assert_eq!(contour_runtime_new(std::ptr::null(), &mut runtime, null_mut()), ContourStatus::Ok);
    let mut reason = ContourBlockedReason::None;
    let status =
        contour_plugin_load(runtime, echo.as_ptr(), echo.len(), policy, &mut plugin, &mut reason, &mut refusal);
    assert_eq!(status, ContourStatus::Refused);
    assert_eq!(reason, ContourBlockedReason::InvalidPolicy);
    assert!(String::from_utf8(bytes_of(refusal)).unwrap().contains("\"blockedReason\":\"invalid_policy\""));
    assert_eq!(contour_buffer_free(refusal), ContourStatus::Ok);
    assert_eq!(contour_policy_free(policy), ContourStatus::Ok);
    assert_eq!(contour_runtime_free(runtime), ContourStatus::Ok);
}

#[test]
fn a_fuel_budget_ends_the_intent_with_its_reason() {
    let policy = new_policy();
    assert_eq!(contour_policy_set_fuel_per_intent(policy, 1000), ContourStatus::Ok);
    let loaded = Loaded::new(&fixture("examples/echo/echo.wat"), policy);
    let (outcome, report) = loaded.run("greet", r#"{"name":"Ada"}"#);
    assert!(!report.completed);
    assert_eq!(report.reason, ContourBlockedReason::FuelExhausted);
    assert!(report.fuel_used <= 1000);
    assert!(outcome.contains("fuel_exhausted"));
    // SAFETY: a static NUL-terminated string.
    let name = unsafe { CStr::from_ptr(contour_blocked_reason_str(report.reason as i32)) };
    assert_eq!(name.to_str().unwrap(), "fuel_exhausted");
    assert!(report.outcome.is_null(), "contour_report_free cleared the buffers");
    drop(loaded);
    assert_eq!(contour_policy_free(policy), ContourStatus::Ok);
}

extern "C" fn fixed_clock(user_data: *mut c_void, clock: ContourClock) -> u64 {
    assert_eq!(clock, ContourClock::Monotonic);
    // SAFETY: the test passes a pointer to a live u64 counter as user data.
    let reads = unsafe { &mut *user_data.cast::<u64>() };
    *reads += 1;
    42
}

extern "C" fn ones(_user_data: *mut c_void, dest: *mut u8, len: usize) {
    // SAFETY: core passes a writable buffer of `len` bytes.
    unsafe { std::ptr::write_bytes(dest, 1, len) };
}

#[test]
fn the_environment_comes_from_the_callbacks_and_defaults_to_the_virtual_one() {
    let loaded = Loaded::new(&fixture("conformance/fixtures/clock_reader.wat"), std::ptr::null());
    let (virtual_outcome, _) = loaded.run("read", "{}");
    let mut reads = 0u64;
    let env = ContourEnvironment {
        user_data: (&mut reads as *mut u64).cast(),
        seed: 0,
        now_ns: Some(fixed_clock),
        resolution_ns: None,
        fill_random: Some(ones),
        sleep_ns: None,
        deadline_clock_ns: None,
    };
    assert_eq!(contour_sandbox_set_environment(loaded.sandbox, &env), ContourStatus::Ok);
    let (outcome, _) = loaded.run("read", "{}");
    assert_eq!(outcome, r#"{"status":"completed","output":[42,72340172838076673]}"#);
    assert_eq!(reads, 1);
    // Back to the virtual environment of the seed: the same inputs as the first run.
    assert_eq!(contour_sandbox_set_environment(loaded.sandbox, std::ptr::null()), ContourStatus::Ok);
    assert_eq!(loaded.run("read", "{}").0, virtual_outcome);
}

#[test]
fn recording_replays_and_an_edited_trace_diverges() {
    let echo = fixture("examples/echo/echo.wat");
    let loaded = Loaded::new(&echo, std::ptr::null());
    let name = "echo.wat";
    let start = |s| contour_sandbox_record_start(s, echo.as_ptr(), echo.len(), name.as_ptr(), name.len());
    let mut trace = null_mut();
    assert_eq!(contour_sandbox_record_stop(loaded.sandbox, &mut trace), ContourStatus::InvalidState);
    assert_eq!(start(loaded.sandbox), ContourStatus::Ok);
    assert_eq!(start(loaded.sandbox), ContourStatus::InvalidState);
    assert_eq!(contour_sandbox_set_environment(loaded.sandbox, std::ptr::null()), ContourStatus::InvalidState);
    let (first, _) = loaded.run("greet", r#"{"name":"Ada"}"#);
    let (second, report) = loaded.run("greet", r#"{"name":"Grace"}"#);
    assert_ne!(first, second);
    assert_eq!(contour_sandbox_record_stop(loaded.sandbox, &mut trace), ContourStatus::Ok);
    let bytes = bytes_of(trace);
    assert_eq!(contour_buffer_free(trace), ContourStatus::Ok);

    let mut replayed = std::mem::MaybeUninit::<ContourReplayReport>::uninit();
    let status =
        contour_replay(bytes.as_ptr(), bytes.len(), echo.as_ptr(), echo.len(), std::ptr::null(), replayed.as_mut_ptr());
    assert_eq!(status, ContourStatus::Ok, "{}", last_error());
    // SAFETY: OK means the report was written.
    let mut replayed = unsafe { replayed.assume_init() };
    assert_eq!((replayed.intents, replayed.recorded_intents, replayed.diverged), (2, 2, false));
    assert_eq!(String::from_utf8(bytes_of(replayed.last_outcome)).unwrap(), second);
    assert_eq!(replayed.last_fuel_used, report.fuel_used);
    assert!(replayed.last_completed && replayed.divergence.is_null());
    assert_eq!(contour_replay_report_free(&mut replayed), ContourStatus::Ok);

    // One byte of the second request edited: the replay diverges at intent 2.
    let mut edited = bytes.clone();
    let at = edited.windows(5).rposition(|w| w == b"Grace").expect("the request is in the trace");
    edited[at] = b'X';
    let mut diverged = std::mem::MaybeUninit::<ContourReplayReport>::uninit();
    let status = contour_replay(
        edited.as_ptr(),
        edited.len(),
        echo.as_ptr(),
        echo.len(),
        std::ptr::null(),
        diverged.as_mut_ptr(),
    );
    assert_eq!(status, ContourStatus::Diverged, "{}", last_error());
    // SAFETY: DIVERGED fills the report.
    let mut diverged = unsafe { diverged.assume_init() };
    assert!(diverged.diverged && diverged.last_outcome.is_null());
    assert!(String::from_utf8(bytes_of(diverged.divergence)).unwrap().contains("intent 2"));
    assert_eq!(contour_replay_report_free(&mut diverged), ContourStatus::Ok);

    // A ceiling below the trace's policy: refused before anything loads.
    let ceiling = new_policy();
    assert_eq!(contour_policy_set_fuel_per_intent(ceiling, 10), ContourStatus::Ok);
    let mut report = std::mem::MaybeUninit::<ContourReplayReport>::uninit();
    let status = contour_replay(bytes.as_ptr(), bytes.len(), echo.as_ptr(), echo.len(), ceiling, report.as_mut_ptr());
    assert_eq!(status, ContourStatus::Trace);
    assert!(last_error().contains("fuel_per_intent"), "{}", last_error());
    assert_eq!(contour_policy_free(ceiling), ContourStatus::Ok);
    // Not a trace, and a truncated one.
    for bad in [&b"not a trace"[..], &bytes[..bytes.len() / 2]] {
        let status =
            contour_replay(bad.as_ptr(), bad.len(), echo.as_ptr(), echo.len(), std::ptr::null(), report.as_mut_ptr());
        assert_eq!(status, ContourStatus::Trace);
    }
}

#[test]
fn the_last_error_belongs_to_its_thread_and_every_status_has_a_name() {
    assert_eq!(contour_buffer_free(null_mut()), ContourStatus::NullPointer);
    let here = last_error();
    assert!(here.starts_with("contour_buffer_free: "), "{here}");
    let there = std::thread::spawn(|| {
        let before = last_error();
        assert_eq!(contour_plugin_free(null_mut()), ContourStatus::NullPointer);
        (before, last_error())
    })
    .join()
    .unwrap();
    assert_eq!(there.0, "");
    assert!(there.1.starts_with("contour_plugin_free: "));
    assert_eq!(last_error(), here, "another thread's failure does not touch this thread's");
    for status in 0..13 {
        // SAFETY: static NUL-terminated strings.
        let name = unsafe { CStr::from_ptr(contour_status_str(status)) }.to_str().unwrap();
        assert_ne!(name, "unknown", "{status}");
    }
    // SAFETY: as above.
    assert_eq!(unsafe { CStr::from_ptr(contour_status_str(99)) }.to_str().unwrap(), "unknown");
    // SAFETY: as above.
    assert_eq!(unsafe { CStr::from_ptr(contour_version()) }.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

#[test]
fn one_runtime_and_plugin_serve_many_threads() {
    let echo = fixture("examples/echo/echo.wat");
    let loaded = Loaded::new(&echo, std::ptr::null());
    // Raw pointers are not Send: the handles cross as addresses, as C would share them.
    let (runtime, plugin) = (loaded.runtime as usize, loaded.plugin as usize);
    let threads: Vec<_> = (0..4)
        .map(|n| {
            let echo = echo.clone();
            std::thread::spawn(move || {
                let (mut own, mut sandbox) = (null_mut(), null_mut());
                let runtime = runtime as *const ContourRuntime;
                let status = contour_plugin_load(
                    runtime,
                    echo.as_ptr(),
                    echo.len(),
                    std::ptr::null(),
                    &mut own,
                    null_mut(),
                    null_mut(),
                );
                assert_eq!(status, ContourStatus::Ok);
                assert_eq!(contour_sandbox_new(plugin as *const ContourPlugin, n, &mut sandbox), ContourStatus::Ok);
                let shared = Loaded { runtime: null_mut(), plugin: null_mut(), sandbox };
                let outcome = shared.run("greet", &format!(r#"{{"n":{n}}}"#)).0;
                assert_eq!(contour_sandbox_free(sandbox), ContourStatus::Ok);
                assert_eq!(contour_plugin_free(own), ContourStatus::Ok);
                std::mem::forget(shared);
                outcome
            })
        })
        .collect();
    for (n, thread) in threads.into_iter().enumerate() {
        assert_eq!(thread.join().unwrap(), format!(r#"{{"status":"completed","output":{{"n":{n}}}}}"#));
    }
}
