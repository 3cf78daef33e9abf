//! `contour-replay`: replays every conformance trace bundled at build time with contour-core
//! alone and prints, per trace, the digest of the replayed run and whether it is the expected
//! one. Built for foreign targets (s390x, aarch64, armv7, Windows) by `make cross`, so their
//! builds stay short; exits 0 only when every bundled trace replays to its expected digest.
//! `contour-replay --cases DIR` replays the cross-architecture differential's cases instead
//! (`cases.rs`, `make fuzz-cross`).
#![forbid(unsafe_code)]

use contour_core::{hex, replay_bytes};
use std::process::ExitCode;

mod cases;

mod bundle {
    include!(concat!(env!("OUT_DIR"), "/bundle.rs"));
}

fn main() -> ExitCode {
    let endian = if cfg!(target_endian = "big") { "big-endian" } else { "little-endian" };
    println!("host: {} {} {}-bit {endian}", std::env::consts::OS, std::env::consts::ARCH, usize::BITS);
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {}
        [flag, dir] if flag == "--cases" => {
            return if cases::run(std::path::Path::new(dir)) { ExitCode::SUCCESS } else { ExitCode::FAILURE };
        }
        _ => {
            eprintln!("usage: contour-replay [--cases DIR]");
            return ExitCode::from(2);
        }
    }
    let mut failed = 0;
    for (name, trace, module, expected) in bundle::CASES {
        if module.is_empty() {
            println!("{name:<10} not bundled (its module was not built when this binary was)");
            failed += 1;
            continue;
        }
        // A host that cannot run SIMD must refuse such a module at load (never run it with wrong
        // lanes): the replay has to fail there, naming SIMD.
        if let Some(why) = contour_core::SIMD_UNAVAILABLE.filter(|_| contour_core::uses_simd(module)) {
            match replay_bytes(trace, module) {
                Err(error) if error.to_string().contains("It uses SIMD") => {
                    println!("{name:<10} refused at load, as it must be here: it uses SIMD, which {why}");
                }
                other => {
                    failed += 1;
                    println!(
                        "{name:<10} NOT REFUSED on a host that cannot run SIMD: {:?}",
                        other.map(|r| hex(&r.digest))
                    );
                }
            }
            continue;
        }
        match replay_bytes(trace, module) {
            Ok(report) => {
                let digest = hex(&report.digest);
                let verdict = match &report.divergence {
                    Some(divergence) => format!("DIVERGED: {divergence}"),
                    None if digest == *expected => String::from("ok"),
                    None => format!("DIGEST MISMATCH: expected {expected}"),
                };
                if verdict != "ok" {
                    failed += 1;
                }
                println!("{name:<10} {digest} {verdict}");
            }
            Err(error) => {
                failed += 1;
                println!("{name:<10} ERROR: {error}");
            }
        }
    }
    if failed == 0 {
        println!("every trace this host can run replays to its digest ({} bundled)", bundle::CASES.len());
        ExitCode::SUCCESS
    } else {
        println!("{failed} of {} traces failed", bundle::CASES.len());
        ExitCode::FAILURE
    }
}
