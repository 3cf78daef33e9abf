//! The process side of the shim: argv and environment, clocks, entropy, exit and yield. Clock
//! and entropy answers come from the embedder's `Environment`; entropy is charged per byte.

use super::call::{call, C};
use super::errno::{Errno, WasiError};
use crate::env::Clock;
use crate::guest::Guest;
use crate::state::HostState;
use alloc::vec::Vec;
use wasmi::Linker;

/// Writes a NUL-terminated string list (args or environ) the way `*_get` expects: a pointer per
/// item at `ptrs`, the items one after another at `buf`. Charged for the bytes written.
fn write_list(
    guest: &mut Guest<'_>,
    state: &mut HostState,
    list: Vec<Vec<u8>>,
    ptrs: u32,
    buf: u32,
) -> Result<(), WasiError> {
    let bytes: u64 = list.iter().map(|item| item.len() as u64 + 4).sum();
    state.charge_bytes(bytes)?;
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

pub(super) fn link(linker: &mut Linker<HostState>) -> Result<(), wasmi::Error> {
    let m = super::MODULE;
    linker.func_wrap(m, "args_sizes_get", |mut c: C<'_>, count: u32, size: u32| {
        call(&mut c, |g, s| write_sizes(g, &s.wasi.args, count, size))
    })?;
    linker.func_wrap(m, "args_get", |mut c: C<'_>, ptrs: u32, buf: u32| {
        call(&mut c, |g, s| {
            let args = s.wasi.args.clone();
            write_list(g, s, args, ptrs, buf)
        })
    })?;
    linker.func_wrap(m, "environ_sizes_get", |mut c: C<'_>, count: u32, size: u32| {
        call(&mut c, |g, s| write_sizes(g, &s.wasi.environ, count, size))
    })?;
    linker.func_wrap(m, "environ_get", |mut c: C<'_>, ptrs: u32, buf: u32| {
        call(&mut c, |g, s| {
            let environ = s.wasi.environ.clone();
            write_list(g, s, environ, ptrs, buf)
        })
    })?;
    linker.func_wrap(m, "clock_res_get", |mut c: C<'_>, id: u32, out: u32| {
        call(&mut c, |g, s| {
            let clock = Clock::from_wasi(id).ok_or(Errno::Inval)?;
            g.range(out, 8)?;
            Ok(g.set_u64(out, s.input_resolution(clock))?)
        })
    })?;
    linker.func_wrap(m, "clock_time_get", |mut c: C<'_>, id: u32, _precision: u64, out: u32| {
        call(&mut c, |g, s| {
            let clock = Clock::from_wasi(id).ok_or(Errno::Inval)?;
            g.range(out, 8)?;
            Ok(g.set_u64(out, s.input_clock(clock))?)
        })
    })?;
    linker.func_wrap(m, "random_get", |mut c: C<'_>, buf: u32, len: u32| {
        call(&mut c, |g, s| {
            g.range(buf, len)?;
            s.charge_bytes(u64::from(len))?;
            s.input_random(g.bytes_mut(buf, len)?);
            Ok(())
        })
    })?;
    linker.func_wrap(m, "proc_exit", |_c: C<'_>, code: i32| -> Result<(), wasmi::Error> {
        Err(wasmi::Error::i32_exit(code))
    })?;
    linker.func_wrap(m, "proc_raise", |mut c: C<'_>, _sig: u32| call(&mut c, |_, _| Err(Errno::Nosys.into())))?;
    linker.func_wrap(m, "sched_yield", |mut c: C<'_>| call(&mut c, |_, _| Ok(())))?;
    Ok(())
}
