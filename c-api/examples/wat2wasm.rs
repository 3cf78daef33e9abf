//! `wat2wasm IN.wat OUT.wasm`: compiles a WAT module to a binary for the C host's checks
//! (`make c-host`), so they need nothing outside the workspace.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: wat2wasm IN.wat OUT.wasm");
        return ExitCode::from(2);
    };
    match wat::parse_file(input).map(|wasm| std::fs::write(output, wasm)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("wat2wasm: {output}: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("wat2wasm: {input}: {e}");
            ExitCode::from(2)
        }
    }
}
