//! # tdm-sdk
//!
//! The std embedding of Contour and the `tdm` command-line tool built on it. Library first: the
//! binary (`main.rs`, [`cli`]) only parses flags and calls these modules; everything runs
//! through the same `contour_core::Sandbox`.
//!
//! | module | what it owns |
//! | --- | --- |
//! | [`session`] | one plugin and everything it runs with: environment, host intents, grants, limits, declared intents, output sink |
//! | [`environment`] | the real and seeded environments, cancellable (Ctrl-C), and the one place one is chosen |
//! | [`intents`] | the std host intents (dist, log, net, tool, vault, context) and the audit log |
//! | [`operator`] | install, approve, revoke, uninstall, and the approved-launch check |
//! | [`workspace`], [`package`], [`package_copy`] | state on disk, `plugin.toml` and hubs, copying a verified package |
//! | [`declared`] | the intents a plugin declares (`plugin.toml` or the `tdm.intents` section) |
//! | [`limits`], [`params`], [`hints`] | limit flags and size units, params from JSON/@FILE/stdin, front-end recovery hints |
//! | [`repl`] | the REPL: entries, commands, the terminal line editor |
//! | [`terminal`], [`table`] | every printed line escaped; aligned tables |
//! | [`files`], [`module_file`], [`dirfs`] | bounded non-blocking reads, `.wasm`/`.wat` loading, read-only dirs for `exec` |
//! | [`module_kind`] | whether bytes are a plugin, a WASI command or an Extism plugin (for hints) |
//! | [`cli`], [`exit`] | the `tdm` subcommands (one module each) and their exit codes |
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod command;
pub mod declared;
pub mod dirfs;
pub mod environment;
pub mod exit;
pub mod files;
pub mod hints;
pub mod intents;
pub mod limits;
pub mod module_file;
pub mod module_kind;
pub mod operator;
pub mod package;
pub mod package_copy;
pub mod params;
pub mod repl;
pub mod session;
pub mod stdio;
pub mod stdout_delivery;
pub mod strict_map;
pub mod table;
pub mod terminal;
pub mod traces;
pub mod workspace;

pub use environment::{Cancel, EnvironmentChoice, HostEnvironment, SeededEnvironment};
pub use module_file::{read_module, ModuleFileError};

/// The embedding guide (docs/embedding.md): its code blocks run as doctests of this crate.
#[cfg(doctest)]
#[doc = include_str!("../../docs/embedding.md")]
pub struct EmbeddingGuide;
