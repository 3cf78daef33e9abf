//! Status codes, the last error's message, and the guard every extern function runs its body in:
//! a failure becomes a status plus a message for [`contour_last_error`], a panic becomes
//! [`ContourStatus::Panic`] (with the `std` feature; without it panics abort).

use alloc::ffi::CString;
use alloc::string::String;
use core::ffi::c_char;

/// What a call came to. `CONTOUR_STATUS_OK` is 0; every other value has a message in
/// `contour_last_error()`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContourStatus {
    /// The call did what it says.
    Ok = 0,
    /// Refused for a `blockedReason` (a plugin that fails its load checks, a policy that cannot
    /// be enforced): the reason is in the call's `reason_out`.
    Refused = 1,
    /// A pointer that must not be NULL was NULL.
    NullPointer = 2,
    /// A handle that is not live: freed already, never made by this library, or dangling.
    InvalidHandle = 3,
    /// A live handle of another kind (a plugin where a sandbox was expected).
    WrongKind = 4,
    /// A pointer plus its length overflows the address space (or the length is above
    /// `PTRDIFF_MAX`).
    LengthOverflow = 5,
    /// An argument's content is unusable: not UTF-8, not JSON, an unknown enum value, a grant
    /// that does not parse.
    InvalidArgument = 6,
    /// The sandbox is running a call already: a callback called back into it (re-entrance) or
    /// another thread is using it.
    Busy = 7,
    /// More bytes than the limit the function names.
    TooLarge = 8,
    /// A trace could not be decoded, recorded or replayed (its module, policy or format).
    Trace = 9,
    /// A replay diverged from its trace: the report says where.
    Diverged = 10,
    /// A state the call cannot be made in (recording while recording, stopping when not).
    InvalidState = 11,
    /// A panic inside the library, caught at the boundary: a bug in Contour, reported as data.
    Panic = 12,
}

impl ContourStatus {
    /// The status's name, NUL-terminated.
    const fn name(self) -> &'static core::ffi::CStr {
        match self {
            Self::Ok => c"ok",
            Self::Refused => c"refused",
            Self::NullPointer => c"null_pointer",
            Self::InvalidHandle => c"invalid_handle",
            Self::WrongKind => c"wrong_kind",
            Self::LengthOverflow => c"length_overflow",
            Self::InvalidArgument => c"invalid_argument",
            Self::Busy => c"busy",
            Self::TooLarge => c"too_large",
            Self::Trace => c"trace",
            Self::Diverged => c"diverged",
            Self::InvalidState => c"invalid_state",
            Self::Panic => c"panic",
        }
    }

    /// Every status, in order of value.
    pub(crate) const ALL: [ContourStatus; 13] = [
        Self::Ok,
        Self::Refused,
        Self::NullPointer,
        Self::InvalidHandle,
        Self::WrongKind,
        Self::LengthOverflow,
        Self::InvalidArgument,
        Self::Busy,
        Self::TooLarge,
        Self::Trace,
        Self::Diverged,
        Self::InvalidState,
        Self::Panic,
    ];
}

/// A failed call: its status and what exactly went wrong.
#[derive(Debug)]
pub(crate) struct Error {
    /// The status returned to C.
    pub(crate) status: ContourStatus,
    /// The message `contour_last_error` returns (after the function's name).
    pub(crate) message: String,
}

impl Error {
    /// A failure with `status` and `message`.
    pub(crate) fn new(status: ContourStatus, message: impl Into<String>) -> Self {
        Self { status, message: message.into() }
    }
}

/// Stores `message` as the last error (a NUL inside becomes a space).
fn set_last_error(function: &str, message: &str) {
    let text: String =
        alloc::format!("{function}: {message}").chars().map(|c| if c == '\0' { ' ' } else { c }).collect();
    let text = CString::new(text).unwrap_or_default();
    store(text);
}

#[cfg(feature = "std")]
std::thread_local! {
    /// The last error of this thread.
    static LAST_ERROR: core::cell::RefCell<CString> = core::cell::RefCell::new(CString::default());
}

#[cfg(feature = "std")]
fn store(text: CString) {
    LAST_ERROR.with(|last| *last.borrow_mut() = text);
}

#[cfg(feature = "std")]
fn last_ptr() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// The last error of the process (no threads without std).
#[cfg(not(feature = "std"))]
static LAST_ERROR: spin::Mutex<Option<CString>> = spin::Mutex::new(None);

#[cfg(not(feature = "std"))]
fn store(text: CString) {
    *LAST_ERROR.lock() = Some(text);
}

#[cfg(not(feature = "std"))]
fn last_ptr() -> *const c_char {
    LAST_ERROR.lock().as_ref().map_or(c"".as_ptr(), |text| text.as_ptr())
}

/// Runs `body` (an extern function's), turning a panic into a message.
#[cfg(feature = "std")]
fn catch<T>(body: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| String::from(*s))
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| String::from("(no message)"));
            Err(Error::new(ContourStatus::Panic, alloc::format!("a panic inside Contour was caught: {what}")))
        }
    }
}

/// Runs `body`; without std a panic aborts (the panic handler), so there is nothing to catch.
#[cfg(not(feature = "std"))]
fn catch<T>(body: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    body()
}

/// The guard of an extern function returning a status: runs `body`, stores the message of a
/// failure (a success leaves the last error as it was).
pub(crate) fn guard(function: &'static str, body: impl FnOnce() -> Result<(), Error>) -> ContourStatus {
    match catch(body) {
        Ok(()) => ContourStatus::Ok,
        Err(error) => {
            set_last_error(function, &error.message);
            error.status
        }
    }
}

/// The guard of an extern function returning a value: `fallback` on failure.
pub(crate) fn guard_value<T>(function: &'static str, fallback: T, body: impl FnOnce() -> Result<T, Error>) -> T {
    match catch(body) {
        Ok(value) => value,
        Err(error) => {
            set_last_error(function, &error.message);
            fallback
        }
    }
}

/// The message of the last failed call on this thread (without the `std` feature: in the
/// process), NUL-terminated: `"function: what went wrong"`; `""` before any failure. A call
/// that succeeds leaves it as it was, so read it right after the call that failed. Never NULL.
/// The pointer stays valid until the next failing `contour_*` call on this thread; copy the
/// text to keep it.
#[no_mangle]
pub extern "C" fn contour_last_error() -> *const c_char {
    last_ptr()
}

/// The name of a status value (`"ok"`, `"null_pointer"`, ...), NUL-terminated and static;
/// `"unknown"` for a value that is not a `contour_status`.
#[no_mangle]
pub extern "C" fn contour_status_str(status: i32) -> *const c_char {
    let found = ContourStatus::ALL.iter().find(|s| **s as i32 == status);
    found.map_or(c"unknown", |s| s.name()).as_ptr()
}

/// This library's version (the workspace's), NUL-terminated and static.
#[no_mangle]
pub extern "C" fn contour_version() -> *const c_char {
    const VERSION: &core::ffi::CStr =
        match core::ffi::CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(version) => version,
            Err(_) => c"unknown",
        };
    VERSION.as_ptr()
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_a_status_and_a_message() {
        let status = guard("contour_test", || panic!("boom"));
        assert_eq!(status, ContourStatus::Panic);
        // SAFETY: never NULL, NUL-terminated.
        let message = unsafe { core::ffi::CStr::from_ptr(contour_last_error()) }.to_string_lossy().into_owned();
        assert!(message.starts_with("contour_test: a panic inside Contour was caught: boom"), "{message}");
        assert_eq!(guard_value("contour_test", 7, || -> Result<u8, Error> { panic!("again") }), 7);
    }
}
