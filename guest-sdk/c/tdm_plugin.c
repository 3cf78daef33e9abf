/* tdm_plugin.c: the TDM IPC entry point of a freestanding C plugin and the host intents it may
 * call. The SDK is four files: this one, tdm_alloc.c, tdm_json.c and the headers. See
 * tdm_plugin.h. */
#include "tdm_internal.h"

/* ---- The ABI entry point -------------------------------------------------------------------- */

/* Past the JSON whitespace from req[i], for an i before the request's last token (a byte that is
 * not whitespace ends the loop, so it needs no bound). The loop is entered only when there is
 * whitespace: Contour charges a loop's whole body on every round. */
#define IS_SPACE(c) (tdm_json_class[(uint8_t)(c)] & TDM_JSON_SPACE)
#define SKIP_SPACE(req, i)                                                                         \
    do {                                                                                           \
        if (IS_SPACE((req)[i])) do (i)++; while (IS_SPACE((req)[i]));                             \
    } while (0)

/* What plain_envelope has found so far. */
typedef struct {
    const char *method, *params;
    size_t method_len, params_len;
} envelope;

/* One member of the envelope: given the request up to `end` (its last token's end) and the index i
 * of the member's key, at least 11 bytes before `end`, reads the member into `e` and answers the
 * index of the next member's key (past the comma and whitespace), or 0 when the scan ends there:
 * at `params`, or at anything plain_envelope leaves to the general scanner. Each is a function of
 * its own, so a member costs only its own instructions. */
typedef size_t member_reader(const char *req, size_t end, size_t i, envelope *e);

/* The index of the next member's key after a value that ends at req[i]: a comma, then whitespace. */
static inline size_t next_member(const char *req, size_t end, size_t i) {
    if (end - i < 2 || req[i] != ',') return 0;
    i++;
    SKIP_SPACE(req, i);
    return i;
}

/* `"id":` and digits. */
static size_t read_id(const char *req, size_t end, size_t i, envelope *e) {
    (void)e;
    if ((load64(req + i) & 0xffffffffff) != (load64("\"id\":...") & 0xffffffffff)) return 0;
    i += 5;
    SKIP_SPACE(req, i);
    if (req[i] < '0' || req[i] > '9') return 0;
    do i++;
    while (i < end && req[i] >= '0' && req[i] <= '9');
    return next_member(req, end, i);
}

/* `"jsonrpc":` and "2.0". */
static size_t read_jsonrpc(const char *req, size_t end, size_t i, envelope *e) {
    (void)e;
    if (load64(req + i) != load64("\"jsonrpc") || req[i + 8] != '"' || req[i + 9] != ':') return 0;
    i += 10;
    SKIP_SPACE(req, i);
    /* A comma and the next key follow, so the word is within the request. */
    if (end - i < 8 || (uint32_t)load64(req + i) != (uint32_t)load64("\"2.0....") || req[i + 4] != '"') return 0;
    return next_member(req, end, i + 5);
}

/* `"method":` and a string without escapes, the first time. */
static size_t read_method(const char *req, size_t end, size_t i, envelope *e) {
    if (load64(req + i) != load64("\"method\"") || req[i + 8] != ':' || e->method) return 0;
    i += 9;
    SKIP_SPACE(req, i);
    if (req[i] != '"') return 0;
    size_t close = tdm_string_run_end(req, end, i + 1);
    if (close >= end || req[close] != '"') return 0;
    e->method = req + i + 1;
    e->method_len = close - i - 1;
    return next_member(req, end, close + 1);
}

/* `"params":` after the method: its value measured as the general scanner measures it. */
static size_t read_params(const char *req, size_t end, size_t i, envelope *e) {
    if (load64(req + i) != load64("\"params\"") || req[i + 8] != ':' || !e->method) return 0;
    i += 9;
    SKIP_SPACE(req, i);
    e->params_len = tdm_json_value_len(req + i, end - i);
    if (e->params_len) e->params = req + i;
    return 0;
}

/* Any other member. */
static size_t read_other(const char *req, size_t end, size_t i, envelope *e) {
    (void)req, (void)end, (void)i, (void)e;
    return 0;
}

/* The readers by the first letter of a key (after its quote), from `i` to `p`. */
static member_reader *const readers[8] = {read_id,    read_jsonrpc, read_other, read_other,
                                          read_method, read_other,   read_other, read_params};

/* The method and params of a request that starts with `{` and whose members before `params` are
 * `id` (digits), `jsonrpc` ("2.0") and `method` (once, a string without escapes) in any order, each
 * key plain and followed by its colon and each value by its comma, with any whitespace after a colon
 * or a comma: a member is told apart by its key's first letter and read by its own reader, and the
 * scan stops at `params` (measured as the general scanner measures it; what follows is not read).
 * These are the members the general scanner finds, so the answer is the same. False for any other
 * form, which general_envelope reads. */
__attribute__((noinline)) static bool plain_envelope(const char *req, size_t len, const char **method,
                                                     size_t *method_len, const char **params,
                                                     size_t *params_len) {
    size_t end = len; /* just past the last byte that is not whitespace */
    while (end && IS_SPACE(req[end - 1])) end--;
    if (end < 2 || req[0] != '{') return false;
    size_t i = 1;
    SKIP_SPACE(req, i);
    envelope e = {0, 0, 0, 0};
    while (end - i > 10) {
        unsigned letter = (uint8_t)req[i + 1] - 'i';
        if (letter > 7 || !(i = readers[letter](req, end, i, &e))) break;
    }
    if (!e.params) return false;
    *method = e.method;
    *method_len = e.method_len;
    *params = e.params;
    *params_len = e.params_len;
    return true;
}

/* The method and params of any other request, found member by member by the general scanner (a
 * request without params has null); false when it has no string `method`. */
__attribute__((noinline)) static bool general_envelope(const char *req, size_t len, const char **method,
                                                       size_t *method_len, const char **params,
                                                       size_t *params_len) {
    if (!tdm_json_get(req, len, "method", method, method_len) || *method_len < 2 || **method != '"') return false;
    ++*method;
    *method_len -= 2;
    if (!tdm_json_get(req, len, "params", params, params_len)) {
        *params = "null";
        *params_len = 4;
    }
    return true;
}

__attribute__((export_name("tdm_plugin_execute_intent"))) uint8_t *tdm_plugin_execute_intent(const char *req,
                                                                                              size_t len) {
    const char *method, *params;
    size_t method_len, params_len;
    if (!plain_envelope(req, len, &method, &method_len, &params, &params_len) &&
        !general_envelope(req, len, &method, &method_len, &params, &params_len)) {
        return tdm_failed("The request has no string `method`.", "invalid_request",
                          "Send a JSON-RPC 2.0 request with a method.", false)
            .frame;
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

