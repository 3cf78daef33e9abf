//! Target 7: permission strings (`Permission::parse`, `Permissions::parse_all`), URL hosts
//! (`host::url_host`) and the limit flags (`tdm_sdk::limits`). Oracles: no panic; a parsed
//! permission prints as a string that parses back to the same permission; a grant list covers
//! itself.
#![no_main]
use contour_core::{Permission, Permissions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(permission) = Permission::parse(text) {
        let printed = permission.to_string();
        assert_eq!(Permission::parse(&printed).as_ref(), Ok(&permission), "{printed:?} does not parse back");
        if let Ok(url_host) = contour_core::url_host(&format!("https://{text}/")) {
            let _ = permission.allows_host(&url_host);
        }
    }
    let parts: Vec<&str> = text.split('\n').collect();
    if let Ok(grants) = Permissions::parse_all(parts.iter().copied()) {
        assert!(tdm_sdk::package::covered(&grants, &grants));
    }
    let _ = contour_core::url_host(text);
    let _ = tdm_sdk::limits::parse_fuel(text);
    let _ = tdm_sdk::limits::parse_timeout(text);
    let _ = tdm_sdk::limits::parse_memory(text);
    if let Ok(size) = tdm_sdk::limits::parse_size(text) {
        let _ = tdm_sdk::limits::format_size(size);
    }
});
