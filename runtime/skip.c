/* skip.c: the member walk of skip.h, in four widths.
 *
 * One walk (WALK_BODY below) is instantiated per width, four times: for 0,
 * 1, 2 or 4 wanted first bytes (WALK_FNS); only the function turning 64
 * bytes into bit masks differs between widths (AVX2's also tells quiet
 * blocks apart: sk_masks.quiet), and the AVX-512 walk (KEYS 1) tests its
 * candidates against the keys when the caller gives them (sk_firsts.key,
 * walk_block_keys). How the end of input is met, in one place: the
 * walk's loop takes whole blocks of 64 bytes while 64 + LA remain (LA 1 for
 * AVX2, which also reads the byte after a block; 0 for the others), the
 * masks code inlined with n == 64 + LA, testing nothing, and then the tail
 * once: masks() is given the block start and the count n <= 64 of bytes
 * that exist; the AVX-512 version loads them with a masked load
 * (masked-off lanes are not accessed), the others copy a short tail into a
 * 64-byte stack buffer padded with spaces. Lanes past n hold 0 or ' ',
 * neither of which any mask looks for.
 */
#include "skip.h"

#include <string.h>

#include "blocks.h"
#include "json.h"

typedef struct {
    uint64_t q;  /* '"' */
    uint64_t bs; /* '\\' */
    uint64_t ob; /* '{' or '[' */
    uint64_t cb; /* '}' or ']' */
    uint64_t f;  /* one of the wanted first bytes */
    /* A quiet block (AVX2 tells them apart; the other widths set false):
     * no backslash in it, and no quote in it whose next byte is a wanted
     * first byte or a backslash (the byte after the block included). bs is
     * then 0 and f not made: the block has no escape of its own and no
     * candidate, and the step skips both. At AVX-512 telling them apart
     * measured no faster. */
    bool quiet;
    /* false: the block has no backslash (bs is 0). The AVX-512 code tells
     * so from its mask register and moves bs out of it only when it holds
     * one: most blocks have none, and the moves from mask registers are
     * what its loop queues on. The other widths set true. */
    bool bs_seen;
} sk_masks;

/* Each width compares the wanted bytes as it prepares them once a call
 * (WANT_PREP, into a WANT_T the compiler keeps in registers), nf of them: a
 * constant in each instance of the walk (0, 1, 2 or 4; three are compared
 * as four, the last repeated), so a block does only the compares it needs
 * and never tests how many. */

/* ---- masks, portable */

static inline void want_copy(const sk_firsts *f, int nf, sk_firsts *w)
{
    *w = nf != 0 ? *f : (sk_firsts){{0, 0, 0, 0}, 0, 0, {0}, {{0}}};
}

static inline void masks_portable(const uint8_t *s, size_t n, int nf, const sk_firsts *f,
                                  sk_masks *m)
{
    uint64_t q = 0, bs = 0, ob = 0, cb = 0, fm = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = s[i];
        uint64_t bit = 1ull << i;
        q |= b == '"' ? bit : 0;
        bs |= b == '\\' ? bit : 0;
        ob |= (b | 0x20) == '{' ? bit : 0;
        cb |= (b | 0x20) == '}' ? bit : 0;
        if (nf != 0)
            fm |= (b == f->b[0] || b == f->b[1] || b == f->b[2] || b == f->b[3]) ? bit : 0;
    }
    m->q = q;
    m->bs = bs;
    m->ob = ob;
    m->cb = cb;
    m->f = fm;
    m->quiet = false;
    m->bs_seen = true;
}

/* One block's brackets and candidates, given the depth at its start.
 * Returns 0 to go on to the next block (*depth updated), 1 when a candidate
 * at depth 1 was found (*at its bit index), 2 when the walked object closed
 * (*at the closer's bit index), 3 when nesting passed the limit. Depths come
 * from popcounts of the brackets below a bit, so the usual block costs no
 * unpredictable branch per bracket.
 *
 * Two of them: walk_block, and walk_block_keys for a walk given the keys
 * (sk_firsts.key), which passes over a candidate at depth 1 that can be
 * none of them (sk_not_a_key; fewer than 16 bytes from the end, every
 * candidate stops). Written once, as WALK_BLOCK: PASSES(i) says whether
 * the candidate at bit i is passed over. Only the AVX-512 walk is given
 * the keys: the others measured no faster with them, and AVX2's slower
 * (its loop's registers spill). A macro, not one function with a constant flag
 * and the keys' parameters: that made gcc spill the AVX2 loop's state too
 * (next_avx2_1 1289 against 1263 instructions, 149 stack accesses against 123). */
#define WALK_BLOCK(NAME, PARAMS, PASSES)                                                    \
static inline __attribute__((always_inline)) int NAME(uint64_t ob, uint64_t cb,             \
                                                     uint64_t cand, int *depth,             \
                                                     int *at PARAMS)                        \
{                                                                                           \
    int d = *depth, opens = __builtin_popcountll(ob), closes = __builtin_popcountll(cb);    \
    /* the usual block first: no candidate, no closer that could end the                    \
     * object, the nesting in bounds (what the general path below would                     \
     * conclude, without its loops) */                                                      \
    if (__builtin_expect(cand == 0 && closes < d && d + opens <= JS_MAX_DEPTH, 1)) {        \
        *depth = d + opens - closes;                                                        \
        return 0;                                                                           \
    }                                                                                       \
    if (d + opens > JS_MAX_DEPTH) {                                                         \
        /* rare: walk bit by bit to see whether the limit is really passed */               \
        for (uint64_t w = ob | cb | cand; w != 0; w &= w - 1) {                             \
            uint64_t bit = w & (0 - w);                                                     \
            if (ob & bit) {                                                                 \
                if (++d > JS_MAX_DEPTH)                                                     \
                    return 3;                                                               \
            } else if (cb & bit) {                                                          \
                if (--d == 0) {                                                             \
                    *at = __builtin_ctzll(bit);                                             \
                    return 2;                                                               \
                }                                                                           \
            } else if (d == 1 && !PASSES(__builtin_ctzll(bit))) {                           \
                *at = __builtin_ctzll(bit);                                                 \
                return 1;                                                                   \
            }                                                                               \
        }                                                                                   \
        *depth = d;                                                                         \
        return 0;                                                                           \
    }                                                                                       \
    uint64_t zero = 0; /* the closer that ends the walked object, if in this block */       \
    if (closes >= d) {                                                                      \
        int k = 0;                                                                          \
        for (uint64_t w = cb; w != 0; w &= w - 1) {                                         \
            uint64_t bit = w & (0 - w);                                                     \
            if (d + __builtin_popcountll(ob & (bit - 1)) - ++k == 0) {                      \
                zero = bit;                                                                 \
                break;                                                                      \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    for (uint64_t w = zero ? cand & (zero - 1) : cand; w != 0; w &= w - 1) {                \
        uint64_t below = (w & (0 - w)) - 1;                                                 \
        if (d + __builtin_popcountll(ob & below) - __builtin_popcountll(cb & below) == 1 && \
            !PASSES(__builtin_ctzll(w))) {                                                  \
            *at = __builtin_ctzll(w);                                                       \
            return 1;                                                                       \
        }                                                                                   \
    }                                                                                       \
    if (zero) {                                                                             \
        *at = __builtin_ctzll(zero);                                                        \
        return 2;                                                                           \
    }                                                                                       \
    *depth = d + opens - closes;                                                            \
    return 0;                                                                               \
}

#define NEVER(i) false
#define KEY_PARAMS , const uint8_t *s, const uint8_t *end, const sk_firsts *f
/* walk_block_keys's PASSES (an inline function: spelled as a macro
 * expression, gcc kept the walk's loop state on the stack). */
static inline __attribute__((always_inline)) bool passed(const uint8_t *s, int i,
                                                        const uint8_t *end, const sk_firsts *f)
{
    return f->nk != 0 && end - (s + i) >= 16 && sk_not_a_key(s + i, f);
}
#define NOT_A_KEY(i) passed(s, i, end, f)
WALK_BLOCK(walk_block, , NEVER)
WALK_BLOCK(walk_block_keys, KEY_PARAMS, NOT_A_KEY)

/* Ends a block's walk: 1 returns the candidate (keeping the block's masks
 * in the cursor), 2 the closed object, 3 a walk too deep; 0 goes on. KEYS
 * (a constant): the walk is given f's keys (walk_block_keys). */
static inline __attribute__((always_inline)) int
walk_end(sk_cursor *c, const uint8_t *s, size_t n, uint64_t ob, uint64_t cb, uint64_t cand,
         uint64_t in_carry, uint64_t esc_carry, int *depth, bool keys, const sk_firsts *f)
{
    int at = 0, r = keys ? walk_block_keys(ob, cb, cand, depth, &at, s, c->end, f)
                         : walk_block(ob, cb, cand, depth, &at);
    if (r == 1) {
        c->blk = s;
        c->blk_n = n;
        c->ob = ob;
        c->cb = cb;
        c->cand = cand;
        c->in_carry = in_carry;
        c->esc_carry = esc_carry;
        c->p = s + at;
    } else if (r == 2) {
        c->closed = s + at + 1;
    }
    return r;
}

/* One block of LEN bytes at s (LEN <= 64) in WALK_BODY, N of them readable
 * (LEN, or 65 for a whole block whose next byte a width reads: LA below):
 * its masks, strings and candidates, then walk_end; returns or stops as the
 * walk ends. */
#define WALK_STEP(MASKS, PXOR, NF, N, LEN, KEYS)                                        \
    {                                                                                   \
        size_t n = (LEN);                                                               \
        MASKS(s, (N), NF, &want, &m);                                                   \
        uint64_t q = m.q, in, cand = 0;                                                 \
        /* a quiet block after no escape has none of its own and no candidate */     \
        if ((!m.quiet && m.bs_seen) || esc_carry != 0)                                  \
            q &= ~bk_escaped_bits(m.bs, &esc_carry);                                    \
        in = PXOR(q) ^ in_carry;                                                        \
        /* the next block's carry: in's last bit, all over (one instruction; */         \
        /* from q's parity instead, the blocks' prefix XORs would not wait for */       \
        /* each other, but that costs three more and measured 1-4% slower) */           \
        in_carry = (uint64_t)((int64_t)in >> 63);                                       \
        if (!m.quiet) {                                                                 \
            /* a string opener is a quote inside the in-string mask; its first */     \
            /* byte is the next bit (for bit 63, in the next block: always a */        \
            /* candidate) */                                                            \
            cand = NF != 0 ? q & in & ((m.f | m.bs) >> 1 | 1ull << 63) : 0;             \
        }                                                                               \
        r = walk_end(c, s, n, m.ob & ~in, m.cb & ~in, cand, in_carry, esc_carry,        \
                     &depth, (KEYS) && (NF) != 0, f);                                   \
        if (r == 1)                                                                     \
            return c->p;                                                                \
        if (r != 0)                                                                     \
            goto stop;                                                                  \
        s += n;                                                                         \
    }

/* The walk, shared by every width. MASKS and PXOR name the width's block
 * and prefix-XOR functions. A call resuming after the start of the block
 * its last candidate came from, up to its end, starts from that block's
 * masks (the bits before the resume point cleared) and its carries: the
 * masks say where strings are, so the resume point may be inside the
 * candidate's string (a scanner that saw it is no key goes on from its
 * second byte). Elsewhere the resume point is at depth 1 outside strings
 * by contract. */
#define WALK_BODY(MASKS, PXOR, WANT_T, WANT_PREP, NF, LA, KEYS)                        \
    const uint8_t *s = c->p, *end = c->end;                                             \
    /* the wanted bytes as the width compares them, made once a call (NF of */         \
    /* them, a constant: 0 when f is NULL) */                                           \
    WANT_T want;                                                                        \
    WANT_PREP(f, NF, &want);                                                            \
    int depth = 1, r;                                                                   \
    uint64_t in_carry = c->in_first ? ~0ull : 0, esc_carry = 0;                         \
    sk_masks m;                                                                         \
    if (c->blk != NULL && c->p >= c->blk && c->p <= c->blk + c->blk_n) {                \
        s = c->blk + c->blk_n;                                                          \
        in_carry = c->in_carry;                                                         \
        esc_carry = c->esc_carry;                                                       \
        if (c->p < s) {                                                                 \
            uint64_t keep = ~0ull << (c->p - c->blk);                                   \
            r = walk_end(c, c->blk, c->blk_n, c->ob & keep, c->cb & keep,               \
                         c->cand & keep, in_carry, esc_carry, &depth, (KEYS) && (NF) != 0, f); \
            if (r == 1)                                                                 \
                return c->p;                                                            \
            if (r != 0)                                                                 \
                goto stop;                                                              \
        }                                                                               \
    }                                                                                   \
    /* whole blocks, then the tail: the block code is written for n == 64 */          \
    /* in the loop (and LA bytes after it: 0, or 1 for a width that reads */           \
    /* the byte after a block), so its loads need no test for the end; two a */      \
    /* turn (one test of the end for both: measured 15-20% faster than one a */        \
    /* turn) */                                                                         \
    while ((size_t)(end - s) >= 128 + (LA)) {                                           \
        WALK_STEP(MASKS, PXOR, NF, 64 + (LA), 64, KEYS)                                 \
        WALK_STEP(MASKS, PXOR, NF, 64 + (LA), 64, KEYS)                                 \
    }                                                                                   \
    if ((size_t)(end - s) >= 64 + (LA)) {                                               \
        WALK_STEP(MASKS, PXOR, NF, 64 + (LA), 64, KEYS)                                 \
    }                                                                                   \
    if (s < end) {                                                                      \
        size_t tail = (size_t)(end - s);                                                \
        WALK_STEP(MASKS, PXOR, NF, tail, tail, KEYS)                                    \
    }                                                                                   \
    c->closed = NULL;                                                                   \
    return NULL;                                                                        \
    stop:                                                                               \
    if (r == 3)                                                                         \
        c->closed = NULL;                                                               \
    return NULL;

/* One instance of the walk: NAME_NF, for NF wanted bytes. */
#define WALK_FN(NAME, ATTR, MASKS, PXOR, WANT_T, WANT_PREP, NF, LA, KEYS)               \
    ATTR static const uint8_t *NAME##_##NF(sk_cursor *c, const sk_firsts *f)             \
    {                                                                                   \
        WALK_BODY(MASKS, PXOR, WANT_T, WANT_PREP, NF, LA, KEYS)                         \
    }

/* The walk's four instances for a width: NAME_0 (no wanted bytes: f is
 * NULL), NAME_1, NAME_2 and NAME_4, and their table; KEYS 1: the ones with
 * wanted bytes pass over candidates that are none of f's keys. */
#define WALK_FNS(NAME, ATTR, MASKS, PXOR, WANT_T, WANT_PREP, LA, KEYS)                  \
    WALK_FN(NAME, ATTR, MASKS, PXOR, WANT_T, WANT_PREP, 0, LA, KEYS)                    \
    WALK_FN(NAME, ATTR, MASKS, PXOR, WANT_T, WANT_PREP, 1, LA, KEYS)                    \
    WALK_FN(NAME, ATTR, MASKS, PXOR, WANT_T, WANT_PREP, 2, LA, KEYS)                    \
    WALK_FN(NAME, ATTR, MASKS, PXOR, WANT_T, WANT_PREP, 4, LA, KEYS)                    \
    static const sk_next_fn NAME[4] = {NAME##_0, NAME##_1, NAME##_2, NAME##_4};

typedef const uint8_t *(*sk_next_fn)(sk_cursor *c, const sk_firsts *f);

WALK_FNS(next_portable, , masks_portable, bk_prefix_xor_portable, sk_firsts, want_copy, 0, 0)

#if BK_X86

/* ---- SSE2: four 16-byte lanes */

__attribute__((target("sse2"))) static inline void masks_sse2(const uint8_t *s, size_t n, int nf,
                                                              const sk_firsts *f, sk_masks *m)
{
    uint8_t buf[64];
    BK_TAIL_COPY(s, n, buf);
    __m128i v[4];
    for (int i = 0; i < 4; i++)
        v[i] = _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * i));
    __m128i lo = _mm_set1_epi8(0x20);
#define EQ4(expr) bk_mask16x4(expr(v[0]), expr(v[1]), expr(v[2]), expr(v[3]))
#define QUOTE(x) _mm_cmpeq_epi8((x), _mm_set1_epi8('"'))
#define BSL(x) _mm_cmpeq_epi8((x), _mm_set1_epi8('\\'))
#define OPEN(x) _mm_cmpeq_epi8(_mm_or_si128((x), lo), _mm_set1_epi8('{'))
#define CLOSE(x) _mm_cmpeq_epi8(_mm_or_si128((x), lo), _mm_set1_epi8('}'))
    m->q = EQ4(QUOTE);
    m->bs = EQ4(BSL);
    m->ob = EQ4(OPEN);
    m->cb = EQ4(CLOSE);
    m->f = 0;
    m->quiet = false;
    if (nf != 0) {
#define FIRST(x)                                                                        \
    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8((x), _mm_set1_epi8((char)f->b[0])),           \
                              _mm_cmpeq_epi8((x), _mm_set1_epi8((char)f->b[1]))),          \
                 _mm_or_si128(_mm_cmpeq_epi8((x), _mm_set1_epi8((char)f->b[2])),           \
                              _mm_cmpeq_epi8((x), _mm_set1_epi8((char)f->b[3]))))
        m->f = EQ4(FIRST);
#undef FIRST
    }
    m->bs_seen = true;
#undef EQ4
#undef QUOTE
#undef BSL
#undef OPEN
#undef CLOSE
}

WALK_FNS(next_sse2, __attribute__((target("sse2"))), masks_sse2, bk_prefix_xor_portable, sk_firsts,
         want_copy, 0, 0)

/* ---- AVX2: two 32-byte lanes */

/* A vector width's wanted bytes: NAME, four vectors of one byte each (all
 * 0 when none are wanted), and NAME_prep, which makes them. */
#define WANT_VECTORS(NAME, ATTR, VEC, SET1)                                              \
    typedef struct {                                                                    \
        VEC b0, b1, b2, b3;                                                             \
    } NAME;                                                                             \
    ATTR static inline void NAME##_prep(const sk_firsts *f, int nf, NAME *w)             \
    {                                                                                   \
        w->b0 = SET1((char)(nf != 0 ? f->b[0] : 0));                                    \
        w->b1 = SET1((char)(nf != 0 ? f->b[1] : 0));                                    \
        w->b2 = SET1((char)(nf != 0 ? f->b[2] : 0));                                    \
        w->b3 = SET1((char)(nf != 0 ? f->b[3] : 0));                                    \
    }

WANT_VECTORS(want_avx2, __attribute__((target("avx2"))), __m256i, _mm256_set1_epi8)

/* The bytes of x that are one of the nf (1, 2 or 4) wanted bytes. */
__attribute__((target("avx2"))) static inline __m256i want_eq_avx2(__m256i x, const want_avx2 *w,
                                                                   int nf)
{
    __m256i e = _mm256_cmpeq_epi8(x, w->b0);
    if (nf >= 2)
        e = _mm256_or_si256(e, _mm256_cmpeq_epi8(x, w->b1));
    if (nf >= 4)
        e = _mm256_or_si256(e, _mm256_or_si256(_mm256_cmpeq_epi8(x, w->b2),
                                               _mm256_cmpeq_epi8(x, w->b3)));
    return e;
}

/* A block's masks, two 32-byte halves each. A whole block with the byte
 * after it (n == 65: the walk's LA is 1) may be quiet (sk_masks), told
 * apart in the vectors before its masks are made: no backslash in it, and
 * no quote followed by a wanted byte, or by a backslash after its last
 * byte (a second pair of loads, one byte on); bs and f are made only for
 * the others. The last block of a walk (n <= 64) makes them all, from a
 * copy padded with spaces when it is short. What it is worth, in
 * `JS_SIMD=avx2 triage-bench triage` on an AVX-512 machine: the late layout
 * 371-381 ns against 439-448 with the five masks in every block, the first
 * 89-90 against 85 (small objects pay for the test); README has the rest. */
__attribute__((target("avx2"))) static inline void masks_avx2(const uint8_t *s, size_t n, int nf,
                                                              const want_avx2 *w, sk_masks *m)
{
    bool look = n > 64; /* the byte after the block is there */
    uint8_t buf[64];
    if (!look)
        BK_TAIL_COPY(s, n, buf);
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)s);
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
    __m256i lo = _mm256_set1_epi8(0x20), bsl = _mm256_set1_epi8('\\');
    __m256i qa = _mm256_cmpeq_epi8(a, _mm256_set1_epi8('"'));
    __m256i qb = _mm256_cmpeq_epi8(b, _mm256_set1_epi8('"'));
    __m256i ba = _mm256_cmpeq_epi8(a, bsl), bb = _mm256_cmpeq_epi8(b, bsl);
    __m256i la = _mm256_or_si256(a, lo), lb = _mm256_or_si256(b, lo);
    m->q = bk_mask32x2(qa, qb);
    m->ob = bk_mask32x2(_mm256_cmpeq_epi8(la, _mm256_set1_epi8('{')),
                        _mm256_cmpeq_epi8(lb, _mm256_set1_epi8('{')));
    m->cb = bk_mask32x2(_mm256_cmpeq_epi8(la, _mm256_set1_epi8('}')),
                        _mm256_cmpeq_epi8(lb, _mm256_set1_epi8('}')));
    m->quiet = false;
    m->bs_seen = true;
    if (look) {
        __m256i loud = _mm256_or_si256(ba, bb);
        if (nf != 0) {
            /* the byte after each quote: a wanted one, or (after the
             * block's last byte, where its own backslashes do not tell) a
             * backslash */
            __m256i a1 = _mm256_loadu_si256((const __m256i *)(const void *)(s + 1));
            __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(s + 33));
            __m256i na = want_eq_avx2(a1, w, nf);
            __m256i nb = _mm256_or_si256(want_eq_avx2(b1, w, nf), _mm256_cmpeq_epi8(b1, bsl));
            loud = _mm256_or_si256(loud, _mm256_or_si256(_mm256_and_si256(qa, na),
                                                         _mm256_and_si256(qb, nb)));
        }
        if (_mm256_testz_si256(loud, loud)) {
            m->quiet = true;
            m->bs = 0; /* what it is (a block after an escape reads it) */
            return;
        }
    }
    m->bs = bk_mask32x2(ba, bb);
    m->f = nf != 0 ? bk_mask32x2(want_eq_avx2(a, w, nf), want_eq_avx2(b, w, nf)) : 0;
}

WALK_FNS(next_avx2, __attribute__((target("avx2,pclmul,bmi,bmi2,popcnt"))), masks_avx2,
         bk_prefix_xor_clmul, want_avx2, want_avx2_prep, 1, 0)

/* ---- AVX-512BW: one 64-byte lane, tails by masked load */

WANT_VECTORS(want_avx512, __attribute__((target("avx512f,avx512bw"))), __m512i, _mm512_set1_epi8)

__attribute__((target("avx512f,avx512bw"))) static inline void
masks_avx512(const uint8_t *s, size_t n, int nf, const want_avx512 *w, sk_masks *m)
{
    __m512i v = n == 64 ? _mm512_loadu_si512((const void *)s)
                        : _mm512_maskz_loadu_epi8((__mmask64)((1ull << n) - 1), (const void *)s);
    __m512i lo = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    m->q = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"'));
    __mmask64 bs = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\'));
    m->bs_seen = !_kortestz_mask64_u8(bs, bs);
    m->bs = m->bs_seen ? (uint64_t)bs : 0;
    m->ob = _mm512_cmpeq_epi8_mask(lo, _mm512_set1_epi8('{'));
    m->cb = _mm512_cmpeq_epi8_mask(lo, _mm512_set1_epi8('}'));
    m->f = 0;
    m->quiet = false;
    /* compares into masks all queue on one port: only the ones needed */
    if (nf >= 1)
        m->f = _mm512_cmpeq_epi8_mask(v, w->b0);
    if (nf >= 2)
        m->f |= _mm512_cmpeq_epi8_mask(v, w->b1);
    if (nf >= 4)
        m->f |= _mm512_cmpeq_epi8_mask(v, w->b2) | _mm512_cmpeq_epi8_mask(v, w->b3);
}

WALK_FNS(next_avx512, __attribute__((target("avx512f,avx512bw,pclmul,bmi,bmi2,popcnt"))),
         masks_avx512, bk_prefix_xor_clmul, want_avx512, want_avx512_prep, 0, 1)

#endif /* BK_X86 */

/* The chosen width's table (NULL until sk_init runs: the first walk
 * chooses then, as json.h's functions do, so a program that never calls it
 * still walks with the widest code). Written whole, to the same value by
 * any thread. */
static _Atomic(const sk_next_fn *) next_tab = NULL;
static _Atomic(const char *) impl_name = "portable";

void sk_init(void)
{
    const char *want = js_init(); /* js_init honours JS_SIMD and the CPU */
    const sk_next_fn *tab = next_portable;
    const char *name = "portable";
#if BK_X86
    /* the wide walks are compiled for these too (every CPU with AVX2 has
     * them; the check keeps an odd one on SSE2) */
    bool extras = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
    if (strcmp(want, "avx512") == 0 && extras) {
        tab = next_avx512;
        name = "avx512";
    } else if (strcmp(want, "avx2") == 0 && extras) {
        tab = next_avx2;
        name = "avx2";
    } else if (strcmp(want, "sse2") == 0 || strcmp(want, "avx2") == 0 ||
               strcmp(want, "avx512") == 0) {
        tab = next_sse2;
        name = "sse2";
    }
#endif
    impl_name = name;
    next_tab = tab;
}

/* The walk for f: the instance that compares as many wanted bytes. */
static inline const uint8_t *next_impl(sk_cursor *c, const sk_firsts *f)
{
    const sk_next_fn *tab = next_tab;
    if (__builtin_expect(tab == NULL, 0)) {
        sk_init();
        tab = next_tab;
    }
    return tab[f == NULL ? 0 : f->n <= 1 ? 1 : f->n == 2 ? 2 : 3](c, f);
}

const char *sk_impl_name(void) { return impl_name; }

const uint8_t *sk_next_walk(sk_cursor *c, const sk_firsts *f)
{
    if (c->first != NULL) {
        /* resumed after the first member's key, or at its second byte: the
         * blocks then start inside its string (cheaper than finding its end
         * first: 2-3 ns a scanner that met a candidate there) */
        const uint8_t *first = c->first;
        c->first = NULL;
        if (c->p <= first + 1) {
            c->p = first + 1;
            c->in_first = true;
            const uint8_t *k = next_impl(c, f);
            c->in_first = false;
            return k;
        }
    }
    return next_impl(c, f);
}

void sk_want_keys(sk_firsts *f, const js_str *keys, int n)
{
    f->nk = 0;
    if (n > SK_KEYS)
        return;
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < keys[k].n; i++) {
            if (js_escaped_byte((uint8_t)keys[k].p[i]))
                return;
        }
    for (int k = 0; k < n; k++) {
        char *w = f->key[k];
        /* '"', the key, '"'; or '"' and the key's first SK_KEY_BYTES - 1 */
        bool whole = keys[k].n <= SK_KEY_BYTES - 2;
        size_t m = whole ? keys[k].n : SK_KEY_BYTES - 1;
        memset(w, 0, sizeof f->key[k]);
        w[0] = '"';
        memcpy(w + 1, keys[k].p, m);
        if (whole)
            w[1 + m++] = '"';
        f->klen[k] = (uint8_t)(1 + m);
    }
    f->nk = (uint8_t)n;
}

const uint8_t *sk_container_end(const uint8_t *open, const uint8_t *end)
{
    sk_cursor c;
    sk_begin(&c, open, end);
    next_impl(&c, NULL);
    return c.closed;
}

const uint8_t *sk_string_end(const uint8_t *p, const uint8_t *end)
{
    p++;
    for (;;) {
        p = js_find_string_special(p, end);
        if (p >= end)
            return NULL;
        if (*p == '"')
            return p + 1;
        p += *p == '\\' ? 2 : 1; /* a control byte or non-ASCII: not ours to judge here */
        if (p >= end)
            return NULL;
    }
}

const uint8_t *sk_value_end(const uint8_t *p, const uint8_t *end)
{
    if (p >= end)
        return NULL;
    if (*p == '"')
        return sk_string_end(p, end);
    if (*p == '{' || *p == '[')
        return sk_container_end(p, end);
    /* a number or a literal: it starts as one (else it is no value: an
     * empty view must never pass for one) and ends at the first byte that
     * cannot be part of one; reaching end means it may have been cut short */
    if (!((*p >= '0' && *p <= '9') || *p == '-' || *p == 't' || *p == 'f' || *p == 'n'))
        return NULL;
    for (; p < end; p++) {
        uint8_t b = *p;
        if (!((b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || b == '-' || b == '+' ||
              b == '.' || b == 'E'))
            return p;
    }
    return NULL;
}

int sk_key_slow(const uint8_t *p, const uint8_t *end, const js_str *keys, int nkeys,
                const uint8_t **val)
{
    js_ctx ctx;
    js_ctx_init(&ctx, p, NULL);
    bool esc;
    const uint8_t *q = js_string_raw(&ctx, p, end, &esc);
    if (q == NULL)
        return -3;
    size_t raw = (size_t)(q - 1 - (p + 1));
    int which = -1;
    for (int i = 0; i < nkeys; i++)
        if (js_unescaped_is(p + 1, raw, keys[i].p, keys[i].n))
            which = i;
    const uint8_t *after = js_ws(q, end);
    if (which < 0 || after >= end || *after != ':') {
        *val = q;
        return -1;
    }
    *val = js_ws(after + 1, end);
    return which;
}
