//! What a `no_std` build on bare metal (`target_os = "none"`, e.g. thumbv7em-none-eabihf) needs to
//! be a static library of its own: a global allocator over the C library's `malloc` and `free`
//! (newlib's on Zephyr and most FreeRTOS ports; route them to `pvPortMalloc`/`vPortFree` where
//! the port does not), and a panic handler that calls the C library's `abort()` (a panic is a bug
//! in Contour; without std it cannot be caught at the boundary).

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;

extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(ptr: *mut c_void);
    fn abort() -> !;
}

/// The alignment `malloc` guarantees on the targets this is built for (8 on ARM EABI, RISC-V).
const MALLOC_ALIGN: usize = 8;

/// Rust's allocations through C's `malloc`: larger alignments over-allocate and keep the
/// pointer `malloc` returned in the word before the aligned block.
struct CAllocator;

// SAFETY: `alloc` returns NULL or a block of at least `layout.size()` bytes aligned to
// `layout.align()` that nothing else uses, and `dealloc` gives back exactly what `alloc` took
// (the same branch is chosen from the same layout).
unsafe impl GlobalAlloc for CAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: malloc is the C library's; any size is allowed (NULL on failure).
            return unsafe { malloc(layout.size()) }.cast();
        }
        let Some(total) = layout.size().checked_add(layout.align()) else {
            return core::ptr::null_mut();
        };
        // SAFETY: as above.
        let raw = unsafe { malloc(total) }.cast::<u8>();
        if raw.is_null() {
            return raw;
        }
        // The next multiple of the alignment strictly above `raw`: at least MALLOC_ALIGN (>= one
        // word) bytes after it, since both are multiples of MALLOC_ALIGN, and at most `align`.
        let offset = layout.align() - (raw as usize & (layout.align() - 1));
        // SAFETY: `offset` <= align, so `raw + offset + size` stays inside the `total` bytes.
        let aligned = unsafe { raw.add(offset) };
        // SAFETY: `aligned - size_of::<usize>()` >= raw (offset >= MALLOC_ALIGN >= word size)
        // lies inside the block and is word-aligned (aligned to `align` > MALLOC_ALIGN).
        unsafe { aligned.cast::<usize>().sub(1).write(raw as usize) };
        aligned
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: `ptr` came from `malloc` in `alloc`'s first branch (same layout).
            unsafe { free(ptr.cast()) };
            return;
        }
        // SAFETY: `alloc` wrote the pointer `malloc` returned in the word before `ptr`.
        let raw = unsafe { ptr.cast::<usize>().sub(1).read() };
        // SAFETY: `raw` is that block's start, given back once.
        unsafe { free(raw as *mut c_void) };
    }
}

#[global_allocator]
static ALLOCATOR: CAllocator = CAllocator;

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: the C library's abort never returns and takes no arguments.
    unsafe { abort() }
}
