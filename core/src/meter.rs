//! Fuel and the deadline: one budget and one wall-clock deadline per run (an intent together
//! with the launch it triggered, or a command), enforced on every path guest code or host work
//! takes. Wasm runs in fuel slices with the deadline checked between them; the start function,
//! which wasmi cannot pause, gets one fixed slice; host functions charge fuel for the work a
//! guest-chosen size asks of them (at wasmi's bulk-memory rate) and check the deadline before
//! and after it.

use crate::env::Environment;
use crate::guest::{self, Guest};
use crate::policy::Policy;
use crate::reason::{BlockedReason, Failure};
use alloc::boxed::Box;
use alloc::format;
use wasmi::{Caller, Memory, Store, TypedFunc, TypedResumableCall, WasmParams, WasmResults};

/// Bytes of host work per unit of fuel: the rate wasmi charges bulk memory operations at (the
/// engine is configured with the same figure).
pub const BYTES_PER_FUEL: u64 = 64;

/// Fuel one call into the embedder's filesystem costs (an open, a stat, a directory read):
/// about the wall time of that many Wasm instructions, so a loop of such calls is bounded by
/// fuel the way a loop of instructions is.
pub const FS_CALL_FUEL: u64 = 1_000;

/// Fuel for `bytes` of host work, rounded up.
pub fn fuel_for_bytes(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_FUEL)
}

/// The fuel budget of the current run and how much of it was handed to the store so far (fuel
/// used = given - fuel left in the store). While a host function runs, `host_available` is what
/// its work may still be charged and `host_charged` what it was charged so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FuelAccount {
    pub(crate) budget: u64,
    pub(crate) given: u64,
    pub(crate) host_available: u64,
    pub(crate) host_charged: u64,
}

/// Where a replayed run must be cut: the recording was cut by its deadline once it had used
/// `fuel` and read `inputs` inputs, so the replay is cut at the first deadline check where both
/// are reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cut {
    /// Fuel the run had used when it was cut.
    pub fuel: u64,
    /// Inputs the run had read when it was cut.
    pub inputs: u64,
}

/// Why a run was stopped from outside the guest: its deadline passed, or its caller cancelled
/// it (the deadline clock read `u64::MAX`). A replay is cut for the reason its recording was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The wall-clock deadline passed: `deadline_exceeded`.
    Deadline,
    /// The embedder cancelled the run: `cancelled`.
    Cancelled,
}

/// The run's wall-clock deadline on the environment's deadline clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline {
    pub(crate) started_ns: u64,
    pub(crate) timeout_ns: u64,
}

/// One run's account, kept in the store: the embedder's environment (its deadline clock here,
/// its inputs through `input`), the fuel budget, the deadline, where a replay is cut and how
/// many inputs were read.
pub(crate) struct Run {
    /// Every nondeterministic input, and the deadline clock.
    pub(crate) env: Box<dyn Environment>,
    /// The current run's fuel budget.
    pub(crate) fuel: FuelAccount,
    /// The current run's deadline, when the host has a wall clock.
    pub(crate) deadline: Option<Deadline>,
    /// Where a replayed run is cut (see `Cut`), besides the deadline, and why it was.
    pub(crate) cut: Option<(Cut, Stop)>,
    /// Inputs read in the current run (see `input`).
    pub(crate) inputs: u64,
    /// The current run's deadline in milliseconds, as the policy set it.
    pub(crate) timeout_ms: u64,
}

impl Run {
    /// A run account over `env`, with nothing started yet.
    pub(crate) fn new(env: Box<dyn Environment>, timeout_ms: u64) -> Self {
        Self { env, fuel: FuelAccount::default(), deadline: None, cut: None, inputs: 0, timeout_ms }
    }
}

/// A store type the meter can run: it keeps a `Run` and the guest's memory once instantiated.
pub(crate) trait Metered {
    /// The run's account.
    fn run(&self) -> &Run;
    /// The run's account, writable.
    fn run_mut(&mut self) -> &mut Run;
    /// The guest's exported memory, cached after instantiation.
    fn memory(&self) -> Option<Memory>;
}

/// Hands out a run's budget to the store in slices.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meter {
    slice: u64,
}

impl Meter {
    /// Starts a run: a fresh fuel budget, the deadline clock read, no inputs read.
    pub(crate) fn start<T: Metered>(store: &mut Store<T>, policy: &Policy) -> Self {
        let run = store.data_mut().run_mut();
        let started = run.env.deadline_clock_ns();
        run.deadline =
            started.map(|started_ns| Deadline { started_ns, timeout_ns: policy.timeout_ms.saturating_mul(1_000_000) });
        run.fuel = FuelAccount { budget: policy.fuel_per_intent, ..FuelAccount::default() };
        run.inputs = 0;
        run.timeout_ms = policy.timeout_ms;
        let _ = store.set_fuel(0);
        Self { slice: policy.fuel_slice }
    }

    /// Adds up to `amount` fuel from the budget to the store.
    fn give<T: Metered>(store: &mut Store<T>, amount: u64) {
        let account = &mut store.data_mut().run_mut().fuel;
        let amount = amount.min(account.budget.saturating_sub(account.given));
        account.given += amount;
        let current = store.get_fuel().unwrap_or(0);
        // Fuel metering is always on for a sandbox engine, so this cannot fail.
        let _ = store.set_fuel(current.saturating_add(amount));
    }

    /// Returns the fuel left in the store to the budget.
    fn take_back<T: Metered>(store: &mut Store<T>) {
        let left = store.get_fuel().unwrap_or(0);
        let account = &mut store.data_mut().run_mut().fuel;
        account.given = account.given.saturating_sub(left);
        let _ = store.set_fuel(0);
    }

    /// Fuel used so far in this run.
    pub(crate) fn used<T: Metered>(store: &Store<T>) -> u64 {
        store.data().run().fuel.given.saturating_sub(store.get_fuel().unwrap_or(0))
    }

    /// Fails with `deadline_exceeded` once the deadline has passed (the rule of
    /// [`Run::deadline_remaining`]; the fuel used is only read when a replay cuts the run).
    #[inline]
    pub(crate) fn check_deadline<T: Metered>(store: &mut Store<T>) -> Result<(), Failure> {
        let used = if store.data().run().cut.is_some() { Self::used(store) } else { 0 };
        let run = store.data_mut().run_mut();
        match run.remaining(used) {
            Ok(_) => Ok(()),
            Err(stop) => Err(run.failure_for(stop)),
        }
    }

    /// Called when the store ran out of fuel: checks the deadline, then adds slices until the
    /// next basic block can run, or fails with `fuel_exhausted` when the budget is spent.
    fn refuel<T: Metered>(&self, store: &mut Store<T>, required: u64) -> Result<(), Failure> {
        Self::check_deadline(store)?;
        loop {
            let available = store.get_fuel().unwrap_or(0);
            if available >= required {
                return Ok(());
            }
            let FuelAccount { budget, given, .. } = store.data().run().fuel;
            if given >= budget {
                return Err(Failure::new(BlockedReason::FuelExhausted, format!("The budget is {budget} fuel.")));
            }
            Self::give(store, self.slice.max(required - available));
        }
    }

    /// Calls `func` in fuel slices, checking the deadline between slices and when it returns.
    pub(crate) fn call<T: Metered, P: WasmParams, R: WasmResults>(
        &self,
        store: &mut Store<T>,
        func: &TypedFunc<P, R>,
        params: P,
        failure_of: impl Fn(&wasmi::Error, &Store<T>) -> Failure,
    ) -> Result<R, Failure> {
        Self::check_deadline(store)?;
        if store.get_fuel().unwrap_or(0) == 0 {
            Self::give(store, self.slice);
        }
        match func.call_resumable(&mut *store, params) {
            Ok(TypedResumableCall::Finished(results)) => {
                Self::check_deadline(store)?;
                Ok(results)
            }
            Ok(call) => self.go_on(store, call, failure_of),
            Err(e) => Err(failure_of(&e, store)),
        }
    }

    /// Goes on with a call that stopped for fuel or at a host trap: the part of
    /// [`Meter::call`] a call that fits its first slice never takes (kept out of its way).
    #[cold]
    #[inline(never)]
    fn go_on<T: Metered, R: WasmResults>(
        &self,
        store: &mut Store<T>,
        mut call: TypedResumableCall<R>,
        failure_of: impl Fn(&wasmi::Error, &Store<T>) -> Failure,
    ) -> Result<R, Failure> {
        loop {
            match call {
                TypedResumableCall::Finished(results) => {
                    Self::check_deadline(store)?;
                    return Ok(results);
                }
                TypedResumableCall::OutOfFuel(pending) => {
                    self.refuel(store, pending.required_fuel())?;
                    call = pending.resume(&mut *store).map_err(|e| failure_of(&e, store))?;
                }
                TypedResumableCall::HostTrap(trap) => return Err(failure_of(trap.host_error(), store)),
            }
        }
    }

    /// Runs `start` (instantiation with the module's start function) under at most
    /// `start_fuel` of the budget: wasmi runs a start function in one piece, so the deadline
    /// can only be checked by the host functions it calls and when it returns. Unused fuel goes
    /// back to the budget.
    pub(crate) fn run_start<T: Metered, V>(
        store: &mut Store<T>,
        start_fuel: u64,
        start: impl FnOnce(&mut Store<T>) -> Result<V, Failure>,
    ) -> Result<V, Failure> {
        Self::take_back(store);
        let FuelAccount { budget, given, .. } = store.data().run().fuel;
        let capped = start_fuel < budget.saturating_sub(given);
        Self::give(store, start_fuel);
        let result = start(store).map_err(|failure| match failure.reason {
            BlockedReason::FuelExhausted if capped => Failure::new(
                BlockedReason::FuelExhausted,
                format!(
                    "The start function may use at most {start_fuel} fuel: wasmi cannot pause it to check the \
                     deadline. Move set-up work to `_initialize`."
                ),
            ),
            _ => failure,
        });
        Self::take_back(store);
        let value = result?;
        Self::check_deadline(store)?;
        Ok(value)
    }
}

impl Run {
    /// Nanoseconds left before the run's deadline, `deadline_exceeded` once it has passed, or
    /// `None` when this host enforces no wall-clock deadline. The one deadline rule: the meter
    /// checks it between fuel slices and after a call returns, host functions before and after
    /// their work, sleeps never last past it. A replayed run is also cut where its recording
    /// was (`Cut`: the run has used `fuel_used` of its budget now).
    pub(crate) fn deadline_remaining(&mut self, fuel_used: u64) -> Result<Option<u64>, Failure> {
        self.remaining(fuel_used).map_err(|stop| self.failure_for(stop))
    }

    /// [`Run::deadline_remaining`] with the stop in place of its failure (small enough to
    /// inline where the meter checks the deadline around every call).
    #[inline]
    fn remaining(&mut self, fuel_used: u64) -> Result<Option<u64>, Stop> {
        if let Some((cut, stop)) = self.cut {
            if fuel_used >= cut.fuel && self.inputs >= cut.inputs {
                return Err(stop);
            }
        }
        let Some(Deadline { started_ns, timeout_ns }) = self.deadline else {
            return Ok(None);
        };
        let now = self.env.deadline_clock_ns().unwrap_or(started_ns);
        // u64::MAX is a cancel, also when the run started after it (then `elapsed` is 0).
        if now == u64::MAX {
            return Err(Stop::Cancelled);
        }
        let elapsed = now.saturating_sub(started_ns);
        if elapsed > timeout_ns {
            return Err(Stop::Deadline);
        }
        Ok(Some(timeout_ns - elapsed))
    }

    /// How long a wait inside a host function (an output sink's) may last: the nanoseconds left
    /// before the run's deadline, 0 once it has passed or the run was cancelled, `None` when
    /// this host enforces no wall-clock deadline. It never fails, so it adds no deadline check
    /// (a replay is cut where its recording was): the checks around the host function end the
    /// run.
    pub(crate) fn deadline_wait_ns(&mut self) -> Option<u64> {
        let Deadline { started_ns, timeout_ns } = self.deadline?;
        let now = self.env.deadline_clock_ns().unwrap_or(started_ns);
        if now == u64::MAX {
            return Some(0);
        }
        Some(timeout_ns.saturating_sub(now.saturating_sub(started_ns)))
    }

    /// The failure of a run whose wait inside a host function was cut short: `cancelled` when
    /// its caller cancelled it (or, in a replay, when the recording was cancelled there),
    /// `deadline_exceeded` otherwise.
    pub(crate) fn stop_failure(&mut self) -> Failure {
        let stop = match self.cut {
            Some((_, stop)) => stop,
            None if self.env.deadline_clock_ns() == Some(u64::MAX) => Stop::Cancelled,
            None => Stop::Deadline,
        };
        self.failure_for(stop)
    }

    /// The failure a stop of this run ends it with.
    #[cold]
    fn failure_for(&self, stop: Stop) -> Failure {
        match stop {
            Stop::Deadline => {
                Failure::new(BlockedReason::DeadlineExceeded, format!("The limit is {} ms.", self.timeout_ms))
            }
            Stop::Cancelled => Failure::new(BlockedReason::Cancelled, ""),
        }
    }

    /// Charges `fuel` for host work done for the guest, before the work is done. When the
    /// budget cannot cover it, the run ends with `fuel_exhausted` (and the budget is spent).
    pub(crate) fn charge(&mut self, fuel: u64) -> Result<(), Failure> {
        let account = &mut self.fuel;
        let charged = account.host_charged.saturating_add(fuel);
        if charged > account.host_available {
            account.host_charged = account.host_available;
            return Err(Failure::new(
                BlockedReason::FuelExhausted,
                format!("The budget is {} fuel; host work asked for {fuel} more than was left.", account.budget),
            ));
        }
        account.host_charged = charged;
        Ok(())
    }

    /// Charges host work over `bytes` bytes at the bulk-memory rate.
    pub(crate) fn charge_bytes(&mut self, bytes: u64) -> Result<(), Failure> {
        self.charge(fuel_for_bytes(bytes))
    }

    /// The fuel the run has used, while a host function runs (what it charged included).
    pub(crate) fn fuel_used(&self) -> u64 {
        self.fuel.budget.saturating_sub(self.fuel.host_available).saturating_add(self.fuel.host_charged)
    }

    /// The fuel left in the run's budget while a host function runs (store fuel included).
    pub(crate) fn fuel_remaining(&self) -> u64 {
        self.fuel.host_available.saturating_sub(self.fuel.host_charged)
    }
}

/// Runs the body of a host function: opens the fuel ledger (what the store holds plus what the
/// budget has not handed out), checks the deadline, runs `body` with the guest memory and host
/// state, applies what it charged to the store, and checks the deadline again. A `Failure` from
/// any step ends the run (it comes back to the sandbox as a host trap).
pub(crate) fn host_work<T: Metered, R>(
    caller: &mut Caller<'_, T>,
    body: impl FnOnce(&mut Guest<'_>, &mut T) -> Result<R, Failure>,
) -> Result<R, wasmi::Error> {
    let in_store = caller.get_fuel().unwrap_or(0);
    let run = caller.data_mut().run_mut();
    let account = &mut run.fuel;
    account.host_available = in_store.saturating_add(account.budget.saturating_sub(account.given));
    account.host_charged = 0;
    let used = run.fuel_used();
    let before = run.deadline_remaining(used);
    let result = before.and_then(|_| {
        let cached = caller.data().memory();
        let (mut guest, state) = guest::split(caller, cached);
        body(&mut guest, state)
    });
    let charged = core::mem::take(&mut caller.data_mut().run_mut().fuel.host_charged);
    if charged <= in_store {
        caller.set_fuel(in_store - charged)?;
    } else {
        caller.data_mut().run_mut().fuel.given += charged - in_store;
        caller.set_fuel(0)?;
    }
    let value = result.map_err(wasmi::Error::host)?;
    let run = caller.data_mut().run_mut();
    let used = run.fuel.budget.saturating_sub(run.fuel.host_available).saturating_add(charged);
    run.deadline_remaining(used).map_err(wasmi::Error::host)?;
    Ok(value)
}
