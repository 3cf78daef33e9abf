//! The process side of the shim: argv and environment, clocks, entropy, exit and yield. Clock
//! and entropy answers come from the embedder's `Environment`; entropy is charged per byte.

use super::call::Shim;
use super::errno::{Errno, WasiError};
use crate::env::Clock;
use crate::guest::Guest;
use crate::meter::Run;
use alloc::vec::Vec;

/// Writes a NUL-terminated string list (args or environ) the way `*_get` expects: a pointer per
/// item at `ptrs`, the items one after another at `buf`. Charged for the bytes written.
fn write_list(guest: &mut Guest<'_>, run: &mut Run, list: Vec<Vec<u8>>, ptrs: u32, buf: u32) -> Result<(), WasiError> {
    let bytes: u64 = list.iter().map(|item| item.len() as u64 + 4).sum();
    run.charge_bytes(bytes)?;
    let mut offset = buf;
    for (i, item) in list.iter().enumerate() {
        let slot = u32::try_from(i).ok().and_then(|i| i.checked_mul(4)).and_then(|i| ptrs.checked_add(i));
        guest.set_u32(slot.ok_or(Errno::Fault)?, offset)?;
        guest.set(offset, item)?;
        let len = u32::try_from(item.len()).map_err(|_| Errno::Fault)?;
        offset = offset.checked_add(len).ok_or(Errno::Fault)?;
    }
    Ok(())
}

fn write_sizes(guest: &mut Guest<'_>, list: &[Vec<u8>], count_ptr: u32, size_ptr: u32) -> Result<(), WasiError> {
    let count = u32::try_from(list.len()).map_err(|_| Errno::Inval)?;
    let size = list.iter().map(|s| s.len() as u64).sum::<u64>();
    guest.set_u32(count_ptr, count)?;
    guest.set_u32(size_ptr, u32::try_from(size).map_err(|_| Errno::Inval)?)?;
    Ok(())
}

/// `args_sizes_get`: the count and total size of argv.
pub(crate) fn args_sizes_get(g: &mut Guest<'_>, s: &mut Shim<'_>, count: u32, size: u32) -> Result<(), WasiError> {
    write_sizes(g, &s.wasi.args, count, size)
}

/// `args_get`: argv, NUL-terminated.
pub(crate) fn args_get(g: &mut Guest<'_>, s: &mut Shim<'_>, ptrs: u32, buf: u32) -> Result<(), WasiError> {
    let args = s.wasi.args.clone();
    write_list(g, s.run, args, ptrs, buf)
}

/// `environ_sizes_get`: the count and total size of the environment.
pub(crate) fn environ_sizes_get(g: &mut Guest<'_>, s: &mut Shim<'_>, count: u32, size: u32) -> Result<(), WasiError> {
    write_sizes(g, &s.wasi.environ, count, size)
}

/// `environ_get`: the environment, `KEY=VALUE` NUL-terminated.
pub(crate) fn environ_get(g: &mut Guest<'_>, s: &mut Shim<'_>, ptrs: u32, buf: u32) -> Result<(), WasiError> {
    let environ = s.wasi.environ.clone();
    write_list(g, s.run, environ, ptrs, buf)
}

/// `clock_res_get`: a clock's resolution, from the environment.
pub(crate) fn clock_res_get(g: &mut Guest<'_>, s: &mut Shim<'_>, id: u32, out: u32) -> Result<(), WasiError> {
    let clock = Clock::from_wasi(id).ok_or(Errno::Inval)?;
    g.range(out, 8)?;
    Ok(g.set_u64(out, s.run.input_resolution(clock))?)
}

/// `clock_time_get`: a clock reading, from the environment.
pub(crate) fn clock_time_get(
    g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    id: u32,
    _precision: u64,
    out: u32,
) -> Result<(), WasiError> {
    let clock = Clock::from_wasi(id).ok_or(Errno::Inval)?;
    g.range(out, 8)?;
    Ok(g.set_u64(out, s.run.input_clock(clock))?)
}

/// `random_get`: entropy from the environment, charged per byte.
pub(crate) fn random_get(g: &mut Guest<'_>, s: &mut Shim<'_>, buf: u32, len: u32) -> Result<(), WasiError> {
    g.range(buf, len)?;
    s.run.charge_bytes(u64::from(len))?;
    s.run.input_random(g.bytes_mut(buf, len)?);
    Ok(())
}

/// `proc_raise`: signals are not supported.
pub(crate) fn proc_raise(_g: &mut Guest<'_>, _s: &mut Shim<'_>, _sig: u32) -> Result<(), WasiError> {
    Err(Errno::Nosys.into())
}

/// `sched_yield`: nothing else runs, so it returns at once.
pub(crate) fn sched_yield(_g: &mut Guest<'_>, _s: &mut Shim<'_>) -> Result<(), WasiError> {
    Ok(())
}

/// `proc_exit`: ends the run with `code`. It runs outside the meter: nothing is left to charge,
/// and the exit is the guest's own.
pub(crate) fn proc_exit(code: i32) -> wasmi::Error {
    wasmi::Error::i32_exit(code)
}
