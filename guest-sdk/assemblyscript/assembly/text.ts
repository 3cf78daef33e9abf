// JSON text held in AssemblyScript strings: quoting a string, and a scanner that reads members of
// an object given as text (the host's answers to host calls are read with it). The request itself
// is read from its bytes by request.ts, which is much cheaper.

import { lanesBackslashUnit } from "./lanes";

const HEX = "0123456789abcdef";

/** `value` as a JSON string literal: quotes, backslash and control characters escaped. */
export function quote(value: string): string {
  let out = "\"";
  let run = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
    out += value.substring(run, i);
    run = i + 1;
    if (c == 0x22) out += "\\\"";
    else if (c == 0x5c) out += "\\\\";
    else if (c == 0x0a) out += "\\n";
    else if (c == 0x0d) out += "\\r";
    else if (c == 0x09) out += "\\t";
    else if (c == 0x08) out += "\\b";
    else if (c == 0x0c) out += "\\f";
    else out += "\\u00" + HEX.charAt(c >> 4) + HEX.charAt(c & 15);
  }
  return out + value.substring(run) + "\"";
}

// ---- A minimal JSON reader (a scanner over raw text) -------------------------------------------

function isWs(c: i32): bool {
  return c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d;
}

// The UTF-16 code unit s[i], unchecked: every caller keeps 0 <= i < s.length. (The scanner's
// loops are the SDK's hot path; `charCodeAt` bounds-checks every read.)
// @ts-ignore: decorator
@inline function unit(s: string, i: i32): i32 {
  return <i32>load<u16>(changetype<usize>(s) + (<usize>i << 1));
}

function skipWs(s: string, i: i32): i32 {
  const n = s.length;
  while (i < n && isWs(unit(s, i))) i++;
  return i;
}

// Index just past the string whose opening quote is at s[i], or -1 when unterminated.
function stringEnd(s: string, i: i32): i32 {
  const n = s.length;
  for (i++; i < n; i++) {
    const c = unit(s, i);
    if (c == 0x5c) i++;
    else if (c == 0x22) return i + 1;
  }
  return -1;
}

/** The end index of the JSON value starting at s[i] (no leading whitespace), or -1. A scanner,
 * not a validator: the host sends well-formed JSON. */
export function valueEnd(s: string, i: i32): i32 {
  const n = s.length;
  if (i < 0 || i >= n) return -1;
  const c = unit(s, i);
  if (c == 0x22) return stringEnd(s, i);
  if (c == 0x7b || c == 0x5b) {
    let depth = 0;
    for (let j = i; j < n; j++) {
      const d = unit(s, j);
      if (d == 0x22) {
        const end = stringEnd(s, j);
        if (end < 0) return -1;
        j = end - 1;
      } else if (d == 0x7b || d == 0x5b) {
        depth++;
      } else if (d == 0x7d || d == 0x5d) {
        if (--depth == 0) return j + 1;
      }
    }
    return -1;
  }
  let j = i;
  while (j < n) {
    const d = unit(s, j);
    if (isWs(d) || d == 0x2c || d == 0x7d || d == 0x5d) break;
    j++;
  }
  return j > i ? j : -1;
}

/** The raw JSON text of top-level member `key` of the object `json`, or null. */
export function getRaw(json: string, key: string): string | null {
  let i = skipWs(json, 0);
  if (i >= json.length || json.charCodeAt(i) != 0x7b) return null;
  i++;
  while (true) {
    i = skipWs(json, i);
    if (i >= json.length || json.charCodeAt(i) != 0x22) return null;
    const keyEnd = stringEnd(json, i);
    if (keyEnd < 0) return null;
    const match = unescape(json.substring(i + 1, keyEnd - 1)) == key;
    i = skipWs(json, keyEnd);
    if (i >= json.length || json.charCodeAt(i) != 0x3a) return null;
    i = skipWs(json, i + 1);
    const end = valueEnd(json, i);
    if (end < 0) return null;
    if (match) return json.substring(i, end);
    i = skipWs(json, end);
    if (i >= json.length || json.charCodeAt(i) != 0x2c) return null;
    i++;
  }
}

/** Member `key` as a string (unescaped), or null when absent or not a string. */
export function getString(json: string, key: string): string | null {
  const raw = getRaw(json, key);
  if (raw === null || raw.length < 2 || raw.charCodeAt(0) != 0x22) return null;
  return unescape(raw.substring(1, raw.length - 1));
}

/** Whether member `key` is present and an integer (no fraction or exponent, within i64);
 * read it with `getInt`. */
export function hasInt(json: string, key: string): bool {
  const raw = getRaw(json, key);
  return raw !== null && parseInteger(raw) !== null;
}

/** Member `key` as an integer, or `fallback` when absent or not an integer. */
export function getInt(json: string, key: string, fallback: i64 = 0): i64 {
  const raw = getRaw(json, key);
  if (raw === null) return fallback;
  const parsed = parseInteger(raw);
  return parsed === null ? fallback : parsed.value;
}

/** Member `key` as a boolean, or `fallback`. */
export function getBool(json: string, key: string, fallback: bool = false): bool {
  const raw = getRaw(json, key);
  if (raw == "true") return true;
  if (raw == "false") return false;
  return fallback;
}

class Int {
  constructor(public value: i64) {}
}

function parseInteger(raw: string): Int | null {
  let i = 0;
  const negative = raw.length > 0 && raw.charCodeAt(0) == 0x2d;
  if (negative) i++;
  if (i == raw.length) return null;
  const limit: u64 = negative ? <u64>i64.MAX_VALUE + 1 : <u64>i64.MAX_VALUE;
  let acc: u64 = 0;
  for (; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return null;
    const digit = <u64>(c - 0x30);
    if (acc > (limit - digit) / 10) return null;
    acc = acc * 10 + digit;
  }
  return new Int(negative ? <i64>(0 - acc) : <i64>acc);
}

function hex4(s: string, i: i32): i32 {
  if (i + 4 > s.length) return -1;
  let v = 0;
  for (let k = 0; k < 4; k++) {
    const c = s.charCodeAt(i + k);
    let d = -1;
    if (c >= 0x30 && c <= 0x39) d = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
    else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** The text of a JSON string literal's inside (no quotes) with its escapes resolved. */
export function unescape(s: string): string {
  let first = 0;
  if (ASC_FEATURE_SIMD) {
    // Built with SIMD, the first backslash is found 8 units a vector (lanes.ts).
    const start = changetype<usize>(s);
    first = <i32>((lanesBackslashUnit(start, start + (<usize>s.length << 1)) - start) >> 1);
  } else {
    while (first < s.length && unit(s, first) != 0x5c) first++;
  }
  if (first == s.length) return s;
  let out = "";
  let run = 0;
  for (let i = first; i < s.length; i++) {
    if (unit(s, i) != 0x5c) continue;
    out += s.substring(run, i);
    if (i + 1 >= s.length) break;
    const e = s.charCodeAt(++i);
    if (e == 0x75) {
      // \uXXXX: UTF-16 code units, as AssemblyScript strings are.
      const unit = hex4(s, i + 1);
      if (unit >= 0) {
        out += String.fromCharCode(unit);
        i += 4;
      }
    } else if (e == 0x6e) out += "\n";
    else if (e == 0x72) out += "\r";
    else if (e == 0x74) out += "\t";
    else if (e == 0x62) out += "\b";
    else if (e == 0x66) out += "\f";
    else out += String.fromCharCode(e); // \" \\ \/
    run = i + 1;
  }
  return out + s.substring(min(run, s.length));
}
