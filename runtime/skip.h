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
 * while 64 bytes remain; the tail is read with a masked load (AVX-512) or
 * copied to a stack buffer padded with spaces (the others). This walk does
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
     * fresh is set until then; first is the candidate it gave, if any. */
    bool fresh;
    const uint8_t *first;
} sk_cursor;

/* Keys whose first bytes a walk checks before it stops at a candidate. */
#define SK_PREFIXES 16

/* What a walk looks for: up to four wanted first bytes, n of them in b (the
 * rest repeat the last, so a width may compare all four without branching);
 * and, when npre > 0, the keys' first bytes as JSON spells them, so that a
 * string the first byte let through is passed over in the block loop when
 * its first 8 bytes can begin none of the keys: pre[i] is key i's '"' and
 * next bytes (up to 8, its closing quote included when it fits; only bytes
 * before the first one JSON must escape), as sk_load8 reads them, and
 * mask[i] keeps that many bytes. With npre 0 every string whose first byte
 * is wanted stops the walk. */
typedef struct {
    uint8_t b[4];
    uint8_t n;
    uint8_t npre;
    uint64_t pre[SK_PREFIXES];
    uint64_t mask[SK_PREFIXES];
} sk_firsts;

/* 8 bytes at p as one word, its first byte lowest (on any byte order). */
static inline uint64_t sk_load8(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* Whether the string opened at p (a '"' before end) may be one of f's keys
 * and must stop the walk: f has no prefixes, fewer than 8 bytes remain, a
 * backslash is among its next 7 bytes (an escaped key is unescaped by the
 * scanner's slow path), or its first bytes are one key's prefix. A string
 * for which this is false differs from every key before any backslash: the
 * scanner's matcher would answer -1 for it. */
static inline bool sk_maybe_key(const sk_firsts *f, const uint8_t *p, const uint8_t *end)
{
    if (f->npre == 0 || end - p < 8)
        return true;
    uint64_t w = sk_load8(p);
    /* a zero byte where w has a backslash; the first zero found is exact
     * and a false one lies only above a true one (byte 0 is the quote) */
    uint64_t x = w ^ 0x5C5C5C5C5C5C5C5Cull;
    if ((x - 0x0101010101010101ull) & ~x & 0x8080808080808000ull)
        return true;
    for (int i = 0; i < f->npre; i++)
        if ((w & f->mask[i]) == f->pre[i])
            return true;
    return false;
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
    c->first = NULL;
}

/* Continue from p, which must be at depth 1 outside any string (just after
 * a key's ':', or after a string at depth 1), or inside the string of the
 * last candidate (from its second byte on: the walk knows that block). */
static inline void sk_resume(sk_cursor *c, const uint8_t *p) { c->p = p; }

/* sk_next past the first member: the blocks (out of line; sk_next's look at
 * the first member is inline, a call saved where a wanted key comes first). */
const uint8_t *sk_next_walk(sk_cursor *c, const sk_firsts *f);

/* The next candidate: a '"' opening a string at depth 1 whose next byte is
 * one of f's or a backslash. NULL when the object closed first (closed set)
 * or the input ended or nested too deep (closed NULL).
 *
 * A wanted key is often an object's first (a union's tag is written
 * first): the first call looks at the first member's key before setting
 * up any block, and returns it when it is a candidate. */
static inline const uint8_t *sk_next(sk_cursor *c, const sk_firsts *f)
{
    if (c->fresh) {
        /* the first member's key, before any block */
        c->fresh = false;
        const uint8_t *p = js_ws(c->p, c->end);
        if (f != NULL && p + 1 < c->end && *p == '"') {
            uint8_t b = p[1];
            if ((b == f->b[0] || b == f->b[1] || b == f->b[2] || b == f->b[3] || b == '\\') &&
                sk_maybe_key(f, p, c->end)) {
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
