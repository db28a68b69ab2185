/* test_skip.c: the Check suite for runtime/skip.{h,c}, the member walk the
 * optic scanners stand on.
 *
 * The walk stops at candidates (a string at the object's own level whose
 * first byte could start a wanted key) and, given the keys themselves,
 * passes over the candidates that can be none of them (sk_firsts.key).
 * What a scanner makes of what the walk gives it must not depend on that:
 * the walks below, with the keys and without, are each followed by a
 * matcher that does what the generated ones do (the key compared whole,
 * the slow path when a backslash comes while the string still spells a
 * key's beginning), over random objects built to hold near misses: keys'
 * prefixes and extensions, escapes at every place, keys as values, nested
 * copies, long keys, whitespace. Both must find the same keys at the same
 * places as a scan byte by byte that gives each candidate to the same
 * matcher. A scanner may also pass over members without the walk (a look
 * at the member after a value it read, sk_resume_after; a member stepped
 * over where it stands, sk_step): what it finds so must be what the walk
 * finds. Every input ends right before an unmapped page, and each runs at
 * every SIMD width the CPU has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skip.h"
#include "support/guard.h"
#include "support/rng.h"
#include "support/simd.h"
#include "support/suite.h"

#define GUARD_BODY (64u * 1024u)
static gd_guard guard = GD_GUARD(GUARD_BODY);

static rng_state rg;

static uint64_t rnd(void) { return rng_next(&rg); }

/* ---- what a generated matcher does with a candidate */

static const uint8_t *ws(const uint8_t *p, const uint8_t *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* The index of the key the string at k is (*val: its value), -1 for none
 * (*val: its second byte, where the walk goes on), -3 for one that cannot
 * be read: as key_N in gen/templates/matchers.j2 and sk_key_slow. */
static int match(const uint8_t *k, const uint8_t *end, const js_str *keys, int nk,
                 const uint8_t **val)
{
    for (int i = 0; i < nk; i++) {
        size_t n = keys[i].n;
        if ((size_t)(end - k) > n + 1 && memcmp(k + 1, keys[i].p, n) == 0 && k[1 + n] == '"') {
            const uint8_t *c = ws(k + n + 2, end);
            if (c < end && *c == ':') {
                *val = ws(c + 1, end);
                return i;
            }
        }
    }
    for (int i = 0; i < nk; i++) {
        size_t j = 0;
        while (j < keys[i].n && k + 1 + j < end && k[1 + j] == (uint8_t)keys[i].p[j])
            j++;
        if (k + 1 + j < end && k[1 + j] == '\\')
            return sk_key_slow(k, end, keys, nk, val);
    }
    *val = k + 1;
    return -1;
}

/* What one walk over the object at p found: the keys (which and where),
 * in order, ended by a key that cannot be read, or by the walk's end. */
typedef struct {
    int n;
    int which[64];
    size_t at[64];
    bool closed;     /* the walk ended at the object's closer */
    int stops;       /* candidates the walk gave */
} found;

/* after: past each key found, the walk passes over its value itself when
 * it is whole and has no escape, and goes on with sk_resume_after (as a
 * scanner past a union's tag), which looks at the next member's key before
 * any block. (Else, and without after, it resumes at the value: a string
 * value whose bytes begin like a key is a candidate the matcher judges.) */
static void walk_as(const uint8_t *p, const uint8_t *end, const sk_firsts *f, const js_str *keys,
                    int nk, bool after, found *out)
{
    memset(out, 0, sizeof *out);
    sk_cursor c;
    sk_begin(&c, p, end);
    for (;;) {
        const uint8_t *k = sk_next(&c, f), *val = NULL;
        if (k == NULL) {
            out->closed = c.closed != NULL;
            return;
        }
        out->stops++;
        int which = match(k, end, keys, nk, &val);
        if (which == -1) {
            sk_resume(&c, val);
            continue;
        }
        if (out->n < 64) {
            out->which[out->n] = which;
            out->at[out->n] = (size_t)(k - p);
            out->n++;
        }
        if (which == -3)
            return;
        const uint8_t *v = after ? sk_value_end(val, end) : NULL;
        if (v != NULL && !(*val == '"' && memchr(val, '\\', (size_t)(v - val)) != NULL)) {
            /* a value read whole (no escape in it: a scanner reads a tag's
             * case name so), passed over */
            sk_resume_after(&c, v);
        } else {
            sk_resume(&c, val);
        }
    }
}

static void walk(const uint8_t *p, const uint8_t *end, const sk_firsts *f, const js_str *keys,
                 int nk, found *out)
{
    walk_as(p, end, f, keys, nk, false, out);
}

/* The same, byte by byte: a string opened at the object's own level whose
 * next byte is a wanted first byte or a backslash is a candidate, given to
 * the same matcher; what it says decides where the scan goes on. */
static void reference(const uint8_t *p, const uint8_t *end, const sk_firsts *f,
                      const js_str *keys, int nk, found *out)
{
    memset(out, 0, sizeof *out);
    int depth = 0;
    const uint8_t *q = p;
    while (q < end) {
        uint8_t b = *q;
        if (b == '"') {
            if (depth == 1 && q + 1 < end &&
                (q[1] == f->b[0] || q[1] == f->b[1] || q[1] == f->b[2] || q[1] == f->b[3] ||
                 q[1] == '\\')) {
                const uint8_t *val = NULL;
                int which = match(q, end, keys, nk, &val);
                out->stops++;
                if (which != -1 && out->n < 64) {
                    out->which[out->n] = which;
                    out->at[out->n] = (size_t)(q - p);
                    out->n++;
                }
                if (which == -3)
                    return;
                if (which >= 0) {
                    q = val;
                    continue;
                }
            }
            /* past the string */
            for (q++; q < end && *q != '"'; q++)
                if (*q == '\\')
                    q++;
            q++;
            continue;
        }
        if (b == '{' || b == '[')
            depth++;
        else if ((b == '}' || b == ']') && --depth == 0) {
            out->closed = true;
            return;
        }
        q++;
    }
}

/* ---- random objects full of near misses */

typedef struct {
    char *b;
    size_t n, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->n + n <= t->cap) {
        memcpy(t->b + t->n, s, n);
        t->n += n;
    }
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static void space(text *t)
{
    static const char *const sp[] = {"", "", "", " ", "\n  ", "\t"};
    puts_(t, sp[rnd() % 6]);
}

/* A string's contents near one of the keys: the key, a prefix, an
 * extension, a byte changed, an escape put in at some place (a good one or
 * a broken one), or another word. */
static void near(text *t, const js_str *keys, int nk)
{
    const js_str *k = &keys[rnd() % (uint64_t)nk];
    size_t cut = k->n > 0 ? (size_t)(rnd() % (k->n + 1)) : 0;
    switch (rnd() % 9) {
    case 0:
    case 1:
        put(t, k->p, k->n);
        break;
    case 2: /* a prefix */
        put(t, k->p, cut);
        break;
    case 3: /* an extension */
        put(t, k->p, k->n);
        puts_(t, rnd() % 2 ? "s" : "_more");
        break;
    case 4: { /* a byte changed */
        put(t, k->p, cut);
        puts_(t, rnd() % 2 ? "x" : "Q");
        if (cut < k->n)
            put(t, k->p + cut + 1, k->n - cut - 1);
        break;
    }
    case 5: { /* one byte written as \u00XX */
        put(t, k->p, cut);
        if (cut < k->n) {
            char e[8];
            snprintf(e, sizeof e, "\\u%04x", (unsigned)(uint8_t)k->p[cut]);
            puts_(t, e);
            put(t, k->p + cut + 1, k->n - cut - 1);
        }
        break;
    }
    case 6: /* a broken escape somewhere */
        put(t, k->p, cut);
        puts_(t, rnd() % 2 ? "\\q" : "\\u12");
        break;
    case 7: /* an escaped quote or backslash */
        put(t, k->p, cut);
        puts_(t, rnd() % 2 ? "\\\"" : "\\\\");
        put(t, k->p + cut, k->n - cut);
        break;
    default: {
        static const char *const other[] = {"id", "name", "description", "dueAt", "x", ""};
        puts_(t, other[rnd() % 6]);
    }
    }
}

static void value(text *t, const js_str *keys, int nk, int depth);

static void object(text *t, const js_str *keys, int nk, int depth)
{
    puts_(t, "{");
    int members = (int)(rnd() % 7);
    for (int i = 0; i < members; i++) {
        if (i > 0)
            puts_(t, ",");
        space(t);
        puts_(t, "\"");
        near(t, keys, nk);
        puts_(t, "\"");
        space(t);
        puts_(t, ":");
        space(t);
        value(t, keys, nk, depth + 1);
        space(t);
    }
    puts_(t, "}");
}

static void value(text *t, const js_str *keys, int nk, int depth)
{
    switch (rnd() % (depth < 3 ? 6 : 3)) {
    case 0:
        puts_(t, rnd() % 2 ? "12345" : "-0.5e3");
        break;
    case 1:
    case 2: /* a string that could pass for a key */
        puts_(t, "\"");
        near(t, keys, nk);
        puts_(t, "\"");
        break;
    case 3:
    case 4:
        object(t, keys, nk, depth);
        break;
    default:
        puts_(t, "[");
        value(t, keys, nk, depth + 1);
        puts_(t, ",");
        space(t);
        value(t, keys, nk, depth + 1);
        puts_(t, "]");
    }
}

/* x and y found the same keys at the same places, and ended alike: else
 * the failure names them (xs, ys), the key set, the width and the object. */
static void same(const found *x, const found *y, const char *xs, const char *ys, size_t set,
                 int width, const char *buf, size_t n)
{
    REQUIREF(x->n == y->n && x->closed == y->closed,
             "set %zu, %s: %d keys (closed %d) %s, %d (closed %d) %s, in %.*s", set,
             simd_names[width], x->n, x->closed, xs, y->n, y->closed, ys, (int)n, buf);
    for (int i = 0; i < x->n; i++)
        REQUIREF(x->which[i] == y->which[i] && x->at[i] == y->at[i],
                 "set %zu, %s: key %d: %d at %zu %s, %d at %zu %s, in %.*s", set,
                 simd_names[width], i, x->which[i], x->at[i], xs, y->which[i], y->at[i], ys,
                 (int)n, buf);
}

/* The wanted keys' first bytes, as a generated scanner declares them. */
static sk_firsts firsts_of(const js_str *keys, int nk)
{
    sk_firsts f;
    memset(&f, 0, sizeof f);
    for (int i = 0; i < nk; i++) {
        uint8_t b = keys[i].n > 0 ? (uint8_t)keys[i].p[0] : '"';
        bool seen = false;
        for (int x = 0; x < f.n; x++)
            seen = seen || f.b[x] == b;
        if (!seen && f.n < 4)
            f.b[f.n++] = b;
    }
    for (int x = f.n; x < 4; x++)
        f.b[x] = f.b[f.n - 1];
    return f;
}

/* The key sets the walks look for: one key, keys sharing a first byte, a
 * key longer than the compared bytes, the empty key. */
static const js_str sets[][3] = {
    {{"detail", 6}},
    {{"type", 4}, {"tier", 4}, {"impact", 6}},
    {{"requesterContract", 17}, {"requesterContact", 16}},
    {{"", 0}, {"a", 1}},
    {{"abcdefghijklm", 13}, {"abcdefghijklmn", 14}},
};
static const int set_n[] = {1, 3, 2, 2, 2};

START_TEST(test_keys_passed_over_change_nothing)
{
    if (!simd_use(_i))
        return;
    rg = rng_seed(12 + (uint64_t)_i);
    static char buf[16384];
    long objects = 0, stops[2] = {0, 0}, keys_found = 0;
    for (size_t s = 0; s < sizeof set_n / sizeof set_n[0]; s++) {
        const js_str *keys = sets[s];
        int nk = set_n[s];
        sk_firsts plain = firsts_of(keys, nk), with = plain;
        sk_want_keys(&with, keys, nk);
        REQUIRE(with.nk == nk);
        for (int round = 0; round < 3000; round++) {
            text t = {buf, 0, sizeof buf};
            object(&t, keys, nk, 0);
            /* sometimes cut short: the walk meets the end inside */
            size_t n = rnd() % 8 == 0 ? (size_t)(rnd() % (t.n + 1)) : t.n;
            const uint8_t *p = gd_place(&guard, buf, n), *end = p + n;
            if (n == 0)
                continue;
            found a, b, r, v;
            walk(p, end, &plain, keys, nk, &a);
            walk(p, end, &with, keys, nk, &b);
            walk_as(p, end, &plain, keys, nk, true, &v);
            reference(p, end, &plain, keys, nk, &r);
            same(&r, &a, "byte by byte", "walked", s, _i, buf, n);
            same(&a, &b, "walked without the keys", "with them", s, _i, buf, n);
            same(&a, &v, "walked", "past each value (sk_resume_after)", s, _i, buf, n);
            /* the walk stops at every candidate (and may at a quote in a
             * block's last lane, whose next byte it has not compared) */
            REQUIREF(a.stops >= r.stops, "set %zu, %s: %d stops walked, %d candidates in %.*s", s,
                     simd_names[_i], a.stops, r.stops, (int)n, buf);
            REQUIRE(b.stops <= a.stops);
            objects++;
            stops[0] += a.stops;
            stops[1] += b.stops;
            keys_found += a.n;
        }
    }
    /* keys were found, and the AVX-512 walk, given them, passed over some
     * candidates (the others stop at every one, as without them) */
    if (strcmp(sk_impl_name(), "avx512") == 0)
        REQUIRE(stops[1] < stops[0]);
    else
        REQUIRE(stops[1] == stops[0]);
    REQUIRE(keys_found > objects / 2);
    fprintf(stderr, "test_skip: %s: %ld objects, %ld keys, %ld stops without the keys, %ld with\n",
            simd_names[_i], objects, keys_found, stops[0], stops[1]);
}
END_TEST

/* Keys the walk must not be given (a byte JSON escapes), or too many:
 * sk_want_keys gives none, so every candidate stops. */
START_TEST(test_keys_not_given)
{
    sk_firsts f = {{'a', 'a', 'a', 'a'}, 1, 0, {0}, {{0}}};
    const js_str quote[] = {{"a\"b", 3}}, bsl[] = {{"a\\b", 3}}, ctl[] = {{"a\nb", 3}};
    const js_str five[] = {{"a", 1}, {"ab", 2}, {"abc", 3}, {"abcd", 4}, {"abcde", 5}};
    sk_want_keys(&f, quote, 1);
    REQUIRE(f.nk == 0);
    sk_want_keys(&f, bsl, 1);
    REQUIRE(f.nk == 0);
    sk_want_keys(&f, ctl, 1);
    REQUIRE(f.nk == 0);
    sk_want_keys(&f, five, 5);
    REQUIRE(f.nk == 0);
    sk_want_keys(&f, five, 4);
    REQUIRE(f.nk == 4);
    /* how each is spelled: the quotes, or the first 14 bytes of a long one */
    const js_str lens[] = {{"", 0}, {"abcdefghijklm", 13}, {"abcdefghijklmn", 14}};
    sk_want_keys(&f, lens, 3);
    REQUIRE(f.nk == 3);
    REQUIRE(f.klen[0] == 2 && memcmp(f.key[0], "\"\"", 2) == 0);
    REQUIRE(f.klen[1] == 15 && memcmp(f.key[1], "\"abcdefghijklm\"", 15) == 0);
    REQUIRE(f.klen[2] == 15 && memcmp(f.key[2], "\"abcdefghijklmn", 15) == 0);
}
END_TEST

/* sk_not_a_key on the cases it decides: 16 bytes from the quote. */
START_TEST(test_not_a_key)
{
    const js_str keys[] = {{"detail", 6}, {"dueAt", 5}};
    sk_firsts f = {{'d', 'd', 'd', 'd'}, 1, 0, {0}, {{0}}};
    sk_want_keys(&f, keys, 2);
    static const struct {
        const char *s;
        bool passed;
    } cases[] = {
        {"\"detail\":1,\"xxxxxx", false},     /* the key */
        {"\"detail\" : 1,\"xxxx", false},     /* spaced */
        {"\"dueAt\":1,\"xxxxxxx", false},     /* the other key */
        {"\"description\":\"xx", true},      /* differs at its third byte */
        {"\"details\":1,\"xxxxx", true},      /* longer */
        {"\"detai\":1,\"xxxxxxx", true},      /* shorter */
        {"\"d\\u0065tail\":1,\"x", false},    /* an escape while it spells the key */
        {"\"detail\\u0073\":1,x", false},     /* an escape where the key ends */
        {"\"dx\\u0065tail\":1,x", true},      /* differs before the escape */
        {"\"\\u0064etail\":1,\"x", false},    /* escaped from its first byte */
        {"\"delta romeo\",\"xxx", true},      /* a value */
        {"\"detail\",\"xxxxxxxx", false},     /* the key's text as a value: the matcher's to say */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        REQUIRE(strlen(cases[i].s) >= 16);
        REQUIREF(sk_not_a_key((const uint8_t *)cases[i].s, &f) == cases[i].passed, "%s",
                 cases[i].s);
    }
    /* on random strings of the keys' bytes, quotes and backslashes: one it
     * passes over is one the matcher takes for no key, and never sends to
     * the slow path */
    rg = rng_seed(7);
    static const char alphabet[] = "detailuA\\\"\":x";
    long passed = 0;
    for (int round = 0; round < 200000; round++) {
        uint8_t b[16];
        b[0] = '"';
        for (int i = 1; i < 16; i++)
            b[i] = (uint8_t)alphabet[rnd() % (sizeof alphabet - 1)];
        /* often a key's beginning, then the random bytes */
        const js_str *k = &keys[rnd() % 2];
        size_t keep = (size_t)(rnd() % (k->n + 2));
        memcpy(b + 1, k->p, keep < k->n ? keep : k->n);
        if (!sk_not_a_key(b, &f))
            continue;
        passed++;
        const uint8_t *val;
        bool slow = false;
        for (int i = 0; i < 2; i++) {
            size_t j = 0;
            while (j < keys[i].n && b[1 + j] == (uint8_t)keys[i].p[j])
                j++;
            slow = slow || b[1 + j] == '\\';
        }
        REQUIREF(!slow && match(b, b + 16, keys, 2, &val) == -1, "%.16s", (const char *)b);
    }
    REQUIRE(passed > 1000 && passed < 199000);
}
END_TEST

/* sk_step passes over a member only when the walk would pass over it
 * without a stop (the member is the expected key, its value holds no
 * bracket and no quote but a plain string's, a ',' follows) and reads
 * nothing past the end: random members over bytes that matter to the walk,
 * each cut at every length, end at an unmapped page. */
START_TEST(test_step)
{
    rg = rng_seed(31);
    static const char *const parts[] = {
        "\"name\":", "\"name\" :", "\"nam\":", "\"n\\u0061me\":", " ", "\t", "\"x\"",
        "\"x\\\"y\"", "\"a\\\\\"", "\"\"", "12", "-0.5e3", "true", "null", "nul", ",", ",",
        ":", "{", "}", "[", "]", "\\", "\"", "a",
        "\"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopq\"", /* 69 */
    };
    const size_t np = sizeof parts / sizeof parts[0];
    static char buf[512];
    long stepped = 0;
    for (int round = 0; round < 20000; round++) {
        size_t n = 0;
        /* most often the expected key first, then a value, then a ',' */
        if (rnd() % 4 != 0)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", parts[0]);
        for (int k = (int)(rnd() % 5); k >= 0 && n < 400; k--)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", parts[rnd() % np]);
        if (rnd() % 2)
            n += (size_t)snprintf(buf + n, sizeof buf - n, ",\"next\":1}");
        for (size_t cut = 0; cut <= n; cut++) {
            const uint8_t *p = gd_place(&guard, buf, cut), *end = p + cut;
            const uint8_t *r = sk_step(p, end, "\"name\":", 7);
            if (r == NULL)
                continue;
            stepped++;
            /* passed over: whitespace, the key, whitespace, a value, a ',' */
            REQUIREF(r > p && r <= end && r[-1] == ',', "%.*s", (int)cut, (const char *)p);
            const uint8_t *k = js_ws(p, end);
            REQUIREF(memcmp(k, "\"name\":", 7) == 0, "%.*s", (int)cut, (const char *)p);
            int quotes = 0;
            for (const uint8_t *q = k + 7; q < r - 1; q++) {
                REQUIREF(!strchr("{}[]\\,:", *q) || (quotes == 1 && *q != '\\'),
                         "byte %zu of %.*s", (size_t)(q - p), (int)cut, (const char *)p);
                quotes += *q == '"';
            }
            REQUIREF(quotes == 0 || quotes == 2, "%d quotes in %.*s", quotes, (int)cut,
                     (const char *)p);
        }
    }
    REQUIRE(stepped > 1000);
    /* what a step takes, and what it leaves to the walk */
    const struct {
        const char *in;
        int after; /* -1: not passed over */
    } cases[] = {
        {"\"name\":\"ab\",\"tier\"", 12}, {" \"name\": 12 ,", 13}, {"\"name\":true,", 12},
        {"\"name\":null,", 12},         {"\"name\":\"a\\\"b\",", -1}, {"\"name\":\"ab\"}", -1},
        {"\"name\" :1,", -1},           {"\"name\":{},", -1},         {"\"name\":[1],", -1},
        {"\"name\":,", -1},             {"\"name\":1\"a,\"x\",", -1}, {"\"nam\":1,", -1},
        {"\"name\":1", -1},             {"\"name\":\"ab", -1},          {"\"name\":\"a\\\\\",", -1},
        {"\"name\":\"\\\",", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = strlen(cases[i].in);
        const uint8_t *p = gd_place(&guard, cases[i].in, n);
        const uint8_t *r = sk_step(p, p + n, "\"name\":", 7);
        REQUIREF(cases[i].after < 0 ? r == NULL : r == p + cases[i].after, "%s: %ld", cases[i].in,
                 r == NULL ? -1L : (long)(r - p));
    }
}
END_TEST

static Suite *skip_suite(void)
{
    Suite *s = suite_create("skip");
    TCase *tc = su_tcase(s, "skip", NULL, NULL, 120);
    tcase_add_loop_test(tc, test_keys_passed_over_change_nothing, 0, SIMD_WIDTHS);
    tcase_add_test(tc, test_keys_not_given);
    tcase_add_test(tc, test_not_a_key);
    tcase_add_test(tc, test_step);
    return s;
}

int main(void) { return su_run(skip_suite()); }
