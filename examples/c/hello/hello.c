/* hello (C): the same plugin as examples/rust/hello, written with the C SDK.
 *
 *   greet {name}  answers {"greeting": "Hello, NAME!"} with NAME trimmed of ASCII whitespace;
 *                 an empty name is the plugin's own failed outcome `empty_name`
 *
 * It is also the C side of the SDK fuel comparison (`make sdk-fuel`): the TDM_FUEL_MARK calls
 * compile to nothing unless the module is built with -DTDM_FUEL_MARKS. */
#include "tdm_plugin.h"

TDM_INTENTS("[{\"name\":\"greet\",\"title\":\"Greet someone\",\"description\":\"Answers {\\\"greeting\\\": \\\"Hello, NAME!\\\"} for {\\\"name\\\": NAME}.\",\"params\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"minLength\":1}},\"required\":[\"name\"]},\"result\":{\"type\":\"object\",\"properties\":{\"greeting\":{\"type\":\"string\"}},\"required\":[\"greeting\"]}}]");

static bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

tdm_response tdm_handle(const char *method, size_t method_len, const char *params, size_t params_len) {
    if (!tdm_str_eq(method, method_len, "greet")) {
        return tdm_failed("This plugin has no such intent; it offers: greet.", "unknown_intent",
                          "Call one of the intents the plugin offers.", false);
    }
    char *name;
    size_t len;
    if (!tdm_json_get_string(params, params_len, "name", &name, &len)) {
        return tdm_failed("The params of `greet` do not fit: `name` must be a string.", "invalid_params",
                          "Check the params against the intent's documentation.", false);
    }
    TDM_FUEL_MARK(TDM_MARK_PARAMS);
    size_t start = 0, end = len;
    while (start < end && is_space(name[start])) start++;
    while (end > start && is_space(name[end - 1])) end--;
    if (start == end) {
        tdm_free(name, len + 1);
        return tdm_failed("`name` is empty.", "empty_name", "Pass a non-empty `name`, e.g. {\"name\":\"Ada\"}.", false);
    }
    TDM_FUEL_MARK(TDM_MARK_HANDLER);
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
