/* tdm_plugin.c: the TDM IPC entry point of a freestanding C plugin and the host intents it may
 * call. The SDK is four files: this one, tdm_alloc.c, tdm_json.c and the headers. See
 * tdm_plugin.h. */
#include "tdm_internal.h"

/* ---- The ABI entry point -------------------------------------------------------------------- */

/* Whether req[at..] starts with the n bytes of `lit`, compared a word at a time. */
static bool has_at(const char *req, size_t len, size_t at, const char *lit, size_t n) {
    if (at > len || len - at < n) return false;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        if (load64(req + at + i) != load64(lit + i)) return false;
    }
    for (; i < n; i++) {
        if (req[at + i] != lit[i]) return false;
    }
    return true;
}

/* The request in the form the host writes it (docs/ABI.md section 2),
 * {"id":N,"jsonrpc":"2.0","method":"M","params":P} with M free of escapes: the method and params
 * found by matching the fixed parts, without looking at the other members. False for any other
 * form, which the general scanner reads. */
static bool canonical_envelope(const char *req, size_t len, const char **method, size_t *method_len,
                               const char **params, size_t *params_len) {
    static const char id[] = "{\"id\":", middle[] = ",\"jsonrpc\":\"2.0\",\"method\":\"", tail[] = ",\"params\":";
    if (!has_at(req, len, 0, id, sizeof id - 1)) return false;
    size_t at = sizeof id - 1;
    while (at < len && req[at] >= '0' && req[at] <= '9') at++;
    if (!has_at(req, len, at, middle, sizeof middle - 1)) return false;
    size_t start = at + sizeof middle - 1, end = tdm_string_run_end(req, len, start);
    if (end >= len || req[end] != '"' || !has_at(req, len, end + 1, tail, sizeof tail - 1)) return false;
    size_t p = end + sizeof tail;
    size_t n = tdm_json_value_len(req + p, len - p);
    if (n == 0) return false;
    *method = req + start;
    *method_len = end - start;
    *params = req + p;
    *params_len = n;
    return true;
}

__attribute__((export_name("tdm_plugin_execute_intent"))) uint8_t *tdm_plugin_execute_intent(const char *req,
                                                                                              size_t len) {
    const char *method, *params;
    size_t method_len, params_len;
    if (canonical_envelope(req, len, &method, &method_len, &params, &params_len)) {
        TDM_FUEL_MARK(TDM_MARK_ENVELOPE);
        tdm_response r = tdm_handle(method, method_len, params, params_len);
        return r.frame ? r.frame : tdm_oom_response().frame;
    }
    if (!tdm_json_get(req, len, "method", &method, &method_len) || method_len < 2 || method[0] != '"') {
        return tdm_failed("The request has no string `method`.", "invalid_request",
                          "Send a JSON-RPC 2.0 request with a method.", false)
            .frame;
    }
    method++;
    method_len -= 2;
    if (!tdm_json_get(req, len, "params", &params, &params_len)) {
        params = "null";
        params_len = 4;
    }
    TDM_FUEL_MARK(TDM_MARK_ENVELOPE);
    tdm_response r = tdm_handle(method, method_len, params, params_len);
    return r.frame ? r.frame : tdm_oom_response().frame;
}

/* ---- Host intents ----------------------------------------------------------------------------- */

#define HOST_OOM (-100)

static int64_t next_host_id = 1;

int32_t tdm_host_request(const char *method, const char *params_json, size_t params_len, char **outcome) {
    *outcome = 0;
    tdm_json w;
    tdm_json_init(&w);
    tdm_json_object_begin(&w);
    tdm_json_key(&w, "jsonrpc");
    tdm_json_string(&w, "2.0");
    tdm_json_key(&w, "id");
    tdm_json_int(&w, next_host_id++);
    tdm_json_key(&w, "method");
    tdm_json_string(&w, method);
    tdm_json_key(&w, "params");
    tdm_json_raw(&w, params_json, params_len);
    tdm_json_object_end(&w);
    if (w.oom) {
        tdm_json_release(&w);
        return HOST_OOM;
    }
    int32_t n = tdm_host_call(w.buf + 4, (int32_t)(w.len - 4));
    tdm_json_release(&w);
    if (n < 0) return n;
    char *out = tdm_alloc((size_t)n + 1);
    if (!out) return HOST_OOM; /* the response stays pending; the next call replaces it */
    int32_t got = tdm_host_response(out, n);
    if (got < 0) {
        tdm_free(out, (size_t)n + 1);
        return got;
    }
    out[got] = 0;
    *outcome = out;
    return got;
}

/* Calls `method` with params built from NUL-terminated string pairs (a NULL value is skipped),
 * plus at most one raw member (`raw_key` with raw JSON text `raw`, skipped when NULL). */
static int32_t call_with(const char *method, const char *const *pairs, size_t n_pairs, const char *raw_key,
                         const char *raw, char **outcome) {
    *outcome = 0;
    tdm_json w;
    tdm_json_init(&w);
    tdm_json_object_begin(&w);
    for (size_t i = 0; i + 1 < 2 * n_pairs; i += 2) {
        if (!pairs[i + 1]) continue;
        tdm_json_key(&w, pairs[i]);
        tdm_json_string(&w, pairs[i + 1]);
    }
    if (raw_key && raw) {
        tdm_json_key(&w, raw_key);
        tdm_json_raw(&w, raw, tdm_strlen(raw));
    }
    tdm_json_object_end(&w);
    int32_t r = w.oom ? HOST_OOM : tdm_host_request(method, (const char *)w.buf + 4, w.len - 4, outcome);
    tdm_json_release(&w);
    return r;
}

int32_t tdm_log(const char *level, const char *message) {
    const char *pairs[] = {"level", level, "message", message};
    char *outcome;
    int32_t r = call_with("log", pairs, 2, 0, 0, &outcome);
    if (outcome) tdm_free(outcome, 0);
    return r;
}

int32_t tdm_dist_read(const char *path, char **outcome) {
    const char *pairs[] = {"path", path};
    return call_with("dist.read", pairs, 1, 0, 0, outcome);
}

int32_t tdm_vault_read(const char *name, char **outcome) {
    const char *pairs[] = {"name", name};
    return call_with("vault.read", pairs, 1, 0, 0, outcome);
}

int32_t tdm_context_read(const char *key, char **outcome) {
    const char *pairs[] = {"key", key};
    return call_with("context.read", pairs, 1, 0, 0, outcome);
}

int32_t tdm_net_fetch(const char *url, const char *method, const char *headers_json, const char *body, char **outcome) {
    const char *pairs[] = {"url", url, "method", method ? method : "GET", "body", body};
    return call_with("net.fetch", pairs, 3, "headers", headers_json ? headers_json : "{}", outcome);
}

int32_t tdm_tool_invoke(const char *tool, const char *intent, const char *params_json, char **outcome) {
    const char *pairs[] = {"tool", tool, "intent", intent};
    return call_with("tool.invoke", pairs, 2, "params", params_json ? params_json : "{}", outcome);
}

bool tdm_outcome_completed(const char *outcome, size_t len, const char **output, size_t *output_len) {
    const char *status;
    size_t status_len;
    if (!tdm_json_get(outcome, len, "status", &status, &status_len)) return false;
    if (!tdm_str_eq(status, status_len, "\"completed\"")) return false;
    return tdm_json_get(outcome, len, "output", output, output_len);
}

