//! The WASI Preview1 shim (docs/ABI.md section 5), no_std. Every function of the allowlist's
//! `PREVIEW1` table is served here (the table links each with its exact signature); which ones a module may
//! import is the load-time check's decision. Every nondeterministic answer comes from the
//! `Environment`, files only from a `HostFs`, and every function runs through the meter:
//! fuel for the work a guest-chosen size asks for, the deadline before and after.
//!
//! | module | owns |
//! |---|---|
//! | `state` | argv, environ, the fd table, the output sink, stdin, the stdio kinds |
//! | `stdio` | `OutputSink` and the bounded `Capture`, `InputSource`, `StdioKind` |
//! | `errno` | the errno values |
//! | `call` | `WasiView`, the store's view the shim reaches its state through, and the wrapper each function runs through: the meter, errno or failure |
//! | `proc` | args, environ, clocks, random, exit, yield |
//! | `fd` | fd_* (read, write, seek, stat, readdir, ...) |
//! | `sock` | sock_*, on fds that are never sockets |
//! | `path` | path_* that read, and `path_open` |
//! | `write` | the write half over a writable preopen: open to write, fd_write/fd_pwrite to a file, set_size, sync, mkdir, rmdir, unlink, rename |
//! | `poll` | poll_oneoff |

/// Shim functions that look only at their first argument, the fd, and answer what
/// `$answer(shim, fd)` says; the rest of their arguments matter to no one (times and links are
/// never changed, no fd is a socket). Each row: doc, name, the types after the fd, the answer.
macro_rules! fd_only {
    ($($(#[doc = $doc:literal])+ $name:ident($($ty:ty),*) => $answer:path;)*) => {$(
        $(#[doc = $doc])+
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn $name(
            _guest: &mut Guest<'_>,
            shim: &mut Shim<'_>,
            fd: u32,
            $(_: $ty),*
        ) -> Result<(), WasiError> {
            $answer(shim, fd)
        }
    )*};
}

mod call;
mod errno;
pub(crate) mod fd;
pub(crate) mod path;
pub(crate) mod poll;
pub(crate) mod proc;
pub(crate) mod sock;
mod state;
mod stdio;
pub(crate) mod write;

/// The import module name of WASI Preview1.
pub const MODULE: &str = "wasi_snapshot_preview1";

pub(crate) use call::{shim, Shim, WasiView};
pub use errno::Errno;
pub use state::{WasiConfig, WasiState, MAX_OPEN_FDS};
pub use stdio::{Capture, Input, InputSource, NoInput, OutputSink, StdioKind, Written};
