//! `cross-cases SEED COUNT DIR`: writes the cross-architecture differential's cases
//! (`contour_fuzz_oracles::cross`) into DIR, `NNNNNN.wasm` and `NNNNNN.trace` per module that
//! loads and records, and prints one line counting them. Exit 2 on bad arguments, 1 when DIR
//! cannot be written.
use contour_fuzz_oracles::cross::{case, Skipped};
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments, read.
struct Args {
    seed: u64,
    count: u64,
    dir: PathBuf,
}

fn args() -> Option<Args> {
    let mut args = std::env::args().skip(1);
    let seed = args.next()?.parse().ok()?;
    let count = args.next()?.parse().ok()?;
    let dir = PathBuf::from(args.next()?);
    args.next().is_none().then_some(Args { seed, count, dir })
}

fn main() -> ExitCode {
    let Some(Args { seed, count, dir }) = args() else {
        eprintln!("usage: cross-cases SEED COUNT DIR (SEED and COUNT whole numbers)");
        return ExitCode::from(2);
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("cross-cases: {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    let (mut recorded, mut not_generated, mut not_loaded, mut not_recorded, mut inputs) = (0, 0, 0, 0, 0);
    for index in 0..count {
        match case(seed, index) {
            Ok(case) => {
                let module = dir.join(format!("{}.wasm", case.name));
                let trace = dir.join(format!("{}.trace", case.name));
                if let Err(e) = std::fs::write(&module, &case.module).and_then(|()| std::fs::write(&trace, &case.trace))
                {
                    eprintln!("cross-cases: {}: {e}", dir.display());
                    return ExitCode::FAILURE;
                }
                recorded += 1;
                inputs += case.inputs;
            }
            Err(Skipped::NotGenerated) => not_generated += 1,
            Err(Skipped::NotLoaded(_)) => not_loaded += 1,
            Err(Skipped::NotRecorded(e)) => {
                eprintln!("cross-cases: module {index} was not recorded: {e}");
                not_recorded += 1;
            }
        }
    }
    println!(
        "cross-cases seed={seed} modules={count} recorded={recorded} inputs={inputs} not_generated={not_generated} not_loaded={not_loaded} not_recorded={not_recorded}"
    );
    ExitCode::SUCCESS
}
