//! What a command run (`tdm exec`) takes from the session: its environment and its output sink.

use crate::environment::{Cancel, EnvironmentChoice};
use contour_core::wasi::{OutputSink, Written};
use contour_core::{Environment, Policy};
use std::io::{self, Write};
use std::time::Duration;

/// Streams a command's (`tdm exec`) stdout and stderr to tdm's own, byte for byte: a command's
/// output is its own, not the plugin output tdm marks and escapes. A closed reader (EPIPE) is
/// reported to the guest.
#[derive(Debug, Default)]
pub struct CommandOutput;

impl OutputSink for CommandOutput {
    fn write(&mut self, stderr: bool, bytes: &[u8]) -> Written {
        let written = if stderr {
            io::stderr().write_all(bytes)
        } else {
            let mut out = io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        };
        match written {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Written::Closed,
            _ => Written::Taken,
        }
    }
}

/// The environment of a command run (`tdm exec`): the same choice as a plugin's, cancellable
/// when `cancel` is given (Ctrl-C).
pub fn command_environment(seed: Option<u64>, policy: &Policy, cancel: Option<Cancel>) -> Box<dyn Environment> {
    EnvironmentChoice { seed, cancel }.environment(Duration::from_millis(policy.timeout_ms))
}
