//! net.fetch's own checks: redirects, placeholders, reserved headers, the checked host.

use super::*;

#[test]
fn locations_resolve_against_the_base() {
    let base: http::Uri = "http://a.com:8080/x/y?q=1".parse().unwrap();
    assert_eq!(resolve_location(&base, "https://b.com/z").unwrap(), "https://b.com/z");
    assert_eq!(resolve_location(&base, "//b.com/z").unwrap(), "http://b.com/z");
    assert_eq!(resolve_location(&base, "/z").unwrap(), "http://a.com:8080/z");
    assert_eq!(resolve_location(&base, "z").unwrap(), "http://a.com:8080/x/z");
    assert_eq!(resolve_location(&base, "?r=2").unwrap(), "http://a.com:8080/x/y?r=2");
    assert!(resolve_location(&base, "ftp://b.com/").is_err());
    assert!(resolve_location(&base, "javascript:alert(1)").is_err());
}

#[test]
fn placeholders_are_found_and_checked() {
    assert_eq!(placeholder_names("Bearer {{vault:A}} {{vault:B}}").unwrap(), ["A", "B"]);
    assert!(placeholder_names("plain").unwrap().is_empty());
    assert!(placeholder_names("{{vault:A").is_err());
    assert!(placeholder_names("{{vault:}}").is_err());
}

#[test]
fn reserved_headers_are_refused() {
    for name in ["Host", "content-length", "Transfer-Encoding"] {
        assert!(parse_headers(&[(name.into(), "x".into())]).is_err(), "{name}");
    }
    assert!(parse_headers(&[("bad name".into(), "x".into())]).is_err());
    assert!(parse_headers(&[("X-Ok".into(), "x".into())]).is_ok());
}

#[test]
fn the_client_must_see_the_checked_host() {
    let uri = |url, host| client_uri(url, host).map(|uri| uri.to_string());
    assert_eq!(uri("http://a.com/", "a.com").unwrap(), "http://a.com/");
    assert_eq!(uri("http://A.com.:80/x?y=1", "a.com").unwrap(), "http://a.com:80/x?y=1");
    assert_eq!(uri("http://[::1]:80/", "::1").unwrap(), "http://[::1]:80/");
    assert!(client_uri("http://b.com/", "a.com").is_err());
}

#[test]
fn the_client_connects_to_the_canonical_host() {
    let uri = |url| client_uri(url, "127.0.0.1").map(|uri| uri.to_string());
    assert_eq!(uri("http://0x7f.1:8080/a?b").unwrap(), "http://127.0.0.1:8080/a?b");
    assert_eq!(uri("http://127.0.0.1.:8080/").unwrap(), "http://127.0.0.1:8080/");
    assert_eq!(uri("https://2130706433/").unwrap(), "https://127.0.0.1/");
    assert_eq!(uri("http://[::ffff:127.0.0.1]:9/").unwrap(), "http://127.0.0.1:9/");
    assert!(uri("http://127.0.0.2/").is_err());
    assert!(uri("http://u@127.0.0.1/").is_err());
}
