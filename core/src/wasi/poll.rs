//! `poll_oneoff`: fd subscriptions on stdout, stderr and files are ready at once, a read
//! subscription on stdin when its `InputSource` has bytes or is at its end. When nothing is
//! ready the host waits for stdin (if subscribed) or sleeps until the earliest clock
//! subscription, through the environment (a virtual clock just advances), and never past the
//! run's deadline: a wait the deadline cuts short ends the run with `deadline_exceeded`. A wait
//! on stdin is real time, so under a virtual clock it does not advance the clock.
//! Subscriptions and events are charged at the bulk-memory rate.

use super::call::Shim;
use super::errno::{Errno, WasiError};
use super::state::Fd;
use crate::env::{Clock, Slept};
use crate::guest::Guest;
use alloc::vec::Vec;

const SUBSCRIPTION_BYTES: u32 = 48;
const EVENT_BYTES: u32 = 32;

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut field = [0u8; 8];
    field.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(field)
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut field = [0u8; 4];
    field.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(field)
}

fn event(userdata: u64, errno: Errno, tag: u8) -> [u8; 32] {
    let mut event = [0u8; 32];
    event[0..8].copy_from_slice(&userdata.to_le_bytes());
    event[8..10].copy_from_slice(&(errno as u16).to_le_bytes());
    event[10] = tag;
    event
}

/// `poll_oneoff`.
pub(crate) fn poll_oneoff(
    guest: &mut Guest<'_>,
    state: &mut Shim<'_>,
    subs: u32,
    events: u32,
    n: u32,
    nevents: u32,
) -> Result<(), WasiError> {
    if n == 0 {
        return Err(Errno::Inval.into());
    }
    let subs_len = n.checked_mul(SUBSCRIPTION_BYTES).ok_or(Errno::Fault)?;
    guest.range(subs, subs_len)?;
    guest.range(events, n.checked_mul(EVENT_BYTES).ok_or(Errno::Fault)?)?;
    guest.range(nevents, 4)?;
    state.run.charge_bytes(u64::from(n) * u64::from(SUBSCRIPTION_BYTES + EVENT_BYTES))?;
    let mut ready: Vec<[u8; 32]> = Vec::new();
    let mut earliest: Option<(u64, Vec<u64>)> = None;
    // Read subscriptions on stdin that were not ready at once, by userdata.
    let mut stdin_waiting: Vec<u64> = Vec::new();
    let raw = guest.bytes(subs, subs_len)?;
    for sub in raw.chunks_exact(SUBSCRIPTION_BYTES as usize) {
        let userdata = u64_at(sub, 0);
        let tag = sub[8];
        match tag {
            0 => {
                let Some(clock) = Clock::from_wasi(u32_at(sub, 16)) else {
                    ready.push(event(userdata, Errno::Inval, tag));
                    continue;
                };
                let timeout = u64_at(sub, 24);
                let absolute = u16::from_le_bytes([sub[40], sub[41]]) & 1 != 0;
                let wait = if absolute { timeout.saturating_sub(state.run.input_clock(clock)) } else { timeout };
                match &mut earliest {
                    Some((best, who)) if wait == *best => who.push(userdata),
                    Some((best, _)) if wait > *best => {}
                    _ => earliest = Some((wait, alloc::vec![userdata])),
                }
            }
            1 | 2 => {
                let fd = state.wasi.fd(u32_at(sub, 16));
                let on_stdin = tag == 1 && matches!(fd, Ok(Fd::Stdin));
                let errno = match (fd, tag) {
                    (Err(e), _) => e,
                    (Ok(Fd::Stdin | Fd::File { .. }), 1) | (Ok(Fd::Stdout | Fd::Stderr), 2) => Errno::Success,
                    (Ok(_), _) => Errno::Badf,
                };
                if on_stdin && !state.wasi.stdin.wait_ready(0) {
                    stdin_waiting.push(userdata);
                    continue;
                }
                ready.push(event(userdata, errno, tag));
            }
            _ => return Err(Errno::Inval.into()),
        }
    }
    if ready.is_empty() && !stdin_waiting.is_empty() {
        ready = wait_for_stdin(state, stdin_waiting, earliest)?;
    } else if ready.is_empty() {
        if let Some((wait, who)) = earliest {
            let remaining = state.run.deadline_remaining(state.run.fuel_used())?;
            if state.run.input_sleep(wait, remaining) == Slept::CutAtDeadline {
                return Err(state.run.stop_failure().into());
            }
            ready.extend(who.into_iter().map(|userdata| event(userdata, Errno::Success, 0)));
        }
    }
    for (i, event) in ready.iter().enumerate() {
        // `ready` has at most `n` entries and the events region was checked for `n`.
        guest.set(events + EVENT_BYTES * i as u32, event)?;
    }
    Ok(guest.set_u32(nevents, ready.len() as u32)?)
}

/// Waits for stdin to become readable, at most until the earliest clock subscription fires
/// (`earliest`: its wait and userdatas) and never past the run's deadline; returns the events.
fn wait_for_stdin(
    state: &mut Shim<'_>,
    readers: Vec<u64>,
    earliest: Option<(u64, Vec<u64>)>,
) -> Result<Vec<[u8; 32]>, WasiError> {
    let remaining = state.run.deadline_remaining(state.run.fuel_used())?;
    let clock_wait = earliest.as_ref().map(|(wait, _)| *wait);
    let wait = match (clock_wait, remaining) {
        (Some(clock), Some(left)) => clock.min(left),
        (Some(only), None) | (None, Some(only)) => only,
        (None, None) => u64::MAX,
    };
    if state.wasi.stdin.wait_ready(wait) {
        return Ok(readers.into_iter().map(|userdata| event(userdata, Errno::Success, 1)).collect());
    }
    match earliest {
        Some((clock, who)) if remaining.is_none_or(|left| clock <= left) => {
            Ok(who.into_iter().map(|userdata| event(userdata, Errno::Success, 0)).collect())
        }
        _ => Err(state.run.stop_failure().into()),
    }
}
