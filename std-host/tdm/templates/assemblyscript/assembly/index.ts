// {{name}}: a Contour plugin in AssemblyScript, written with the AssemblyScript SDK (tdm-plugin/).
//
//   greet {name}  answers {"greeting": "Hello, NAME!"} with NAME trimmed of whitespace; an empty
//                 name is the plugin's own failed outcome `empty_name`
//
// The intents' titles, descriptions and JSON Schemas are declared in ../tdm-intents.json (the
// SDK's transform writes them into the module's `tdm.intents` section): keep it in step with
// onIntent.
import { completed, failed, handle, JsonWriter, Params } from "../tdm-plugin/assembly/index";
export { tdm_alloc, tdm_free } from "../tdm-plugin/assembly/index";

export function tdm_plugin_execute_intent(ptr: usize, len: usize): usize {
  return handle(ptr, len, onIntent);
}

function onIntent(method: string, params: Params): usize {
  if (method == "greet") return greet(params);
  return failed("This plugin has no intent `" + method + "`; it offers: greet.", "unknown_intent", "Call one of the intents the plugin offers.", false);
}

// greet {name} -> {"greeting": "Hello, NAME!"}
function greet(params: Params): usize {
  const name = params.getString("name");
  if (name === null) {
    return failed("The params of `greet` do not fit: `name` must be a string.", "invalid_params", "Check the params against the intent's documentation.", false);
  }
  const trimmed = name.trim();
  if (trimmed.length == 0) {
    return failed("`name` is empty.", "empty_name", "Pass a non-empty `name`, e.g. {\"name\":\"Ada\"}.", false);
  }
  return completed(new JsonWriter().beginObject().key("greeting").string("Hello, " + trimmed + "!").endObject());
}
