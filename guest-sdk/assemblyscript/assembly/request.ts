// Reading the request from its bytes, where the host wrote them in linear memory: the envelope's
// `method` and `params`, and the params' members on demand (`Params`). Nothing is decoded to a
// string unless a plugin asks for it, and the loops that run once per byte of a string test 16 or 32
// bytes a round with a few word-wide instructions: Contour charges about one fuel per instruction.

import { lanesAsciiEnd, lanesPlainEnd, lanesWiden } from "./lanes";
import { unescape } from "./text";

const ONES: u64 = 0x0101010101010101;
const HIGHS: u64 = 0x8080808080808080;

// The high bit of each byte of `word` that is `"`, `\` or a control byte (and possibly of later
// bytes: the lowest set bit marks the first). The three tests share one `& ~word`, as the quote and
// the backslash have a clear high bit.
// @ts-ignore: decorator
@inline function specials(word: u64): u64 {
  const candidates = ((word ^ (ONES * 0x22)) - ONES) | ((word ^ (ONES * 0x5c)) - ONES) | (word - ONES * 0x20);
  return candidates & ~word & HIGHS;
}

// `specials`, and every byte that is not ASCII.
// @ts-ignore: decorator
@inline function asciiSpecials(word: u64): u64 {
  const candidates = ((word ^ (ONES * 0x22)) - ONES) | ((word ^ (ONES * 0x5c)) - ONES) | (word - ONES * 0x20);
  return (candidates | word) & HIGHS;
}

// The index of the lowest marked byte of a round (`low`, then `high`), 16 when none.
// @ts-ignore: decorator
@inline function firstMarked(low: u64, high: u64): usize {
  return low ? <usize>(ctz(low) >> 3) : high ? 8 + <usize>(ctz(high) >> 3) : 16;
}

// 16 bytes of scratch for the last round of a scan, padded with 'a' (a byte no mask marks).
const PAD: usize = memory.data(16);

// The first byte of [p, end) that is `"`, `\` or a control byte, or `end`. Built with SIMD, 16
// bytes a vector (lanes.ts); the word rounds below are what a scalar build compiles.
function plainEnd(p: usize, end: usize): usize {
  if (ASC_FEATURE_SIMD) return lanesPlainEnd(p, end);
  while (p + 16 <= end) {
    const low = specials(load<u64>(p)), high = specials(load<u64>(p, 8));
    if (low | high) return p + firstMarked(low, high);
    p += 16;
  }
  return p < end ? plainEndTail(p, end) : end;
}

function plainEndTail(p: usize, end: usize): usize {
  memory.fill(PAD, 0x61, 16);
  memory.copy(PAD, p, end - p);
  const at = p + firstMarked(specials(load<u64>(PAD)), specials(load<u64>(PAD, 8)));
  return at < end ? at : end;
}

// The first byte of [p, end) that is `"`, `\`, a control byte or not ASCII, or `end`: the end of
// a run that becomes a string unit for unit. Built with SIMD, 16 bytes a vector (lanes.ts).
function asciiPlainEnd(p: usize, end: usize): usize {
  if (ASC_FEATURE_SIMD) return lanesAsciiEnd(p, end);
  while (p + 16 <= end) {
    const low = asciiSpecials(load<u64>(p)), high = asciiSpecials(load<u64>(p, 8));
    if (low | high) return p + firstMarked(low, high);
    p += 16;
  }
  return p < end ? asciiPlainEndTail(p, end) : end;
}

function asciiPlainEndTail(p: usize, end: usize): usize {
  memory.fill(PAD, 0x61, 16);
  memory.copy(PAD, p, end - p);
  const at = p + firstMarked(asciiSpecials(load<u64>(PAD)), asciiSpecials(load<u64>(PAD, 8)));
  return at < end ? at : end;
}

// 4 ASCII bytes (the low 32 bits) spread to 4 UTF-16 code units: two multiplies each copy the
// bytes up by a shift and a mask keeps the copies in place (no sums overlap, as the bytes are
// below 0x80), which takes fewer instructions than shifts and ors.
// @ts-ignore: decorator
@inline function widen(bytes: u64): u64 {
  return (((bytes * 0x10001) & 0x0000ffff0000ffff) * 0x101) & 0x00ff00ff00ff00ff;
}

// The high bit of each byte of `word` that is `"`, `\`, a control byte or not ASCII (and possibly
// of later bytes: the lowest marked byte is exact). `^ 0x02` maps the controls onto themselves
// and `"` onto 0x20, so one `< 0x21` test finds both. Not yet masked with HIGHS.
// @ts-ignore: decorator
@inline function stops(word: u64): u64 {
  return ((word ^ (ONES * 0x02)) - ONES * 0x21) | ((word ^ (ONES * 0x5c)) - ONES) | word;
}

// The `n` ASCII bytes at `p` as a string, 16 bytes a round (built with SIMD, 64: lanes.ts).
function asciiString(p: usize, n: usize): string {
  const text = changetype<string>(__new(n << 1, idof<string>()));
  let out = changetype<usize>(text);
  if (ASC_FEATURE_SIMD) {
    lanesWiden(p, n, out);
    return text;
  }
  const end = p + n;
  while (p + 16 <= end) {
    store<u64>(out, widen(<u64>load<u32>(p)));
    store<u64>(out, widen(<u64>load<u32>(p, 4)), 8);
    store<u64>(out, widen(<u64>load<u32>(p, 8)), 16);
    store<u64>(out, widen(<u64>load<u32>(p, 12)), 24);
    p += 16;
    out += 32;
  }
  while (p < end) {
    store<u16>(out, load<u8>(p));
    p++;
    out += 2;
  }
  return text;
}

// The string `text` cut to `size` bytes. A small cut only sets its runtime size (the header's last
// field, as the runtime's `OBJECT` lays it out): the block keeps the few bytes past it until it is
// collected. A large one gives them back to the allocator.
function shrink(text: usize, size: usize): usize {
  const header = text - 4;
  if (load<u32>(header) - <u32>size > 256) return __renew(text, size);
  store<u32>(header, <u32>size);
  return text;
}

// Input bytes a plain string gets room for at first (it grows by doubling).
const PLAIN_ROOM: usize = 4096;

// The string from `start` up to its closing quote, in one pass that tests and widens 32 bytes a
// round, when it is ASCII without escapes and ends before `end`; otherwise null (the caller
// decodes it the general way). The string is made with room for the bytes read so far and shrunk
// in place at the end; the last round, past what ends within `end`, is read from padding.
// Built with SIMD, the run is found first (128 bytes a round) and then widened (64 a round).
function plainString(start: usize, end: usize): string | null {
  if (ASC_FEATURE_SIMD) {
    const stop = lanesAsciiEnd(start, end);
    if (stop >= end || load<u8>(stop) != 0x22) return null;
    return asciiString(start, stop - start);
  }
  let room = end - start;
  if (room > PLAIN_ROOM) room = PLAIN_ROOM;
  // 32 bytes of slack: a round widens all 16 bytes it read, even past the closing quote.
  let text = __new((room << 1) + 32, idof<string>());
  let out = text;
  let p = start;
  while (true) {
    const limit = start + room;
    while (p + 32 <= limit) {
      const marks = (stops(load<u64>(p)) | stops(load<u64>(p, 8)) | stops(load<u64>(p, 16)) | stops(load<u64>(p, 24))) & HIGHS;
      if (marks) break;
      store<u64>(out, widen(<u64>load<u32>(p)));
      store<u64>(out, widen(<u64>load<u32>(p, 4)), 8);
      store<u64>(out, widen(<u64>load<u32>(p, 8)), 16);
      store<u64>(out, widen(<u64>load<u32>(p, 12)), 24);
      store<u64>(out, widen(<u64>load<u32>(p, 16)), 32);
      store<u64>(out, widen(<u64>load<u32>(p, 20)), 40);
      store<u64>(out, widen(<u64>load<u32>(p, 24)), 48);
      store<u64>(out, widen(<u64>load<u32>(p, 28)), 56);
      p += 32;
      out += 64;
    }
    // 16 bytes a round up to the first marked byte (at most two rounds after a marked 32).
    while (true) {
      let from = p;
      if (p + 16 > limit) {
        if (limit < end) break; // out of room: grow
        if (p >= end) return null;
        memory.fill(PAD, 0x61, 16);
        memory.copy(PAD, p, end - p);
        from = PAD;
      }
      const low = stops(load<u64>(from)) & HIGHS, high = stops(load<u64>(from, 8)) & HIGHS;
      store<u64>(out, widen(<u64>load<u32>(from)));
      store<u64>(out, widen(<u64>load<u32>(from, 4)), 8);
      store<u64>(out, widen(<u64>load<u32>(from, 8)), 16);
      store<u64>(out, widen(<u64>load<u32>(from, 12)), 24);
      if (low | high) {
        const at = p + firstMarked(low, high);
        if (at >= end || load<u8>(at) != 0x22) return null;
        return changetype<string>(shrink(text, (at - start) << 1));
      }
      if (from == PAD) return null; // no closing quote before `end`
      p += 16;
      out += 32;
    }
    room <<= 1;
    if (room > end - start) room = end - start;
    text = __renew(text, (room << 1) + 32);
    out = text + ((p - start) << 1);
  }
  return null;
}

// @ts-ignore: decorator
@inline function isWs(c: u32): bool {
  return c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d;
}

function skipWs(p: usize, end: usize): usize {
  while (p < end && isWs(load<u8>(p))) p++;
  return p;
}

// Just past the string whose opening quote is at `p`, or 0 when it does not end before `end`.
function stringEnd(p: usize, end: usize): usize {
  let at = p + 1;
  while (at < end) {
    at = plainEnd(at, end);
    if (at >= end) return 0;
    const c = load<u8>(at);
    if (c == 0x22) return at + 1;
    at += c == 0x5c ? 2 : 1; // an escape's letter, or a (stray) control byte
  }
  return 0;
}

/** Just past the JSON value that starts at `p` (no whitespace first), or 0 when it does not end
 * before `end`. A scanner, not a validator: the host sends well-formed JSON. */
export function valueEndAt(p: usize, end: usize): usize {
  if (p >= end) return 0;
  const c = load<u8>(p);
  if (c == 0x22) return stringEnd(p, end);
  if (c == 0x7b || c == 0x5b) {
    let depth = 0;
    let at = p;
    while (at < end) {
      const d = load<u8>(at);
      if (d == 0x22) {
        at = stringEnd(at, end);
        if (!at) return 0;
        continue;
      }
      if (d == 0x7b || d == 0x5b) depth++;
      else if (d == 0x7d || d == 0x5d) {
        if (--depth == 0) return at + 1;
      }
      at++;
    }
    return 0;
  }
  let at = p;
  while (at < end) {
    const d = load<u8>(at);
    if (isWs(d) || d == 0x2c || d == 0x7d || d == 0x5d) break;
    at++;
  }
  return at > p ? at : 0;
}

// Whether the key text [from, to) (between its quotes) is `key`.
function keyMatches(from: usize, to: usize, key: string): bool {
  const n = <usize>key.length;
  const units = changetype<usize>(key);
  if (to - from == n) {
    let i: usize = 0;
    while (i < n && <u32>load<u16>(units + (i << 1)) == <u32>load<u8>(from + i)) i++;
    if (i == n) return true;
  }
  // A key with escapes or beyond ASCII: compare the decoded text.
  for (let p = from; p < to; p++) {
    const c = load<u8>(p);
    if (c == 0x5c || c >= 0x80) return unescape(String.UTF8.decodeUnsafe(from, to - from)) == key;
  }
  return false;
}

/** Where the value of top-level member `key` of the object at `p` starts, or 0 when the object
 * has none (or is not an object). The values before it are skipped, not read. */
export function findValue(p: usize, end: usize, key: string): usize {
  p = skipWs(p, end);
  if (p >= end || load<u8>(p) != 0x7b) return 0;
  p++;
  while (true) {
    p = skipWs(p, end);
    if (p >= end || load<u8>(p) != 0x22) return 0;
    const keyEnd = stringEnd(p, end);
    if (!keyEnd) return 0;
    const match = keyMatches(p + 1, keyEnd - 1, key);
    p = skipWs(keyEnd, end);
    if (p >= end || load<u8>(p) != 0x3a) return 0;
    p = skipWs(p + 1, end);
    if (match) return p;
    const valueEnd = valueEndAt(p, end);
    if (!valueEnd) return 0;
    p = skipWs(valueEnd, end);
    if (p >= end || load<u8>(p) != 0x2c) return 0;
    p++;
  }
  return 0;
}

/** The string whose opening quote is at `p`, unescaped, or null when it does not end before
 * `end`. ASCII without escapes (the common case) is tested and widened 32 bytes a round. */
export function readString(p: usize, end: usize): string | null {
  const start = p + 1;
  const plain = plainString(start, end);
  if (plain !== null) return plain;
  const close = stringEnd(p, end);
  if (!close) return null;
  return unescape(String.UTF8.decodeUnsafe(start, close - 1 - start));
}

// The integer read by `readInteger`.
let integer: i64 = 0;

// Reads the JSON integer at `p` (no fraction or exponent, within i64) into `integer`.
function readInteger(p: usize, end: usize): bool {
  const negative = p < end && load<u8>(p) == 0x2d;
  if (negative) p++;
  const first = p;
  const limit: u64 = negative ? <u64>i64.MAX_VALUE + 1 : <u64>i64.MAX_VALUE;
  let acc: u64 = 0;
  while (p < end) {
    const c = <u32>load<u8>(p);
    if (c < 0x30 || c > 0x39) break;
    const digit = <u64>(c - 0x30);
    if (acc > (limit - digit) / 10) return false;
    acc = acc * 10 + digit;
    p++;
  }
  if (p == first) return false;
  if (p < end) {
    const c = load<u8>(p);
    if (!(isWs(c) || c == 0x2c || c == 0x7d || c == 0x5d)) return false;
  }
  integer = negative ? <i64>(0 - acc) : <i64>acc;
  return true;
}

// Whether the bytes at `p` are `word` (ASCII) followed by the end of a value.
function isLiteral(p: usize, end: usize, word: string): bool {
  const n = <usize>word.length;
  if (end - p < n) return false;
  for (let i: usize = 0; i < n; i++) {
    if (<u32>load<u8>(p + i) != <u32>load<u16>(changetype<usize>(word) + (i << 1))) return false;
  }
  if (p + n == end) return true;
  const c = load<u8>(p + n);
  return isWs(c) || c == 0x2c || c == 0x7d || c == 0x5d;
}

/** The request's params, read on demand from the request's bytes: each getter finds its member
 * and decodes only that value. Valid while the intent runs (the host frees the request after). */
export class Params {
  /** `start`: the first byte of the params value; `end`: the end of the request. */
  constructor(public start: usize, public end: usize) {}

  /** Member `key` as a string (unescaped), or null when absent or not a string. */
  getString(key: string): string | null {
    const value = findValue(this.start, this.end, key);
    if (!value || load<u8>(value) != 0x22) return null;
    return readString(value, this.end);
  }

  /** The raw JSON text of member `key`, or null when absent. */
  getRaw(key: string): string | null {
    const value = findValue(this.start, this.end, key);
    if (!value) return null;
    const valueEnd = valueEndAt(value, this.end);
    return valueEnd ? String.UTF8.decodeUnsafe(value, valueEnd - value) : null;
  }

  /** Whether member `key` is present. */
  has(key: string): bool {
    return findValue(this.start, this.end, key) != 0;
  }

  /** Whether member `key` is present and an integer (no fraction or exponent, within i64); read
   * it with `getInt`. */
  hasInt(key: string): bool {
    const value = findValue(this.start, this.end, key);
    return value != 0 && readInteger(value, this.end);
  }

  /** Member `key` as an integer, or `fallback` when absent or not an integer. */
  getInt(key: string, fallback: i64 = 0): i64 {
    const value = findValue(this.start, this.end, key);
    return value != 0 && readInteger(value, this.end) ? integer : fallback;
  }

  /** Member `key` as a boolean, or `fallback`. */
  getBool(key: string, fallback: bool = false): bool {
    const value = findValue(this.start, this.end, key);
    if (!value) return fallback;
    if (isLiteral(value, this.end, "true")) return true;
    if (isLiteral(value, this.end, "false")) return false;
    return fallback;
  }

  /** The params' JSON text. */
  toString(): string {
    const valueEnd = valueEndAt(this.start, this.end);
    return valueEnd ? String.UTF8.decodeUnsafe(this.start, valueEnd - this.start) : "null";
  }
}

// `{}`: the params of a request without any.
const EMPTY_OBJECT: usize = memory.data<u8>([0x7b, 0x7d]);

/** The method `readEnvelope` found. */
export let envelopeMethod: string = "";
/** The params `readEnvelope` found (`{}` when the request has none). */
export let envelopeParams: Params = new Params(EMPTY_OBJECT, EMPTY_OBJECT + 2);

/** Reads the request at [ptr, ptr + len) into `envelopeMethod` and `envelopeParams`; false when
 * it is not a JSON-RPC request with a string `method`. */
export function readEnvelope(ptr: usize, len: usize): bool {
  const end = ptr + len;
  return canonicalEnvelope(ptr, end) || plainEnvelope(ptr, end) || scanEnvelope(ptr, end);
}

// Any other request, read member by member (a request without params has `{}`).
function scanEnvelope(ptr: usize, end: usize): bool {
  const method = findValue(ptr, end, "method");
  if (!method || load<u8>(method) != 0x22) return false;
  const text = readString(method, end);
  if (text === null) return false;
  envelopeMethod = text;
  const params = findValue(ptr, end, "params");
  envelopeParams = params ? new Params(params, end) : new Params(EMPTY_OBJECT, EMPTY_OBJECT + 2);
  return true;
}

// The request in the form the host writes it (docs/ABI.md section 2),
// {"id":N,"jsonrpc":"2.0","method":"M","params":P} with M ASCII without escapes, read by matching its
// fixed parts a word at a time. False for any other form, which `plainEnvelope` reads.
function canonicalEnvelope(ptr: usize, end: usize): bool {
  // `{"id":`, then digits.
  if (end - ptr < 8 || (load<u64>(ptr) & 0xffffffffffff) != 0x3a226469227b) return false;
  let at = ptr + 6;
  while (at < end && <u32>load<u8>(at) - 0x30 < 10) at++;
  // `,"jsonrpc":"2.0","method":"` (27 bytes: three words and the last one overlapping).
  if (end - at < 48) return false;
  if (load<u64>(at) != 0x70726e6f736a222c || load<u64>(at, 8) != 0x22302e32223a2263) return false;
  if (load<u64>(at, 16) != 0x646f6874656d222c || load<u64>(at, 19) != 0x223a22646f687465) return false;
  const start = at + 27;
  const stop = asciiPlainEnd(start, end);
  // `","params":` after the method.
  if (end - stop < 12 || load<u8>(stop) != 0x22) return false;
  if (load<u64>(stop, 1) != 0x736d61726170222c || load<u16>(stop, 9) != 0x3a22) return false;
  envelopeMethod = asciiString(start, stop - start);
  envelopeParams = new Params(stop + 11, end);
  return true;
}

// Past the JSON whitespace from `p`, which is before the end of the request's last token (a byte
// that is not whitespace ends the loop, so it needs no bound). One space is passed here; the loop
// for more runs out of line, only when there is more: Contour charges a loop's body on every entry.
// @ts-ignore: decorator
@inline function skipSpace(p: usize): usize {
  if (load<u8>(p) == 0x20) p++; // one space, as after a colon, is read here
  if (load<u8>(p) <= 0x20) p = spaceEnd(p);
  return p;
}

// The first byte from `p` on that is not JSON whitespace (see `skipSpace`).
function spaceEnd(p: usize): usize {
  while (isWs(load<u8>(p))) p++;
  return p;
}

// The request when it starts with `{` and its members before `params` are `id` (digits), `jsonrpc`
// ("2.0") and `method` (once, ASCII without escapes) in any order, each key plain and followed by its
// colon and each value by its comma, with any whitespace after a colon or a comma: the keys are told
// apart by their first 8 bytes and the scan stops at `params` (what follows is not read). These are
// the members `findValue` finds, so the answer is the same. False for any other form, which
// `scanEnvelope` reads.
function plainEnvelope(ptr: usize, end: usize): bool {
  let last = end; // just past the last byte that is not whitespace
  if (last > ptr && load<u8>(last - 1) <= 0x20) {
    while (last > ptr && isWs(load<u8>(last - 1))) last--;
  }
  if (last - ptr < 2 || load<u8>(ptr) != 0x7b) return false;
  let p = skipSpace(ptr + 1);
  let method: usize = 0;
  let methodEnd: usize = 0;
  while (last - p > 10) {
    const key = load<u64>(p);
    if (key == 0x22646f6874656d22) {
      // `"method":` and its string, the first time.
      if (method || load<u8>(p, 8) != 0x3a) return false;
      p = skipSpace(p + 9);
      if (load<u8>(p) != 0x22) return false;
      method = p + 1;
      methodEnd = asciiPlainEnd(method, last);
      if (methodEnd >= last || load<u8>(methodEnd) != 0x22) return false;
      p = methodEnd + 1;
    } else if (key == 0x22736d6172617022) {
      // `"params":` after the method: the end of the scan.
      if (!method || load<u8>(p, 8) != 0x3a) return false;
      envelopeMethod = asciiString(method, methodEnd - method);
      envelopeParams = new Params(skipSpace(p + 9), end);
      return true;
    } else if (key == 0x6370726e6f736a22) {
      // `"jsonrpc":` and "2.0".
      if (load<u16>(p, 8) != 0x3a22) return false;
      p = skipSpace(p + 10);
      if (last - p < 6 || load<u32>(p) != 0x302e3222 || load<u8>(p, 4) != 0x22) return false;
      p += 5;
    } else if (<u32>key == 0x22646922 && load<u8>(p, 4) == 0x3a) {
      // `"id":` and digits.
      p = skipSpace(p + 5);
      const digits = p;
      while (p < last && <u32>load<u8>(p) - 0x30 < 10) p++;
      if (p == digits) return false;
    } else {
      return false;
    }
    // The comma, and the whitespace before the next key.
    if (last - p < 2 || load<u8>(p) != 0x2c) return false;
    p = skipSpace(p + 1);
  }
  return false;
}
