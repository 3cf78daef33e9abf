//! The signing module's checks: round trips, and every altered or foreign input refused.

use super::*;

#[test]
fn a_signature_verifies_with_its_key_and_names_its_comment() {
    let key = SecretKey::generate().unwrap();
    let signature = key.sign(b"manifest bytes", "file:plugin.toml\nsecond line").unwrap();
    let comment = key.public().verify(b"manifest bytes", &signature).unwrap();
    assert_eq!(comment, "file:plugin.toml second line");
    // Key files round-trip.
    let again = SecretKey::parse(&key.file_text().unwrap()).unwrap();
    assert_eq!(again.public(), key.public());
    let public = PublicKey::parse(&key.public().file_text()).unwrap();
    assert_eq!(&public, key.public());
    assert_eq!(PublicKey::parse(&key.public().base64()).unwrap(), public);
    assert_eq!(public.id().len(), 16);
}

#[test]
fn altered_bytes_signatures_and_foreign_keys_are_refused() {
    let key = SecretKey::generate().unwrap();
    let other = SecretKey::generate().unwrap();
    let data = b"the signed bytes".to_vec();
    let signature = key.sign(&data, "timestamp:1").unwrap();
    let mut flipped = data.clone();
    flipped[3] ^= 1;
    assert_eq!(key.public().verify(&flipped, &signature), Err(SigningError::Mismatch));
    assert!(matches!(other.public().verify(&data, &signature), Err(SigningError::UnknownKey { .. })));
    // Every bit of the signature's text flipped, one at a time: refused, never a panic.
    let bytes = signature.as_bytes();
    for i in 0..bytes.len() {
        for bit in [0x01u8, 0x20] {
            let mut changed = bytes.to_vec();
            changed[i] ^= bit;
            let Ok(text) = String::from_utf8(changed) else { continue };
            if text.trim_end() == signature.trim_end() {
                continue;
            }
            if let Ok(comment) = key.public().verify(&data, &text) {
                // Only whitespace the format trims may change and still verify.
                assert_eq!(comment, "timestamp:1", "{i}");
            }
        }
    }
    // A changed trusted comment is refused.
    let forged = signature.replace("trusted comment: timestamp:1", "trusted comment: timestamp:2");
    assert_eq!(key.public().verify(&data, &forged), Err(SigningError::Mismatch));
}

#[test]
fn truncated_and_malformed_keys_are_refused_with_a_reason() {
    let key = SecretKey::generate().unwrap();
    let secret = key.file_text().unwrap();
    let public = key.public().file_text();
    for cut in [0, 10, secret.len() / 2, secret.len() - 5] {
        assert!(SecretKey::parse(&secret[..cut]).is_err(), "{cut}");
    }
    for cut in [0, 10, public.len() / 2, public.len() - 5] {
        assert!(PublicKey::parse(&public[..cut]).is_err(), "{cut}");
    }
    // A secret key given where a public key is expected, and the other way round.
    assert!(matches!(PublicKey::parse(&secret), Err(SigningError::PublicKeyFormat(_))));
    assert!(SecretKey::parse(&public).is_err());
    assert!(matches!(Signature::parse("untrusted comment: x\nAAAA\n"), Err(SigningError::SignatureFormat(_))));
}

#[test]
fn an_encrypted_secret_key_is_refused_without_deriving_its_password() {
    let pair = minisign::KeyPair::generate_encrypted_keypair(Some("pw".into())).unwrap();
    let text = pair.sk.to_box(None).unwrap().into_string();
    assert_eq!(SecretKey::parse(&text).unwrap_err(), SigningError::EncryptedKey);
}

#[test]
fn a_short_comment_signature_is_refused_not_a_panic() {
    // Found by the minisign fuzz target's seeds: the minisign crate slices this as 64 bytes.
    let key = SecretKey::generate().unwrap();
    let signature = key.sign(b"bytes", "c").unwrap();
    let mut lines: Vec<&str> = signature.lines().collect();
    lines[3] = "AAAA";
    let short = lines.join("\n");
    assert!(matches!(key.public().verify(b"bytes", &short), Err(SigningError::SignatureFormat(_))));
}
