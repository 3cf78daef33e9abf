//! panicky: a plugin whose `boom` intent panics, to show what a panic becomes. A Wasm panic
//! cannot unwind: the SDK logs it (`log` host intent) and traps, and the host answers the
//! intent with a failed `plugin_trap` outcome. `ok` answers normally, so a test can show the
//! next intent runs in a fresh instance.
#![no_std]
#![forbid(unsafe_code)]

use serde::de::IgnoredAny;
use tdm_plugin::Failure;

/// `boom`: panics.
fn boom(_: IgnoredAny) -> Result<(), Failure> {
    panic!("boom: this intent panics on purpose")
}

/// `ok`: answers `true`.
fn ok(_: IgnoredAny) -> Result<bool, Failure> {
    Ok(true)
}

tdm_plugin::plugin! { "boom" => boom, "ok" => ok }
