//! Handles and the checks on everything C hands in. Every handle is an `Arc` whose address is in
//! one registry of live handles with its kind, and whose magic tag is set while it lives: a
//! pointer is dereferenced only after the registry knows it, so a dangling, freed or foreign
//! pointer is an error, never a read. A call holds its own strong count while it runs, so even a
//! handle freed meanwhile (by a callback, another thread) stays valid until the call returns.
//! Byte buffers handed to C are handles too ([`ContourBuffer`]).

use crate::error::{guard, guard_value, ContourStatus, Error};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};

/// What a handle is; its magic tag is derived from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `contour_buffer`.
    Buffer,
    /// `contour_policy`.
    Policy,
    /// `contour_runtime`.
    Runtime,
    /// `contour_plugin`.
    Plugin,
    /// `contour_sandbox`.
    Sandbox,
    /// `contour_host_answer` (live only during a host callback).
    HostAnswer,
}

impl Kind {
    /// The C type's name.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Buffer => "contour_buffer",
            Self::Policy => "contour_policy",
            Self::Runtime => "contour_runtime",
            Self::Plugin => "contour_plugin",
            Self::Sandbox => "contour_sandbox",
            Self::HostAnswer => "contour_host_answer",
        }
    }

    /// The magic tag a live handle of this kind carries ("CTR" and a kind byte).
    pub(crate) const fn magic(self) -> u32 {
        0x4354_5200 | (self as u32 + 1)
    }
}

/// A type handed to C as an opaque handle.
pub(crate) trait Handle: Send + Sync + Sized + 'static {
    /// Its kind.
    const KIND: Kind;
    /// Its magic tag: `KIND.magic()` while live, 0 once freed.
    fn magic(&self) -> &AtomicU32;
    /// Whether it is in use by a running call (then it cannot be freed).
    fn busy(&self) -> bool {
        false
    }
}

/// Every live handle's address and kind.
static LIVE: spin::Mutex<BTreeMap<usize, Kind>> = spin::Mutex::new(BTreeMap::new());

/// Makes `value` a handle for C: its address is registered as live.
pub(crate) fn make<T: Handle>(value: T) -> *mut T {
    value.magic().store(T::KIND.magic(), Ordering::Release);
    let ptr = Arc::into_raw(Arc::new(value)).cast_mut();
    LIVE.lock().insert(ptr as usize, T::KIND);
    ptr
}

/// The handle C passed as `arg`, checked: not NULL, live, of kind `T`, magic intact.
pub(crate) fn get<T: Handle>(ptr: *const T, arg: &str) -> Result<Arc<T>, Error> {
    if ptr.is_null() {
        return Err(null(arg));
    }
    let live = LIVE.lock();
    match live.get(&(ptr as usize)) {
        None => Err(Error::new(
            ContourStatus::InvalidHandle,
            format!("`{arg}` is not a live {} (freed already, never made by contour, or dangling)", T::KIND.name()),
        )),
        Some(kind) if *kind != T::KIND => {
            Err(Error::new(ContourStatus::WrongKind, format!("`{arg}` is a {}, not a {}", kind.name(), T::KIND.name())))
        }
        Some(_) => {
            // SAFETY: the address is in the registry, so `make` produced it from `Arc::into_raw`
            // of a `T` (the kind matches) and the registry's strong count is still held: `free`
            // removes the address under this same lock before it gives that count up. Adding a
            // count here, under the lock, keeps the value alive for this call.
            let handle = unsafe {
                Arc::increment_strong_count(ptr);
                Arc::from_raw(ptr)
            };
            if handle.magic().load(Ordering::Acquire) != T::KIND.magic() {
                return Err(Error::new(ContourStatus::InvalidHandle, format!("`{arg}` has a broken magic tag")));
            }
            Ok(handle)
        }
    }
}

/// Frees every non-NULL buffer of a report's `fields` and sets each to NULL (so freeing a report
/// twice is harmless); a buffer that is not live is the first error returned, and the others
/// are still freed.
pub(crate) fn free_buffers<const N: usize>(fields: [&mut *mut ContourBuffer; N]) -> Result<(), Error> {
    let mut first_error = None;
    for field in fields {
        if !field.is_null() {
            if let Err(e) = free(*field, "report buffer") {
                first_error.get_or_insert(e);
            }
            *field = core::ptr::null_mut();
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Frees the handle C passed as `arg`: unregisters it, clears its magic, gives up the
/// registry's count (the value is dropped when no running call holds it).
pub(crate) fn free<T: Handle>(ptr: *mut T, arg: &str) -> Result<(), Error> {
    let handle = get(ptr.cast_const(), arg)?;
    if handle.busy() {
        return Err(Error::new(
            ContourStatus::Busy,
            format!("`{arg}` is running a call (a callback cannot free the sandbox it runs in)"),
        ));
    }
    let mut live = LIVE.lock();
    if live.remove(&(ptr as usize)) != Some(T::KIND) {
        return Err(Error::new(ContourStatus::InvalidHandle, format!("`{arg}` was freed by another call meanwhile")));
    }
    handle.magic().store(0, Ordering::Release);
    if live.is_empty() {
        // An empty map keeps its last node; giving it back leaves nothing allocated at exit.
        *live = BTreeMap::new();
    }
    drop(live);
    // SAFETY: the address was registered (checked and removed above under the lock), so the
    // registry's strong count, made by `Arc::into_raw` in `make`, is still outstanding; taking
    // it back once is what removing the address allows, and nobody else can take it again.
    drop(unsafe { Arc::from_raw(ptr.cast_const()) });
    drop(handle);
    Ok(())
}

/// The error of a NULL `arg`.
pub(crate) fn null(arg: &str) -> Error {
    Error::new(ContourStatus::NullPointer, format!("`{arg}` is NULL"))
}

/// The `len` bytes at `ptr` (`arg`): empty when `len` is 0 (then `ptr` may be NULL); NULL with a
/// length, or a range past the end of the address space, is an error.
pub(crate) fn bytes<'a>(ptr: *const u8, len: usize, arg: &str) -> Result<&'a [u8], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(null(arg));
    }
    if len > isize::MAX as usize || (ptr as usize).checked_add(len).is_none() {
        return Err(Error::new(
            ContourStatus::LengthOverflow,
            format!("`{arg}` plus its length {len} overflows the address space"),
        ));
    }
    // SAFETY: `ptr` is not NULL and `ptr + len` neither wraps nor exceeds isize::MAX (checked
    // above); the header's contract for every (pointer, length) pair is that the caller's
    // `len` bytes are readable and unchanged for the duration of the call, and u8 has no
    // alignment or validity requirement.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// The `len` bytes at `ptr` as UTF-8 text.
pub(crate) fn text<'a>(ptr: *const u8, len: usize, arg: &str) -> Result<&'a str, Error> {
    core::str::from_utf8(bytes(ptr, len, arg)?).map_err(|e| {
        Error::new(
            ContourStatus::InvalidArgument,
            format!("`{arg}` is not UTF-8 (bad byte at offset {})", e.valid_up_to()),
        )
    })
}

/// An out-parameter C passed, checked (not NULL, aligned) before any work is done.
pub(crate) struct Out<T> {
    ptr: *mut T,
}

impl<T> Out<T> {
    /// Checks `ptr`, named `arg`.
    pub(crate) fn new(ptr: *mut T, arg: &str) -> Result<Self, Error> {
        if ptr.is_null() {
            return Err(null(arg));
        }
        if !ptr.is_aligned() {
            return Err(Error::new(ContourStatus::InvalidArgument, format!("`{arg}` is not aligned for its type")));
        }
        Ok(Self { ptr })
    }

    /// An optional out-parameter: `None` when NULL.
    pub(crate) fn optional(ptr: *mut T, arg: &str) -> Result<Option<Self>, Error> {
        if ptr.is_null() {
            Ok(None)
        } else {
            Self::new(ptr, arg).map(Some)
        }
    }

    /// Writes `value` (the previous content is not read or dropped: C memory).
    pub(crate) fn put(&self, value: T) {
        // SAFETY: `ptr` is non-NULL and aligned (checked in `new`); the header's contract for
        // every out-parameter is that it points to writable memory for one value of its type.
        // `write` neither reads nor drops what was there.
        unsafe { self.ptr.write(value) }
    }

    /// The value already there, changed in place: for a struct this library filled (a report).
    pub(crate) fn existing(&mut self) -> &mut T {
        // SAFETY: non-NULL and aligned (checked in `new`); the header's contract for the
        // functions that take back a struct this library filled (`contour_report_free`,
        // `contour_replay_report_free`) is that it points to that initialised struct, readable
        // and writable, and used by no one else during the call.
        unsafe { &mut *self.ptr }
    }

    /// A copy of the value there: for a struct C filled (`contour_environment`).
    pub(crate) fn read(&self) -> T
    where
        T: Copy,
    {
        // SAFETY: non-NULL and aligned (checked in `new`); the header's contract for such an
        // argument is that it points to an initialised value of its type during the call.
        unsafe { self.ptr.read() }
    }
}

/// Bytes owned by the library and lent to C: read with `contour_buffer_data` and
/// `contour_buffer_len`, freed with `contour_buffer_free`.
pub struct ContourBuffer {
    magic: AtomicU32,
    bytes: Box<[u8]>,
}

impl Handle for ContourBuffer {
    const KIND: Kind = Kind::Buffer;
    fn magic(&self) -> &AtomicU32 {
        &self.magic
    }
}

/// A new buffer handle holding `bytes`.
pub(crate) fn buffer(bytes: impl Into<Vec<u8>>) -> *mut ContourBuffer {
    make(ContourBuffer { magic: AtomicU32::new(0), bytes: bytes.into().into_boxed_slice() })
}

/// The first byte of `buffer`'s contents (valid until `contour_buffer_free`; not NUL-terminated;
/// a non-NULL pointer even when empty). NULL when `buffer` is not a live buffer, with the
/// reason in `contour_last_error()`.
#[no_mangle]
pub extern "C" fn contour_buffer_data(buffer: *const ContourBuffer) -> *const u8 {
    guard_value("contour_buffer_data", core::ptr::null(), || Ok(get(buffer, "buffer")?.bytes.as_ptr()))
}

/// The length of `buffer`'s contents in bytes; 0 when `buffer` is not a live buffer (then
/// `contour_last_error()` is not empty).
#[no_mangle]
pub extern "C" fn contour_buffer_len(buffer: *const ContourBuffer) -> usize {
    guard_value("contour_buffer_len", 0, || Ok(get(buffer, "buffer")?.bytes.len()))
}

/// Frees a buffer. NULL is `CONTOUR_STATUS_NULL_POINTER`; a buffer freed already (or any pointer
/// that is not a live buffer) is `CONTOUR_STATUS_INVALID_HANDLE`, another handle kind
/// `CONTOUR_STATUS_WRONG_KIND`.
#[no_mangle]
pub extern "C" fn contour_buffer_free(buffer: *mut ContourBuffer) -> ContourStatus {
    guard("contour_buffer_free", || free(buffer, "buffer"))
}
