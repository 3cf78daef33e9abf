//! # tdm-plugin
//!
//! Write a Contour plugin in Rust. The crate implements the TDM IPC ABI (`docs/ABI.md`) for the
//! guest side, so a plugin is a few typed functions and one macro:
//!
//! ```ignore
//! #![no_std]
//! extern crate alloc;
//! use alloc::{format, string::String};
//! use serde::{Deserialize, Serialize};
//! use tdm_plugin::Failure;
//!
//! #[derive(Deserialize)]
//! struct GreetParams { name: String }
//!
//! #[derive(Serialize)]
//! struct Greeting { greeting: String }
//!
//! fn greet(params: GreetParams) -> Result<Greeting, Failure> {
//!     Ok(Greeting { greeting: format!("Hello, {}!", params.name) })
//! }
//!
//! tdm_plugin::plugin! { "greet" => greet }
//! ```
//!
//! What the crate provides:
//!
//! - the exports `tdm_alloc`, `tdm_free` and `tdm_plugin_execute_intent` (the last one calls the
//!   intents that [`plugin!`] registers, by name);
//! - a global allocator for the guest (feature `allocator`): power-of-two blocks bumped from linear
//!   memory, reused through free lists, and reset to empty whenever nothing is allocated, which
//!   for a plugin that keeps nothing between intents is after every intent;
//! - typed params and results through serde: params are read in place from the request (they may
//!   borrow `&str` from it) and the output is written straight into the response; params that do
//!   not fit the intent's type answer a failed outcome `invalid_params`; an unknown intent answers
//!   `unknown_intent`;
//! - [`Failure`], the plugin's own failed outcome (`message`, `blockedReason`, `recoveryHint`,
//!   `output.retryable`);
//! - [`host`], safe wrappers over `tdm_host_call`/`tdm_host_response` for every host intent;
//! - a SIMD path for the JSON byte scans, taken when the plugin is built with
//!   `-C target-feature=+simd128`: strings are scanned 16 bytes an instruction (about 2 fuel per
//!   byte of a string param instead of 9), with the same answers; such a module loads only on
//!   hosts that run SIMD (not Contour's firmware, big-endian hosts or `tdm --no-simd`).
//!
//! **Panics trap.** Wasm has no unwinding here, so a panic cannot be turned into the plugin's
//! own outcome. The panic handler (feature `panic-handler`) logs `panic at FILE:LINE: MESSAGE`
//! through the `log` host intent and executes `unreachable`; the host then answers the intent
//! with its failed `plugin_trap` outcome and runs the next intent in a fresh instance.
//!
//! **What an intent costs.** Contour interprets the plugin and meters it in fuel (about one unit
//! per instruction), so the SDK's own work is kept small: it finds the request's `method` and
//! `params` without building anything, reads the params and writes the output with its own serde
//! (de)serializer (strings are scanned 16 bytes a round, 64 in long runs, and copied in one piece;
//! output is byte for byte what `serde_json` would write), and allocates from a bump arena. A warm `greet` of
//! `examples/rust/hello` with a 128-byte request costs about 8,400 fuel, a quarter of it the
//! handler's own `trim` and `format!`, and each byte of a string param about 5.4 (`make sdk-fuel`
//! shows where it goes). `docs/writing-plugins.md` says how to keep an intent cheap.
//!
//! The crate's `unsafe` code is the ABI, in one module, `abi`, and the SIMD build's vector loads
//! (`json/lanes.rs`), with a `// SAFETY:` line on each block.
#![no_std]
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;

mod abi;
#[cfg_attr(not(all(target_arch = "wasm32", feature = "allocator")), allow(dead_code))]
mod arena;
mod failure;
pub mod host;
mod intent;
mod json;

pub use failure::Failure;
pub use host::HostError;
#[doc(hidden)]
pub use intent::{run_intent as __run_intent, unknown_intent as __unknown_intent, Response as __Response};

/// The serde version this crate uses (for `#[serde(crate = "tdm_plugin::serde")]`).
pub use serde;
/// The serde_json version this crate uses (`Value`, `json!`, `Map`).
pub use serde_json;

/// Registers the plugin's intents by name and generates its dispatch.
///
/// Each handler is a function `fn(P) -> Result<O, Failure>` where `P: serde::Deserialize` (the
/// request's `params`, read in place: `P` may borrow `&str` or `Cow<str>` fields from the request)
/// and `O: serde::Serialize` (the completed outcome's `output`). Use `serde::de::IgnoredAny` as `P`
/// for an intent that takes no params. Use the macro once per plugin crate (a `cdylib`):
///
/// ```ignore
/// tdm_plugin::plugin! {
///     "greet" => greet {
///         title: "Greet someone",
///         description: "Answers {\"greeting\": \"Hello, NAME!\"}.",
///         params: r#"{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}"#,
///         result: r#"{"type": "object", "properties": {"greeting": {"type": "string"}}}"#,
///     },
///     "echo" => echo,
/// }
/// ```
///
/// An intent may declare, each optional and in any order: `title` and `description` (plain
/// string literals: their escapes must be JSON's too, so `\"`, `\\`, `\n`, `\t`, not `\u{..}`),
/// and `params` and `result`, JSON Schemas (2020-12) as string literals holding their JSON
/// (raw strings read best). `tdm inspect` shows them, an MCP client sees them as the tool's
/// `inputSchema` and `outputSchema`; a package's `plugin.toml` repeats them for the operator to
/// approve (docs/ABI.md section 1a).
///
/// The macro defines one `#[no_mangle]` function (`__tdm_plugin_dispatch`), which the SDK's
/// `tdm_plugin_execute_intent` export calls; it contains no `unsafe` block. On wasm32 it also
/// writes the declarations into the module's `tdm.intents` custom section
/// (`[{"name": ..., "description": ..., "params": ...}, ...]`).
#[macro_export]
macro_rules! plugin {
    ($($name:literal => $handler:path $({ $($key:ident : $value:literal),* $(,)? })?),+ $(,)?) => {
        /// `,{"name":"a",...},{"name":"b"}`: the declared intents, a comma ahead of each.
        #[cfg(target_arch = "wasm32")]
        const __TDM_INTENTS_JSON: &str = concat!(
            $(",{\"name\":", stringify!($name), $($($crate::__intent_member!($key $value),)*)? "}"),+
        );
        /// The `tdm.intents` section: `[` and the list without its first comma, then `]`.
        #[cfg(target_arch = "wasm32")]
        #[unsafe(link_section = "tdm.intents")]
        #[used]
        static __TDM_INTENTS: [u8; __TDM_INTENTS_JSON.len() + 1] = {
            let json = __TDM_INTENTS_JSON.as_bytes();
            let mut section = [b'['; __TDM_INTENTS_JSON.len() + 1];
            let mut i = 1;
            while i < json.len() {
                section[i] = json[i];
                i += 1;
            }
            section[json.len()] = b']';
            section
        };
        /// The intent table of this plugin (generated by `tdm_plugin::plugin!`).
        #[unsafe(no_mangle)]
        #[doc(hidden)]
        pub fn __tdm_plugin_dispatch(method: &str, params: &[u8]) -> $crate::__Response {
            match method {
                $($name => $crate::__run_intent(method, params, $handler),)+
                _ => $crate::__unknown_intent(method, &[$($name),+]),
            }
        }
    };
}

/// One member of an intent's declaration in the `tdm.intents` section (used by [`plugin!`]):
/// `title` and `description` as JSON strings, `params` and `result` as the JSON they hold.
#[doc(hidden)]
#[macro_export]
macro_rules! __intent_member {
    (title $value:literal) => {
        concat!(",\"title\":", stringify!($value))
    };
    (description $value:literal) => {
        concat!(",\"description\":", stringify!($value))
    };
    (params $value:literal) => {
        concat!(",\"params\":", $value)
    };
    (result $value:literal) => {
        concat!(",\"result\":", $value)
    };
}
