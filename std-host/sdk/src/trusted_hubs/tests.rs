//! Trusted hubs: an index is accepted only signed by the hub's key, fresh, and never older
//! than one seen; each refusal leaves the workspace's record as it was.

use super::*;
use crate::hub::{HubEntry, HubIndex, Price};
use crate::signing::SecretKey;

/// Writes `dir/index.json` (format 2, `serial`, `expires`) signed by `key`.
fn publish(dir: &Path, key: &SecretKey, serial: u64, expires: &str, plugins: Vec<HubEntry>) -> Vec<u8> {
    let index = HubIndex { version: Some(2), serial: Some(serial), expires: Some(expires.into()), plugins };
    let bytes = serde_json::to_vec_pretty(&index).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(HUB_INDEX), &bytes).unwrap();
    std::fs::write(dir.join(HUB_INDEX_SIGNATURE), key.sign(&bytes, "hub index").unwrap()).unwrap();
    bytes
}

fn entry(version: &str) -> HubEntry {
    HubEntry {
        id: "p".into(),
        version: version.into(),
        sha256: "0".repeat(64),
        price: Price::Free("free".into()),
        path: format!("p-{version}"),
        publisher: None,
        manifest_sha256: None,
    }
}

fn refusal(result: Result<OpenedHub, HubError>) -> HubRefusal {
    match result {
        Err(HubError::Refused(r)) => r,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

const LATER: &str = "2999-01-01T00:00:00Z";

#[test]
fn a_signed_fresh_index_opens_and_raises_the_floor() {
    let tmp = tempfile::tempdir().unwrap();
    let (hub, ws) = (tmp.path().join("hub"), Workspace::open(tmp.path().join("ws")).unwrap());
    let key = SecretKey::generate().unwrap();
    publish(&hub, &key, 1, LATER, vec![entry("1.0.0")]);
    add(&ws, "main", hub.to_str().unwrap(), key.public(), 30).unwrap();
    publish(&hub, &key, 2, LATER, vec![entry("1.0.0"), entry("1.1.0")]);
    let opened = open(&ws, "main", false).unwrap();
    assert_eq!(opened.hub.entries.len(), 2);
    assert_eq!(opened.signer, Some(key.public().id()));
    assert_eq!(ws.read_state().unwrap().hubs["main"].serial, 2);
    // The highest semver version, and requirements.
    assert_eq!(opened.hub.find("p", None).unwrap().version, "1.1.0");
    assert_eq!(opened.hub.find("p", Some("~1.0")).unwrap().version, "1.0.0");
    assert!(opened.hub.find("p", Some("^2")).is_err());
}

#[test]
fn rollback_fork_expiry_and_foreign_signatures_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (hub, ws) = (tmp.path().join("hub"), Workspace::open(tmp.path().join("ws")).unwrap());
    let key = SecretKey::generate().unwrap();
    let publisher = SecretKey::generate().unwrap();
    let old = publish(&hub, &key, 1, LATER, vec![entry("1.0.0")]);
    let old_signature = std::fs::read(hub.join(HUB_INDEX_SIGNATURE)).unwrap();
    add(&ws, "main", hub.to_str().unwrap(), key.public(), 30).unwrap();
    publish(&hub, &key, 2, LATER, vec![entry("1.1.0")]);
    open(&ws, "main", false).unwrap();
    // Rollback: the older signed index served again.
    std::fs::write(hub.join(HUB_INDEX), &old).unwrap();
    std::fs::write(hub.join(HUB_INDEX_SIGNATURE), &old_signature).unwrap();
    assert!(matches!(refusal(open(&ws, "main", false)), HubRefusal::Rollback { served: 1, seen: 2, .. }));
    // Another index of serial 2.
    publish(&hub, &key, 2, LATER, vec![entry("9.9.9")]);
    assert!(matches!(refusal(open(&ws, "main", false)), HubRefusal::Forked { serial: 2, .. }));
    // Expired.
    publish(&hub, &key, 3, "2001-01-01T00:00:00Z", vec![]);
    assert!(matches!(refusal(open(&ws, "main", false)), HubRefusal::Expired { .. }));
    // Signed by a publisher's key instead of the hub's.
    publish(&hub, &publisher, 4, LATER, vec![]);
    let why = refusal(open(&ws, "main", false));
    assert!(matches!(why, HubRefusal::Signature(_, SigningError::UnknownKey { .. })), "{why:?}");
    // A flipped bit in the index.
    let mut bytes = publish(&hub, &key, 5, LATER, vec![entry("2.0.0")]);
    bytes[20] ^= 1;
    std::fs::write(hub.join(HUB_INDEX), &bytes).unwrap();
    assert!(matches!(refusal(open(&ws, "main", false)), HubRefusal::Signature(_, SigningError::Mismatch)));
    // Signed, with a serial and an expiry, but saying it is format 1.
    let old_format = br#"{"version": 1, "serial": 9, "expires": "2999-01-01T00:00:00Z", "plugins": []}"#;
    std::fs::write(hub.join(HUB_INDEX), old_format).unwrap();
    std::fs::write(hub.join(HUB_INDEX_SIGNATURE), key.sign(old_format, "index").unwrap()).unwrap();
    assert!(matches!(refusal(open(&ws, "main", false)), HubRefusal::Format(_)));
    // Unsigned.
    std::fs::remove_file(hub.join(HUB_INDEX_SIGNATURE)).unwrap();
    assert!(matches!(refusal(open(&ws, "main", false)), HubRefusal::Unsigned(_)));
    // Every refusal left the floor where the last good index put it.
    assert_eq!(ws.read_state().unwrap().hubs["main"].serial, 2);
    // A location not trusted is refused unless unverified reads are allowed.
    assert!(matches!(refusal(open(&ws, hub.to_str().unwrap(), false)), HubRefusal::NotTrusted(_)));
}

#[test]
fn a_hub_whose_index_does_not_verify_is_never_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let (hub, ws) = (tmp.path().join("hub"), Workspace::open(tmp.path().join("ws")).unwrap());
    let key = SecretKey::generate().unwrap();
    let other = SecretKey::generate().unwrap();
    publish(&hub, &other, 1, LATER, vec![]);
    assert!(add(&ws, "main", hub.to_str().unwrap(), key.public(), 30).is_err());
    assert!(ws.read_state().unwrap().hubs.is_empty());
    publish(&hub, &key, 1, LATER, vec![]);
    add(&ws, "main", hub.to_str().unwrap(), key.public(), 30).unwrap();
    assert!(add(&ws, "main", hub.to_str().unwrap(), key.public(), 30).is_err(), "a name is trusted once");
    remove(&ws, "main").unwrap();
    assert!(remove(&ws, "main").is_err());
}
