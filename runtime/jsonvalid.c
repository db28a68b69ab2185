/* jsonvalid.c: the one-pass block validator of jsonvalid.h, in four widths.
 *
 * Two layers. Per 64-byte block, three masks (quotes, backslashes, bytes
 * below 0x20 or above 0x7F) and a prefix XOR of the unescaped quotes give
 * the in-string mask. A string holding a backslash, a control byte or a
 * non-ASCII byte (few do) is read whole by json.h's js_string_raw, the
 * reference for escapes, surrogates, UTF-8 and control bytes; the others
 * need nothing more. What is left are the tokens: every byte outside
 * strings and every opening quote (one token for the whole string). A
 * small automaton (the tables below: the state says what may come next and
 * whether we are in an object or an array; the bracket stack says what to
 * go back to) reads only those, one table step each; a number or literal
 * is read where it starts (js_number_raw for numbers) and its bytes are
 * skipped. A 4 KB message has some 600 tokens, so most of its bytes (string
 * contents) cost a share of three vector compares.
 *
 * The strings' step (jv_strings) is shared by every width; the tokens are
 * read a block at a time (jv_block) by the portable, SSE2 and AVX2 walks,
 * and a chunk of blocks at a time by the AVX-512 walk, which gathers their
 * positions with VBMI2 (jv_run, below); only the masks differ otherwise.
 * How the end of input is met, in one place: the masks of the last
 * block cover its n < 64 bytes (AVX-512 loads them with a masked load, the
 * others copy them into a buffer padded with spaces) and the lanes past n
 * are masked off. Everything read one byte at a time (tokens, numbers,
 * the strings json.h reads, the key sought) is read from the input itself,
 * bounded by end.
 */
#include "jsonvalid.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "blocks.h"
#include "skip.h"

typedef struct {
    uint64_t q;   /* '"' */
    uint64_t bs;  /* '\\' */
    uint64_t ctl; /* below 0x20 or 0x80 and above: control bytes, and non-ASCII */
    uint64_t f;   /* the sought key's first byte (0 when nothing is sought) */
} jv_masks;

/* The automaton's states: what the next token may be. O_ states are inside
 * an object, A_ states inside an array. */
enum {
    S_ERR,
    S_O_FIRST, /* after '{': a key or '}' */
    S_O_KEY,   /* after ',' in an object: a key */
    S_O_COLON, /* after a key: ':' */
    S_O_VALUE, /* after ':': a value (and the start: jv_valid lets only '{' or '[' in) */
    S_O_AFTER, /* after a member's value: ',' or '}' */
    S_A_FIRST, /* after '[': a value or ']' */
    S_A_VALUE, /* after ',' in an array: a value */
    S_A_AFTER, /* after an element: ',' or ']' */
    S_DONE,    /* after the text's value: nothing */
    S_COUNT
};

/* Token classes, from the byte. */
enum { C_BAD, C_WS, C_OPEN_O, C_CLOSE_O, C_OPEN_A, C_CLOSE_A, C_COLON, C_COMMA, C_STRING, C_ATOM, C_COUNT };

/* The transitions, written as next[state][class] (0: the token may not
 * come here), and run as one 64-bit word per byte: six bits per state, at
 * bits 6*state, holding 6 x the next state, so that a step is one shift and
 * one mask of a word loaded from the byte alone (the loads do not wait on
 * the state: only the shift does). S_ERR's field is 0 in every word, so an
 * error sticks and is checked once a block. Bit 63 marks the bytes with work
 * besides (brackets, numbers and literals); a closer's field only says it
 * may come (1): its next state comes from the stack. */
#define W_SPECIAL (1ull << 63)

static uint64_t jv_word[256];
/* The same with the quote special too: the index walk's while a member is
 * sought (a string may be its key). */
static uint64_t jv_word_seek[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_build(void)
{
    uint8_t next[S_COUNT][C_COUNT], cls[256];
    memset(next, 0, sizeof next);
    memset(cls, C_BAD, sizeof cls);
    cls[' '] = cls['\t'] = cls['\n'] = cls['\r'] = C_WS;
    cls['{'] = C_OPEN_O;
    cls['}'] = C_CLOSE_O;
    cls['['] = C_OPEN_A;
    cls[']'] = C_CLOSE_A;
    cls[':'] = C_COLON;
    cls[','] = C_COMMA;
    cls['"'] = C_STRING;
    cls['-'] = cls['t'] = cls['f'] = cls['n'] = C_ATOM;
    for (int c = '0'; c <= '9'; c++)
        cls[c] = C_ATOM;
    for (int s = S_ERR + 1; s < S_COUNT; s++)
        next[s][C_WS] = (uint8_t)s;
    /* a value: open a container, or a string or a number/literal after
     * which comes the state's AFTER */
    static const uint8_t value_states[] = {S_O_VALUE, S_A_FIRST, S_A_VALUE};
    for (size_t k = 0; k < sizeof value_states; k++) {
        uint8_t s = value_states[k], after = s == S_O_VALUE ? S_O_AFTER : S_A_AFTER;
        next[s][C_OPEN_O] = S_O_FIRST;
        next[s][C_OPEN_A] = S_A_FIRST;
        next[s][C_STRING] = after;
        next[s][C_ATOM] = after;
    }
    next[S_O_FIRST][C_STRING] = S_O_COLON; /* keys: see jv_block for the one sought */
    next[S_O_KEY][C_STRING] = S_O_COLON;
    next[S_O_FIRST][C_CLOSE_O] = 1;
    next[S_O_AFTER][C_CLOSE_O] = 1;
    next[S_A_FIRST][C_CLOSE_A] = 1;
    next[S_A_AFTER][C_CLOSE_A] = 1;
    next[S_O_COLON][C_COLON] = S_O_VALUE;
    next[S_O_AFTER][C_COMMA] = S_O_KEY;
    next[S_A_AFTER][C_COMMA] = S_A_VALUE;
    _Static_assert(S_COUNT * 6 <= 63, "six bits a state, bit 63 free");
    for (int b = 0; b < 256; b++) {
        uint8_t c = cls[b];
        uint64_t w = c == C_OPEN_O || c == C_OPEN_A || c == C_CLOSE_O || c == C_CLOSE_A || c == C_ATOM
                         ? W_SPECIAL
                         : 0;
        for (int st = 0; st < S_COUNT; st++)
            w |= (uint64_t)(next[st][c] * 6) << (6 * st);
        jv_word[b] = w;
        jv_word_seek[b] = w | (b == '"' ? W_SPECIAL : 0);
    }
}

/* What one block hands the next: kept apart from jv_state so that it can
 * live in registers (jv_state's byte stack may alias anything beside it). */
typedef struct {
    uint64_t in_carry, esc_carry; /* as in skip.c's walk */
    const uint8_t *str_open;      /* the last opening quote seen */
    const uint8_t *str_done;      /* the end of the last string json.h read whole */
    const uint8_t *skip_to;       /* the end of a number or literal read past the block */
    uint64_t state; /* 6 x the automaton's state */
    int depth;
} jv_carry;

typedef struct {
    const uint8_t *end;
    js_ctx ctx; /* for json.h's parsers, which judge the odd strings, numbers, literals */
    /* the member sought */
    jv_find *find;
    bool seeking;
    int watch_depth;         /* the found container's depth while it is open, else 0 */
    const uint8_t *watch_at; /* the found container's opener, until it is seen */
    uint8_t is_array[JS_MAX_DEPTH + 1];
} jv_state;

/* p at 't', 'f' or 'n': one past the literal lit (n bytes), or NULL. */
static inline const uint8_t *literal(const uint8_t *p, const uint8_t *end, const char *lit, size_t n)
{
    return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0 ? p + n : NULL;
}

/* A key at depth 1 at c, while seeking: the member, when it is the one. */
static void seek_key(jv_state *st, const uint8_t *c)
{
    /* skip.h's key parser: unescapes, compares, and steps over the ':' */
    const uint8_t *v;
    if (sk_key_slow(c, st->end, &st->find->key, 1, &v) != 0 || v >= st->end)
        return;
    st->seeking = false;
    st->find->val = v;
    if (*v == '{' || *v == '[')
        st->watch_at = v; /* its end comes when its closer does */
    else
        st->find->end = sk_value_end(v, st->end);
}

/* The special tokens' work, the same in both automaton loops (tokens,
 * jv_run), for the token c at t at depth *d.
 * An opener: one level deeper (-1 past the limit); the found member's
 * container, when it opens here, is watched for its closer. */
static inline __attribute__((always_inline)) int jv_open(jv_state *st, uint8_t c, const uint8_t *t, int *d)
{
    if (*d == JS_MAX_DEPTH)
        return -1;
    st->is_array[++*d] = c == '[';
    if (t == st->watch_at) {
        st->watch_at = NULL;
        st->watch_depth = *d;
    }
    return 0;
}

/* A closer: one level up; the next state (6 x), from what encloses it. */
static inline __attribute__((always_inline)) uint64_t jv_close(jv_state *st, const uint8_t *t, int *d)
{
    if (*d == st->watch_depth) {
        st->find->end = t + 1;
        st->watch_depth = 0;
    }
    --*d;
    return 6 * (*d == 0 ? S_DONE : st->is_array[*d] ? S_A_AFTER : S_O_AFTER);
}

/* A number or literal starting at t (c): json.h reads it (the reference
 * grammar); one past its end, or NULL when it is none. */
static inline __attribute__((always_inline)) const uint8_t *jv_scalar(jv_state *st, uint8_t c, const uint8_t *t)
{
    return c == 't'   ? literal(t, st->end, "true", 4)
           : c == 'f' ? literal(t, st->end, "false", 5)
           : c == 'n' ? literal(t, st->end, "null", 4)
                      : js_number_raw(&st->ctx, t, st->end);
}

/* The automaton over the tokens of w (bits of block s), in order; -1 at a
 * token that may not come (for the plain ones: *state becomes S_ERR, which
 * the caller checks once a block). */
static inline __attribute__((always_inline)) int tokens(jv_state *st, jv_carry *cy, const uint8_t *s,
                                                         uint64_t w, uint64_t *state_io, int *d_io)
{
    uint64_t state = *state_io;
    int d = *d_io;
    for (; w != 0; w &= w - 1) {
        size_t i = (unsigned)__builtin_ctzll(w);
        uint8_t c = s[i];
        uint64_t word = jv_word[c];
        uint64_t next = word >> state & 63;
        if (__builtin_expect((word & W_SPECIAL) != 0, 0)) {
            if (next == 0)
                return -1;
            if (c == '{' || c == '[') {
                if (jv_open(st, c, s + i, &d) < 0)
                    return -1;
            } else if (c == '}' || c == ']') {
                next = jv_close(st, s + i, &d);
            } else {
                /* a number or literal: its bytes are skipped (it ends
                 * before any quote, so within the tokens given) */
                const uint8_t *r = jv_scalar(st, c, s + i);
                if (r == NULL)
                    return -1;
                size_t k = (size_t)(r - s);
                if (k >= 64) {
                    cy->skip_to = r;
                    w = 1; /* the loop's step clears it: no token left here */
                } else {
                    /* clear the bits before r; the 1 stands in for the
                     * token the loop's step clears */
                    w = (w & ~0ull << k) | 1;
                }
            }
        }
        state = next;
    }
    *state_io = state;
    *d_io = d;
    return 0;
}

/* The strings of block s (n <= 64 bytes) and its tokens: -1 when a string
 * is not valid, else 0 with *tok_out the block's tokens (bits). */
static inline __attribute__((always_inline)) int jv_strings(jv_state *st, jv_carry *cy, const uint8_t *s,
                                                             size_t n, const jv_masks *m, uint64_t q,
                                                             uint64_t in, uint64_t *tok_out)
{
    const uint8_t *end = st->end;
    uint64_t valid = n == 64 ? ~0ull : (1ull << n) - 1;

    /* strings: a backslash outside one is no JSON; one holding a
     * backslash, a control byte or a non-ASCII byte (few do) is read whole
     * by json.h's js_string_raw, the reference for escapes, surrogates,
     * UTF-8 and control bytes, once, however many blocks it spans */
    if ((m->bs & ~in & valid) != 0)
        return -1;
    uint64_t oq = q & in;
    uint64_t odd = (m->bs | m->ctl) & in & valid;
    if (cy->str_done > s)
        odd &= cy->str_done - s >= 64 ? 0 : ~0ull << (cy->str_done - s);
    while (odd != 0) {
        unsigned x = (unsigned)__builtin_ctzll(odd);
        uint64_t before = oq & (x == 63 ? ~0ull : (2ull << x) - 1);
        const uint8_t *open = before != 0 ? s + 63 - __builtin_clzll(before) : cy->str_open;
        bool escaped;
        const uint8_t *r = open == NULL ? NULL : js_string_raw(&st->ctx, open, end, &escaped);
        if (r == NULL)
            return -1;
        cy->str_done = r;
        odd &= r - s >= 64 ? 0 : ~0ull << (r - s);
    }
    if (oq != 0)
        cy->str_open = s + 63 - __builtin_clzll(oq);

    /* the tokens: bytes outside strings, and opening quotes */
    uint64_t tok = ((~in & ~q) | (q & in)) & valid;
    if (cy->skip_to > s) {
        size_t k = (size_t)(cy->skip_to - s);
        tok &= k >= 64 ? 0 : ~0ull << k;
    }
    *tok_out = tok;
    return 0;
}

/* One block s of n <= 64 bytes of the input: 0 to go on, -1 when the text
 * is not valid (or not provably so). After the text's value (S_DONE) only
 * whitespace may follow. */
static inline __attribute__((always_inline)) int jv_block(jv_state *st, jv_carry *cy, const uint8_t *s,
                                                           size_t n, const jv_masks *m, uint64_t q,
                                                           uint64_t in)
{
    uint64_t tok;
    if (jv_strings(st, cy, s, n, m, q, in, &tok) < 0)
        return -1;
    uint64_t state = cy->state; /* 6 x the state's number */
    int d = cy->depth;
    /* while the member is sought: the strings that could start its key
     * (first byte the key's, or a backslash; for bit 63 that byte is in the
     * next block) split the tokens; each is, when the automaton stops just
     * before it expecting a key at depth 1, a key that may be the one */
    uint64_t cand = st->seeking ? q & in & ((m->f | m->bs) >> 1 | 1ull << 63) : 0;
    for (; cand != 0; cand &= cand - 1) {
        uint64_t at = cand & (0 - cand);
        if (tokens(st, cy, s, tok & (at - 1), &state, &d) < 0)
            return -1;
        tok &= ~(at - 1);
        if (d == 1 && (state == 6 * S_O_FIRST || state == 6 * S_O_KEY)) {
            seek_key(st, s + __builtin_ctzll(at));
            if (!st->seeking)
                break;
        }
    }
    if (tokens(st, cy, s, tok, &state, &d) < 0)
        return -1;
    if (state == S_ERR)
        return -1;
    cy->state = state;
    cy->depth = d;
    return 0;
}

/* A block's unescaped quotes (q) and in-string bits (in) from its masks m,
 * the carries (cy) moved on to the next block; PXOR is the prefix XOR. */
#define JV_QUOTES_IN(PXOR)                                                              \
    uint64_t q = m.q & ~bk_escaped_bits(m.bs, &cy.esc_carry);                           \
    uint64_t in = PXOR(q) ^ cy.in_carry;                                                \
    cy.in_carry ^= (uint64_t)0 - (uint64_t)(__builtin_popcountll(q) & 1)

/* The walk, shared by every width but AVX-512's: MASKS fills the block's
 * masks, PXOR is the prefix XOR. */
#define JV_WALK(MASKS, PXOR)                                                            \
    const uint8_t *s = p;                                                               \
    jv_masks m;                                                                         \
    jv_carry cy;                                                                        \
    memset(&cy, 0, sizeof cy);                                                          \
    cy.state = 6 * S_O_VALUE;                                                           \
    while (s < st->end) {                                                               \
        size_t n = (size_t)(st->end - s) < 64 ? (size_t)(st->end - s) : 64;             \
        MASKS(s, n, st->seeking ? (uint8_t)st->find->key.p[0] : 0, &m);               \
        JV_QUOTES_IN(PXOR);                                                             \
        if (jv_block(st, &cy, s, n, &m, q, in) < 0)                                     \
            return false;                                                               \
        s += n;                                                                         \
    }                                                                                   \
    return cy.state == 6 * S_DONE;

/* ---- the tokens by index (the AVX-512 walk)
 *
 * jv_block's automaton loops over each block's tokens: the loop's trip count
 * changes from block to block, and the CPU mispredicts each exit. The
 * AVX-512 walk instead gathers the positions of a chunk's tokens (JV_CHUNK
 * blocks, 4 KiB: offsets fit 16 bits) with VBMI2's compress, two
 * instructions a block whatever its tokens, and runs the automaton once over
 * them all (jv_run): the same steps in the same order, one loop a chunk.
 * On the bench's 4 KB messages, jv_valid takes a quarter less time (2066 ->
 * 1534 ns; chunks of 16 blocks: 1636). A number or literal is read
 * where it starts, as jv_block reads it; its bytes are tokens, one
 * position each, so they are stepped over by count, and one that runs on
 * into the next chunk sets skip_to, which masks its bytes there. */
#define JV_CHUNK (JV_CHUNK_BYTES / 64)
_Static_assert(JV_CHUNK_BYTES % 64 == 0 && JV_CHUNK_BYTES <= 65536, "whole blocks, 16-bit offsets");

typedef struct {
    const uint8_t *base; /* the chunk's first byte */
    size_t n;            /* positions gathered */
    /* offsets from base, with room for a whole vector stored past the last */
    uint16_t pos[JV_CHUNK * 64 + 32];
} jv_index;

/* The automaton over the chunk's tokens, which end at cend: 0 to go on, -1
 * when the text is not valid. */
static int jv_run(jv_state *st, jv_carry *cy, const jv_index *ix, const uint8_t *cend)
{
    uint64_t state = cy->state; /* 6 x the state's number */
    int d = cy->depth;
    const uint64_t *word_of = st->seeking ? jv_word_seek : jv_word;
    for (size_t i = 0; i < ix->n; i++) {
        const uint8_t *t = ix->base + ix->pos[i];
        uint8_t c = *t;
        uint64_t word = word_of[c];
        uint64_t next = word >> state & 63;
        if (__builtin_expect((word & W_SPECIAL) != 0, 0)) {
            if (next == 0)
                return -1;
            if (c == '"') {
                /* a quote is special only while seeking: a string where the
                 * automaton expects a key at depth 1, whose first byte is
                 * the key's or a backslash, may be the member */
                if (d == 1 && (state == 6 * S_O_FIRST || state == 6 * S_O_KEY) &&
                    t + 1 < st->end && (t[1] == (uint8_t)st->find->key.p[0] || t[1] == '\\')) {
                    seek_key(st, t);
                    if (!st->seeking)
                        word_of = jv_word;
                }
            } else if (c == '{' || c == '[') {
                if (jv_open(st, c, t, &d) < 0)
                    return -1;
            } else if (c == '}' || c == ']') {
                next = jv_close(st, t, &d);
            } else {
                const uint8_t *r = jv_scalar(st, c, t);
                if (r == NULL)
                    return -1;
                if (r > cend) {
                    /* it runs on into the next chunk: the rest of this one's
                     * tokens are its bytes */
                    cy->skip_to = r;
                    state = next;
                    break;
                }
                i += (size_t)(r - t) - 1;
            }
        }
        state = next;
    }
    if (state == S_ERR)
        return -1;
    cy->state = state;
    cy->depth = d;
    return 0;
}

/* ---- portable */

/* Eight bytes at a time (SWAR): per byte, the top bit of the result says
 * whether the byte is one sought; then the eight top bits are gathered by
 * a multiply (each lands on its own bit, no carries). */
static inline uint64_t swar_zero(uint64_t t) /* top bit of each byte of t that is 0 */
{
    const uint64_t lo7 = 0x7F7F7F7F7F7F7F7Full;
    return ~(((t & lo7) + lo7) | t) & ~lo7;
}

static inline uint64_t swar_gather(uint64_t top)
{
    return ((top >> 7) * 0x0102040810204080ull) >> 56;
}

static inline void masks_portable(const uint8_t *s, size_t n, uint8_t fb, jv_masks *m)
{
    uint64_t q = 0, bs = 0, ctl = 0, f = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ull, hi = 0x8080808080808080ull;
    for (size_t k = 0; k + 8 <= n; k += 8) {
        uint64_t x;
        memcpy(&x, s + k, 8);
        q |= swar_gather(swar_zero(x ^ ('"' * ones))) << k;
        bs |= swar_gather(swar_zero(x ^ ('\\' * ones))) << k;
        /* b < 0x20 (b + 0x60 stays below 0x80) or b >= 0x80 */
        ctl |= swar_gather((x | ~((x & ~hi) + 0x60 * ones)) & hi) << k;
        f |= swar_gather(swar_zero(x ^ (fb * ones))) << k;
    }
    size_t i = n & ~(size_t)7;
#else
    size_t i = 0;
#endif
    for (; i < n; i++) {
        uint8_t b = s[i];
        uint64_t bit = 1ull << i;
        q |= b == '"' ? bit : 0;
        bs |= b == '\\' ? bit : 0;
        ctl |= b < 0x20 || b >= 0x80 ? bit : 0;
        f |= b == fb ? bit : 0;
    }
    m->q = q;
    m->bs = bs;
    m->ctl = ctl;
    m->f = fb != 0 ? f : 0;
}

static bool walk_portable(jv_state *st, const uint8_t *p) { JV_WALK(masks_portable, bk_prefix_xor_portable) }

#if BK_X86

/* ---- SSE2: four 16-byte lanes */

__attribute__((target("sse2"))) static inline void masks_sse2(const uint8_t *s, size_t n, uint8_t fb, jv_masks *m)
{
    uint8_t buf[64];
    BK_TAIL_COPY(s, n, buf);
    __m128i v[4];
    for (int i = 0; i < 4; i++)
        v[i] = _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * i));
#define EQ4(expr) bk_mask16x4(expr(v[0]), expr(v[1]), expr(v[2]), expr(v[3]))
#define QUOTE(x) _mm_cmpeq_epi8((x), _mm_set1_epi8('"'))
#define BSL(x) _mm_cmpeq_epi8((x), _mm_set1_epi8('\\'))
/* a signed compare with 0x20 catches bytes < 0x20 and bytes >= 0x80 */
#define CTL(x) _mm_cmplt_epi8((x), _mm_set1_epi8(0x20))
    m->q = EQ4(QUOTE);
    m->bs = EQ4(BSL);
    m->ctl = EQ4(CTL);
#define FB(x) _mm_cmpeq_epi8((x), _mm_set1_epi8((char)fb))
    m->f = fb != 0 ? EQ4(FB) : 0;
#undef FB
#undef EQ4
#undef QUOTE
#undef BSL
#undef CTL
}

__attribute__((target("sse2"))) static bool walk_sse2(jv_state *st, const uint8_t *p)
{
    JV_WALK(masks_sse2, bk_prefix_xor_portable)
}

/* ---- AVX2: two 32-byte lanes */

__attribute__((target("avx2"))) static inline void masks_avx2(const uint8_t *s, size_t n, uint8_t fb, jv_masks *m)
{
    uint8_t buf[64];
    BK_TAIL_COPY(s, n, buf);
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)s);
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
#define EQ2(expr) bk_mask32x2(expr(a), expr(b))
#define QUOTE(x) _mm256_cmpeq_epi8((x), _mm256_set1_epi8('"'))
#define BSL(x) _mm256_cmpeq_epi8((x), _mm256_set1_epi8('\\'))
#define CTL(x) _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), (x))
    m->q = EQ2(QUOTE);
    m->bs = EQ2(BSL);
    m->ctl = EQ2(CTL);
#define FB(x) _mm256_cmpeq_epi8((x), _mm256_set1_epi8((char)fb))
    m->f = fb != 0 ? EQ2(FB) : 0;
#undef FB
#undef EQ2
#undef QUOTE
#undef BSL
#undef CTL
}

__attribute__((target("avx2,bmi,bmi2,pclmul"))) static bool walk_avx2(jv_state *st, const uint8_t *p)
{
    JV_WALK(masks_avx2, bk_prefix_xor_clmul)
}

/* ---- AVX-512BW: one 64-byte lane, the tail by masked load */

__attribute__((target("avx512f,avx512bw"))) static inline void masks_avx512(const uint8_t *s, size_t n,
                                                                            uint8_t fb, jv_masks *m)
{
    __m512i v = n == 64 ? _mm512_loadu_si512((const void *)s)
                        : _mm512_maskz_loadu_epi8((__mmask64)((1ull << n) - 1), (const void *)s);
    m->q = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"'));
    m->bs = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\'));
    m->ctl = _mm512_cmplt_epi8_mask(v, _mm512_set1_epi8(0x20));
    m->f = fb != 0 ? _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8((char)fb)) : 0;
}

/* Block s's token positions (bits of tok) onto the chunk's, two compresses
 * of the lanes' offsets from the chunk's start. */
__attribute__((target("avx512f,avx512bw,avx512vbmi2"))) static inline void jv_gather(jv_index *ix, const uint8_t *s,
                                                                                     uint64_t tok)
{
    const __m512i lanes = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17,
                                           16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    __m512i lo = _mm512_add_epi16(lanes, _mm512_set1_epi16((short)(s - ix->base)));
    __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(32));
    _mm512_storeu_si512(ix->pos + ix->n, _mm512_maskz_compress_epi16((__mmask32)tok, lo));
    ix->n += (size_t)__builtin_popcount((uint32_t)tok);
    _mm512_storeu_si512(ix->pos + ix->n, _mm512_maskz_compress_epi16((__mmask32)(tok >> 32), hi));
    ix->n += (size_t)__builtin_popcount((uint32_t)(tok >> 32));
}

__attribute__((target("avx512f,avx512bw,avx512vbmi2,bmi,bmi2,pclmul,popcnt"))) static bool
walk_avx512(jv_state *st, const uint8_t *p)
{
    const uint8_t *s = p;
    jv_masks m;
    jv_carry cy;
    memset(&cy, 0, sizeof cy);
    cy.state = 6 * S_O_VALUE;
    jv_index ix;
    while (s < st->end) {
        const uint8_t *cend = (size_t)(st->end - s) <= JV_CHUNK * 64 ? st->end : s + JV_CHUNK * 64;
        ix.base = s;
        ix.n = 0;
        while (s < cend) {
            size_t n = (size_t)(cend - s) < 64 ? (size_t)(cend - s) : 64;
            masks_avx512(s, n, 0, &m);
            JV_QUOTES_IN(bk_prefix_xor_clmul);
            uint64_t tok;
            if (jv_strings(st, &cy, s, n, &m, q, in, &tok) < 0)
                return false;
            jv_gather(&ix, s, tok);
            s += n;
        }
        if (jv_run(st, &cy, &ix, cend) < 0)
            return false;
    }
    return cy.state == 6 * S_DONE;
}

#endif /* BK_X86 */

typedef bool (*jv_walk_fn)(jv_state *st, const uint8_t *p);

/* The width follows json.h's choice, looked up per call (a pointer compare)
 * so that js_force_simd in tests switches it too. */
static jv_walk_fn walk_for(const char *name)
{
#if BK_X86
    /* the wide walks also use BMI1/2 (every AVX2 CPU has them; checked all the same) */
    bool extras = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2");
    /* the AVX-512 walk gathers tokens with VBMI2's compress (jv_gather):
     * an AVX-512 CPU without it takes the AVX2 walk */
    bool avx512 = strcmp(name, "avx512") == 0;
    if (avx512 && extras && __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("popcnt"))
        return walk_avx512;
    if ((avx512 || strcmp(name, "avx2") == 0) && extras)
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
    pthread_once(&tables_once, tables_build);
    jv_state st;
    memset(&st, 0, offsetof(jv_state, is_array));
    st.is_array[0] = 0;
    st.end = end;
    js_ctx_init(&st.ctx, p, NULL);
    st.find = find;
    st.seeking = find != NULL && find->key.n > 0 && *p == '{';
    if (!current_walk()(&st, p))
        return false;
    if (find != NULL && find->val != NULL && find->end == NULL)
        return false; /* cannot happen on valid input; never give half a view */
    return true;
}
