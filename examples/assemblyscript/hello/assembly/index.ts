// hello (AssemblyScript): the same plugin as examples/rust/hello, written with the AssemblyScript SDK.
//
//   greet {name}  answers {"greeting": "Hello, NAME!"} with NAME trimmed of whitespace; an empty
//                 name is the plugin's own failed outcome `empty_name`
//
// It is also the AssemblyScript side of the SDK fuel comparison (`make sdk-fuel`): `fuelMark`
// compiles to nothing unless the module is built with `--use TDM_FUEL_MARKS=1`.
import { completed, failed, fuelMark, handle, JsonWriter, MARK_HANDLER, MARK_PARAMS, Params } from "../../../../guest-sdk/assemblyscript/assembly/index";
export { tdm_alloc, tdm_free } from "../../../../guest-sdk/assemblyscript/assembly/index";

export function tdm_plugin_execute_intent(ptr: usize, len: usize): usize {
  return handle(ptr, len, onIntent);
}

function onIntent(method: string, params: Params): usize {
  if (method != "greet") {
    return failed("This plugin has no intent `" + method + "`; it offers: greet.", "unknown_intent", "Call one of the intents the plugin offers.", false);
  }
  const name = params.getString("name");
  if (name === null) {
    return failed("The params of `greet` do not fit: `name` must be a string.", "invalid_params", "Check the params against the intent's documentation.", false);
  }
  fuelMark(MARK_PARAMS);
  const trimmed = name.trim();
  if (trimmed.length == 0) {
    return failed("`name` is empty.", "empty_name", "Pass a non-empty `name`, e.g. {\"name\":\"Ada\"}.", false);
  }
  const greeting = "Hello, " + trimmed + "!";
  fuelMark(MARK_HANDLER);
  return completed(new JsonWriter().beginObject().key("greeting").string(greeting).endObject());
}
