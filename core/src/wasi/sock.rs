//! The sock_* functions: sockets are fds the sandbox never has, so each answers `ENOTSOCK` for
//! an open fd and `EBADF` otherwise.

use super::call::Shim;
use super::errno::{Errno, WasiError};
use crate::guest::Guest;

/// Answers a socket call: `ENOTSOCK` for an open fd, `EBADF` otherwise.
fn not_a_socket(state: &Shim<'_>, fd: u32) -> Result<(), WasiError> {
    state.wasi.fd(fd)?;
    Err(Errno::Notsock.into())
}

fd_only! {
    /// `sock_accept`: no fd is a socket.
    sock_accept(u32, u32) => not_a_socket;
    /// `sock_recv`: no fd is a socket.
    sock_recv(u32, u32, u32, u32, u32) => not_a_socket;
    /// `sock_send`: no fd is a socket.
    sock_send(u32, u32, u32, u32) => not_a_socket;
    /// `sock_shutdown`: no fd is a socket.
    sock_shutdown(u32) => not_a_socket;
}
