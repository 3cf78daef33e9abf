/* counter: a C plugin that keeps a count across intents in the same instance.
 *
 *   increment {by}  adds `by` (an integer, default 1) and answers {"count": N}
 *   get {}          answers {"count": N}
 *
 * The count lives in a global, so it lasts as long as the instance: the host runs every intent
 * of one session in the same instance (and starts a fresh one, count 0, after a host failure). */
#include "tdm_plugin.h"

/* The intents, as plugin.toml lists them: `tdm inspect` and `tdm repl` show them for the bare
 * module too. */
TDM_INTENTS("[{\"name\":\"increment\",\"description\":\"Adds `by` (an integer, default 1) to the count and answers {\\\"count\\\": N}.\"},{\"name\":\"get\",\"description\":\"Answers the current count as {\\\"count\\\": N}.\"}]");

static int64_t count;

static tdm_response count_output(void) {
    tdm_json *w = tdm_output_begin();
    tdm_json_object_begin(w);
    tdm_json_key(w, "count");
    tdm_json_int(w, count);
    tdm_json_object_end(w);
    return tdm_output_end(w);
}

tdm_response tdm_handle(const char *method, size_t method_len, const char *params, size_t params_len) {
    if (tdm_str_eq(method, method_len, "increment")) {
        int64_t by = 1;
        const char *raw;
        size_t raw_len;
        if (tdm_json_get(params, params_len, "by", &raw, &raw_len) && !tdm_json_get_int(params, params_len, "by", &by)) {
            return tdm_failed("`by` must be an integer.", "invalid_params", "Pass {\"by\": N} with a whole number N.",
                              false);
        }
        count += by;
        return count_output();
    }
    if (tdm_str_eq(method, method_len, "get")) return count_output();
    return tdm_failed("Unknown intent.", "unknown_intent", "Call `increment {by}` or `get`.", false);
}
