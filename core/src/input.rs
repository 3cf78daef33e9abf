//! The one input boundary: everything a guest can observe besides its module, policy and
//! requests (clock readings, entropy, sleeps, and the answers of host intents) reaches it
//! through these methods of the run's account, which ask the embedder's `Environment` and
//! `HostIntents` and count every input of the run. Recording wraps those two traits and replay
//! is a second implementation of them (`trace`); the deadline clock and the audit sink stay
//! outside: they are not inputs, and the meter and the host calls use them directly.

use crate::env::{Clock, Slept};
use crate::host::{CallContext, HostAnswer, HostCall, HostIntents};
use crate::meter::Run;

impl Run {
    /// Reads `clock`.
    pub(crate) fn input_clock(&mut self, clock: Clock) -> u64 {
        self.inputs += 1;
        self.env.now_ns(clock)
    }

    /// The resolution of `clock`.
    pub(crate) fn input_resolution(&mut self, clock: Clock) -> u64 {
        self.inputs += 1;
        self.env.resolution_ns(clock)
    }

    /// Fills `dest` with entropy.
    pub(crate) fn input_random(&mut self, dest: &mut [u8]) {
        self.inputs += 1;
        self.env.fill_random(dest);
    }

    /// Sleeps `ns`, never past `deadline_ns`.
    pub(crate) fn input_sleep(&mut self, ns: u64, deadline_ns: Option<u64>) -> Slept {
        self.inputs += 1;
        self.env.sleep_ns(ns, deadline_ns)
    }

    /// The embedder's answer (`intents`) to an allowed host call.
    pub(crate) fn input_host_call(
        &mut self,
        intents: &mut dyn HostIntents,
        call: &HostCall,
        context: &CallContext,
    ) -> HostAnswer {
        self.inputs += 1;
        intents.call(call, context)
    }
}
