//! The two host-intent imports: `tdm_host_call(ptr, len) -> i32` reads a request, checks the
//! permission, asks the embedder, and keeps the answer pending; `tdm_host_response(ptr, cap)`
//! copies it out. Every attempt counts against the run's host-call limit and is audited,
//! readable or not; request and answer bytes are charged at the bulk-memory rate, and what a
//! nested sandbox spent is charged to this run's budgets.

use super::request::read_request_within;
use super::HostCalls;
use super::{
    AuditRecord, CallContext, HostAnswer, HostCall, Method, Spent, ERR_BAD_POINTER, ERR_CAP_TOO_SMALL,
    ERR_NOTHING_PENDING, ERR_NOT_JSON_RPC, ERR_TOO_LARGE, UNREADABLE,
};
use crate::guest::Guest;
use crate::meter::{self, Metered, Run};
use crate::outcome::Outcome;
use crate::reason::{BlockedReason, Failure};
use crate::wasi::OutputSink;
use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
use serde_json::value::RawValue;
use wasmi::Caller;

/// What a host-intent import works on: the per-run host-call state, the run it is metered in,
/// and the output a nested tool's lines are added to, borrowed side by side.
pub(crate) struct HostCtx<'a> {
    /// Grants, the embedder's methods, counters and the pending answer.
    pub(crate) host: &'a mut HostCalls,
    /// The run's fuel, deadline and inputs.
    pub(crate) run: &'a mut Run,
    /// Where the guest's stdout and stderr go.
    pub(crate) output: &'a mut dyn OutputSink,
}

/// A store type the host-intent imports can serve, known to them only through this view.
pub(crate) trait HostView: Metered {
    /// The host-call state, the run and the output, borrowed side by side.
    fn host_ctx(&mut self) -> HostCtx<'_>;
}

/// Runs a host-intent import's body through the meter.
pub(crate) fn hostcall<T: HostView>(
    caller: &mut Caller<'_, T>,
    body: impl FnOnce(&mut Guest<'_>, &mut HostCtx<'_>) -> Result<i32, Failure>,
) -> Result<i32, wasmi::Error> {
    meter::host_work(caller, |guest, data| body(guest, &mut data.host_ctx()))
}

/// The bytes the plugin reads back with `tdm_host_response`: a completed outcome with the
/// output (as the embedder's JSON text), or the failure in its one shape.
fn outcome_bytes(result: Result<Box<RawValue>, Failure>) -> Vec<u8> {
    match result {
        Ok(output) => {
            let output = output.get();
            let mut bytes = Vec::with_capacity(output.len() + 32);
            bytes.extend_from_slice(b"{\"status\":\"completed\",\"output\":");
            bytes.extend_from_slice(output.as_bytes());
            bytes.push(b'}');
            bytes
        }
        Err(failure) => Outcome::from_failure(failure).json.into_bytes(),
    }
}

/// The host-call limit failure, naming both limits.
fn over_limit(state: &HostCtx<'_>) -> Failure {
    Failure::new(
        BlockedReason::HostCallLimitExceeded,
        format!("The limits are {} calls and {} bytes per intent.", state.host.max_calls, state.host.max_bytes),
    )
}

/// Records an attempt that could not be read and answers it with `code`.
fn unreadable(state: &mut HostCtx<'_>, mut record: AuditRecord, code: i32) -> Result<i32, Failure> {
    record.reason = Some(BlockedReason::InvalidHostRequest);
    state.host.intents.audit(&record);
    Ok(code)
}

/// Adds what a nested sandbox spent to this run: its host calls and bytes, its output.
fn absorb(state: &mut HostCtx<'_>, spent: &Spent) {
    state.host.calls = state.host.calls.saturating_add(spent.host_calls);
    state.host.bytes = state.host.bytes.saturating_add(spent.host_bytes);
    for (stderr, bytes) in [(false, &spent.stdout), (true, &spent.stderr)] {
        if !bytes.is_empty() {
            // A closed output only loses the nested tool's lines; the call goes on. The write
            // waits at most until the deadline, which the call looks at when it returns.
            let wait = state.run.deadline_wait_ns();
            let _ = state.output.write(stderr, bytes, wait);
        }
    }
}

/// Asks the embedder for its answer to an allowed call, telling it what is left of the run.
fn ask(state: &mut HostCtx<'_>, call: &HostCall) -> Result<HostAnswer, Failure> {
    let context = CallContext {
        remaining_ns: state.run.deadline_remaining(state.run.fuel_used())?,
        fuel_remaining: state.run.fuel_remaining(),
        host_calls_remaining: state.host.max_calls.saturating_sub(state.host.calls),
        host_bytes_remaining: state.host.max_bytes.saturating_sub(state.host.bytes),
    };
    Ok(state.run.input_host_call(&mut *state.host.intents, call, &context))
}

/// Charges what a call cost (`fuel` the embedder spent, `response` bytes) and looks at the
/// deadline (as `host_work` does next, at the same fuel) and the host-call limits, before the
/// call is audited: a call whose cost ends the run is recorded with the reason the outcome
/// gives, without the answer the plugin never gets.
fn settle(state: &mut HostCtx<'_>, fuel: u64, response: usize) -> Result<(), Failure> {
    state.run.charge(fuel)?;
    state.run.charge_bytes(response as u64)?;
    state.run.deadline_remaining(state.run.fuel_used())?;
    if state.host.calls > state.host.max_calls || state.host.bytes > state.host.max_bytes {
        return Err(over_limit(state));
    }
    Ok(())
}

/// `tdm_host_call(ptr, len)`, inside the meter.
pub(crate) fn tdm_host_call(
    guest: &mut Guest<'_>,
    state: &mut HostCtx<'_>,
    ptr: u32,
    len: u32,
) -> Result<i32, Failure> {
    state.host.calls = state.host.calls.saturating_add(1);
    let mut record = AuditRecord {
        method: Cow::Borrowed(UNREADABLE),
        permission: None,
        granted: false,
        bytes: 0,
        fuel_used: state.run.fuel_used(),
        reason: None,
    };
    if state.host.calls > state.host.max_calls {
        record.reason = Some(BlockedReason::HostCallLimitExceeded);
        state.host.intents.audit(&record);
        return Err(over_limit(state));
    }
    if len > state.host.max_request_bytes {
        return unreadable(state, record, ERR_TOO_LARGE);
    }
    let Ok(bytes) = guest.bytes(ptr, len) else {
        return unreadable(state, record, ERR_BAD_POINTER);
    };
    record.bytes = u64::from(len);
    state.host.bytes = state.host.bytes.saturating_add(u64::from(len));
    state.run.charge_bytes(u64::from(len))?;
    let Some((name, call)) = read_request_within(bytes, state.host.max_request_depth) else {
        return unreadable(state, record, ERR_NOT_JSON_RPC);
    };
    let method = Method::from_name(&name);
    record.method = method.map_or_else(|| Cow::Owned(name.to_string()), |m| Cow::Borrowed(m.as_str()));
    let answer = match call {
        Err(failure) => HostAnswer { result: Err(failure), spent: Spent::default() },
        Ok(call) => {
            record.permission = call.permission().as_ref().map(ToString::to_string);
            if state.host.bytes > state.host.max_bytes {
                record.reason = Some(BlockedReason::HostCallLimitExceeded);
                state.host.intents.audit(&record);
                return Err(over_limit(state));
            }
            if call.allowed_by(&state.host.grants) {
                let answer = ask(state, &call)?;
                record.granted = !matches!(
                    &answer.result,
                    Err(f) if matches!(f.reason, BlockedReason::PermissionDenied | BlockedReason::Forbidden)
                );
                answer
            } else {
                let missing = record.permission.as_deref().unwrap_or_default();
                HostAnswer::failed(BlockedReason::PermissionDenied, format!("`{name}` needs `{missing}`."))
            }
        }
    };
    let HostAnswer { result, spent } = answer;
    let answered = result.as_ref().err().map(|f| f.reason);
    absorb(state, &spent);
    let response = outcome_bytes(result);
    state.host.bytes = state.host.bytes.saturating_add(response.len() as u64);
    if let Err(failure) = settle(state, spent.fuel, response.len()) {
        record.reason = Some(failure.reason);
        state.host.intents.audit(&record);
        return Err(failure);
    }
    record.reason = answered;
    record.bytes += response.len() as u64;
    state.host.intents.audit(&record);
    let n = i32::try_from(response.len()).unwrap_or(i32::MAX);
    state.host.pending = Some(response);
    Ok(n)
}

/// `tdm_host_response(ptr, cap)`, inside the meter.
pub(crate) fn tdm_host_response(
    guest: &mut Guest<'_>,
    state: &mut HostCtx<'_>,
    ptr: u32,
    cap: u32,
) -> Result<i32, Failure> {
    let Some(len) = state.host.pending.as_ref().map(Vec::len) else {
        return Ok(ERR_NOTHING_PENDING);
    };
    if (cap as usize) < len {
        return Ok(ERR_CAP_TOO_SMALL);
    }
    let Ok(target) = guest.bytes_mut(ptr, u32::try_from(len).unwrap_or(u32::MAX)) else {
        return Ok(ERR_BAD_POINTER);
    };
    let Some(pending) = state.host.pending.take() else {
        return Ok(ERR_NOTHING_PENDING);
    };
    target.copy_from_slice(&pending);
    state.run.charge_bytes(len as u64)?;
    Ok(i32::try_from(len).unwrap_or(i32::MAX))
}
