//! Linking the shim: every Preview1 function defined on the linker, one module of them at a
//! time.

use super::{fd, path, poll, proc};
use crate::state::HostState;
use wasmi::Linker;

/// Defines every Preview1 function on `linker`.
pub fn link(linker: &mut Linker<HostState>) -> Result<(), wasmi::Error> {
    proc::link(linker)?;
    fd::link(linker)?;
    path::link(linker)?;
    poll::link(linker)?;
    Ok(())
}
