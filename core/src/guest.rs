//! Bounds-checked access to a guest's linear memory: the one place core reads or writes it
//! (promise 4). Every region is checked as `ptr + len <= memory size` with overflow checked,
//! before a byte is touched; the ABI, the WASI shim and the host calls all go through here.

use core::ops::Range;
use wasmi::{Caller, Extern, Memory, Store};

/// A pointer and length that leave the guest's memory (or overflow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfBounds;

/// The byte range `[ptr, ptr + len)` when it lies inside `memory_len` bytes, else `None`.
pub fn region(ptr: u32, len: u32, memory_len: usize) -> Option<Range<usize>> {
    let start = ptr as usize;
    let end = start.checked_add(len as usize)?;
    (end <= memory_len).then_some(start..end)
}

/// A guest's linear memory, borrowed for one host call. A module without a memory is an empty
/// one: every access is out of bounds.
pub(crate) struct Guest<'a> {
    bytes: &'a mut [u8],
}

impl<'a> Guest<'a> {
    /// Wraps the memory bytes.
    pub(crate) fn new(bytes: &'a mut [u8]) -> Self {
        Self { bytes }
    }

    /// The whole memory of an instance outside a host call: how the sandbox writes a request
    /// and reads a response.
    pub(crate) fn of_store<T>(memory: Memory, store: &'a mut Store<T>) -> Self {
        Self::new(memory.data_mut(store))
    }

    /// The memory size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The whole memory, read-only (for the ABI's pure readers, which check every range).
    pub(crate) fn all(&self) -> &[u8] {
        self.bytes
    }

    /// The bytes in `range`, checked.
    pub(crate) fn slice(&self, range: Range<usize>) -> Result<&[u8], OutOfBounds> {
        self.bytes.get(range).ok_or(OutOfBounds)
    }

    /// The range `[ptr, ptr + len)`, checked.
    pub(crate) fn range(&self, ptr: u32, len: u32) -> Result<Range<usize>, OutOfBounds> {
        region(ptr, len, self.bytes.len()).ok_or(OutOfBounds)
    }

    /// The bytes at `[ptr, ptr + len)`.
    pub(crate) fn bytes(&self, ptr: u32, len: u32) -> Result<&[u8], OutOfBounds> {
        let range = self.range(ptr, len)?;
        Ok(&self.bytes[range])
    }

    /// The bytes at `[ptr, ptr + len)`, writable.
    pub(crate) fn bytes_mut(&mut self, ptr: u32, len: u32) -> Result<&mut [u8], OutOfBounds> {
        let range = self.range(ptr, len)?;
        Ok(&mut self.bytes[range])
    }

    /// The little-endian u32 at `ptr`.
    pub(crate) fn u32(&self, ptr: u32) -> Result<u32, OutOfBounds> {
        let b = self.bytes(ptr, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Writes `bytes` at `ptr`.
    pub(crate) fn set(&mut self, ptr: u32, bytes: &[u8]) -> Result<(), OutOfBounds> {
        let len = u32::try_from(bytes.len()).map_err(|_| OutOfBounds)?;
        self.bytes_mut(ptr, len)?.copy_from_slice(bytes);
        Ok(())
    }

    /// Writes a little-endian u32 at `ptr`.
    pub(crate) fn set_u32(&mut self, ptr: u32, value: u32) -> Result<(), OutOfBounds> {
        self.set(ptr, &value.to_le_bytes())
    }

    /// Writes a little-endian u64 at `ptr`.
    pub(crate) fn set_u64(&mut self, ptr: u32, value: u64) -> Result<(), OutOfBounds> {
        self.set(ptr, &value.to_le_bytes())
    }

    /// The `(ptr, len)` pairs of a WASI iovec array of `count` entries at `ptr`, read one at a
    /// time (nothing is allocated for a guest-chosen count). The array itself is checked first.
    pub(crate) fn iovecs(&self, ptr: u32, count: u32) -> Result<Iovecs<'_>, OutOfBounds> {
        let size = count.checked_mul(8).ok_or(OutOfBounds)?;
        let range = self.range(ptr, size)?;
        Ok(Iovecs { bytes: &self.bytes[range] })
    }
}

/// The entries of an iovec array already checked to lie in memory.
pub(crate) struct Iovecs<'a> {
    bytes: &'a [u8],
}

impl Iterator for Iovecs<'_> {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        let (entry, rest) = self.bytes.split_first_chunk::<8>()?;
        self.bytes = rest;
        let ptr = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
        let len = u32::from_le_bytes([entry[4], entry[5], entry[6], entry[7]]);
        Some((ptr, len))
    }
}

/// The guest's exported memory: the cached one after instantiation, looked up while the start
/// function runs.
fn memory_of<T>(caller: &Caller<'_, T>, cached: Option<Memory>) -> Option<Memory> {
    cached.or_else(|| match caller.get_export("memory") {
        Some(Extern::Memory(memory)) => Some(memory),
        _ => None,
    })
}

/// The guest memory and the store data of a host call, borrowed side by side; `cached` is the
/// memory the store keeps once the instance exists.
pub(crate) fn split<'a, T>(caller: &'a mut Caller<'_, T>, cached: Option<Memory>) -> (Guest<'a>, &'a mut T) {
    match memory_of(caller, cached) {
        Some(memory) => {
            let (bytes, state) = memory.data_and_store_mut(caller);
            (Guest::new(bytes), state)
        }
        None => (Guest::new(&mut []), caller.data_mut()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_checked_with_overflow() {
        assert_eq!(region(60, 4, 64), Some(60..64));
        assert_eq!(region(61, 4, 64), None);
        assert_eq!(region(u32::MAX, 4, 64), None);
        assert_eq!(region(0, 0, 0), Some(0..0));
    }

    #[test]
    fn iovecs_are_read_in_place() {
        let mut memory = [0u8; 32];
        memory[0..4].copy_from_slice(&16u32.to_le_bytes());
        memory[4..8].copy_from_slice(&3u32.to_le_bytes());
        memory[8..12].copy_from_slice(&20u32.to_le_bytes());
        memory[12..16].copy_from_slice(&5u32.to_le_bytes());
        let guest = Guest::new(&mut memory);
        let pairs: alloc::vec::Vec<(u32, u32)> = guest.iovecs(0, 2).unwrap().collect();
        assert_eq!(pairs, [(16, 3), (20, 5)]);
        assert!(guest.iovecs(0, 5).is_err());
        assert!(guest.iovecs(0, u32::MAX).is_err());
    }
}
