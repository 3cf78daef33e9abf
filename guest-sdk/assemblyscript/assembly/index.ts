// tdm-plugin for AssemblyScript: the TDM IPC ABI (docs/ABI.md) for plugins of the Contour sandbox.
//
// A plugin's entry file re-exports the two memory exports and wires the third to its handler:
//
//   import { completed, failed, handle, JsonWriter, Params } from "<path to>/sdk/assemblyscript/assembly";
//   export { tdm_alloc, tdm_free } from "<path to>/sdk/assemblyscript/assembly";
//
//   export function tdm_plugin_execute_intent(ptr: usize, len: usize): usize {
//     return handle(ptr, len, onIntent);
//   }
//
//   function onIntent(method: string, params: Params): usize {
//     if (method == "ping") return completed(new JsonWriter().beginObject().key("pong").bool(true).endObject());
//     return failed("Unknown intent.", "unknown_intent", "Call `ping`.", false);
//   }
//
// Build with `--runtime minimal --use abort= --noAssert` (see examples/assemblyscript/*/asconfig.json).
// To declare the plugin's intents where `tdm inspect` and `tdm repl` find them (the custom
// section `tdm.intents`, docs/ABI.md section 1a), put `tdm-intents.json` ([{"name",
// "description", "title", "params", "result"}], the last two JSON Schemas) in the plugin's folder and add the SDK's transform to asconfig.json:
// `"transform": ["<path to>/sdk/assemblyscript/transform/intents.mjs"]`.
//
// What an intent costs: Contour interprets the plugin and charges about one fuel per instruction,
// so the SDK reads the request from its bytes (`Params` decodes only the members a plugin asks
// for, plain ASCII 32 bytes a round) and `JsonWriter` writes UTF-8 bytes (plain ASCII 16 code units
// a round) that `completed` frames with one copy. Memory: see abi.ts. The SDK does not police the ABI: the host checks framing, UTF-8, JSON
// and the outcome shape.

import { fuelMark, MARK_ENVELOPE } from "./marks";
import { envelopeMethod, envelopeParams, Params, readEnvelope } from "./request";
import { failed } from "./writer";

export { tdm_alloc, tdm_free } from "./abi";
export * from "./marks";
export { Params } from "./request";
export * from "./writer";
export * from "./text";
export * from "./host";

/** The plugin's handler: gets the request's method and its params, and answers the framed
 * outcome (build it with `completed` or `failed`). */
export type Handler = (method: string, params: Params) => usize;

/** Runs one intent: reads the request at [ptr, ptr+len) for `method` and `params`, calls `handler`
 * and returns its framed response ([u32 LE length][UTF-8 JSON]). Call it from the entry file's
 * exported `tdm_plugin_execute_intent`. */
export function handle(ptr: usize, len: usize, handler: Handler): usize {
  if (!readEnvelope(ptr, len)) {
    return failed("The request has no string `method`.", "invalid_request", "Send a JSON-RPC 2.0 request with a method.", false);
  }
  fuelMark(MARK_ENVELOPE);
  return handler(envelopeMethod, envelopeParams);
}
