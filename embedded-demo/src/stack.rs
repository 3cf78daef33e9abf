//! The native stack's high-water mark: the stack region (from the end of the statics to the top
//! of RAM, where both boards' start-up code puts the stack) is painted with a pattern at start,
//! and the lowest word no longer holding it says how deep the stack has been.

/// The pattern the unused stack holds.
const PAINT: u32 = 0xA5A5_A5A5;
/// Left untouched below the frame that paints (its own frame and what it calls).
const MARGIN: usize = 1024;

extern "C" {
    /// The end of the statics (.bss, .uninit): the lowest address the stack may reach.
    static __sheap: u8;
    /// The top of the stack (the end of RAM on both boards).
    static _stack_start: u8;
}

fn bottom() -> usize {
    // Only the symbol's address is taken (the linker script defines it).
    core::ptr::addr_of!(__sheap) as usize
}

/// The top of the stack.
pub fn top() -> usize {
    // Only the symbol's address is taken (the linker script defines it).
    core::ptr::addr_of!(_stack_start) as usize
}

/// The bytes the stack region holds.
pub fn size() -> usize {
    top() - bottom()
}

/// Paints the unused stack below the caller's frame. Call once, first thing.
#[inline(never)]
pub fn paint() {
    let here = 0u32;
    let sp = core::ptr::addr_of!(here) as usize;
    let mut word = (bottom() + 3) & !3;
    while word + MARGIN < sp {
        // SAFETY: the words from the end of the statics to below the current frame are the
        // unused part of the stack region: nothing else owns them, and nothing reads them but
        // `high_water`.
        unsafe { core::ptr::write_volatile(word as *mut u32, PAINT) };
        word += 4;
    }
}

/// The most bytes of stack used since `paint` (counted from the top of the stack).
pub fn high_water() -> usize {
    let mut word = (bottom() + 3) & !3;
    // SAFETY: reads the painted words of the stack region, below any live frame.
    while word < top() && unsafe { core::ptr::read_volatile(word as *const u32) } == PAINT {
        word += 4;
    }
    top() - word
}
