//! The demo both boards run after start-up: every case of `cases` through the sandbox, each
//! outcome printed as the host prints it, then its figures; the exit status says whether every
//! outcome matched its expectation.

use crate::cases::{Case, Expect, CASES};
use crate::digest;
use crate::heap;
use crate::replay;
use crate::sandbox::{self, IntentRun, RunError};
use crate::stack;
use semihosting::io::Write;
use semihosting::println;
use semihosting::sys::arm_compat::{sys_elapsed, sys_tickfreq};

/// The board the demo runs on, as the header names it.
pub struct Board {
    /// The Rust target.
    pub target: &'static str,
    /// The QEMU machine.
    pub machine: &'static str,
}

/// Runs every case and exits: status 0 only when every outcome matched its expectation.
pub fn run(board: &Board) -> ! {
    stack::paint();
    heap::init();
    let limits = sandbox::limits();
    println!(
        "embedded-demo target={} machine={} policy=embedded seed={} max_memory_bytes={} fuel_per_intent={} heap_bytes={}",
        board.target,
        board.machine,
        sandbox::SEED,
        limits.max_memory_bytes,
        limits.fuel_per_intent,
        heap::HEAP_BYTES
    );
    let mut as_expected = 0;
    for case in &CASES {
        if run_case(case) {
            as_expected += 1;
        }
    }
    let replayed = replay::run();
    if replayed.skipped == 0 {
        println!("replay: {} traces bundled, {} digests matched", replayed.traces, replayed.matched);
    } else {
        println!(
            "replay: {} traces bundled, {} digests matched, {} skipped (recorded with more linear memory than this part's limit)",
            replayed.traces, replayed.matched, replayed.skipped
        );
    }
    println!("embedded-demo: stack_high_water={} stack_bytes={}", stack::high_water(), stack::size());
    println!("embedded-demo: {as_expected} of {} outcomes as expected", CASES.len());
    let passed = as_expected == CASES.len() && replayed.matched + replayed.skipped == replayed.traces;
    semihosting::process::exit(if passed { 0 } else { 1 })
}

/// Runs one case, prints it, and says whether its outcome was the expected one.
fn run_case(case: &Case) -> bool {
    let plugin = case.plugin;
    let expect = match case.expect {
        Expect::Outcome(_) => "completed",
        Expect::Blocked(reason) => reason,
    };
    match digest::module_line(plugin.module, plugin.bytes) {
        Some(line) => {
            println!("case={} {line} method={} expect={expect} params={}", plugin.name, case.method, case.params)
        }
        None => println!("case={} (module line too long)", plugin.name),
    }
    heap::reset_high_water();
    let started = elapsed_us();
    let result = sandbox::run(plugin.bytes, case.method, case.params);
    let wall_us = elapsed_us().saturating_sub(started);
    let heap_high_water = heap::high_water();
    let run = match result {
        Ok(run) => run,
        Err(error) => {
            println!("figures case={} error={} result=unexpected", plugin.name, describe(error));
            return false;
        }
    };
    print_output(&run);
    println!("{}", run.outcome);
    let ok = matches(&case.expect, &run);
    println!(
        "figures case={} fuel_used={} peak_memory_bytes={} heap_high_water={heap_high_water} wall_us={wall_us} result={}",
        plugin.name,
        run.fuel_used,
        run.peak_memory_bytes,
        if ok { "as_expected" } else { "unexpected" }
    );
    ok
}

fn matches(expect: &Expect, run: &IntentRun) -> bool {
    match expect {
        Expect::Outcome(json) => run.outcome.as_str() == *json,
        Expect::Blocked(reason) => !run.completed && run.blocked_reason.as_deref() == Some(*reason),
    }
}

/// The plugin's captured stdout, one `[plugin stdout]` line per line (as `tdm run` shows it).
fn print_output(run: &IntentRun) {
    let Ok(mut out) = semihosting::io::stdout() else { return };
    for line in run.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let _ = out.write_all(b"[plugin stdout] ");
        let _ = out.write_all(line);
        let _ = out.write_all(b"\n");
    }
}

fn describe(error: RunError) -> &'static str {
    match error {
        RunError::Params => "params_not_a_json_object",
        RunError::TooLong(what) => what,
    }
}

/// Microseconds since QEMU started (semihosting SYS_ELAPSED / SYS_TICKFREQ): the host's wall
/// time, for the figures only; the sandbox never sees it.
fn elapsed_us() -> u64 {
    match (sys_elapsed(), sys_tickfreq()) {
        (Ok(ticks), Ok(freq)) if freq >= 1_000_000 => ticks / (freq as u64 / 1_000_000),
        (Ok(ticks), Ok(freq)) if freq > 0 => ticks.saturating_mul(1_000_000) / freq as u64,
        _ => 0,
    }
}
