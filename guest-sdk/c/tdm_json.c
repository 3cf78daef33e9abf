/* tdm_json.c: the C SDK's JSON: the writer a plugin builds its output with, the framing of
 * outcomes, and the scanner that reads members of a request's params. See tdm_plugin.h. */
#include "tdm_internal.h"

#ifdef __wasm_simd128__
/* Built with -msimd128: each round tests one 16-byte vector, and long runs go 128 bytes a round.
 * The vector tests (`marks##_v`) answer all ones in each lane to stop at; the long rounds use the
 * word tests on vectors (`marks##_w`, tdm_internal.h), which an interpreter runs faster. */

/* The index of the first byte of s[i..len) that `marks` marks, or len. The first 16 bytes are
 * tested here (most keys and method names end there); a longer run goes on in name##_long. */
#define SCAN_UNTIL(name, marks)                                                                    \
    /* The last round, over the fewer than 16 bytes from i, padded with 'a's (no mask marks it). */ \
    __attribute__((noinline)) static size_t name##_tail(const char *s, size_t len, size_t i) {    \
        char pad[16];                                                                              \
        __builtin_memset(pad, 'a', 16);                                                            \
        __builtin_memcpy(pad, s + i, len - i);                                                     \
        uint32_t m = wasm_i8x16_bitmask(marks##_v(wasm_v128_load(pad)));                           \
        size_t at = i + (m ? (size_t)__builtin_ctz(m) : 16);                                       \
        return at < len ? at : len;                                                                \
    }                                                                                              \
    /* Where the rounds of 128 bytes from i end: at the first that holds a marked byte, or where   \
     * fewer than 128 are left. A loop of its own, out of line, because Contour (wasmi) charges a  \
     * loop body's whole straight-line code on every round: this body is only the 8 loads, their  \
     * tests, the ORs and one branch, about 1 fuel a byte. */                                     \
    __attribute__((noinline)) static size_t name##_clear(const char *s, size_t len, size_t i) {   \
        for (; i + 128 <= len; i += 128) {                                                         \
            v128_t low = (marks##_w(wasm_v128_load(s + i)) | marks##_w(wasm_v128_load(s + i + 16))) | \
                         (marks##_w(wasm_v128_load(s + i + 32)) | marks##_w(wasm_v128_load(s + i + 48))); \
            v128_t high = (marks##_w(wasm_v128_load(s + i + 64)) | marks##_w(wasm_v128_load(s + i + 80))) | \
                          (marks##_w(wasm_v128_load(s + i + 96)) | marks##_w(wasm_v128_load(s + i + 112))); \
            if (wasm_v128_any_true((low | high) & wasm_i8x16_splat((int8_t)0x80))) break;          \
        }                                                                                          \
        return i;                                                                                  \
    }                                                                                              \
    /* name past its first 16 bytes: the long rounds, then the exact byte 16 bytes a round. */     \
    __attribute__((noinline)) static size_t name##_long(const char *s, size_t len, size_t i) {    \
        for (i = name##_clear(s, len, i); i + 16 <= len; i += 16) {                                \
            uint32_t m = wasm_i8x16_bitmask(marks##_v(wasm_v128_load(s + i)));                     \
            if (m) return i + (size_t)__builtin_ctz(m);                                            \
        }                                                                                          \
        return i < len ? name##_tail(s, len, i) : len;                                             \
    }                                                                                              \
    __attribute__((noinline)) size_t name(const char *s, size_t len, size_t i) {                  \
        if (i + 16 > len) return i < len ? name##_tail(s, len, i) : len;                           \
        uint32_t m = wasm_i8x16_bitmask(marks##_v(wasm_v128_load(s + i)));                         \
        return m ? i + (size_t)__builtin_ctz(m) : name##_long(s, len, i + 16);                     \
    }

#else
/* Rounds of 16 bytes from i while 16 remain before `end`: returns the index of the first byte
 * `marks` marks from the function it is in, else leaves i where fewer than 16 remain. */
#define EXACT_ROUNDS(marks, end)                                                                   \
    for (; i + 16 <= (end); i += 16) {                                                             \
        uint64_t a = marks(load64(s + i)), b = marks(load64(s + i + 8));                           \
        if (a | b) return i + (a ? (size_t)__builtin_ctzll(a) : 64 + (size_t)__builtin_ctzll(b)) / 8; \
    }

/* The index of the first byte of s[i..len) that `marks` marks, or len: exact rounds of 16 bytes
 * for the first 1,024 bytes of a run, where most runs end (keys, values, the runs between escapes
 * in lines of text); past them name##_long, which tests 128 bytes (16 words, one branch) a round
 * and finds the byte 16 bytes a round in the round that holds it. The C SDK scans a string param
 * several times (its envelope, its params, its decoding, its output), so the widest round pays,
 * and entering the long rounds (a call and the round that finds the stop) is paid only by runs
 * long enough to repay it; the rest (fewer than 16 bytes) padded with 'a's, a byte no
 * mask marks. None is inlined: Contour charges a loop's whole body on every round and a
 * function's straight-line code on every call, so each round stays small and the long rounds'
 * and the tail's code is paid only when it runs. */
#define SCAN_UNTIL(name, marks)                                                                    \
    __attribute__((noinline)) static size_t name##_tail(const char *s, size_t len, size_t i) {    \
        char pad[16];                                                                              \
        __builtin_memset(pad, 'a', 16);                                                            \
        __builtin_memcpy(pad, s + i, len - i);                                                     \
        uint64_t a = marks(load64(pad)), b = marks(load64(pad + 8));                               \
        size_t at = i + (a ? (size_t)__builtin_ctzll(a) : b ? 64 + (size_t)__builtin_ctzll(b) : 128) / 8; \
        return at < len ? at : len;                                                                \
    }                                                                                              \
    __attribute__((noinline)) static size_t name##_long(const char *s, size_t len, size_t i) {    \
        if (i + 16 > len) return name##_tail(s, len, i);                                           \
        for (; i + 128 <= len; i += 128) {                                                         \
            uint64_t m = 0;                                                                        \
            _Pragma("clang loop unroll(full)")                                                     \
            for (size_t k = 0; k < 128; k += 8) m |= marks(load64(s + i + k));                     \
            if (m) break;                                                                          \
        }                                                                                          \
        EXACT_ROUNDS(marks, len)                                                                   \
        return i < len ? name##_tail(s, len, i) : len;                                             \
    }                                                                                              \
    __attribute__((noinline)) size_t name(const char *s, size_t len, size_t i) {                  \
        size_t end = i + 1024 < len ? i + 1024 : len;                                              \
        EXACT_ROUNDS(marks, end)                                                                   \
        return i < len ? name##_long(s, len, i) : len;                                             \
    }

#endif

static size_t plain_run_end(const char *s, size_t len, size_t i);
static size_t backslash_at(const char *s, size_t len, size_t i);
SCAN_UNTIL(plain_run_end, specials)
SCAN_UNTIL(tdm_string_run_end, quote_or_backslash)
SCAN_UNTIL(backslash_at, is_backslash_word)


size_t tdm_strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

bool tdm_str_eq(const char *s, size_t len, const char *lit) {
    size_t n = tdm_strlen(lit);
    return n == len && memcmp(s, lit, n) == 0;
}

/* ---- JSON writer -------------------------------------------------------------------------- */

static bool ensure(tdm_json *w, size_t extra) {
    if (w->oom) return false;
    if (w->len + extra <= w->cap) return true;
    size_t cap = w->cap ? w->cap * 2 : 64;
    if (cap < w->len + extra) cap = w->len + extra;
    uint8_t *buf = tdm_realloc(w->buf, cap);
    if (!buf) {
        w->oom = true;
        return false;
    }
    w->buf = buf;
    w->cap = cap;
    return true;
}

void tdm_json_init(tdm_json *w) {
    w->buf = 0;
    w->len = 0;
    w->cap = 0;
    w->oom = false;
    w->after_key = false;
    w->depth = 0;
    w->nonempty = 0;
    if (ensure(w, 4)) w->len = 4; /* the frame's length, filled in at the end */
}

void tdm_json_release(tdm_json *w) {
    tdm_free(w->buf, w->cap);
    w->buf = 0;
    w->len = w->cap = 0;
}

void tdm_json_bytes(tdm_json *w, const void *bytes, size_t len) {
    if (!ensure(w, len)) return;
    memcpy(w->buf + w->len, bytes, len);
    w->len += len;
}

static void put(tdm_json *w, char c) {
    if (!ensure(w, 1)) return;
    w->buf[w->len++] = (uint8_t)c;
}

static void put_str(tdm_json *w, const char *s) {
    tdm_json_bytes(w, s, tdm_strlen(s));
}

/* Comma handling before a value or a key. */
static void before_value(tdm_json *w) {
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth > 0 && w->depth <= TDM_JSON_MAX_DEPTH) {
        uint32_t bit = 1u << (w->depth - 1);
        if (w->nonempty & bit) put(w, ',');
        w->nonempty |= bit;
    }
}

static void json_open(tdm_json *w, char c) {
    before_value(w);
    put(w, c);
    w->depth++;
    if (w->depth <= TDM_JSON_MAX_DEPTH) w->nonempty &= ~(1u << (w->depth - 1));
}

static void json_close(tdm_json *w, char c) {
    if (w->depth > 0) w->depth--;
    put(w, c);
}

void tdm_json_object_begin(tdm_json *w) { json_open(w, '{'); }
void tdm_json_object_end(tdm_json *w) { json_close(w, '}'); }
void tdm_json_array_begin(tdm_json *w) { json_open(w, '['); }
void tdm_json_array_end(tdm_json *w) { json_close(w, ']'); }

/* The inside of a JSON string literal: quotes, backslash and control characters escaped. Runs
 * without any are found 16 bytes at a time and copied whole. */
static void escape_body(tdm_json *w, const char *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    size_t run = 0; /* start of the bytes copied verbatim in one go */
    for (;;) {
        size_t i = plain_run_end(s, len, run);
        tdm_json_bytes(w, s + run, i - run);
        if (i >= len) return;
        uint8_t c = (uint8_t)s[i];
        run = i + 1;
        switch (c) {
        case '"': put_str(w, "\\\""); break;
        case '\\': put_str(w, "\\\\"); break;
        case '\n': put_str(w, "\\n"); break;
        case '\r': put_str(w, "\\r"); break;
        case '\t': put_str(w, "\\t"); break;
        case '\b': put_str(w, "\\b"); break;
        case '\f': put_str(w, "\\f"); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            tdm_json_bytes(w, u, 6);
        }
        }
    }
}

static void escaped(tdm_json *w, const char *s, size_t len) {
    put(w, '"');
    escape_body(w, s, len);
    put(w, '"');
}

void tdm_json_string_begin(tdm_json *w) {
    before_value(w);
    put(w, '"');
}

void tdm_json_string_part(tdm_json *w, const char *s, size_t len) { escape_body(w, s, len); }

void tdm_json_string_end(tdm_json *w) { put(w, '"'); }

void tdm_json_key_n(tdm_json *w, const char *key, size_t len) {
    before_value(w);
    escaped(w, key, len);
    put(w, ':');
    w->after_key = true;
}

void tdm_json_key(tdm_json *w, const char *key) { tdm_json_key_n(w, key, tdm_strlen(key)); }

void tdm_json_string_n(tdm_json *w, const char *s, size_t len) {
    before_value(w);
    escaped(w, s, len);
}

void tdm_json_string(tdm_json *w, const char *s) { tdm_json_string_n(w, s, tdm_strlen(s)); }

void tdm_json_int(tdm_json *w, int64_t value) {
    before_value(w);
    char digits[20];
    size_t n = 0;
    uint64_t u = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (value < 0) put(w, '-');
    while (n) put(w, digits[--n]);
}

void tdm_json_bool(tdm_json *w, bool value) {
    before_value(w);
    put_str(w, value ? "true" : "false");
}

void tdm_json_null(tdm_json *w) {
    before_value(w);
    put_str(w, "null");
}

void tdm_json_raw(tdm_json *w, const char *json, size_t len) {
    before_value(w);
    tdm_json_bytes(w, json, len);
}

/* ---- Outcomes ------------------------------------------------------------------------------- */

/* The answer when the SDK itself ran out of memory: a static frame (tdm_free ignores it). */
#define OOM_JSON                                                                                     \
    "{\"status\":\"failed\",\"message\":\"The plugin ran out of memory.\",\"blockedReason\":"          \
    "\"out_of_memory\",\"recoveryHint\":\"Retry with smaller input.\",\"output\":{\"retryable\":false}}"
static struct {
    uint32_t len;
    char json[sizeof(OOM_JSON) - 1];
} oom_frame = {sizeof(OOM_JSON) - 1, OOM_JSON};

tdm_response tdm_oom_response(void) {
    return (tdm_response){(uint8_t *)&oom_frame};
}

/* Frames a writer's buffer: the length of the JSON after the 4 reserved bytes, little-endian. */
static tdm_response finish(tdm_json *w) {
    if (w->oom || !w->buf) {
        tdm_json_release(w);
        return tdm_oom_response();
    }
    uint32_t n = (uint32_t)(w->len - 4);
    w->buf[0] = (uint8_t)n;
    w->buf[1] = (uint8_t)(n >> 8);
    w->buf[2] = (uint8_t)(n >> 16);
    w->buf[3] = (uint8_t)(n >> 24);
    tdm_response r = {w->buf};
    w->buf = 0; /* the host frees it now */
    w->len = w->cap = 0;
    return r;
}

static tdm_json output_writer;

tdm_json *tdm_output_begin(void) {
    tdm_json *w = &output_writer;
    if (w->buf) tdm_json_release(w); /* an abandoned outcome */
    tdm_json_init(w);
    put_str(w, "{\"status\":\"completed\",\"output\":");
    return w;
}

tdm_response tdm_output_end(tdm_json *w) {
    put(w, '}');
    return finish(w);
}

tdm_response tdm_completed_raw(const char *output_json, size_t len) {
    tdm_json *w = tdm_output_begin();
    tdm_json_bytes(w, output_json, len);
    return tdm_output_end(w);
}

tdm_response tdm_failed(const char *message, const char *blocked_reason, const char *recovery_hint, bool retryable) {
    tdm_json w;
    tdm_json_init(&w);
    tdm_json_object_begin(&w);
    tdm_json_key(&w, "status");
    tdm_json_string(&w, "failed");
    tdm_json_key(&w, "message");
    tdm_json_string(&w, message);
    tdm_json_key(&w, "blockedReason");
    tdm_json_string(&w, blocked_reason);
    tdm_json_key(&w, "recoveryHint");
    tdm_json_string(&w, recovery_hint);
    tdm_json_key(&w, "output");
    tdm_json_object_begin(&w);
    tdm_json_key(&w, "retryable");
    tdm_json_bool(&w, retryable);
    tdm_json_object_end(&w);
    tdm_json_object_end(&w);
    return finish(&w);
}

tdm_response tdm_response_bytes(const void *bytes, size_t len) {
    tdm_json w;
    tdm_json_init(&w);
    tdm_json_bytes(&w, bytes, len);
    return finish(&w);
}

/* ---- JSON scanner --------------------------------------------------------------------------- */

/* Each byte's classes (see tdm_internal.h): one load tells the scanners whether it is whitespace
 * or a byte that matters inside an object or array. */
const uint8_t tdm_json_class[256] = {
    [' '] = TDM_JSON_SPACE, ['\t'] = TDM_JSON_SPACE, ['\n'] = TDM_JSON_SPACE, ['\r'] = TDM_JSON_SPACE,
    ['"'] = TDM_JSON_STOP,  ['{'] = TDM_JSON_STOP,    ['}'] = TDM_JSON_STOP,    ['['] = TDM_JSON_STOP,
    [']'] = TDM_JSON_STOP,
};

static bool is_ws(char c) {
    return tdm_json_class[(uint8_t)c] & TDM_JSON_SPACE;
}

static size_t skip_ws(const char *s, size_t len, size_t i) {
    while (i < len && is_ws(s[i])) i++;
    return i;
}

/* Index just past the string whose opening quote is at s[i], or 0 when unterminated. */
static size_t string_end(const char *s, size_t len, size_t i) {
    for (i++; i < len; i += 2) {
        i = tdm_string_run_end(s, len, i);
        if (i >= len) return 0;
        if (s[i] == '"') return i + 1;
        /* a backslash: the escaped byte is skipped with it */
    }
    return 0;
}

/* The index of the first quote or bracket in s[i..len), or len: the other bytes of an object or
 * array (whitespace, numbers, punctuation) are passed in a loop of their own, out of line, as
 * Contour charges a loop's whole body on every round. */
#ifdef __wasm_simd128__
static size_t next_stop(const char *s, size_t len, size_t i);
SCAN_UNTIL(next_stop, json_stop)
#else
__attribute__((noinline)) static size_t next_stop(const char *s, size_t len, size_t i) {
    while (i < len && !(tdm_json_class[(uint8_t)s[i]] & TDM_JSON_STOP)) i++;
    return i;
}
#endif

size_t tdm_json_value_len(const char *json, size_t len) {
    if (len == 0) return 0;
    char c = json[0];
    if (c == '"') return string_end(json, len, 0);
    if (c == '{' || c == '[') {
        size_t depth = 0;
        for (size_t i = 0; i < len; i++) {
            char d = json[i];
            if (!(tdm_json_class[(uint8_t)d] & TDM_JSON_STOP)) {
                i = next_stop(json, len, i);
                if (i >= len) return 0;
                d = json[i];
            }
            if (d == '"') {
                size_t end = string_end(json, len, i);
                if (!end) return 0;
                i = end - 1;
            } else if (d == '{' || d == '[') {
                depth++;
            } else if (d == '}' || d == ']') {
                if (--depth == 0) return i + 1;
            }
        }
        return 0;
    }
    /* number, true, false, null */
    size_t i = 0;
    while (i < len && !is_ws(json[i]) && json[i] != ',' && json[i] != '}' && json[i] != ']') i++;
    return i;
}

/* The index of the value of top-level member `key` (key_len bytes) of the object in
 * [json, json+len), or (size_t)-1 when absent or not an object. The values before it are skipped. */
static size_t find_value(const char *json, size_t len, const char *key, size_t key_len) {
    size_t i = skip_ws(json, len, 0);
    if (i >= len || json[i] != '{') return (size_t)-1;
    i++;
    for (;;) {
        i = skip_ws(json, len, i);
        if (i >= len || json[i] != '"') return (size_t)-1;
        size_t key_end = string_end(json, len, i);
        if (!key_end) return (size_t)-1;
        bool match = key_end - i - 2 == key_len && memcmp(json + i + 1, key, key_len) == 0;
        i = skip_ws(json, len, key_end);
        if (i >= len || json[i] != ':') return (size_t)-1;
        i = skip_ws(json, len, i + 1);
        if (match) return i;
        size_t n = tdm_json_value_len(json + i, len - i);
        if (n == 0) return (size_t)-1;
        i = skip_ws(json, len, i + n);
        if (i >= len || json[i] != ',') return (size_t)-1;
        i++;
    }
}

bool tdm_json_get(const char *json, size_t len, const char *key, const char **value, size_t *value_len) {
    size_t i = find_value(json, len, key, tdm_strlen(key));
    if (i >= len) return false;
    size_t n = tdm_json_value_len(json + i, len - i);
    if (n == 0) return false;
    *value = json + i;
    *value_len = n;
    return true;
}

bool tdm_json_get_int(const char *json, size_t len, const char *key, int64_t *out) {
    const char *v;
    size_t n;
    if (!tdm_json_get(json, len, key, &v, &n)) return false;
    size_t i = 0;
    bool negative = n > 0 && v[0] == '-';
    if (negative) i++;
    if (i == n) return false;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t acc = 0;
    for (; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') return false;
        uint64_t digit = (uint64_t)(v[i] - '0');
        if (acc > (limit - digit) / 10) return false;
        acc = acc * 10 + digit;
    }
    *out = negative ? (int64_t)(0 - acc) : (int64_t)acc;
    return true;
}

bool tdm_json_get_bool(const char *json, size_t len, const char *key, bool *out) {
    const char *v;
    size_t n;
    if (!tdm_json_get(json, len, key, &v, &n)) return false;
    if (tdm_str_eq(v, n, "true")) *out = true;
    else if (tdm_str_eq(v, n, "false")) *out = false;
    else return false;
    return true;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int32_t hex4(const char *s, size_t n, size_t i) {
    if (i + 4 > n) return -1;
    int32_t v = 0;
    for (size_t k = 0; k < 4; k++) {
        int d = hex_digit(s[i + k]);
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t utf8(char *out, uint32_t cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

bool tdm_json_get_string(const char *json, size_t len, const char *key, char **out, size_t *out_len) {
    size_t at = find_value(json, len, key, tdm_strlen(key));
    if (at >= len || json[at] != '"') return false;
    const char *v = json + at;
    /* One pass finds the end of a string without escapes (16 bytes at a time); it is then copied
     * whole. A string with escapes is measured, then decoded run by run. */
    size_t first = tdm_string_run_end(json, len, at + 1);
    if (first >= len) return false;
    if (json[first] == '"') {
        size_t k = first - at - 1;
        char *s = tdm_alloc(k + 1);
        if (!s) return false;
        memcpy(s, v + 1, k);
        s[k] = 0;
        *out = s;
        *out_len = k;
        return true;
    }
    size_t n = tdm_json_value_len(v, len - at);
    if (n < 2) return false;
    /* The unescaped text is never longer than the escaped one. */
    char *s = tdm_alloc(n);
    if (!s) return false;
    size_t k = 0, end = n - 1; /* v[end] is the closing quote */
    for (size_t i = 1;;) {
        size_t b = 1 + backslash_at(v + 1, end - 1, i - 1);
        memcpy(s + k, v + i, b - i);
        k += b - i;
        if (b >= end) break;
        i = b + 1; /* the escape's letter */
        if (i >= end) goto bad;
        switch (v[i]) {
        case '"': s[k++] = '"'; break;
        case '\\': s[k++] = '\\'; break;
        case '/': s[k++] = '/'; break;
        case 'b': s[k++] = '\b'; break;
        case 'f': s[k++] = '\f'; break;
        case 'n': s[k++] = '\n'; break;
        case 'r': s[k++] = '\r'; break;
        case 't': s[k++] = '\t'; break;
        case 'u': {
            int32_t cp = hex4(v, n, i + 1);
            if (cp < 0) goto bad;
            i += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < n && v[i + 1] == '\\' && v[i + 2] == 'u') {
                int32_t lo = hex4(v, n, i + 3);
                if (lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    i += 6;
                }
            }
            if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd; /* a lone surrogate */
            k += utf8(s + k, (uint32_t)cp);
            break;
        }
        default: goto bad;
        }
        i++;
    }
    s[k] = 0;
    *out = s;
    *out_len = k;
    return true;
bad:
    tdm_free(s, n);
    return false;
}

