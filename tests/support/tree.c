/* tree.c: the JSON tree, its parser and its writer (tree.h). */
#include "tree.h"

#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "rng.h"
#include "suite.h"

/* ---- the arena */

static uint8_t *tj_mem;
static size_t tj_used, tj_cap;

void tj_reset(void)
{
    if (tj_mem == NULL) {
        tj_cap = 64u << 20;
        tj_mem = fx_mapped(tj_cap);
    }
    tj_used = 0;
}

void *tj_alloc(size_t n)
{
    n = (n + 15u) & ~(size_t)15u;
    REQUIREF(tj_used + n <= tj_cap, "test tree arena full");
    void *p = tj_mem + tj_used;
    tj_used += n;
    return p;
}

char *tj_strndup(const char *s, size_t n)
{
    char *d = tj_alloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

tj *tj_new(int t)
{
    tj *v = tj_alloc(sizeof *v);
    memset(v, 0, sizeof *v);
    v->t = t;
    return v;
}

tj *tj_str(const char *raw)
{
    tj *v = tj_new(TJ_STR);
    v->n = strlen(raw);
    v->s = tj_strndup(raw, v->n);
    return v;
}

/* ---- containers */

static void tj_grow(tj *v)
{
    if (v->count < v->cap)
        return;
    size_t nc = v->cap ? 2 * v->cap : 8;
    tj **ni = tj_alloc(nc * sizeof *ni);
    if (v->count)
        memcpy(ni, v->items, v->count * sizeof *ni);
    v->items = ni;
    if (v->t == TJ_OBJ) {
        const char **nk = tj_alloc(nc * sizeof *nk);
        size_t *nl = tj_alloc(nc * sizeof *nl);
        if (v->count) {
            memcpy(nk, v->keys, v->count * sizeof *nk);
            memcpy(nl, v->klen, v->count * sizeof *nl);
        }
        v->keys = nk;
        v->klen = nl;
    }
    v->cap = nc;
}

void tj_insert(tj *o, size_t at, const char *kraw, size_t kn, tj *val)
{
    REQUIRE(o->t == TJ_OBJ);
    REQUIRE(at <= o->count);
    tj_grow(o);
    memmove(o->items + at + 1, o->items + at, (o->count - at) * sizeof *o->items);
    memmove(o->keys + at + 1, o->keys + at, (o->count - at) * sizeof *o->keys);
    memmove(o->klen + at + 1, o->klen + at, (o->count - at) * sizeof *o->klen);
    o->items[at] = val;
    o->keys[at] = kraw;
    o->klen[at] = kn;
    o->count++;
}

void tj_insert_key(tj *o, size_t at, const char *kraw, tj *val)
{
    size_t kn = strlen(kraw);
    tj_insert(o, at, tj_strndup(kraw, kn), kn, val);
}

void tj_push(tj *a, tj *val)
{
    REQUIRE(a->t == TJ_ARR);
    tj_grow(a);
    a->items[a->count++] = val;
}

void tj_remove(tj *o, size_t i)
{
    REQUIRE(i < o->count);
    size_t k = o->count - i - 1;
    memmove(o->items + i, o->items + i + 1, k * sizeof *o->items);
    if (o->t == TJ_OBJ) {
        memmove(o->keys + i, o->keys + i + 1, k * sizeof *o->keys);
        memmove(o->klen + i, o->klen + i + 1, k * sizeof *o->klen);
    }
    o->count--;
}

void tj_move(tj *o, size_t from, size_t to)
{
    tj *v = o->items[from];
    const char *k = o->keys[from];
    size_t kn = o->klen[from];
    tj_remove(o, from);
    tj_insert(o, to, k, kn, v);
}

void tj_shuffle(tj *v, rng_state *rng)
{
    if (v->t == TJ_OBJ)
        for (size_t i = v->count; i > 1; i--)
            tj_move(v, (size_t)rng_below(rng, i), i - 1);
    if (v->t == TJ_OBJ || v->t == TJ_ARR)
        for (size_t i = 0; i < v->count; i++)
            tj_shuffle(v->items[i], rng);
}

long tj_find(const tj *o, const char *k)
{
    if (o == NULL || o->t != TJ_OBJ)
        return -1;
    size_t kn = strlen(k);
    for (size_t i = 0; i < o->count; i++)
        if (o->klen[i] == kn && memcmp(o->keys[i], k, kn) == 0)
            return (long)i;
    return -1;
}

tj *tj_get(const tj *o, const char *k)
{
    long i = tj_find(o, k);
    return i < 0 ? NULL : o->items[i];
}

/* ---- the parser (trusted input) */

static const char *tj_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* p just after an opening quote: the closing quote. */
static const char *tj_str_end(const char *p, const char *e)
{
    while (p < e && *p != '"') {
        if (*p == '\\')
            p++;
        p++;
    }
    REQUIREF(p < e, "test parser: unterminated string");
    return p;
}

static tj *tj_parse_value(const char **pp, const char *e)
{
    const char *p = tj_ws(*pp, e);
    REQUIREF(p < e, "test parser: unexpected end");
    tj *v;
    if (*p == '{' || *p == '[') {
        bool obj = *p == '{';
        char close = obj ? '}' : ']';
        v = tj_new(obj ? TJ_OBJ : TJ_ARR);
        p = tj_ws(p + 1, e);
        if (p < e && *p == close) {
            p++;
        } else {
            for (;;) {
                const char *ks = NULL;
                size_t kn = 0;
                if (obj) {
                    REQUIREF(p < e && *p == '"', "test parser: key expected");
                    ks = p + 1;
                    const char *ke = tj_str_end(ks, e);
                    kn = (size_t)(ke - ks);
                    p = tj_ws(ke + 1, e);
                    REQUIREF(p < e && *p == ':', "test parser: ':' expected");
                    p++;
                }
                tj *val = tj_parse_value(&p, e);
                if (obj)
                    tj_insert(v, v->count, ks, kn, val);
                else
                    tj_push(v, val);
                p = tj_ws(p, e);
                REQUIREF(p < e, "test parser: unexpected end");
                if (*p == ',') {
                    p = tj_ws(p + 1, e);
                    continue;
                }
                REQUIREF(*p == close, "test parser: '%c' expected", close);
                p++;
                break;
            }
        }
    } else if (*p == '"') {
        v = tj_new(TJ_STR);
        v->s = p + 1;
        const char *q = tj_str_end(p + 1, e);
        v->n = (size_t)(q - v->s);
        p = q + 1;
    } else {
        v = tj_new(TJ_RAW);
        v->s = p;
        while (p < e && !strchr(",]} \t\r\n", *p))
            p++;
        v->n = (size_t)(p - v->s);
        REQUIREF(v->n > 0, "test parser: value expected");
    }
    *pp = p;
    return v;
}

tj *tj_parse(const char *text, size_t n)
{
    const char *s = tj_strndup(text, n);
    const char *p = s;
    tj *v = tj_parse_value(&p, s + n);
    REQUIREF(tj_ws(p, s + n) == s + n, "test parser: trailing bytes");
    return v;
}

tj *tj_parse0(const char *text) { return tj_parse(text, strlen(text)); }

/* ---- the writer */

typedef struct {
    uint8_t *w, *end;
    rng_state rng;
    bool pretty;   /* whitespace (of all four kinds) between tokens */
    int esc_keys;  /* per mille: chance to \u-escape each character of a key */
    int esc_vals;  /* the same for string values */
} tj_writer;

static void tw_byte(tj_writer *o, uint8_t c)
{
    REQUIREF(o->w < o->end, "test writer: output full");
    *o->w++ = c;
}

static void tw_bytes(tj_writer *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tw_byte(o, (uint8_t)s[i]);
}

static void tw_ws(tj_writer *o)
{
    if (!o->pretty)
        return;
    /* often nothing, sometimes a run; every kind of whitespace appears */
    int k = (int)rng_below(&o->rng, 6);
    if (k > 3)
        k = 0;
    for (int i = 0; i < k; i++)
        tw_byte(o, (uint8_t)" \t\n\r"[rng_below(&o->rng, 4)]);
}

static void tw_hex4(tj_writer *o, unsigned u)
{
    static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
    tw_byte(o, '\\');
    tw_byte(o, 'u');
    for (int sh = 12; sh >= 0; sh -= 4)
        tw_byte(o, (uint8_t)(rng_below(&o->rng, 2) ? lo : up)[(u >> sh) & 15]);
}

static void tw_string(tj_writer *o, const char *s, size_t n, int permille)
{
    tw_byte(o, '"');
    for (size_t i = 0; i < n;) {
        uint8_t c = (uint8_t)s[i];
        bool esc = permille > 0 && (int)rng_below(&o->rng, 1000) < permille;
        if (c == '\\') { /* an escape already written: keep it whole */
            size_t k = (i + 1 < n && s[i + 1] == 'u') ? 6 : 2;
            if (k > n - i)
                k = n - i; /* a broken escape (a test's invalid input): as is */
            tw_bytes(o, s + i, k);
            i += k;
        } else if (c < 0x80) {
            if (esc && c == '/')
                tw_bytes(o, "\\/", 2);
            else if (esc)
                tw_hex4(o, c);
            else
                tw_byte(o, c);
            i++;
        } else {
            size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            if (!esc || c < 0xC2 || c > 0xF4 || i + len > n) {
                tw_byte(o, c); /* as is (and a test's invalid UTF-8 stays invalid) */
                i++;
                continue;
            }
            {
                unsigned cp = len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
                for (size_t j = 1; j < len; j++)
                    cp = cp << 6 | ((uint8_t)s[i + j] & 0x3Fu);
                if (cp >= 0x10000) {
                    cp -= 0x10000;
                    tw_hex4(o, 0xD800u + (cp >> 10));
                    tw_hex4(o, 0xDC00u + (cp & 0x3FFu));
                } else {
                    tw_hex4(o, cp);
                }
            }
            i += len;
        }
    }
    tw_byte(o, '"');
}

static void tw_value(tj_writer *o, const tj *v)
{
    switch (v->t) {
    case TJ_OBJ:
    case TJ_ARR: {
        bool obj = v->t == TJ_OBJ;
        tw_byte(o, obj ? '{' : '[');
        for (size_t i = 0; i < v->count; i++) {
            if (i) {
                tw_ws(o);
                tw_byte(o, ',');
            }
            tw_ws(o);
            if (obj) {
                tw_string(o, v->keys[i], v->klen[i], o->esc_keys);
                tw_ws(o);
                tw_byte(o, ':');
                tw_ws(o);
            }
            tw_value(o, v->items[i]);
        }
        tw_ws(o);
        tw_byte(o, obj ? '}' : ']');
        break;
    }
    case TJ_STR:
        tw_string(o, v->s, v->n, o->esc_vals);
        break;
    default:
        tw_bytes(o, v->s, v->n);
        break;
    }
}

size_t tj_write(const tj *v, uint8_t *buf, size_t cap, uint64_t seed, bool pretty,
                       int esc_keys, int esc_vals)
{
    tj_writer o = {buf, buf + cap, {seed | 1}, pretty, esc_keys, esc_vals};
    tw_ws(&o);
    tw_value(&o, v);
    tw_ws(&o);
    return (size_t)(o.w - buf);
}

size_t tj_write_compact(const tj *v, uint8_t *buf, size_t cap)
{
    return tj_write(v, buf, cap, 1, false, 0, 0);
}

