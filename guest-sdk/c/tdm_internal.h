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
 * round, and 128 in long runs (tdm_json.c): each word is tested for the bytes that matter with a
 * few arithmetic instructions. */

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

static inline uint64_t load64(const char *p) {
    uint64_t word;
    __builtin_memcpy(&word, p, 8);
    return word;
}

/* `word ^ byte` less one in every byte: the high bit of each byte of `word` equal to `byte` is set,
 * perhaps of bytes above one (a borrow runs upwards, never downwards), and of bytes at or above 0x80,
 * which each test below masks off (`byte` is ASCII, so the xor keeps each byte's high bit). So the
 * lowest set bit of a test marks the first byte it looks for, and a word without one sets none. */
static inline uint64_t borrows(uint64_t word, uint8_t byte) {
    return (word ^ (ONES * byte)) - ONES;
}

/* `"`, `\` or a control byte: with bit 1 flipped, the controls stay below 0x20 and `"` is 0x20, so
 * one subtraction finds both (Contour charges one fuel per instruction). */
static inline uint64_t specials(uint64_t word) {
    uint64_t low = (word ^ (ONES * 0x02)) - ONES * 0x21;
    return (low | borrows(word, '\\')) & ~word & HIGHS;
}

/* `\`: the only byte that needs decoding inside a string whose ends are known. */
static inline uint64_t is_backslash_word(uint64_t word) {
    return borrows(word, '\\') & ~word & HIGHS;
}

/* `"` or `\`: what ends a run of a string's bytes when skipping it. */
static inline uint64_t quote_or_backslash(uint64_t word) {
    return (borrows(word, '"') | borrows(word, '\\')) & ~word & HIGHS;
}

#ifdef __wasm_simd128__
/* ---- The same tests on 16 bytes at once (modules built with -msimd128) --------------------------
 *
 * Each answers all ones in the lanes of `x` that the word test of the same name (without `_v`)
 * marks; the scanners in tdm_json.c turn them into a bitmask and count its trailing zeros. */
#include <wasm_simd128.h>

/* `"`, `\` or a control byte: `^ 0x02` maps the controls onto themselves and `"` onto 0x20, so one
 * unsigned `< 0x21` finds both (fewer instructions, and Contour charges one fuel per instruction). */
static inline v128_t specials_v(v128_t x) {
    return wasm_u8x16_lt(x ^ wasm_i8x16_splat(0x02), wasm_i8x16_splat(0x21)) | wasm_i8x16_eq(x, wasm_i8x16_splat('\\'));
}

/* `\`. */
static inline v128_t is_backslash_word_v(v128_t x) {
    return wasm_i8x16_eq(x, wasm_i8x16_splat('\\'));
}

/* `"` or `\`. */
static inline v128_t quote_or_backslash_v(v128_t x) {
    return wasm_i8x16_eq(x, wasm_i8x16_splat('"')) | wasm_i8x16_eq(x, wasm_i8x16_splat('\\'));
}

/* ---- The word tests on 16 bytes at once, for the long rounds ----------------------------------
 *
 * Each `_w` sets the high bit of each byte the test of the same name marks, and perhaps of bytes
 * above a marked one in the same 64-bit half (a borrow runs upwards), never in a half with no
 * marked byte; the round masks the high bits and asks whether any is set. The same arithmetic as
 * the word tests above, two words a vector: interpreters run a byte-lane compare (`i8x16.eq`)
 * lane by lane, several times a 64-bit operation's time, so the long rounds use these. */

/* The 64-bit halves of `x ^ byte` less one: the high bit of each byte of `x` equal to `byte` is
 * set, perhaps of bytes above one in its half, and perhaps of bytes at or above 0x80, which each
 * test below masks off (`byte` is ASCII, so the xor keeps each byte's high bit). */
static inline v128_t borrows_w(v128_t x, uint8_t byte) {
    return wasm_i64x2_sub(x ^ wasm_i8x16_splat((int8_t)byte), wasm_i8x16_splat(1));
}

/* `"`, `\` or a control byte: with bit 1 flipped, the controls stay below 0x20 and `"` is 0x20. */
static inline v128_t specials_w(v128_t x) {
    v128_t low = wasm_i64x2_sub(x ^ wasm_i8x16_splat(0x02), wasm_i8x16_splat(0x21));
    return wasm_v128_andnot(low | borrows_w(x, '\\'), x);
}

/* `\`. */
static inline v128_t is_backslash_word_w(v128_t x) {
    return wasm_v128_andnot(borrows_w(x, '\\'), x);
}

/* `"` or `\`. */
static inline v128_t quote_or_backslash_w(v128_t x) {
    return wasm_v128_andnot(borrows_w(x, '"') | borrows_w(x, '\\'), x);
}

/* A quote or a bracket: `| 0x20` maps `[` onto `{` and `]` onto `}` (and keeps the high bit). */
static inline v128_t json_stop_w(v128_t x) {
    v128_t folded = x | wasm_i8x16_splat(0x20);
    return wasm_v128_andnot(borrows_w(x, '"') | borrows_w(folded, '{') | borrows_w(folded, '}'), x);
}

/* A quote or a bracket (TDM_JSON_STOP): `| 0x20` maps `[` onto `{` and `]` onto `}`. */
static inline v128_t json_stop_v(v128_t x) {
    v128_t folded = x | wasm_i8x16_splat(0x20);
    return wasm_i8x16_eq(x, wasm_i8x16_splat('"')) | wasm_i8x16_eq(folded, wasm_i8x16_splat('{')) |
           wasm_i8x16_eq(folded, wasm_i8x16_splat('}'));
}
#endif

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
