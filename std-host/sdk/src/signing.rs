//! Signatures in minisign's format: keypairs (`NAME.key`, `NAME.pub`), detached signatures
//! (`FILE.minisig`) and their checks, through the `minisign` crate so that Debian's `minisign`
//! tool and `tdm` verify each other's. Only pre-hashed signatures (what minisign writes since
//! 0.8) with a trusted comment are accepted; secret keys are read unencrypted (`minisign -G -W`).

use crate::files::{self, FileError};
use std::fmt;
use std::io::Cursor;
use std::path::Path;

/// The most bytes a key file may have (a minisign key file is under 300).
pub const MAX_KEY_BYTES: u64 = 4 * 1024;
/// The most bytes a `.minisig` file may have (its trusted comment is the only part that grows).
pub const MAX_SIGNATURE_BYTES: u64 = 16 * 1024;
/// The suffix of a detached signature: the signed file's name plus this.
pub const SIGNATURE_SUFFIX: &str = ".minisig";

/// Why a key or signature was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigningError {
    /// A key or signature file could not be read (missing, not a regular file, too large).
    File(FileError),
    /// A public key is not in minisign's format (a `.pub` file or its base64 line).
    PublicKeyFormat(String),
    /// A secret key is not in minisign's format, or is corrupted.
    SecretKeyFormat(String),
    /// The secret key is encrypted with a password (tdm signs unattended).
    EncryptedKey,
    /// A signature is not in minisign's format.
    SignatureFormat(String),
    /// The signature was made by another key than the one trusted.
    UnknownKey {
        /// The key id the signature names.
        signed_by: String,
        /// The key id trusted.
        trusted: String,
    },
    /// The signature does not match the bytes (or its trusted comment was altered).
    Mismatch,
    /// Signing failed (the key pair does not agree with itself, or the OS gave no entropy).
    Sign(String),
}

impl fmt::Display for SigningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => e.fmt(f),
            Self::PublicKeyFormat(why) => write!(f, "not a minisign public key: {why}"),
            Self::SecretKeyFormat(why) => write!(f, "not a minisign secret key: {why}"),
            Self::EncryptedKey => write!(
                f,
                "the secret key is protected by a password, and tdm signs without one: make a key with \
                 `tdm key generate NAME` or `minisign -G -W`"
            ),
            Self::SignatureFormat(why) => write!(f, "not a minisign signature: {why}"),
            Self::UnknownKey { signed_by, trusted } => {
                write!(f, "signed by the key {signed_by}, not by the trusted key {trusted}")
            }
            Self::Mismatch => write!(f, "the signature does not match the signed bytes: they were altered"),
            Self::Sign(why) => write!(f, "cannot sign: {why}"),
        }
    }
}

impl std::error::Error for SigningError {}

/// The key id minisign prints for the 8 key-id bytes: upper-case hex of them read as a
/// little-endian number.
fn key_id_of(keynum: &[u8]) -> String {
    keynum.iter().rev().map(|b| format!("{b:02X}")).collect()
}

/// A public key: whom a signature must come from.
#[derive(Clone)]
pub struct PublicKey {
    key: minisign::PublicKey,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.id())
    }
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.base64() == other.base64()
    }
}

impl Eq for PublicKey {}

impl PublicKey {
    /// Parses a public key: the text of a minisign `.pub` file (an `untrusted comment:` line
    /// and the key's line) or the key's base64 line alone.
    pub fn parse(text: &str) -> Result<Self, SigningError> {
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let encoded = match lines.as_slice() {
            [key] => *key,
            [comment, key] if comment.starts_with("untrusted comment:") => *key,
            [] => return Err(SigningError::PublicKeyFormat("it is empty".into())),
            _ => {
                return Err(SigningError::PublicKeyFormat(
                    "expected an `untrusted comment:` line and the key's base64 line".into(),
                ))
            }
        };
        let key = minisign::PublicKey::from_base64(encoded)
            .map_err(|e| SigningError::PublicKeyFormat(files::quoted(&e.to_string())))?;
        if key.to_bytes().get(..2) != Some(b"Ed") {
            return Err(SigningError::PublicKeyFormat("its algorithm is not Ed25519".into()));
        }
        Ok(Self { key })
    }

    /// Reads a `.pub` file (at most [`MAX_KEY_BYTES`]).
    pub fn read(path: &Path) -> Result<Self, SigningError> {
        let bytes = files::read_limited(path, MAX_KEY_BYTES).map_err(SigningError::File)?;
        let text = std::str::from_utf8(&bytes).map_err(|_| SigningError::PublicKeyFormat("it is not UTF-8".into()))?;
        Self::parse(text)
    }

    /// The key id of a key given as its base64 line (as manifests, indexes and the state keep
    /// keys), `None` when it is not a key.
    pub fn id_of(base64: &str) -> Option<String> {
        Self::parse(base64).ok().map(|key| key.id())
    }

    /// The key id, as minisign prints it (16 upper-case hex digits).
    pub fn id(&self) -> String {
        key_id_of(self.key.keynum())
    }

    /// The key's base64 line (what a `.pub` file's second line holds).
    pub fn base64(&self) -> String {
        self.key.to_base64()
    }

    /// The text of a `.pub` file for this key.
    pub fn file_text(&self) -> String {
        format!("untrusted comment: minisign public key {}\n{}\n", self.id(), self.base64())
    }

    /// Checks `signature` (the text of a `.minisig` file) over `bytes`: made by this key,
    /// pre-hashed, with a trusted comment, and matching. Returns the trusted comment.
    pub fn verify(&self, bytes: &[u8], signature: &str) -> Result<String, SigningError> {
        let parsed = Signature::parse(signature)?;
        if parsed.key_id() != self.id() {
            return Err(SigningError::UnknownKey { signed_by: parsed.key_id(), trusted: self.id() });
        }
        minisign::verify(&self.key, &parsed.signature, Cursor::new(bytes), true, false, false)
            .map_err(|_| SigningError::Mismatch)?;
        Ok(parsed.trusted_comment)
    }
}

/// A parsed detached signature.
pub struct Signature {
    signature: minisign::SignatureBox,
    trusted_comment: String,
}

impl Signature {
    /// Parses the text of a `.minisig` file: four lines, pre-hashed (legacy signatures refused).
    pub fn parse(text: &str) -> Result<Self, SigningError> {
        let signature = minisign::SignatureBox::from_string(text)
            .map_err(|e| SigningError::SignatureFormat(files::quoted(&e.to_string())))?;
        if !signature.is_prehashed() {
            return Err(SigningError::SignatureFormat(
                "a legacy (not pre-hashed) signature: sign again with minisign 0.8 or later".into(),
            ));
        }
        // The minisign crate slices the global signature as 64 bytes without checking its
        // length (a short one panics in its verify): checked here first.
        if text.lines().nth(3).and_then(base64_bytes).is_none_or(|global| global.len() != 64) {
            return Err(SigningError::SignatureFormat("the signature of its trusted comment is not 64 bytes".into()));
        }
        let trusted_comment =
            signature.trusted_comment().map_err(|e| SigningError::SignatureFormat(files::quoted(&e.to_string())))?;
        Ok(Self { signature, trusted_comment })
    }

    /// Reads a `.minisig` file (at most [`MAX_SIGNATURE_BYTES`]).
    pub fn read(path: &Path) -> Result<String, SigningError> {
        let bytes = files::read_limited(path, MAX_SIGNATURE_BYTES).map_err(SigningError::File)?;
        String::from_utf8(bytes).map_err(|_| SigningError::SignatureFormat("it is not UTF-8".into()))
    }

    /// The id of the key that made it.
    pub fn key_id(&self) -> String {
        key_id_of(self.signature.keynum())
    }

    /// Its trusted comment (signed with it; text the signer chose).
    pub fn trusted_comment(&self) -> &str {
        &self.trusted_comment
    }
}

/// A secret key (unencrypted), to sign with.
pub struct SecretKey {
    key: minisign::SecretKey,
    public: PublicKey,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey({})", self.public.id())
    }
}

impl SecretKey {
    /// Parses the text of a minisign `.key` file.
    pub fn parse(text: &str) -> Result<Self, SigningError> {
        let boxed = minisign::SecretKeyBox::from_string(text)
            .map_err(|e| SigningError::SecretKeyFormat(files::quoted(&e.to_string())))?;
        let mut lines = text.lines();
        if !lines.next().is_some_and(|l| l.starts_with("untrusted comment:")) || lines.next().is_none() {
            return Err(SigningError::SecretKeyFormat(
                "expected an `untrusted comment:` line and the key's line".into(),
            ));
        }
        // Checked before the key is read: decrypting would run scrypt with the work factors the
        // file names.
        if encrypted(text) {
            return Err(SigningError::EncryptedKey);
        }
        let key = match minisign::SecretKey::from_unencrypted_box(boxed) {
            Ok(key) => key,
            Err(e) => {
                without_checksum(text).ok_or_else(|| SigningError::SecretKeyFormat(files::quoted(&e.to_string())))?
            }
        };
        let public = minisign::PublicKey::from_secret_key(&key)
            .map_err(|e| SigningError::SecretKeyFormat(files::quoted(&e.to_string())))?;
        Ok(Self { key, public: PublicKey { key: public } })
    }

    /// Reads a `.key` file (at most [`MAX_KEY_BYTES`]).
    pub fn read(path: &Path) -> Result<Self, SigningError> {
        let bytes = files::read_limited(path, MAX_KEY_BYTES).map_err(SigningError::File)?;
        let text = std::str::from_utf8(&bytes).map_err(|_| SigningError::SecretKeyFormat("it is not UTF-8".into()))?;
        Self::parse(text)
    }

    /// A new random key pair.
    pub fn generate() -> Result<Self, SigningError> {
        let pair = minisign::KeyPair::generate_unencrypted_keypair().map_err(|e| SigningError::Sign(e.to_string()))?;
        Ok(Self { key: pair.sk, public: PublicKey { key: pair.pk } })
    }

    /// Its public key.
    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// The text of a `.key` file for this key (unencrypted, as `minisign -G -W` writes).
    pub fn file_text(&self) -> Result<String, SigningError> {
        let boxed = self
            .key
            .to_box(Some(&format!("minisign secret key {}", self.public.id())))
            .map_err(|e| SigningError::Sign(e.to_string()))?;
        Ok(boxed.into_string())
    }

    /// The text of a `.minisig` file signing `bytes`, with `trusted_comment` (one line; a
    /// line break in it is replaced by a space, as the format holds one line).
    pub fn sign(&self, bytes: &[u8], trusted_comment: &str) -> Result<String, SigningError> {
        let comment: String = trusted_comment.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
        let signature = minisign::sign(
            Some(&self.public.key),
            &self.key,
            Cursor::new(bytes),
            Some(&comment),
            Some(&format!("signature from tdm secret key {}", self.public.id())),
        )
        .map_err(|e| SigningError::Sign(e.to_string()))?;
        Ok(signature.into_string())
    }
}

/// The bytes of a key's base64 line; `None` when it is not base64.
fn base64_bytes(line: &str) -> Option<Vec<u8>> {
    use ct_codecs::{Base64, Decoder};
    Base64::decode_to_vec(line.trim(), None).ok()
}

/// An unencrypted secret key written without its checksum (32 zero bytes), as Debian's
/// minisign 0.11 writes `minisign -G -W`: read from its bytes, and accepted only when it is
/// whole (its public half is the one its seed gives: a signature it makes verifies).
fn without_checksum(text: &str) -> Option<minisign::SecretKey> {
    let bytes = base64_bytes(text.lines().nth(1)?)?;
    // Algorithms (6), salt (32), KDF limits (16), key id (8), key (64), checksum (32).
    if bytes.len() != 158 || bytes.get(2..4)? != [0, 0] || bytes.get(126..)?.iter().any(|b| *b != 0) {
        return None;
    }
    let key = minisign::SecretKey::from_bytes(&bytes).ok()?;
    let public = minisign::PublicKey::from_secret_key(&key).ok()?;
    minisign::sign(Some(&public), &key, Cursor::new(b"whole key"), None, None).ok()?;
    Some(key)
}

/// Whether a `.key` file's key says it is encrypted: its KDF algorithm (bytes 2..4 of the
/// key's line, decoded) is scrypt's `Sc`.
fn encrypted(text: &str) -> bool {
    text.lines().nth(1).and_then(base64_bytes).is_some_and(|bytes| bytes.get(2..4) == Some(b"Sc"))
}

#[cfg(test)]
mod tests;
