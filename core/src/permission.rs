//! Permissions an operator grants a plugin, parsed strictly from strings such as
//! `network:api.example.com`, `network:*.example.com`, `tool:summarizer`, `vault:read` and
//! `context:read`. A string that does not parse is an error, never a silent grant.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

/// One capability.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Permission {
    /// `network:HOST` (exact host) or `network:*.DOMAIN` (any subdomain of DOMAIN).
    Network(String),
    /// `tool:ID`: invoke another plugin's intents.
    Tool(String),
    /// `vault:read`: read secret metadata (never values).
    VaultRead,
    /// `context:read`: read operator-provided context.
    ContextRead,
}

/// Why a permission string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionError {
    /// The string as given.
    pub input: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl fmt::Display for PermissionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid permission `{}`: {} (expected network:HOST, network:*.DOMAIN, tool:ID, vault:read or context:read)",
            self.input, self.why
        )
    }
}

fn valid_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

fn valid_host(host: &str) -> bool {
    host.len() <= 253 && host.split('.').all(valid_label)
}

impl Permission {
    /// Parses one permission string.
    pub fn parse(input: &str) -> Result<Self, PermissionError> {
        let error = |why| PermissionError { input: input.to_string(), why };
        let (kind, value) = input.split_once(':').ok_or_else(|| error("missing `:`"))?;
        match (kind, value) {
            ("network", "") => Err(error("missing host")),
            ("network", host) => {
                let host = host.to_ascii_lowercase();
                let bare = host.strip_prefix("*.").unwrap_or(&host);
                if !valid_host(bare) || !bare.contains('.') && bare != host {
                    return Err(error("not a host name or *.domain pattern"));
                }
                Ok(Self::Network(host))
            }
            ("tool", id) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)) => {
                Ok(Self::Tool(id.to_string()))
            }
            ("tool", _) => Err(error("a tool id is letters, digits, `-`, `_` or `.`")),
            ("vault", "read") => Ok(Self::VaultRead),
            ("context", "read") => Ok(Self::ContextRead),
            ("vault" | "context", _) => Err(error("only `read` is grantable")),
            _ => Err(error("unknown permission kind")),
        }
    }

    /// Whether this permission lets a plugin reach `host`.
    pub fn allows_host(&self, host: &str) -> bool {
        let Self::Network(pattern) = self else {
            return false;
        };
        let host = host.to_ascii_lowercase();
        match pattern.strip_prefix("*.") {
            Some(domain) => host.strip_suffix(domain).is_some_and(|rest| rest.len() > 1 && rest.ends_with('.')),
            None => *pattern == host,
        }
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Network(host) => write!(f, "network:{host}"),
            Self::Tool(id) => write!(f, "tool:{id}"),
            Self::VaultRead => f.write_str("vault:read"),
            Self::ContextRead => f.write_str("context:read"),
        }
    }
}

/// The set of permissions granted to one plugin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions(Vec<Permission>);

impl Permissions {
    /// Parses every string; the first malformed one is the error.
    pub fn parse_all<'a>(inputs: impl IntoIterator<Item = &'a str>) -> Result<Self, PermissionError> {
        let mut set: Vec<Permission> = inputs.into_iter().map(Permission::parse).collect::<Result<_, _>>()?;
        set.sort();
        set.dedup();
        Ok(Self(set))
    }

    /// Whether `permission` is granted.
    pub fn contains(&self, permission: &Permission) -> bool {
        self.0.contains(permission)
    }

    /// The granted permissions, sorted.
    pub fn iter(&self) -> impl Iterator<Item = &Permission> {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        assert_eq!(Permission::parse("network:api.example.com"), Ok(Permission::Network("api.example.com".into())));
        assert_eq!(Permission::parse("tool:summarizer"), Ok(Permission::Tool("summarizer".into())));
        assert_eq!(Permission::parse("vault:read"), Ok(Permission::VaultRead));
        assert_eq!(Permission::parse("context:read"), Ok(Permission::ContextRead));
    }

    #[test]
    fn refuses_malformed_strings() {
        for bad in
            ["network", "network:", "network:*", "network:*.com.", "network:a b", "vault:write", "tool:", "fs:/", ""]
        {
            assert!(Permission::parse(bad).is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn wildcards_match_subdomains_only() {
        let p = Permission::parse("network:*.example.com").unwrap();
        assert!(p.allows_host("api.example.com"));
        assert!(p.allows_host("a.b.example.com"));
        assert!(!p.allows_host("example.com"));
        assert!(!p.allows_host("evilexample.com"));
        let exact = Permission::parse("network:api.example.com").unwrap();
        assert!(exact.allows_host("API.example.com"));
        assert!(!exact.allows_host("x.api.example.com"));
    }
}
