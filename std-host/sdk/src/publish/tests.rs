//! The publisher's side checked end to end in temporary folders: keys, dates, packages that
//! read back as valid (and signed) packages, hubs whose index is re-signed only by its own key,
//! and every bad input refused with nothing left behind.

use super::hub::{hub_init_at, hub_publish_at};
use super::*;
use crate::hub::{HubIndex, HUB_INDEX, HUB_INDEX_SIGNATURE};
use crate::package::{Package, MANIFEST};
use crate::signing::Signature;
use std::path::Path;

/// A plugin answering `{"status":"completed","output":{"ok":true}}`, with `extra` inside the
/// module (a custom section).
fn plugin_wat(extra: &str) -> String {
    format!(
        r#"(module (memory (export "memory") 1)
    (data (i32.const 256) "\2b\00\00\00{{\"status\":\"completed\",\"output\":{{\"ok\":true}}}}")
    (func (export "tdm_alloc") (param i32) (result i32) i32.const 4096)
    (func (export "tdm_free") (param i32 i32))
    (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 256)
    {extra})"#
    )
}

/// A `tdm.intents` custom section holding `json` (every byte escaped for WAT).
fn section(json: &str) -> String {
    let escaped: String = json.bytes().map(|b| format!("\\{b:02x}")).collect();
    format!(r#"(@custom "tdm.intents" "{escaped}")"#)
}

/// The section [`sectioned`] writes: quotes, a line break and a `null` in a schema.
const SECTION: &str = r#"[{"name":"greet","title":"Greet","description":"Says \"hi\"\nto NAME.","params":{"type":"object","properties":{"name":{"type":"string"},"nothing":{"const":null}},"required":["name"]},"result":{"type":"object"}},{"name":"wave"}]"#;

/// `dir/greeter.wasm`, a binary module with [`SECTION`].
fn sectioned(dir: &Path) -> PathBuf {
    let path = dir.join("greeter.wasm");
    std::fs::write(&path, wat::parse_str(plugin_wat(&section(SECTION))).unwrap()).unwrap();
    path
}

/// `dir/plain.wat`, a text module declaring nothing.
fn plain(dir: &Path) -> PathBuf {
    let path = dir.join("plain.wat");
    std::fs::write(&path, plugin_wat("")).unwrap();
    path
}

/// A key pair `dir/NAME.key`, `dir/NAME.pub`.
fn key(dir: &Path, name: &str) -> PathBuf {
    generate_key(&dir.join(name)).unwrap().secret
}

/// The names in `dir`.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn dates_are_utc_and_read_strictly() {
    assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
    assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(format_utc(1_709_251_199), "2024-02-29T23:59:59Z");
    assert_eq!(format_utc(4_107_542_400), "2100-03-01T00:00:00Z");
    let last = 253_402_300_799; // 9999-12-31T23:59:59Z
    assert_eq!(format_utc(last), "9999-12-31T23:59:59Z");
    assert_eq!(parse_utc("9999-12-31T23:59:59Z"), Some(last));
    let mut secs = 0u64;
    while secs <= last {
        assert_eq!(parse_utc(&format_utc(secs)), Some(secs), "{secs}");
        secs += 7_777_777 + secs / 1_000;
    }
    for bad in [
        "2023-02-29T00:00:00Z",
        "2100-02-29T00:00:00Z",
        "1969-12-31T23:59:59Z",
        "2024-13-01T00:00:00Z",
        "2024-00-01T00:00:00Z",
        "2024-04-31T00:00:00Z",
        "2024-01-00T00:00:00Z",
        "2024-01-01T24:00:00Z",
        "2024-01-01T00:60:00Z",
        "2024-01-01T00:00:60Z",
        "2024-01-01 00:00:00Z",
        "2024-01-01t00:00:00z",
        "2024-01-01T00:00:00",
        "2024-01-01T00:00:00+00:00",
        "2024-1-01T00:00:00Z",
        "+024-01-01T00:00:00Z",
        "2024-01-01T00:00:00Z ",
        "",
    ] {
        assert_eq!(parse_utc(bad), None, "{bad}");
    }
    assert_eq!(parse_utc("2000-02-29T00:00:00Z"), Some(951_782_400));
}

#[test]
fn a_generated_key_is_private_never_overwritten_and_signs() {
    let tmp = tempfile::tempdir().unwrap();
    let made = generate_key(&tmp.path().join("alice")).unwrap();
    assert_eq!(made.secret, tmp.path().join("alice.key"));
    assert_eq!(made.public, tmp.path().join("alice.pub"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&made.secret).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let secret = read_secret_key(&made.secret).unwrap();
    let public = PublicKey::read(&made.public).unwrap();
    assert_eq!(secret.public(), &public);
    assert_eq!((public.id(), public.base64()), (made.key_id.clone(), made.public_key.clone()));
    let before = std::fs::read(&made.secret).unwrap();
    for again in ["alice", "alice.key", "alice.pub"] {
        let error = generate_key(&tmp.path().join(again)).unwrap_err();
        assert!(matches!(error, PublishError::KeyExists(_)), "{error}");
    }
    assert_eq!(std::fs::read(&made.secret).unwrap(), before, "the key was overwritten");
    // Only the .pub there: refused too, and no .key is left.
    std::fs::write(tmp.path().join("bob.pub"), "x").unwrap();
    assert!(matches!(generate_key(&tmp.path().join("bob")), Err(PublishError::KeyExists(_))));
    assert!(!tmp.path().join("bob.key").exists());
}

#[test]
fn keys_given_wrong_are_refused_by_what_they_are() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = key(tmp.path(), "k");
    let error = read_secret_key(&tmp.path().join("k.pub")).unwrap_err();
    assert!(matches!(error, PublishError::PublicKeyGiven(_)), "{error}");
    assert!(error.hint().unwrap().contains("k.key"), "{:?}", error.hint());
    let text = std::fs::read_to_string(&secret).unwrap();
    let truncated = write(tmp.path(), "cut.key", &text[..text.len() / 2]);
    assert!(matches!(read_secret_key(&truncated), Err(PublishError::Key { .. })));
    let wrong = write(tmp.path(), "wrong.key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n");
    let error = read_secret_key(&wrong).unwrap_err();
    assert!(
        matches!(error, PublishError::Key { .. }) && error.to_string().contains("not a minisign secret key"),
        "{error}"
    );
    let missing = read_secret_key(&tmp.path().join("none.key")).unwrap_err();
    assert!(missing.hint().unwrap().contains("tdm key generate"), "{missing}");
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_module_with_a_section_packs_its_intents_schemas_and_assets_signed() {
    let tmp = tempfile::tempdir().unwrap();
    let module = sectioned(tmp.path());
    let secret = key(tmp.path(), "pub");
    std::fs::create_dir_all(tmp.path().join("data/deep")).unwrap();
    std::fs::write(tmp.path().join("data/deep/a.json"), "{\"a\":1}").unwrap();
    std::fs::write(tmp.path().join("readme.txt"), "hello").unwrap();
    let out = tmp.path().join("out/greeter-1.2.0");
    let mut options = PackOptions::new(&module, &out);
    options.version = Some("1.2.0".into());
    options.description = Some("A \"quoted\"\ndescription with ''' and \\ in it".into());
    options.permissions = vec!["context:read".into(), "context:read".into()];
    options.intents = vec![IntentFlag::parse("wave"), IntentFlag::parse("greet=Says \"hi\"\nto NAME.")];
    options.assets = vec![tmp.path().join("data"), tmp.path().join("readme.txt")];
    options.key = Some(secret.clone());
    let report = pack(&options).unwrap();
    assert_eq!((report.id.as_str(), report.version.as_str(), report.name.as_str()), ("greeter", "1.2.0", "greeter"));
    assert_eq!(report.intents_from, IntentSource::Section);
    assert_eq!(report.intents, ["greet", "wave"]);
    assert_eq!(report.files.keys().collect::<Vec<_>>(), ["dist/data/deep/a.json", "dist/readme.txt"]);

    let package = Package::read(&out).unwrap();
    let manifest = &package.manifest;
    assert_eq!(manifest.module, "dist/greeter.wasm");
    assert_eq!(manifest.description, options.description.clone().unwrap());
    assert_eq!(manifest.permissions, ["context:read"]);
    assert_eq!(manifest.files, report.files);
    assert_eq!(manifest.files["dist/readme.txt"], sha256_hex(b"hello"));
    let expected = crate::declared::parse_section(SECTION.as_bytes()).unwrap();
    assert_eq!(manifest.intents, expected, "titles and schemas (a null in one) round-trip");
    // Signed: the publisher key, and the signature over the exact bytes, with its comment.
    let public = read_secret_key(&secret).unwrap().public().clone();
    assert_eq!(manifest.publisher.as_deref(), Some(public.base64().as_str()));
    let signature = Signature::read(&out.join("plugin.toml.minisig")).unwrap();
    let comment = public.verify(package.files.manifest_text.as_bytes(), &signature).unwrap();
    assert!(comment.starts_with("timestamp:") && comment.ends_with("\tfile:plugin.toml\tid:greeter\tversion:1.2.0"));
    assert_eq!(report.manifest_sha256, sha256_hex(package.files.manifest_text.as_bytes()));
    assert_eq!(names(&tmp.path().join("out")), ["greeter-1.2.0"], "no staging folder is left");
}

#[test]
fn a_module_without_a_section_takes_its_intents_from_the_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let module = plain(tmp.path());
    let out = tmp.path().join("pkg");
    std::fs::create_dir(&out).unwrap();
    let mut options = PackOptions::new(&module, &out);
    options.id = Some("plain.tool".into());
    options.name = Some("Plain tool".into());
    options.intents = vec![IntentFlag::parse("ping=Answers = ok"), IntentFlag::parse("pong")];
    let report = pack(&options).unwrap();
    assert_eq!(
        (report.intents_from, report.key_id.clone(), report.signature.clone()),
        (IntentSource::Flags, None, None)
    );
    let package = Package::read(&out).unwrap();
    assert_eq!(package.manifest.module, "dist/plain.wat", "text stays text");
    assert_eq!(package.manifest.version, DEFAULT_VERSION);
    assert_eq!(package.manifest.intents[0], crate::declared::IntentInfo::named("ping", "Answers = ok"));
    assert_eq!(package.manifest.publisher, None);
    assert!(!out.join("plugin.toml.minisig").exists());
}

/// Packs with `change` applied to options for `dir/plain.wat` with one intent; the error.
fn refused(dir: &Path, change: impl FnOnce(&mut PackOptions)) -> PublishError {
    let mut options = PackOptions::new(plain(dir), dir.join("out"));
    options.intents = vec![IntentFlag::parse("ping")];
    change(&mut options);
    let error = pack(&options).expect_err("packed");
    let left: Vec<String> = names(dir).into_iter().filter(|n| n.contains("staging")).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    error
}

#[test]
fn bad_input_is_refused_and_nothing_is_left_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let secret = key(dir, "k");
    let text = std::fs::read_to_string(&secret).unwrap();
    let truncated = write(dir, "cut.key", &text[..text.len() - 20]);

    let error = refused(dir, |o| o.version = Some("1.0".into()));
    assert!(error.to_string().starts_with("--version: `1.0` is not a semver version"), "{error}");
    let error = refused(dir, |o| o.version = Some("1.0.0+build.5".into()));
    assert!(error.to_string().contains("build metadata"), "{error}");
    let error = refused(dir, |o| o.id = Some("no/slash".into()));
    assert!(error.to_string().starts_with("--id: "), "{error}");
    let error = refused(dir, |o| o.permissions = vec!["network".into()]);
    assert!(error.to_string().starts_with("--permission: "), "{error}");
    assert!(matches!(refused(dir, |o| o.key = Some(dir.join("k.pub"))), PublishError::PublicKeyGiven(_)));
    assert!(matches!(refused(dir, |o| o.key = Some(truncated.clone())), PublishError::Key { .. }));
    assert!(matches!(refused(dir, |o| o.intents.clear()), PublishError::NoIntents(_)));
    let error = refused(dir, |o| o.intents.push(IntentFlag::parse("ping")));
    assert!(error.to_string().contains("listed twice"), "{error}");

    // A module that is not wasm, and text named .wasm.
    let junk = write(dir, "junk.wasm", "this is not a module");
    let error = refused(dir, |o| o.module = junk.clone());
    assert!(matches!(&error, PublishError::Module { why, .. } if why.contains("not a WebAssembly module")), "{error}");
    let text_named_wasm = write(dir, "text.wasm", &plugin_wat(""));
    let error = refused(dir, |o| o.module = text_named_wasm.clone());
    assert!(error.to_string().contains("name it .wat"), "{error}");
    let command = write(dir, "cmd.wat", r#"(module (memory (export "memory") 1) (func (export "_start")))"#);
    let error = refused(dir, |o| o.module = command.clone());
    assert!(error.to_string().contains("WASI command"), "{error}");
    let missing = refused(dir, |o| o.module = dir.join("nothing.wasm"));
    assert!(matches!(missing, PublishError::File(FileError::NotFound { .. })), "{missing}");

    // The flags disagree with the module's section, each difference named.
    let module = sectioned(dir);
    let error = refused(dir, |o| {
        o.module = module.clone();
        o.intents = vec![IntentFlag::parse("greet=Other words"), IntentFlag::parse("shout")];
    });
    let message = error.to_string();
    assert!(matches!(error, PublishError::IntentsDisagree(_)), "{message}");
    for part in ["no intent `shout`", "describes `greet` as", "also declares `wave`"] {
        assert!(message.contains(part), "{part} in {message}");
    }

    // Assets: missing, colliding with the module, a symlink inside a folder.
    assert!(matches!(refused(dir, |o| o.assets = vec![dir.join("none")]), PublishError::File(_)));
    let error = refused(dir, |o| o.assets = vec![dir.join("plain.wat")]);
    assert!(error.to_string().contains("already is"), "{error}");
    #[cfg(unix)]
    {
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        std::os::unix::fs::symlink(&secret, dir.join("assets/link")).unwrap();
        let error = refused(dir, |o| o.assets = vec![dir.join("assets")]);
        assert!(error.to_string().contains("symbolic link"), "{error}");
    }

    // An output folder that holds something is left as it was.
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(dir.join("out/keep.txt"), "mine").unwrap();
    assert!(matches!(refused(dir, |_| {}), PublishError::NotEmpty(_)));
    assert_eq!(names(&dir.join("out")), ["keep.txt"]);
}

/// A signed package of `plain.wat` (id `tool`, `version`) in `dir/NAME`, signed with `key`.
fn signed_package(dir: &Path, name: &str, version: &str, key: &Path) -> PathBuf {
    let module = plain(dir);
    std::fs::write(dir.join("asset.txt"), "an asset").unwrap();
    let mut options = PackOptions::new(module, dir.join(name));
    options.id = Some("tool".into());
    options.version = Some(version.into());
    options.intents = vec![IntentFlag::parse("ping")];
    options.assets = vec![dir.join("asset.txt")];
    options.key = Some(key.to_path_buf());
    pack(&options).unwrap().dir
}

fn read_index(hub: &Path) -> HubIndex {
    serde_json::from_slice(&std::fs::read(hub.join(HUB_INDEX)).unwrap()).unwrap()
}

/// Whether the hub's index verifies with `key`'s public half.
fn verifies(hub: &Path, key: &Path) -> bool {
    let signature = Signature::read(&hub.join(HUB_INDEX_SIGNATURE)).unwrap();
    let public = read_secret_key(key).unwrap().public().clone();
    public.verify(&std::fs::read(hub.join(HUB_INDEX)).unwrap(), &signature).is_ok()
}

const T0: u64 = 1_767_225_600; // 2026-01-01T00:00:00Z

#[test]
fn a_hub_is_made_signed_and_publishing_raises_its_serial() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (hub_key, author) = (key(dir, "hub"), key(dir, "author"));
    let hub = dir.join("hub");
    let made = hub_init_at(&hub, &hub_key, DEFAULT_EXPIRES_DAYS, T0).unwrap();
    assert_eq!((made.serial, made.expires.as_str(), made.plugins), (1, "2027-01-01T00:00:00Z", 0));
    assert_eq!(names(&hub), [HUB_INDEX, HUB_INDEX_SIGNATURE]);
    let index = read_index(&hub);
    assert_eq!((index.version, index.serial, index.plugins.len()), (Some(2), Some(1), 0));
    assert!(verifies(&hub, &hub_key));
    assert!(crate::hub::Hub::open(&hub).is_ok());
    assert!(matches!(hub_init_at(&hub, &hub_key, 30, T0), Err(PublishError::NotEmpty(_))));

    let package = signed_package(dir, "pkg", "1.0.0", &author);
    let published = hub_publish_at(&hub, &package, &hub_key, 30, T0 + 86_400).unwrap();
    assert_eq!((published.serial, published.expires.as_str(), published.unchanged), (2, "2026-02-01T00:00:00Z", false));
    let entry = published.published.clone().unwrap();
    let manifest_text = std::fs::read(package.join(MANIFEST)).unwrap();
    assert_eq!(entry.path, "tool-1.0.0");
    assert_eq!(entry.manifest_sha256, Some(sha256_hex(&manifest_text)));
    assert_eq!(entry.publisher.as_deref(), Some(read_secret_key(&author).unwrap().public().base64().as_str()));
    assert_eq!(entry.price, crate::hub::Price::Free("free".into()));
    assert_eq!(read_index(&hub).plugins, std::slice::from_ref(&entry));
    assert!(verifies(&hub, &hub_key));
    assert_eq!(names(&hub.join("tool-1.0.0")), ["dist", "plugin.toml", "plugin.toml.minisig"]);
    let listed = crate::hub::Hub::open(&hub).unwrap();
    let read = listed.package(listed.find("tool", Some("1.0.0")).unwrap()).unwrap();
    assert_eq!(read.sha256, entry.sha256);

    // The same package again changes nothing; another under the same version is refused.
    let again = hub_publish_at(&hub, &package, &hub_key, 30, T0 + 2 * 86_400).unwrap();
    assert!(again.unchanged && again.serial == 2, "{again:?}");
    let other = signed_package(dir, "other", "1.0.0", &key(dir, "someone"));
    let error = hub_publish_at(&hub, &other, &hub_key, 30, T0).unwrap_err();
    assert!(matches!(error, PublishError::AlreadyPublished { .. }), "{error}");
    let newer = signed_package(dir, "newer", "1.1.0", &author);
    assert_eq!(hub_publish_at(&hub, &newer, &hub_key, 30, T0).unwrap().serial, 3);
    assert_eq!(read_index(&hub).plugins.len(), 2);
    let left: Vec<String> = names(&hub).into_iter().filter(|n| n.contains("tmp") || n.contains("staging")).collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_publish_that_must_not_happen_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (hub_key, author) = (key(dir, "hub"), key(dir, "author"));
    let hub = dir.join("hub");
    hub_init_at(&hub, &hub_key, 10, T0).unwrap();
    let index_before = std::fs::read(hub.join(HUB_INDEX)).unwrap();
    let unchanged = |hub: &Path| {
        assert_eq!(std::fs::read(hub.join(HUB_INDEX)).unwrap(), index_before);
        let mut left = names(hub);
        left.retain(|n| !n.starts_with(".tdm-hub.lock"));
        assert_eq!(left, [HUB_INDEX, HUB_INDEX_SIGNATURE]);
    };
    let package = signed_package(dir, "pkg", "1.0.0", &author);

    // The wrong hub key: the index's signature does not verify with it.
    let error = hub_publish_at(&hub, &package, &key(dir, "intruder"), 10, T0).unwrap_err();
    assert!(
        matches!(error, PublishError::HubSignature { error: Some(SigningError::UnknownKey { .. }), .. }),
        "{error}"
    );
    unchanged(&hub);

    // Unsigned: no publisher.
    let mut options = PackOptions::new(plain(dir), dir.join("unsigned"));
    options.intents = vec![IntentFlag::parse("ping")];
    pack(&options).unwrap();
    let error = hub_publish_at(&hub, &dir.join("unsigned"), &hub_key, 10, T0).unwrap_err();
    assert!(matches!(error, PublishError::Unsigned { .. }), "{error}");
    unchanged(&hub);

    // Signed, then its signature removed.
    let stripped = signed_package(dir, "stripped", "1.0.0", &author);
    std::fs::remove_file(stripped.join("plugin.toml.minisig")).unwrap();
    let error = hub_publish_at(&hub, &stripped, &hub_key, 10, T0).unwrap_err();
    assert!(matches!(error, PublishError::Package(PackageError::Signature(_))), "{error}");
    assert!(error.hint().unwrap().contains("changed after it was signed"), "{error}");
    unchanged(&hub);

    // One bit of plugin.toml flipped after signing (`tool` becomes `tOol` in the name).
    let altered = signed_package(dir, "altered", "1.0.0", &author);
    let text = std::fs::read_to_string(altered.join(MANIFEST)).unwrap();
    std::fs::write(altered.join(MANIFEST), text.replacen("name = \"tool\"", "name = \"tOol\"", 1)).unwrap();
    let error = hub_publish_at(&hub, &altered, &hub_key, 10, T0).unwrap_err();
    assert!(
        matches!(&error, PublishError::Package(PackageError::Signature(why)) if why.to_string().contains("altered")),
        "{error}"
    );
    unchanged(&hub);

    // An asset changed, and a file added, after signing.
    let changed = signed_package(dir, "changed", "1.0.0", &author);
    std::fs::write(changed.join("dist/asset.txt"), "another asset").unwrap();
    std::fs::write(changed.join("dist/extra.txt"), "unlisted").unwrap();
    let error = hub_publish_at(&hub, &changed, &hub_key, 10, T0).unwrap_err();
    assert!(
        matches!(&error, PublishError::Copy(CopyError::Unlisted { file, .. }) if file == "dist/extra.txt"),
        "{error}"
    );
    std::fs::remove_file(changed.join("dist/extra.txt")).unwrap();
    let error = hub_publish_at(&hub, &changed, &hub_key, 10, T0).unwrap_err();
    assert!(
        matches!(&error, PublishError::Copy(CopyError::Unlisted { file, .. }) if file == "dist/asset.txt"),
        "{error}"
    );
    unchanged(&hub);

    // An index altered after signing, and one with no signature.
    let mut tampered = index_before.clone();
    tampered.insert(1, b' ');
    std::fs::write(hub.join(HUB_INDEX), &tampered).unwrap();
    let error = hub_publish_at(&hub, &package, &hub_key, 10, T0).unwrap_err();
    assert!(matches!(error, PublishError::HubSignature { error: Some(SigningError::Mismatch), .. }), "{error}");
    std::fs::write(hub.join(HUB_INDEX), &index_before).unwrap();
    std::fs::remove_file(hub.join(HUB_INDEX_SIGNATURE)).unwrap();
    let error = hub_publish_at(&hub, &package, &hub_key, 10, T0).unwrap_err();
    assert!(matches!(error, PublishError::HubSignature { error: None, .. }), "{error}");

    // No hub there; a number of days out of range.
    let error = hub_publish_at(&dir.join("nohub"), &package, &hub_key, 10, T0).unwrap_err();
    assert!(matches!(error, PublishError::NoHub(_)) && error.hint().unwrap().contains("tdm hub init"), "{error}");
    assert!(matches!(hub_init_at(&dir.join("h2"), &hub_key, 0, T0), Err(PublishError::Invalid { .. })));
    assert!(!dir.join("h2").exists());
}
