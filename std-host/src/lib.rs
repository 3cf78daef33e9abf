//! # tdm-sdk
//!
//! The std embedding of Contour: loading `.wasm`/`.wat` files, the real clock and OS entropy,
//! the wall-clock deadline, a read-only directory for `tdm exec --dir`, and the `tdm`
//! command-line tool built on them. Everything here calls the same `contour_core::Sandbox`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod declared;
pub mod hints;
pub mod limits;
pub mod params;
pub mod table;
pub mod dirfs;
pub mod environment;
pub mod files;
pub mod intents;
pub mod module_file;
pub mod operator;
pub mod package;
pub mod package_copy;
pub mod repl;
pub mod terminal;
pub mod workspace;

pub use environment::{HostEnvironment, SeededEnvironment};
pub use module_file::{read_module, ModuleFileError};
