//! The string scanners' rounds in wasm SIMD, for modules built with `-C target-feature=+simd128`:
//! one `v128` load looks at 16 bytes, a round of the long loop at 128, and whitespace is skipped
//! 16 bytes a round. The string rounds use 64-bit word arithmetic on each vector ([`word_stops`])
//! and no byte-lane compare or bitmask: interpreters run those lane by lane, and wasmi 2.0 takes
//! about 25 ns for an `i8x16.eq` where a `v128.xor` or `i64x2.sub` takes 1 (x86_64).
//!
//! Such a module needs a host that runs SIMD (Contour's std hosts do; its embedded profile, a
//! big-endian host and `tdm --no-simd` refuse it at load). Built without `simd128`, the SDK scans
//! 64-bit words instead (`json/words.rs`): the same answers, more fuel per byte. Both are
//! deterministic: fuel depends only on the bytes.

use core::arch::wasm32::{
    i64x2_extract_lane, i64x2_sub, i8x16, i8x16_swizzle, u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_and,
    v128_andnot, v128_any_true, v128_bitselect, v128_load, v128_or, v128_xor,
};

/// The bytes one round of the long loop reads.
const WIDE: usize = 128;

/// The 16 bytes of `chunk` as one vector.
#[inline(always)]
fn load(chunk: &[u8; 16]) -> v128 {
    // SAFETY: `chunk` is 16 readable bytes, exactly what `v128.load` reads; it has no alignment
    // requirement (wasm loads never trap on alignment).
    unsafe { v128_load(chunk.as_ptr().cast::<v128>()) }
}

/// The 16 bytes of `block` from byte `16 * K` as one vector (an in-bounds pointer offset, so the
/// compiler folds it into the load's offset immediate).
#[inline(always)]
fn load_at<const K: usize>(block: &[u8; WIDE]) -> v128 {
    const { assert!(16 * K + 16 <= WIDE) };
    // SAFETY: bytes `16 * K .. 16 * K + 16` of `block` are readable (the assert above holds them
    // inside it); `v128.load` has no alignment requirement.
    unsafe { v128_load(block.as_ptr().add(16 * K).cast::<v128>()) }
}

/// The high bit of each byte of `lanes` that is a stop set, and perhaps of bytes above a stop in
/// the same 64-bit half, but never of a byte below the half's first stop, nor in a half that holds
/// none. A stop ends a plain run: `"`, `\`, a control byte (below 0x20) and, when `ASCII`, any
/// byte at or above 0x80. Word arithmetic (two 64-bit subtractions, bitwise operations), which
/// interpreters run as a few machine instructions where they run byte compares lane by lane: in
/// `w - n * 0x0101..`, a byte below `n` (at most 0x80) sets its high bit, and a borrow that sets
/// another's starts at such a byte.
/// Bytes at or above 0x80 set theirs too: they are stops when `ASCII` and are masked off
/// otherwise (the flips below keep every byte's high bit).
#[inline(always)]
fn word_stops<const ASCII: bool>(lanes: v128) -> v128 {
    // Flipping bit 1 keeps the control bytes below 0x20 and moves `"` (0x22) to 0x20 and no
    // other byte there, so `"` and the control bytes are the bytes below 0x21; `\` is at zero.
    let low = i64x2_sub(v128_xor(lanes, u8x16_splat(0x02)), u8x16_splat(0x21));
    let slash = i64x2_sub(v128_xor(lanes, u8x16_splat(b'\\')), u8x16_splat(0x01));
    let found = v128_or(low, slash);
    if ASCII {
        v128_or(found, lanes)
    } else {
        v128_andnot(found, lanes)
    }
}

/// The index of the first stop of `lanes` (see [`word_stops`]), 16 when it holds none: the lowest
/// marked byte, read from the vector's two 64-bit words (little-endian lanes, as wasm defines
/// them). A byte-lane bitmask (`i8x16.bitmask`) would give the same index for several times the
/// interpreter's time.
#[inline(always)]
fn first_stop<const ASCII: bool>(lanes: v128) -> usize {
    let found = v128_and(word_stops::<ASCII>(lanes), u8x16_splat(0x80));
    let low = i64x2_extract_lane::<0>(found) as u64;
    let bits =
        if low != 0 { low.trailing_zeros() } else { 64 + (i64x2_extract_lane::<1>(found) as u64).trailing_zeros() };
    (bits / 8) as usize
}

/// Whether any byte of `block` is a stop (see [`word_stops`]).
#[inline(always)]
fn round_stops<const ASCII: bool>(block: &[u8; WIDE]) -> bool {
    let low = v128_or(
        v128_or(word_stops::<ASCII>(load_at::<0>(block)), word_stops::<ASCII>(load_at::<1>(block))),
        v128_or(word_stops::<ASCII>(load_at::<2>(block)), word_stops::<ASCII>(load_at::<3>(block))),
    );
    let high = v128_or(
        v128_or(word_stops::<ASCII>(load_at::<4>(block)), word_stops::<ASCII>(load_at::<5>(block))),
        v128_or(word_stops::<ASCII>(load_at::<6>(block)), word_stops::<ASCII>(load_at::<7>(block))),
    );
    v128_any_true(v128_and(v128_or(low, high), u8x16_splat(0x80)))
}

/// Where the long rounds from `from` end: at the first round of [`WIDE`] bytes that holds a stop,
/// or where fewer than [`WIDE`] bytes are left. Its own loop, so that the interpreter charges only
/// the round's code per round (wasmi charges a loop body's straight-line code on each entry).
#[inline(never)]
fn clear_end<const ASCII: bool>(bytes: &[u8], from: usize) -> usize {
    super::scan::clear_rounds_end::<WIDE>(bytes, from, round_stops::<ASCII>)
}

/// The index of the first stop (see [`word_stops`]) at or after `from`, or the length. The first 16
/// bytes are read in line: most strings (keys, method names, short values) end there.
#[inline(always)]
fn run_end<const ASCII: bool>(bytes: &[u8], from: usize) -> usize {
    let Some(chunk) = bytes.get(from..).and_then(<[u8]>::first_chunk::<16>) else {
        return tail::<ASCII>(bytes, from);
    };
    let stop = first_stop::<ASCII>(load(chunk));
    if stop < 16 {
        return from + stop;
    }
    long_run_end::<ASCII>(bytes, from + 16)
}

/// [`run_end`] past its first 16 bytes: long rounds (when there is room for one), then the exact
/// stop 16 bytes a round, then the last round in line (a call is the interpreter's dearest
/// instruction).
#[inline(never)]
fn long_run_end<const ASCII: bool>(bytes: &[u8], from: usize) -> usize {
    let mut at = if bytes.len().saturating_sub(from) >= WIDE { clear_end::<ASCII>(bytes, from) } else { from };
    loop {
        let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<16>) else {
            return last_round::<ASCII>(bytes, at);
        };
        let stop = first_stop::<ASCII>(load(chunk));
        if stop < 16 {
            return at + stop;
        }
        at += 16;
    }
}

/// Lanes to mask off at the start of a vector: `EDGE[16 - k..][..16]` is all ones in its first `k`
/// lanes and zero in the rest.
static EDGE: [u8; 32] = {
    let mut edge = [0; 32];
    let mut i = 0;
    while i < 16 {
        edge[i] = 0xff;
        i += 1;
    }
    edge
};

/// The last round, over the fewer than 16 bytes left from `at` (the callers' condition): the last
/// 16 bytes of `bytes` with those before `at` taken as `a`s (no stop; taken out before the word
/// arithmetic, so that no borrow from them reaches the bytes from `at`), or, when `bytes` is
/// shorter than 16, its bytes copied and padded with `a`s.
#[inline(always)]
fn last_round<const ASCII: bool>(bytes: &[u8], at: usize) -> usize {
    let len = bytes.len();
    if at >= len {
        return len;
    }
    let start = len.saturating_sub(16);
    // `at` is past `start` (fewer than 16 bytes are left from it): 1 to 15 lanes to take out.
    let skipped = at.saturating_sub(start).min(16);
    let last = bytes.get(start..).and_then(<[u8]>::first_chunk::<16>);
    let mask = EDGE.get(16 - skipped..).and_then(<[u8]>::first_chunk::<16>);
    if let (Some(last), Some(mask)) = (last, mask) {
        // The stop is within the last 16 bytes, so `start` plus it is at most the length.
        return start + first_stop::<ASCII>(v128_bitselect(u8x16_splat(b'a'), load(last), load(mask)));
    }
    let rest = bytes.get(at..).unwrap_or_default();
    let mut padded = [b'a'; 16];
    if let Some(head) = padded.get_mut(..rest.len()) {
        head.copy_from_slice(rest);
    }
    (at + first_stop::<ASCII>(load(&padded))).min(len)
}

/// [`last_round`] out of line, for [`run_end`], which is in line wherever a string is read.
#[inline(never)]
fn tail<const ASCII: bool>(bytes: &[u8], at: usize) -> usize {
    last_round::<ASCII>(bytes, at)
}

/// The index of the first `"`, `\` or control byte at or after `from` (or the length).
#[inline(always)]
pub(crate) fn plain_run_end(bytes: &[u8], from: usize) -> usize {
    run_end::<false>(bytes, from)
}

/// The index of the first `"`, `\`, control or non-ASCII byte at or after `from` (or the length):
/// every byte of `from..` that index has its high bit clear.
#[inline(always)]
pub(crate) fn ascii_run_end(bytes: &[u8], from: usize) -> usize {
    run_end::<true>(bytes, from)
}

/// The index of the first byte at or after `i` that is not JSON whitespace (or the length), 16
/// bytes a round. A lane is whitespace when it is a space, or when looking it up in a table
/// that holds only tab, newline and carriage return at their own indices gives it back
/// (`i8x16.swizzle` gives 0 for indices of 16 and up, and index 0 holds -1).
#[inline(never)]
pub(crate) fn ws_end(bytes: &[u8], mut i: usize) -> usize {
    let controls = i8x16(-1, -1, -1, -1, -1, -1, -1, -1, -1, 9, 10, -1, -1, 13, -1, -1);
    while let Some(chunk) = bytes.get(i..).and_then(<[u8]>::first_chunk::<16>) {
        let lanes = load(chunk);
        let ws = v128_or(u8x16_eq(lanes, u8x16_splat(b' ')), u8x16_eq(i8x16_swizzle(controls, lanes), lanes));
        let solid = !u8x16_bitmask(ws);
        if solid != 0 {
            return i + solid.trailing_zeros() as usize;
        }
        i += 16;
    }
    super::scan::ws_bytes_end(bytes, i)
}
