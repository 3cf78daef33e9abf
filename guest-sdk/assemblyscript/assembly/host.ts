// Host intents (imports from module "tdm"): the plugin's only way out of the sandbox. Each call
// sends one JSON-RPC request through `tdm_host_call` and collects the host's outcome with
// `tdm_host_response`; a refused or failed call is an answer, not a trap.

import { getRaw, getString } from "./text";
import { JsonWriter } from "./writer";

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
    .endObject();
  const n = tdm_host_call(request.dataStart, request.byteLength);
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
