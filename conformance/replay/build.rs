//! Bundles the conformance traces (../traces), their modules (WAT compiled here) and their
//! expected digests into the binary, so one file replays them on any target. A module that is
//! not built yet (the Rust example, built by `make examples`) is left out with a warning; the
//! binary then reports it as not bundled.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let conformance = manifest_dir.join("..");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    let list = conformance.join("traces/traces.txt");
    let digests = conformance.join("traces/digests.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-changed={}", digests.display());
    let list = std::fs::read_to_string(&list).expect("traces/traces.txt is readable");
    let digests = std::fs::read_to_string(&digests).expect("traces/digests.txt is readable");
    let mut bundle = String::from("/// (name, trace, module, expected digest); an empty module was not built.\n");
    bundle.push_str("pub const CASES: &[(&str, &[u8], &[u8], &str)] = &[\n");
    for line in list.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, module, ..] = fields.as_slice() else { panic!("traces.txt lines are NAME MODULE [simd]") };
        let name = *name;
        let module = conformance.join(module);
        let trace = conformance.join(format!("traces/{name}.trace"));
        println!("cargo:rerun-if-changed={}", module.display());
        println!("cargo:rerun-if-changed={}", trace.display());
        let digest = digests
            .lines()
            .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
            .unwrap_or("")
            .trim();
        let module_out = out.join(format!("{name}.wasm"));
        match compile(&module) {
            Some(bytes) => std::fs::write(&module_out, bytes).expect("OUT_DIR is writable"),
            None => {
                println!("cargo:warning={} is not built yet (make examples); {name} is left out", module.display());
                std::fs::write(&module_out, []).expect("OUT_DIR is writable");
            }
        }
        writeln!(
            bundle,
            "    ({name:?}, include_bytes!({:?}), include_bytes!({:?}), {digest:?}),",
            trace.display().to_string(),
            module_out.display().to_string()
        )
        .expect("writing to a String");
    }
    bundle.push_str("];\n");
    std::fs::write(out.join("bundle.rs"), bundle).expect("OUT_DIR is writable");
}

fn compile(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    if path.extension().is_some_and(|e| e == "wat") {
        Some(wat::parse_bytes(&bytes).expect("a conformance fixture compiles").into_owned())
    } else {
        Some(bytes)
    }
}
