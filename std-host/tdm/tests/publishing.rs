//! The publisher's side through the built binary: `tdm key generate`, `tdm pack` (a module's
//! `tdm.intents` section, or `--intent`), the package then installing with `tdm install`,
//! signatures that Debian's `minisign` verifies and keys it made that tdm signs with, `tdm hub
//! init` and `tdm hub publish` (read back by `tdm hub add` and `tdm install --hub`), and bad
//! input refused with its exit code and nothing written. `minisign` must be installed (`make
//! minisign`); without it the tests fail saying so.

#[path = "support/tdm.rs"]
mod support;
#[path = "support/tree.rs"]
mod tree;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{json, stderr, tdm, text};

/// The Rust hello example (`make examples`), whose module carries a `tdm.intents` section.
fn hello() -> String {
    let path = support::repo().join("target/plugins/hello.wasm");
    assert!(path.is_file(), "{} is missing: run `make examples` first (it builds the example plugins)", path.display());
    path.display().to_string()
}

/// Runs `tdm ARGS` with the workspace `dir/ws`.
fn run(dir: &Path, args: &[&str]) -> Output {
    tdm(&dir.join("ws"), args, b"")
}

/// `dir/name` as text.
fn at(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// Runs Debian's `minisign` with `args` (in `dir`); fails the test when it is not installed.
fn minisign(dir: &Path, args: &[&str]) -> Output {
    match Command::new("minisign").args(args).current_dir(dir).output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "Debian's `minisign` is not installed, and these tests check tdm's signatures against it: \
             `make minisign` (or `apt-get install minisign`) installs it"
        ),
        Err(e) => panic!("minisign: {e}"),
    }
}

fn ok(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "{}", text(out));
}

/// Generates the key pair `dir/name.key`, `dir/name.pub` with tdm; the secret key's path.
fn key(dir: &Path, name: &str) -> String {
    ok(&run(dir, &["key", "generate", &at(dir, name)]));
    at(dir, &format!("{name}.key"))
}

/// Packs the hello example signed with `key` into `dir/out`; the package folder.
fn pack_hello(dir: &Path, out: &str, key: &str) -> String {
    let out = at(dir, out);
    ok(&run(dir, &["pack", "--module", &hello(), "--version", "1.0.0", "--key", key, &out]));
    out
}

#[test]
fn a_key_signs_a_package_packed_from_the_modules_section_and_it_installs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = run(dir, &["key", "generate", &at(dir, "alice"), "--json"]);
    let made = json(&out);
    assert_eq!(made["status"], "generated");
    let key_id = made["keyId"].as_str().unwrap().to_string();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("alice.key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the secret key is readable by its owner only");
    }
    // A second generate never overwrites the key.
    let before = std::fs::read(dir.join("alice.key")).unwrap();
    let again = run(dir, &["key", "generate", &at(dir, "alice")]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(stderr(&again).contains("never overwritten"), "{}", stderr(&again));
    assert_eq!(std::fs::read(dir.join("alice.key")).unwrap(), before);

    let package = at(dir, "hello-pkg");
    let out = run(
        dir,
        &["pack", "--module", &hello(), "--version", "1.2.3", "--key", &at(dir, "alice.key"), "--json", &package],
    );
    let packed = json(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!((packed["id"].as_str(), packed["version"].as_str()), (Some("hello"), Some("1.2.3")));
    assert_eq!(packed["intentsFrom"], "section");
    assert_eq!(packed["intents"], serde_json::json!(["greet"]));
    assert_eq!(packed["publisher"].as_str(), Some(key_id.as_str()));
    let manifest = std::fs::read_to_string(Path::new(&package).join("plugin.toml")).unwrap();
    assert!(manifest.contains("title = \"Greet someone\"") && manifest.contains("params = "), "{manifest}");

    // Signed: it installs without any flag, and says who signed it.
    let installed = run(dir, &["install", &package]);
    ok(&installed);
    assert!(text(&installed).contains(&format!("publisher: key {key_id}")), "{}", text(&installed));
    let out = run(dir, &["approve", "hello", "--yes"]);
    ok(&out);
    let called = run(dir, &["call", "hello", "greet", "--params", r#"{"name":"Ada"}"#]);
    ok(&called);
    assert!(text(&called).contains("Hello, Ada!"), "{}", text(&called));

    // Unsigned (a module without a section, intents from --intent): only with --allow-unsigned.
    let echo_pkg = at(dir, "echo-pkg");
    let out = run(
        dir,
        &["pack", "--module", &support::echo(), "--id", "echo", "--intent", "greet=Echoes its params", &echo_pkg],
    );
    ok(&out);
    assert!(text(&out).contains("unsigned"), "{}", text(&out));
    let refused = run(dir, &["install", &echo_pkg]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(stderr(&refused).contains("unsigned"), "{}", stderr(&refused));
    ok(&run(dir, &["install", &echo_pkg, "--allow-unsigned"]));
}

#[test]
fn minisign_verifies_tdm_signatures_and_tdm_signs_with_minisign_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // tdm's key and signature, verified by minisign.
    let alice = key(dir, "alice");
    let package = pack_hello(dir, "by-tdm", &alice);
    let verified = minisign(dir, &["-V", "-p", "alice.pub", "-m", &format!("{package}/plugin.toml")]);
    assert!(verified.status.success(), "{}", text(&verified));
    assert!(text(&verified).contains("file:plugin.toml\tid:hello\tversion:1.0.0"), "{}", text(&verified));

    // A key made by minisign signs through tdm pack; minisign verifies that signature too.
    let made = minisign(dir, &["-G", "-W", "-p", "k.pub", "-s", "k.key"]);
    assert!(made.status.success(), "{}", text(&made));
    let package = pack_hello(dir, "by-minisign-key", &at(dir, "k.key"));
    let verified = minisign(dir, &["-V", "-p", "k.pub", "-m", &format!("{package}/plugin.toml")]);
    assert!(verified.status.success(), "{}", text(&verified));
    let public_line = std::fs::read_to_string(dir.join("k.pub")).unwrap().lines().nth(1).unwrap().to_string();
    let manifest = std::fs::read_to_string(Path::new(&package).join("plugin.toml")).unwrap();
    assert!(manifest.contains(&format!("publisher = \"{public_line}\"")), "{manifest}");

    // Files signed by minisign (with its key, and with tdm's) verify with tdm's signing module.
    let file = dir.join("data.txt");
    std::fs::write(&file, "bytes minisign signed\n").unwrap();
    for (secret, public) in [("k.key", "k.pub"), ("alice.key", "alice.pub")] {
        let _ = std::fs::remove_file(dir.join("data.txt.minisig"));
        let signed = minisign(dir, &["-S", "-s", secret, "-m", "data.txt", "-t", "signed by minisign"]);
        assert!(signed.status.success(), "{secret}: {}", text(&signed));
        let signature = tdm_sdk::signing::Signature::read(&dir.join("data.txt.minisig")).unwrap();
        let key = tdm_sdk::signing::PublicKey::read(&dir.join(public)).unwrap();
        assert_eq!(key.verify(&std::fs::read(&file).unwrap(), &signature).unwrap(), "signed by minisign");
        assert!(key.verify(b"other bytes", &signature).is_err());
    }
    // Both of minisign's key files read back as the same key in tdm, and are written back alike.
    let secret = tdm_sdk::signing::SecretKey::read(&dir.join("k.key")).unwrap();
    let public = tdm_sdk::signing::PublicKey::read(&dir.join("k.pub")).unwrap();
    assert_eq!(secret.public(), &public);
    assert_eq!(tdm_sdk::signing::SecretKey::parse(&secret.file_text().unwrap()).unwrap().public(), &public);
    assert_eq!(tdm_sdk::signing::PublicKey::parse(&public.file_text()).unwrap(), public);
}

/// `tdm ARGS` must exit `code` with `needle` on stderr; its output.
fn refused(dir: &Path, args: &[&str], code: i32, needle: &str) -> Output {
    let out = run(dir, args);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", text(&out));
    assert!(stderr(&out).contains(needle), "{args:?}: {needle:?} not in {}", stderr(&out));
    out
}

#[test]
fn bad_input_to_pack_is_refused_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let alice = key(dir, "alice");
    let out = at(dir, "out");
    let module = hello();
    let pack = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = ["pack", "--module", &module].map(String::from).to_vec();
        args.extend(extra.iter().map(|a| a.to_string()));
        args.push(out.clone());
        args
    };
    let check = |extra: &[&str], code: i32, needle: &str| -> Output {
        let args = pack(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = refused(dir, &args, code, needle);
        assert!(!Path::new(&out).exists(), "{extra:?} wrote {out}");
        output
    };
    // Keys: truncated, a public key, another format.
    let text_key = std::fs::read_to_string(&alice).unwrap();
    std::fs::write(dir.join("cut.key"), &text_key[..text_key.len() / 2]).unwrap();
    check(&["--key", &at(dir, "cut.key")], 2, "not a minisign secret key");
    let public = check(&["--key", &at(dir, "alice.pub")], 2, "is a public key");
    assert!(stderr(&public).contains("alice.key"), "{}", stderr(&public));
    std::fs::write(dir.join("ssh.key"), "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n").unwrap();
    check(&["--key", &at(dir, "ssh.key")], 2, "not a minisign secret key");
    // Versions and intents.
    check(&["--version", "1.0"], 2, "is not a semver version");
    let disagree = check(
        &["--intent", "greet=Something else", "--intent", "wave"],
        2,
        "disagree with the module's tdm.intents section",
    );
    assert!(stderr(&disagree).contains("no intent `wave`") && stderr(&disagree).contains("describes `greet` as"));
    // Modules: not wasm, missing (with how to fix it).
    std::fs::write(dir.join("notes.wasm"), "not a module at all").unwrap();
    let notes = at(dir, "notes.wasm");
    refused(dir, &["pack", "--module", &notes, "--intent", "x", &out], 1, "not a WebAssembly module");
    let none = at(dir, "none.wasm");
    let missing = refused(dir, &["pack", "--module", &none, &out], 2, "none.wasm");
    assert!(stderr(&missing).contains("make examples"), "{}", stderr(&missing));
    // An output folder that holds something is left alone; --json prints the error object.
    std::fs::create_dir(&out).unwrap();
    std::fs::write(Path::new(&out).join("mine.txt"), "keep").unwrap();
    let args = pack(&["--json"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let error = refused(dir, &args, 2, "is not an empty folder");
    let error: Value = json(&error);
    assert_eq!((error["status"].as_str(), error["error"].as_str()), (Some("error"), Some("usage")));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    let leftovers: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("staging"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_hub_is_signed_by_its_key_and_installs_what_was_published() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (hub_key, alice) = (key(dir, "hub"), key(dir, "alice"));
    let hub = at(dir, "hub");
    let out = run(dir, &["hub", "init", &hub, "--key", &hub_key, "--json"]);
    ok(&out);
    assert_eq!(json(&out)["index"]["serial"], 1);
    let package = pack_hello(dir, "hello-pkg", &alice);
    let out = run(dir, &["hub", "publish", &hub, &package, "--key", &hub_key, "--json"]);
    ok(&out);
    let published = json(&out);
    assert_eq!((published["status"].as_str(), published["path"].as_str()), (Some("published"), Some("hello-1.0.0")));
    assert_eq!(published["index"]["serial"], 2);
    let verified = minisign(dir, &["-V", "-p", "hub.pub", "-m", &format!("{hub}/index.json")]);
    assert!(verified.status.success(), "minisign verifies the index: {}", text(&verified));
    // The same package again changes nothing.
    let again = run(dir, &["hub", "publish", &hub, &package, "--key", &hub_key, "--json"]);
    ok(&again);
    assert_eq!(json(&again)["status"], "unchanged");

    // Trusted by its key, the hub installs the package.
    ok(&run(dir, &["hub", "add", "mine", &hub, "--key", &at(dir, "hub.pub")]));
    let installed = run(dir, &["install", "hello", "--hub", "mine"]);
    ok(&installed);
    assert!(text(&installed).contains("installed hello@1.0.0"), "{}", text(&installed));
}

#[test]
fn a_hub_publish_that_must_not_happen_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (hub_key, alice, other) = (key(dir, "hub"), key(dir, "alice"), key(dir, "other"));
    let hub = at(dir, "hub");
    ok(&run(dir, &["hub", "init", &hub, "--key", &hub_key]));
    let before = tree::snapshot(Path::new(&hub));
    let unchanged = || {
        let mut now = tree::snapshot(Path::new(&hub));
        now.retain(|path, _| !path.to_string_lossy().contains(".lock"));
        assert_eq!(now, before, "the hub changed");
    };
    let package = pack_hello(dir, "signed", &alice);
    // The wrong hub key: its index's signature is not that key's.
    refused(dir, &["hub", "publish", &hub, &package, "--key", &other], 1, "does not verify with the hub key given");
    unchanged();
    // An unsigned package.
    let unsigned = at(dir, "unsigned");
    ok(&run(dir, &["pack", "--module", &hello(), "--version", "2.0.0", &unsigned]));
    refused(dir, &["hub", "publish", &hub, &unsigned, "--key", &hub_key], 1, "is not signed");
    unchanged();
    // A package whose plugin.toml had one bit flipped after it was signed.
    let altered = pack_hello(dir, "altered", &alice);
    let manifest = Path::new(&altered).join("plugin.toml");
    let mut bytes = std::fs::read(&manifest).unwrap();
    let at_name = bytes.windows(14).position(|w| w == b"name = \"hello\"").unwrap();
    bytes[at_name + 8] ^= 0x20; // `hello` becomes `Hello`
    std::fs::write(&manifest, bytes).unwrap();
    let out = refused(dir, &["hub", "publish", &hub, &altered, "--key", &hub_key], 1, "altered");
    assert!(stderr(&out).contains("signed"), "{}", stderr(&out));
    unchanged();
    // A public key given as the hub key.
    refused(dir, &["hub", "publish", &hub, &package, "--key", &at(dir, "hub.pub")], 2, "is a public key");
    unchanged();
}
