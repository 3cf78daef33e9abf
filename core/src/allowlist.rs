//! The import allowlist: every function of WASI Preview1 and of the `tdm` host module, each with
//! its exact signature and whether a marketplace plugin may import it. The load-time check
//! (`check`) reads these tables; the shim (`wasi`) and the host calls (`host`) link exactly the
//! functions they list.

/// The value types a signature is written in (wasmi's).
pub use wasmi::ValType;

/// The import module name of WASI Preview1.
pub const WASI_MODULE: &str = "wasi_snapshot_preview1";
/// The import module of the host intents.
pub const HOST_MODULE: &str = "tdm";

/// One importable function: its exact signature and whether plugins may import it.
#[derive(Debug)]
pub struct Signature {
    /// The function name.
    pub name: &'static str,
    /// Parameter types.
    pub params: &'static [ValType],
    /// Result types.
    pub results: &'static [ValType],
    /// Allowed in the marketplace profile (no filesystem, no sockets).
    pub plugin_safe: bool,
}

const I: ValType = ValType::I32;
const L: ValType = ValType::I64;
const R: &[ValType] = &[I];

macro_rules! sig {
    ($name:literal, [$($p:expr),*], $r:expr, $safe:expr) => {
        Signature { name: $name, params: &[$($p),*], results: $r, plugin_safe: $safe }
    };
}

/// Every function of WASI Preview1, with its signature.
pub const PREVIEW1: [Signature; 46] = [
    sig!("args_get", [I, I], R, true),
    sig!("args_sizes_get", [I, I], R, true),
    sig!("environ_get", [I, I], R, true),
    sig!("environ_sizes_get", [I, I], R, true),
    sig!("clock_res_get", [I, I], R, true),
    sig!("clock_time_get", [I, L, I], R, true),
    sig!("fd_advise", [I, L, L, I], R, false),
    sig!("fd_allocate", [I, L, L], R, false),
    sig!("fd_close", [I], R, true),
    sig!("fd_datasync", [I], R, false),
    sig!("fd_fdstat_get", [I, I], R, true),
    sig!("fd_fdstat_set_flags", [I, I], R, false),
    sig!("fd_fdstat_set_rights", [I, L, L], R, false),
    sig!("fd_filestat_get", [I, I], R, false),
    sig!("fd_filestat_set_size", [I, L], R, false),
    sig!("fd_filestat_set_times", [I, L, L, I], R, false),
    sig!("fd_pread", [I, I, I, L, I], R, false),
    sig!("fd_prestat_get", [I, I], R, true),
    sig!("fd_prestat_dir_name", [I, I, I], R, true),
    sig!("fd_pwrite", [I, I, I, L, I], R, false),
    sig!("fd_read", [I, I, I, I], R, true),
    sig!("fd_readdir", [I, I, I, L, I], R, false),
    sig!("fd_renumber", [I, I], R, false),
    sig!("fd_seek", [I, L, I, I], R, true),
    sig!("fd_sync", [I], R, false),
    sig!("fd_tell", [I, I], R, false),
    sig!("fd_write", [I, I, I, I], R, true),
    sig!("path_create_directory", [I, I, I], R, false),
    sig!("path_filestat_get", [I, I, I, I, I], R, false),
    sig!("path_filestat_set_times", [I, I, I, I, L, L, I], R, false),
    sig!("path_link", [I, I, I, I, I, I, I], R, false),
    sig!("path_open", [I, I, I, I, I, L, L, I, I], R, false),
    sig!("path_readlink", [I, I, I, I, I, I], R, false),
    sig!("path_remove_directory", [I, I, I], R, false),
    sig!("path_rename", [I, I, I, I, I, I], R, false),
    sig!("path_symlink", [I, I, I, I, I], R, false),
    sig!("path_unlink_file", [I, I, I], R, false),
    sig!("poll_oneoff", [I, I, I, I], R, true),
    sig!("proc_exit", [I], &[], true),
    sig!("proc_raise", [I], R, false),
    sig!("sched_yield", [], R, true),
    sig!("random_get", [I, I], R, true),
    sig!("sock_accept", [I, I, I], R, false),
    sig!("sock_recv", [I, I, I, I, I, I], R, false),
    sig!("sock_send", [I, I, I, I, I], R, false),
    sig!("sock_shutdown", [I, I], R, false),
];

/// The two host-intent imports of module `tdm`, with their exact signatures.
pub const HOST_IMPORTS: [Signature; 2] =
    [sig!("tdm_host_call", [I, I], R, true), sig!("tdm_host_response", [I, I], R, true)];

/// The signature of `module.name`, when it is on the allowlist at all (plugin-safe or not).
pub fn find(module: &str, name: &str) -> Option<&'static Signature> {
    let table: &'static [Signature] = match module {
        WASI_MODULE => &PREVIEW1,
        HOST_MODULE => &HOST_IMPORTS,
        _ => return None,
    };
    table.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = PREVIEW1.iter().chain(HOST_IMPORTS.iter()).map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PREVIEW1.len() + HOST_IMPORTS.len());
    }
}
