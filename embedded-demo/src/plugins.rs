//! The bundled plugins: built from the repository's sources when the firmware is built
//! (build.rs assembles the WAT ones; `make embedded` builds the Rust one), never committed.

/// One plugin in flash.
pub struct Bundled {
    /// The name the demo prints.
    pub name: &'static str,
    /// Where the host finds the same module, relative to the repository: a `.wat` source the
    /// host assembles the same way, or the built `.wasm` file itself.
    pub module: &'static str,
    /// The module's bytes.
    pub bytes: &'static [u8],
}

/// Includes a module build.rs wrote into OUT_DIR.
macro_rules! bundled {
    ($name:literal, $module:literal) => {
        Bundled { name: $name, module: $module, bytes: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".wasm")) }
    };
}

/// examples/echo/echo.wat: answers with its params, logs a line to stdout.
pub static ECHO: Bundled = bundled!("echo", "examples/echo/echo.wat");
/// examples/rust/hello built with the Rust SDK and a 16 KiB shadow stack (mk/embedded.mk).
pub static HELLO: Bundled = bundled!("hello", "target/plugins/embedded/hello.wasm");
/// Loops forever.
pub static SPIN: Bundled = bundled!("spin", "embedded-demo/plugins/spin.wat");
/// Grows memory a page at a time, forever.
pub static GROW: Bundled = bundled!("grow", "embedded-demo/plugins/grow.wat");
/// Imports `env.system`, which is off the allowlist.
pub static FORBIDDEN_IMPORT: Bundled = bundled!("forbidden_import", "embedded-demo/plugins/forbidden_import.wat");
/// Divides by zero.
pub static TRAP: Bundled = bundled!("trap", "embedded-demo/plugins/trap.wat");
