//! The import allowlist, written once: every function of WASI Preview1 and of the `tdm` host
//! module, each with its exact signature, whether a marketplace plugin may import it, and the
//! function that serves it. The `imports!` macro turns each table into both the allowlist the
//! load-time check reads (`PREVIEW1`, `HOST_IMPORTS`) and the linker registration of every row
//! (`link`), as wasmi's preview_1 does, so what a module may import and what is linked cannot
//! drift apart. A row is `wrapper module::name(params) who;`: `shim` runs a WASI function
//! through the meter and answers its errno, `exit` is `proc_exit`, `hostcall` runs a host-intent
//! import; `plugin` rows are open to marketplace plugins, `command` rows only to `tdm exec`.

use crate::host::{self, HostView};
use crate::wasi::{self, fd, path, poll, proc, sock, write, WasiView};
use wasmi::{Caller, Linker};

/// The value types a signature is written in (wasmi's).
pub use wasmi::ValType;

/// The import module name of WASI Preview1.
pub const WASI_MODULE: &str = wasi::MODULE;
/// The import module of the host intents.
pub const HOST_MODULE: &str = host::MODULE;

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

/// The Wasm type of a Rust parameter type in a row.
macro_rules! val_type {
    (u32) => {
        ValType::I32
    };
    (i32) => {
        ValType::I32
    };
    (u64) => {
        ValType::I64
    };
    (i64) => {
        ValType::I64
    };
}

/// The results of a row by its wrapper: an errno (i32) for `shim` and `host`, none for `exit`.
macro_rules! results {
    (exit) => {
        &[]
    };
    ($wrapper:ident) => {
        &[ValType::I32]
    };
}

/// Whether a row is open to marketplace plugins.
macro_rules! plugin_safe {
    (plugin) => {
        true
    };
    (command) => {
        false
    };
}

/// Defines one row on the linker, by its wrapper.
macro_rules! define {
    ($linker:ident, $view:ident, $module:expr, exit $m:ident::$name:ident($($arg:ident: $ty:ident),*)) => {
        $linker.func_wrap($module, stringify!($name), |_caller: Caller<'_, $view>, $($arg: $ty),*| {
            Err::<(), wasmi::Error>($m::$name($($arg),*))
        })?
    };
    ($linker:ident, $view:ident, $module:expr, $wrapper:ident $m:ident::$name:ident($($arg:ident: $ty:ident),*)) => {
        $linker.func_wrap($module, stringify!($name), |mut caller: Caller<'_, $view>, $($arg: $ty),*| {
            $wrapper(&mut caller, |guest, state| $m::$name(guest, state, $($arg),*))
        })?
    };
}

/// Defines one row, by who may import it: a `command` row only with `wasi-commands`.
macro_rules! define_row {
    (plugin, $($row:tt)*) => {
        define!($($row)*)
    };
    (command, $($row:tt)*) => {
        #[cfg(feature = "wasi-commands")]
        define!($($row)*)
    };
}

/// One table: the allowlist constant and the function that links every row.
macro_rules! imports {
    (
        $(#[$doc:meta])* $table:ident, $link:ident<$view:ident>, $module:expr;
        $($wrapper:ident $m:ident::$name:ident($($arg:ident: $ty:ident),*) $who:ident;)*
    ) => {
        $(#[$doc])*
        pub const $table: [Signature; [$(stringify!($name)),*].len()] = [$(Signature {
            name: stringify!($name),
            params: &[$(val_type!($ty)),*],
            results: results!($wrapper),
            plugin_safe: plugin_safe!($who),
        }),*];

        /// Defines every function of the table on `linker` (the `command` rows only with the
        /// `wasi-commands` feature).
        fn $link<T: $view>(linker: &mut Linker<T>) -> Result<(), wasmi::Error> {
            $(define_row!($who, linker, T, $module, $wrapper $m::$name($($arg: $ty),*));)*
            Ok(())
        }
    };
}

use host::hostcall;
use wasi::shim;

imports! {
    /// Every function of WASI Preview1, with its signature.
    PREVIEW1, link_wasi<WasiView>, WASI_MODULE;
    shim proc::args_get(ptrs: u32, buf: u32) plugin;
    shim proc::args_sizes_get(count: u32, size: u32) plugin;
    shim proc::environ_get(ptrs: u32, buf: u32) plugin;
    shim proc::environ_sizes_get(count: u32, size: u32) plugin;
    shim proc::clock_res_get(id: u32, out: u32) plugin;
    shim proc::clock_time_get(id: u32, precision: u64, out: u32) plugin;
    shim fd::fd_advise(fd: u32, offset: u64, len: u64, advice: u32) command;
    shim write::fd_allocate(fd: u32, offset: u64, len: u64) command;
    shim fd::fd_close(fd: u32) plugin;
    shim write::fd_datasync(fd: u32) command;
    shim fd::fd_fdstat_get(fd: u32, out: u32) plugin;
    shim write::fd_fdstat_set_flags(fd: u32, flags: u32) command;
    shim fd::fd_fdstat_set_rights(fd: u32, base: u64, inheriting: u64) command;
    shim fd::fd_filestat_get(fd: u32, out: u32) command;
    shim write::fd_filestat_set_size(fd: u32, size: u64) command;
    shim fd::fd_filestat_set_times(fd: u32, atime: u64, mtime: u64, flags: u32) command;
    shim fd::fd_pread(fd: u32, iovs: u32, n: u32, at: u64, nread: u32) command;
    shim fd::fd_prestat_get(fd: u32, out: u32) plugin;
    shim fd::fd_prestat_dir_name(fd: u32, buf: u32, len: u32) plugin;
    shim write::fd_pwrite(fd: u32, iovs: u32, n: u32, at: u64, written: u32) command;
    shim fd::fd_read(fd: u32, iovs: u32, n: u32, nread: u32) plugin;
    shim fd::fd_readdir(fd: u32, buf: u32, len: u32, cookie: u64, used: u32) command;
    shim fd::fd_renumber(from: u32, to: u32) command;
    shim fd::fd_seek(fd: u32, offset: i64, whence: u32, out: u32) plugin;
    shim write::fd_sync(fd: u32) command;
    shim fd::fd_tell(fd: u32, out: u32) command;
    shim fd::fd_write(fd: u32, iovs: u32, n: u32, written: u32) plugin;
    shim write::path_create_directory(fd: u32, p: u32, l: u32) command;
    shim path::path_filestat_get(fd: u32, flags: u32, p: u32, l: u32, out: u32) command;
    shim path::path_filestat_set_times(fd: u32, flags: u32, p: u32, l: u32, atime: u64, mtime: u64, fst: u32) command;
    shim path::path_link(fd: u32, flags: u32, p: u32, l: u32, new_fd: u32, new_p: u32, new_l: u32) command;
    shim path::path_open(fd: u32, dirflags: u32, p: u32, l: u32, oflags: u32, rights: u64, inheriting: u64, fdflags: u32, out: u32) command;
    shim path::path_readlink(fd: u32, p: u32, l: u32, buf: u32, cap: u32, used: u32) command;
    shim write::path_remove_directory(fd: u32, p: u32, l: u32) command;
    shim write::path_rename(fd: u32, p: u32, l: u32, new_fd: u32, new_p: u32, new_l: u32) command;
    shim path::path_symlink(p: u32, l: u32, fd: u32, new_p: u32, new_l: u32) command;
    shim write::path_unlink_file(fd: u32, p: u32, l: u32) command;
    shim poll::poll_oneoff(subs: u32, events: u32, n: u32, nevents: u32) plugin;
    exit proc::proc_exit(code: i32) plugin;
    shim proc::proc_raise(sig: u32) command;
    shim proc::sched_yield() plugin;
    shim proc::random_get(buf: u32, len: u32) plugin;
    shim sock::sock_accept(fd: u32, flags: u32, out: u32) command;
    shim sock::sock_recv(fd: u32, iovs: u32, n: u32, flags: u32, nread: u32, oflags: u32) command;
    shim sock::sock_send(fd: u32, iovs: u32, n: u32, flags: u32, nwritten: u32) command;
    shim sock::sock_shutdown(fd: u32, how: u32) command;
}

imports! {
    /// The two host-intent imports of module `tdm`, with their exact signatures.
    HOST_IMPORTS, link_host<HostView>, HOST_MODULE;
    hostcall host::tdm_host_call(ptr: u32, len: u32) plugin;
    hostcall host::tdm_host_response(ptr: u32, cap: u32) plugin;
}

/// Defines every allowlisted function (WASI and the host intents) on `linker`.
pub(crate) fn link<T: WasiView + HostView>(linker: &mut Linker<T>) -> Result<(), wasmi::Error> {
    link_wasi(linker)?;
    link_host(linker)
}

/// The signature of `module.name`, when it is on the allowlist at all (plugin-safe or not).
pub fn find(module: &str, name: &str) -> Option<&'static Signature> {
    let table: &'static [Signature] = match module {
        WASI_MODULE => &PREVIEW1,
        HOST_MODULE => &HOST_IMPORTS,
        _ => return None,
    };
    // Without `wasi-commands` the command rows are not linked: off the allowlist here too.
    table.iter().find(|s| s.name == name && (s.plugin_safe || cfg!(feature = "wasi-commands")))
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

    #[test]
    fn command_rows_are_on_the_allowlist_only_with_wasi_commands() {
        let command = PREVIEW1.iter().find(|s| !s.plugin_safe).expect("a command row");
        assert_eq!(find(WASI_MODULE, command.name).is_some(), cfg!(feature = "wasi-commands"));
        assert!(find(WASI_MODULE, "fd_write").is_some(), "plugin rows stay");
    }
}
