/* reader.c: shared pieces of the generated readers. */
#include "reader.h"

#include <string.h>

const uint8_t *rd_wrong_type(js_ctx *c, const uint8_t *p, const uint8_t *end)
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

const uint8_t *rd_in(js_ctx *c, const char *field)
{
    if (c->err.what == NULL)
        c->err.what = field;
    return NULL;
}

const uint8_t *rd_key_slow(js_ctx *c, const uint8_t *p, const uint8_t *end, const uint8_t **k,
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

const uint8_t *rd_next_slow(js_ctx *c, const uint8_t *p, const uint8_t *end, uint8_t closer,
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

const uint8_t *rd_name(js_ctx *c, const uint8_t *p, const uint8_t *end, rd_from_fn from,
                       size_t longest, tr_code unknown, int *out)
{
    if (p >= end || *p != '"')
        return rd_wrong_type(c, p, end);
    bool esc;
    const uint8_t *q = js_string_raw(c, p, end, &esc);
    if (q == NULL)
        return NULL;
    const char *s = (const char *)p + 1;
    size_t n = (size_t)(q - 1 - (p + 1));
    uint8_t buf[256];
    if (esc) {
        /* Every escape decodes to at least one byte per six raw ones, so a
         * raw form over 6 * longest bytes cannot name a case. */
        if (n > 6 * longest || n > sizeof buf)
            return js_fail(c, p, unknown);
        n = js_unescape(p + 1, n, buf);
        s = (const char *)buf;
    }
    int v = from(s, n);
    if (v < 0)
        return js_fail(c, p, unknown);
    *out = v;
    return q;
}

const uint8_t *rd_find_tag(js_ctx *c, const uint8_t *p, const uint8_t *end, const char *tag,
                           size_t tag_len, rd_from_fn from, size_t longest, int *kind)
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
        p = rd_key(c, p, end, &k, &kn);
        if (p == NULL)
            return NULL;
        bool hit = kn == tag_len && memcmp(k, tag, tag_len) == 0;
        ar_scratch_pop(c->arena, mark);
        if (hit) {
            if (rd_name(c, p, end, from, longest, TR_E_TAG, kind) == NULL)
                return NULL;
            c->depth--;
            return open;
        }
        p = js_skip(c, p, end);
        if (p == NULL)
            return NULL;
        p = rd_next(c, p, end, '}', &more);
        if (p == NULL)
            return NULL;
    }
    c->depth--;
    return js_fail(c, open, TR_E_NO_TAG);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

long rd_dup_key(ar_arena *a, const void *entries, size_t stride, size_t n)
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
    size_t mark = ar_scratch_mark(a);
    uint32_t *slots = ar_scratch_push(a, cap * sizeof *slots);
    if (slots == NULL)
        return -2;
    memset(slots, 0, cap * sizeof *slots);
    long dup = -1;
    for (size_t i = 0; i < n && dup < 0; i++) {
        size_t h = (size_t)hash_bytes(KEY(i)->p, KEY(i)->n) & (cap - 1);
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
