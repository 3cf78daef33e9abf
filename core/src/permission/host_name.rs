//! The one canonical form of a network host, used for `network:` grants (when they are parsed)
//! and for URL hosts (when a `net.fetch` is checked), so both sides of the comparison went
//! through the same normalization: lower case, one trailing dot removed, every IPv4 form a
//! resolver accepts (`inet_aton`: 1 to 4 parts, decimal, octal `0..`, hex `0x..`) written as a
//! dotted quad, IPv6 in its RFC 5952 text (an IPv4-mapped one as the IPv4 address), and
//! anything else a DNS name of letters, digits and inner hyphens, or refused.

use alloc::string::{String, ToString};
use core::fmt;
use core::net::{Ipv4Addr, Ipv6Addr};

/// A host in canonical form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Host {
    /// A DNS name: lower-case labels of letters, digits and inner hyphens, no trailing dot, and
    /// never ending in a numeric label (that would be read as an IPv4 address).
    Name(String),
    /// An IPv4 address (also what an IPv4-mapped IPv6 address becomes).
    Ipv4(Ipv4Addr),
    /// An IPv6 address that is not IPv4-mapped.
    Ipv6(Ipv6Addr),
}

/// Why a host was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostError {
    /// Nothing is left once one trailing dot is removed.
    Empty,
    /// The name is longer than 253 characters.
    TooLong,
    /// A label is empty, longer than 63 characters, starts or ends with `-`, or holds a
    /// character other than an ASCII letter, digit or `-`.
    InvalidName,
    /// The last label is a number, so a resolver would read the host as an IPv4 address, but
    /// it is not a valid one (a part out of range, too many parts, a bad digit).
    InvalidIpv4,
    /// The text in brackets is not an IPv6 address (zone ids are not accepted either).
    InvalidIpv6,
    /// An IPv6 address without brackets where brackets are required (a grant, or a URL).
    Ipv6NeedsBrackets,
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "the host is empty",
            Self::TooLong => "the host name is longer than 253 characters",
            Self::InvalidName => {
                "a host name is dot-separated labels of ASCII letters, digits and inner `-` (1 to 63 each)"
            }
            Self::InvalidIpv4 => "the host ends in a number but is not a valid IPv4 address",
            Self::InvalidIpv6 => "the text in brackets is not an IPv6 address",
            Self::Ipv6NeedsBrackets => "an IPv6 address is written in brackets, like [::1]",
        })
    }
}

impl core::error::Error for HostError {}

/// Whether IPv6 text without brackets is taken as an address or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BareIpv6 {
    /// Accepted (a host already split from its URL or grant, with no port to confuse it with).
    Accept,
    /// Refused with [`HostError::Ipv6NeedsBrackets`].
    Refuse,
}

impl Host {
    /// Parses a host on its own: a name, an IPv4 address in any resolver form, or an IPv6
    /// address with or without brackets.
    pub fn parse(text: &str) -> Result<Self, HostError> {
        Self::parse_with(text, BareIpv6::Accept)
    }

    pub(crate) fn parse_with(text: &str, bare_ipv6: BareIpv6) -> Result<Self, HostError> {
        if let Some(inner) = text.strip_prefix('[') {
            let inner = inner.strip_suffix(']').ok_or(HostError::InvalidIpv6)?;
            return inner.parse::<Ipv6Addr>().map(Self::from_ipv6).map_err(|_| HostError::InvalidIpv6);
        }
        if text.contains(':') {
            return match (bare_ipv6, text.parse::<Ipv6Addr>()) {
                (BareIpv6::Accept, Ok(v6)) => Ok(Self::from_ipv6(v6)),
                (BareIpv6::Refuse, Ok(_)) => Err(HostError::Ipv6NeedsBrackets),
                (_, Err(_)) => Err(HostError::InvalidName),
            };
        }
        let text = text.strip_suffix('.').unwrap_or(text);
        if text.is_empty() {
            return Err(HostError::Empty);
        }
        if text.len() > 253 {
            return Err(HostError::TooLong);
        }
        if !text.split('.').all(valid_label) {
            return Err(HostError::InvalidName);
        }
        // The WHATWG URL rule: a host whose last label is a number is an IPv4 address or
        // nothing, so no name can be read as an address by a resolver.
        if text.rsplit('.').next().is_some_and(is_number) {
            return inet_aton(text).map(Self::Ipv4).ok_or(HostError::InvalidIpv4);
        }
        Ok(Self::Name(text.to_ascii_lowercase()))
    }

    fn from_ipv6(v6: Ipv6Addr) -> Self {
        match v6.to_ipv4_mapped() {
            Some(v4) => Self::Ipv4(v4),
            None => Self::Ipv6(v6),
        }
    }

    /// Whether this is an IP address (which a `*.DOMAIN` wildcard never matches).
    pub fn is_ip(&self) -> bool {
        !matches!(self, Self::Name(_))
    }

    /// The canonical text without brackets: `api.example.com`, `127.0.0.1`, `::1`.
    pub fn bare(&self) -> String {
        match self {
            Self::Name(name) => name.clone(),
            Self::Ipv4(v4) => v4.to_string(),
            Self::Ipv6(v6) => v6.to_string(),
        }
    }
}

/// The canonical text as it goes in a URL or a grant (IPv6 in brackets: `[::1]`).
impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Name(name) => f.write_str(name),
            Self::Ipv4(v4) => write!(f, "{v4}"),
            Self::Ipv6(v6) => write!(f, "[{v6}]"),
        }
    }
}

/// Why the host of a URL could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlHostError {
    /// The URL does not start with `http://` or `https://`.
    Scheme,
    /// The URL has userinfo (`user@host`) or a backslash in its authority: one parser could see
    /// one host and another parser another.
    Userinfo,
    /// The authority is empty.
    NoHost,
    /// The port is not 1 to 5 digits of at most 65535.
    Port,
    /// The host itself is malformed.
    Host(HostError),
}

impl fmt::Display for UrlHostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scheme => f.write_str("only http:// and https:// URLs can be fetched"),
            Self::Userinfo => f.write_str("URLs with userinfo are refused"),
            Self::NoHost => f.write_str("the URL has no host"),
            Self::Port => f.write_str("the URL's port is not a number from 0 to 65535"),
            Self::Host(error) => write!(f, "the URL's host is refused: {error}"),
        }
    }
}

impl core::error::Error for UrlHostError {}

impl Host {
    /// The canonical host of an `http://` or `https://` URL (an IPv6 address must be in
    /// brackets). Userinfo is refused, so a URL cannot show one host to the check and another
    /// to the client.
    pub fn of_url(url: &str) -> Result<Self, UrlHostError> {
        // A scheme is case-insensitive (RFC 3986): `HTTP://` is `http://`, as the client reads it.
        let scheme = |prefix: &str| {
            url.get(..prefix.len()).filter(|head| head.eq_ignore_ascii_case(prefix)).map(|_| &url[prefix.len()..])
        };
        let rest = scheme("https://").or_else(|| scheme("http://")).ok_or(UrlHostError::Scheme)?;
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if authority.contains(['@', '\\']) {
            return Err(UrlHostError::Userinfo);
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (inner, after) = v6.split_once(']').ok_or(UrlHostError::Host(HostError::InvalidIpv6))?;
                let port = match after.strip_prefix(':') {
                    Some(port) => Some(port),
                    None if after.is_empty() => None,
                    None => return Err(UrlHostError::Port),
                };
                (&authority[..inner.len() + 2], port)
            }
            None if authority.matches(':').count() > 1 => return Err(UrlHostError::Host(HostError::Ipv6NeedsBrackets)),
            None => match authority.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            },
        };
        let bad_port = |port: &str| {
            port.is_empty()
                || port.len() > 5
                || !port.bytes().all(|b| b.is_ascii_digit())
                || port.parse::<u16>().is_err()
        };
        if port.is_some_and(bad_port) {
            return Err(UrlHostError::Port);
        }
        if host.is_empty() {
            return Err(UrlHostError::NoHost);
        }
        Self::parse_with(host, BareIpv6::Refuse).map_err(UrlHostError::Host)
    }
}

fn valid_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

/// Whether `label` reads as a number: decimal digits, or `0x` with hex digits (WHATWG counts a
/// bare `0x` too; here it is a number that fails to parse, so such a host is refused).
fn is_number(label: &str) -> bool {
    match label.strip_prefix("0x").or_else(|| label.strip_prefix("0X")) {
        Some(hex) => hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => !label.is_empty() && label.bytes().all(|b| b.is_ascii_digit()),
    }
}

/// One part of an `inet_aton` address: `0x` hex, `0` octal, or decimal; `None` if malformed.
fn aton_part(part: &str) -> Option<u64> {
    let (digits, radix) = if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
        (hex, 16)
    } else if part.len() > 1 && part.starts_with('0') {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    if digits.is_empty() || !digits.bytes().all(|b| (b as char).is_digit(radix)) {
        return None;
    }
    // Leading zeros cannot overflow; more than 32 significant bits is out of range anyway.
    let significant = digits.trim_start_matches('0');
    if significant.len() > 12 {
        return None;
    }
    u64::from_str_radix(if significant.is_empty() { "0" } else { significant }, radix).ok()
}

/// An IPv4 address in any form `inet_aton` accepts: `a`, `a.b`, `a.b.c` or `a.b.c.d`, every
/// part but the last one byte, the last filling the remaining bytes.
fn inet_aton(text: &str) -> Option<Ipv4Addr> {
    let mut parts = [0u64; 4];
    let mut count = 0;
    for part in text.split('.') {
        *parts.get_mut(count)? = aton_part(part)?;
        count += 1;
    }
    let (last, leading) = parts[..count].split_last()?;
    if leading.iter().any(|&part| part > 0xff) || *last >= 1u64 << (8 * (5 - count)) {
        return None;
    }
    let value = leading.iter().enumerate().fold(*last, |value, (i, &part)| value | (part << (8 * (3 - i))));
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        Host::parse(text).map(|h| h.to_string()).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn equivalent_forms_have_one_canonical_text() {
        let table: &[(&str, &[&str])] = &[
            (
                "127.0.0.1",
                &[
                    "127.0.0.1",
                    "127.0.0.1.",
                    "2130706433",
                    "0x7f000001",
                    "0X7F000001",
                    "017700000001",
                    "0x7f.1",
                    "0177.0.0.1",
                    "127.1",
                    "127.0.1",
                    "0x7f.0.0.0x1",
                    "00000177.0.0.1",
                    "[::ffff:127.0.0.1]",
                    "[::FFFF:7f00:1]",
                    "::ffff:127.0.0.1",
                ],
            ),
            ("87.0.0.1", &["0127.0.0.1", "87.0.0.1", "0127.1"]),
            ("10.1.0.1", &["10.65537", "012.0x10001", "10.1.1", "0xa.1.0.1"]),
            ("0.0.0.0", &["0", "0x0", "00", "0.0", "[::ffff:0.0.0.0]"]),
            ("255.255.255.255", &["4294967295", "0xffffffff", "255.16777215", "0377.0377.0377.0377"]),
            ("[::1]", &["[::1]", "::1", "[0:0:0:0:0:0:0:1]", "[0000::0001]"]),
            ("[2001:db8::1]", &["[2001:DB8::1]", "[2001:0db8:0:0:0:0:0:1]", "2001:db8:0::1"]),
            ("api.example.com", &["api.example.com", "API.Example.COM", "api.example.com."]),
            ("localhost", &["localhost", "LOCALHOST."]),
            ("127.0.0.1.nip.io", &["127.0.0.1.nip.io"]),
            ("xn--bcher-kva.example", &["xn--BCHER-kva.example."]),
        ];
        for (expected, forms) in table {
            for form in *forms {
                assert_eq!(canonical(form), *expected, "{form}");
            }
        }
    }

    #[test]
    fn distinct_hosts_stay_distinct() {
        let distinct = [
            "127.0.0.1",
            "127.0.0.2",
            "127.0.1.0",
            "1.0.0.127",
            "0.0.0.1",
            "87.0.0.1",
            "[::1]",
            "[::127.0.0.1]",
            "localhost",
            "api.example.com",
            "api.example.com.evil.com",
        ];
        for (i, a) in distinct.iter().enumerate() {
            for b in &distinct[i + 1..] {
                assert_ne!(Host::parse(a), Host::parse(b), "{a} and {b}");
            }
        }
    }

    #[test]
    fn malformed_hosts_are_refused_with_their_reason() {
        let table = [
            ("", HostError::Empty),
            (".", HostError::Empty),
            ("a..b", HostError::InvalidName),
            ("a.com..", HostError::InvalidName),
            ("-a.com", HostError::InvalidName),
            ("a-.com", HostError::InvalidName),
            ("a_b.com", HostError::InvalidName),
            ("a b.com", HostError::InvalidName),
            ("ex%61mple.com", HostError::InvalidName),
            ("bücher.example", HostError::InvalidName),
            ("*.example.com", HostError::InvalidName),
            ("a.com:80", HostError::InvalidName),
            ("256.0.0.1", HostError::InvalidIpv4),
            ("127.0.0.256", HostError::InvalidIpv4),
            ("1.2.3.4.5", HostError::InvalidIpv4),
            ("4294967296", HostError::InvalidIpv4),
            ("127.16777216", HostError::InvalidIpv4),
            ("08.0.0.1", HostError::InvalidIpv4),
            ("0x.1", HostError::InvalidIpv4),
            ("1.0x", HostError::InvalidIpv4),
            ("0xg.1", HostError::InvalidIpv4),
            ("example.123", HostError::InvalidIpv4),
            ("999999999999999999999999", HostError::InvalidIpv4),
            ("[::1", HostError::InvalidIpv6),
            ("[127.0.0.1]", HostError::InvalidIpv6),
            ("[fe80::1%25eth0]", HostError::InvalidIpv6),
            ("[example.com]", HostError::InvalidIpv6),
            (":::1", HostError::InvalidName),
        ];
        for (text, error) in table {
            assert_eq!(Host::parse(text), Err(error), "{text}");
        }
        assert_eq!(Host::parse(&"a.".repeat(128)), Err(HostError::TooLong));
        assert_eq!(Host::parse(&"a".repeat(64)), Err(HostError::InvalidName));
        assert_eq!(Host::parse_with("::1", BareIpv6::Refuse), Err(HostError::Ipv6NeedsBrackets));
    }

    #[test]
    fn addresses_are_ips_and_names_are_not() {
        assert!(Host::parse("0x7f.1").unwrap().is_ip());
        assert!(Host::parse("[::1]").unwrap().is_ip());
        assert!(!Host::parse("a.0.0.1.com").unwrap().is_ip());
        assert_eq!(Host::parse("[::1]").unwrap().bare(), "::1");
    }
}
