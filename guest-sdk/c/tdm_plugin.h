/* tdm_plugin.h: the TDM IPC ABI for freestanding C plugins (wasm32, no libc).
 *
 * Build a plugin from one or more .c files plus the SDK's three (sdk/c/tdm_plugin.c, tdm_json.c,
 * tdm_alloc.c) with Debian's clang and lld:
 *
 *   clang --target=wasm32 -mbulk-memory -nostdlib -ffreestanding -Os -fuse-ld=lld -I sdk/c \
 *     -Wl,--no-entry -Wl,--export=tdm_alloc -Wl,--export=tdm_free \
 *     -Wl,--export=tdm_plugin_execute_intent -Wl,--strip-all \
 *     -o dist/plugin.wasm plugin.c sdk/c/tdm_plugin.c sdk/c/tdm_json.c sdk/c/tdm_alloc.c
 *
 * (`memory` is exported by wasm-ld by default. -mbulk-memory makes memcpy and memset single
 * memory.copy / memory.fill instructions, which Contour meters at one fuel per 64 bytes.)
 *
 * The SDK exports the three ABI functions (docs/ABI.md section 1). The plugin author writes one
 * function, `tdm_handle`, which gets the request's `method` and the raw JSON text of its `params`
 * and returns a framed outcome built with the helpers below:
 *
 *   tdm_response tdm_handle(const char *method, size_t method_len, const char *params, size_t params_len) {
 *       if (tdm_str_eq(method, method_len, "ping")) {
 *           tdm_json *w = tdm_output_begin();
 *           tdm_json_object_begin(w);
 *           tdm_json_key(w, "pong");
 *           tdm_json_bool(w, true);
 *           tdm_json_object_end(w);
 *           return tdm_output_end(w);
 *       }
 *       return tdm_failed("Unknown intent.", "unknown_intent", "Call `ping`.", false);
 *   }
 *
 * Memory: tdm_alloc/tdm_free are a first-fit free-list allocator (with coalescing) over the
 * module's heap (from __heap_base up, grown with memory.grow). The host frees the request and the
 * response after every intent, so a plugin that frees what it allocates runs in constant memory.
 * Everything is single-threaded; the JSON writer returned by tdm_output_begin is one global.
 *
 * The SDK does not police the ABI: the host (contour-core) checks framing, UTF-8, JSON and the
 * outcome shape of every response, whatever the plugin returns.
 */
#ifndef TDM_PLUGIN_H
#define TDM_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The ABI exports (implemented in tdm_plugin.c and tdm_alloc.c) ------------------------- */

/* Returns `size` writable bytes, or 0 when memory cannot grow. */
void *tdm_alloc(size_t size);
/* Releases a block from tdm_alloc. The size is not needed (a header keeps it); pointers that do
 * not come from tdm_alloc (NULL, static data) are ignored. */
void tdm_free(void *ptr, size_t size);
/* Resizes a block (copying); returns 0 and keeps `ptr` when memory cannot grow. */
void *tdm_realloc(void *ptr, size_t new_size);

/* ---- What the author writes --------------------------------------------------------------- */

/* A framed response: a pointer to [u32 little-endian length][length bytes of JSON]. */
typedef struct tdm_response {
    uint8_t *frame;
} tdm_response;

/* Called once per intent. `method` and `params` point into the request (not NUL-terminated) and
 * are valid until the function returns. `params` is the raw JSON text of the request's `params`
 * (`null` when absent). */
tdm_response tdm_handle(const char *method, size_t method_len, const char *params, size_t params_len);

/* ---- Declaring the intents (docs/ABI.md section 1a) ----------------------------------------- */

/* TDM_INTENTS("[{\"name\":\"get\",\"description\":\"Answers the count.\"}]") writes that JSON
 * into the module's custom section `tdm.intents`, which `tdm inspect` and the `tdm repl`
 * (`:intents`, Tab completion) show. An entry may also carry a `title` and the JSON Schemas
 * (2020-12) of its `params` and `result` (examples/c/hello/hello.c), which `tdm mcp` lists as a
 * tool's inputSchema and outputSchema. Use it once per plugin, at file scope, with ONE string
 * literal (no adjacent literals: the literal is handed to the assembler as written, whose
 * `.ascii` reads the same escapes as C). It is emitted with file-scope assembly because clang
 * 14 turns a section attribute into a data segment, not a custom section; wasm-ld keeps it,
 * --strip-all included. A package's plugin.toml `[[intents]]` is what an operator approves;
 * keep the two in step. */
#define TDM_INTENTS(json_literal)                                                                   \
    __asm__(".section .custom_section.tdm.intents,\"\",@\n.ascii " #json_literal "\n.text\n")

/* ---- A minimal JSON writer ------------------------------------------------------------------- */

#define TDM_JSON_MAX_DEPTH 32

typedef struct tdm_json {
    uint8_t *buf; /* starts with 4 bytes reserved for the frame's length */
    size_t len;   /* bytes used, the 4 reserved included */
    size_t cap;
    bool oom;       /* an allocation failed; the writer ignores further writes */
    bool after_key; /* the next value follows a key: no comma */
    uint32_t depth;
    uint32_t nonempty; /* bit d set: the container at depth d has a member already */
} tdm_json;

/* A writer of its own (heap-allocated buffer; 0 capacity until the first write). */
void tdm_json_init(tdm_json *w);
/* Frees the writer's buffer. */
void tdm_json_release(tdm_json *w);
void tdm_json_object_begin(tdm_json *w);
void tdm_json_object_end(tdm_json *w);
void tdm_json_array_begin(tdm_json *w);
void tdm_json_array_end(tdm_json *w);
/* An object key (a NUL-terminated string, escaped); the next call writes its value. */
void tdm_json_key(tdm_json *w, const char *key);
void tdm_json_key_n(tdm_json *w, const char *key, size_t len);
/* A string value, escaped (quotes, backslash, control characters). */
void tdm_json_string(tdm_json *w, const char *s);
void tdm_json_string_n(tdm_json *w, const char *s, size_t len);
/* A string value written in pieces: begin, any number of parts (each escaped), end. */
void tdm_json_string_begin(tdm_json *w);
void tdm_json_string_part(tdm_json *w, const char *s, size_t len);
void tdm_json_string_end(tdm_json *w);
void tdm_json_int(tdm_json *w, int64_t value);
void tdm_json_bool(tdm_json *w, bool value);
void tdm_json_null(tdm_json *w);
/* Raw JSON text, copied as is (e.g. params passed through). The caller vouches it is JSON. */
void tdm_json_raw(tdm_json *w, const char *json, size_t len);
/* Raw bytes with no comma handling at all (for building frames by hand). */
void tdm_json_bytes(tdm_json *w, const void *bytes, size_t len);

/* ---- Outcomes ------------------------------------------------------------------------------- */

/* Starts a completed outcome: returns the global writer with `{"status":"completed","output":`
 * written; write exactly one value (the output), then call tdm_output_end. */
tdm_json *tdm_output_begin(void);
/* Closes the outcome and frames it. */
tdm_response tdm_output_end(tdm_json *w);
/* A completed outcome whose output is the raw JSON text given. */
tdm_response tdm_completed_raw(const char *output_json, size_t len);
/* A failed outcome: {"status":"failed","message":..,"blockedReason":..,"recoveryHint":..,
 * "output":{"retryable":..}}. The strings are NUL-terminated and escaped by the writer. */
tdm_response tdm_failed(const char *message, const char *blocked_reason, const char *recovery_hint, bool retryable);
/* Frames any bytes as a response, unchecked (the host will judge them). */
tdm_response tdm_response_bytes(const void *bytes, size_t len);

/* ---- A minimal JSON reader (scanner over raw text) ------------------------------------------ */

/* Finds `key` among the top-level members of the JSON object in [json, json+len) and sets
 * *value / *value_len to its raw value text. Returns false when absent or not an object. */
bool tdm_json_get(const char *json, size_t len, const char *key, const char **value, size_t *value_len);
/* The value of `key` as an integer (a JSON number without fraction or exponent, within int64). */
bool tdm_json_get_int(const char *json, size_t len, const char *key, int64_t *out);
/* The value of `key` as a boolean. */
bool tdm_json_get_bool(const char *json, size_t len, const char *key, bool *out);
/* The value of `key` as a string, unescaped into a new NUL-terminated block from tdm_alloc
 * (free it with tdm_free). \uXXXX escapes (surrogate pairs too) become UTF-8. */
bool tdm_json_get_string(const char *json, size_t len, const char *key, char **out, size_t *out_len);
/* Length of the JSON value starting at json[0] (no leading whitespace), or 0 when the text does
 * not hold a complete value. A scanner, not a validator: the host sends well-formed JSON. */
size_t tdm_json_value_len(const char *json, size_t len);

/* ---- Small helpers (no libc) ---------------------------------------------------------------- */

/* tdm_alloc.c defines these (the compiler emits calls to them too). */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

size_t tdm_strlen(const char *s);
/* `s` (len bytes) equals the NUL-terminated `lit`. */
bool tdm_str_eq(const char *s, size_t len, const char *lit);

/* ---- Fuel marks (measurement builds only) --------------------------------------------------- */

/* Built with -DTDM_FUEL_MARKS, the SDK imports `contour_profile.mark(i32)` and calls it between
 * the stages of an intent, so benches' `sdk_fuel` harness (`make sdk-fuel`, bare wasmi with
 * Contour's fuel costs) can split one intent's fuel into envelope, params, handler, response and
 * allocator. Such a module does not load in Contour (the import is not on the allowlist); without
 * the define TDM_FUEL_MARK compiles to nothing. A plugin marks the end of its own params and
 * handler stages (see examples/c/hello). */
#define TDM_MARK_ENVELOPE 1
#define TDM_MARK_PARAMS 2
#define TDM_MARK_HANDLER 3
#define TDM_MARK_ALLOC_ENTER 100
#define TDM_MARK_ALLOC_EXIT 101
#ifdef TDM_FUEL_MARKS
__attribute__((import_module("contour_profile"), import_name("mark"))) void tdm_fuel_mark(int32_t stage);
#define TDM_FUEL_MARK(stage) tdm_fuel_mark(stage)
#else
#define TDM_FUEL_MARK(stage) ((void)0)
#endif

/* ---- Host intents (imports from module "tdm") ------------------------------------------------ */

__attribute__((import_module("tdm"), import_name("tdm_host_call"))) int32_t tdm_host_call(const void *ptr, int32_t len);
__attribute__((import_module("tdm"), import_name("tdm_host_response"))) int32_t tdm_host_response(void *ptr, int32_t cap);

/* Calls host method `method` with `params_json` (raw JSON text). On success *outcome is a new
 * NUL-terminated block (tdm_alloc) holding the host's JSON outcome, completed or failed (free it
 * with tdm_free) and the result is its length; a negative result is the host's code (docs/ABI.md
 * section 4a) or -100 when memory ran out. */
int32_t tdm_host_request(const char *method, const char *params_json, size_t params_len, char **outcome);
/* `log {level, message}`. Returns the tdm_host_request result (the outcome is freed). */
int32_t tdm_log(const char *level, const char *message);
/* `dist.read {path}`: the host's outcome as with tdm_host_request. */
int32_t tdm_dist_read(const char *path, char **outcome);
/* `vault.read {name}`. */
int32_t tdm_vault_read(const char *name, char **outcome);
/* `context.read {key}`. */
int32_t tdm_context_read(const char *key, char **outcome);
/* `net.fetch {url, method, headers, body}`; headers_json is a raw JSON object (or NULL for {}),
 * body may be NULL. */
int32_t tdm_net_fetch(const char *url, const char *method, const char *headers_json, const char *body, char **outcome);
/* `tool.invoke {tool, intent, params}`; params_json raw (NULL for {}). */
int32_t tdm_tool_invoke(const char *tool, const char *intent, const char *params_json, char **outcome);
/* Whether a host outcome text is {"status":"completed",...}; *output gets its raw `output`. */
bool tdm_outcome_completed(const char *outcome, size_t len, const char **output, size_t *output_len);

#ifdef __cplusplus
}
#endif

#endif /* TDM_PLUGIN_H */
