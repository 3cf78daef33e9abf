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

/// `sock_accept`: no fd is a socket.
pub(crate) fn sock_accept(
    _g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    _flags: u32,
    _out: u32,
) -> Result<(), WasiError> {
    not_a_socket(s, fd)
}

/// `sock_recv`: no fd is a socket.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sock_recv(
    _g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    _iovs: u32,
    _n: u32,
    _flags: u32,
    _nread: u32,
    _oflags: u32,
) -> Result<(), WasiError> {
    not_a_socket(s, fd)
}

/// `sock_send`: no fd is a socket.
pub(crate) fn sock_send(
    _g: &mut Guest<'_>,
    s: &mut Shim<'_>,
    fd: u32,
    _iovs: u32,
    _n: u32,
    _flags: u32,
    _nwritten: u32,
) -> Result<(), WasiError> {
    not_a_socket(s, fd)
}

/// `sock_shutdown`: no fd is a socket.
pub(crate) fn sock_shutdown(_g: &mut Guest<'_>, s: &mut Shim<'_>, fd: u32, _how: u32) -> Result<(), WasiError> {
    not_a_socket(s, fd)
}
