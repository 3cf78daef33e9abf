//! What every shim function runs through and on: the store type's view of its WASI state and
//! run (`WasiView`, as wasmtime's), and the wrapper that runs a function's body through the
//! meter (fuel for guest-sized work, the deadline before and after) with errno or a failure as
//! the result.

use super::errno::{Errno, WasiError};
use super::state::WasiState;
use crate::guest::Guest;
use crate::meter::{self, Metered, Run};
use wasmi::Caller;

/// What a shim function works on: the instance's WASI state and the run it is metered in,
/// borrowed side by side.
pub(crate) struct Shim<'a> {
    /// Args, environment, fds and output.
    pub(crate) wasi: &'a mut WasiState,
    /// The run's fuel, deadline and inputs.
    pub(crate) run: &'a mut Run,
}

/// A store type the shim can serve: it keeps a `WasiState` beside its `Run`. The shim knows
/// its store only through this view.
pub(crate) trait WasiView: Metered {
    /// The WASI state and the run, borrowed side by side.
    fn shim(&mut self) -> Shim<'_>;
}

/// Runs a shim function's body through the meter: `Ok` is errno 0, an errno goes back to the
/// guest, a failure ends the run.
pub(crate) fn shim<T: WasiView>(
    caller: &mut Caller<'_, T>,
    body: impl FnOnce(&mut Guest<'_>, &mut Shim<'_>) -> Result<(), WasiError>,
) -> Result<i32, wasmi::Error> {
    meter::host_work(caller, |guest, data| match body(guest, &mut data.shim()) {
        Ok(()) => Ok(Errno::Success as i32),
        Err(WasiError::Errno(errno)) => Ok(errno as i32),
        Err(WasiError::Stop(failure)) => Err(failure),
    })
}
