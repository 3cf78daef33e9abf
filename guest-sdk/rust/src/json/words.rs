//! The string scanners' rounds in 64-bit words, for builds without wasm SIMD (the scalar modules
//! and native builds): exact rounds of 16 bytes (two words) for the first [`EXACT`] bytes of a
//! run, then long rounds that test eight words (64 bytes) at once, and exact rounds again in the
//! round that holds the stop.
//!
//! The interpreter charges one fuel per wasm operator, so the word formula is the one with the
//! fewest (two subtractions a word, as in `json/lanes.rs`), a round works out the stop's index only
//! when it holds one, and long rounds start only in runs long enough to repay the round that finds
//! the stop. Fuel depends only on the bytes.

/// `0x01` in every byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of every byte of a word.
const HIGHS: u64 = 0x8080_8080_8080_8080;
/// The bytes one round of the long loop reads.
const WIDE: usize = 64;
/// The bytes of a run read by exact rounds before long rounds start. Entering them costs about a
/// long round and a call; runs between escapes in text (lines of code, paragraphs) are mostly
/// shorter. On lines of 8 to 4,000 bytes, from 512 no width costs 2% more than with 16-byte rounds
/// only (560-byte lines 1.4%; started at 128, up to 32%); `tdm`'s `examples_rust.rs` bounds it.
const EXACT: usize = 512;

/// The high bit of each byte of `word` that is a stop set, and perhaps of bytes above a stop, but
/// never of a byte below the word's first stop, nor in a word that holds none (other bits are
/// noise: callers mask with [`HIGHS`]). A stop ends a plain run: `"`, `\`, a control byte (below
/// 0x20) and, when `ASCII`, any byte at or above 0x80. In `w - n * ONES`, a byte below `n` (at
/// most 0x80) sets its high bit, and a borrow that sets another's starts at such a byte. Flipping
/// bit 1 keeps the control bytes below 0x20 and moves `"` (0x22) to 0x20 and no other byte there,
/// so `"` and the control bytes are the bytes below 0x21; `\` is at zero. Bytes at or above 0x80
/// set their high bit too: they are stops when `ASCII` and are masked off otherwise.
#[inline(always)]
fn word_stops<const ASCII: bool>(word: u64) -> u64 {
    let low = (word ^ (ONES * 0x02)).wrapping_sub(ONES * 0x21);
    let slash = (word ^ (ONES * u64::from(b'\\'))).wrapping_sub(ONES);
    let found = low | slash;
    if ASCII {
        found | word
    } else {
        found & !word
    }
}

/// The little-endian word at byte `8 * K` of `block`.
#[inline(always)]
fn word_at<const K: usize>(block: &[u8; WIDE]) -> u64 {
    const { assert!(8 * K + 8 <= WIDE) };
    block.get(8 * K..).and_then(<[u8]>::first_chunk::<8>).map_or(0, |word| u64::from_le_bytes(*word))
}

/// Whether any byte of `block` is a stop (see [`word_stops`]): one test for eight words.
#[inline(always)]
fn round_stops<const ASCII: bool>(block: &[u8; WIDE]) -> bool {
    let low = (word_stops::<ASCII>(word_at::<0>(block)) | word_stops::<ASCII>(word_at::<1>(block)))
        | (word_stops::<ASCII>(word_at::<2>(block)) | word_stops::<ASCII>(word_at::<3>(block)));
    let high = (word_stops::<ASCII>(word_at::<4>(block)) | word_stops::<ASCII>(word_at::<5>(block)))
        | (word_stops::<ASCII>(word_at::<6>(block)) | word_stops::<ASCII>(word_at::<7>(block)));
    (low | high) & HIGHS != 0
}

/// The stops of the 16 bytes of `chunk`, a word each (see [`word_stops`]), masked to the high bits:
/// both zero when it holds none.
#[inline(always)]
fn pair_stops<const ASCII: bool>(chunk: &[u8; 16]) -> (u64, u64) {
    let pair = u128::from_le_bytes(*chunk);
    (word_stops::<ASCII>(pair as u64) & HIGHS, word_stops::<ASCII>((pair >> 64) as u64) & HIGHS)
}

/// The index of the first stop [`pair_stops`] marked (16 when they mark none): the lowest marked
/// byte, from the low word first (little-endian).
#[inline(always)]
fn first_marked((low, high): (u64, u64)) -> usize {
    let bits = if low != 0 { low.trailing_zeros() } else { 64 + high.trailing_zeros() };
    (bits / 8) as usize
}

/// Exact rounds of 16 bytes from `at`: `Ok` with the index of the first stop, or `Err` with where
/// fewer than 16 bytes are left. The index is worked out only once a round holds a stop, so that
/// a round without one costs the interpreter only its test.
#[inline(always)]
fn exact_rounds<const ASCII: bool>(bytes: &[u8], mut at: usize) -> Result<usize, usize> {
    while let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<16>) {
        let stops = pair_stops::<ASCII>(chunk);
        if stops.0 | stops.1 != 0 {
            return Ok(at + first_marked(stops));
        }
        at += 16;
    }
    Err(at)
}

/// Where the long rounds from `from` end: at the first round of [`WIDE`] bytes that holds a stop,
/// or where fewer than [`WIDE`] bytes are left. Its own loop, so that the interpreter charges only
/// the round's code per round (wasmi charges a loop body's straight-line code on each entry).
#[inline(never)]
fn clear_end<const ASCII: bool>(bytes: &[u8], from: usize) -> usize {
    super::scan::clear_rounds_end::<WIDE>(bytes, from, round_stops::<ASCII>)
}

/// The index of the first stop (see [`word_stops`]) at or after `from`, or the length: exact
/// rounds in line for the first [`EXACT`] bytes, where most runs end (keys, method names, most
/// values, and the runs between escapes in lines of text), then [`long_run_end`], a call.
#[inline(always)]
fn run_end<const ASCII: bool>(bytes: &[u8], from: usize) -> usize {
    // The exact rounds read the bytes up to `from + EXACT`, and stop there when the run goes on.
    match exact_rounds::<ASCII>(bytes.get(..from.saturating_add(EXACT)).unwrap_or(bytes), from) {
        Ok(stop) => stop,
        Err(at) => long_run_end::<ASCII>(bytes, at),
    }
}

/// [`run_end`] from `at`, where fewer than 16 bytes are left or a run has gone [`EXACT`] bytes
/// without a stop: the last bytes ([`tail`], a call of its own, so that this function needs no
/// stack frame), or long rounds to the round that holds a stop and exact rounds again to find it.
#[inline(never)]
fn long_run_end<const ASCII: bool>(bytes: &[u8], at: usize) -> usize {
    if bytes.len().saturating_sub(at) < 16 {
        return tail::<ASCII>(bytes, at);
    }
    match exact_rounds::<ASCII>(bytes, clear_end::<ASCII>(bytes, at)) {
        Ok(stop) => stop,
        Err(at) => tail::<ASCII>(bytes, at),
    }
}

/// The last round, over the fewer than 16 bytes left from `at`, padded with zeros (stops, so the
/// answer is the length when the bytes hold none).
#[inline(never)]
fn tail<const ASCII: bool>(bytes: &[u8], at: usize) -> usize {
    let rest = bytes.get(at..).unwrap_or_default();
    let mut padded = [0u8; 16];
    if let Some(head) = padded.get_mut(..rest.len()) {
        head.copy_from_slice(rest);
    }
    (at + first_marked(pair_stops::<ASCII>(&padded))).min(bytes.len())
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
