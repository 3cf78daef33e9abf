//! The firmware's heap: embedded-alloc's linked-list allocator over one static region, wrapped
//! so it records its high-water mark (the most bytes in use at once since the last reset).

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicUsize, Ordering};
use embedded_alloc::LlffHeap;

/// Size of the heap region: 2 MiB, the same on both boards so their figures compare.
#[cfg(not(feature = "part-256k"))]
pub const HEAP_BYTES: usize = 2 * 1024 * 1024;
/// Size of the heap region on a 256 KiB-RAM part (`part-256k`): what the RAM leaves after the
/// other statics (about 50 bytes) and the stack's reserve (build.rs's memory map asserts at least
/// 32 KiB of stack).
#[cfg(feature = "part-256k")]
pub const HEAP_BYTES: usize = 220 * 1024;

/// The heap's memory, handed to the allocator once by [`init`].
struct Region(UnsafeCell<[MaybeUninit<u8>; HEAP_BYTES]>);

// SAFETY: the region is touched only through the allocator, which serialises access with a
// critical section; `init` hands it over once, before anything allocates.
unsafe impl Sync for Region {}

static REGION: Region = Region(UnsafeCell::new([MaybeUninit::uninit(); HEAP_BYTES]));

/// An allocator that tracks the most bytes in use at once.
pub struct TrackedHeap {
    heap: LlffHeap,
    high_water: AtomicUsize,
}

#[global_allocator]
static HEAP: TrackedHeap = TrackedHeap { heap: LlffHeap::empty(), high_water: AtomicUsize::new(0) };

/// Hands the static region to the allocator. Call once, first thing, before any allocation.
pub fn init() {
    static DONE: AtomicUsize = AtomicUsize::new(0);
    if DONE.swap(1, Ordering::AcqRel) == 0 {
        // SAFETY: runs once (the flag above); the region is static, unused by anything else,
        // and HEAP_BYTES long.
        unsafe { HEAP.heap.init(REGION.0.get() as usize, HEAP_BYTES) }
    }
}

/// Bytes in use now.
pub fn used() -> usize {
    HEAP.heap.used()
}

/// The most bytes in use at once since the last [`reset_high_water`].
pub fn high_water() -> usize {
    HEAP.high_water.load(Ordering::Relaxed)
}

/// Starts a new high-water measurement from the bytes in use now.
pub fn reset_high_water() {
    HEAP.high_water.store(used(), Ordering::Relaxed);
}

// SAFETY: every call is forwarded to LlffHeap, a sound allocator; the wrapper only reads its
// usage after a successful allocation.
unsafe impl GlobalAlloc for TrackedHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        let ptr = unsafe { self.heap.alloc(layout) };
        if !ptr.is_null() {
            self.high_water.fetch_max(self.heap.used(), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc` is passed on unchanged.
        unsafe { self.heap.dealloc(ptr, layout) }
    }
}
