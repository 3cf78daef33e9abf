//! The WASI Preview1 shim (DESIGN section 5), no_std. Every function of the allowlist's
//! `PREVIEW1` table is linked here, each with its exact signature; which ones a module may
//! import is the load-time check's decision. Every nondeterministic answer comes from the
//! `Environment`, files only from a `ReadOnlyFs`, and every function runs through the meter:
//! fuel for the work a guest-chosen size asks for, the deadline before and after.
//!
//! | module | owns |
//! |---|---|
//! | `state` | argv, environ, the fd table, the output sink, stdin, the stdio kinds |
//! | `stdio` | `OutputSink` and the bounded `Capture`, `InputSource`, `StdioKind` |
//! | `errno` | the errno values |
//! | `proc` | args, environ, clocks, random, exit, yield |
//! | `fd` | fd_* (read, write, seek, stat, readdir, ...) and sockets |
//! | `path` | path_* on the read-only filesystem |
//! | `poll` | poll_oneoff |

mod errno;
mod fd;
mod path;
mod poll;
mod proc;
mod state;
mod stdio;

pub use crate::allowlist::WASI_MODULE as MODULE;
pub use errno::Errno;
pub use state::{WasiConfig, WasiState};
pub use stdio::{Capture, Input, InputSource, NoInput, OutputSink, StdioKind, Written};

use crate::guest::Guest;
use crate::meter;
use crate::state::HostState;
use errno::WasiError;
use wasmi::{Caller, Linker};

/// The caller type of every shim function.
type C<'a> = Caller<'a, HostState>;

/// Runs a shim function's body through the meter: `Ok` is errno 0, an errno goes back to the
/// guest, a failure ends the run.
fn call(
    caller: &mut C<'_>,
    body: impl FnOnce(&mut Guest<'_>, &mut HostState) -> Result<(), WasiError>,
) -> Result<i32, wasmi::Error> {
    meter::host_work(caller, |guest, state| match body(guest, state) {
        Ok(()) => Ok(Errno::Success as i32),
        Err(WasiError::Errno(errno)) => Ok(errno as i32),
        Err(WasiError::Stop(failure)) => Err(failure),
    })
}

/// Defines every Preview1 function on `linker`.
pub fn link(linker: &mut Linker<HostState>) -> Result<(), wasmi::Error> {
    proc::link(linker)?;
    fd::link(linker)?;
    path::link(linker)?;
    poll::link(linker)?;
    Ok(())
}
