//! The raw TDM IPC ABI: every `unsafe` block of the crate is in this module.
//!
//! - the exports `tdm_alloc`, `tdm_free` and `tdm_plugin_execute_intent` (wasm32 only);
//! - the imports `tdm.tdm_host_call` and `tdm.tdm_host_response`, behind [`host_call`];
//! - the guest's global allocator and panic handler.
//!
//! The host's side of the contract (`docs/ABI.md` section 2): it writes a request into a block
//! that `tdm_alloc` returned, calls `tdm_plugin_execute_intent` once with that block, reads the
//! framed response, then calls `tdm_free` on both blocks with their exact sizes.

use crate::host::HostError;
use alloc::vec::Vec;

/// The alignment of every block handed to the host (byte buffers: `Box<[u8]>` uses 1).
#[cfg(target_arch = "wasm32")]
const ALIGN: usize = 1;

/// The guest's allocator: talc, growing linear memory on demand and reusing freed blocks.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics"), feature = "allocator", not(feature = "fuel-marks")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// The same allocator, each call marked for the `sdk_fuel` harness (feature `fuel-marks`).
#[cfg(all(target_family = "wasm", not(target_feature = "atomics"), feature = "allocator", feature = "fuel-marks"))]
#[global_allocator]
static ALLOCATOR: marks::Marked<talc::wasm::WasmDynamicTalc> = marks::Marked(talc::wasm::new_wasm_dynamic_allocator());

/// Fuel marks for the `sdk_fuel` harness (feature `fuel-marks`): the end of each stage of an
/// intent, and the start and end of every allocator call.
pub(crate) mod marks {
    /// The request's method and params have been found.
    pub(crate) const ENVELOPE: i32 = 1;
    /// The params have been read, typed.
    pub(crate) const PARAMS: i32 = 2;
    /// The handler has returned.
    pub(crate) const HANDLER: i32 = 3;
    /// An allocator call starts.
    #[cfg_attr(not(feature = "fuel-marks"), allow(dead_code))]
    pub(crate) const ALLOC_ENTER: i32 = 100;
    /// An allocator call ends.
    #[cfg_attr(not(feature = "fuel-marks"), allow(dead_code))]
    pub(crate) const ALLOC_EXIT: i32 = 101;

    #[cfg(all(target_arch = "wasm32", feature = "fuel-marks"))]
    #[link(wasm_import_module = "contour_profile")]
    unsafe extern "C" {
        /// The harness records the fuel left at this call.
        #[link_name = "mark"]
        fn contour_profile_mark(stage: i32);
    }

    /// Marks `stage` (nothing unless built with the `fuel-marks` feature for wasm32).
    #[inline(always)]
    pub(crate) fn mark(stage: i32) {
        #[cfg(all(target_arch = "wasm32", feature = "fuel-marks"))]
        // SAFETY: the import takes an i32 and touches no guest memory.
        unsafe {
            contour_profile_mark(stage)
        };
        let _ = stage;
    }

    /// An allocator whose every call is marked.
    #[cfg(feature = "fuel-marks")]
    pub(crate) struct Marked<A>(pub(crate) A);

    // SAFETY: every call is passed to the inner allocator as it is; the marks touch no memory.
    #[cfg(feature = "fuel-marks")]
    unsafe impl<A: core::alloc::GlobalAlloc> core::alloc::GlobalAlloc for Marked<A> {
        unsafe fn alloc(&self, layout: core::alloc::Layout) -> *mut u8 {
            mark(ALLOC_ENTER);
            // SAFETY: the caller's contract is passed on unchanged.
            let ptr = unsafe { self.0.alloc(layout) };
            mark(ALLOC_EXIT);
            ptr
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: core::alloc::Layout) {
            mark(ALLOC_ENTER);
            // SAFETY: the caller's contract is passed on unchanged.
            unsafe { self.0.dealloc(ptr, layout) };
            mark(ALLOC_EXIT);
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: core::alloc::Layout, new_size: usize) -> *mut u8 {
            mark(ALLOC_ENTER);
            // SAFETY: the caller's contract is passed on unchanged.
            let ptr = unsafe { self.0.realloc(ptr, layout, new_size) };
            mark(ALLOC_EXIT);
            ptr
        }
    }
}

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "tdm")]
unsafe extern "C" {
    /// Passes the JSON-RPC request at `ptr..ptr+len`; returns the pending answer's length or a
    /// negative code.
    fn tdm_host_call(ptr: i32, len: i32) -> i32;
    /// Copies the pending answer to `ptr` (at most `cap` bytes); returns the bytes written or a
    /// negative code.
    fn tdm_host_response(ptr: i32, cap: i32) -> i32;
}

#[cfg(target_arch = "wasm32")]
unsafe extern "Rust" {
    /// The intent table `plugin!` generates in the plugin crate.
    fn __tdm_plugin_dispatch(method: &str, params: &[u8]) -> crate::intent::Response;
}

/// The wasm32 address of a pointer.
#[cfg(target_arch = "wasm32")]
fn address<T>(ptr: *const T) -> i32 {
    // wasm32 addresses are 32 bits; the ABI passes them as i32.
    ptr.expose_provenance() as i32
}

/// Sends one host request and returns the host's answer (an outcome JSON).
#[cfg(target_arch = "wasm32")]
pub(crate) fn host_call(request: &[u8]) -> Result<Vec<u8>, HostError> {
    let len = i32::try_from(request.len()).map_err(|_| HostError::Call(-2))?;
    // SAFETY: `request` is a live, initialized slice of `len` bytes; the host only reads it,
    // bounds-checked, before returning.
    let n = unsafe { tdm_host_call(address(request.as_ptr()), len) };
    if n < 0 {
        return Err(HostError::Call(n));
    }
    let mut answer: Vec<u8> = Vec::with_capacity(n as usize);
    // SAFETY: `answer` owns `n` bytes of spare capacity at its pointer; the host writes at most
    // `cap = n` bytes there and nothing else.
    let written = unsafe { tdm_host_response(address(answer.as_mut_ptr()), n) };
    if written < 0 {
        return Err(HostError::Response(written));
    }
    let written = (written as usize).min(n as usize);
    // SAFETY: the host initialized the first `written <= n` bytes (capacity is `n`).
    unsafe { answer.set_len(written) };
    Ok(answer)
}

/// Outside a TDM sandbox (native builds and tests) there is no host: every call is refused
/// with code `-1`.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn host_call(_request: &[u8]) -> Result<Vec<u8>, HostError> {
    Err(HostError::Call(-1))
}

/// `tdm_alloc(size) -> ptr`: a block of `size` bytes for the host to write a request into, or
/// 0 when memory cannot grow.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
extern "C" fn tdm_alloc(size: i32) -> i32 {
    let Ok(size) = usize::try_from(size) else { return 0 };
    if size == 0 {
        // A dangling, aligned, non-null address: nothing is read or written through it, and
        // `tdm_free(_, 0)` ignores it.
        return ALIGN as i32;
    }
    let Ok(layout) = core::alloc::Layout::from_size_align(size, ALIGN) else { return 0 };
    // SAFETY: `layout` has a non-zero size; a null result is passed on as 0 (allocation failed).
    let ptr = unsafe { alloc::alloc::alloc(layout) };
    address(ptr)
}

/// `tdm_free(ptr, size)`: gives back a request block or a response frame.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
extern "C" fn tdm_free(ptr: i32, size: i32) {
    let Ok(size) = usize::try_from(size) else { return };
    if ptr == 0 || size == 0 {
        return;
    }
    let Ok(layout) = core::alloc::Layout::from_size_align(size, ALIGN) else { return };
    let ptr = core::ptr::with_exposed_provenance_mut::<u8>(ptr as u32 as usize);
    // SAFETY: by the ABI the host frees only blocks this module handed out, each once and with
    // its exact size: requests from `tdm_alloc(size)` (layout `size`, align 1) and response
    // frames from `tdm_plugin_execute_intent` (a `Box<[u8]>` of `4 + length` bytes, align 1).
    unsafe { alloc::alloc::dealloc(ptr, layout) };
}

/// `tdm_plugin_execute_intent(ptr, len) -> resp`: runs the intent the request at `ptr` names and
/// returns the address of the framed outcome (u32 LE length, then the JSON).
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
extern "C" fn tdm_plugin_execute_intent(ptr: i32, len: i32) -> i32 {
    let request: &[u8] = match usize::try_from(len) {
        Ok(len) if len > 0 && ptr != 0 => {
            let start = core::ptr::with_exposed_provenance::<u8>(ptr as u32 as usize);
            // SAFETY: by the ABI the host wrote `len` bytes at `ptr`, into a block `tdm_alloc`
            // returned, and frees it only after this call returns; nothing writes to it meanwhile.
            unsafe { core::slice::from_raw_parts(start, len) }
        }
        _ => &[],
    };
    let response = crate::intent::handle(request, |method, params| {
        // SAFETY: `plugin!` defines `__tdm_plugin_dispatch` with exactly this signature; a
        // plugin without `plugin!` does not link.
        unsafe { __tdm_plugin_dispatch(method, params) }
    });
    let frame = alloc::boxed::Box::into_raw(response.into_frame());
    address(frame.cast::<u8>())
}

/// Set while the panic handler runs, so a panic inside it traps at once.
#[cfg(all(target_arch = "wasm32", feature = "panic-handler", not(test)))]
static PANICKING: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// A panic cannot unwind here: log it through the `log` host intent, then trap. The host
/// answers the intent with a failed `plugin_trap` outcome and discards the instance.
#[cfg(all(target_arch = "wasm32", feature = "panic-handler", not(test)))]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    use core::fmt::Write;
    use core::sync::atomic::Ordering;
    if !PANICKING.swap(true, Ordering::Relaxed) {
        let mut text = alloc::string::String::new();
        let _ = match info.location() {
            Some(at) => write!(text, "panic at {}:{}: {}", at.file(), at.line(), info.message()),
            None => write!(text, "panic: {}", info.message()),
        };
        // The request is written by hand (no serde here: keeps the handler small and lets it
        // run even when the panic came from serde); the answer is not collected.
        let mut request = alloc::vec::Vec::with_capacity(text.len().min(1024) + 96);
        request.extend_from_slice(br#"{"jsonrpc":"2.0","id":0,"method":"log","params":{"level":"error","message":""#);
        for c in text.chars().take(1024) {
            match c {
                '"' => request.extend_from_slice(b"\\\""),
                '\\' => request.extend_from_slice(b"\\\\"),
                c if (c as u32) < 0x20 => {
                    let hex = b"0123456789abcdef";
                    request.extend_from_slice(b"\\u00");
                    request.push(hex[(c as usize) >> 4]);
                    request.push(hex[(c as usize) & 15]);
                }
                c => request.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        request.extend_from_slice(b"\"}}");
        if let Ok(len) = i32::try_from(request.len()) {
            // SAFETY: `request` is a live, initialized slice of `len` bytes; the host only reads it.
            let _ = unsafe { tdm_host_call(address(request.as_ptr()), len) };
        }
    }
    core::arch::wasm32::unreachable()
}
