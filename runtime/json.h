/* json.h: the JSON primitives the generated decoder, validators and
 * scanners are built from.
 *
 * Contract. Every function reads bytes in [p, end) only and never past end:
 * the input is a view into a larger buffer, so the byte at end may be
 * anything (or unmapped). Parsing functions take the position and return the
 * new position just after what they consumed, or NULL on failure, having
 * recorded the error (code and offset from ctx->base) in ctx->err; the first
 * error wins. Nothing here calls malloc: strings with escapes are unescaped
 * into ctx->arena, strings without escapes are returned as views of the input.
 *
 * Validation is RFC 8259 exactly: UTF-8 (no overlongs, no encoded surrogates,
 * nothing above U+10FFFF), no raw control characters in strings, only the
 * JSON escapes, \u surrogates only in valid pairs, the number grammar (no
 * leading zeros, no '+', no NaN/Infinity). Nesting is bounded by
 * ctx->max_depth (JS_MAX_DEPTH by default), and skipping is iterative: no
 * recursion on the input's nesting.
 */
#ifndef TR_JSON_H
#define TR_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "error.h"

/* The nesting limit, stated: arrays and objects deeper than
 * this are rejected with TR_E_DEPTH. The message's top-level object is depth 1. */
#define JS_MAX_DEPTH 256

/* An f64 whose token is longer than this (one that needs strtod) is
 * rejected with TR_E_TOO_LONG; integer fields stop at their range first
 * (TR_E_RANGE), and numbers that are only validated or skipped (js_skip,
 * js_validate) are bounded by the frame alone. */
#define JS_MAX_NUMBER_LEN 1024

typedef struct {
    const char *p;
    size_t n;
} js_str;

typedef struct {
    const uint8_t *base; /* offsets in errors are counted from here */
    ar_arena *arena;     /* where escaped strings are unescaped; may be NULL
                            for functions that do not produce strings */
    int depth;           /* current nesting depth (objects and arrays open) */
    int max_depth;
    tr_error err;
} js_ctx;

static inline void js_ctx_init(js_ctx *c, const uint8_t *base, ar_arena *arena)
{
    c->base = base;
    c->arena = arena;
    c->depth = 0;
    c->max_depth = JS_MAX_DEPTH;
    c->err.code = TR_E_OK;
    c->err.offset = 0;
    c->err.what = NULL;
}

/* Records code at position at (first error wins) and returns NULL, so a
 * parser can write `return js_fail(c, p, TR_E_SYNTAX);`. */
const uint8_t *js_fail(js_ctx *c, const uint8_t *at, tr_code code);

/* Selects the widest string-scanning code the CPU has (AVX-512BW, AVX2,
 * SSE2, portable); called once before any parsing, idempotent and cheap.
 * JS_SIMD=portable|sse2|avx2|avx512 in the environment forces a narrower
 * choice (tests run every path this way). Returns the name chosen. */
const char *js_init(void);
const char *js_simd_name(void);

/* Forces one implementation by name ("portable", "sse2", "avx2", "avx512"),
 * to compare them; returns its name, or NULL (and changes nothing)
 * when the name is unknown or the CPU lacks it. */
const char *js_force_simd(const char *name);

/* Skips JSON whitespace (space, tab, LF, CR). Never fails. */
static inline const uint8_t *js_ws(const uint8_t *p, const uint8_t *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* Whether a value read up to q (one past its last byte) ends where a JSON
 * value can: after whitespace, at the end of the bytes or before ',', '}'
 * or ']'. The optic scanners, which do not validate, take a value only when
 * it does, so that `12a` or `12 3` is not read as 12, nor `"Sev1"x` as Sev1,
 * nor `{...}x` as an object. */
static inline bool js_value_ends(const uint8_t *q, const uint8_t *end)
{
    q = js_ws(q, end);
    return q >= end || *q == ',' || *q == '}' || *q == ']';
}

/* p is at a '"'. Reads one string, validating it, and sets *out to its
 * decoded bytes: a view of the input when it holds no escape, otherwise a
 * copy unescaped into ctx->arena. */
const uint8_t *js_string(js_ctx *c, const uint8_t *p, const uint8_t *end, js_str *out);

/* p is at a '"'. Validates one string without producing it; *escaped tells
 * whether it held a backslash. Used to skip, and for keys on the fast path:
 * the raw bytes between the quotes are [p+1, ret-1). */
const uint8_t *js_string_raw(js_ctx *c, const uint8_t *p, const uint8_t *end, bool *escaped);

/* Whether a string's byte b must be written escaped in JSON: a quote, a
 * backslash, a control byte (the others may stand as they are). */
static inline bool js_escaped_byte(uint8_t b) { return b == '"' || b == '\\' || b < 0x20; }

/* The common case inline: a string of at most 31 bytes with nothing to
 * escape or validate (ASCII, no backslash, no control byte), found with one
 * or two 16-byte compares; anything else goes to js_string / js_string_raw. */
#if defined(__SSE2__)
#include <emmintrin.h>
static inline int js_short_plain_(const uint8_t *p, const uint8_t *end)
{
    if (end - p < 17)
        return -1;
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 1));
    /* a signed compare with 0x20 catches bytes < 0x20 and bytes >= 0x80 */
    __m128i special = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                   _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    unsigned mask = (unsigned)_mm_movemask_epi8(special);
    if (mask == 0) {
        /* 16 plain bytes: try the next 16 */
        if (end - p < 33)
            return -1;
        v = _mm_loadu_si128((const __m128i *)(const void *)(p + 17));
        special = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                               _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                            _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
        mask = (unsigned)_mm_movemask_epi8(special);
        if (mask == 0)
            return -1;
        int at = 16 + __builtin_ctz(mask);
        return p[1 + at] == '"' ? at : -1;
    }
    int at = __builtin_ctz(mask);
    return p[1 + at] == '"' ? at : -1;
}
#else
static inline int js_short_plain_(const uint8_t *p, const uint8_t *end)
{
    (void)p;
    (void)end;
    return -1;
}
#endif

static inline const uint8_t *js_string_fast(js_ctx *c, const uint8_t *p, const uint8_t *end,
                                            js_str *out)
{
    int n = p < end && *p == '"' ? js_short_plain_(p, end) : -1;
    if (n < 0)
        return js_string(c, p, end, out);
    out->p = (const char *)(p + 1);
    out->n = (size_t)n;
    return p + n + 2;
}

static inline const uint8_t *js_string_raw_fast(js_ctx *c, const uint8_t *p, const uint8_t *end,
                                                bool *escaped)
{
    int n = p < end && *p == '"' ? js_short_plain_(p, end) : -1;
    if (n < 0)
        return js_string_raw(c, p, end, escaped);
    *escaped = false;
    return p + n + 2;
}

/* Numbers. p is at the first byte of the value. Integers reject fractions and
 * exponents (TR_E_NOT_INTEGER) and values past the type's range (TR_E_RANGE);
 * "-0" is 0. js_f64 rejects values that overflow to infinity (TR_E_RANGE)
 * and returns the correctly rounded double. A value of another JSON type
 * (string, object, ...) is TR_E_TYPE; null is TR_E_NULL_REQUIRED. */
const uint8_t *js_i64(js_ctx *c, const uint8_t *p, const uint8_t *end, int64_t *out);
const uint8_t *js_i32(js_ctx *c, const uint8_t *p, const uint8_t *end, int32_t *out);
const uint8_t *js_f64(js_ctx *c, const uint8_t *p, const uint8_t *end, double *out);
const uint8_t *js_bool(js_ctx *c, const uint8_t *p, const uint8_t *end, bool *out);

/* Validates a number token (RFC 8259 grammar) without converting it. */
const uint8_t *js_number_raw(js_ctx *c, const uint8_t *p, const uint8_t *end);

/* true when [p, end) starts with the literal null (and consumes it). */
static inline bool js_is_null(const uint8_t *p, const uint8_t *end)
{
    return end - p >= 4 && p[0] == 'n' && p[1] == 'u' && p[2] == 'l' && p[3] == 'l';
}

/* Skips one whole JSON value of any type starting at p (whitespace already
 * skipped), validating everything in it; depth counts from ctx->depth. */
const uint8_t *js_skip(js_ctx *c, const uint8_t *p, const uint8_t *end);

/* Validates that [p, end) is exactly one JSON text: optional whitespace,
 * one value, optional whitespace. A leading byte-order mark is TR_E_BOM,
 * anything after the value TR_E_TRAILING. */
const uint8_t *js_validate(js_ctx *c, const uint8_t *p, const uint8_t *end);

/* The two ends of one whole JSON text [p, end), as every reader of a whole
 * message takes it: js_text_begin is the value's first byte (leading
 * whitespace skipped), or NULL with TR_E_BOM for a byte-order mark;
 * js_text_end, given the end of the value (NULL: it failed), is end, or
 * NULL with TR_E_TRAILING when anything but whitespace follows. */
static inline const uint8_t *js_text_begin(js_ctx *c, const uint8_t *p, const uint8_t *end)
{
    if (end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF)
        return js_fail(c, p, TR_E_BOM);
    return js_ws(p, end);
}

static inline const uint8_t *js_text_end(js_ctx *c, const uint8_t *q, const uint8_t *end)
{
    if (q == NULL)
        return NULL;
    q = js_ws(q, end);
    return q == end ? q : js_fail(c, q, TR_E_TRAILING);
}

/* Unescapes the raw bytes of a string (between its quotes, already
 * validated by js_string_raw) into dst, which has room for n bytes (the
 * decoded form is never longer than the raw one). Returns the decoded length. */
size_t js_unescape(const uint8_t *raw, size_t n, uint8_t *dst);

/* js_unescape into dst of cap bytes: the decoded length, or SIZE_MAX when
 * it would be more than cap (dst then holds a part of it). */
size_t js_unescape_max(const uint8_t *raw, size_t n, uint8_t *dst, size_t cap);

/* Whether the raw bytes of a string (validated, as for js_unescape) unescape
 * to exactly want[0, wn): compared as they are decoded, with no buffer, so
 * that a key of any length, written with any escapes, can be recognised. */
bool js_unescaped_is(const uint8_t *raw, size_t n, const char *want, size_t wn);

/* Writing (the encoder's side). Each returns the new write position or NULL
 * when [w, wend) has no room; they never write past wend. Strings escape '"',
 * '\\' and control characters; f64 is written in the shortest form that reads
 * back to the same double (finite values only, the caller's contract). */
uint8_t *js_put_string(uint8_t *w, uint8_t *wend, const char *s, size_t n);
uint8_t *js_put_i64(uint8_t *w, uint8_t *wend, int64_t v);
uint8_t *js_put_f64(uint8_t *w, uint8_t *wend, double v);

/* JSON text s (n bytes, not validated) written on one line: without the
 * whitespace between its tokens, its strings' bytes as they are but a
 * control byte (which valid JSON never holds raw) written as \u00XX, as is
 * one outside the strings. At most 6n bytes, never a tab or a line break. */
uint8_t *js_put_compact(uint8_t *w, uint8_t *wend, const uint8_t *s, size_t n);

static inline uint8_t *js_put_raw(uint8_t *w, uint8_t *wend, const char *s, size_t n)
{
    if (w == NULL || (size_t)(wend - w) < n)
        return NULL;
    for (size_t i = 0; i < n; i++)
        w[i] = (uint8_t)s[i];
    return w + n;
}

/* The SIMD core, exposed for the scanners: returns the first position in
 * [p, end) holding '"', '\\', a byte < 0x20 or a byte >= 0x80, or end. */
const uint8_t *js_find_string_special(const uint8_t *p, const uint8_t *end);

/* Returns the first position in [p, end) holding '"', '\\', '[', ']', '{'
 * or '}', or end: what a skipper over nested values needs to look at. */
const uint8_t *js_find_structural(const uint8_t *p, const uint8_t *end);

#endif
