/* json.c: strings, numbers, literals, skipping and validation, and the
 * writers. The contract is in json.h; the byte finders are in json_simd.c.
 *
 * End of input: every read is guarded by a comparison with end, and the
 * vector code reads only [p, end) (see json_simd.c). Tests run every prefix
 * of their inputs placed right before an unmapped page.
 *
 * Error offsets: a grammar error (bad escape, bad byte, bad UTF-8, a missing
 * digit, an unexpected character) is reported at the offending byte; a
 * running-out is TR_E_EOF at end; an error about a whole value (TR_E_TYPE,
 * TR_E_NULL_REQUIRED, TR_E_NOT_INTEGER, TR_E_RANGE, TR_E_TOO_LONG,
 * TR_E_ARENA) at the value's first byte.
 */
#include "json.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The deepest nesting one js_skip call can track (a bit per level, 512
 * bytes of stack). ctx->max_depth is at most 1024 in this project; a larger
 * limit is capped here, still failing with TR_E_DEPTH, never overflowing. */
#define SKIP_STACK_LEVELS 4096

__attribute__((cold)) const uint8_t *js_fail(js_ctx *c, const uint8_t *at, tr_code code)
{
    tr_error_set(&c->err, code, (size_t)(at - c->base));
    return NULL;
}

static inline bool is_digit(uint8_t b) { return (unsigned)(b - '0') <= 9u; }

/* The first byte at or after p that is not a digit (or end), eight bytes at
 * a time: a byte b is a digit when t = b ^ '0' is at most 9, so neither t
 * nor t + 0x76 has its top bit set. A carry out of a byte only reaches
 * bytes after the first non-digit, which ctz does not look at. */
static inline const uint8_t *skip_digits(const uint8_t *p, const uint8_t *end)
{
    while (end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t t = x ^ 0x3030303030303030ull;
        uint64_t nd = ((t + 0x7676767676767676ull) | t) & 0x8080808080808080ull;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (nd != 0)
            return p + (__builtin_ctzll(nd) >> 3);
#else
        if (nd != 0)
            break; /* the bytewise loop finds which */
#endif
        p += 8;
    }
    while (p < end && is_digit(*p))
        p++;
    return p;
}

/* ---- a "C" locale for strtod and printf, whatever the process set ---- */

#if defined(__GLIBC__) && defined(_GNU_SOURCE)
static _Atomic(locale_t) g_c_locale;

static locale_t c_locale(void)
{
    locale_t l = atomic_load_explicit(&g_c_locale, memory_order_acquire);
    if (l != (locale_t)0)
        return l;
    locale_t made = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (made == (locale_t)0)
        return (locale_t)0;
    locale_t expected = (locale_t)0;
    if (!atomic_compare_exchange_strong(&g_c_locale, &expected, made)) {
        freelocale(made); /* another thread won */
        return expected;
    }
    return made;
}

static double strtod_c(const char *s)
{
    locale_t l = c_locale();
    return l != (locale_t)0 ? strtod_l(s, NULL, l) : strtod(s, NULL);
}
#else
static double strtod_c(const char *s) { return strtod(s, NULL); }
#endif

/* ---- what a value that is not the expected type is ---- */

/* p is where a value of another type was expected. A value of a different
 * JSON type is TR_E_TYPE, null TR_E_NULL_REQUIRED, running out TR_E_EOF,
 * anything else (not the start of any value) other_code. */
__attribute__((cold, noinline)) static const uint8_t *
wrong_value(js_ctx *c, const uint8_t *p, const uint8_t *end, tr_code other_code)
{
    if (p >= end)
        return js_fail(c, end, TR_E_EOF);
    switch (*p) {
    case '"': case '{': case '[': case 't': case 'f': case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return js_fail(c, p, TR_E_TYPE);
    case 'n':
        if (js_is_null(p, end))
            return js_fail(c, p, TR_E_NULL_REQUIRED);
        break;
    default:
        break;
    }
    return js_fail(c, p, other_code);
}

/* ---- strings ---- */

/* Reads 4 hex digits at h: 0 ok, 1 a non-hex byte, 2 the input ends. */
static inline int hex4(const uint8_t *h, const uint8_t *end, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        if (h + i >= end)
            return 2;
        uint8_t b = h[i];
        uint32_t d;
        if (is_digit(b))
            d = (uint32_t)(b - '0');
        else if ((uint8_t)((b | 0x20) - 'a') < 6)
            d = (uint32_t)((b | 0x20) - 'a' + 10);
        else
            return 1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

/* q is at a backslash: validates one escape (a \u high surrogate together
 * with the \u low surrogate it needs) and returns the position after it. */
static const uint8_t *check_escape(js_ctx *c, const uint8_t *q, const uint8_t *end)
{
    if (end - q < 2)
        return js_fail(c, end, TR_E_EOF);
    switch (q[1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        return q + 2;
    case 'u':
        break;
    default:
        return js_fail(c, q, TR_E_ESCAPE);
    }
    uint32_t u;
    int r = hex4(q + 2, end, &u);
    if (r != 0)
        return js_fail(c, r == 2 ? end : q, r == 2 ? TR_E_EOF : TR_E_ESCAPE);
    if (u < 0xD800 || u > 0xDFFF)
        return q + 6;
    if (u >= 0xDC00)
        return js_fail(c, q, TR_E_SURROGATE); /* a low surrogate first */
    /* A high surrogate: the next escape must be its low half. The error is
     * reported at the high one, the escape that is left unpaired. */
    const uint8_t *n = q + 6;
    if (n >= end)
        return js_fail(c, end, TR_E_EOF);
    if (n[0] != '\\')
        return js_fail(c, q, TR_E_SURROGATE);
    if (n + 1 >= end)
        return js_fail(c, end, TR_E_EOF);
    if (n[1] != 'u')
        return js_fail(c, q, TR_E_SURROGATE);
    r = hex4(n + 2, end, &u);
    if (r != 0)
        return js_fail(c, r == 2 ? end : n, r == 2 ? TR_E_EOF : TR_E_ESCAPE);
    if (u < 0xDC00 || u > 0xDFFF)
        return js_fail(c, q, TR_E_SURROGATE);
    return n + 6;
}

/* q is at a byte >= 0x80: validates one UTF-8 sequence (RFC 3629, Unicode
 * table 3-7: no overlongs, no surrogates, nothing above U+10FFFF) and
 * returns the position after it. A sequence cut short by end is TR_E_EOF
 * (a prefix of valid text); one cut by any other byte is TR_E_UTF8. */
static inline const uint8_t *utf8_seq(js_ctx *c, const uint8_t *q, const uint8_t *end)
{
    uint8_t b0 = q[0];
    uint8_t lo = 0x80, hi = 0xBF;
    size_t len;
    if (b0 < 0xC2) /* a continuation byte, or an overlong C0/C1 lead */
        return js_fail(c, q, TR_E_UTF8);
    if (b0 < 0xE0) {
        len = 2;
    } else if (b0 < 0xF0) {
        len = 3;
        if (b0 == 0xE0)
            lo = 0xA0; /* overlong */
        else if (b0 == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (b0 < 0xF5) {
        len = 4;
        if (b0 == 0xF0)
            lo = 0x90; /* overlong */
        else if (b0 == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else {
        return js_fail(c, q, TR_E_UTF8);
    }
    for (size_t i = 1; i < len; i++) {
        if (q + i >= end)
            return js_fail(c, end, TR_E_EOF);
        uint8_t b = q[i];
        if (b < lo || b > hi)
            return js_fail(c, q, TR_E_UTF8);
        lo = 0x80;
        hi = 0xBF;
    }
    return q + len;
}

/* q is at a byte the finder stopped on that is not the closing quote. */
static const uint8_t *string_special(js_ctx *c, const uint8_t *q, const uint8_t *end, bool *esc)
{
    if (q >= end)
        return js_fail(c, end, TR_E_EOF);
    uint8_t b = *q;
    if (b == '\\') {
        *esc = true;
        return check_escape(c, q, end);
    }
    if (b < 0x20)
        return js_fail(c, q, TR_E_CTRL);
    /* Non-ASCII text tends to come in runs: stay here while it lasts. */
    do
        q = utf8_seq(c, q, end);
    while (q != NULL && q < end && *q >= 0x80);
    return q;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The special bytes among 8 at q, as the high bit of each byte's lane. Only
 * the lowest set lane is exact (a borrow can mark lanes above it), which is
 * all the caller uses. */
static inline uint64_t swar_special(const uint8_t *q)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t x;
    memcpy(&x, q, 8);
    uint64_t quote = x ^ (ones * '"'), bslash = x ^ (ones * '\\');
    uint64_t m = (x - ones * 0x20) & ~x; /* < 0x20 */
    m |= (quote - ones) & ~quote;        /* == '"' */
    m |= (bslash - ones) & ~bslash;      /* == '\\' */
    return (m | x) & highs;              /* and >= 0x80 */
}
#endif

/* p is at a '"'. Returns the position after the closing quote. */
static inline const uint8_t *scan_string(js_ctx *c, const uint8_t *p, const uint8_t *end,
                                         bool *escaped)
{
    const uint8_t *q = p + 1;
    bool esc = false;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Most keys and enum values end within 8 bytes: look at those first in
     * a register, before paying for the call to the vector finder. */
    if (LIKELY(end - q >= 8)) {
        uint64_t m = swar_special(q);
        if (m != 0) {
            q += __builtin_ctzll(m) >> 3;
            if (LIKELY(*q == '"')) {
                *escaped = false;
                return q + 1;
            }
        } else {
            q += 8;
        }
    }
#endif
    for (;;) {
        q = js_find_string_special(q, end);
        if (LIKELY(q < end && *q == '"')) {
            *escaped = esc;
            return q + 1;
        }
        q = string_special(c, q, end, &esc);
        if (q == NULL)
            return NULL;
    }
}

const uint8_t *js_string_raw(js_ctx *c, const uint8_t *p, const uint8_t *end, bool *escaped)
{
    if (UNLIKELY(p >= end || *p != '"'))
        return wrong_value(c, p, end, TR_E_SYNTAX);
    return scan_string(c, p, end, escaped);
}

static const uint8_t *unescape_to_arena(js_ctx *c, const uint8_t *p, const uint8_t *q,
                                        js_str *out)
{
    size_t n = (size_t)(q - 1 - (p + 1));
    uint8_t *dst = c->arena != NULL ? ar_alloc(c->arena, n) : NULL;
    if (dst == NULL)
        return js_fail(c, p, TR_E_ARENA);
    size_t len = js_unescape(p + 1, n, dst);
    /* Give back what unescaping saved: nothing was allocated since. */
    c->arena->lo -= n - len;
    out->p = (const char *)dst;
    out->n = len;
    return q;
}

const uint8_t *js_string(js_ctx *c, const uint8_t *p, const uint8_t *end, js_str *out)
{
    if (UNLIKELY(p >= end || *p != '"'))
        return wrong_value(c, p, end, TR_E_SYNTAX);
    bool esc;
    const uint8_t *q = scan_string(c, p, end, &esc);
    if (UNLIKELY(q == NULL))
        return NULL;
    if (UNLIKELY(esc))
        return unescape_to_arena(c, p, q, out);
    out->p = (const char *)(p + 1);
    out->n = (size_t)(q - 1 - (p + 1));
    return q;
}

static inline uint32_t hex4_trusted(const uint8_t *h)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t b = h[i];
        v = v << 4 | (uint32_t)(is_digit(b) ? b - '0' : (b | 0x20) - 'a' + 10);
    }
    return v;
}

static inline uint8_t *put_utf8(uint8_t *d, uint32_t cp)
{
    if (cp < 0x80) {
        *d++ = (uint8_t)cp;
    } else if (cp < 0x800) {
        *d++ = (uint8_t)(0xC0 | cp >> 6);
        *d++ = (uint8_t)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *d++ = (uint8_t)(0xE0 | cp >> 12);
        *d++ = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        *d++ = (uint8_t)(0x80 | (cp & 0x3F));
    } else {
        *d++ = (uint8_t)(0xF0 | cp >> 18);
        *d++ = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
        *d++ = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        *d++ = (uint8_t)(0x80 | (cp & 0x3F));
    }
    return d;
}

/* One escape at *s (its backslash, validated), decoded into d (at most 4
 * bytes): *s moves past it; returns the end of what was written. */
static inline uint8_t *unescape_one(const uint8_t **s, uint8_t *d)
{
    uint8_t x = (*s)[1];
    *s += 2;
    switch (x) {
    case 'b': *d++ = '\b'; break;
    case 'f': *d++ = '\f'; break;
    case 'n': *d++ = '\n'; break;
    case 'r': *d++ = '\r'; break;
    case 't': *d++ = '\t'; break;
    case 'u': {
        uint32_t cp = hex4_trusted(*s);
        *s += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t low = hex4_trusted(*s + 2);
            *s += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        d = put_utf8(d, cp);
        break;
    }
    default: *d++ = x; break; /* '"', '\\', '/' */
    }
    return d;
}

/* The decoded form of raw [*s, e), a piece at a time: a run without escapes
 * (in raw) or one escape decoded into one; *s moves past it. Returns the
 * piece's length, *piece where it is. */
static inline size_t unescape_piece(const uint8_t **s, const uint8_t *e, uint8_t one[4],
                                    const uint8_t **piece)
{
    if (**s == '\\') {
        *piece = one;
        return (size_t)(unescape_one(s, one) - one);
    }
    const uint8_t *bs = memchr(*s, '\\', (size_t)(e - *s));
    const uint8_t *stop = bs != NULL ? bs : e;
    size_t run = (size_t)(stop - *s);
    *piece = *s;
    *s = stop;
    return run;
}

/* The output never runs ahead of the input (every escape is at least as
 * long as what it decodes to), so dst may even be raw itself. */
size_t js_unescape_max(const uint8_t *raw, size_t n, uint8_t *dst, size_t cap)
{
    if (n == 0)
        return 0;
    const uint8_t *s = raw, *e = raw + n, *piece;
    uint8_t one[4];
    size_t at = 0;
    while (s < e) {
        size_t k = unescape_piece(&s, e, one, &piece);
        if (k > cap - at)
            return SIZE_MAX;
        memmove(dst + at, piece, k);
        at += k;
    }
    return at;
}

size_t js_unescape(const uint8_t *raw, size_t n, uint8_t *dst)
{
    return js_unescape_max(raw, n, dst, n);
}

bool js_unescaped_is(const uint8_t *raw, size_t n, const char *want, size_t wn)
{
    const uint8_t *s = raw, *e = raw + n, *piece, *w = (const uint8_t *)want;
    uint8_t one[4];
    size_t at = 0; /* bytes of want matched */
    while (s < e) {
        size_t k = unescape_piece(&s, e, one, &piece);
        if (k > wn - at || memcmp(w + at, piece, k) != 0)
            return false;
        at += k;
    }
    return at == wn;
}

/* ---- numbers ---- */

/* p is after the integer part: validates an optional fraction and exponent
 * and returns the end of the token. */
static inline const uint8_t *number_tail(js_ctx *c, const uint8_t *p, const uint8_t *end)
{
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p))
            return js_fail(c, p, TR_E_NUMBER);
        p = skip_digits(p + 1, end);
    }
    if (p < end && (*p | 0x20) == 'e') {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || !is_digit(*p))
            return js_fail(c, p, TR_E_NUMBER);
        p = skip_digits(p + 1, end);
    }
    return p;
}

/* p is at the first byte of the integer part (after any '-'). */
static inline const uint8_t *number_int_part(js_ctx *c, const uint8_t *p, const uint8_t *end)
{
    if (p >= end || !is_digit(*p))
        return js_fail(c, p, TR_E_NUMBER);
    if (*p == '0') {
        p++;
        if (p < end && is_digit(*p))
            return js_fail(c, p, TR_E_NUMBER); /* a leading zero */
        return p;
    }
    return skip_digits(p + 1, end);
}

static inline const uint8_t *number_scan(js_ctx *c, const uint8_t *p, const uint8_t *end)
{
    if (p < end && *p == '-')
        p++;
    p = number_int_part(c, p, end);
    if (p == NULL)
        return NULL;
    return number_tail(c, p, end);
}

const uint8_t *js_number_raw(js_ctx *c, const uint8_t *p, const uint8_t *end)
{
    if (UNLIKELY(p >= end || (*p != '-' && !is_digit(*p))))
        return wrong_value(c, p, end, TR_E_NUMBER);
    return number_scan(c, p, end);
}

/* The integer parsers: the magnitude and sign, validated; NULL on error. */
static inline const uint8_t *read_int(js_ctx *c, const uint8_t *p, const uint8_t *end,
                                      uint64_t *mag, bool *neg)
{
    const uint8_t *s = p;
    *neg = false;
    if (p < end && *p == '-') {
        *neg = true;
        p++;
    } else if (UNLIKELY(p >= end || !is_digit(*p))) {
        return wrong_value(c, p, end, TR_E_NUMBER);
    }
    const uint8_t *d0 = p;
    p = number_int_part(c, p, end);
    if (UNLIKELY(p == NULL))
        return NULL;
    const uint8_t *d1 = p;
    if (UNLIKELY(p < end && (*p == '.' || (*p | 0x20) == 'e'))) {
        if (number_tail(c, p, end) == NULL)
            return NULL;
        return js_fail(c, s, TR_E_NOT_INTEGER);
    }
    /* 19 digits always fit in 64 bits; 20 or more never fit in 63. */
    if (UNLIKELY(d1 - d0 > 19))
        return js_fail(c, s, TR_E_RANGE);
    uint64_t v = 0;
    for (const uint8_t *q = d0; q < d1; q++)
        v = v * 10 + (uint64_t)(*q - '0');
    *mag = v;
    return p;
}

const uint8_t *js_i64(js_ctx *c, const uint8_t *p, const uint8_t *end, int64_t *out)
{
    uint64_t v = 0;
    bool neg;
    const uint8_t *q = read_int(c, p, end, &v, &neg);
    if (UNLIKELY(q == NULL))
        return NULL;
    if (neg) {
        if (UNLIKELY(v > (uint64_t)INT64_MAX + 1))
            return js_fail(c, p, TR_E_RANGE);
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (UNLIKELY(v > (uint64_t)INT64_MAX))
            return js_fail(c, p, TR_E_RANGE);
        *out = (int64_t)v;
    }
    return q;
}

const uint8_t *js_i32(js_ctx *c, const uint8_t *p, const uint8_t *end, int32_t *out)
{
    uint64_t v = 0;
    bool neg;
    const uint8_t *q = read_int(c, p, end, &v, &neg);
    if (UNLIKELY(q == NULL))
        return NULL;
    if (UNLIKELY(v > (neg ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX)))
        return js_fail(c, p, TR_E_RANGE);
    *out = neg ? (int32_t)(-(int64_t)v) : (int32_t)v;
    return q;
}

static const double pow10_exact[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#if LDBL_MANT_DIG == 64
static const long double pow10_ld[] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
    1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
    1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};
#endif

/* Everything the fast paths cannot do exactly: strtod on a copy (the
 * token is not NUL-terminated, and the byte at end may not be readable). */
__attribute__((noinline)) static const uint8_t *f64_slow(js_ctx *c, const uint8_t *s,
                                                        const uint8_t *q, double *out)
{
    size_t n = (size_t)(q - s);
    if (n > JS_MAX_NUMBER_LEN)
        return js_fail(c, s, TR_E_TOO_LONG);
    char buf[JS_MAX_NUMBER_LEN + 1];
    memcpy(buf, s, n);
    buf[n] = '\0';
    double d = strtod_c(buf);
    if (isinf(d))
        return js_fail(c, s, TR_E_RANGE);
    *out = d; /* an underflow to zero or a subnormal is a fine answer */
    return q;
}

const uint8_t *js_f64(js_ctx *c, const uint8_t *p, const uint8_t *end, double *out)
{
    const uint8_t *s = p;
    bool neg = false;
    if (p < end && *p == '-') {
        neg = true;
        p++;
    } else if (UNLIKELY(p >= end || !is_digit(*p))) {
        return wrong_value(c, p, end, TR_E_NUMBER);
    }
    /* m collects the significant digits (leading zeros do not count) while
     * there are at most 19 of them; fd counts the fraction's digits in m. */
    uint64_t m = 0;
    int nd = 0, fd = 0;
    bool many = false;
    if (p < end && *p == '0') {
        p++;
        if (p < end && is_digit(*p))
            return js_fail(c, p, TR_E_NUMBER);
    } else {
        if (p >= end || !is_digit(*p))
            return js_fail(c, p, TR_E_NUMBER);
        for (; p < end && is_digit(*p); p++) {
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                nd++;
            } else {
                many = true;
            }
        }
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p))
            return js_fail(c, p, TR_E_NUMBER);
        for (; p < end && is_digit(*p); p++) {
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                nd += m != 0;
                fd++;
            } else {
                many = true;
            }
        }
    }
    long ex = 0;
    if (p < end && (*p | 0x20) == 'e') {
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        if (p >= end || !is_digit(*p))
            return js_fail(c, p, TR_E_NUMBER);
        for (; p < end && is_digit(*p); p++)
            if (ex < 100000) /* saturates far beyond any double's reach */
                ex = ex * 10 + (*p - '0');
        if (eneg)
            ex = -ex;
    }
#if FLT_EVAL_METHOD == 0
    long e10 = ex - fd;
    if (LIKELY(!many && nd <= 15)) {
        /* m < 10^15 < 2^53 is exact as a double, and so is 10^|e10| for
         * |e10| <= 22: one correctly rounded operation (Clinger). */
        if (m == 0) {
            *out = neg ? -0.0 : 0.0;
            return p;
        }
        if (e10 >= -22 && e10 <= 22) {
            double d = (double)m;
            d = e10 >= 0 ? d * pow10_exact[e10] : d / pow10_exact[-e10];
            *out = neg ? -d : d;
            return p;
        }
    }
#endif
#if LDBL_MANT_DIG == 64 && FLT_EVAL_METHOD == 0
    /* Up to 19 digits and |e10| <= 27: m and 10^|e10| (5^27 < 2^64) are exact
     * in x87 extended precision, so m * or / 10^|e10| is rounded once, to 64
     * bits. Rounding that to 53 bits is then correct unless the 64-bit result
     * lies within one unit of a midpoint between two doubles (its low 11
     * bits 0x3FF..0x401): those go to strtod. */
    if (!many && m != 0 && e10 >= -27 && e10 <= 27) {
        long double x = (long double)m;
        x = e10 >= 0 ? x * pow10_ld[e10] : x / pow10_ld[-e10];
        uint64_t mant;
        memcpy(&mant, &x, sizeof mant); /* x87 layout: the 64-bit mantissa first */
        unsigned low = (unsigned)(mant & 0x7FF);
        if (low < 0x3FF || low > 0x401) {
            double d = (double)x;
            *out = neg ? -d : d;
            return p;
        }
    }
#endif
    return f64_slow(c, s, p, out);
}

/* ---- literals ---- */

/* p is at the literal's first byte, already matched. */
static inline const uint8_t *literal(js_ctx *c, const uint8_t *p, const uint8_t *end,
                                     const char *lit, size_t n)
{
    if (LIKELY((size_t)(end - p) >= n && memcmp(p, lit, n) == 0))
        return p + n;
    for (size_t i = 1; i < n; i++) {
        if (p + i >= end)
            return js_fail(c, end, TR_E_EOF);
        if (p[i] != (uint8_t)lit[i])
            return js_fail(c, p + i, TR_E_SYNTAX);
    }
    return p + n; /* not reached: the memcmp matched */
}

const uint8_t *js_bool(js_ctx *c, const uint8_t *p, const uint8_t *end, bool *out)
{
    if (p < end && (*p == 't' || *p == 'f')) {
        bool t = *p == 't';
        p = t ? literal(c, p, end, "true", 4) : literal(c, p, end, "false", 5);
        if (p != NULL)
            *out = t;
        return p;
    }
    return wrong_value(c, p, end, TR_E_SYNTAX);
}

/* ---- skipping and validation ---- */

const uint8_t *js_skip(js_ctx *c, const uint8_t *p, const uint8_t *end)
{
    /* One bit per open container: 1 an object, 0 an array. */
    uint64_t kind[SKIP_STACK_LEVELS / 64];
    int depth = 0;
    int limit = c->max_depth - c->depth;
    if (limit > SKIP_STACK_LEVELS)
        limit = SKIP_STACK_LEVELS;
    bool in_obj = false, esc;

value:
    if (UNLIKELY(p >= end))
        return js_fail(c, end, TR_E_EOF);
    switch (*p) {
    case '"':
        p = scan_string(c, p, end, &esc);
        break;
    case '{':
    case '[':
        if (UNLIKELY(depth >= limit))
            return js_fail(c, p, TR_E_DEPTH);
        in_obj = *p == '{';
        if (in_obj)
            kind[depth >> 6] |= UINT64_C(1) << (depth & 63);
        else
            kind[depth >> 6] &= ~(UINT64_C(1) << (depth & 63));
        depth++;
        p = js_ws(p + 1, end);
        if (p < end && *p == (in_obj ? '}' : ']')) {
            p++;
            goto closed;
        }
        if (in_obj)
            goto key;
        goto value;
    case 't':
        p = literal(c, p, end, "true", 4);
        break;
    case 'f':
        p = literal(c, p, end, "false", 5);
        break;
    case 'n':
        p = literal(c, p, end, "null", 4);
        break;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        p = number_scan(c, p, end);
        break;
    default:
        return js_fail(c, p, TR_E_SYNTAX);
    }
    if (UNLIKELY(p == NULL))
        return NULL;

next: /* after a value inside the current container */
    if (depth == 0)
        return p;
    p = js_ws(p, end);
    if (UNLIKELY(p >= end))
        return js_fail(c, end, TR_E_EOF);
    if (*p == ',') {
        p = js_ws(p + 1, end);
        if (!in_obj)
            goto value;
        goto key;
    }
    if (UNLIKELY(*p != (in_obj ? '}' : ']')))
        return js_fail(c, p, TR_E_SYNTAX);
    p++;

closed: /* p is after a closing bracket */
    depth--;
    if (depth > 0)
        in_obj = (kind[(depth - 1) >> 6] >> ((depth - 1) & 63)) & 1;
    goto next;

key:
    if (UNLIKELY(p >= end))
        return js_fail(c, end, TR_E_EOF);
    if (UNLIKELY(*p != '"'))
        return js_fail(c, p, TR_E_SYNTAX);
    p = scan_string(c, p, end, &esc);
    if (UNLIKELY(p == NULL))
        return NULL;
    p = js_ws(p, end);
    if (UNLIKELY(p >= end))
        return js_fail(c, end, TR_E_EOF);
    if (UNLIKELY(*p != ':'))
        return js_fail(c, p, TR_E_SYNTAX);
    p = js_ws(p + 1, end);
    goto value;
}

const uint8_t *js_validate(js_ctx *c, const uint8_t *p, const uint8_t *end)
{
    p = js_text_begin(c, p, end);
    if (p == NULL)
        return NULL;
    if (p >= end)
        return js_fail(c, end, TR_E_EOF);
    return js_text_end(c, js_skip(c, p, end), end);
}

/* ---- writing ---- */

static const char hexdig[] = "0123456789abcdef";

uint8_t *js_put_string(uint8_t *w, uint8_t *wend, const char *s, size_t n)
{
    if (w == NULL || w >= wend)
        return NULL;
    *w++ = '"';
    const uint8_t *p = (const uint8_t *)s;
    const uint8_t *e = n != 0 ? p + n : p; /* s may be NULL when n is 0 */
    while (n != 0) {
        /* A run that needs no escape; UTF-8 passes through as it is. */
        const uint8_t *q = js_find_string_special(p, e);
        while (q < e && *q >= 0x80) {
            while (q < e && *q >= 0x80)
                q++;
            q = js_find_string_special(q, e);
        }
        size_t run = (size_t)(q - p);
        if ((size_t)(wend - w) < run)
            return NULL;
        memcpy(w, p, run);
        w += run;
        if (q == e)
            break;
        uint8_t b = *q;
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t len = 2;
        switch (b) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hexdig[b >> 4];
            esc[5] = hexdig[b & 15];
            len = 6;
            break;
        }
        if ((size_t)(wend - w) < len)
            return NULL;
        memcpy(w, esc, len);
        w += len;
        p = q + 1;
    }
    if (w >= wend)
        return NULL;
    *w++ = '"';
    return w;
}

uint8_t *js_put_compact(uint8_t *w, uint8_t *wend, const uint8_t *s, size_t n)
{
    bool in = false, esc = false; /* inside a string; after its backslash */
    for (size_t i = 0; i < n; i++) {
        uint8_t b = s[i];
        if (in) {
            if (esc)
                esc = false;
            else if (b == '\\')
                esc = true;
            else if (b == '"')
                in = false;
        } else if (b == ' ' || b == '\t' || b == '\n' || b == '\r') {
            continue;
        } else if (b == '"') {
            in = true;
        }
        size_t len = b < 0x20 ? 6 : 1;
        if (w == NULL || (size_t)(wend - w) < len)
            return NULL;
        if (b < 0x20) {
            memcpy(w, "\\u00", 4);
            w[4] = (uint8_t)hexdig[b >> 4];
            w[5] = (uint8_t)hexdig[b & 15];
        } else {
            *w = b;
        }
        w += len;
    }
    return w;
}

uint8_t *js_put_i64(uint8_t *w, uint8_t *wend, int64_t v)
{
    char buf[20];
    char *b = buf + sizeof buf;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--b = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--b = '-';
    return js_put_raw(w, wend, b, (size_t)(buf + sizeof buf - b));
}

/* A non-finite v has no JSON form: it returns NULL like a full buffer, so
 * the caller's error path catches a broken contract instead of writing
 * "inf". The fewest digits that read back win; when that form has an
 * exponent, a longer precision may print shorter without one
 * (1.23456789012346e+16 against 12345678901234568), so those are tried too. */
uint8_t *js_put_f64(uint8_t *w, uint8_t *wend, double v)
{
    if (w == NULL || !isfinite(v))
        return NULL;
    char best[32], cand[32];
    int n = 0;
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    locale_t l = c_locale();
    locale_t old = l != (locale_t)0 ? uselocale(l) : (locale_t)0;
#endif
    for (int prec = 15; prec <= 17; prec++) {
        int m = snprintf(cand, sizeof cand, "%.*g", prec, v);
        if (m <= 0 || (size_t)m >= sizeof cand)
            break;
        if (prec < 17 && strtod(cand, NULL) != v)
            continue;
        if (n == 0 || m < n) {
            memcpy(best, cand, (size_t)m);
            n = m;
        }
        if (memchr(cand, 'e', (size_t)m) == NULL)
            break;
    }
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    if (old != (locale_t)0)
        uselocale(old);
#endif
    if (n == 0)
        return NULL;
    return js_put_raw(w, wend, best, (size_t)n);
}
