//! The guest allocator's bookkeeping, as arithmetic over addresses (the `abi` module turns it
//! into the global allocator over linear memory): blocks of power-of-two sizes bumped from the
//! end of memory, freed blocks kept on one list per size for reuse, and everything reset to empty
//! the moment no block is allocated.
//!
//! Why this shape: one intent allocates a handful of blocks (the request, its params, the output,
//! the response), and the host frees the request and the response after the intent. For a plugin
//! that keeps nothing between intents the allocator is empty again after every intent, so a bump
//! pointer is all it needs: a few dozen fuel per allocation and per free, against about 400 for
//! a general allocator. A plugin that keeps blocks alive between intents gets the per-size free
//! lists, so its memory stays bounded by its peak use of each size.

use core::num::NonZeroUsize;

/// The bytes of one WebAssembly page.
pub(crate) const PAGE: usize = 65_536;
/// The smallest block: 8 bytes (class 3), room for a free block's link.
const MIN_CLASS: u32 = 3;
/// Every block is aligned to this (sizes are powers of two from 8, bumped from a page boundary).
pub(crate) const BLOCK_ALIGN: usize = 8;
/// Size classes: block sizes `2^class` for `class < CLASSES`.
const CLASSES: usize = usize::BITS as usize;

/// The linear memory the arena hands out.
pub(crate) trait Memory {
    /// The memory's size in bytes.
    fn size(&self) -> usize;
    /// Where the heap starts: the first byte no static data or stack uses (the arena hands out
    /// the rest of the initial memory before it grows it). Defaults to the memory's end.
    fn heap_start(&self) -> usize {
        self.size()
    }
    /// Grows the memory by `pages` pages; `false` when it cannot grow.
    fn grow(&mut self, pages: usize) -> bool;
    /// Reads the word at `address` (inside a block the arena owns).
    fn load(&self, address: usize) -> usize;
    /// Writes the word at `address` (inside a block the arena owns).
    fn store(&mut self, address: usize, value: usize);
}

/// What [`Arena::resize`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resized {
    /// The block now holds the new size where it is.
    InPlace,
    /// The caller must allocate a new block, copy and free the old one.
    Move,
}

/// The allocator's state. All addresses are byte addresses of linear memory.
pub(crate) struct Arena {
    started: bool,
    /// Where bumping restarts after a reset.
    base: usize,
    /// The next free byte.
    top: usize,
    /// The end of the memory the arena owns (`top <= end`).
    end: usize,
    /// Blocks handed out and not freed.
    live: usize,
    /// Bit `c` is set when the free list of class `c` is not empty.
    lists: u64,
    /// The first free block of each class; each free block's first word links to the next.
    heads: [usize; CLASSES],
}

impl Arena {
    /// An arena that owns nothing yet: it starts at the end of memory on its first allocation.
    pub(crate) const fn new() -> Self {
        Self { started: false, base: 0, top: 0, end: 0, live: 0, lists: 0, heads: [0; CLASSES] }
    }

    /// The class of a block of `size` bytes, `None` when no block can be that large.
    #[inline(always)]
    fn class(size: usize) -> Option<usize> {
        let size = size.max(1 << MIN_CLASS);
        let class = usize::BITS - (size - 1).leading_zeros();
        (class < usize::BITS).then_some(class as usize)
    }

    /// A block of `size` bytes aligned to `align`, or `None` when memory cannot grow.
    #[inline(always)]
    pub(crate) fn alloc(&mut self, memory: &mut impl Memory, size: usize, align: usize) -> Option<usize> {
        NonZeroUsize::new(self.alloc_address(memory, size, align)).map(NonZeroUsize::get)
    }

    /// [`Arena::alloc`] with 0 for no block (no block is at 0: the arena starts at the end of
    /// memory), which keeps the hot path free of `Option`s passed through memory.
    #[inline(always)]
    pub(crate) fn alloc_address(&mut self, memory: &mut impl Memory, size: usize, align: usize) -> usize {
        if align > BLOCK_ALIGN {
            return self.alloc_aligned(memory, size, align).unwrap_or(0);
        }
        let Some(class) = Self::class(size) else { return 0 };
        let bit = 1u64 << class;
        let block = if self.lists & bit != 0 {
            let block = self.heads[class];
            let next = memory.load(block);
            self.heads[class] = next;
            if next == 0 {
                self.lists &= !bit;
            }
            block
        } else {
            let block = self.top;
            match block.checked_add(1 << class) {
                Some(stop) if stop <= self.end => self.top = stop,
                _ => return self.alloc_growing(memory, 1 << class),
            }
            block
        };
        self.live += 1;
        block
    }

    /// A fresh block of `size` bytes when the memory the arena owns is used up (0: none).
    #[inline(never)]
    fn alloc_growing(&mut self, memory: &mut impl Memory, size: usize) -> usize {
        let Some(block) = self.bump(memory, size) else { return 0 };
        self.live += 1;
        block
    }

    /// `size` fresh bytes at the top, growing memory when needed.
    fn bump(&mut self, memory: &mut impl Memory, size: usize) -> Option<usize> {
        if !self.started {
            let end = memory.size();
            let start = memory.heap_start().next_multiple_of(BLOCK_ALIGN).min(end);
            (self.started, self.base, self.top, self.end) = (true, start, start, end);
        }
        let stop = self.top.checked_add(size)?;
        if stop <= self.end {
            let block = self.top;
            self.top = stop;
            return Some(block);
        }
        let mut start = self.top;
        let current = memory.size();
        if current != self.end {
            // Something else grew the memory: continue after it, and never reset below it.
            start = current;
            self.base = current;
        }
        let stop = start.checked_add(size)?;
        let pages = (stop - current).div_ceil(PAGE);
        let end = current.checked_add(pages.checked_mul(PAGE)?)?;
        if !memory.grow(pages) {
            return None;
        }
        (self.top, self.end) = (stop, end);
        Some(start)
    }

    /// Gives back the block at `block`, allocated with `size` and `align`.
    #[inline(always)]
    pub(crate) fn free(&mut self, memory: &mut impl Memory, block: usize, size: usize, align: usize) {
        if align > BLOCK_ALIGN {
            return self.free_aligned(memory, block, size, align);
        }
        let Some(class) = Self::class(size) else { return };
        let bit = 1u64 << class;
        let next = if self.lists & bit != 0 { self.heads[class] } else { 0 };
        memory.store(block, next);
        self.heads[class] = block;
        self.lists |= bit;
        self.live = self.live.saturating_sub(1);
        if self.live == 0 {
            // Nothing is allocated: forget the lists and bump from the start again.
            self.lists = 0;
            self.top = self.base;
        }
    }

    /// Resizes the block at `block` from `size` to `new_size` where it is when it can: a block
    /// keeps its power-of-two size when shrinking (the last block gives its tail back), and the
    /// last block grows in place.
    #[inline(always)]
    pub(crate) fn resize(
        &mut self,
        memory: &mut impl Memory,
        block: usize,
        size: usize,
        align: usize,
        new_size: usize,
    ) -> Resized {
        let (Some(class), Some(new_class)) = (Self::class(size), Self::class(new_size)) else { return Resized::Move };
        if align > BLOCK_ALIGN {
            return Resized::Move;
        }
        let is_last = block.checked_add(1 << class) == Some(self.top);
        if new_class <= class {
            if is_last {
                self.top = block + (1 << new_class);
            }
            return Resized::InPlace;
        }
        if !is_last {
            return Resized::Move;
        }
        match block.checked_add(1 << new_class) {
            Some(stop) if stop <= self.end => {
                self.top = stop;
                Resized::InPlace
            }
            _ => self.grow_last(memory, block, new_class),
        }
    }

    /// Grows the last block in place to class `new_class` past the memory the arena owns.
    #[inline(never)]
    fn grow_last(&mut self, memory: &mut impl Memory, block: usize, new_class: usize) -> Resized {
        let Some(stop) = block.checked_add(1 << new_class) else { return Resized::Move };
        if stop > self.end {
            if memory.size() != self.end {
                return Resized::Move;
            }
            let pages = (stop - self.end).div_ceil(PAGE);
            let Some(end) = pages.checked_mul(PAGE).and_then(|bytes| self.end.checked_add(bytes)) else {
                return Resized::Move;
            };
            if !memory.grow(pages) {
                return Resized::Move;
            }
            self.end = end;
        }
        self.top = stop;
        Resized::InPlace
    }

    /// A block aligned to more than [`BLOCK_ALIGN`]: carved from a block `align` bytes larger,
    /// whose address is kept in the word just before the aligned one.
    #[inline(never)]
    fn alloc_aligned(&mut self, memory: &mut impl Memory, size: usize, align: usize) -> Option<usize> {
        let outer = self.alloc(memory, size.checked_add(align)?, BLOCK_ALIGN)?;
        // `outer` is 8-aligned and `align` at least 16, so this leaves 8 to `align` bytes before
        // the aligned address: room for the word.
        let aligned = (outer + align) & !(align - 1);
        memory.store(aligned - core::mem::size_of::<usize>(), outer);
        Some(aligned)
    }

    #[inline(never)]
    fn free_aligned(&mut self, memory: &mut impl Memory, block: usize, size: usize, align: usize) {
        let outer = memory.load(block - core::mem::size_of::<usize>());
        self.free(memory, outer, size.saturating_add(align), BLOCK_ALIGN);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// Linear memory as a vector of bytes, with a page limit.
    struct TestMemory {
        bytes: Vec<u8>,
        max_pages: usize,
        heap_start: Option<usize>,
    }

    impl TestMemory {
        fn new(pages: usize, max_pages: usize) -> Self {
            Self { bytes: alloc::vec![0; pages * PAGE], max_pages, heap_start: None }
        }
    }

    impl Memory for TestMemory {
        fn size(&self) -> usize {
            self.bytes.len()
        }
        fn heap_start(&self) -> usize {
            self.heap_start.unwrap_or(self.bytes.len())
        }
        fn grow(&mut self, pages: usize) -> bool {
            if self.bytes.len() / PAGE + pages > self.max_pages {
                return false;
            }
            self.bytes.resize(self.bytes.len() + pages * PAGE, 0);
            true
        }
        fn load(&self, address: usize) -> usize {
            let word = &self.bytes[address..address + core::mem::size_of::<usize>()];
            usize::from_le_bytes(word.try_into().unwrap())
        }
        fn store(&mut self, address: usize, value: usize) {
            self.bytes[address..address + core::mem::size_of::<usize>()].copy_from_slice(&value.to_le_bytes());
        }
    }

    #[test]
    fn the_rest_of_the_initial_memory_is_used_before_it_grows() {
        // A heap base past the data and stack, 8-aligned up: a small intent's blocks fit in the
        // first page, so memory stays one page (a board's budget counts every page).
        let mut memory = TestMemory { heap_start: Some(20_003), ..TestMemory::new(1, 100) };
        let mut arena = Arena::new();
        let first = arena.alloc(&mut memory, 100, 1).unwrap();
        assert_eq!(first, 20_008);
        for _ in 0..100 {
            let block = arena.alloc(&mut memory, 300, 1).unwrap();
            arena.free(&mut memory, block, 300, 1);
        }
        assert_eq!(memory.size(), PAGE, "nothing grew");
        let big = arena.alloc(&mut memory, PAGE, 1).unwrap();
        assert!(big + PAGE <= memory.size() && memory.size() > PAGE, "what does not fit grows memory");
    }

    #[test]
    fn an_intent_that_frees_everything_leaves_the_arena_empty() {
        let (mut arena, mut memory) = (Arena::new(), TestMemory::new(1, 100));
        for _ in 0..1000 {
            let request = arena.alloc(&mut memory, 200, 1).unwrap();
            let name = arena.alloc(&mut memory, 150, 1).unwrap();
            let response = arena.alloc(&mut memory, 300, 1).unwrap();
            arena.free(&mut memory, name, 150, 1);
            arena.free(&mut memory, request, 200, 1);
            assert_ne!(arena.top, arena.base, "the response is still allocated");
            arena.free(&mut memory, response, 300, 1);
            assert_eq!((arena.top, arena.live, arena.lists), (arena.base, 0, 0));
        }
        assert_eq!(memory.size(), 2 * PAGE, "the first allocation grew memory once");
    }

    #[test]
    fn blocks_kept_between_intents_do_not_make_memory_grow() {
        let (mut arena, mut memory) = (Arena::new(), TestMemory::new(1, 100));
        let mut kept = Vec::new();
        for i in 0..2000 {
            let a = arena.alloc(&mut memory, 100 + i % 50, 8).unwrap();
            let b = arena.alloc(&mut memory, 1000, 1).unwrap();
            if i % 100 == 0 {
                kept.push(arena.alloc(&mut memory, 24, 8).unwrap());
            }
            arena.free(&mut memory, a, 100 + i % 50, 8);
            arena.free(&mut memory, b, 1000, 1);
        }
        assert_eq!(kept.len(), 20);
        assert_eq!(memory.size(), 2 * PAGE, "freed blocks were reused");
    }

    #[test]
    fn the_last_block_grows_and_shrinks_in_place() {
        let (mut arena, mut memory) = (Arena::new(), TestMemory::new(1, 100));
        let first = arena.alloc(&mut memory, 16, 1).unwrap();
        let block = arena.alloc(&mut memory, 100, 1).unwrap();
        assert_eq!(arena.resize(&mut memory, block, 100, 1, 100_000), Resized::InPlace);
        assert_eq!(arena.top, block + 131_072);
        assert!(memory.size() >= arena.top);
        assert_eq!(arena.resize(&mut memory, block, 100_000, 1, 20), Resized::InPlace);
        assert_eq!(arena.top, block + 32);
        // Not the last block: it grows by moving, and shrinks keeping its size.
        assert_eq!(arena.resize(&mut memory, first, 16, 1, 17), Resized::Move);
        assert_eq!(arena.resize(&mut memory, first, 16, 1, 3), Resized::InPlace);
        assert_eq!(arena.top, block + 32);
    }

    #[test]
    fn over_aligned_blocks_are_aligned_and_freed() {
        let (mut arena, mut memory) = (Arena::new(), TestMemory::new(1, 100));
        let small = arena.alloc(&mut memory, 8, 8).unwrap();
        for align in [16, 64, 4096] {
            let block = arena.alloc(&mut memory, 40, align).unwrap();
            assert_eq!(block % align, 0);
            assert!(block > small);
            arena.free(&mut memory, block, 40, align);
        }
        arena.free(&mut memory, small, 8, 8);
        assert_eq!((arena.live, arena.top), (0, arena.base));
    }

    #[test]
    fn when_memory_cannot_grow_allocation_fails_and_nothing_changes() {
        let (mut arena, mut memory) = (Arena::new(), TestMemory::new(1, 2));
        let block = arena.alloc(&mut memory, 1000, 1).unwrap();
        assert_eq!(arena.alloc(&mut memory, 2 * PAGE, 1), None);
        assert_eq!(arena.alloc(&mut memory, usize::MAX - 3, 1), None);
        assert_eq!(arena.resize(&mut memory, block, 1000, 1, 3 * PAGE), Resized::Move);
        assert_eq!(arena.live, 1);
        assert!(arena.alloc(&mut memory, 1000, 1).is_some());
    }

    #[test]
    fn memory_grown_by_someone_else_is_never_handed_out() {
        let (mut arena, mut memory) = (Arena::new(), TestMemory::new(1, 100));
        let a = arena.alloc(&mut memory, PAGE - 8, 1).unwrap();
        assert!(memory.grow(1));
        let foreign = memory.size() - PAGE..memory.size();
        let b = arena.alloc(&mut memory, 4096, 1).unwrap();
        assert!(b >= foreign.end, "{b:#x} is inside the foreign page {foreign:x?}");
        arena.free(&mut memory, a, PAGE - 8, 1);
        arena.free(&mut memory, b, 4096, 1);
        // After the reset bumping restarts after the foreign page.
        let c = arena.alloc(&mut memory, 16, 1).unwrap();
        assert!(c >= foreign.end);
    }

    #[test]
    fn live_blocks_never_overlap_under_random_use() {
        let (mut arena, mut memory) = (Arena::new(), TestMemory::new(1, 1000));
        let mut live: Vec<(usize, usize, usize)> = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let pick = next();
            if pick % 3 != 0 || live.is_empty() {
                let size = 1 + (next() % 5000) as usize;
                let align = [1, 4, 8, 16, 32][(next() % 5) as usize];
                let block = arena.alloc(&mut memory, size, align).unwrap();
                assert_eq!(block % align, 0);
                assert!(block + size <= memory.size());
                for &(other, other_size, _) in &live {
                    assert!(block + size <= other || other + other_size <= block, "overlap");
                }
                live.push((block, size, align));
            } else if pick % 2 == 0 {
                let (block, size, align) = live.swap_remove((next() % live.len() as u64) as usize);
                arena.free(&mut memory, block, size, align);
            } else {
                let i = (next() % live.len() as u64) as usize;
                let (block, size, align) = live[i];
                let new_size = 1 + (next() % 9000) as usize;
                if arena.resize(&mut memory, block, size, align, new_size) == Resized::InPlace {
                    live[i].1 = new_size;
                    for (j, &(other, other_size, _)) in live.iter().enumerate() {
                        assert!(j == i || block + new_size <= other || other + other_size <= block, "overlap");
                    }
                }
            }
        }
        for (block, size, align) in live.drain(..) {
            arena.free(&mut memory, block, size, align);
        }
        assert_eq!((arena.live, arena.top), (0, arena.base));
    }
}
