/* test_verify_limits.c: the limits docs/security.md states, each at the
 * limit and one past it, through the splitter, the verify levels
 * (filter/verify.h) and every reader: the frame size, a string's and a key's
 * length, nesting depth, a number's length, a map's entries (in linear
 * time), the decoder's and the validator's arenas, and compressed frames.
 * Where the limit is a define in a source file, the suite checks the file
 * still says what the page says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frames.h"
#include "support/bytes.h"
#include "support/demo/verify_cases.h"
#include "support/fixture.h"
#include "support/suite.h"


/* RD_DECODE_ARENA in filter/reader.h (judge and the filter): 64 MiB, 16 x the frame limit. The message
 * that needs the most arena per byte is a list of empty strings (3 bytes on
 * the wire, a 16-byte view plus its 16-byte scratch copy while the list is
 * collected); at 4 MiB it fits, and the decoder needs exactly what its
 * high-water mark says: one byte less is TR_E_ARENA. */
#define DECODE_ARENA_STATED (64u << 20)
/* VF_ARENA in filter/verify.c: the validator's scratch (escaped keys, map
 * keys and their hash tables). */
#define VF_ARENA_STATED (24u << 20)

/* A define in a source file, as docs/security.md states it. */
static void stated(const char *path, const char *define)
{
    bb *src = vc_read_file(path);
    REQUIREF(strstr((const char *)src->p, define) != NULL,
             "%s no longer has '%s': update docs/security.md and this test", path, define);
}

START_TEST(limit_frame_size)
{
    ck_assert_uint_eq(FR_DEFAULT_MAX_LEN, 4u << 20);
    uint8_t h[FR_HEADER_LEN];
    fr_splitter s;
    fr_frame f;
    /* at the limit: the splitter waits for the body */
    fr_init(&s);
    fr_put_header(h, false, FR_DEFAULT_MAX_LEN);
    ck_assert_int_eq(fr_next(&s, h, h + FR_HEADER_LEN, 0, &f), FR_NEED_MORE);
    /* one past: rejected from the 5 header bytes, before any body */
    fr_init(&s);
    fr_put_header(h, false, FR_DEFAULT_MAX_LEN + 1);
    ck_assert_int_eq(fr_next(&s, h, h + FR_HEADER_LEN, 0, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_FRAME_SIZE);
    ck_assert_uint_eq(s.err.offset, 1);
    /* the largest length a header can hold */
    fr_init(&s);
    fr_put_header(h, false, UINT32_MAX);
    ck_assert_int_eq(fr_next(&s, h, h + FR_HEADER_LEN, 0, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_FRAME_SIZE);
}
END_TEST

/* A message of exactly n bytes: the detail, the rest, and one unknown field
 * "zz" whose string value (or key) pads it out. */
static bb *padded(size_t n, bool in_key)
{
    bb *b = bb_new();
    bb_puts(b, "{");
    bb_put(b, vc_keep.p, vc_keep.n);
    bb_puts(b, ",");
    bb_put(b, vc_rest->p, vc_rest->n);
    bb_puts(b, in_key ? ",\"" : ",\"zz\":\"");
    size_t tail = in_key ? strlen("\":1}") : strlen("\"}");
    REQUIRE(b->n + tail <= n);
    size_t fill = n - b->n - tail;
    size_t at = b->n;
    bb_reserve(b, fill);
    memset(b->p + at, 'a', fill);
    b->n += fill;
    bb_puts(b, in_key ? "\":1}" : "\"}");
    REQUIRE(b->n == n);
    return b;
}

/* One frame holding m: the splitter's answer. */
static fr_status frame_it(const bb *m, fr_splitter *s, fr_frame *f)
{
    bb *fb = bb_new();
    uint8_t h[FR_HEADER_LEN];
    fr_put_header(h, false, (uint32_t)m->n);
    bb_put(fb, h, FR_HEADER_LEN);
    bb_put(fb, m->p, m->n);
    fr_init(s);
    return fr_next(s, fb->p, fb->p + fb->n, 0, f);
}

START_TEST(limit_string_and_key_length)
{
    for (int in_key = 0; in_key < 2; in_key++) {
        fr_splitter s;
        fr_frame f;
        bb *m = padded(FR_DEFAULT_MAX_LEN, in_key);
        ck_assert_int_eq(frame_it(m, &s, &f), FR_FRAME);
        vc_expect_ok(in_key ? "4 MiB key" : "4 MiB string", vc_msg(m), INC, true);
        bb *m1 = padded(FR_DEFAULT_MAX_LEN + 1, in_key);
        ck_assert_int_eq(frame_it(m1, &s, &f), FR_ERROR);
        ck_assert_int_eq(s.err.code, TR_E_FRAME_SIZE);
    }
}
END_TEST

START_TEST(limit_depth)
{
    ck_assert_int_eq(JS_MAX_DEPTH, 256);
    for (int extra = 0; extra < 2; extra++) {
        /* js_validate alone: JS_MAX_DEPTH arrays, then one more */
        bb *a = bb_new();
        bb_rep(a, "[", JS_MAX_DEPTH + extra);
        bb_rep(a, "]", JS_MAX_DEPTH + extra);
        js_ctx c;
        js_ctx_init(&c, a->p, NULL);
        const uint8_t *r = js_validate(&c, a->p, a->p + a->n);
        if (!extra) {
            ck_assert_ptr_eq(r, a->p + a->n);
        } else {
            ck_assert_ptr_null(r);
            ck_assert_int_eq(c.err.code, TR_E_DEPTH);
            ck_assert_uint_eq(c.err.offset, JS_MAX_DEPTH);
        }
        /* in a message, whose object is depth 1 */
        bb *x = bb_new();
        bb_puts(x, "\"zz\":");
        size_t open = x->n;
        bb_rep(x, "[", JS_MAX_DEPTH - 1 + extra);
        bb_rep(x, "]", JS_MAX_DEPTH - 1 + extra);
        vc_piece parts[3] = {vc_of(x), vc_keep, vc_of(vc_rest)};
        size_t pos[3];
        bb *m = vc_compose(parts, 3, pos);
        size_t at = pos[0] + open + JS_MAX_DEPTH - 1;
        if (!extra)
            vc_expect_ok("depth at the limit", vc_msg(m), INC, true);
        else
            vc_expect_bad("depth one past", vc_msg(m), TR_E_DEPTH, at, TR_E_DEPTH, at);
        /* objects count the same as arrays */
        bb *o = bb_new();
        bb_puts(o, "\"zz\":");
        for (int i = 0; i < JS_MAX_DEPTH - 1 + extra; i++)
            bb_puts(o, "{\"a\":");
        bb_puts(o, "1");
        bb_rep(o, "}", JS_MAX_DEPTH - 1 + extra);
        parts[0] = vc_of(o);
        m = vc_compose(parts, 3, pos);
        at = pos[0] + open + (JS_MAX_DEPTH - 1) * 5;
        if (!extra)
            vc_expect_ok("object depth at the limit", vc_msg(m), INC, true);
        else
            vc_expect_bad("object depth one past", vc_msg(m), TR_E_DEPTH, at, TR_E_DEPTH, at);
    }
}
END_TEST

/* JS_MAX_NUMBER_LEN bounds the number tokens that are converted through
 * strtod (f64 fields): 1024 bytes accepted, 1025 TR_E_TOO_LONG. Integer
 * fields never get that far (20 digits are TR_E_RANGE), and a number in an
 * unknown field is validated in one pass and never converted: its length is
 * bounded by the frame alone. */
START_TEST(limit_number_length)
{
    ck_assert_int_eq(JS_MAX_NUMBER_LEN, 1024);
    for (int extra = 0; extra < 2; extra++) {
        size_t len = JS_MAX_NUMBER_LEN + extra;
        bb *x = bb_new();
        bb_puts(x, "\"score\":");
        size_t at = x->n;
        bb_puts(x, "0.");
        bb_rep(x, "0", len - 3);
        bb_puts(x, "5");
        REQUIRE(x->n - at == len);
        bb *r = vc_rest_without("score");
        vc_piece parts[3] = {vc_keep, vc_of(r), vc_of(x)};
        size_t pos[3];
        bb *m = vc_compose(parts, 3, pos);
        char name[64];
        snprintf(name, sizeof name, "f64 number of %zu bytes", len);
        if (!extra)
            vc_expect_ok(name, vc_msg(m), INC, true);
        else
            vc_expect_bad(name, vc_msg(m), TR_E_OK, 0, TR_E_TOO_LONG, pos[2] + at);
    }
    /* unknown fields: 1025 bytes and 1 MiB of digits, fine at both levels */
    static const size_t lens[] = {JS_MAX_NUMBER_LEN + 1, 1u << 20};
    for (int i = 0; i < 2; i++) {
        bb *x = bb_new();
        bb_puts(x, "\"zz\":-1");
        bb_rep(x, "0", lens[i] - 3);
        bb_puts(x, ".5e-7");
        vc_piece parts[3] = {vc_keep, vc_of(vc_rest), vc_of(x)};
        vc_expect_ok("long number in an unknown field", vc_msg(vc_compose(parts, 3, NULL)), INC, true);
    }
}
END_TEST

/* The tags map, filled with distinct keys up to the frame limit: accepted in
 * linear time (a quadratic duplicate check would take hours here), and a
 * repeat of the first key at the very end found. */
static bb *big_map(size_t n, bool escaped, bool dup_last, size_t *dup_at)
{
    bb *r = vc_rest_without("tags");
    bb *b = bb_new();
    bb_puts(b, "{");
    bb_put(b, vc_keep.p, vc_keep.n);
    bb_puts(b, ",");
    bb_put(b, r->p, r->n);
    bb_puts(b, ",\"tags\":{");
    size_t first_entry = b->n;
    char key[64];
    size_t entry_len = escaped ? strlen("\"\\u006b00000000\":\"\",") : strlen("\"k00000000\":\"\",");
    size_t reserve = entry_len + 2; /* the duplicate, and "}}" */
    for (unsigned i = 0; b->n + entry_len + reserve <= n; i++) {
        snprintf(key, sizeof key, escaped ? "\"\\u006b%08u\":\"\"," : "\"k%08u\":\"\",", i);
        bb_puts(b, key);
    }
    if (dup_last) {
        *dup_at = b->n;
        bb_put(b, b->p + first_entry, entry_len - 1);
    } else {
        b->n--; /* the last comma */
    }
    bb_puts(b, "}}");
    while (b->n < n) { /* pad with whitespace, inside the message */
        bb_puts(b, " ");
    }
    return b;
}

START_TEST(limit_map_entries)
{
    uint8_t *dec_mem = fx_alloc(DECODE_ARENA_STATED), *val_mem = fx_alloc(VF_ARENA_STATED);
    for (int escaped = 0; escaped < 2; escaped++) {
        size_t dup_at;
        clock_t t0 = clock();
        bb *m = big_map(FR_DEFAULT_MAX_LEN, escaped, false, &dup_at);
        fr_splitter s;
        fr_frame f;
        ck_assert_int_eq(frame_it(m, &s, &f), FR_FRAME);
        vc_expect_ok(escaped ? "4 MiB map, escaped keys" : "4 MiB map", vc_msg(m), INC, true);
        size_t entries = vc_issue()->tags.count;
        ck_assert_uint_gt(entries, 200000);
        /* the arenas it needs, under the stated sizes */
        ar_arena a;
        ar_init(&a, dec_mem, DECODE_ARENA_STATED);
        tr_Issue is;
        ck_assert_int_eq(tr_decode_Issue(m->p, m->n, &a, &is).code, TR_E_OK);
        size_t dec_high = a.high;
        ar_init(&a, val_mem, VF_ARENA_STATED);
        ck_assert_int_eq(tr_validate_Issue(m->p, m->n, &a).code, TR_E_OK);
        fprintf(stderr, "note: 4 MiB map (%zu entries%s): decode arena %zu bytes, validator %zu\n",
                entries, escaped ? ", escaped keys" : "", dec_high, a.high);
        ck_assert_uint_le(dec_high, DECODE_ARENA_STATED);
        ck_assert_uint_le(a.high, VF_ARENA_STATED);
        bb *d = big_map(FR_DEFAULT_MAX_LEN, escaped, true, &dup_at);
        /* A repeated plain key is reported at that key; an escaped one
         * (unescaped into the arena) at the map's opening brace. */
        size_t want = escaped ? (size_t)(strstr((const char *)d->p, "\"tags\":{") - (const char *)d->p) + 7
                              : dup_at;
        vc_expect_bad("4 MiB map, last key repeats the first", vc_msg(d), TR_E_OK, 0, TR_E_DUPLICATE_KEY, want);
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        REQUIREF(secs < 60, "map checks took %.1f s: not linear", secs);
    }
}
END_TEST

START_TEST(limit_decode_arena)
{
    /* the values docs/security.md states are the ones the commands use */
    ck_assert_uint_eq(RD_DECODE_ARENA, DECODE_ARENA_STATED); /* judge's and the filter's */
    stated("filter/verify.c", "#define VF_ARENA (24u << 20)");
    /* The lists that cost the most arena per byte on the wire: i64s of one
     * digit (2 bytes each, 8 in the list and 8 on the scratch stack while
     * it is collected) and empty strings (3 bytes, 16 + 16). */
    static const struct {
        const char *field, *item;
    } fills[] = {{"subtaskIds", "0"}, {"labels", "\"\""}};
    uint8_t *mem = fx_alloc(DECODE_ARENA_STATED);
    for (int i = 0; i < 2; i++) {
        bb *r = vc_rest_without(fills[i].field);
        bb *m = bb_new();
        bb_puts(m, "{");
        bb_put(m, vc_keep.p, vc_keep.n);
        bb_puts(m, ",");
        bb_put(m, r->p, r->n);
        bb_puts(m, ",\"");
        bb_puts(m, fills[i].field);
        bb_puts(m, "\":[");
        bb_puts(m, fills[i].item);
        size_t step = strlen(fills[i].item) + 1;
        while (m->n + step + 2 <= FR_DEFAULT_MAX_LEN) {
            bb_puts(m, ",");
            bb_puts(m, fills[i].item);
        }
        bb_puts(m, "]}");
        while (m->n < FR_DEFAULT_MAX_LEN)
            bb_puts(m, " ");
        ck_assert_uint_eq(m->n, FR_DEFAULT_MAX_LEN);

        ar_arena a;
        ar_init(&a, mem, DECODE_ARENA_STATED);
        tr_Issue v;
        tr_error e = tr_decode_Issue(m->p, m->n, &a, &v);
        ck_assert_int_eq(e.code, TR_E_OK);
        size_t high = a.high;
        fprintf(stderr, "note: 4 MiB message, %s of %s: decode arena %zu bytes\n", fills[i].field,
                fills[i].item, high);
        ck_assert_uint_le(high, DECODE_ARENA_STATED);
        /* 8 bytes of slack for alignment, then one byte short */
        ar_init(&a, mem, high + 8);
        ck_assert_int_eq(tr_decode_Issue(m->p, m->n, &a, &v).code, TR_E_OK);
        ar_init(&a, mem, high - 1);
        e = tr_decode_Issue(m->p, m->n, &a, &v);
        ck_assert_int_eq(e.code, TR_E_ARENA);
        /* the validator builds nothing: it passes with its own scratch */
        ck_assert_int_eq(vc_check(VF_SCHEMA, vc_msg(m)).code, TR_E_OK);
        /* and a rejection for want of arena is a rejection like any other */
        ck_assert_int_eq(vc_check(VF_JSON, vc_msg(m)).code, TR_E_OK);
    }
}
END_TEST

START_TEST(limit_compressed_frames)
{
    static const uint8_t fr[] = {1, 0, 0, 0, 2, '{', '}'};
    fr_splitter s;
    fr_frame f;
    fr_init(&s);
    ck_assert_int_eq(fr_next(&s, fr, fr + sizeof fr, 0, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_COMPRESSED);
    ck_assert_uint_eq(s.err.offset, 0);
    /* refused from the flag byte alone */
    fr_init(&s);
    ck_assert_int_eq(fr_next(&s, fr, fr + 1, 0, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_COMPRESSED);
    fr_init(&s);
    s.allow_compressed = true;
    ck_assert_int_eq(fr_next(&s, fr, fr + sizeof fr, 0, &f), FR_FRAME);
    ck_assert(f.compressed);
    static const uint8_t bad[] = {2, 0, 0, 0, 0};
    fr_init(&s);
    s.allow_compressed = true;
    ck_assert_int_eq(fr_next(&s, bad, bad + sizeof bad, 0, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_FRAME_FLAG);
}
END_TEST


static Suite *limits_suite(void)
{
    Suite *s = suite_create("verify_limits");
    TCase *t = su_tcase(s, "limits", NULL, fx_teardown, 600);
    tcase_add_test(t, limit_frame_size);
    tcase_add_test(t, limit_string_and_key_length);
    tcase_add_test(t, limit_depth);
    tcase_add_test(t, limit_number_length);
    tcase_add_test(t, limit_map_entries);
    tcase_add_test(t, limit_decode_arena);
    tcase_add_test(t, limit_compressed_frames);
    return s;
}

int main(void)
{
    vc_init();
    return su_run(limits_suite());
}
