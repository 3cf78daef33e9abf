// tdm-plugin for AssemblyScript: the TDM IPC ABI (docs/ABI.md) for plugins of the Contour sandbox.
//
// A plugin's entry file re-exports the two memory exports and wires the third to its handler:
//
//   import { handle, completed, failed, JsonWriter, getString } from "<path to>/sdk/assemblyscript/assembly";
//   export { tdm_alloc, tdm_free } from "<path to>/sdk/assemblyscript/assembly";
//
//   export function tdm_plugin_execute_intent(ptr: usize, len: usize): usize {
//     return handle(ptr, len, onIntent);
//   }
//
//   function onIntent(method: string, params: string): string {
//     if (method == "ping") return completed(new JsonWriter().beginObject().key("pong").bool(true).endObject().toString());
//     return failed("Unknown intent.", "unknown_intent", "Call `ping`.", false);
//   }
//
// Build with `--runtime minimal --use abort= --noAssert` (see examples/assemblyscript/*/asconfig.json).
//
// Memory: the host's request and the framed response are unmanaged blocks (`heap.alloc`, TLSF);
// strings and other managed objects are collected by the `minimal` runtime's GC, which this SDK
// runs at the one point where no managed reference is on the stack: at the start of `tdm_alloc`,
// i.e. between intents. Objects reachable from globals survive, so a plugin may keep state across
// intents in globals. So memory stays constant from intent to intent.
//
// The SDK does not police the ABI: the host checks framing, UTF-8, JSON and the outcome shape.

// ---- The ABI exports ---------------------------------------------------------------------------

// Blocks handed to the host (the request it writes, the responses it reads), so `tdm_free`
// releases only what came from here: any other pointer is ignored instead of corrupting the heap.
const hostBlocks = new Set<usize>();

/** `tdm_alloc(size) -> ptr`: `size` writable bytes for the host, or 0 when memory cannot grow. */
export function tdm_alloc(size: usize): usize {
  // Between intents: nothing managed is on the stack, so a collection is safe here.
  __collect();
  return hostBlock(size);
}

/** `tdm_free(ptr, size)`: the host is done with a block (the request or a response). */
export function tdm_free(ptr: usize, size: usize): void {
  if (hostBlocks.has(ptr)) {
    hostBlocks.delete(ptr);
    heap.free(ptr);
  }
}

function hostBlock(size: usize): usize {
  if (size > 0x7fff0000) return 0;
  fuelMark(MARK_ALLOC_ENTER);
  const ptr = heap.alloc(size == 0 ? 1 : size);
  hostBlocks.add(ptr);
  fuelMark(MARK_ALLOC_EXIT);
  return ptr;
}

/** The plugin's handler: gets the request's method and the raw JSON text of its params and
 * returns the outcome's JSON text (build it with `completed` or `failed`). */
export type Handler = (method: string, params: string) => string;

/** Runs one intent: scans the request at [ptr, ptr+len) for `method` and `params`, calls
 * `handler` and returns the framed response ([u32 LE length][UTF-8 JSON]). Call it from the
 * entry file's exported `tdm_plugin_execute_intent`. */
export function handle(ptr: usize, len: usize, handler: Handler): usize {
  const request = String.UTF8.decodeUnsafe(ptr, len);
  const method = getString(request, "method");
  if (method === null) {
    return frame(failed("The request has no string `method`.", "invalid_request", "Send a JSON-RPC 2.0 request with a method.", false));
  }
  let params = getRaw(request, "params");
  if (params === null) params = "null";
  fuelMark(MARK_ENVELOPE);
  return frame(handler(method, params));
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

// ---- Fuel marks (measurement builds only) -------------------------------------------------------

// Built with `--use TDM_FUEL_MARKS=1`, the SDK imports `contour_profile.mark(i32)` and calls it
// between the stages of an intent, so benches' `sdk_fuel` harness (`make sdk-fuel`, bare wasmi with
// Contour's fuel costs) can split one intent's fuel into envelope, params, handler, response and
// allocator. Such a module does not load in Contour (the import is not on the allowlist); without
// the constant `fuelMark` compiles to nothing. A plugin marks the end of its own params and handler
// stages (see examples/assemblyscript/hello).

/** The envelope (method and params) has been read. */
export const MARK_ENVELOPE: i32 = 1;
/** The plugin has read its params. */
export const MARK_PARAMS: i32 = 2;
/** The plugin's own work is done; what follows is writing the response. */
export const MARK_HANDLER: i32 = 3;
/** An allocation starts. */
export const MARK_ALLOC_ENTER: i32 = 100;
/** An allocation ends. */
export const MARK_ALLOC_EXIT: i32 = 101;

// @ts-ignore: decorator
@external("contour_profile", "mark")
declare function contour_profile_mark(stage: i32): void;

/** Marks the end of a stage (a no-op unless built with `--use TDM_FUEL_MARKS=1`). */
// @ts-ignore: decorator
@inline export function fuelMark(stage: i32): void {
  if (isDefined(TDM_FUEL_MARKS)) contour_profile_mark(stage);
}

// ---- Outcomes ----------------------------------------------------------------------------------

/** `{"status":"completed","output":OUTPUT}` where `outputJson` is the output's JSON text. */
export function completed(outputJson: string): string {
  return `{"status":"completed","output":${outputJson}}`;
}

/** `{"status":"failed","message":..,"blockedReason":..,"recoveryHint":..,"output":{"retryable":..}}`. */
export function failed(message: string, blockedReason: string, recoveryHint: string, retryable: bool): string {
  return new JsonWriter()
    .beginObject()
    .key("status").string("failed")
    .key("message").string(message)
    .key("blockedReason").string(blockedReason)
    .key("recoveryHint").string(recoveryHint)
    .key("output").beginObject().key("retryable").bool(retryable).endObject()
    .endObject()
    .toString();
}

// ---- A minimal JSON writer ---------------------------------------------------------------------

/** Builds JSON text: objects, arrays, escaped strings, integers, booleans, null and raw JSON.
 * Commas are placed for you; every method returns the writer, so calls chain. */
export class JsonWriter {
  private parts: string[] = [];
  // One entry per open container: whether it has a member already.
  private nonempty: bool[] = [];
  private afterKey: bool = false;

  private beforeValue(): void {
    if (this.afterKey) {
      this.afterKey = false;
      return;
    }
    const depth = this.nonempty.length;
    if (depth > 0) {
      if (this.nonempty[depth - 1]) this.parts.push(",");
      this.nonempty[depth - 1] = true;
    }
  }

  beginObject(): JsonWriter {
    this.beforeValue();
    this.parts.push("{");
    this.nonempty.push(false);
    return this;
  }

  endObject(): JsonWriter {
    if (this.nonempty.length > 0) this.nonempty.pop();
    this.parts.push("}");
    return this;
  }

  beginArray(): JsonWriter {
    this.beforeValue();
    this.parts.push("[");
    this.nonempty.push(false);
    return this;
  }

  endArray(): JsonWriter {
    if (this.nonempty.length > 0) this.nonempty.pop();
    this.parts.push("]");
    return this;
  }

  /** An object key; the next call writes its value. */
  key(name: string): JsonWriter {
    this.beforeValue();
    this.parts.push(quote(name));
    this.parts.push(":");
    this.afterKey = true;
    return this;
  }

  string(value: string): JsonWriter {
    this.beforeValue();
    this.parts.push(quote(value));
    return this;
  }

  int(value: i64): JsonWriter {
    this.beforeValue();
    this.parts.push(value.toString());
    return this;
  }

  bool(value: bool): JsonWriter {
    this.beforeValue();
    this.parts.push(value ? "true" : "false");
    return this;
  }

  null(): JsonWriter {
    this.beforeValue();
    this.parts.push("null");
    return this;
  }

  /** Raw JSON text, copied as is; the caller vouches it is JSON. */
  raw(json: string): JsonWriter {
    this.beforeValue();
    this.parts.push(json);
    return this;
  }

  toString(): string {
    return this.parts.join("");
  }
}

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
  while (first < s.length && unit(s, first) != 0x5c) first++;
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

// ---- Host intents (imports from module "tdm") --------------------------------------------------

// @ts-ignore: decorator
@external("tdm", "tdm_host_call")
declare function tdm_host_call(ptr: usize, len: i32): i32;
// @ts-ignore: decorator
@external("tdm", "tdm_host_response")
declare function tdm_host_response(ptr: usize, cap: i32): i32;

/** What a host call answered: the host's outcome text, or the negative code when the request
 * could not be made (docs/ABI.md section 4a). */
export class HostAnswer {
  constructor(public code: i32, public outcome: string) {}

  /** Whether the host's outcome is completed. */
  get ok(): bool {
    return this.code >= 0 && getString(this.outcome, "status") == "completed";
  }

  /** The raw JSON text of the outcome's `output` ("null" when absent). */
  get output(): string {
    const raw = getRaw(this.outcome, "output");
    return raw === null ? "null" : raw;
  }
}

let nextHostId: i64 = 1;

/** Calls host method `method` with `paramsJson` (raw JSON text). */
export function hostCall(method: string, paramsJson: string): HostAnswer {
  const request = new JsonWriter()
    .beginObject()
    .key("jsonrpc").string("2.0")
    .key("id").int(nextHostId++)
    .key("method").string(method)
    .key("params").raw(paramsJson)
    .endObject()
    .toString();
  const bytes = String.UTF8.encode(request);
  const n = tdm_host_call(changetype<usize>(bytes), bytes.byteLength);
  if (n < 0) return new HostAnswer(n, "");
  const buffer = new ArrayBuffer(n);
  const got = tdm_host_response(changetype<usize>(buffer), n);
  if (got < 0) return new HostAnswer(got, "");
  return new HostAnswer(got, String.UTF8.decodeUnsafe(changetype<usize>(buffer), <usize>got));
}

/** `log {level, message}`. */
export function log(level: string, message: string): HostAnswer {
  return hostCall("log", new JsonWriter().beginObject().key("level").string(level).key("message").string(message).endObject().toString());
}

/** `dist.read {path}`: output `{path, size, text}`. */
export function distRead(path: string): HostAnswer {
  return hostCall("dist.read", new JsonWriter().beginObject().key("path").string(path).endObject().toString());
}

/** `vault.read {name}`: metadata only, never the secret. */
export function vaultRead(name: string): HostAnswer {
  return hostCall("vault.read", new JsonWriter().beginObject().key("name").string(name).endObject().toString());
}

/** `context.read {key}`. */
export function contextRead(key: string): HostAnswer {
  return hostCall("context.read", new JsonWriter().beginObject().key("key").string(key).endObject().toString());
}

/** `net.fetch {url, method, headers, body}`; `headersJson` is a raw JSON object of strings. */
export function netFetch(url: string, method: string = "GET", headersJson: string = "{}", body: string | null = null): HostAnswer {
  const w = new JsonWriter().beginObject().key("url").string(url).key("method").string(method).key("headers").raw(headersJson);
  if (body !== null) w.key("body").string(body);
  return hostCall("net.fetch", w.endObject().toString());
}

/** `tool.invoke {tool, intent, params}`; `paramsJson` raw JSON. */
export function toolInvoke(tool: string, intent: string, paramsJson: string = "{}"): HostAnswer {
  return hostCall("tool.invoke", new JsonWriter().beginObject().key("tool").string(tool).key("intent").string(intent).key("params").raw(paramsJson).endObject().toString());
}
