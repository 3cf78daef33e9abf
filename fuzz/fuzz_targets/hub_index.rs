//! Target 9: a hub's `index.json` bytes (`Hub::from_index`), then a lookup of every entry.
//! Oracle: no panic; every entry of an accepted index is found by its id and version.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(hub) = tdm_sdk::package::Hub::from_index(Path::new("hub"), data) {
        for entry in &hub.entries {
            let found = hub.find(&entry.id, Some(&entry.version)).expect("a listed entry is found");
            assert_eq!((&found.id, &found.version), (&entry.id, &entry.version));
        }
    }
});
