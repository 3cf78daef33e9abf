//! Target 6: host-call request bytes through core's reader (`host::read_request`, what
//! `tdm_host_call` runs). Oracles: no panic; an accepted call names a known method, and its
//! permission and description are computed without panicking.
#![no_main]
use contour_core::{read_host_request as read_request, Method};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((name, Ok(call))) = read_request(data) {
        assert_eq!(Method::from_name(&name), Some(call.method()));
        let _ = call.permission();
        let _ = call.describe();
        let _ = call.allowed_by(&contour_fuzz::all_grants());
    }
});
