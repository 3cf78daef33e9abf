//! Target 8: `plugin.toml` text (`Manifest::parse`), then its permissions and policy as a
//! package verification reads them. Oracle: no panic.
#![no_main]
use contour_core::{Permissions, Policy};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(manifest) = tdm_sdk::package::Manifest::parse(text, Path::new("plugin.toml")) {
        let _ = Permissions::parse_all(manifest.permissions.iter().map(String::as_str));
        if let Ok(policy) = manifest.policy.applied_to(Policy::default()) {
            assert!(policy.validate().is_ok(), "a manifest's policy is unusable: {policy:?}");
        }
    }
});
