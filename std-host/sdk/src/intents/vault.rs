//! The vault: secrets the host uses on a plugin's behalf; `vault.read` returns metadata only.
//!
//! The vault file is JSON:
//!
//! ```json
//! {"secrets": {"API_KEY": {"value": "...", "created": "2026-01-01T00:00:00Z",
//!   "rotated": "2026-06-01T00:00:00Z", "allowedHosts": ["api.example.com", "*.example.org"]}}}
//! ```
//!
//! `rotated` is optional; a secret without `allowedHosts` may be sent nowhere. A secret's value
//! leaves this module only through [`Vault::secret_for_host`], which `net.fetch` calls to fill in
//! a `{{vault:NAME}}` header for a host the secret's own policy allows. It is never logged,
//! returned to a plugin, or put in an error message (`Debug` redacts it).

use crate::files::{self, FileError};
use contour_core::{HostAnswer, Permission};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// One secret: its value and its policy.
#[derive(Clone)]
struct Secret {
    value: String,
    created: Option<String>,
    rotated: Option<String>,
    /// `allowedHosts` in canonical form (as `network:` grants are kept).
    allowed_hosts: Vec<String>,
    /// The same patterns as `network:` permissions, for matching.
    allowed: Vec<Permission>,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secret")
            .field("value", &"<redacted>")
            .field("created", &self.created)
            .field("rotated", &self.rotated)
            .field("allowed_hosts", &self.allowed_hosts)
            .finish()
    }
}

/// A loaded vault file.
#[derive(Clone, Default)]
pub struct Vault {
    secrets: BTreeMap<String, Secret>,
}

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vault").field("secrets", &self.secrets).finish()
    }
}

/// The most bytes a vault file may have (a secret's entry is a few hundred bytes).
pub const MAX_VAULT_BYTES: u64 = 1024 * 1024;

const SECRET_KEYS: [&str; 4] = ["value", "created", "rotated", "allowedHosts"];

/// Why a vault file cannot be used. The message names the file and what is wrong, never a
/// secret's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VaultError {
    /// The file cannot be read (why).
    Read {
        /// The file.
        file: String,
        /// Why.
        why: String,
    },
    /// The file is not UTF-8 text.
    NotText {
        /// The file.
        file: String,
    },
    /// The file is not JSON (the reader's reason: a position, never content).
    NotJson {
        /// The file.
        file: String,
        /// Why.
        why: String,
    },
    /// The JSON is not a vault's shape (what is wrong, naming the key or secret).
    Shape {
        /// The file.
        file: String,
        /// What is wrong.
        problem: String,
    },
}

impl VaultError {
    fn shape(file: &str, problem: String) -> Self {
        Self::Shape { file: file.to_string(), problem }
    }
}

impl fmt::Display for VaultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read { file, why } => write!(f, "cannot read vault file {file}: {why}"),
            Self::NotText { file } => write!(f, "vault file {file} is not UTF-8 text"),
            Self::NotJson { file, why } => write!(f, "vault file {file} is not valid JSON: {why}"),
            Self::Shape { file, problem } => write!(f, "vault file {file}: {problem}"),
        }
    }
}

impl std::error::Error for VaultError {}

/// Why a secret may not be filled in for a host. Names the secret and the host, never the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretRefused {
    /// The vault has no such secret.
    NoSecret(String),
    /// Its `allowedHosts` do not allow the host.
    HostNotAllowed {
        /// The secret.
        name: String,
        /// The host.
        host: String,
    },
}

impl fmt::Display for SecretRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSecret(name) => write!(f, "there is no secret `{name}` in the vault"),
            Self::HostNotAllowed { name, host } => {
                write!(f, "the policy of secret `{name}` does not allow sending it to `{host}`")
            }
        }
    }
}

impl std::error::Error for SecretRefused {}

fn optional_string(
    entry: &Map<String, Value>,
    key: &str,
    name: &str,
    file: &str,
) -> Result<Option<String>, VaultError> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(VaultError::shape(file, format!("secret `{name}`: `{key}` must be a string"))),
    }
}

fn parse_secret(name: &str, entry: &Value, file: &str) -> Result<Secret, VaultError> {
    let entry =
        entry.as_object().ok_or_else(|| VaultError::shape(file, format!("secret `{name}` must be an object")))?;
    if let Some(unknown) = entry.keys().find(|key| !SECRET_KEYS.contains(&key.as_str())) {
        return Err(VaultError::shape(
            file,
            format!("secret `{name}` has unknown field `{unknown}` (expected value, created, rotated, allowedHosts)"),
        ));
    }
    // The value's type is checked but the value itself never appears in a message.
    let value = match entry.get("value") {
        Some(Value::String(value)) => value.clone(),
        Some(_) => return Err(VaultError::shape(file, format!("secret `{name}`: `value` must be a string"))),
        None => return Err(VaultError::shape(file, format!("secret `{name}` has no `value`"))),
    };
    let created = optional_string(entry, "created", name, file)?;
    let rotated = optional_string(entry, "rotated", name, file)?;
    let mut allowed_hosts = Vec::new();
    let mut allowed = Vec::new();
    match entry.get("allowedHosts") {
        None | Some(Value::Null) => {}
        Some(Value::Array(patterns)) => {
            for pattern in patterns {
                let pattern = pattern.as_str().ok_or_else(|| {
                    VaultError::shape(file, format!("secret `{name}`: `allowedHosts` must be an array of strings"))
                })?;
                let permission = Permission::parse(&format!("network:{pattern}")).map_err(|error| {
                    VaultError::shape(
                        file,
                        format!(
                            "secret `{name}`: `{pattern}` in `allowedHosts` is not a host or *.domain pattern ({})",
                            error.kind
                        ),
                    )
                })?;
                // Shown in the canonical form it is matched in (`0x7f.1` is `127.0.0.1`).
                let shown = permission.to_string();
                allowed_hosts.push(shown.strip_prefix("network:").unwrap_or(&shown).to_string());
                allowed.push(permission);
            }
        }
        Some(_) => {
            return Err(VaultError::shape(file, format!("secret `{name}`: `allowedHosts` must be an array of strings")))
        }
    }
    Ok(Secret { value, created, rotated, allowed_hosts, allowed })
}

impl Vault {
    /// Loads the vault at `path` (an absent path or file is an empty vault): a regular file of at
    /// most [`MAX_VAULT_BYTES`], size-checked before it is read. Errors name the file and what is
    /// wrong, never a secret's value.
    pub fn load(path: Option<&Path>) -> Result<Self, VaultError> {
        let Some(path) = path else {
            return Ok(Self::default());
        };
        let file = path.display().to_string();
        let bytes = match files::read_limited(path, MAX_VAULT_BYTES) {
            Ok(bytes) => bytes,
            Err(FileError::NotFound { .. }) => return Ok(Self::default()),
            Err(error) => return Err(VaultError::Read { file, why: error.why() }),
        };
        let text = String::from_utf8(bytes).map_err(|_| VaultError::NotText { file: file.clone() })?;
        Self::parse(&text, &file)
    }

    /// Parses vault JSON; `file` names the source in error messages.
    fn parse(text: &str, file: &str) -> Result<Self, VaultError> {
        // Parsing into `Value` reports syntax errors by line and column only, never file content.
        let root: Value = serde_json::from_str(text)
            .map_err(|error| VaultError::NotJson { file: file.to_string(), why: error.to_string() })?;
        let root = root
            .as_object()
            .ok_or_else(|| VaultError::shape(file, "expected an object {\"secrets\": {...}}".to_string()))?;
        // A key beside `secrets` is a vault written in another shape (`{"token": "..."}`): said
        // at once, never read as an empty vault.
        if let Some(other) = root.keys().find(|key| *key != "secrets") {
            return Err(VaultError::shape(file, format!(
                "unknown key `{}`; a vault is {{\"secrets\": {{\"NAME\": {{\"value\": \"...\", \"allowedHosts\": [\"HOST\"], ...}}}}}} (README, Host intents)",
                files::truncated(other, 64)
            )));
        }
        let mut secrets = BTreeMap::new();
        match root.get("secrets") {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                for (name, entry) in entries {
                    secrets.insert(name.clone(), parse_secret(name, entry, file)?);
                }
            }
            Some(_) => return Err(VaultError::shape(file, "`secrets` must be an object of secrets".to_string())),
        }
        Ok(Self { secrets })
    }

    /// Metadata of one secret, never its value: `{name, exists, created, lastRotated,
    /// allowedHosts}`. A missing secret is a completed answer with `exists: false`.
    pub fn metadata(&self, name: &str) -> HostAnswer {
        HostAnswer::ok(match self.secrets.get(name) {
            Some(secret) => json!({
                "name": name,
                "exists": true,
                "created": secret.created,
                "lastRotated": secret.rotated,
                "allowedHosts": secret.allowed_hosts,
            }),
            None => json!({
                "name": name,
                "exists": false,
                "created": Value::Null,
                "lastRotated": Value::Null,
                "allowedHosts": [],
            }),
        })
    }

    /// The value of secret `name`, only when its `allowedHosts` allow `host` (exact or
    /// `*.domain`). The error names the secret and the host, never the value.
    pub fn secret_for_host(&self, name: &str, host: &str) -> Result<&str, SecretRefused> {
        let secret = self.secrets.get(name).ok_or_else(|| SecretRefused::NoSecret(name.to_string()))?;
        if secret.allowed.iter().any(|pattern| pattern.allows_host(host)) {
            Ok(&secret.value)
        } else {
            Err(SecretRefused::HostNotAllowed { name: name.to_string(), host: host.to_string() })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "s3cr3t-VALUE-do-not-leak";

    fn vault(text: &str) -> Result<Vault, VaultError> {
        Vault::parse(text, "/tmp/vault.json")
    }

    fn good() -> Vault {
        vault(&format!(
            r#"{{"secrets": {{"API_KEY": {{"value": "{SECRET}", "created": "2026-01-01T00:00:00Z",
                "rotated": "2026-06-01T00:00:00Z", "allowedHosts": ["api.example.com", "*.Example.org"]}}}}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn absent_path_or_file_is_an_empty_vault() {
        assert!(Vault::load(None).unwrap().secrets.is_empty());
        let dir = tempfile::tempdir().unwrap();
        assert!(Vault::load(Some(&dir.path().join("missing.json"))).unwrap().secrets.is_empty());
    }

    #[test]
    fn load_errors_name_the_file_and_never_the_value() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vault.json");
        let bad = [
            format!(r#"{{"secrets": {{"K": {{"value": "{SECRET}", "allowedHosts": ["a.com"] "#),
            format!(r#"{{"secrets": {{"K": {{"value": "{SECRET}", "allowedHosts": ["bad host"]}}}}}}"#),
            format!(r#"{{"secrets": {{"K": {{"value": "{SECRET}", "allowedHost": ["a.com"]}}}}}}"#),
            format!(r#"{{"secrets": {{"K": {{"value": "{SECRET}", "created": 5}}}}}}"#),
            format!(r#"{{"secrets": {{"K": {{"value": ["{SECRET}"]}}}}}}"#),
            format!(r#"{{"secrets": ["{SECRET}"]}}"#),
            format!(r#"["{SECRET}"]"#),
            format!(r#"{{"secrets": {{"K": "{SECRET}"}}}}"#),
            SECRET.to_string(),
        ];
        for text in bad {
            std::fs::write(&path, &text).unwrap();
            let error = Vault::load(Some(&path)).unwrap_err().to_string();
            assert!(error.contains(&path.display().to_string()), "{error}");
            assert!(!error.contains(SECRET), "{error}");
            assert!(!error.contains("s3cr3t"), "{error}");
        }
    }

    #[test]
    fn unreadable_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = Vault::load(Some(dir.path())).unwrap_err().to_string();
        assert!(error.contains("cannot read vault file"), "{error}");
    }

    #[test]
    fn metadata_never_holds_the_value() {
        let vault = good();
        let answer = vault.metadata("API_KEY");
        let output = answer.output().unwrap();
        assert_eq!(output["exists"], true);
        assert_eq!(output["created"], "2026-01-01T00:00:00Z");
        assert_eq!(output["lastRotated"], "2026-06-01T00:00:00Z");
        assert_eq!(output["allowedHosts"], json!(["api.example.com", "*.example.org"]));
        assert!(!output.to_string().contains(SECRET));
        let missing = vault.metadata("NOPE").output().unwrap();
        assert_eq!(missing["exists"], false);
        assert_eq!(missing["name"], "NOPE");
    }

    #[test]
    fn secrets_go_only_to_allowed_hosts() {
        let vault = good();
        assert_eq!(vault.secret_for_host("API_KEY", "api.example.com").unwrap(), SECRET);
        assert_eq!(vault.secret_for_host("API_KEY", "x.example.org").unwrap(), SECRET);
        for host in ["example.org", "evil.com", "api.example.com.evil.com"] {
            let error = vault.secret_for_host("API_KEY", host).unwrap_err().to_string();
            assert!(error.contains("API_KEY") && !error.contains(SECRET), "{error}");
        }
        assert!(vault.secret_for_host("NOPE", "api.example.com").is_err());
    }

    #[test]
    fn allowed_hosts_are_canonical_and_wildcards_never_cover_addresses() {
        let text = format!(r#"{{"secrets": {{"K": {{"value": "{SECRET}", "allowedHosts": ["0x7f.1", "[::1]"]}}}}}}"#);
        let loaded = vault(&text).unwrap();
        assert_eq!(loaded.metadata("K").output().unwrap()["allowedHosts"], json!(["127.0.0.1", "[::1]"]));
        assert_eq!(loaded.secret_for_host("K", "127.0.0.1").unwrap(), SECRET);
        assert_eq!(loaded.secret_for_host("K", "::1").unwrap(), SECRET);
        let numeric = format!(r#"{{"secrets": {{"K": {{"value": "{SECRET}", "allowedHosts": ["*.0.0.1"]}}}}}}"#);
        let error = vault(&numeric).unwrap_err().to_string();
        assert!(error.contains("*.0.0.1") && error.contains("IP address"), "{error}");
    }

    #[test]
    fn debug_redacts_the_value() {
        let text = format!("{:?}", good());
        assert!(text.contains("API_KEY") && text.contains("redacted"), "{text}");
        assert!(!text.contains(SECRET), "{text}");
    }

    #[test]
    fn a_vault_of_another_shape_is_refused_not_read_as_empty() {
        for text in [r#"{"token":"s3cret"}"#, r#"{"secretz":{}}"#, r#"{"secrets":{},"extra":1}"#] {
            let error = vault(text).expect_err(text).to_string();
            assert!(error.contains("unknown key") && error.contains("{\"secrets\""), "{error}");
            assert!(!error.contains("s3cret"), "{error}");
        }
        assert!(vault(r#"{"secrets":{}}"#).is_ok());
    }
}
