// The string scans in wasm SIMD, for modules built with `--enable simd`: a few `v128` instructions
// test 16 bytes (64-bit word arithmetic on each vector, see `stopWords`), and a round of the long
// loops takes 128 bytes (64 code units when narrowing).
//
// request.ts and writer.ts call these only under `if (ASC_FEATURE_SIMD)`, a compile-time constant:
// a module built without SIMD compiles none of this and keeps the word-at-a-time scans (the same
// answers, more fuel per byte). Such a module needs a host that runs SIMD (Contour's std hosts do).
//
// Contour (wasmi) charges one fuel per instruction, and charges a loop body's whole straight-line
// code on every round, taken branches or not. So each hot loop is tiny and in a function of its
// own: the long rounds only test (the exact index is found after, 16 bytes a round), and the first
// 16 bytes are tested in line, as most strings (keys, method names) end there.

// The high bit of each byte of `x` that is `"`, `\` or a control byte (with `ascii`, also of each
// byte at or above 0x80), and perhaps of bytes above one in the same 64-bit half: never of a byte
// in a half that holds none, and never of one below the half's first. The word tests of
// request.ts, two words a vector: wasmi runs a byte-lane compare (`i8x16.eq`, `i8x16.lt_u`) lane by
// lane, several times the time of a 64-bit lane operation. In `x ^ 0x02 - 0x21` (per 64-bit half)
// a byte below 0x21 sets its high bit (`^ 0x02` keeps the controls below 0x20 and moves `"` to
// 0x20), as `\` does in `x ^ 0x5c - 1`; a borrow that sets another byte's starts at such a byte.
// Bytes at or above 0x80 set theirs too: they are stops with `ascii` and masked off without.
// Not yet masked with 0x80 in each byte.
// @ts-ignore: decorator
@inline function stopWords(x: v128, ascii: bool): v128 {
  const low = i64x2.sub(v128.xor(x, i8x16.splat(0x02)), i8x16.splat(0x21));
  const found = v128.or(low, i64x2.sub(v128.xor(x, i8x16.splat(0x5c)), i8x16.splat(0x01)));
  return ascii ? v128.or(found, x) : v128.andnot(found, x);
}

// The index of the first stop (see `stopWords`) of the 16 bytes `x`, 16 when none: the lowest
// marked byte of the vector's low 64-bit half, else of its high half (wasm's lanes are
// little-endian). A byte-lane bitmask would give the same index for several times the time.
// @ts-ignore: decorator
@inline function firstStop(x: v128, ascii: bool): usize {
  const found = v128.and(stopWords(x, ascii), i8x16.splat(-128));
  const low = i64x2.extract_lane(found, 0);
  if (low) return <usize>(ctz(low) >> 3);
  return 8 + <usize>(ctz(i64x2.extract_lane(found, 1)) >> 3);
}

// Whether `found` (the `stopWords` of some vectors, or-ed) marks any byte.
// @ts-ignore: decorator
@inline function anyMarked(found: v128): bool {
  return v128.any_true(v128.and(found, i8x16.splat(-128)));
}

// Whether any of the 128 bytes at `p` is a stop (see `stopWords`).
// @ts-ignore: decorator
@inline function anyStop(p: usize, ascii: bool): bool {
  const low = v128.or(
    v128.or(stopWords(v128.load(p), ascii), stopWords(v128.load(p, 16), ascii)),
    v128.or(stopWords(v128.load(p, 32), ascii), stopWords(v128.load(p, 48), ascii)),
  );
  const high = v128.or(
    v128.or(stopWords(v128.load(p, 64), ascii), stopWords(v128.load(p, 80), ascii)),
    v128.or(stopWords(v128.load(p, 96), ascii), stopWords(v128.load(p, 112), ascii)),
  );
  return anyMarked(v128.or(low, high));
}

// Where the 128-byte rounds from `p` end: at the first round with a stop, or where fewer than 128
// bytes are left before `end`. A loop of its own so that a round costs only its tests.
// @ts-ignore: decorator
@inline function clearEnd(p: usize, end: usize, ascii: bool): usize {
  while (p + 128 <= end) {
    if (anyStop(p, ascii)) break;
    p += 128;
  }
  return p;
}

// The first stop of the fewer than 16 bytes [p, end), or `end`: one round over a copy padded with
// 'a' (not a stop).
// @ts-ignore: decorator
@inline function tailEnd(p: usize, end: usize, ascii: bool): usize {
  const pad = memory.data(16);
  memory.fill(pad, 0x61, 16);
  memory.copy(pad, p, end - p);
  const at = p + firstStop(v128.load(pad), ascii);
  return at < end ? at : end;
}

// The first stop in [p, end), or `end`, past the first 16 bytes: the long rounds, then the exact
// byte 16 a round, then the padded tail.
// @ts-ignore: decorator
@inline function longEnd(p: usize, end: usize, ascii: bool): usize {
  p = ascii ? asciiClearEnd(p, end) : plainClearEnd(p, end);
  while (p + 16 <= end) {
    const at = firstStop(v128.load(p), ascii);
    if (at < 16) return p + at;
    p += 16;
  }
  if (p >= end) return end;
  return ascii ? asciiTailEnd(p, end) : plainTailEnd(p, end);
}

// The first stop in [p, end), or `end`: the first 16 bytes tested here, the rest out of line.
// @ts-ignore: decorator
@inline function runEnd(p: usize, end: usize, ascii: bool): usize {
  if (p + 16 > end) {
    if (p >= end) return end;
    return ascii ? asciiTailEnd(p, end) : plainTailEnd(p, end);
  }
  const at = firstStop(v128.load(p), ascii);
  if (at < 16) return p + at;
  return ascii ? asciiLongEnd(p + 16, end) : plainLongEnd(p + 16, end);
}

// `clearEnd` for `"`, `\` and control bytes.
function plainClearEnd(p: usize, end: usize): usize {
  return clearEnd(p, end, false);
}

// `clearEnd` that also stops at bytes beyond ASCII.
function asciiClearEnd(p: usize, end: usize): usize {
  return clearEnd(p, end, true);
}

// `tailEnd` for `"`, `\` and control bytes.
function plainTailEnd(p: usize, end: usize): usize {
  return tailEnd(p, end, false);
}

// `tailEnd` that also stops at bytes beyond ASCII.
function asciiTailEnd(p: usize, end: usize): usize {
  return tailEnd(p, end, true);
}

// `longEnd` for `"`, `\` and control bytes.
function plainLongEnd(p: usize, end: usize): usize {
  return longEnd(p, end, false);
}

// `longEnd` that also stops at bytes beyond ASCII.
function asciiLongEnd(p: usize, end: usize): usize {
  return longEnd(p, end, true);
}

/** The first byte of [p, end) that is `"`, `\` or a control byte, or `end`. */
export function lanesPlainEnd(p: usize, end: usize): usize {
  return runEnd(p, end, false);
}

/** The first byte of [p, end) that is `"`, `\`, a control byte or not ASCII, or `end`. */
export function lanesAsciiEnd(p: usize, end: usize): usize {
  return runEnd(p, end, true);
}

/** The `n` ASCII bytes at `p` widened to UTF-16 code units at `out`: 64 bytes a round, then 16,
 * and the last (fewer than 16) bytes as the 16 that end them, overlapping what is written. */
export function lanesWiden(p: usize, n: usize, out: usize): void {
  const end = p + n;
  if (n < 16) {
    for (; p < end; p++, out += 2) store<u16>(out, load<u8>(p));
    return;
  }
  while (p + 64 <= end) {
    const a = v128.load(p), b = v128.load(p, 16), c = v128.load(p, 32), d = v128.load(p, 48);
    v128.store(out, i16x8.extend_low_i8x16_u(a));
    v128.store(out, i16x8.extend_high_i8x16_u(a), 16);
    v128.store(out, i16x8.extend_low_i8x16_u(b), 32);
    v128.store(out, i16x8.extend_high_i8x16_u(b), 48);
    v128.store(out, i16x8.extend_low_i8x16_u(c), 64);
    v128.store(out, i16x8.extend_high_i8x16_u(c), 80);
    v128.store(out, i16x8.extend_low_i8x16_u(d), 96);
    v128.store(out, i16x8.extend_high_i8x16_u(d), 112);
    p += 64;
    out += 128;
  }
  while (p + 16 <= end) {
    const a = v128.load(p);
    v128.store(out, i16x8.extend_low_i8x16_u(a));
    v128.store(out, i16x8.extend_high_i8x16_u(a), 16);
    p += 16;
    out += 32;
  }
  if (p < end) {
    // The last 16 bytes (n >= 16, so they are in bounds), written over the units already there.
    const back: usize = 16 - (end - p);
    const a = v128.load(end - 16);
    out -= back << 1;
    v128.store(out, i16x8.extend_low_i8x16_u(a));
    v128.store(out, i16x8.extend_high_i8x16_u(a), 16);
  }
}

// The 16 code units at `p` narrowed to 16 bytes: a unit at or above 0x80 becomes a byte at or above
// 0x80 or 0 (the narrow saturates, reading units as signed), which the ASCII stop test marks.
// @ts-ignore: decorator
@inline function narrowed(p: usize): v128 {
  return i8x16.narrow_i16x8_u(v128.load(p), v128.load(p, 16));
}

// Where the rounds of 64 code units (128 bytes) from `p` end: at the first that holds a unit that
// needs escaping or is not ASCII, or where fewer than 64 units are left. Each round stores its 64
// bytes at `out` first (the caller has room for them): the loop stays one test and one branch.
function narrowClearEnd(p: usize, end: usize, out: usize): usize {
  while (p + 128 <= end) {
    const a = narrowed(p), b = narrowed(p + 32), c = narrowed(p + 64), d = narrowed(p + 96);
    v128.store(out, a);
    v128.store(out, b, 16);
    v128.store(out, c, 32);
    v128.store(out, d, 48);
    const any = v128.or(v128.or(stopWords(a, true), stopWords(b, true)), v128.or(stopWords(c, true), stopWords(d, true)));
    if (anyMarked(any)) break;
    p += 128;
    out += 64;
  }
  return p;
}

/** The UTF-16 code units [p, end) narrowed to bytes at `out` up to the first that needs escaping
 * or is not ASCII; where that unit is, or `end`. `out` needs room for (end - p) / 2 + 16 bytes:
 * each round stores 16 bytes, also past the stop (the caller counts only those before it). */
export function lanesNarrow(p: usize, end: usize, out: usize): usize {
  const from = p;
  p = narrowClearEnd(p, end, out);
  out += (p - from) >> 1;
  while (p + 32 <= end) {
    const bytes = narrowed(p);
    v128.store(out, bytes);
    const at = firstStop(bytes, true);
    if (at < 16) return p + (at << 1);
    p += 32;
    out += 16;
  }
  if (p >= end) return end;
  // The last (fewer than 16) units, from a copy padded with 'a'.
  const pad = memory.data(32);
  v128.store(pad, i16x8.splat(0x61));
  v128.store(pad, i16x8.splat(0x61), 16);
  memory.copy(pad, p, end - p);
  const bytes = narrowed(pad);
  v128.store(out, bytes);
  const at = p + (firstStop(bytes, true) << 1);
  return at < end ? at : end;
}

/** The first UTF-16 code unit of [p, end) that is `\`, or `end`: 8 units a vector, the last
 * (fewer than 8) one at a time. */
export function lanesBackslashUnit(p: usize, end: usize): usize {
  while (p + 16 <= end) {
    const bits = i16x8.bitmask(i16x8.eq(v128.load(p), i16x8.splat(0x5c)));
    if (bits) return p + (<usize>ctz(bits) << 1);
    p += 16;
  }
  while (p < end && load<u16>(p) != 0x5c) p += 2;
  return p;
}
