//! The raw TDM IPC ABI, and every `unsafe` block of the crate but the SIMD build's vector loads.
//!
//! - the exports `tdm_alloc`, `tdm_free` and `tdm_plugin_execute_intent` (wasm32 only);
//! - the imports `tdm.tdm_host_call` and `tdm.tdm_host_response`, behind [`host_call`];
//! - the guest's global allocator and panic handler;
//! - [`ascii_run`], the JSON reader's inner loop, which proves a run of bytes ASCII as it goes and
//!   so hands it out as a `str` without a second pass of `core::str::from_utf8`.
//!
//! The host's side of the contract (`docs/ABI.md` section 2): it writes a request into a block
//! that `tdm_alloc` returned, calls `tdm_plugin_execute_intent` once with that block, reads the
//! framed response, then calls `tdm_free` on both blocks with their exact sizes.

use crate::host::HostError;
use alloc::vec::Vec;

/// The alignment of every block handed to the host (byte buffers: `Box<[u8]>` uses 1).
#[cfg(target_arch = "wasm32")]
const ALIGN: usize = 1;

/// The guest's allocator ([`crate::arena`] over this module's linear memory).
#[cfg(all(
    target_arch = "wasm32",
    not(target_feature = "atomics"),
    feature = "allocator",
    not(feature = "fuel-marks")
))]
#[global_allocator]
static ALLOCATOR: allocator::WasmArena = allocator::WasmArena::new();

/// The same allocator, each call marked for the `sdk_fuel` harness (feature `fuel-marks`).
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics"), feature = "allocator", feature = "fuel-marks"))]
#[global_allocator]
static ALLOCATOR: marks::Marked<allocator::WasmArena> = marks::Marked(allocator::WasmArena::new());

/// The global allocator: [`crate::arena::Arena`]'s bookkeeping, over this module's linear memory.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics"), feature = "allocator"))]
mod allocator {
    use crate::arena::{Arena, Memory, Resized, PAGE};
    use core::alloc::{GlobalAlloc, Layout};
    use core::cell::UnsafeCell;

    /// The module's memory 0, grown with `memory.grow`.
    struct LinearMemory;

    impl Memory for LinearMemory {
        fn size(&self) -> usize {
            core::arch::wasm32::memory_size(0) * PAGE
        }

        fn heap_start(&self) -> usize {
            unsafe extern "C" {
                /// The linker's first address past the static data and the shadow stack.
                static __heap_base: u8;
            }
            // Only the symbol's address is taken; nothing is read through it.
            (&raw const __heap_base) as usize
        }

        fn grow(&mut self, pages: usize) -> bool {
            core::arch::wasm32::memory_grow(0, pages) != usize::MAX
        }

        fn load(&self, address: usize) -> usize {
            // SAFETY: the arena reads only the first word of a free block it owns (or the word it
            // stored before an over-aligned block): in memory, word-aligned, and not handed out.
            unsafe { core::ptr::with_exposed_provenance::<usize>(address).read() }
        }

        fn store(&mut self, address: usize, value: usize) {
            // SAFETY: as for `load`: the word belongs to a block the arena owns and no one else
            // holds.
            unsafe { core::ptr::with_exposed_provenance_mut::<usize>(address).write(value) }
        }
    }

    /// The arena, shared by the one thread of a module without atomics.
    pub(crate) struct WasmArena(UnsafeCell<Arena>);

    // SAFETY: without the `atomics` target feature a wasm32 module runs on one thread, so the
    // arena is never touched from two threads.
    unsafe impl Sync for WasmArena {}

    impl WasmArena {
        pub(crate) const fn new() -> Self {
            Self(UnsafeCell::new(Arena::new()))
        }

        /// The arena; one caller at a time.
        #[allow(clippy::mut_from_ref)]
        fn arena(&self) -> &mut Arena {
            // SAFETY: one thread (see `Sync`), and every use below ends before another starts:
            // no arena method calls back into the allocator.
            unsafe { &mut *self.0.get() }
        }
    }

    // SAFETY: the arena hands out 8-aligned blocks of at least the size asked (or aligned as
    // asked, for larger alignments) inside linear memory, never two overlapping live blocks, and
    // takes blocks back only through `dealloc`/`realloc` with the layout they were given.
    unsafe impl GlobalAlloc for WasmArena {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // 0 when the arena has no block: the null pointer.
            core::ptr::with_exposed_provenance_mut(self.arena().alloc_address(
                &mut LinearMemory,
                layout.size(),
                layout.align(),
            ))
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            self.arena().free(&mut LinearMemory, ptr.expose_provenance(), layout.size(), layout.align());
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let address = ptr.expose_provenance();
            match self.arena().resize(&mut LinearMemory, address, layout.size(), layout.align(), new_size) {
                Resized::InPlace => ptr,
                Resized::Move => {
                    let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
                        return core::ptr::null_mut();
                    };
                    // SAFETY: `new_layout` has a non-zero size (realloc's contract).
                    let new = unsafe { self.alloc(new_layout) };
                    if !new.is_null() {
                        // SAFETY: both blocks are live, distinct, and at least this long.
                        unsafe { core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
                        // SAFETY: `ptr` was allocated with `layout` and is not used again.
                        unsafe { self.dealloc(ptr, layout) };
                    }
                    new
                }
            }
        }
    }
}

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

/// Scans `bytes` from `from` to the first byte that ends a plain JSON string run (`"`, `\`, a
/// control character) or is not ASCII, and answers its index (or the length) and the bytes before
/// it as a `str`: 16 bytes (two words) a round and 64 in runs past 512 bytes (`json/words.rs`), or
/// with `simd128` 128 bytes a round (`json/lanes.rs`).
///
/// This is the JSON reader's inner loop. Proving the run ASCII in the same pass (one `or` a word)
/// is what makes it worth `unsafe`: a string param would otherwise cost about
/// 2.8 fuel per byte more, for a second pass of `core::str::from_utf8`.
#[inline(always)]
pub(crate) fn ascii_run(bytes: &[u8], from: usize) -> (usize, &str) {
    let end = ascii_run_end(bytes, from);
    let run = bytes.get(from..end).unwrap_or_default();
    // SAFETY: `ascii_run_end` answers the first byte at or after `from` with its high bit set, or
    // an earlier stop, or the length (its contract, tested in `json::scan`'s tests and, for the
    // SIMD build, by the examples' tests): every byte of `from..end` has a clear high bit, so the
    // run is ASCII, hence UTF-8.
    (end, unsafe { core::str::from_utf8_unchecked(run) })
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use crate::json::lanes::ascii_run_end;

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
use crate::json::words::ascii_run_end;

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
