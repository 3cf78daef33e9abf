// wordcount: an AssemblyScript plugin.
//
//   count {text}  answers {"words": N, "lines": M}
//
// A word is a maximal run of characters other than ASCII whitespace (space, \t, \n, \v, \f, \r).
// Lines are counted as an editor shows them: each "\n" ends a line, and a last line without one
// counts too; "" has 0 lines.
import { completed, failed, handle, JsonWriter, Params } from "../../../../guest-sdk/assemblyscript/assembly/index";
export { tdm_alloc, tdm_free } from "../../../../guest-sdk/assemblyscript/assembly/index";

export function tdm_plugin_execute_intent(ptr: usize, len: usize): usize {
  return handle(ptr, len, onIntent);
}

function onIntent(method: string, params: Params): usize {
  if (method != "count") {
    return failed("Unknown intent.", "unknown_intent", "Call `count {text}`.", false);
  }
  const text = params.getString("text");
  if (text === null) {
    return failed("`text` must be a string.", "invalid_params", "Pass {\"text\": \"...\"}.", false);
  }
  let words: i64 = 0;
  let lines: i64 = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c == 0x20 || (c >= 0x09 && c <= 0x0d);
    if (!space && !inWord) words++;
    inWord = !space;
    if (c == 0x0a) lines++;
  }
  if (text.length > 0 && text.charCodeAt(text.length - 1) != 0x0a) lines++;
  const output = new JsonWriter().beginObject().key("words").int(words).key("lines").int(lines).endObject();
  return completed(output);
}
