//! Promise 5: a plugin cannot auto-launch after install or payment. Launch needs an operator's
//! approval, a separate step, bound to the module's hash, the permissions it asked for and the
//! intents it declared; a changed module, a wider permission set or a new intent voids it. Proven through the real operator path of
//! `tdm-sdk` (install, approve, and the one launch check `tdm call` and `tdm repl` use), with a
//! plugin whose start function prints a marker and makes a host call as soon as it runs.

use contour_core::VirtualEnvironment;
use contour_core::{AuditRecord, CallContext, HostAnswer, HostCall, HostIntents, IntentReport, Plugin, Sandbox};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tdm_sdk::intents::tool::sha256_hex;
use tdm_sdk::limits::Limits;
use tdm_sdk::operator::{self, LaunchError, Source};
use tdm_sdk::package::blake3_hex;
use tdm_sdk::session::{Session, SessionError, SessionOptions};
use tdm_sdk::workspace::{PluginState, Workspace};

/// A plugin whose start function prints `MARKER-<tag>` and logs through a host call, and whose
/// intents answer `{"ok":true}`.
fn marked(tag: &str) -> String {
    let log = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"log","params":{{"level":"info","message":"{tag}"}}}}"#);
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "tdm" "tdm_host_call" (func $host_call (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "MARKER-{tag}\n")
  (data (i32.const 64) "{log_data}")
  (data (i32.const 512) "\2b\00\00\00{{\"status\":\"completed\",\"output\":{{\"ok\":true}}}}")
  (func $start
    (i32.store (i32.const 32) (i32.const 0)) (i32.store (i32.const 36) (i32.const {len}))
    (drop (call $fd_write (i32.const 1) (i32.const 32) (i32.const 1) (i32.const 40)))
    (drop (call $host_call (i32.const 64) (i32.const {log_len}))))
  (start $start)
  (func (export "tdm_alloc") (param i32) (result i32) i32.const 4096)
  (func (export "tdm_free") (param i32 i32))
  (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 512))"#,
        log_data = contour_conformance::wat_data(log.as_bytes()),
        len = "MARKER-".len() + tag.len() + 1,
        log_len = log.len(),
    )
}

/// Writes a package for plugin `p` into `dir`: module `module`, asking for `permissions`.
fn write_package(dir: &Path, version: &str, module: &str, permissions: &[&str]) {
    std::fs::create_dir_all(dir.join("dist")).unwrap();
    std::fs::write(dir.join("dist/plugin.wat"), module).unwrap();
    std::fs::write(dir.join("plugin.toml"), manifest(version, module, permissions)).unwrap();
}

fn manifest(version: &str, module: &str, permissions: &[&str]) -> String {
    let permissions: Vec<String> = permissions.iter().map(|p| format!("\"{p}\"")).collect();
    format!(
        "id = \"p\"\nversion = \"{version}\"\nname = \"p\"\ndescription = \"promise 5\"\nmodule = \"dist/plugin.wat\"\nsha256 = \"{}\"\npermissions = [{}]\n",
        sha256_hex(module.as_bytes()),
        permissions.join(", ")
    )
}

/// Rewrites the package in `dir` (module `module`, no permissions) to declare `intents`.
fn declare_intents(dir: &Path, module: &str, intents: &[&str]) {
    let declared: String =
        intents.iter().map(|name| format!("\n[[intents]]\nname = \"{name}\"\ndescription = \"{name} it\"\n")).collect();
    std::fs::write(dir.join("plugin.toml"), manifest("1.0.0", module, &[]) + &declared).unwrap();
}

/// Every host call the plugin makes, shared with the test.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl HostIntents for Recorder {
    fn call(&mut self, call: &HostCall, _context: &CallContext) -> HostAnswer {
        self.0.lock().unwrap().push(format!("{call:?}"));
        HostAnswer::ok(serde_json::json!({}))
    }

    fn audit(&mut self, _record: &AuditRecord) {}
}

/// What `tdm call p ping` does: the one launch check, then exactly the package it handed back,
/// loaded and run with the approved grants. `Err` is the `not_approved` message.
fn call(workspace: &Workspace, host: &Recorder) -> Result<IntentReport, String> {
    let approved = match operator::approved_plugin(workspace, "p") {
        Ok(approved) => approved,
        Err(LaunchError::NotApproved(why)) => return Err(why),
        Err(LaunchError::Workspace(e)) => panic!("the workspace state is unusable: {e}"),
    };
    let plugin = Plugin::load(&approved.package.module, approved.package.policy()).expect("the package loads");
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(5)))
        .with_host(Box::new(host.clone()), approved.grants);
    Ok(sandbox.execute("ping", &serde_json::json!({})))
}

fn install(workspace: &Workspace, dir: &Path) -> operator::InstallReport {
    operator::install(workspace, &Source::Folder(dir.to_path_buf()), unsigned()).expect("the package installs")
}

/// What `tdm approve p --yes` does: read the installed package, approve its hash and permissions.
fn approve(workspace: &Workspace) {
    let (_, package) = operator::installed_package(workspace, "p").expect("installed");
    operator::approve(workspace, "p", &package).expect("approved");
}

fn state(workspace: &Workspace) -> PluginState {
    let state = workspace.read_state().unwrap();
    let plugin = &state.plugins["p"];
    operator::state_on_disk(plugin, operator::read_installed(workspace, plugin).ok().as_ref())
}

fn stdout(report: &IntentReport) -> String {
    String::from_utf8_lossy(&report.stdout).into_owned()
}

struct Setup {
    _tmp: tempfile::TempDir,
    workspace: Workspace,
    source: std::path::PathBuf,
    host: Recorder,
}

fn setup(permissions: &[&str]) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = Workspace::open(tmp.path().join("ws")).unwrap();
    let source = tmp.path().join("source");
    write_package(&source, "1.0.0", &marked("A"), permissions);
    Setup { _tmp: tmp, workspace, source, host: Recorder::default() }
}

#[test]
fn install_runs_nothing_and_a_call_before_approval_is_refused() {
    let s = setup(&[]);
    let report = install(&s.workspace, &s.source);
    assert!(!report.still_approved);
    assert_eq!(state(&s.workspace), PluginState::Installed);
    let refused = call(&s.workspace, &s.host).expect_err("not approved yet");
    assert!(refused.contains("not approved"), "{refused}");
    assert!(s.host.0.lock().unwrap().is_empty(), "no plugin code ran: {:?}", s.host.0.lock().unwrap());

    approve(&s.workspace);
    assert_eq!(state(&s.workspace), PluginState::Approved);
    let report = call(&s.workspace, &s.host).expect("approved");
    assert!(report.outcome.is_completed(), "{}", report.outcome.json);
    // The marker works: the start function runs at launch, and only then.
    assert!(stdout(&report).contains("MARKER-A"), "{}", stdout(&report));
    assert_eq!(s.host.0.lock().unwrap().len(), 1, "the start function's host call");
}

#[test]
fn a_changed_module_voids_the_approval() {
    let s = setup(&[]);
    install(&s.workspace, &s.source);
    approve(&s.workspace);
    write_package(&s.source, "1.1.0", &marked("B"), &[]);
    let report = install(&s.workspace, &s.source);
    assert!(report.approval_voided && !report.still_approved);
    assert_eq!(state(&s.workspace), PluginState::Installed);
    assert!(call(&s.workspace, &s.host).is_err());
    assert!(s.host.0.lock().unwrap().is_empty());
}

#[test]
fn a_wider_permission_set_voids_the_approval() {
    let s = setup(&["context:read"]);
    install(&s.workspace, &s.source);
    approve(&s.workspace);
    // The same module, asking for one more permission.
    write_package(&s.source, "1.0.0", &marked("A"), &["context:read", "vault:read"]);
    let report = install(&s.workspace, &s.source);
    assert!(report.approval_voided);
    assert!(call(&s.workspace, &s.host).is_err());
    // A narrower set keeps it, and runs with the narrower set: never with a permission the
    // package stopped asking for.
    approve(&s.workspace);
    write_package(&s.source, "1.0.0", &marked("A"), &["vault:read"]);
    assert!(install(&s.workspace, &s.source).still_approved);
    assert!(call(&s.workspace, &s.host).is_ok());
    let Ok(approved) = operator::approved_plugin(&s.workspace, "p") else { panic!("approved") };
    let grants: Vec<String> = approved.grants.iter().map(ToString::to_string).collect();
    assert_eq!(grants, ["vault:read"], "context:read was approved for the earlier version only");
}

#[test]
fn a_new_intent_voids_the_approval() {
    let s = setup(&[]);
    let module = marked("A");
    declare_intents(&s.source, &module, &["ping"]);
    install(&s.workspace, &s.source);
    approve(&s.workspace);
    assert_eq!(state(&s.workspace), PluginState::Approved);
    // The same module and permissions, declaring one more intent: the operator never saw it.
    declare_intents(&s.source, &module, &["ping", "wipe"]);
    let report = install(&s.workspace, &s.source);
    assert!(report.approval_voided && !report.still_approved, "{report:?}");
    assert_eq!(state(&s.workspace), PluginState::Installed);
    assert!(call(&s.workspace, &s.host).is_err());
    assert!(s.host.0.lock().unwrap().is_empty());
    // Approved with both, a narrower set keeps the approval.
    approve(&s.workspace);
    declare_intents(&s.source, &module, &["wipe"]);
    assert!(install(&s.workspace, &s.source).still_approved);
    assert_eq!(state(&s.workspace), PluginState::Approved);
}

/// Rewrites the package in `dir` (module `module`, no permissions) with `policy` as its
/// `[policy]` table.
fn ask_for_limits(dir: &Path, module: &str, policy: &str) {
    std::fs::write(dir.join("plugin.toml"), manifest("1.0.0", module, &[]) + "[policy]\n" + policy).unwrap();
}

#[test]
fn raised_limits_void_the_approval() {
    let s = setup(&[]);
    let module = marked("A");
    ask_for_limits(&s.source, &module, "fuel_per_intent = 100000\nmax_memory_bytes = 131072\n");
    install(&s.workspace, &s.source);
    approve(&s.workspace);
    assert_eq!(state(&s.workspace), PluginState::Approved);
    // The same module asking for the default budget: 20,000 times the fuel that was approved.
    ask_for_limits(&s.source, &module, "max_memory_bytes = 131072\n");
    let report = install(&s.workspace, &s.source);
    assert!(report.approval_voided && !report.still_approved, "{report:?}");
    assert!(call(&s.workspace, &s.host).is_err());
    // Approved again with it, lower limits keep the approval.
    approve(&s.workspace);
    ask_for_limits(&s.source, &module, "fuel_per_intent = 50000\nmax_memory_bytes = 65536\n");
    assert!(install(&s.workspace, &s.source).still_approved);
    // Raised on disk after approval: refused.
    approve(&s.workspace);
    ask_for_limits(&s.workspace.dir.join("packages/p/1.0.0"), &module, "fuel_per_intent = 60000\n");
    assert_eq!(state(&s.workspace), PluginState::StaleApproval);
    let refused = call(&s.workspace, &s.host).expect_err("limits above the approval");
    assert!(refused.contains("its limits"), "{refused}");
    assert!(s.host.0.lock().unwrap().is_empty());
}

#[test]
fn an_intent_added_on_disk_after_approval_is_refused() {
    let s = setup(&[]);
    let module = marked("A");
    declare_intents(&s.source, &module, &["ping"]);
    install(&s.workspace, &s.source);
    approve(&s.workspace);
    declare_intents(&s.workspace.dir.join("packages/p/1.0.0"), &module, &["ping", "wipe"]);
    assert_eq!(state(&s.workspace), PluginState::StaleApproval);
    let refused = call(&s.workspace, &s.host).expect_err("an intent beyond the approval");
    assert!(refused.contains("its intents"), "{refused}");
    assert!(s.host.0.lock().unwrap().is_empty());
}

#[test]
fn a_manifest_widened_on_disk_after_approval_is_refused() {
    let s = setup(&[]);
    install(&s.workspace, &s.source);
    approve(&s.workspace);
    let dir = s.workspace.dir.join("packages/p/1.0.0");
    std::fs::write(dir.join("plugin.toml"), manifest("1.0.0", &marked("A"), &["vault:read"])).unwrap();
    let refused = call(&s.workspace, &s.host).expect_err("wider than approved");
    assert!(refused.contains("beyond its approval"), "{refused}");
    assert!(s.host.0.lock().unwrap().is_empty());
}

#[test]
fn a_module_swapped_with_its_manifest_after_approval_is_refused() {
    let s = setup(&[]);
    install(&s.workspace, &s.source);
    approve(&s.workspace);
    let dir = s.workspace.dir.join("packages/p/1.0.0");
    let evil = marked("B");
    std::fs::write(dir.join("dist/plugin.wat"), &evil).unwrap();
    std::fs::write(dir.join("plugin.toml"), manifest("1.0.0", &evil, &[])).unwrap();
    // Approving cannot fix it (the files are not what was installed): it says to reinstall.
    assert_eq!(state(&s.workspace), PluginState::Modified);
    let refused = call(&s.workspace, &s.host).expect_err("a swapped module is not approved");
    assert!(refused.contains("changed after it was installed") && refused.contains("reinstall"), "{refused}");
    assert!(s.host.0.lock().unwrap().is_empty());
}

#[test]
fn an_unreadable_or_missing_package_after_approval_is_refused() {
    let s = setup(&[]);
    install(&s.workspace, &s.source);
    approve(&s.workspace);
    let dir = s.workspace.dir.join("packages/p/1.0.0");
    std::fs::remove_file(dir.join("plugin.toml")).unwrap();
    assert_eq!(state(&s.workspace), PluginState::Unverifiable);
    assert!(call(&s.workspace, &s.host).expect_err("unverifiable").contains("cannot be read"));
    // A manifest that is not a file (here a directory) is unreadable too.
    std::fs::create_dir(dir.join("plugin.toml")).unwrap();
    assert_eq!(state(&s.workspace), PluginState::Unverifiable);
    assert!(call(&s.workspace, &s.host).is_err());
    assert!(s.host.0.lock().unwrap().is_empty());
}

#[test]
fn the_bytes_checked_are_the_bytes_run() {
    let s = setup(&[]);
    install(&s.workspace, &s.source);
    approve(&s.workspace);
    // The launch check reads the package once and hands back what it hashed.
    let approved = operator::approved_plugin(&s.workspace, "p").expect("approved");
    assert_eq!(approved.package.sha256, sha256_hex(marked("A").as_bytes()));
    // The files change right after the check (the race a second read would lose)...
    let dir = s.workspace.dir.join("packages/p/1.0.0");
    let evil = marked("B");
    std::fs::write(dir.join("dist/plugin.wat"), &evil).unwrap();
    std::fs::write(dir.join("plugin.toml"), manifest("1.0.0", &evil, &[])).unwrap();
    // ...and what runs is still exactly the approved bytes.
    let plugin = Plugin::load(&approved.package.module, approved.package.policy()).unwrap();
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(5)))
        .with_host(Box::new(s.host.clone()), approved.grants);
    let report = sandbox.execute("ping", &serde_json::json!({}));
    assert!(stdout(&report).contains("MARKER-A") && !stdout(&report).contains("MARKER-B"));
    // The next check sees the swap and refuses.
    assert!(call(&s.workspace, &s.host).is_err());
}

/// Writes `bytes` to `path` atomically (a temporary file renamed over it).
fn replace(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("swap");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn bytes_swapped_during_the_check_never_come_back_approved() {
    let s = setup(&[]);
    install(&s.workspace, &s.source);
    approve(&s.workspace);
    let dir = s.workspace.dir.join("packages/p/1.0.0");
    let (good, evil) = (marked("A"), marked("B"));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Flip between the approved package and a consistent evil one (its manifest names its
    // hash) while the launch check runs again and again.
    let flipper = {
        let (stop, dir, good, evil) = (Arc::clone(&stop), dir.clone(), good.clone(), evil.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for module in [&evil, &good] {
                    replace(&dir.join("dist/plugin.wat"), module.as_bytes());
                    replace(&dir.join("plugin.toml"), manifest("1.0.0", module, &[]).as_bytes());
                }
            }
        })
    };
    let mut cleared = 0;
    for _ in 0..2000 {
        if let Ok(approved) = operator::approved_plugin(&s.workspace, "p") {
            cleared += 1;
            if approved.package.files.module_file.as_slice() != good.as_bytes() {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                panic!("bytes other than the approved ones were cleared to run");
            }
            assert_eq!(approved.package.sha256, sha256_hex(good.as_bytes()));
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    eprintln!("{cleared} of 2000 checks cleared the approved bytes");
}

/// A binary package for `p` in `dir`: `marked(tag)` compiled, with `pages` pages of memory (how
/// a test tells which module a launch parsed without running it), its manifest naming its hash.
fn write_binary_package(dir: &Path, tag: &str, pages: u32) -> Vec<u8> {
    let text =
        marked(tag).replace(r#"(memory (export "memory") 1)"#, &format!(r#"(memory (export "memory") {pages})"#));
    let wasm = wat::parse_str(text).unwrap();
    std::fs::create_dir_all(dir.join("dist")).unwrap();
    std::fs::write(dir.join("dist/plugin.wasm"), &wasm).unwrap();
    let manifest = manifest("1.0.0", "", &[]).replace("dist/plugin.wat", "dist/plugin.wasm");
    let manifest = manifest.replace(&sha256_hex(b""), &sha256_hex(&wasm));
    std::fs::write(dir.join("plugin.toml"), manifest).unwrap();
    wasm
}

/// `tdm call`'s open of the installed `p` ([`Session::open_installed`], which parses a binary
/// module while the launch check hashes it): the memory pages of the module it loaded, or the
/// refusal.
fn opened_pages(workspace: &Workspace, limits: Limits) -> Result<u64, SessionError> {
    let options = SessionOptions { limits, ..SessionOptions::default() };
    let session = Session::open_installed(workspace, "p", options)?;
    Ok(session.plugin().inspection().memory.as_ref().map_or(0, |memory| memory.minimum_pages))
}

/// A workspace with `p` installed from a binary package (`marked("A")`, one page) and approved,
/// and the folder its package was installed to.
fn approved_binary() -> (Setup, std::path::PathBuf) {
    let s = setup(&[]);
    let source = s.source.with_file_name("binary");
    write_binary_package(&source, "A", 1);
    install(&s.workspace, &source);
    approve(&s.workspace);
    let dir = s.workspace.dir.join("packages/p/1.0.0");
    (s, dir)
}

#[test]
fn a_binary_module_parsed_beside_its_hash_is_kept_only_when_the_hash_clears() {
    let (s, dir) = approved_binary();
    assert_eq!(opened_pages(&s.workspace, Limits::default()).expect("the approved module opens"), 1);
    let (installed, installed_manifest) =
        (std::fs::read(dir.join("dist/plugin.wasm")).unwrap(), std::fs::read(dir.join("plugin.toml")).unwrap());
    let refused = |why: &str| match opened_pages(&s.workspace, Limits::default()) {
        Err(SessionError::NotApproved(failure)) => assert!(failure.message().contains(why), "{}", failure.message()),
        other => panic!("a module other than the approved one was opened: {:?}", other.map_err(|e| e.to_string())),
    };
    // Another valid module in its place (the parse beside the hash succeeds): refused.
    let evil = wat::parse_str(marked("B").replace(r#""memory") 1)"#, r#""memory") 2)"#)).unwrap();
    std::fs::write(dir.join("dist/plugin.wasm"), &evil).unwrap();
    refused("changed after it was installed");
    // The same with its manifest rewritten to name its hash: refused all the same.
    write_binary_package(&dir, "B", 2);
    refused("changed after it was installed");
    // Bytes that do not parse: the refusal is the approval's, not the load's.
    std::fs::write(dir.join("dist/plugin.wasm"), b"\0asm\x01\0\0\0garbage").unwrap();
    refused("changed after it was installed");
    // The approved bytes back: it opens, and a limit above the approval is refused as such.
    std::fs::write(dir.join("dist/plugin.wasm"), &installed).unwrap();
    std::fs::write(dir.join("plugin.toml"), &installed_manifest).unwrap();
    assert_eq!(opened_pages(&s.workspace, Limits::default()).expect("the approved module opens again"), 1);
    let above = Limits { max_memory: Some(1 << 40), ..Limits::default() };
    assert!(matches!(opened_pages(&s.workspace, above), Err(SessionError::AboveApproval(_))));
}

#[test]
fn an_approval_binds_the_blake3_of_the_bytes_whose_sha256_it_binds() {
    let (s, dir) = approved_binary();
    let bytes = std::fs::read(dir.join("dist/plugin.wasm")).unwrap();
    let approval = |workspace: &Workspace| workspace.read_state().unwrap().plugins["p"].approval.clone().unwrap();
    let recorded = approval(&s.workspace);
    assert_eq!(recorded.sha256, sha256_hex(&bytes));
    assert_eq!(recorded.blake3.as_deref(), Some(blake3_hex(&bytes).as_str()));
    // The launch check answers the SHA-256 of the bytes it read, which it handed on.
    let cleared = operator::approved_plugin(&s.workspace, "p").expect("approved");
    assert_eq!(
        (cleared.package.sha256.as_str(), cleared.package.module.as_slice()),
        (recorded.sha256.as_str(), &bytes[..])
    );
    // An approval recorded before BLAKE3 was (none) and one whose BLAKE3 names other bytes
    // (the SHA-256 is then computed): the approved bytes still open, other bytes never do.
    for blake3 in [None, Some(blake3_hex(b"other bytes"))] {
        s.workspace
            .update(|state| {
                state.plugins.get_mut("p").and_then(|p| p.approval.as_mut()).unwrap().blake3 = blake3.clone();
                Ok(())
            })
            .unwrap();
        assert_eq!(opened_pages(&s.workspace, Limits::default()).expect("the approved module opens"), 1);
        let cleared = operator::approved_plugin(&s.workspace, "p").expect("approved");
        assert_eq!(cleared.package.sha256, recorded.sha256);
        std::fs::write(dir.join("dist/plugin.wasm"), wat::parse_str(marked("B")).unwrap()).unwrap();
        assert!(matches!(opened_pages(&s.workspace, Limits::default()), Err(SessionError::NotApproved(_))));
        std::fs::write(dir.join("dist/plugin.wasm"), &bytes).unwrap();
    }
    // Approving again records both digests anew.
    approve(&s.workspace);
    assert_eq!(approval(&s.workspace).blake3, recorded.blake3);
}

#[test]
fn binary_bytes_swapped_while_they_are_parsed_and_hashed_never_open() {
    let (s, dir) = approved_binary();
    let evil_dir = s.source.with_file_name("evil");
    let evil = write_binary_package(&evil_dir, "B", 2);
    let good = std::fs::read(dir.join("dist/plugin.wasm")).unwrap();
    let evil_manifest = std::fs::read(evil_dir.join("plugin.toml")).unwrap();
    let good_manifest = std::fs::read(dir.join("plugin.toml")).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Flip between the approved package and a consistent evil one while launches open it.
    let flipper = {
        let (stop, dir) = (Arc::clone(&stop), dir.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for (module, manifest) in [(&evil, &evil_manifest), (&good, &good_manifest)] {
                    replace(&dir.join("dist/plugin.wasm"), module);
                    replace(&dir.join("plugin.toml"), manifest);
                }
            }
        })
    };
    let mut opened = 0;
    for _ in 0..500 {
        match opened_pages(&s.workspace, Limits::default()) {
            Ok(pages) if pages != 1 => {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                panic!("a launch opened a module other than the approved one ({pages} pages)");
            }
            Ok(_) => opened += 1,
            Err(SessionError::NotApproved(_)) => {}
            Err(e) => {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                panic!("a swap gave an error other than a refusal: {e}");
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    eprintln!("{opened} of 500 launches opened the approved bytes");
}

/// Install options for these packages, which are unsigned.
fn unsigned() -> tdm_sdk::operator::InstallOptions {
    tdm_sdk::operator::InstallOptions { allow_unsigned: true, ..Default::default() }
}
