//! Permissions an operator grants a plugin, parsed strictly from strings such as
//! `network:api.example.com`, `network:*.example.com`, `tool:summarizer`, `vault:read` and
//! `context:read`. A string that does not parse is an error, never a silent grant. A `network:`
//! host is kept in the canonical form of [`Host`], the same form every URL host is checked in.

mod host_name;

pub use host_name::{Host, HostError, UrlHostError};

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use host_name::BareIpv6;

/// One capability.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Permission {
    /// `network:HOST` (exact host) or `network:*.DOMAIN` (any subdomain of DOMAIN, never an IP
    /// address). Parsed grants hold the host's canonical text ([`Host::bare`]: `127.0.0.1`,
    /// `::1`, `api.example.com`) or `*.` and a canonical domain name.
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
    pub kind: PermissionErrorKind,
}

/// What is wrong with a permission string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionErrorKind {
    /// There is no `:` between the kind and its value.
    MissingColon,
    /// `network:` names no host.
    MissingHost,
    /// The host of `network:HOST` is malformed.
    Host(HostError),
    /// `network:*.DOMAIN` whose DOMAIN reads as an IP address (`*.0.0.1`): a wildcard matches
    /// host names only.
    WildcardOfAddress,
    /// `network:*.DOMAIN` whose DOMAIN is malformed.
    WildcardDomain(HostError),
    /// `network:*.DOMAIN` whose DOMAIN is one label (`*.com`).
    WildcardOfTopLevel,
    /// `tool:ID` with an empty id or other characters than letters, digits, `-`, `_`, `.`.
    ToolId,
    /// `vault:` or `context:` with another access than `read`.
    OnlyRead,
    /// Not `network`, `tool`, `vault` or `context`.
    UnknownKind,
}

impl fmt::Display for PermissionErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingColon => f.write_str("missing `:`"),
            Self::MissingHost => f.write_str("missing host"),
            Self::Host(error) => write!(f, "not a host name or *.domain pattern: {error}"),
            Self::WildcardOfAddress => f.write_str(
                "a *.DOMAIN wildcard matches host names only, and this DOMAIN reads as an IP address \
                 (grant an address exactly, like network:127.0.0.1)",
            ),
            Self::WildcardDomain(error) => write!(f, "the domain of a *.DOMAIN wildcard is refused: {error}"),
            Self::WildcardOfTopLevel => f.write_str("a *.DOMAIN wildcard needs a domain of at least two labels"),
            Self::ToolId => f.write_str("a tool id is letters, digits, `-`, `_` or `.`"),
            Self::OnlyRead => f.write_str("only `read` is grantable"),
            Self::UnknownKind => f.write_str("unknown permission kind"),
        }
    }
}

impl fmt::Display for PermissionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid permission `{}`: {} (expected network:HOST, network:*.DOMAIN, tool:ID, vault:read or context:read)",
            self.input, self.kind
        )
    }
}

impl core::error::Error for PermissionError {}

/// A `network:` value: an exact host or the subdomains of a domain name.
enum HostPattern {
    Exact(Host),
    /// The canonical domain name, without the `*.`.
    Subdomains(String),
}

impl HostPattern {
    fn parse(text: &str, bare_ipv6: BareIpv6) -> Result<Self, PermissionErrorKind> {
        let Some(domain) = text.strip_prefix("*.") else {
            return Host::parse_with(text, bare_ipv6).map(Self::Exact).map_err(PermissionErrorKind::Host);
        };
        match Host::parse_with(domain, BareIpv6::Refuse) {
            Ok(Host::Name(name)) if name.contains('.') => Ok(Self::Subdomains(name)),
            Ok(Host::Name(_)) => Err(PermissionErrorKind::WildcardOfTopLevel),
            Ok(_) | Err(HostError::InvalidIpv4 | HostError::Ipv6NeedsBrackets) => {
                Err(PermissionErrorKind::WildcardOfAddress)
            }
            Err(error) => Err(PermissionErrorKind::WildcardDomain(error)),
        }
    }

    fn matches(&self, host: &Host) -> bool {
        match (self, host) {
            (Self::Exact(exact), host) => exact == host,
            (Self::Subdomains(domain), Host::Name(name)) => {
                name.strip_suffix(domain.as_str()).is_some_and(|rest| rest.len() > 1 && rest.ends_with('.'))
            }
            // A wildcard never matches an IP address.
            (Self::Subdomains(_), Host::Ipv4(_) | Host::Ipv6(_)) => false,
        }
    }
}

impl Permission {
    /// Parses one permission string.
    pub fn parse(input: &str) -> Result<Self, PermissionError> {
        let error = |kind| PermissionError { input: input.to_string(), kind };
        let (kind, value) = input.split_once(':').ok_or_else(|| error(PermissionErrorKind::MissingColon))?;
        match (kind, value) {
            ("network", "") => Err(error(PermissionErrorKind::MissingHost)),
            // A grant names an IPv6 address in brackets, as a URL does: `network:[::1]`.
            ("network", host) => match HostPattern::parse(host, BareIpv6::Refuse).map_err(error)? {
                HostPattern::Exact(host) => Ok(Self::Network(host.bare())),
                HostPattern::Subdomains(domain) => Ok(Self::Network(alloc::format!("*.{domain}"))),
            },
            ("tool", id) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)) => {
                Ok(Self::Tool(id.to_string()))
            }
            ("tool", _) => Err(error(PermissionErrorKind::ToolId)),
            ("vault", "read") => Ok(Self::VaultRead),
            ("context", "read") => Ok(Self::ContextRead),
            ("vault" | "context", _) => Err(error(PermissionErrorKind::OnlyRead)),
            _ => Err(error(PermissionErrorKind::UnknownKind)),
        }
    }

    /// Whether this permission lets a plugin reach `host` (any form [`Host::parse`] reads; both
    /// sides are compared in canonical form, and a wildcard never matches an IP address).
    pub fn allows_host(&self, host: &str) -> bool {
        let Self::Network(pattern) = self else {
            return false;
        };
        // The pattern is read again so a `Network` built by hand is held to the same rules.
        match (HostPattern::parse(pattern, BareIpv6::Accept), Host::parse(host)) {
            (Ok(pattern), Ok(host)) => pattern.matches(&host),
            _ => false,
        }
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // An IPv6 address goes in brackets, the only form a grant accepts.
            Self::Network(host) if host.contains(':') => write!(f, "network:[{host}]"),
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

    /// A URL's host in its canonical text form, as `host::url_host` gives it.
    fn url_host(url: &str) -> Result<String, UrlHostError> {
        Host::of_url(url).map(|host| host.bare())
    }

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
    fn network_grants_are_kept_in_canonical_form() {
        for (input, canonical) in [
            ("network:API.Example.com.", "network:api.example.com"),
            ("network:*.Example.COM.", "network:*.example.com"),
            ("network:0x7f.1", "network:127.0.0.1"),
            ("network:2130706433", "network:127.0.0.1"),
            ("network:[::FFFF:127.0.0.1]", "network:127.0.0.1"),
            ("network:[0::1]", "network:[::1]"),
        ] {
            let permission = Permission::parse(input).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(permission.to_string(), canonical, "{input}");
            // What is displayed (and stored in approvals) parses back to the same grant.
            assert_eq!(Permission::parse(canonical), Ok(permission), "{input}");
        }
    }

    #[test]
    fn network_grants_are_refused_with_a_typed_reason() {
        let kind = |input| Permission::parse(input).map_err(|e| e.kind);
        assert_eq!(kind("network:*.0.0.1"), Err(PermissionErrorKind::WildcardOfAddress));
        assert_eq!(kind("network:*.1"), Err(PermissionErrorKind::WildcardOfAddress));
        assert_eq!(kind("network:*.127.0.0.1"), Err(PermissionErrorKind::WildcardOfAddress));
        assert_eq!(kind("network:*.0x7f.1"), Err(PermissionErrorKind::WildcardOfAddress));
        assert_eq!(kind("network:*.1.2.3.4.5"), Err(PermissionErrorKind::WildcardOfAddress));
        assert_eq!(kind("network:*.[::1]"), Err(PermissionErrorKind::WildcardOfAddress));
        assert_eq!(kind("network:*.com"), Err(PermissionErrorKind::WildcardOfTopLevel));
        assert_eq!(kind("network:*.a..com"), Err(PermissionErrorKind::WildcardDomain(HostError::InvalidName)));
        assert_eq!(kind("network:::1"), Err(PermissionErrorKind::Host(HostError::Ipv6NeedsBrackets)));
        assert_eq!(kind("network:256.0.0.1"), Err(PermissionErrorKind::Host(HostError::InvalidIpv4)));
        assert_eq!(kind("network:a.com:443"), Err(PermissionErrorKind::Host(HostError::InvalidName)));
        assert_eq!(kind("network:*.*.a.com"), Err(PermissionErrorKind::WildcardDomain(HostError::InvalidName)));
        let message = Permission::parse("network:*.0.0.1").unwrap_err().to_string();
        assert!(message.contains("`network:*.0.0.1`") && message.contains("IP address"), "{message}");
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

    /// Grants against URLs: each row is a grant, URLs it covers and URLs it does not.
    #[test]
    fn grants_and_url_hosts_are_compared_in_one_canonical_form() {
        let table: &[(&str, &[&str], &[&str])] = &[
            (
                "network:127.0.0.1",
                &[
                    "http://127.0.0.1/",
                    "http://127.0.0.1.:8080/",
                    "http://0x7f.1/",
                    "http://0x7F.0.0.1:1/x",
                    "http://0177.0.0.1/",
                    "http://127.1/",
                    "http://2130706433/",
                    "http://[::ffff:127.0.0.1]:80/",
                    "http://[::ffff:7f00:1]/",
                ],
                &["http://127.0.0.2/", "http://[::1]/", "http://localhost/", "http://127.0.0.1.nip.io/"],
            ),
            (
                "network:[::1]",
                &["http://[::1]/", "https://[0:0::1]:443/", "http://[0000::0001]/"],
                &["http://127.0.0.1/", "http://[::2]/"],
            ),
            (
                "network:api.example.com",
                &["https://api.example.com/", "https://API.EXAMPLE.COM./", "https://api.example.com:8443/"],
                &["https://x.api.example.com/", "https://api.example.com.evil.com/", "https://example.com/"],
            ),
            (
                "network:*.example.com",
                &["https://a.example.com/", "https://A.B.Example.com./"],
                &["https://example.com/", "https://evilexample.com/", "https://a.example.com.evil.com/"],
            ),
            // A wildcard whose domain has numeric labels still never matches an address.
            ("network:*.0.0.1.com", &["http://x.0.0.1.com/"], &["http://127.0.0.1/", "http://0.0.1.com/"]),
            // Names that end in a number are addresses, and no other form gets past the check.
            ("network:localhost", &["http://LOCALHOST./"], &["http://127.0.0.1/", "http://[::1]/"]),
        ];
        for (grant, covered, not_covered) in table {
            let permission = Permission::parse(grant).unwrap_or_else(|e| panic!("{e}"));
            for url in *covered {
                let host = url_host(url).unwrap_or_else(|e| panic!("{url}: {e}"));
                assert!(permission.allows_host(&host), "{grant} should cover {url} ({host})");
            }
            for url in *not_covered {
                let host = url_host(url).unwrap_or_else(|e| panic!("{url}: {e}"));
                assert!(!permission.allows_host(&host), "{grant} should not cover {url} ({host})");
            }
        }
    }

    #[test]
    fn a_wildcard_never_matches_an_address() {
        // Built by hand (as parsing refuses it), `*.0.0.1` still does not cover 127.0.0.1.
        let numeric = Permission::Network("*.0.0.1".into());
        assert!(!numeric.allows_host("127.0.0.1"));
        assert!(!numeric.allows_host("1.0.0.1"));
        let wildcard = Permission::parse("network:*.example.com").unwrap();
        assert!(!wildcard.allows_host("[::1]"));
    }

    #[test]
    fn url_hosts_are_parsed_strictly() {
        assert_eq!(url_host("https://API.example.com/x?y").unwrap(), "api.example.com");
        assert_eq!(url_host("http://127.0.0.1:8080/").unwrap(), "127.0.0.1");
        assert_eq!(url_host("http://[::1]:80/").unwrap(), "::1");
        assert_eq!(url_host("http://0x7f.1:80/").unwrap(), "127.0.0.1");
        assert_eq!(url_host("http://a.com.?q").unwrap(), "a.com");
        assert_eq!(url_host("HTTP://API.example.com/").unwrap(), "api.example.com");
        assert_eq!(url_host("hTtPs://127.0.0.1/").unwrap(), "127.0.0.1");
        let error = |url| Host::of_url(url).unwrap_err();
        assert_eq!(error("httpx://example.com/"), UrlHostError::Scheme);
        assert_eq!(error("é://example.com/"), UrlHostError::Scheme);
        assert_eq!(error("ftp://example.com/"), UrlHostError::Scheme);
        assert_eq!(error("file:///etc/passwd"), UrlHostError::Scheme);
        assert_eq!(error("https://user@evil.com/"), UrlHostError::Userinfo);
        assert_eq!(error("https://good.com@evil.com/"), UrlHostError::Userinfo);
        assert_eq!(error("https://good.com\\@evil.com/"), UrlHostError::Userinfo);
        assert_eq!(error("https:///path"), UrlHostError::NoHost);
        assert_eq!(error("https://:80/"), UrlHostError::NoHost);
        assert_eq!(error("http://::1/"), UrlHostError::Host(HostError::Ipv6NeedsBrackets));
        assert_eq!(error("http://[::1]x/"), UrlHostError::Port);
        assert_eq!(error("http://a.com:/"), UrlHostError::Port);
        assert_eq!(error("http://a.com:+80/"), UrlHostError::Port);
        assert_eq!(error("http://a.com:65536/"), UrlHostError::Port);
        assert_eq!(error("http://[127.0.0.1]/"), UrlHostError::Host(HostError::InvalidIpv6));
        assert_eq!(error("http://[::1/"), UrlHostError::Host(HostError::InvalidIpv6));
        assert_eq!(error("http://ex%61mple.com/"), UrlHostError::Host(HostError::InvalidName));
        assert_eq!(error("http://1.2.3.4.5/"), UrlHostError::Host(HostError::InvalidIpv4));
        assert_eq!(error("http://256.1/"), UrlHostError::Host(HostError::InvalidIpv4));
    }
}
