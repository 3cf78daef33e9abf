//! The WASI errno values the shim answers with, and how a shim function's error is either an
//! errno handed back to the guest or a failure that ends the run.

use crate::fs::FsError;
use crate::guest::OutOfBounds;
use crate::reason::Failure;

/// WASI errno values the shim answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum Errno {
    /// No error.
    Success = 0,
    /// Resource unavailable, try again (stdin had nothing and the run has no deadline to wait
    /// for).
    Again = 6,
    /// Bad file descriptor.
    Badf = 8,
    /// File exists.
    Exist = 20,
    /// File too large (a size or position past what the host file can hold).
    Fbig = 22,
    /// Bad address (out-of-bounds pointer).
    Fault = 21,
    /// Invalid argument.
    Inval = 28,
    /// I/O error.
    Io = 29,
    /// Is a directory.
    Isdir = 31,
    /// Too many levels of symbolic links.
    Loop = 32,
    /// Too many open files (the guest holds [`crate::wasi::MAX_OPEN_FDS`]).
    Mfile = 33,
    /// Filename too long.
    Nametoolong = 37,
    /// No such file or directory.
    Noent = 44,
    /// No space left on device.
    Nospc = 51,
    /// Function not supported.
    Nosys = 52,
    /// Not a directory.
    Notdir = 54,
    /// Directory not empty.
    Notempty = 55,
    /// Not a socket.
    Notsock = 57,
    /// Not supported.
    Notsup = 58,
    /// A value too large for its type (a file position past `i64::MAX`).
    Overflow = 61,
    /// Operation not permitted.
    Perm = 63,
    /// Broken pipe.
    Pipe = 64,
    /// Invalid seek.
    Spipe = 70,
    /// Cross-device link (a rename the host cannot do in place).
    Xdev = 75,
    /// Capabilities insufficient.
    Notcapable = 76,
}

impl From<FsError> for Errno {
    fn from(e: FsError) -> Self {
        match e {
            FsError::NotFound => Errno::Noent,
            FsError::NotADirectory => Errno::Notdir,
            FsError::IsADirectory => Errno::Isdir,
            FsError::Escapes | FsError::AccessDenied | FsError::ReadOnly => Errno::Perm,
            FsError::Exists => Errno::Exist,
            FsError::NotEmpty => Errno::Notempty,
            FsError::CrossDevice => Errno::Xdev,
            FsError::NoSpace => Errno::Nospc,
            FsError::Loop => Errno::Loop,
            FsError::InvalidName => Errno::Inval,
            FsError::Io => Errno::Io,
        }
    }
}

impl From<OutOfBounds> for Errno {
    fn from(_: OutOfBounds) -> Self {
        Errno::Fault
    }
}

/// How a shim function did not succeed: an errno for the guest, or a failure (fuel, deadline)
/// that ends the run.
#[derive(Debug)]
pub(crate) enum WasiError {
    Errno(Errno),
    Stop(Failure),
}

impl From<Errno> for WasiError {
    fn from(e: Errno) -> Self {
        Self::Errno(e)
    }
}

impl From<FsError> for WasiError {
    fn from(e: FsError) -> Self {
        Self::Errno(e.into())
    }
}

impl From<OutOfBounds> for WasiError {
    fn from(_: OutOfBounds) -> Self {
        Self::Errno(Errno::Fault)
    }
}

impl From<Failure> for WasiError {
    fn from(f: Failure) -> Self {
        Self::Stop(f)
    }
}
