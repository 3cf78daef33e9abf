//! # tdm-sdk
//!
//! The std embedding of Contour: what a program needs to run plugins on a machine with files, a
//! clock and a network. The `tdm` binary (`std-host/tdm`) is one front end over it: it parses
//! flags into [`session::SessionOptions`] and prints what comes back. This crate holds no
//! flags, no line editor and no terminal code, and does not know which command was typed: what
//! it has to tell an operator (a plugin's log line, an audit log that cannot be written) comes
//! back as data ([`intents::Notice`]); every intent runs through one call,
//! [`session::Session::run`], on the same `contour_core::Sandbox`.
//!
//! | module | what it owns |
//! | --- | --- |
//! | [`session`] | one plugin and everything it runs with: environment, host intents, grants, limits, declared intents, output sink |
//! | [`environment`] | the real and seeded environments, cancellable (Ctrl-C), and the one place one is chosen |
//! | [`intents`] | the std host intents (dist, log, net, tool, vault, context) and the audit log |
//! | [`operator`], [`changes`], [`upgrades`] | install, approve, revoke, uninstall, the approved-launch check, what changed since an approval, `outdated` and `upgrade` |
//! | [`workspace`], [`package`], [`package_copy`] | state on disk, `plugin.toml`, copying a verified package (only the files its `[files]` lists) |
//! | [`signing`], [`publisher`] | minisign keys and signatures, and a package's signature checked on every read |
//! | [`hub`], [`trusted_hubs`], [`hub_fetch`], [`http_agent`] | a hub's index and entries (semver), hubs trusted by key (signature, expiry, rollback), reading a hub over HTTP |
//! | [`publish`], [`utc`] | the publisher's side: keys, `pack`, `hub init` and `hub publish`; index timestamps |
//! | [`declared`] | the intents a plugin declares (`plugin.toml` or the `tdm.intents` section) |
//! | [`schema`] | the JSON Schemas an intent declares, checked and applied within a budget |
//! | [`limits`], [`params`] | limits as data and size units, params from JSON/@FILE/stdin |
//! | [`files`], [`module_file`], [`dirfs`] | bounded non-blocking reads, `.wasm`/`.wat` loading, preopened dirs for `exec` (read-only, or writable on request) |
//! | [`module_kind`] | whether bytes are a plugin, a WASI command or an Extism plugin (for hints) |
//! | [`traces`], [`command`], [`stdio`] | trace files, WASI commands (`tdm exec`) and their stdio |
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod catalogue;
pub mod changes;
pub mod command;
pub mod declared;
pub mod dirfs;
pub mod environment;
pub mod files;
pub mod history;
pub mod http_agent;
pub mod hub;
pub mod hub_fetch;
pub mod intents;
pub mod limits;
pub mod module_file;
pub mod module_kind;
pub mod operator;
pub mod package;
pub mod package_copy;
pub mod params;
pub mod publish;
pub mod publisher;
pub mod schema;
pub mod session;
pub mod signing;
pub mod stdio;
mod strict_map;
pub mod traces;
pub mod trusted_hubs;
pub mod upgrades;
pub mod utc;
pub mod workspace;

pub use environment::{Cancel, EnvironmentChoice, HostEnvironment, SeededEnvironment};
pub use module_file::{read_module, ModuleFileError};

/// The embedding guide (docs/embedding.md): its code blocks run as doctests of this crate.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/embedding.md")]
pub struct EmbeddingGuide;
