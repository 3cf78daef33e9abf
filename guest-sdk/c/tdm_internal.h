/* tdm_internal.h: what the C SDK's own files share and a plugin never calls: the word-at-a-time
 * byte tests, the byte classes and the string scanner the entry point reads the envelope with, and
 * the static out-of-memory answer. */
#ifndef TDM_INTERNAL_H
#define TDM_INTERNAL_H

#include "tdm_plugin.h"

/* ---- Word-at-a-time scanning ---------------------------------------------------------------------
 *
 * Contour interprets the module and charges about one fuel per instruction, so the loops that run
 * once per byte of a string (finding its end, finding what needs escaping) look at 16 bytes a
 * round: each word is tested for the bytes that matter with a few arithmetic instructions. */

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

static inline uint64_t load64(const char *p) {
    uint64_t word;
    __builtin_memcpy(&word, p, 8);
    return word;
}

/* The high bit of each byte of `word` equal to `byte`, and possibly of later bytes: the lowest set
 * bit marks the first such byte. */
static inline uint64_t bytes_equal(uint64_t word, uint8_t byte) {
    uint64_t x = word ^ (ONES * byte);
    return (x - ONES) & ~x & HIGHS;
}

/* `"`, `\` or a control byte. */
static inline uint64_t specials(uint64_t word) {
    return bytes_equal(word, '"') | bytes_equal(word, '\\') | ((word - ONES * 0x20) & ~word & HIGHS);
}

/* `\`: the only byte that needs decoding inside a string whose ends are known. */
static inline uint64_t is_backslash_word(uint64_t word) {
    return bytes_equal(word, '\\');
}

/* `"` or `\`: what ends a run of a string's bytes when skipping it. */
static inline uint64_t quote_or_backslash(uint64_t word) {
    return bytes_equal(word, '"') | bytes_equal(word, '\\');
}

/* The classes of each byte that the scanners test with one load (defined in tdm_json.c):
 * TDM_JSON_SPACE for JSON whitespace, TDM_JSON_STOP for what tdm_json_value_len looks at inside
 * an object or array (a quote or a bracket). */
#define TDM_JSON_SPACE 1
#define TDM_JSON_STOP 2
extern const uint8_t tdm_json_class[256];

/* The index of the first `"` or backslash in s[i..len), or len (defined in tdm_json.c). */
size_t tdm_string_run_end(const char *s, size_t len, size_t i);

/* The outcome the SDK answers when it ran out of memory itself: a static frame, which tdm_free
 * ignores (defined in tdm_json.c). */
tdm_response tdm_oom_response(void);

#endif
