/* object.h: reading a JSON object's pieces (keys, the separators between
 * members, case names, a union's tag, repeated keys), built on json.h, for
 * the generated decoder, validators and optic scanners.
 *
 * Same conventions as json.h: position in, new position (or NULL with the
 * first error recorded in c->err) out; nothing read outside [p, end);
 * nothing allocated except on c->arena's scratch stack, which the caller
 * pops. Kept out of the templates so that each rule has one implementation.
 */
#ifndef TR_OBJECT_H
#define TR_OBJECT_H

#include "json.h"

/* A value of the wrong kind at p: TR_E_NULL_REQUIRED for null, TR_E_TYPE for
 * another JSON value, TR_E_SYNTAX for what is no JSON value, TR_E_EOF at end. */
const uint8_t *ob_wrong_type(js_ctx *c, const uint8_t *p, const uint8_t *end);

/* Names the field an error happened in (first name wins) and returns NULL. */
const uint8_t *ob_in(js_ctx *c, const char *field);

/* p is at a key's '"'. Reads the key, the ':' and the whitespace after it,
 * returning the position of the value. k and kn receive the key's decoded bytes: a
 * view of the input, or, when it has escapes, a copy on the scratch stack
 * (pop it with ar_scratch_pop at a mark taken before the call). */
const uint8_t *ob_key_slow(js_ctx *c, const uint8_t *p, const uint8_t *end, const uint8_t **k,
                           size_t *kn);

static inline __attribute__((always_inline)) const uint8_t *ob_key(js_ctx *c, const uint8_t *p, const uint8_t *end,
                                    const uint8_t **k, size_t *kn)
{
    bool esc;
    const uint8_t *q = js_string_raw_fast(c, p, end, &esc);
    if (q == NULL || esc)
        return q == NULL ? NULL : ob_key_slow(c, p, end, k, kn);
    *k = p + 1;
    *kn = (size_t)(q - 1 - (p + 1));
    if (q < end && *q == ':') {
        q++;
        if (q < end && *q != ' ' && *q != '\n' && *q != '\r' && *q != '\t')
            return q;
        return js_ws(q, end);
    }
    return ob_key_slow(c, p, end, k, kn);
}

/* After a member: whitespace, then ',' (returns the next key's position,
 * *more = true) or the closer (returns the position after it, *more =
 * false); anything else is TR_E_SYNTAX, the end TR_E_EOF. */
const uint8_t *ob_next_slow(js_ctx *c, const uint8_t *p, const uint8_t *end, uint8_t closer,
                            bool *more);

static inline const uint8_t *ob_next(js_ctx *c, const uint8_t *p, const uint8_t *end,
                                     uint8_t closer, bool *more)
{
    /* the compact form first: ',' then the next value's first byte, or the closer */
    if (p + 1 < end && *p == ',' && p[1] != ' ' && p[1] != '\n' && p[1] != '\r' && p[1] != '\t') {
        *more = true;
        return p + 1;
    }
    if (p < end && *p == closer) {
        *more = false;
        return p + 1;
    }
    return ob_next_slow(c, p, end, closer, more);
}

/* A string naming a case (an enum's or a union tag's): p at the value. from
 * maps decoded bytes to the case (or -1: `unknown`, TR_E_ENUM or TR_E_TAG);
 * names[0, ncases) are the cases in schema order. A name written with
 * escapes is decoded, or (one over 256 bytes) compared with each name that
 * long as it is decoded, so a case is read whatever its length and spelling. */
typedef int (*ob_from_fn)(const char *s, size_t n);
const uint8_t *ob_name(js_ctx *c, const uint8_t *p, const uint8_t *end, ob_from_fn from,
                       const js_str *names, int ncases, tr_code unknown, int *out);

/* p at a '{': finds the union tag among the object's members (any position;
 * the first occurrence: a second is the body decoder's duplicate error) and
 * reads its case. TR_E_NO_TAG when the object has none. Validates what it
 * passes over; consumes nothing (returns p itself on success). */
const uint8_t *ob_find_tag(js_ctx *c, const uint8_t *p, const uint8_t *end, const char *tag,
                           size_t tag_len, ob_from_fn from, const js_str *names, int ncases,
                           int *kind);

/* The index of the first entry whose key (a js_str at the start of each
 * stride-byte entry) repeats an earlier one, or -1 when keys are unique,
 * -2 when the arena has no room for the hash table. Up to 16 keys compares
 * every pair; more go through a hash table (2n..4n slots, linear probing)
 * keyed with ob_key_hash, so expected linear time whatever keys the input
 * chose: it cannot aim at the table's buckets without the process's key. */
long ob_dup_key(ar_arena *a, const void *entries, size_t stride, size_t n);

/* The hash for every table whose keys come from the input: SipHash-1-3 under
 * a 128-bit key drawn once per process with getrandom (another process's
 * hashes differ). */
uint64_t ob_key_hash(const void *s, size_t n);

/* SipHash-1-3 under an explicit key (k0, k1): the reference vectors' test. */
uint64_t ob_siphash13(uint64_t k0, uint64_t k1, const void *s, size_t n);

#endif
