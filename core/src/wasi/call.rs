//! The wrapper every shim function runs through: the meter (fuel for guest-sized work, the
//! deadline before and after), and errno or failure as the result.

use super::errno::{Errno, WasiError};
use crate::guest::Guest;
use crate::meter;
use crate::state::HostState;
use wasmi::Caller;

/// The caller type of every shim function.
pub(super) type C<'a> = Caller<'a, HostState>;

/// Runs a shim function's body through the meter: `Ok` is errno 0, an errno goes back to the
/// guest, a failure ends the run.
pub(super) fn call(
    caller: &mut C<'_>,
    body: impl FnOnce(&mut Guest<'_>, &mut HostState) -> Result<(), WasiError>,
) -> Result<i32, wasmi::Error> {
    meter::host_work(caller, |guest, state| match body(guest, state) {
        Ok(()) => Ok(Errno::Success as i32),
        Err(WasiError::Errno(errno)) => Ok(errno as i32),
        Err(WasiError::Stop(failure)) => Err(failure),
    })
}
