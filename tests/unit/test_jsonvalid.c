/* test_jsonvalid.c: the Check suite for runtime/jsonvalid.{h,c}, the one-pass block
 * validator, against js_validate (json.h) as the reference.
 *
 * The property: on a text whose value is an object or an array, jv_valid is
 * true exactly when js_validate accepts it (true on an invalid text would
 * let malformed bytes through verify=json; false on a valid one would only
 * cost speed, but is a bug too); on a scalar text it is false. And the
 * member it finds is the view tr_scan_detail gives. Every input ends right
 * before an unmapped page, and every test runs once per SIMD width the CPU
 * has (loop tests over simd.h's widths).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "issues.h"
#include "json.h"
#include "skip.h"
#include "tr_optics.h"
#include "jsonvalid.h"
#include "support/conformance.h"
#include "support/guard.h"
#include "support/simd.h"
#include "support/suite.h"

/* Width i, when jsonvalid.c takes it on this CPU (its avx2 and avx512 walks
 * need PCLMUL and BMI as well, without which it takes sse2; the avx512 walk
 * VBMI2 too, without which it takes avx2, tested as width 2). */
static bool use_impl(int i)
{
    if (!simd_use(i))
        return false;
#if defined(__x86_64__) || defined(__i386__)
    if (i >= 2 && !(__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("bmi") &&
                     __builtin_cpu_supports("bmi2")))
        return false;
    if (i == 3 && !(__builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("popcnt")))
        return false;
#endif
    ck_assert_str_eq(jv_impl_name(), simd_names[i]);
    return true;
}

/* Inputs end right before an unmapped page. */
static gd_guard guard = GD_GUARD(8u << 20);

static const uint8_t *place(const void *data, size_t n) { return gd_place(&guard, data, n); }

static bool ref_valid(const uint8_t *p, size_t n)
{
    js_ctx c;
    js_ctx_init(&c, p, NULL);
    return js_validate(&c, p, p + n) == p + n;
}

static bool is_container_text(const uint8_t *p, size_t n)
{
    const uint8_t *q = js_ws(p, p + n);
    return q < p + n && (*q == '{' || *q == '[');
}

static char shown[512];

static const char *show(const uint8_t *p, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < sizeof shown; i++)
        k += (size_t)snprintf(shown + k, sizeof shown - k, p[i] >= 0x20 && p[i] < 0x7f ? "%c" : "\\x%02x", p[i]);
    shown[k] = 0;
    return shown;
}

/* The property on one input, placed at the guard page; returns jv's answer. */
static bool agree(const void *data, size_t n)
{
    const uint8_t *p = place(data, n);
    bool ref = ref_valid(p, n), fast = jv_valid(p, p + n, NULL);
    bool want = ref && is_container_text(p, n);
    REQUIREF(fast == want, "jv_valid %d, js_validate %d (%s) on %zu bytes: %s", fast, ref, jv_impl_name(), n,
             show(p, n));
    return fast;
}

static bool agree_s(const char *s) { return agree(s, strlen(s)); }

/* The member found equals tr_scan_detail's view (on valid input). */
static void same_detail(const uint8_t *data, size_t n)
{
    const uint8_t *p = place(data, n);
    jv_find f = {{"detail", 6}, NULL, NULL};
    bool ok = jv_valid(p, p + n, &f);
    REQUIREF(ok == (ref_valid(p, n) && is_container_text(p, n)), "verdict differs on %s", show(p, n));
    if (!ok)
        return;
    tr_view_Detail d;
    bool hit = tr_scan_detail((tr_message){p, n}, &d);
    REQUIREF(hit == (f.val != NULL), "detail found by scan %d, by jv %d in %s", hit, f.val != NULL, show(p, n));
    if (hit)
        REQUIREF(d.p == f.val && d.p + d.n == f.end, "detail views differ (scan %td+%zu, jv %td..%td) in %s",
                 d.p - p, d.n, f.val - p, f.end - p, show(p, n));
}

/* ---- handmade cases: each rule of the grammar, on its own ---- */

static const char *const good[] = {
    "{}", "[]", " {} ", "\t[ ]\r\n", "{\"a\":1}", "[1,2,3]", "[[[]]]", "{\"a\":{\"b\":[true,false,null]}}",
    "[\"a\",\"b\"]", "{\"a\":\"b\",\"c\":\"d\"}", "[-0,0.5,1e5,1E+5,-1.25e-10,123456789012345678901234567890]",
    "{ \"a\" : 1 , \"b\" : [ 1 , 2 ] }", "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\"]", "[\"\\ud83d\\ude00\"]",
    "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]", "{\"\xc3\xa9\":\"\xef\xbf\xbf\"}", "[\"\\\\\"]",
    "[\"\\\\\\\"\"]", "[{},{},[]]", "{\"\":\"\"}", "[\"\\u0000\"]", "[0]", "[-0.0e-0]", "[\"a\\\\\",1]",
};

static const char *const bad[] = {
    "{", "[", "}", "]", "{]", "[}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "[1,]", "[,1]", "{,}", "[1 2]",
    "{\"a\":1 \"b\":2}", "{\"a\" 1}", "{1:2}", "[\"a\":1]", "{\"a\"::1}", "[01]", "[1.]", "[.5]", "[1e]",
    "[+1]", "[-]", "[tru]", "[truex]", "[nul]", "[True]", "[NaN]", "[Infinity]", "[\"a\\x\"]", "[\"\\u12\"]",
    "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud800\\u0041\"]", "[\"\\\\ud800\"x]", "[\"a\x01\"]", "[\"a\tb\"]",
    "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]", "[\"\xc3\"]", "[\"\x80\"]", "[\xc3\xa9]",
    "{} x", "{}{}", "[] []", "[1]]", "{\"a\":1}}", "[\"abc", "[\"a\\", "[1,", "{\"a\":1,\"b\"", "[/**/]",
    "[1]//", "['a']", "[\\\"a\"]", "\xef\xbb\xbf[]", "[\"\\ud800\\udbff\"]", "[1,,2]", "{\"a\":1,,\"b\":2}",
    "[1:2]", "{\"a\",\"b\"}", "[{]}", "{\"a\":[}", "[\"a\"\"b\"]", "[1\"a\"]", "[{}{}]", "[[]1]", "[-01]",
    "[1e+]", "[0x10]", "[1.5.5]", "[\"\\u00zz\"]", "[\"\xf5\x80\x80\x80\"]",
};

START_TEST(test_handmade)
{
    if (!use_impl(_i))
        return;
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        REQUIREF(agree_s(good[i]), "good case %zu rejected: %s", i, good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        REQUIREF(!agree_s(bad[i]), "bad case %zu accepted: %s", i, bad[i]);
    /* scalar texts are js_validate's: false, whatever they are */
    REQUIRE(!jv_valid((const uint8_t *)"1", (const uint8_t *)"1" + 1, NULL));
    REQUIRE(!jv_valid((const uint8_t *)"\"a\"", (const uint8_t *)"\"a\"" + 3, NULL));
    REQUIRE(!jv_valid((const uint8_t *)"", (const uint8_t *)"", NULL));
    /* NUL bytes, which the strings above cannot hold */
    REQUIRE(!agree("{\"a\":1}\0", 8));
    REQUIRE(!agree("[\0]", 3));
    REQUIRE(!agree("[\"\0\"]", 5));
    REQUIRE(!agree("{\"a\0\":1}", 9));
}
END_TEST

/* The pads the offset tests put in front of a case: every offset across
 * the first blocks' boundaries, and across the end of the AVX-512 walk's
 * first chunk (JV_CHUNK_BYTES: a number or literal running on into the next
 * chunk, the token the next chunk starts with). */
#define NPADS 280
static int pad_at(int j) { return j < 140 ? j : JV_CHUNK_BYTES - 64 + (j - 140); }

/* Dots enough for the longest pad. */
static const char *filler(void)
{
    static char dots[JV_CHUNK_BYTES + 128];
    if (dots[0] == '\0')
        memset(dots, '.', sizeof dots - 1);
    return dots;
}

/* Each case again at every offset in a block: a filler string pushes it
 * across the 64-byte boundaries (carries of strings, escapes, whitespace
 * runs, numbers, keys and pending tokens). */
START_TEST(test_block_offsets)
{
    if (!use_impl(_i))
        return;
    char buf[3 * JV_CHUNK_BYTES];
    for (int pass = 0; pass < 2; pass++) {
        const char *const *set = pass == 0 ? good : bad;
        size_t count = pass == 0 ? sizeof good / sizeof *good : sizeof bad / sizeof *bad;
        for (size_t c = 0; c < count; c++) {
            const char *t = set[c];
            if (t[0] != '[' && t[0] != '{')
                continue;
            for (int j = 0; j < NPADS; j++) {
                /* ["xxx…",<case>]: the case moves one byte a time */
                int pad = pad_at(j);
                int k = snprintf(buf, sizeof buf, "[\"%.*s\",%s]", pad, filler(), t);
                REQUIRE(k > 0 && (size_t)k < sizeof buf);
                bool fast = agree(buf, (size_t)k);
                REQUIREF(fast == (pass == 0), "case %s at pad %d: %d", t, pad, fast);
                for (int w = 0; w < 2; w++) {
                    /* whitespace runs at the boundary */
                    k = snprintf(buf, sizeof buf, "[%*s%s%*s]", pad, "", t, w * pad, "");
                    REQUIRE(k > 0 && (size_t)k < sizeof buf);
                    fast = agree(buf, (size_t)k);
                    REQUIREF(fast == (pass == 0), "case %s after %d spaces: %d", t, pad, fast);
                }
            }
        }
    }
}
END_TEST

START_TEST(test_depth)
{
    if (!use_impl(_i))
        return;
    size_t n = 200000;
    char *b = malloc(n);
    REQUIRE(b != NULL);
    for (int depth = JS_MAX_DEPTH - 1; depth <= JS_MAX_DEPTH + 1; depth++) {
        memset(b, '[', (size_t)depth);
        memset(b + depth, ']', (size_t)depth);
        bool fast = agree(b, 2 * (size_t)depth);
        REQUIREF(fast == (depth <= JS_MAX_DEPTH), "depth %d: %d", depth, fast);
    }
    /* a bomb: 100 000 '[' (and then their closers) */
    memset(b, '[', 100000);
    REQUIRE(!agree(b, 100000));
    memset(b + 100000, ']', 100000);
    REQUIRE(!agree(b, 200000));
    free(b);
}
END_TEST

/* ---- generated messages: valid, with detail where the scanner finds it */

static iss_gen *gen;
static int gen_size;

/* Message i of the run seeded with seed, at a size; one generator, made
 * again only when the size changes. */
static const uint8_t *message(uint64_t seed, uint64_t i, int size, bool first, size_t *n)
{
    if (gen == NULL || gen_size != size) {
        if (gen != NULL)
            iss_gen_free(gen);
        gen = iss_gen_new(size);
        gen_size = size;
    }
    REQUIRE(gen != NULL);
    const uint8_t *f = iss_gen_frame(gen, seed, i, first, n);
    REQUIRE(f != NULL);
    *n -= FR_HEADER_LEN;
    return f + FR_HEADER_LEN;
}

START_TEST(test_messages)
{
    if (!use_impl(_i))
        return;
    static const int sizes[] = {1, 2, 3, 7, 15, 40};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (uint64_t i = 0; i < 150; i++)
            for (int first = 0; first < 2; first++) {
                size_t n;
                const uint8_t *m = message(7 + (uint64_t)s, i, sizes[s], first, &n);
                REQUIRE(agree(m, n));
                same_detail(m, n);
            }
}
END_TEST

/* Every prefix, and every byte replaced by each of the bytes the grammar
 * cares about: the verdicts agree, and so do the details found. */
START_TEST(test_corruptions)
{
    if (!use_impl(_i))
        return;
    static const uint8_t subst[] = {'"', '\\', '{', '}', '[', ']', ':', ',', ' ', '\n', '0', '1', '-', '.',
                                    'e', 't', 'x', 0x00, 0x1f, 0x80, 0xc3, 0xff, '/', 'u'};
    size_t n;
    const uint8_t *m = message(3, 1, 1, false, &n);
    uint8_t *b = malloc(n);
    REQUIRE(b != NULL);
    memcpy(b, m, n);
    for (size_t k = 0; k <= n; k++)
        agree(b, k);
    for (size_t i = 0; i < n; i++) {
        uint8_t was = b[i];
        for (size_t s = 0; s < sizeof subst; s++) {
            b[i] = subst[s];
            agree(b, n);
            same_detail(b, n);
        }
        b[i] = was;
    }
    free(b);
}
END_TEST

/* The same messages with whitespace between every token, escaped keys
 * and a detail in odd places. */
static size_t spaced(const uint8_t *m, size_t n, uint8_t *out, unsigned seed)
{
    size_t k = 0;
    bool in = false;
    static const char ws[] = " \t\n\r";
    for (size_t i = 0; i < n; i++) {
        uint8_t c = m[i];
        if (in) {
            out[k++] = c;
            if (c == '\\')
                out[k++] = m[++i];
            else if (c == '"')
                in = false;
            continue;
        }
        /* between tokens only: not inside a number or literal */
        bool token = strchr("{}[]:,\"", c) != NULL || (i > 0 && strchr("{}[]:,\"", m[i - 1]) != NULL);
        seed = seed * 1103515245u + 12345u;
        for (unsigned r = token ? (seed >> 16) % 4 : 0; r > 0; r--)
            out[k++] = (uint8_t)ws[(seed >> (8 + r)) & 3];
        out[k++] = c;
        in = c == '"';
    }
    return k;
}

START_TEST(test_whitespace)
{
    if (!use_impl(_i))
        return;
    uint8_t *b = malloc(1u << 20);
    REQUIRE(b != NULL);
    for (uint64_t i = 0; i < 60; i++) {
        size_t n;
        const uint8_t *m = message(11, i, 3, i & 1, &n);
        size_t k = spaced(m, n, b, (unsigned)i);
        REQUIRE(agree(b, k));
        same_detail(b, k);
    }
    free(b);
}
END_TEST

START_TEST(test_find)
{
    if (!use_impl(_i))
        return;
    static const char *const cases[] = {
        "{\"detail\":{\"type\":\"Bug\"}}",
        "{\"a\":1,\"detail\":[1,{\"x\":2}],\"b\":2}",
        "{\"detail\":\"text\"}",
        "{\"detail\":12.5e3}",
        "{\"detail\" : \t{ } , \"z\":0}",
        "{\"\\u0064etail\":{\"k\":1}}",
        "{\"d\\u0065tail\":{\"k\":1}}",
        "{\"detail\":{\"n\":1},\"detail\":{\"n\":2}}",
        "{\"x\":{\"detail\":{\"deep\":1}},\"detail\":{\"top\":1}}",
        "{\"key\":\"detail\",\"details\":1,\"detai\":2}",
        "{\"Detail\":{},\"detail\":{}}",
        "[{\"detail\":{}}]",
        "{\"description\":\"d\",\"dueAt\":1,\"detail\":{\"a\":[[{}]]}}",
    };
    char buf[JV_CHUNK_BYTES + 512];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int j = 0; j < NPADS; j++) {
            /* a leading member of growing size moves the key across blocks */
            const char *t = cases[c];
            int pad = pad_at(j);
            int k = t[0] == '{' ? snprintf(buf, sizeof buf, "{\"pad\":\"%.*s\",%s", pad, filler(), t + 1)
                                : snprintf(buf, sizeof buf, "%s", t);
            REQUIRE(k > 0 && (size_t)k < sizeof buf);
            REQUIREF(agree(buf, (size_t)k), "not valid: %s", buf);
            same_detail((const uint8_t *)buf, (size_t)k);
        }
    /* the found view, spelled out for one case */
    const char *t = "{\"a\":1,\"detail\":{\"type\":\"Bug\"},\"b\":2}";
    const uint8_t *p = place(t, strlen(t));
    jv_find f = {{"detail", 6}, NULL, NULL};
    REQUIRE(jv_valid(p, p + strlen(t), &f));
    REQUIRE(f.val != NULL && f.end - f.val == 14 && memcmp(f.val, "{\"type\":\"Bug\"}", 14) == 0);
}
END_TEST

/* ---- JSONTestSuite: y_ containers valid, n_ never, i_ as js_validate */

static void conformance_case(const char *name, const uint8_t *p, size_t n, void *ctx)
{
    (void)ctx;
    bool fast = agree(p, n);
    if (name[0] == 'n')
        REQUIREF(!fast, "%s accepted", name);
}

START_TEST(test_conformance)
{
    if (!use_impl(_i))
        return;
    int seen = cf_each(conformance_case, NULL, _i == 0);
    REQUIREF(seen < 0 || seen > 300, "only %d conformance files", seen);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jsonvalid");
    TCase *tc = su_tcase(s, "valid", NULL, NULL, 600);
    tcase_add_loop_test(tc, test_handmade, 0, SIMD_WIDTHS);
    tcase_add_loop_test(tc, test_block_offsets, 0, SIMD_WIDTHS);
    tcase_add_loop_test(tc, test_depth, 0, SIMD_WIDTHS);
    tcase_add_loop_test(tc, test_messages, 0, SIMD_WIDTHS);
    tcase_add_loop_test(tc, test_corruptions, 0, SIMD_WIDTHS);
    tcase_add_loop_test(tc, test_whitespace, 0, SIMD_WIDTHS);
    tcase_add_loop_test(tc, test_find, 0, SIMD_WIDTHS);
    tcase_add_loop_test(tc, test_conformance, 0, SIMD_WIDTHS);
    return s;
}

int main(void) { return su_run(suite()); }
