//! Signed packages and trusted hubs through the built `tdm`: the operator's workflow from `tdm
//! hub add` to `tdm upgrade`, the publisher bound in the approval, and every altered, foreign,
//! stale or mixed-up input refused with the workspace left as it was.

#[path = "support/tdm.rs"]
mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use support::{hex, json, repo, stderr, tdm, text};
use tdm_sdk::hub::{HubEntry, HubIndex, Price};
use tdm_sdk::signing::SecretKey;

const LATER: &str = "2999-01-01T00:00:00Z";

/// sha256 in hex.
fn sha(bytes: &[u8]) -> String {
    hex(bytes)
}

/// A signed echo package `id@version` asking for `permissions`, in `hub/ID-VERSION`, signed by
/// `publisher`; its hub entry.
fn package(hub: &Path, id: &str, version: &str, permissions: &[&str], publisher: &SecretKey) -> HubEntry {
    named_package(hub, id, version, permissions, publisher, "Echo")
}

/// [`package`] with the display name `name` (TOML-escaped here).
fn named_package(
    hub: &Path,
    id: &str,
    version: &str,
    permissions: &[&str],
    publisher: &SecretKey,
    name: &str,
) -> HubEntry {
    let dir = hub.join(format!("{id}-{version}"));
    std::fs::create_dir_all(dir.join("dist")).unwrap();
    let module = std::fs::read(repo().join("examples/echo/echo.wat")).unwrap();
    // Each version is another module (a comment), as a rebuilt module would be.
    let module = [module, format!("\n;; {version}\n").into_bytes()].concat();
    std::fs::write(dir.join("dist/echo.wat"), &module).unwrap();
    let perms: Vec<String> = permissions.iter().map(|p| format!("{p:?}")).collect();
    let manifest = format!(
        "id = \"{id}\"\nversion = \"{version}\"\nname = {}\ndescription = \"d\"\nmodule = \"dist/echo.wat\"\n\
         sha256 = \"{}\"\npermissions = [{}]\npublisher = \"{}\"\n\n[[intents]]\nname = \"greet\"\ndescription = \"g\"\n",
        serde_json::to_string(name).unwrap(),
        sha(&module),
        perms.join(", "),
        publisher.public().base64()
    );
    std::fs::write(dir.join("plugin.toml"), &manifest).unwrap();
    std::fs::write(dir.join("plugin.toml.minisig"), publisher.sign(manifest.as_bytes(), "test").unwrap()).unwrap();
    HubEntry {
        id: id.into(),
        version: version.into(),
        sha256: sha(&module),
        price: Price::Free("free".into()),
        path: format!("{id}-{version}"),
        publisher: Some(publisher.public().base64()),
        manifest_sha256: Some(sha(manifest.as_bytes())),
    }
}

/// Writes and signs `hub/index.json`.
fn index(hub: &Path, key: &SecretKey, serial: u64, plugins: Vec<HubEntry>) {
    let index = HubIndex { version: Some(2), serial: Some(serial), expires: Some(LATER.into()), plugins };
    let bytes = serde_json::to_vec(&index).unwrap();
    std::fs::write(hub.join("index.json"), &bytes).unwrap();
    std::fs::write(hub.join("index.json.minisig"), key.sign(&bytes, "index").unwrap()).unwrap();
}

struct Setup {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    hub: PathBuf,
    hub_key: SecretKey,
    publisher: SecretKey,
}

/// A workspace trusting a hub `main` that lists echo 1.0.0.
fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, hub) = (tmp.path().join("ws"), tmp.path().join("hub"));
    std::fs::create_dir_all(&hub).unwrap();
    let (hub_key, publisher) = (SecretKey::generate().unwrap(), SecretKey::generate().unwrap());
    let entry = package(&hub, "echo", "1.0.0", &[], &publisher);
    index(&hub, &hub_key, 1, vec![entry]);
    let key_file = tmp.path().join("hub.pub");
    std::fs::write(&key_file, hub_key.public().file_text()).unwrap();
    let out =
        tdm(&ws, &["hub", "add", "main", &hub.display().to_string(), "--key", &key_file.display().to_string()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    Setup { _tmp: tmp, ws, hub, hub_key, publisher }
}

fn state(ws: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(ws.join("state.json")).unwrap()).unwrap()
}

#[test]
fn the_operator_workflow_binds_the_publisher_and_upgrades_within_the_approval() {
    let s = setup();
    let out = tdm(&s.ws, &["install", "echo", "--hub", "main", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json(&out)["publisher"], s.publisher.public().id());
    let out = tdm(&s.ws, &["approve", "echo", "--yes"], b"");
    assert!(text(&out).contains(&format!("publisher:   key {}", s.publisher.public().id())), "{}", text(&out));
    // 1.1.0 by the same publisher, nothing widened: outdated lists it, upgrade keeps the approval.
    let mut entries = vec![package(&s.hub, "echo", "1.0.0", &[], &s.publisher)];
    entries.push(package(&s.hub, "echo", "1.1.0", &[], &s.publisher));
    index(&s.hub, &s.hub_key, 2, entries.clone());
    let out = tdm(&s.ws, &["outdated", "--json"], b"");
    assert_eq!(json(&out)["outdated"][0]["available"], "1.1.0", "{}", text(&out));
    let out = tdm(&s.ws, &["upgrade", "echo", "--json"], b"");
    assert_eq!(json(&out)["state"], "approved", "{}", text(&out));
    let out = tdm(&s.ws, &["call", "echo", "greet", "--params", "{}"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A downgrade needs its flag.
    let out = tdm(&s.ws, &["install", "echo@1.0.0", "--hub", "main"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(stderr(&out).contains("--allow-downgrade"), "{}", text(&out));
    // 1.2.0 asks for the network: the upgrade voids the approval and approve shows why.
    entries.push(package(&s.hub, "echo", "1.2.0", &["network:example.com"], &s.publisher));
    index(&s.hub, &s.hub_key, 3, entries.clone());
    let out = tdm(&s.ws, &["upgrade", "echo", "--json"], b"");
    assert_eq!(json(&out)["state"], "installed", "{}", text(&out));
    let out = tdm(&s.ws, &["approve", "echo", "--yes", "--json"], b"");
    let changes = json(&out)["changes"].to_string();
    assert!(changes.contains("+ permission network:example.com"), "{changes}");
    // 1.3.0 signed by someone else: the approval is void, in words nobody can miss.
    let stranger = SecretKey::generate().unwrap();
    entries.push(package(&s.hub, "echo", "1.3.0", &["network:example.com"], &stranger));
    index(&s.hub, &s.hub_key, 4, entries);
    let out = tdm(&s.ws, &["upgrade", "echo"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(stderr(&out).contains("THE PUBLISHER CHANGED"), "{}", text(&out));
    assert!(stderr(&out).contains(&stranger.public().id()), "{}", text(&out));
    let out = tdm(&s.ws, &["call", "echo", "greet", "--params", "{}"], b"");
    assert_eq!(out.status.code(), Some(1), "the voided approval held: {}", text(&out));
    let out = tdm(&s.ws, &["approve", "echo", "--yes", "--json"], b"");
    assert!(json(&out)["changes"].to_string().contains("PUBLISHER CHANGED"), "{}", text(&out));
    // Every operator action is audited.
    let audit = std::fs::read_to_string(s.ws.join("audit.jsonl")).unwrap();
    for action in ["\"install\"", "\"upgrade\"", "\"approve\""] {
        assert!(audit.contains(action), "{action} in {audit}");
    }
}

#[test]
fn unsigned_altered_and_mixed_up_packages_are_refused_and_nothing_changes() {
    let s = setup();
    // Nothing is installed by a refusal (a verified index may still raise the hub's serial
    // floor: it was seen).
    let refused = |args: &[&str], expected: &str| {
        let out = tdm(&s.ws, args, b"");
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert!(stderr(&out).contains(expected), "{args:?}: expected {expected:?} in {}", text(&out));
        assert_eq!(state(&s.ws)["plugins"], serde_json::json!({}), "{args:?} installed something");
        assert!(!s.ws.join("packages/echo").exists(), "{args:?} left a package");
    };
    let dir = s.hub.join("echo-1.0.0");
    // An unsigned package needs --allow-unsigned.
    let unsigned = s.hub.join("unsigned");
    std::fs::create_dir_all(unsigned.join("dist")).unwrap();
    std::fs::copy(dir.join("dist/echo.wat"), unsigned.join("dist/echo.wat")).unwrap();
    let manifest = std::fs::read_to_string(dir.join("plugin.toml")).unwrap();
    let manifest: String = manifest.lines().filter(|l| !l.starts_with("publisher")).map(|l| format!("{l}\n")).collect();
    std::fs::write(unsigned.join("plugin.toml"), manifest).unwrap();
    refused(&["install", &unsigned.display().to_string()], "--allow-unsigned");
    // A hub location that is not trusted.
    refused(&["install", "echo", "--hub", &s.hub.display().to_string()], "not a trusted hub");
    // A flipped bit in the manifest: its signature no longer matches.
    let text_before = std::fs::read(dir.join("plugin.toml")).unwrap();
    let mut flipped = text_before.clone();
    let at = flipped.windows(4).position(|w| w == b"Echo").unwrap();
    flipped[at] ^= 0x20;
    std::fs::write(dir.join("plugin.toml"), &flipped).unwrap();
    refused(&["install", "echo", "--hub", "main"], "altered after it was signed");
    std::fs::write(dir.join("plugin.toml"), &text_before).unwrap();
    // A flipped bit in the signature.
    let signature = std::fs::read_to_string(dir.join("plugin.toml.minisig")).unwrap();
    let mut lines: Vec<String> = signature.lines().map(String::from).collect();
    // One base64 character of the signature changed (a different one, whatever it was).
    let mut sig: Vec<char> = lines[1].chars().collect();
    sig[40] = if sig[40] == 'A' { 'B' } else { 'A' };
    lines[1] = sig.into_iter().collect();
    std::fs::write(dir.join("plugin.toml.minisig"), lines.join("\n")).unwrap();
    refused(&["install", "echo", "--hub", "main"], "package signature");
    std::fs::write(dir.join("plugin.toml.minisig"), &signature).unwrap();
    // A flipped bit in the module.
    let module = std::fs::read(dir.join("dist/echo.wat")).unwrap();
    let mut changed = module.clone();
    changed[2] ^= 0x01;
    std::fs::write(dir.join("dist/echo.wat"), &changed).unwrap();
    refused(&["install", "echo", "--hub", "main"], "module hash mismatch");
    std::fs::write(dir.join("dist/echo.wat"), &module).unwrap();
    // A file the signature does not cover, slipped into dist/.
    std::fs::write(dir.join("dist/extra.js"), "evil").unwrap();
    refused(&["install", "echo", "--hub", "main"], "it is not listed");
    std::fs::remove_file(dir.join("dist/extra.js")).unwrap();
    // Mix-and-match: the hub serves another signed manifest for the same module (wider
    // permissions, same publisher) than the one its index names.
    package(&s.hub, "echo", "1.0.0", &["network:evil.example"], &s.publisher);
    let entry = HubEntry { manifest_sha256: Some(sha(&text_before)), ..package_entry(&s) };
    index(&s.hub, &s.hub_key, 2, vec![entry]);
    refused(&["install", "echo", "--hub", "main"], "not the one the index names");
    // An index signed by the publisher's key instead of the hub's.
    index(&s.hub, &s.publisher, 3, vec![]);
    refused(&["install", "echo", "--hub", "main"], "not by the trusted key");
    // Rollback to serial 1.
    let entry = package(&s.hub, "echo", "1.0.0", &[], &s.publisher);
    index(&s.hub, &s.hub_key, 1, vec![entry]);
    refused(&["install", "echo", "--hub", "main"], "rollback");
}

/// The hub entry for the package now in `hub/echo-1.0.0`, as it is on disk.
fn package_entry(s: &Setup) -> HubEntry {
    let dir = s.hub.join("echo-1.0.0");
    HubEntry {
        id: "echo".into(),
        version: "1.0.0".into(),
        sha256: sha(&std::fs::read(dir.join("dist/echo.wat")).unwrap()),
        price: Price::Free("free".into()),
        path: "echo-1.0.0".into(),
        publisher: Some(s.publisher.public().base64()),
        manifest_sha256: None,
    }
}

#[test]
fn the_bundled_hub_is_signed_by_the_key_in_the_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let key = repo().join("examples/keys/bundled-hub.pub").display().to_string();
    let hub = repo().join("examples/hub").display().to_string();
    let out = tdm(&ws, &["hub", "add", "bundled", &hub, "--key", &key], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = tdm(&ws, &["install", "echo", "--hub", "bundled", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let publisher = std::fs::read_to_string(repo().join("examples/keys/bundled-publisher.pub")).unwrap();
    assert!(publisher.contains(json(&out)["publisher"].as_str().unwrap()), "{publisher}");
    assert_eq!(state(&ws)["hubs"]["bundled"]["serial"], 1);
    // The publisher's key is not the hub's.
    let wrong = repo().join("examples/keys/bundled-publisher.pub").display().to_string();
    let out = tdm(&tmp.path().join("ws2"), &["hub", "add", "bundled", &hub, "--key", &wrong], b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let ws2 = tmp.path().join("ws2/state.json");
    assert!(!ws2.exists() || state(&tmp.path().join("ws2"))["hubs"].is_null(), "a refused hub was trusted");
}

#[test]
fn control_and_bidi_characters_a_signed_package_carries_reach_no_terminal_raw() {
    let s = setup();
    let hostile = "Echo\u{1b}]52;c;ZXZpbA==\u{7}\u{202e}gpj.exe\r";
    let entry = named_package(&s.hub, "echo", "2.0.0", &[], &s.publisher, hostile);
    index(&s.hub, &s.hub_key, 2, vec![entry]);
    for args in [&["install", "echo", "--hub", "main"][..], &["approve", "echo", "--yes"], &["hub", "list", "main"]] {
        let out = tdm(&s.ws, args, b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        let all = text(&out);
        assert!(!all.contains('\u{1b}') && !all.contains('\u{202e}') && !all.contains('\r'), "{args:?}: {all:?}");
    }
    let out = tdm(&s.ws, &["approve", "echo", "--yes"], b"");
    assert!(text(&out).contains("\\u{1b}"), "the name is shown escaped: {}", text(&out));
}
