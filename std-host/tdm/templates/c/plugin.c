/* {{name}}: a Contour plugin in C, written with the C SDK (tdm-plugin/tdm_plugin.h).
 *
 *   greet {name}  answers {"greeting": "Hello, NAME!"} with NAME trimmed of ASCII whitespace;
 *                 an empty name is the plugin's own failed outcome `empty_name`
 *
 * TDM_INTENTS declares each intent (name, title, description and the JSON Schemas of its params
 * and result) in the module's `tdm.intents` custom section, which `tdm inspect`, `tdm repl` and
 * MCP clients show: keep it in step with tdm_handle. */
#include "tdm_plugin.h"

TDM_INTENTS("[{\"name\":\"greet\",\"title\":\"Greet someone\",\"description\":\"Answers {\\\"greeting\\\": \\\"Hello, NAME!\\\"} for params {\\\"name\\\": NAME}.\",\"params\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"minLength\":1}},\"required\":[\"name\"]},\"result\":{\"type\":\"object\",\"properties\":{\"greeting\":{\"type\":\"string\"}},\"required\":[\"greeting\"]}}]");

static bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* greet {name} -> {"greeting": "Hello, NAME!"} */
static tdm_response greet(const char *params, size_t params_len) {
    char *name;
    size_t len;
    if (!tdm_json_get_string(params, params_len, "name", &name, &len)) {
        return tdm_failed("The params of `greet` do not fit: `name` must be a string.", "invalid_params",
                          "Check the params against the intent's documentation.", false);
    }
    size_t start = 0, end = len;
    while (start < end && is_space(name[start])) start++;
    while (end > start && is_space(name[end - 1])) end--;
    if (start == end) {
        tdm_free(name, len + 1);
        return tdm_failed("`name` is empty.", "empty_name", "Pass a non-empty `name`, e.g. {\"name\":\"Ada\"}.", false);
    }
    tdm_json *w = tdm_output_begin();
    tdm_json_object_begin(w);
    tdm_json_key(w, "greeting");
    tdm_json_string_begin(w);
    tdm_json_string_part(w, "Hello, ", 7);
    tdm_json_string_part(w, name + start, end - start);
    tdm_json_string_part(w, "!", 1);
    tdm_json_string_end(w);
    tdm_json_object_end(w);
    tdm_free(name, len + 1);
    return tdm_output_end(w);
}

/* The one entry point the SDK calls for every intent: dispatch on its name. */
tdm_response tdm_handle(const char *method, size_t method_len, const char *params, size_t params_len) {
    if (tdm_str_eq(method, method_len, "greet")) {
        return greet(params, params_len);
    }
    return tdm_failed("This plugin has no such intent; it offers: greet.", "unknown_intent",
                      "Call one of the intents the plugin offers.", false);
}
