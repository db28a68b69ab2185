/* valid.c: the one-pass block validator of valid.h, in four widths.
 *
 * Two layers. Per 64-byte block, three masks (quotes, backslashes, bytes
 * below 0x20 or above 0x7F) settle the strings: the escaped bytes, the
 * in-string mask (a prefix XOR of the unescaped quotes), no raw control
 * byte inside a string, every escape valid, every run of non-ASCII bytes
 * valid UTF-8. What is left are the tokens: every byte outside strings and
 * every opening quote (one token for the whole string). A small automaton
 * (the tables below: the state says what may come next and whether we are
 * in an object or an array; the bracket stack says what to go back to)
 * reads only those, one table step each; a number or literal is read where
 * it starts and its bytes are skipped. A 4 KB Issue has some 600 tokens, so
 * most of its bytes (string contents) cost a share of three vector compares.
 *
 * One block step (jv_block) is shared by every width; only the masks
 * differ. How the end of input is met, in one place: the masks of the last
 * block cover its n < 64 bytes (AVX-512 loads them with a masked load, the
 * others copy them into a buffer padded with spaces) and the lanes past n
 * are masked off. Everything read one byte at a time (tokens, numbers,
 * escapes, UTF-8 runs, the key sought) is read from the input itself,
 * bounded by end.
 */
#include "valid.h"

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

typedef struct {
    uint8_t next[S_COUNT][C_COUNT];
    uint64_t word[256];
} jv_tables;

static jv_tables T;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_build(void)
{
    jv_tables t;
    uint8_t cls[256];
    memset(&t, 0, sizeof t);
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
        t.next[s][C_WS] = (uint8_t)s;
    /* a value: open a container, or a string or a number/literal after
     * which comes the state's AFTER */
    static const uint8_t value_states[] = {S_O_VALUE, S_A_FIRST, S_A_VALUE};
    for (size_t k = 0; k < sizeof value_states; k++) {
        uint8_t s = value_states[k], after = s == S_O_VALUE ? S_O_AFTER : S_A_AFTER;
        t.next[s][C_OPEN_O] = S_O_FIRST;
        t.next[s][C_OPEN_A] = S_A_FIRST;
        t.next[s][C_STRING] = after;
        t.next[s][C_ATOM] = after;
    }
    t.next[S_O_FIRST][C_STRING] = S_O_COLON; /* keys: see jv_block for the one sought */
    t.next[S_O_KEY][C_STRING] = S_O_COLON;
    t.next[S_O_FIRST][C_CLOSE_O] = 1;
    t.next[S_O_AFTER][C_CLOSE_O] = 1;
    t.next[S_A_FIRST][C_CLOSE_A] = 1;
    t.next[S_A_AFTER][C_CLOSE_A] = 1;
    t.next[S_O_COLON][C_COLON] = S_O_VALUE;
    t.next[S_O_AFTER][C_COMMA] = S_O_KEY;
    t.next[S_A_AFTER][C_COMMA] = S_A_VALUE;
    _Static_assert(S_COUNT * 6 <= 63, "six bits a state, bit 63 free");
    for (int b = 0; b < 256; b++) {
        uint8_t c = cls[b];
        uint64_t w = c == C_OPEN_O || c == C_OPEN_A || c == C_CLOSE_O || c == C_CLOSE_A || c == C_ATOM
                         ? W_SPECIAL
                         : 0;
        for (int st = 0; st < S_COUNT; st++)
            w |= (uint64_t)(t.next[st][c] * 6) << (6 * st);
        t.word[b] = w;
    }
    T = t;
}

/* What one block hands the next: kept apart from jv_state so that it can
 * live in registers (jv_state's byte stack may alias anything beside it). */
typedef struct {
    uint64_t in_carry, esc_carry; /* as in skip.c's walk */
    uint64_t hi_prev;             /* the last block ended inside a non-ASCII run */
    const uint8_t *skip_to;       /* the end of a number or literal read past the block */
    uint64_t state; /* 6 x the automaton's state */
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

/* The first byte at or after p that is not a digit (or end), eight bytes at
 * a time: a byte b is a digit when t = b ^ '0' is at most 9, so neither t
 * nor t + 0x76 has its top bit set. A carry out of a byte only reaches
 * bytes after the first non-digit, which ctz does not look at. */
static inline const uint8_t *digits(const uint8_t *p, const uint8_t *end)
{
    while (end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t t = x ^ 0x3030303030303030ull;
        uint64_t nd = ((t + 0x7676767676767676ull) | t) & 0x8080808080808080ull;
        if (nd != 0)
            return p + (__builtin_ctzll(nd) >> 3);
        p += 8;
    }
    while (p < end && is_digit(*p))
        p++;
    return p;
}

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
        p = digits(p + 1, end);
    else
        return NULL;
    if (p < end && *p == '.') {
        if (++p == end || !is_digit(*p))
            return NULL;
        p = digits(p + 1, end);
    }
    if (p < end && (*p | 0x20) == 'e') {
        if (++p < end && (*p == '+' || *p == '-'))
            p++;
        if (p == end || !is_digit(*p))
            return NULL;
        p = digits(p + 1, end);
    }
    return p;
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

/* A key at depth 1 at c, while seeking: the member, when it is the one. */
static void seek_key(jv_state *st, const uint8_t *c)
{
    const uint8_t *v = key_match(c, st->end, &st->find->key);
    if (v == NULL || v >= st->end)
        return;
    st->seeking = false;
    st->find->val = v;
    if (*v == '{' || *v == '[')
        st->watch_at = v; /* its end comes when its closer does */
    else
        st->find->end = sk_value_end(v, st->end);
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
        uint64_t word = T.word[c];
        uint64_t next = word >> state & 63;
        if (__builtin_expect((word & W_SPECIAL) != 0, 0)) {
            if (next == 0)
                return -1;
            if (c == '{' || c == '[') {
                if (d == JS_MAX_DEPTH)
                    return -1;
                st->is_array[++d] = c == '[';
                if (s + i == st->watch_at) {
                    st->watch_at = NULL;
                    st->watch_depth = d;
                }
            } else if (c == '}' || c == ']') {
                if (d == st->watch_depth) {
                    st->find->end = s + i + 1;
                    st->watch_depth = 0;
                }
                d--;
                next = 6 * (d == 0 ? S_DONE : st->is_array[d] ? S_A_AFTER : S_O_AFTER);
            } else {
                /* a number or literal: read it, and skip its bytes (it ends
                 * before any quote, so within the tokens given) */
                const uint8_t *r = atom_end(s + i, st->end);
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

/* One block s of n <= 64 bytes of the input: 0 to go on, -1 when the text
 * is not valid (or not provably so). After the text's value (S_DONE) only
 * whitespace may follow. */
static inline __attribute__((always_inline)) int jv_block(jv_state *st, jv_carry *cy, const uint8_t *s,
                                                           size_t n, const jv_masks *m, uint64_t esc,
                                                           uint64_t q, uint64_t in)
{
    const uint8_t *end = st->end;
    uint64_t valid = n == 64 ? ~0ull : (1ull << n) - 1;

    /* strings: no backslash outside one; inside, escapes valid and the
     * bytes of ctl non-ASCII, in valid UTF-8 runs */
    if ((m->bs & ~in & valid) != 0)
        return -1;
    for (uint64_t w = esc; w != 0; w &= w - 1)
        if (!escape_ok(st, s + __builtin_ctzll(w) - 1))
            return -1;
    uint64_t hi = m->ctl & in & valid;
    if ((hi | cy->hi_prev) != 0) {
        for (uint64_t w = hi; w != 0; w &= w - 1)
            if (s[__builtin_ctzll(w)] < 0x80)
                return -1; /* a raw control byte in a string */
        for (uint64_t w = hi & ~(hi << 1 | cy->hi_prev); w != 0; w &= w - 1)
            if (!utf8_run(s + __builtin_ctzll(w), end))
                return -1;
        cy->hi_prev = hi >> 63;
    }

    /* the tokens: bytes outside strings, and opening quotes */
    uint64_t tok = ((~in & ~q) | (q & in)) & valid;
    if (cy->skip_to > s) {
        size_t k = (size_t)(cy->skip_to - s);
        tok &= k >= 64 ? 0 : ~0ull << k;
    }
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

/* The walk, shared by every width: MASKS fills the block's masks, PXOR is
 * the prefix XOR. */
#define JV_WALK(MASKS, PXOR)                                                            \
    const uint8_t *s = p;                                                               \
    jv_masks m;                                                                         \
    jv_carry cy;                                                                        \
    memset(&cy, 0, sizeof cy);                                                          \
    cy.state = 6 * S_O_VALUE;                                                           \
    while (s < st->end) {                                                               \
        size_t n = (size_t)(st->end - s) < 64 ? (size_t)(st->end - s) : 64;             \
        MASKS(s, n, st->seeking ? (uint8_t)st->find->key.p[0] : 0, &m);               \
        uint64_t esc = escaped_bits(m.bs, &cy.esc_carry);                               \
        uint64_t q = m.q & ~esc;                                                        \
        uint64_t in = PXOR(q) ^ cy.in_carry;                                            \
        cy.in_carry ^= (uint64_t)0 - (uint64_t)(__builtin_popcountll(q) & 1);           \
        if (jv_block(st, &cy, s, n, &m, esc, q, in) < 0)                                \
            return false;                                                               \
        s += n;                                                                         \
    }                                                                                   \
    return cy.state == 6 * S_DONE;

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

static bool walk_portable(jv_state *st, const uint8_t *p) { JV_WALK(masks_portable, prefix_xor_portable) }

#if BK_X86

/* ---- SSE2: four 16-byte lanes */

__attribute__((target("sse2"))) static inline void masks_sse2(const uint8_t *s, size_t n, uint8_t fb, jv_masks *m)
{
    uint8_t buf[64];
    TAIL_COPY(s, n, buf);
    __m128i v[4];
    for (int i = 0; i < 4; i++)
        v[i] = _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * i));
#define EQ4(expr) mask16x4(expr(v[0]), expr(v[1]), expr(v[2]), expr(v[3]))
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
    JV_WALK(masks_sse2, prefix_xor_portable)
}

/* ---- AVX2: two 32-byte lanes */

__attribute__((target("avx2"))) static inline void masks_avx2(const uint8_t *s, size_t n, uint8_t fb, jv_masks *m)
{
    uint8_t buf[64];
    TAIL_COPY(s, n, buf);
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)s);
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
#define EQ2(expr) mask32x2(expr(a), expr(b))
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
    JV_WALK(masks_avx2, prefix_xor_clmul)
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

__attribute__((target("avx512f,avx512bw,bmi,bmi2,pclmul"))) static bool walk_avx512(jv_state *st, const uint8_t *p)
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
    /* the wide walks also use BMI1/2 (every AVX2 CPU has them; checked all the same) */
    bool extras = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2");
    if (strcmp(name, "avx512") == 0 && extras)
        return walk_avx512;
    if (strcmp(name, "avx2") == 0 && extras)
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
    st.find = find;
    st.seeking = find != NULL && find->key.n > 0 && *p == '{';
    if (!current_walk()(&st, p))
        return false;
    if (find != NULL && find->val != NULL && find->end == NULL)
        return false; /* cannot happen on valid input; never give half a view */
    return true;
}
