/* valid.c: the one-pass block validator of valid.h, in four widths.
 *
 * One block step (jv_block) is shared by every width; only the function
 * turning 64 bytes into masks differs. How the end of input is met, in one
 * place: the masks of the last block cover its n < 64 bytes (AVX-512 loads
 * them with a masked load, the others copy them into a buffer padded with
 * spaces), and jv_block counts the lanes past n as whitespace. Everything
 * read one byte at a time (numbers, escapes, UTF-8 runs, the key found) is
 * read from the input itself, bounded by end.
 *
 * The grammar on masks. For a set X of token positions, next(X) is the set
 * of the first positions after them that are not whitespace: X << 1, moved
 * across each whitespace run by adding the run to its first bit (the carry
 * lands just past the run). A bit that leaves the block becomes a pending
 * bit at the next block's first position. Then, with OQ the opening
 * quotes, AS the first bytes of numbers and literals, OB and CB the
 * brackets:
 *   next('{')            in OQ | '}'     (these OQ are keys: KP)
 *   next(',' in object)  in OQ           (keys too)
 *   next('[')            in OQ | AS | OB | ']'
 *   next(':' | ',' in array) in OQ | AS | OB
 *   next(close of a key) in ':'
 *   next(close of another string, or a closer) in ',' | CB
 * and after a number or literal (checked where it is read) ',' or a closer.
 * A key's opening quote is carried to its closing quote by adding it to the
 * in-string run it starts. With the bracket stack (which '}' or ']' closes
 * which, and whether a ',' is in an array), these pairs are the whole of
 * JSON's grammar for a text whose value is a container.
 */
#include "valid.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "blocks.h"
#include "skip.h"

typedef struct {
    uint64_t q;   /* '"' */
    uint64_t bs;  /* '\\' */
    uint64_t ws;  /* space, tab, LF, CR */
    uint64_t ob;  /* '{' or '[' */
    uint64_t cb;  /* '}' or ']' */
    uint64_t b5;  /* bytes with 0x20 set: tells '{' '}' from '[' ']' */
    uint64_t col; /* ':' */
    uint64_t com; /* ',' */
    uint64_t ctl; /* below 0x20 or 0x80 and above: control bytes, and non-ASCII */
    uint64_t f;   /* the wanted key's first byte */
} jv_masks;

/* What one block hands the next, kept apart from jv_state so that it lives
 * in registers (jv_state's byte stack may alias anything it shares a
 * struct with). */
typedef struct {
    uint64_t in_carry, esc_carry; /* as in skip.c's walk */
    uint64_t atom_prev, hi_prev;  /* the last block ended inside a number/literal, a non-ASCII run */
    uint64_t key_pend;            /* ... inside a key's string */
    /* pending next-token requirements, one per rule of the header comment */
    uint64_t p_oo, p_co, p_ao, p_v, p_kc, p_ve;
    int depth;
} jv_carry;

typedef struct {
    const uint8_t *end;
    const uint8_t *esc_skip; /* a low surrogate's backslash, checked with its high half */
    /* the member sought */
    jv_find *find;
    bool seeking;
    int watch_depth;         /* the found container's depth while it is open, else 0 */
    const uint8_t *watch_at; /* the found container's opener, until it is seen */
    uint8_t is_array[JS_MAX_DEPTH + 1];
} jv_state;

static inline int hex4(const uint8_t *p, const uint8_t *end)
{
    if (end - p < 4)
        return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

/* b at a backslash inside a string. */
static bool escape_ok(jv_state *st, const uint8_t *b)
{
    const uint8_t *end = st->end;
    if (b == st->esc_skip)
        return true;
    if (end - b < 2)
        return false;
    switch (b[1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        return true;
    case 'u': {
        int u = hex4(b + 2, end);
        if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
            return false;
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (end - b < 12 || b[6] != '\\' || b[7] != 'u')
                return false;
            int l = hex4(b + 8, end);
            if (l < 0xDC00 || l > 0xDFFF)
                return false;
            st->esc_skip = b + 6;
        }
        return true;
    }
    default:
        return false;
    }
}

/* p at a byte >= 0x80: validates the run of such bytes as whole UTF-8
 * sequences (no overlongs, no surrogates, nothing past U+10FFFF). */
static bool utf8_run(const uint8_t *p, const uint8_t *end)
{
    while (p < end && *p >= 0x80) {
        uint8_t b = *p;
        size_t need;
        uint8_t lo = 0x80, hi = 0xBF;
        if (b < 0xC2)
            return false;
        if (b < 0xE0) {
            need = 1;
        } else if (b < 0xF0) {
            need = 2;
            if (b == 0xE0)
                lo = 0xA0;
            else if (b == 0xED)
                hi = 0x9F;
        } else if (b < 0xF5) {
            need = 3;
            if (b == 0xF0)
                lo = 0x90;
            else if (b == 0xF4)
                hi = 0x8F;
        } else {
            return false;
        }
        if ((size_t)(end - p) <= need || p[1] < lo || p[1] > hi)
            return false;
        for (size_t i = 2; i <= need; i++)
            if (p[i] < 0x80 || p[i] > 0xBF)
                return false;
        p += need + 1;
    }
    return true;
}

static inline bool is_digit(uint8_t b) { return b >= '0' && b <= '9'; }

/* p at the first byte of a number or literal: one past it, or NULL. */
static const uint8_t *atom_end(const uint8_t *p, const uint8_t *end)
{
    size_t left = (size_t)(end - p);
    switch (*p) {
    case 't':
        return left >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f':
        return left >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n':
        return left >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default:
        break;
    }
    if (*p == '-' && ++p == end)
        return NULL;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (++p < end && is_digit(*p))
            ;
    else
        return NULL;
    if (p < end && *p == '.') {
        if (++p == end || !is_digit(*p))
            return NULL;
        while (++p < end && is_digit(*p))
            ;
    }
    if (p < end && (*p | 0x20) == 'e') {
        if (++p < end && (*p == '+' || *p == '-'))
            p++;
        if (p == end || !is_digit(*p))
            return NULL;
        while (++p < end && is_digit(*p))
            ;
    }
    return p;
}

/* next(X) of the header comment, with the pending bit of its rule. */
static inline __attribute__((always_inline)) uint64_t next_tok(uint64_t x, uint64_t *pend, uint64_t ws,
                                                               bool compact)
{
    if (compact) { /* no whitespace in the block */
        uint64_t s = x << 1 | *pend;
        *pend = x >> 63;
        return s;
    }
    uint64_t s = x << 1 | *pend, t = s & ws, sum;
    uint64_t carry = __builtin_add_overflow(t, ws, &sum);
    *pend = x >> 63 | carry;
    return (s & ~ws) | (sum & ~ws);
}

/* c at the opening quote of a key at depth 1: the value after it when the
 * key (unescaped) is the one sought, else NULL. */
static const uint8_t *key_match(const uint8_t *c, const uint8_t *end, const js_str *k)
{
    const uint8_t *v = NULL;
    if ((size_t)(end - c) > k->n + 1 && memcmp(c + 1, k->p, k->n) == 0 && c[1 + k->n] == '"') {
        v = js_ws(c + 2 + k->n, end);
        return v < end && *v == ':' ? js_ws(v + 1, end) : NULL;
    }
    const uint8_t *p = c + 1;
    while (p < end && *p != '"' && *p != '\\')
        p++;
    if (p < end && *p == '\\' && sk_key_slow(c, end, k, 1, &v) == 0)
        return v;
    return NULL;
}

/* The depth just after position i of a block that starts at depth d. */
static inline int depth_at(int d, uint64_t ob, uint64_t cb, unsigned i)
{
    uint64_t upto = i == 63 ? ~0ull : (2ull << i) - 1;
    return d + __builtin_popcountll(ob & upto) - __builtin_popcountll(cb & upto);
}

/* The sought member's key, at opening quote bit i of block s: records its
 * value, or starts watching for the end of a container value. */
static inline void found_key(jv_state *st, const uint8_t *s, size_t n, int d0, uint64_t ob,
                             uint64_t cb, unsigned i)
{
    const uint8_t *v = key_match(s + i, st->end, &st->find->key);
    if (v == NULL || v >= st->end)
        return;
    st->seeking = false;
    st->find->val = v;
    if (*v != '{' && *v != '[') {
        st->find->end = sk_value_end(v, st->end);
        return;
    }
    if (v >= s + n) {
        st->watch_at = v; /* the opener is in a later block */
        return;
    }
    /* the opener is in this block, whose brackets were already visited:
     * its closer is the first later one that brings the depth back to 1 */
    unsigned j = (unsigned)(v - s);
    uint64_t later = j == 63 ? 0 : ~0ull << (j + 1);
    for (uint64_t w = cb & later; w != 0; w &= w - 1) {
        unsigned k = (unsigned)__builtin_ctzll(w);
        if (depth_at(d0, ob, cb, k) == 1) {
            st->find->end = s + k + 1;
            return;
        }
    }
    st->watch_depth = 2;
}

/* The pair rules of the header comment over one block; false when one
 * fails. *kp: the keys' opening quotes. */
static inline __attribute__((always_inline)) bool grammar(jv_carry *cy, uint64_t ob, uint64_t cb,
                                                           uint64_t col, uint64_t com, uint64_t arr,
                                                           uint64_t b5, uint64_t oq, uint64_t cq,
                                                           uint64_t as, uint64_t in, uint64_t final,
                                                           uint64_t ws, bool compact, uint64_t *kp_out)
{
    uint64_t com_a = com & arr, com_o = com & ~arr;
    uint64_t ob_a = ob & ~b5, ob_o = ob & b5;
    uint64_t value = oq | as | ob;
    uint64_t n_oo = next_tok(ob_o, &cy->p_oo, ws, compact);
    uint64_t n_co = next_tok(com_o, &cy->p_co, ws, compact);
    uint64_t n_ao = next_tok(ob_a, &cy->p_ao, ws, compact);
    uint64_t n_v = next_tok(col | com_a, &cy->p_v, ws, compact);
    uint64_t kp = (n_oo | n_co) & oq, sum;
    cy->key_pend = __builtin_add_overflow(in, kp | cy->key_pend, &sum);
    uint64_t kc = sum & ~in;
    uint64_t n_kc = next_tok(kc, &cy->p_kc, ws, compact);
    uint64_t n_ve = next_tok((cq & ~kc) | (cb & ~final), &cy->p_ve, ws, compact);
    *kp_out = kp;
    return ((n_oo & ~(oq | cb)) | (n_co & ~oq) | (n_ao & ~(value | cb)) | (n_v & ~value) |
            (n_kc & ~col) | (n_ve & ~(com | cb))) == 0;
}

/* One block: 0 to go on, 1 when the text ended (valid), -1 when it is not
 * valid (or not provably so). s is the block in the input, n <= 64 bytes. */
static inline __attribute__((always_inline)) int jv_block(jv_state *st, jv_carry *cy, const uint8_t *s, size_t n,
                                                           const jv_masks *m, uint64_t esc,
                                                           uint64_t q, uint64_t in)
{
    const uint8_t *end = st->end;
    uint64_t valid = n == 64 ? ~0ull : (1ull << n) - 1;
    uint64_t ws = m->ws | ~valid;

    /* outside strings: no backslash, control byte (but whitespace) or
     * non-ASCII byte (nor any other stray byte: see the atoms); inside, the
     * bytes of ctl must be non-ASCII, in valid UTF-8 runs */
    uint64_t ctl = m->ctl & valid;
    if (((m->bs | (ctl & ~ws)) & ~in) != 0)
        return -1;
    for (uint64_t w = esc; w != 0; w &= w - 1)
        if (!escape_ok(st, s + __builtin_ctzll(w) - 1))
            return -1;
    uint64_t hi = ctl & in;
    if ((hi | cy->hi_prev) != 0) {
        for (uint64_t w = hi; w != 0; w &= w - 1)
            if (s[__builtin_ctzll(w)] < 0x80)
                return -1; /* a raw control byte in a string */
        for (uint64_t w = hi & ~(hi << 1 | cy->hi_prev); w != 0; w &= w - 1)
            if (!utf8_run(s + __builtin_ctzll(w), end))
                return -1;
        cy->hi_prev = hi >> 63;
    }

    uint64_t out = ~in & ~q;
    uint64_t ob = m->ob & out, cb = m->cb & out, col = m->col & out, com = m->com & out;
    uint64_t oq = q & in, cq = q & ~in;
    /* numbers and literals: whatever else lies outside strings */
    uint64_t atom = valid & out & ~ws & ~(m->ob | m->cb | m->col | m->com);
    uint64_t as = atom & ~(atom << 1 | cy->atom_prev);
    cy->atom_prev = atom >> 63;

    /* brackets, one at a time: matching, depth, and which commas are in
     * arrays (arr: the positions whose innermost container is an array) */
    int d0 = cy->depth, d = d0;
    uint64_t arr = 0, final = 0;
    unsigned prev = 0;
    for (uint64_t w = ob | cb; w != 0; w &= w - 1) {
        unsigned i = (unsigned)__builtin_ctzll(w);
        uint64_t bit = 1ull << i;
        if (st->is_array[d])
            arr |= (bit - 1) & (~0ull << prev);
        prev = i;
        uint8_t is_arr = (m->b5 & bit) == 0;
        if (ob & bit) {
            if (d == JS_MAX_DEPTH)
                return -1;
            st->is_array[++d] = is_arr;
            if (s + i == st->watch_at) {
                st->watch_at = NULL;
                st->watch_depth = d;
            }
        } else {
            if (st->is_array[d] != is_arr)
                return -1;
            if (d == st->watch_depth) {
                st->find->end = s + i + 1;
                st->watch_depth = 0;
            }
            if (--d == 0) {
                final = bit;
                break;
            }
        }
    }
    if (final == 0 && st->is_array[d])
        arr |= ~0ull << prev;
    cy->depth = d;
    if (final != 0) {
        /* the text's value closed: nothing but whitespace may follow */
        uint64_t after = ~((final << 1) - 1);
        if ((~ws & after) != 0 || js_ws(s + n, end) != end)
            return -1;
    }

    /* the grammar, pair by pair (a block without whitespace between tokens, the encoder's
     * usual, takes the shifts alone) */
    uint64_t kp;
    bool ok = (ws & ~in) == 0 ? grammar(cy, ob, cb, col, com, arr, m->b5, oq, cq, as, in, final, 0, true, &kp)
                      : grammar(cy, ob, cb, col, com, arr, m->b5, oq, cq, as, in, final, ws, false, &kp);
    if (!ok)
        return -1;

    /* the member sought: a key at depth 1 whose first byte is the key's
     * (or a backslash); for bit 63 that byte is in the next block */
    if (st->seeking) {
        uint64_t cand = kp & ((m->f | m->bs) >> 1 | 1ull << 63);
        for (; cand != 0 && st->seeking; cand &= cand - 1) {
            unsigned i = (unsigned)__builtin_ctzll(cand);
            if (depth_at(d0, ob, cb, i) == 1)
                found_key(st, s, n, d0, ob, cb, i);
        }
    }

    /* numbers and literals, each followed by ',' or a closer */
    for (uint64_t w = as; w != 0; w &= w - 1) {
        const uint8_t *r = atom_end(s + __builtin_ctzll(w), end);
        if (r == NULL)
            return -1;
        r = js_ws(r, end);
        if (r == end || (*r != ',' && *r != '}' && *r != ']'))
            return -1;
    }
    return final != 0 ? 1 : 0;
}

/* The walk, shared by every width: MASKS fills the block's masks, PXOR is
 * the prefix XOR. */
#define JV_WALK(MASKS, PXOR)                                                            \
    const uint8_t *s = p;                                                               \
    uint8_t fb = (uint8_t)(st->find != NULL ? st->find->key.p[0] : 0);                  \
    jv_masks m;                                                                         \
    jv_carry cy;                                                                        \
    memset(&cy, 0, sizeof cy);                                                          \
    while (s < st->end) {                                                               \
        size_t n = (size_t)(st->end - s) < 64 ? (size_t)(st->end - s) : 64;             \
        MASKS(s, n, fb, &m);                                                            \
        uint64_t esc = escaped_bits(m.bs, &cy.esc_carry);                              \
        uint64_t q = m.q & ~esc;                                                        \
        uint64_t in = PXOR(q) ^ cy.in_carry;                                            \
        cy.in_carry ^= (uint64_t)0 - (uint64_t)(__builtin_popcountll(q) & 1);          \
        int r = jv_block(st, &cy, s, n, &m, esc, q, in);                                    \
        if (r != 0)                                                                     \
            return r > 0;                                                               \
        s += n;                                                                         \
    }                                                                                   \
    return false;

/* ---- portable */

static inline void masks_portable(const uint8_t *s, size_t n, uint8_t fb, jv_masks *m)
{
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < n; i++) {
        uint8_t b = s[i];
        uint64_t bit = 1ull << i;
        m->q |= b == '"' ? bit : 0;
        m->bs |= b == '\\' ? bit : 0;
        m->ws |= b == ' ' || b == '\t' || b == '\n' || b == '\r' ? bit : 0;
        m->ob |= (b | 0x20) == '{' ? bit : 0;
        m->cb |= (b | 0x20) == '}' ? bit : 0;
        m->b5 |= (b & 0x20) ? bit : 0;
        m->col |= b == ':' ? bit : 0;
        m->com |= b == ',' ? bit : 0;
        m->ctl |= b < 0x20 || b >= 0x80 ? bit : 0;
        m->f |= b == fb ? bit : 0;
    }
}

static bool walk_portable(jv_state *st, const uint8_t *p) { JV_WALK(masks_portable, prefix_xor_portable) }

#if BK_X86

/* ---- SSE2: four 16-byte lanes */

__attribute__((target("sse2"))) static inline void masks_sse2(const uint8_t *s, size_t n, uint8_t fb,
                                                              jv_masks *m)
{
    uint8_t buf[64];
    TAIL_COPY(s, n, buf);
    __m128i v[4];
    for (int i = 0; i < 4; i++)
        v[i] = _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * i));
#define EQ4(expr) mask16x4(expr(v[0]), expr(v[1]), expr(v[2]), expr(v[3]))
#define EQB(x, c) _mm_cmpeq_epi8((x), _mm_set1_epi8((char)(c)))
#define QUOTE(x) EQB(x, '"')
#define BSL(x) EQB(x, '\\')
#define WS(x) _mm_or_si128(_mm_or_si128(EQB(x, ' '), EQB(x, '\t')), _mm_or_si128(EQB(x, '\n'), EQB(x, '\r')))
#define OPEN(x) EQB(_mm_or_si128((x), _mm_set1_epi8(0x20)), '{')
#define CLOSE(x) EQB(_mm_or_si128((x), _mm_set1_epi8(0x20)), '}')
#define B5(x) _mm_slli_epi16((x), 2)
#define COL(x) EQB(x, ':')
#define COM(x) EQB(x, ',')
#define LOWHI(x) _mm_cmplt_epi8((x), _mm_set1_epi8(0x20))
#define FB(x) EQB(x, fb)
    m->q = EQ4(QUOTE);
    m->bs = EQ4(BSL);
    m->ws = EQ4(WS);
    m->ob = EQ4(OPEN);
    m->cb = EQ4(CLOSE);
    m->b5 = EQ4(B5);
    m->col = EQ4(COL);
    m->com = EQ4(COM);
    m->ctl = EQ4(LOWHI);
    m->f = EQ4(FB);
#undef EQ4
}

__attribute__((target("sse2"))) static bool walk_sse2(jv_state *st, const uint8_t *p)
{
    JV_WALK(masks_sse2, prefix_xor_portable)
}

/* ---- AVX2: two 32-byte lanes; whitespace by a table lookup */

__attribute__((target("avx2"))) static inline void masks_avx2(const uint8_t *s, size_t n, uint8_t fb,
                                                              jv_masks *m)
{
    uint8_t buf[64];
    TAIL_COPY(s, n, buf);
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)s);
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
    /* each whitespace byte is the table's entry at its low nibble; a byte
     * >= 0x80 looks up 0, which it is not */
    const __m256i wst = _mm256_setr_epi8(' ', -1, -1, -1, -1, -1, -1, -1, -1, '\t', '\n', -1, -1, '\r', -1, -1,
                                         ' ', -1, -1, -1, -1, -1, -1, -1, -1, '\t', '\n', -1, -1, '\r', -1, -1);
#define EQ2(expr) mask32x2(expr(a), expr(b))
#define EQB2(x, c) _mm256_cmpeq_epi8((x), _mm256_set1_epi8((char)(c)))
#define QUOTE2(x) EQB2(x, '"')
#define BSL2(x) EQB2(x, '\\')
#define WS2(x) _mm256_cmpeq_epi8(_mm256_shuffle_epi8(wst, (x)), (x))
#define OPEN2(x) EQB2(_mm256_or_si256((x), _mm256_set1_epi8(0x20)), '{')
#define CLOSE2(x) EQB2(_mm256_or_si256((x), _mm256_set1_epi8(0x20)), '}')
#define B52(x) _mm256_slli_epi16((x), 2)
#define COL2(x) EQB2(x, ':')
#define COM2(x) EQB2(x, ',')
#define LOWHI2(x) _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), (x))
#define FB2(x) EQB2(x, fb)
    m->q = EQ2(QUOTE2);
    m->bs = EQ2(BSL2);
    m->ws = EQ2(WS2);
    m->ob = EQ2(OPEN2);
    m->cb = EQ2(CLOSE2);
    m->b5 = EQ2(B52);
    m->col = EQ2(COL2);
    m->com = EQ2(COM2);
    m->ctl = EQ2(LOWHI2);
    m->f = EQ2(FB2);
#undef EQ2
}

__attribute__((target("avx2,pclmul"))) static bool walk_avx2(jv_state *st, const uint8_t *p)
{
    JV_WALK(masks_avx2, prefix_xor_clmul)
}

/* ---- AVX-512BW: one 64-byte lane, the tail by masked load (its lanes
 * past n read as 0, which jv_block masks off) */

__attribute__((target("avx512f,avx512bw"))) static inline void masks_avx512(const uint8_t *s, size_t n,
                                                                            uint8_t fb, jv_masks *m)
{
    __m512i v = n == 64 ? _mm512_loadu_si512((const void *)s)
                        : _mm512_maskz_loadu_epi8((__mmask64)((1ull << n) - 1), (const void *)s);
    const __m512i wst = _mm512_broadcast_i32x4(
        _mm_setr_epi8(' ', -1, -1, -1, -1, -1, -1, -1, -1, '\t', '\n', -1, -1, '\r', -1, -1));
    __m512i lo = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    m->q = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"'));
    m->bs = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\'));
    m->ws = _mm512_cmpeq_epi8_mask(_mm512_shuffle_epi8(wst, v), v);
    m->ob = _mm512_cmpeq_epi8_mask(lo, _mm512_set1_epi8('{'));
    m->cb = _mm512_cmpeq_epi8_mask(lo, _mm512_set1_epi8('}'));
    m->b5 = _mm512_test_epi8_mask(v, _mm512_set1_epi8(0x20));
    m->col = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(':'));
    m->com = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(','));
    m->ctl = _mm512_cmplt_epi8_mask(v, _mm512_set1_epi8(0x20));
    m->f = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8((char)fb));
}

__attribute__((target("avx512f,avx512bw,pclmul"))) static bool walk_avx512(jv_state *st, const uint8_t *p)
{
    JV_WALK(masks_avx512, prefix_xor_clmul)
}

#endif /* BK_X86 */

typedef bool (*jv_walk_fn)(jv_state *st, const uint8_t *p);

/* The width follows json.h's choice, looked up per call (a pointer compare)
 * so that js_force_simd in tests switches it too. */
static jv_walk_fn walk_for(const char *name)
{
#if BK_X86
    if (strcmp(name, "avx512") == 0 && __builtin_cpu_supports("pclmul"))
        return walk_avx512;
    if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("pclmul"))
        return walk_avx2;
    if (strcmp(name, "portable") != 0)
        return walk_sse2;
#endif
    (void)name;
    return walk_portable;
}

/* The walk is published before the name it belongs to (release), so a
 * reader that sees the name (acquire) sees its walk. */
static _Atomic(const char *) cached_name;
static _Atomic(jv_walk_fn) cached_walk = walk_portable;

static jv_walk_fn current_walk(void)
{
    const char *name = js_simd_name();
    if (name != atomic_load_explicit(&cached_name, memory_order_acquire)) {
        atomic_store_explicit(&cached_walk, walk_for(name), memory_order_relaxed);
        atomic_store_explicit(&cached_name, name, memory_order_release);
    }
    return atomic_load_explicit(&cached_walk, memory_order_relaxed);
}

const char *jv_impl_name(void)
{
    jv_walk_fn w = current_walk();
#if BK_X86
    if (w == walk_avx512)
        return "avx512";
    if (w == walk_avx2)
        return "avx2";
    if (w == walk_sse2)
        return "sse2";
#endif
    (void)w;
    return "portable";
}

bool jv_valid(const uint8_t *p, const uint8_t *end, jv_find *find)
{
    if (find != NULL) {
        find->val = NULL;
        find->end = NULL;
    }
    p = js_ws(p, end);
    if (p == end || (*p != '{' && *p != '['))
        return false; /* a scalar text, or not JSON: js_validate's to judge */
    jv_state st;
    memset(&st, 0, offsetof(jv_state, is_array));
    st.is_array[0] = 0;
    st.end = end;
    st.find = find;
    st.seeking = find != NULL && find->key.n > 0 && *p == '{';
    if (!current_walk()(&st, p))
        return false;
    if (find != NULL && find->val != NULL && find->end == NULL)
        return false; /* cannot happen on valid input; never give half a view */
    return true;
}
