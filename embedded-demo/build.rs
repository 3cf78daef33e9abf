//! Build script of the firmware: writes the board's `memory.x` (the linker's memory map; a
//! 1 MiB-flash, 256 KiB-RAM part's with `--features part-256k`) into
//! OUT_DIR, and bundles the plugins built from the repository's sources: every WAT plugin is
//! assembled here, and the Rust SDK plugin (built by `make embedded` with a small shadow stack)
//! is copied from `target/plugins/embedded/`. Nothing bundled is a committed binary.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// mps2-an386: 4 MiB of code memory at 0x0, 4 MiB of SRAM at 0x2000_0000 (cortex-m-rt layout).
const MEMORY_CORTEX_M: &str = "MEMORY
{
  FLASH : ORIGIN = 0x00000000, LENGTH = 4M
  RAM : ORIGIN = 0x20000000, LENGTH = 4M
}
";

/// QEMU virt: DRAM at 0x8000_0000; its first 4 MiB hold code and read-only data (QEMU loads the
/// ELF there with `-bios none`), the next 4 MiB are RAM (riscv-rt layout).
const MEMORY_RISCV: &str = "MEMORY
{
  FLASH : ORIGIN = 0x80000000, LENGTH = 4M
  RAM : ORIGIN = 0x80400000, LENGTH = 4M
}
";

/// A 1 MiB-flash, 256 KiB-RAM part (nRF52840-class; `--features part-256k`) on mps2-an386: the
/// same addresses, the part's sizes.
const MEMORY_CORTEX_M_PART: &str = "MEMORY
{
  FLASH : ORIGIN = 0x00000000, LENGTH = 1M
  RAM : ORIGIN = 0x20000000, LENGTH = 256K
}
";

/// The same part's sizes on QEMU virt: 1 MiB of code and read-only data, then 256 KiB of RAM.
const MEMORY_RISCV_PART: &str = "MEMORY
{
  FLASH : ORIGIN = 0x80000000, LENGTH = 1M
  RAM : ORIGIN = 0x80100000, LENGTH = 256K
}
";

/// What riscv-rt's script needs beside the memory map: where each region goes.
const RISCV_REGIONS: &str = "REGION_ALIAS(\"REGION_TEXT\", FLASH);
REGION_ALIAS(\"REGION_RODATA\", FLASH);
REGION_ALIAS(\"REGION_DATA\", RAM);
REGION_ALIAS(\"REGION_BSS\", RAM);
REGION_ALIAS(\"REGION_HEAP\", RAM);
REGION_ALIAS(\"REGION_STACK\", RAM);
";

/// With panic = "abort" nothing unwinds, yet RV32 objects carry unwind tables (175 KB at
/// opt-level z; `-C force-unwind-tables=no` leaves them): riscv-rt's script does not place
/// .eh_frame, so the linker put it in flash after .rodata. Nothing reads it.
const RISCV_NO_UNWIND_TABLES: &str = "SECTIONS { /DISCARD/ : { *(.eh_frame) *(.eh_frame_hdr) } }
";

/// On the part, the stack (at the top of RAM, growing down toward the statics) must keep at
/// least 32 KiB: the link fails otherwise.
const PART_STACK_CHECK: &str =
    "ASSERT(_stack_start - __sheap >= 32K, \"part-256k: the statics leave less than 32 KiB of stack\");
";

/// The WAT plugins: the name they are bundled under and their source, relative to the repository.
const WAT_PLUGINS: [(&str, &str); 5] = [
    ("echo", "examples/echo/echo.wat"),
    ("spin", "embedded-demo/plugins/spin.wat"),
    ("grow", "embedded-demo/plugins/grow.wat"),
    ("forbidden_import", "embedded-demo/plugins/forbidden_import.wat"),
    ("trap", "embedded-demo/plugins/trap.wat"),
];

/// The Rust SDK plugin, built by `make embedded` from examples/rust/hello.
const RUST_PLUGIN: &str = "hello.wasm";

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let repo = manifest.parent().expect("embedded-demo sits in the repository").to_path_buf();

    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let part = env::var_os("CARGO_FEATURE_PART_256K").is_some();
    let parts: &[&str] = match (arch.as_str(), part) {
        ("arm", false) => &[MEMORY_CORTEX_M],
        ("arm", true) => &[MEMORY_CORTEX_M_PART, PART_STACK_CHECK],
        ("riscv32", false) => &[MEMORY_RISCV, RISCV_REGIONS, RISCV_NO_UNWIND_TABLES],
        ("riscv32", true) => &[MEMORY_RISCV_PART, RISCV_REGIONS, PART_STACK_CHECK, RISCV_NO_UNWIND_TABLES],
        (other, _) => panic!("embedded-demo has no board for target arch `{other}`"),
    };
    write(&out.join("memory.x"), parts.concat().as_bytes());
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=build.rs");

    for (name, source) in WAT_PLUGINS {
        let path = repo.join(source);
        println!("cargo:rerun-if-changed={}", path.display());
        let wasm = wat::parse_file(&path).unwrap_or_else(|e| panic!("{source}: {e}"));
        write(&out.join(format!("{name}.wasm")), &wasm);
    }

    println!("cargo:rerun-if-env-changed=CONTOUR_EMBEDDED_PLUGINS");
    let built = env::var_os("CONTOUR_EMBEDDED_PLUGINS")
        .map_or_else(|| repo.join("target/plugins/embedded"), PathBuf::from)
        .join(RUST_PLUGIN);
    println!("cargo:rerun-if-changed={}", built.display());
    let wasm = fs::read(&built).unwrap_or_else(|e| {
        panic!("{}: {e}; build the firmware with `make embedded`, which builds this plugin first", built.display())
    });
    write(&out.join(RUST_PLUGIN), &wasm);

    bundle_traces(&repo, &out, &built);
}

/// Bundles the conformance traces (conformance/traces/traces.txt names each trace and its
/// module) with their modules and expected digests, for `replay.rs`: writes `traces.rs` into
/// OUT_DIR with `traces()`, each `(name, trace, module, digest)`. Each module is in flash once:
/// traces that share one share its bytes, and the Rust SDK plugin is the demo's own.
fn bundle_traces(repo: &Path, out: &Path, rust_plugin: &Path) {
    let conformance = repo.join("conformance");
    let list_path = conformance.join("traces/traces.txt");
    let digests_path = conformance.join("traces/digests.txt");
    println!("cargo:rerun-if-changed={}", list_path.display());
    println!("cargo:rerun-if-changed={}", digests_path.display());
    let list = fs::read_to_string(&list_path).unwrap_or_else(|e| panic!("{}: {e}", list_path.display()));
    let digests = fs::read_to_string(&digests_path).unwrap_or_else(|e| panic!("{}: {e}", digests_path.display()));
    let rust_plugin = fs::canonicalize(rust_plugin).ok();
    let mut statics = String::new();
    let mut modules: Vec<PathBuf> = Vec::new();
    let mut rows = String::new();
    let mut count = 0;
    for line in list.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, module, flags @ ..] = fields.as_slice() else { panic!("traces.txt lines are NAME MODULE [simd]") };
        let name = *name;
        // This firmware is built without SIMD: a trace whose module uses it is left out.
        if flags.contains(&"simd") {
            continue;
        }
        let module = conformance.join(module);
        let trace = conformance.join(format!("traces/{name}.trace"));
        println!("cargo:rerun-if-changed={}", module.display());
        println!("cargo:rerun-if-changed={}", trace.display());
        let canonical = fs::canonicalize(&module)
            .unwrap_or_else(|e| panic!("{}: {e}; `make embedded` builds it", module.display()));
        let bytes_expr = if Some(&canonical) == rust_plugin.as_ref() {
            String::from("crate::plugins::HELLO.bytes")
        } else {
            let index = match modules.iter().position(|m| *m == canonical) {
                Some(index) => index,
                None => {
                    let wasm = if module.extension().is_some_and(|e| e == "wat") {
                        wat::parse_file(&module).unwrap_or_else(|e| panic!("{}: {e}", module.display()))
                    } else {
                        fs::read(&module).unwrap_or_else(|e| panic!("{}: {e}", module.display()))
                    };
                    let index = modules.len();
                    let module_out = out.join(format!("trace-module-{index}.wasm"));
                    write(&module_out, &wasm);
                    statics.push_str(&format!(
                        "static MODULE_{index}: &[u8] = include_bytes!({:?});\n",
                        module_out.display().to_string()
                    ));
                    modules.push(canonical);
                    index
                }
            };
            format!("MODULE_{index}")
        };
        let digest = digests
            .lines()
            .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
            .unwrap_or("")
            .trim();
        rows.push_str(&format!(
            "        ({name:?}, include_bytes!({:?}), {bytes_expr}, {digest:?}),\n",
            trace.display().to_string()
        ));
        count += 1;
    }
    let table = format!(
        "{statics}\n/// (name, trace bytes, module bytes, expected digest in hex)\n\
         pub fn traces() -> [(&'static str, &'static [u8], &'static [u8], &'static str); {count}] {{\n    [\n{rows}    ]\n}}\n"
    );
    write(&out.join("traces.rs"), table.as_bytes());
}

fn write(path: &Path, bytes: &[u8]) {
    fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
