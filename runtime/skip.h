/* skip.h: walking an object's members without reading its values, for the
 * optic scanners.
 *
 * A scanner looks for a few keys among an object's members. sk_next finds,
 * 64 bytes at a time, the next string at the object's own level (depth 1)
 * whose first byte could start one of those keys (or is a backslash: an
 * escaped key must be unescaped to be recognised); everything else, nested
 * values included, is passed over by counting brackets outside strings.
 * Each 64-byte block becomes bit masks (quotes, backslashes, brackets, the
 * wanted first bytes); the in-string mask is a prefix XOR of the unescaped
 * quotes; only bracket bits and candidate bits are visited one by one.
 *
 * Contract. Nothing is read outside [p, end): full blocks are loaded only
 * while 64 bytes remain (65 for AVX2, which reads the byte after a block
 * too); the tail is read with a masked load (AVX-512) or copied to a stack
 * buffer padded with spaces (the others). This walk does
 * not validate: malformed input can only end the walk early
 * (NULL, closed == NULL), which a scanner treats as a miss. Nesting deeper
 * than JS_MAX_DEPTH below the object also ends the walk. No allocation.
 *
 * The block code exists in four widths (AVX-512BW, AVX2, SSE2, portable),
 * chosen by sk_init from what json.h's js_init chose, so JS_SIMD selects
 * both; all four give the same answers (tests run each).
 */
#ifndef TR_SKIP_H
#define TR_SKIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "json.h"

typedef struct {
    const uint8_t *p;      /* where the walk resumes: outside any string, at depth 1 */
    const uint8_t *end;
    const uint8_t *closed; /* after the walk ended at the object's closer: one past it */
    /* The block the last candidate came from, kept so that resuming inside it
     * reuses its masks instead of reading the bytes again. */
    const uint8_t *blk;
    size_t blk_n;
    uint64_t ob, cb, cand, in_carry, esc_carry;
    /* The object's first member is looked at before any block (sk_next):
     * fresh is set until then, and again by sk_resume_after. first is the
     * candidate such a look gave, if any. in_first: the walk starts inside
     * that candidate's string (resumed at its second byte). */
    bool fresh, in_first;
    const uint8_t *first;
} sk_cursor;

/* The most keys a walk compares in line (sk_firsts.key), and the bytes of
 * each it compares: its opening quote, then up to 14 bytes of the key and
 * its closing quote. */
#define SK_KEYS 4
#define SK_KEY_BYTES 15

/* Up to four wanted first bytes: n of them in b (the rest repeat the last,
 * so a width may compare all four without branching).
 *
 * Optionally the wanted keys themselves (nk of them, 0: not given), each
 * as compact JSON spells it from its opening quote (key[k], klen[k] bytes:
 * '"', the key, '"', cut at SK_KEY_BYTES). The AVX-512 walk then passes
 * over a candidate string that cannot be any of them without stopping (the
 * other widths stop at each): one whose
 * bytes differ from each key's before any backslash (so its unescaped
 * text differs too). Every other candidate stops the walk as without
 * them: one that may be a key written with escapes, or a key's prefix, a
 * wanted key, or a string too near the end to compare. Keys with a byte
 * that JSON writes escaped (a quote, a backslash, a control byte) must not
 * be given: their compact spelling differs from their bytes. */
typedef struct {
    uint8_t b[4];
    uint8_t n;
    uint8_t nk;
    uint8_t klen[SK_KEYS];
    char key[SK_KEYS][SK_KEY_BYTES + 1];
} sk_firsts;

/* Gives f the n keys (as sk_firsts.key: when n <= SK_KEYS and none has a
 * byte JSON writes escaped; else f gets none, and every candidate stops). */
void sk_want_keys(sk_firsts *f, const js_str *keys, int n);

/* Whether the string at p (a '"', end - p >= 16) cannot be any of f's nk
 * keys (nk > 0): for each key, its bytes differ from the key's
 * spelling at some place before any backslash. */
static inline bool sk_not_a_key(const uint8_t *p, const sk_firsts *f)
{
    for (int k = 0; k < f->nk; k++) {
        const uint8_t *w = (const uint8_t *)f->key[k];
        int i = 1;
        while (i < f->klen[k] && p[i] == w[i])
            i++;
        /* equal as far as compared, or a backslash where they first
         * differ (there is none before: the key has none) */
        if (i == f->klen[k] || p[i] == '\\')
            return false;
    }
    return true;
}

/* Chooses the block code to match js_init's choice; idempotent. The first
 * walk calls it when nobody has. */
void sk_init(void);
const char *sk_impl_name(void);

/* open points at '{' or '['; the walk starts inside it. */
static inline void sk_begin(sk_cursor *c, const uint8_t *open, const uint8_t *end)
{
    c->p = open + 1;
    c->end = end;
    c->closed = NULL;
    c->blk = NULL;
    c->fresh = true;
    c->in_first = false;
    c->first = NULL;
}

/* Continue from p, which must be at depth 1 outside any string (just after
 * a key's ':', or after a string at depth 1), or inside the string of the
 * last candidate: from its second byte on (the walk knows that block), or,
 * for the object's first member (looked at before any block), at its
 * second byte. */
static inline void sk_resume(sk_cursor *c, const uint8_t *p) { c->p = p; }

/* Continue from p, where a member may begin (just after the object's '{'
 * or a ',' at depth 1): the next sk_next looks at that member's key before
 * any block, as at the object's first. */
static inline void sk_resume_member(sk_cursor *c, const uint8_t *p)
{
    c->p = p;
    c->fresh = true;
}

/* Continue from p, just past a value at depth 1 that the scanner read (a
 * union's tag, say): as sk_resume, and when a ',' follows, as
 * sk_resume_member after it (the member after a tag is often the one
 * wanted). */
static inline void sk_resume_after(sk_cursor *c, const uint8_t *p)
{
    const uint8_t *q = js_ws(p, c->end);
    if (q < c->end && *q == ',')
        sk_resume_member(c, q + 1);
    else
        c->p = p;
}

/* ---- members passed over as an encoder writes them (sk_step)
 *
 * A record's fields are most often written in declared order, compact (our
 * encoder does). A scanner looking for a field declared after a few
 * scalars passes over those members one by one where they stand, when each
 * is exactly what it expects, instead of walking their blocks; the first
 * that is not leaves the walk to go on from where it begins. What is
 * passed over so is what the walk passes over there: a member whose key is
 * none it wants (spelled exactly, no backslash) and whose value holds no
 * quote, backslash or bracket but a plain string's. */

/* How far a step looks for a string's end (beyond: the walk's business). */
#define SK_STEP_STRING 64

/* One past the closing quote of the string at p (a '"') when it ends
 * within SK_STEP_STRING bytes with no backslash before; else NULL. */
static inline const uint8_t *sk_step_string(const uint8_t *p, const uint8_t *end)
{
    const uint8_t *s = p + 1, *lim = end - s > SK_STEP_STRING ? s + SK_STEP_STRING : end;
#if defined(__SSE2__)
    for (; lim - s >= 16; s += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
            _mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
        if (m != 0) {
            s += __builtin_ctz(m);
            return *s == '"' ? s + 1 : NULL;
        }
    }
#endif
    for (; s < lim; s++)
        if (*s == '"' || *s == '\\')
            return *s == '"' ? s + 1 : NULL;
    return NULL;
}

/* A byte of a number or a literal (true, false, null) as written: a digit,
 * a letter, '+', '-' or '.'. */
static inline bool sk_bare_byte(uint8_t b)
{
    return (uint8_t)(b - '0') < 10 || (uint8_t)((b | 0x20) - 'a') < 26 || b == '-' || b == '+' ||
           b == '.';
}

/* One past a number or literal at p (bare bytes, at least one); else NULL. */
static inline const uint8_t *sk_step_bare(const uint8_t *p, const uint8_t *end)
{
    const uint8_t *s = p;
#if defined(__SSE2__)
    if (end - s >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i d = _mm_sub_epi8(v, _mm_set1_epi8('0'));
        __m128i l = _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
        __m128i bare = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d),
                         _mm_cmpeq_epi8(_mm_min_epu8(l, _mm_set1_epi8(25)), l)),
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('-')),
                                      _mm_cmpeq_epi8(v, _mm_set1_epi8('+'))),
                         _mm_cmpeq_epi8(v, _mm_set1_epi8('.'))));
        unsigned m = ~(unsigned)_mm_movemask_epi8(bare) & 0xffffu;
        if (m != 0)
            return m & 1u ? NULL : s + __builtin_ctz(m);
        s += 16; /* 16 bare bytes: the rest one by one */
    }
#endif
    while (s < end && sk_bare_byte(*s))
        s++;
    return s > p ? s : NULL;
}

/* p where a member may begin (after '{' or a ','): when it is the member
 * of key `key` (spelled as compact JSON from its opening quote to the ':',
 * klen bytes, none escaped), with a plain value (sk_step_string,
 * sk_step_bare) followed by a ',', one past that ','; else NULL. Whitespace
 * may stand between any two of them but before the ':'. */
static inline __attribute__((always_inline)) const uint8_t *
sk_step(const uint8_t *p, const uint8_t *end, const char *key, size_t klen)
{
    p = js_ws(p, end);
    if ((size_t)(end - p) <= klen || memcmp(p, key, klen) != 0)
        return NULL;
    const uint8_t *v = js_ws(p + klen, end);
    if (v >= end)
        return NULL;
    const uint8_t *q = *v == '"' ? sk_step_string(v, end) : sk_step_bare(v, end);
    if (q == NULL)
        return NULL;
    q = js_ws(q, end);
    return q < end && *q == ',' ? q + 1 : NULL;
}

/* sk_next past the first member: the blocks (out of line; sk_next's look at
 * the first member is inline, a call saved where a wanted key comes first). */
const uint8_t *sk_next_walk(sk_cursor *c, const sk_firsts *f);

/* The next candidate: a '"' opening a string at depth 1 whose next byte is
 * one of f's or a backslash. NULL when the object closed first (closed set)
 * or the input ended or nested too deep (closed NULL).
 *
 * A wanted key is often an object's first (a union's tag is written
 * first), or the one after a value the scanner read or members it passed
 * over: the first call, and the first after sk_resume_member (or
 * sk_resume_after), look at that member's key before setting up any
 * block, and return it when it is a candidate (the string at depth 1 the
 * walk would meet first). */
static inline const uint8_t *sk_next(sk_cursor *c, const sk_firsts *f)
{
    if (c->fresh) {
        /* the member's key, before any block */
        c->fresh = false;
        const uint8_t *p = js_ws(c->p, c->end);
        if (f != NULL && p + 1 < c->end && *p == '"') {
            uint8_t b = p[1];
            if (b == f->b[0] || b == f->b[1] || b == f->b[2] || b == f->b[3] || b == '\\') {
                c->first = p;
                return p;
            }
        }
    }
    return sk_next_walk(c, f);
}

/* The end of the object or array opened at open (one past its closer), or
 * NULL when it does not close before end. */
const uint8_t *sk_container_end(const uint8_t *open, const uint8_t *end);

/* One past the end of the value starting at p (after whitespace): a string,
 * container, number or literal; NULL when it does not end before end, so a
 * value cut short is never taken for a shorter one. Not validating. */
const uint8_t *sk_value_end(const uint8_t *p, const uint8_t *end);

/* A raw optic's value at p: one past its end, as sk_value_end finds it,
 * when it ends where a JSON value can (js_value_ends); NULL otherwise: cut
 * short, or followed by what cannot follow a value. */
static inline const uint8_t *sk_raw_end(const uint8_t *p, const uint8_t *end)
{
    const uint8_t *q = sk_value_end(p, end);
    return q != NULL && js_value_ends(q, end) ? q : NULL;
}

/* p at a '"': one past its closing quote, or NULL. */
const uint8_t *sk_string_end(const uint8_t *p, const uint8_t *end);

/* The slow path for a key with escapes: p at its '"'. Validates and
 * unescapes it, compares it with keys, and checks a ':' follows. Returns the
 * index of the key (*val: its value, after whitespace), -1 when it is none of
 * them or no key (*val: just after the string), -3 when it is malformed or
 * cut short. */
int sk_key_slow(const uint8_t *p, const uint8_t *end, const js_str *keys, int nkeys,
                const uint8_t **val);

#endif
