/* object.c: the pieces of JSON objects the generated code reads. */
#include "object.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

const uint8_t *ob_wrong_type(js_ctx *c, const uint8_t *p, const uint8_t *end)
{
    if (p >= end)
        return js_fail(c, p, TR_E_EOF);
    if (js_is_null(p, end))
        return js_fail(c, p, TR_E_NULL_REQUIRED);
    switch (*p) {
    case '"': case '{': case '[': case 't': case 'f': case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return js_fail(c, p, TR_E_TYPE);
    default:
        return js_fail(c, p, TR_E_SYNTAX);
    }
}

const uint8_t *ob_in(js_ctx *c, const char *field)
{
    if (c->err.what == NULL)
        c->err.what = field;
    return NULL;
}

const uint8_t *ob_key_slow(js_ctx *c, const uint8_t *p, const uint8_t *end, const uint8_t **k,
                           size_t *kn)
{
    bool esc;
    const uint8_t *q = js_string_raw(c, p, end, &esc);
    if (q == NULL)
        return NULL;
    *k = p + 1;
    *kn = (size_t)(q - 1 - (p + 1));
    if (esc) {
        uint8_t *buf = ar_scratch_push(c->arena, *kn);
        if (buf == NULL)
            return js_fail(c, p, TR_E_ARENA);
        *kn = js_unescape(p + 1, *kn, buf);
        *k = buf;
    }
    q = js_ws(q, end);
    if (q >= end)
        return js_fail(c, q, TR_E_EOF);
    if (*q != ':')
        return js_fail(c, q, TR_E_SYNTAX);
    return js_ws(q + 1, end);
}

const uint8_t *ob_next_slow(js_ctx *c, const uint8_t *p, const uint8_t *end, uint8_t closer,
                            bool *more)
{
    p = js_ws(p, end);
    if (p >= end)
        return js_fail(c, p, TR_E_EOF);
    if (*p == ',') {
        *more = true;
        p = js_ws(p + 1, end);
        if (p >= end)
            return js_fail(c, p, TR_E_EOF);
        return p;
    }
    if (*p == closer) {
        *more = false;
        return p + 1;
    }
    return js_fail(c, p, TR_E_SYNTAX);
}

const uint8_t *ob_name(js_ctx *c, const uint8_t *p, const uint8_t *end, ob_from_fn from,
                       const js_str *names, int ncases, tr_code unknown, int *out)
{
    if (p >= end || *p != '"')
        return ob_wrong_type(c, p, end);
    bool esc;
    const uint8_t *q = js_string_raw(c, p, end, &esc);
    if (q == NULL)
        return NULL;
    const char *s = (const char *)p + 1;
    size_t n = (size_t)(q - 1 - (p + 1));
    uint8_t buf[256];
    if (esc) {
        /* decoded into buf (the decoding stops past it); a spelling that
         * decodes to more can only be a name that long, compared with each
         * such name as it is decoded (a schema's cases: linear in the
         * string) */
        size_t m = js_unescape_max(p + 1, n, buf, sizeof buf);
        if (m == SIZE_MAX) {
            for (int i = 0; i < ncases; i++)
                if (names[i].n > sizeof buf && js_unescaped_is(p + 1, n, names[i].p, names[i].n)) {
                    *out = i;
                    return q;
                }
            return js_fail(c, p, unknown);
        }
        n = m;
        s = (const char *)buf;
    }
    int v = from(s, n);
    if (v < 0)
        return js_fail(c, p, unknown);
    *out = v;
    return q;
}

const uint8_t *ob_find_tag(js_ctx *c, const uint8_t *p, const uint8_t *end, const char *tag,
                           size_t tag_len, ob_from_fn from, const js_str *names, int ncases,
                           int *kind)
{
    const uint8_t *open = p;
    if (++c->depth > c->max_depth)
        return js_fail(c, p, TR_E_DEPTH);
    p = js_ws(p + 1, end);
    if (p < end && *p == '}') {
        c->depth--;
        return js_fail(c, open, TR_E_NO_TAG);
    }
    for (bool more = true; more;) {
        if (p >= end)
            return js_fail(c, p, TR_E_EOF);
        if (*p != '"')
            return js_fail(c, p, TR_E_SYNTAX);
        const uint8_t *k;
        size_t kn, mark = ar_scratch_mark(c->arena);
        p = ob_key(c, p, end, &k, &kn);
        if (p == NULL)
            return NULL;
        bool hit = kn == tag_len && memcmp(k, tag, tag_len) == 0;
        ar_scratch_pop(c->arena, mark);
        if (hit) {
            if (ob_name(c, p, end, from, names, ncases, TR_E_TAG, kind) == NULL)
                return NULL;
            c->depth--;
            return open;
        }
        p = js_skip(c, p, end);
        if (p == NULL)
            return NULL;
        p = ob_next(c, p, end, '}', &more);
        if (p == NULL)
            return NULL;
    }
    c->depth--;
    return js_fail(c, open, TR_E_NO_TAG);
}

/* ---- the duplicate-key check's hash
 *
 * Map keys come from the input, so the hash that places them must be one an
 * attacker cannot aim at: SipHash-1-3 (the variant Rust's and Python's hash
 * tables use) under a 128-bit key drawn from getrandom once per process.
 * The unseeded FNV-1a it replaces let one 1.2 MB message of 65 536 keys
 * built to agree in their low bits cost 12 s. The result of
 * ob_dup_key does not depend on the key: the first repeat is the first
 * repeat whatever the table's order. */

static uint64_t sip_k0, sip_k1;
static pthread_once_t sip_once = PTHREAD_ONCE_INIT;

static void sip_init(void)
{
    uint64_t k[2];
    size_t got = 0;
    while (got < sizeof k) {
        ssize_t r = getrandom((uint8_t *)k + got, sizeof k - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got < sizeof k) {
        /* No getrandom (a very old kernel, a seccomp filter): what this
         * process alone knows, mixed. Weaker, never fatal. */
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        k[0] = (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^
               (uint64_t)(uintptr_t)&t;
        clock_gettime(CLOCK_REALTIME, &t);
        k[1] = ((uint64_t)t.tv_sec << 30 ^ (uint64_t)t.tv_nsec) * 0xbf58476d1ce4e5b9ull ^
               (uint64_t)(uintptr_t)&sip_init;
    }
    sip_k0 = k[0];
    sip_k1 = k[1];
}

#define SIP_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIP_ROUND                                                                          \
    do {                                                                                   \
        v0 += v1; v1 = SIP_ROTL(v1, 13); v1 ^= v0; v0 = SIP_ROTL(v0, 32);                  \
        v2 += v3; v3 = SIP_ROTL(v3, 16); v3 ^= v2;                                         \
        v0 += v3; v3 = SIP_ROTL(v3, 21); v3 ^= v0;                                         \
        v2 += v1; v1 = SIP_ROTL(v1, 17); v1 ^= v2; v2 = SIP_ROTL(v2, 32);                  \
    } while (0)

/* SipHash-1-3 of s[0 .. n) under (k0, k1): one round per 8-byte word, three
 * to finish (the reference's 2-4 halves the rounds; its security margin is
 * still far beyond what a hash table needs). */
static uint64_t siphash13(uint64_t k0, uint64_t k1, const uint8_t *s, size_t n)
{
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    const uint8_t *end = s + (n & ~(size_t)7);
    for (; s < end; s += 8) {
        uint64_t m;
        memcpy(&m, s, 8); /* little-endian: x86-64 and AArch64 */
        v3 ^= m;
        SIP_ROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)n << 56;
    switch (n & 7) {
    case 7: b |= (uint64_t)s[6] << 48; /* fall through */
    case 6: b |= (uint64_t)s[5] << 40; /* fall through */
    case 5: b |= (uint64_t)s[4] << 32; /* fall through */
    case 4: b |= (uint64_t)s[3] << 24; /* fall through */
    case 3: b |= (uint64_t)s[2] << 16; /* fall through */
    case 2: b |= (uint64_t)s[1] << 8;  /* fall through */
    case 1: b |= (uint64_t)s[0];       /* fall through */
    default: break;
    }
    v3 ^= b;
    SIP_ROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIP_ROUND;
    SIP_ROUND;
    SIP_ROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t ob_key_hash(const void *s, size_t n)
{
    pthread_once(&sip_once, sip_init);
    return siphash13(sip_k0, sip_k1, s, n);
}

uint64_t ob_siphash13(uint64_t k0, uint64_t k1, const void *s, size_t n)
{
    return siphash13(k0, k1, s, n);
}

long ob_dup_key(ar_arena *a, const void *entries, size_t stride, size_t n)
{
    const uint8_t *e = entries;
#define KEY(i) ((const js_str *)(const void *)(e + (size_t)(i) * stride))
    if (n <= 16) {
        for (size_t i = 1; i < n; i++)
            for (size_t j = 0; j < i; j++)
                if (KEY(i)->n == KEY(j)->n && memcmp(KEY(i)->p, KEY(j)->p, KEY(i)->n) == 0)
                    return (long)i;
        return -1;
    }
    size_t cap = 32;
    while (cap < 2 * n)
        cap *= 2;
    pthread_once(&sip_once, sip_init);
    const uint64_t k0 = sip_k0, k1 = sip_k1;
    size_t mark = ar_scratch_mark(a);
    uint32_t *slots = ar_scratch_push(a, cap * sizeof *slots);
    if (slots == NULL)
        return -2;
    memset(slots, 0, cap * sizeof *slots);
    long dup = -1;
    for (size_t i = 0; i < n && dup < 0; i++) {
        size_t h = (size_t)siphash13(k0, k1, (const uint8_t *)KEY(i)->p, KEY(i)->n) & (cap - 1);
        for (;; h = (h + 1) & (cap - 1)) {
            if (slots[h] == 0) {
                slots[h] = (uint32_t)i + 1;
                break;
            }
            const js_str *o = KEY(slots[h] - 1);
            if (o->n == KEY(i)->n && memcmp(o->p, KEY(i)->p, o->n) == 0) {
                dup = (long)i;
                break;
            }
        }
    }
    ar_scratch_pop(a, mark);
    return dup;
#undef KEY
}
