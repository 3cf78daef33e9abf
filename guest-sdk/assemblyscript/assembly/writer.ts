// Writing JSON as UTF-8 bytes, and the framed outcomes a handler answers. Strings go from UTF-16
// to escaped UTF-8 in one pass that narrows and tests 16 code units a round while they are plain ASCII, and an
// outcome is framed by copying the writer's bytes once into the block the host reads.

import { hostBlock } from "./abi";
import { lanesNarrow } from "./lanes";

const ONES: u64 = 0x0101010101010101;
const HIGHS: u64 = 0x8080808080808080;
// The bits of 4 UTF-16 code units that are set when one is not ASCII.
const NOT_ASCII: u64 = 0xff80ff80ff80ff80;

// 4 code units below 0x100 (one per 16-bit lane) packed into 4 bytes (the low 32 bits; bits 32
// to 39 hold a copy of the third). Two multiplies copy the units down by a shift each and a mask
// keeps the copies apart: fewer instructions than shifts and ors.
// @ts-ignore: decorator
@inline function narrow(word: u64): u64 {
  return (((word * 0x101) & 0x00ffff0000ffff00) * 0x10001) >> 24;
}

// 8 code units below 0x80 as 8 bytes.
// @ts-ignore: decorator
@inline function narrow8(low: u64, high: u64): u64 {
  return (narrow(low) & 0xffffffff) | (narrow(high) << 32);
}

// For 8 ASCII bytes, the high bit of each that is `"`, `\` or a control byte (and possibly of
// later ones), once masked with HIGHS. `^ 0x02` maps the controls onto themselves and `"` onto
// 0x20, so one `< 0x21` test finds both.
// @ts-ignore: decorator
@inline function escapes(bytes: u64): u64 {
  return ((bytes ^ (ONES * 0x02)) - ONES * 0x21) | ((bytes ^ (ONES * 0x5c)) - ONES);
}

// 8 code units of padding (ASCII 'a', which needs no escape) for the last round of a string.
const PAD: usize = memory.data(16);

const HEX: usize = memory.data<u8>([0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66]);

/** Builds JSON as UTF-8 bytes: objects, arrays, escaped strings, integers, booleans, null and raw
 * JSON. Commas are placed for you; every method returns the writer, so calls chain. Answer it as
 * an intent's output with `completed(writer)`, or read it back as text with `toString()`. */
export class JsonWriter {
  private buffer: ArrayBuffer = new ArrayBuffer(128);
  private length: i32 = 0;
  // Open containers; bit d - 1 of `nonempty`: the container at depth d (up to 64) has a member.
  private depth: i32 = 0;
  private nonempty: u64 = 0;
  // The same for containers deeper than 64 (made when first needed).
  private deeper: Array<bool> | null = null;
  private afterKey: bool = false;

  /** Where the written bytes start in linear memory (valid until the next write). */
  get dataStart(): usize {
    return changetype<usize>(this.buffer);
  }

  /** How many bytes have been written. */
  get byteLength(): i32 {
    return this.length;
  }

  // Room for `n` more bytes; where they go.
  private reserve(n: i32): usize {
    const need = this.length + n;
    if (need > this.buffer.byteLength) {
      let capacity = this.buffer.byteLength << 1;
      if (capacity < need) capacity = need;
      const next = new ArrayBuffer(capacity);
      memory.copy(changetype<usize>(next), changetype<usize>(this.buffer), <usize>this.length);
      this.buffer = next;
    }
    return changetype<usize>(this.buffer) + <usize>this.length;
  }

  private put(byte: u32): void {
    store<u8>(this.reserve(1), byte);
    this.length++;
  }

  // ASCII text written as it is (literals and digits).
  private putAscii(text: string): void {
    const n = text.length;
    const out = this.reserve(n);
    for (let i = 0; i < n; i++) store<u8>(out + <usize>i, load<u16>(changetype<usize>(text) + (<usize>i << 1)));
    this.length += n;
  }

  private beforeValue(): void {
    if (this.afterKey) {
      this.afterKey = false;
      return;
    }
    const depth = this.depth;
    if (depth == 0) return;
    if (depth <= 64) {
      const bit: u64 = 1 << <u64>(depth - 1);
      if (this.nonempty & bit) this.put(0x2c);
      this.nonempty |= bit;
    } else {
      const deeper = this.deeper!;
      const i = depth - 65;
      if (deeper[i]) this.put(0x2c);
      deeper[i] = true;
    }
  }

  private open(byte: u32): JsonWriter {
    this.beforeValue();
    this.put(byte);
    const depth = ++this.depth;
    if (depth <= 64) {
      this.nonempty &= ~(<u64>1 << <u64>(depth - 1));
    } else {
      let deeper = this.deeper;
      if (deeper === null) this.deeper = deeper = [];
      if (depth - 65 < deeper.length) deeper[depth - 65] = false;
      else deeper.push(false);
    }
    return this;
  }

  private close(byte: u32): JsonWriter {
    if (this.depth > 0) this.depth--;
    this.put(byte);
    return this;
  }

  beginObject(): JsonWriter {
    return this.open(0x7b);
  }

  endObject(): JsonWriter {
    return this.close(0x7d);
  }

  beginArray(): JsonWriter {
    return this.open(0x5b);
  }

  endArray(): JsonWriter {
    return this.close(0x5d);
  }

  /** An object key; the next call writes its value. */
  key(name: string): JsonWriter {
    this.beforeValue();
    this.quoted(name);
    this.put(0x3a);
    this.afterKey = true;
    return this;
  }

  string(value: string): JsonWriter {
    this.beforeValue();
    this.quoted(value);
    return this;
  }

  int(value: i64): JsonWriter {
    this.beforeValue();
    if (value < 0) this.put(0x2d);
    let magnitude: u64 = value < 0 ? 0 - <u64>value : <u64>value;
    let digits = 1;
    for (let rest = magnitude; rest >= 10; rest /= 10) digits++;
    const out = this.reserve(digits);
    for (let i = digits - 1; i >= 0; i--) {
      store<u8>(out + <usize>i, <u32>(magnitude % 10) + 0x30);
      magnitude /= 10;
    }
    this.length += digits;
    return this;
  }

  bool(value: bool): JsonWriter {
    this.beforeValue();
    this.putAscii(value ? "true" : "false");
    return this;
  }

  null(): JsonWriter {
    this.beforeValue();
    this.putAscii("null");
    return this;
  }

  /** Raw JSON text, copied as is; the caller vouches it is JSON. */
  raw(json: string): JsonWriter {
    this.beforeValue();
    const n = String.UTF8.byteLength(json);
    const out = this.reserve(n);
    String.UTF8.encodeUnsafe(changetype<usize>(json), json.length, out);
    this.length += n;
    return this;
  }

  toString(): string {
    return String.UTF8.decodeUnsafe(this.dataStart, <usize>this.length);
  }

  // `value` as a JSON string literal: quotes, backslash and control characters escaped as
  // serde_json escapes them, the rest UTF-8 (a lone surrogate as its WTF-8 bytes, as
  // `String.UTF8.encode` writes it). Plain ASCII goes 16 code units a round (narrowed, then
  // tested); a round with anything else goes a unit at a time, and then the rounds resume.
  // Built with SIMD, plain ASCII is narrowed and tested 16 code units a vector (64 a round while
  // nothing needs escaping: lanes.ts), and each unit that needs escaping or is not ASCII starts a
  // unit-at-a-time stretch (`quotedRest`).
  private quoted(value: string): void {
    this.put(0x22);
    let p = changetype<usize>(value);
    const end = p + (<usize>value.length << 1);
    if (ASC_FEATURE_SIMD) {
      while (p < end) {
        // Room for the rest as ASCII and one more vector (a round stores 16 bytes).
        const out = this.reserve(<i32>((end - p) >> 1) + 16);
        const stop = lanesNarrow(p, end, out);
        this.length += <i32>((stop - p) >> 1);
        p = stop < end ? this.quotedRest(stop, stop + 2, end) : end;
      }
      this.put(0x22);
      return;
    }
    while (p < end) {
      // Room for the rest as ASCII and a padded round.
      let out = this.reserve(<i32>((end - p) >> 1) + 8);
      const start = out;
      while (p + 32 <= end) {
        const a = load<u64>(p), b = load<u64>(p, 8), c = load<u64>(p, 16), d = load<u64>(p, 24);
        const first = narrow8(a, b), second = narrow8(c, d);
        if (((escapes(first) | escapes(second)) & HIGHS) | ((a | b | c | d) & NOT_ASCII)) break;
        store<u64>(out, first);
        store<u64>(out, second, 8);
        p += 32;
        out += 16;
      }
      // Fewer than 16 units left, or a round of 16 with something to escape: 8 units a round (the
      // last, shorter one from padding) until one has, then that one a unit at a time.
      const roundsEnd = p + 32 <= end ? p + 32 : end;
      let slowEnd = p;
      while (p < roundsEnd) {
        const n = roundsEnd - p < 16 ? roundsEnd - p : 16;
        let from = p;
        if (n < 16) {
          store<u64>(PAD, 0x0061006100610061);
          store<u64>(PAD, 0x0061006100610061, 8);
          memory.copy(PAD, p, n);
          from = PAD;
        }
        const a = load<u64>(from), b = load<u64>(from, 8);
        const bytes = narrow8(a, b);
        if ((escapes(bytes) & HIGHS) | ((a | b) & NOT_ASCII)) {
          slowEnd = p + n;
          break;
        }
        store<u64>(out, bytes);
        p += n;
        out += n >> 1;
      }
      this.length += <i32>(out - start);
      if (p < slowEnd) p = this.quotedRest(p, slowEnd, end);
    }
    this.put(0x22);
  }

  // The units of `quoted` from `p` a unit at a time: at least to `stop`, then on until 8 plain
  // ASCII units in a row (where the rounds may pay again) or `end`, so text beyond ASCII does not
  // try a round every few units; where it stopped. Each unit reserves the most it can take (6
  // bytes) once instead of once per byte.
  private quotedRest(p: usize, stop: usize, end: usize): usize {
    let plain = 0;
    while (p < end && (p < stop || plain < 8)) {
      const c = <u32>load<u16>(p);
      p += 2;
      const out = this.reserve(6);
      let n = 1;
      if (c >= 0x20 && c < 0x80 && c != 0x22 && c != 0x5c) {
        store<u8>(out, c);
        plain++;
      } else {
        plain = 0;
        if (c < 0x80) {
          n = 2;
          store<u8>(out, 0x5c);
          let letter = c;
          if (c == 0x0a) letter = 0x6e;
          else if (c == 0x0d) letter = 0x72;
          else if (c == 0x09) letter = 0x74;
          else if (c == 0x08) letter = 0x62;
          else if (c == 0x0c) letter = 0x66;
          else if (c != 0x22 && c != 0x5c) {
            // \u00XX
            store<u8>(out, 0x75, 1);
            store<u8>(out, 0x30, 2);
            store<u8>(out, 0x30, 3);
            store<u8>(out, load<u8>(HEX + (c >> 4)), 4);
            store<u8>(out, load<u8>(HEX + (c & 15)), 5);
            n = 6;
          }
          if (n == 2) store<u8>(out, letter, 1);
        } else if (c < 0x800) {
          store<u8>(out, 0xc0 | (c >> 6));
          store<u8>(out, 0x80 | (c & 63), 1);
          n = 2;
        } else if ((c & 0xfc00) == 0xd800 && p < end && (<u32>load<u16>(p) & 0xfc00) == 0xdc00) {
          const code = 0x10000 + (((c & 0x3ff) << 10) | (<u32>load<u16>(p) & 0x3ff));
          p += 2;
          store<u8>(out, 0xf0 | (code >> 18));
          store<u8>(out, 0x80 | ((code >> 12) & 63), 1);
          store<u8>(out, 0x80 | ((code >> 6) & 63), 2);
          store<u8>(out, 0x80 | (code & 63), 3);
          n = 4;
        } else {
          // Also a lone surrogate, as its WTF-8 bytes.
          store<u8>(out, 0xe0 | (c >> 12));
          store<u8>(out, 0x80 | ((c >> 6) & 63), 1);
          store<u8>(out, 0x80 | (c & 63), 2);
          n = 3;
        }
      }
      this.length += n;
    }
    return p;
  }
}

// `{"status":"completed","output":` as bytes.
const COMPLETED_HEAD: usize = memory.data<u8>([
  0x7b, 0x22, 0x73, 0x74, 0x61, 0x74, 0x75, 0x73, 0x22, 0x3a, 0x22, 0x63, 0x6f, 0x6d, 0x70, 0x6c,
  0x65, 0x74, 0x65, 0x64, 0x22, 0x2c, 0x22, 0x6f, 0x75, 0x74, 0x70, 0x75, 0x74, 0x22, 0x3a,
]);
const COMPLETED_HEAD_LENGTH: usize = 31;

/** The framed completed outcome `{"status":"completed","output":OUTPUT}`, where `output` is a
 * `JsonWriter` that wrote the output value, or the output's JSON text. Return it from the handler. */
export function completed<T>(output: T): usize {
  let n: usize;
  let text: usize = 0;
  if (isString<T>()) {
    n = <usize>String.UTF8.byteLength(changetype<string>(output));
  } else {
    const writer = changetype<JsonWriter>(output);
    n = <usize>writer.byteLength;
    text = writer.dataStart;
  }
  const frame = hostBlock(4 + COMPLETED_HEAD_LENGTH + n + 1);
  if (frame == 0) unreachable();
  store<u32>(frame, <u32>(COMPLETED_HEAD_LENGTH + n + 1));
  memory.copy(frame + 4, COMPLETED_HEAD, COMPLETED_HEAD_LENGTH);
  const body = frame + 4 + COMPLETED_HEAD_LENGTH;
  if (isString<T>()) {
    const json = changetype<string>(output);
    String.UTF8.encodeUnsafe(changetype<usize>(json), json.length, body);
  } else {
    memory.copy(body, text, n);
  }
  store<u8>(body + n, 0x7d);
  return frame;
}

/** The framed failed outcome
 * `{"status":"failed","message":..,"blockedReason":..,"recoveryHint":..,"output":{"retryable":..}}`. */
export function failed(message: string, blockedReason: string, recoveryHint: string, retryable: bool): usize {
  const writer = new JsonWriter()
    .beginObject()
    .key("status").string("failed")
    .key("message").string(message)
    .key("blockedReason").string(blockedReason)
    .key("recoveryHint").string(recoveryHint)
    .key("output").beginObject().key("retryable").bool(retryable).endObject()
    .endObject();
  return frameBytes(writer.dataStart, <usize>writer.byteLength);
}

/** Frames any text as a response ([u32 LE length][UTF-8 bytes]), unchecked: the host judges it. */
export function frame(text: string): usize {
  const n = <usize>String.UTF8.byteLength(text);
  const block = hostBlock(4 + n);
  if (block == 0) unreachable();
  store<u32>(block, <u32>n);
  String.UTF8.encodeUnsafe(changetype<usize>(text), text.length, block + 4);
  return block;
}

// Frames the `n` bytes at `bytes`.
function frameBytes(bytes: usize, n: usize): usize {
  const block = hostBlock(4 + n);
  if (block == 0) unreachable();
  store<u32>(block, <u32>n);
  memory.copy(block + 4, bytes, n);
  return block;
}
