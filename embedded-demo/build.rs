//! Build script of the firmware: writes the board's `memory.x` (the linker's memory map) into
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
REGION_ALIAS(\"REGION_TEXT\", FLASH);
REGION_ALIAS(\"REGION_RODATA\", FLASH);
REGION_ALIAS(\"REGION_DATA\", RAM);
REGION_ALIAS(\"REGION_BSS\", RAM);
REGION_ALIAS(\"REGION_HEAP\", RAM);
REGION_ALIAS(\"REGION_STACK\", RAM);
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
    let memory = match arch.as_str() {
        "arm" => MEMORY_CORTEX_M,
        "riscv32" => MEMORY_RISCV,
        other => panic!("embedded-demo has no board for target arch `{other}`"),
    };
    write(&out.join("memory.x"), memory.as_bytes());
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
}

fn write(path: &Path, bytes: &[u8]) {
    fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
