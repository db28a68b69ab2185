/* test_tally.c: the tally (rows, kept, judge time), the frame digest
 * (XXH64 against the reference's published values, folding in order), and
 * the report's exact text and JSON. */
#include <stdlib.h>
#include <string.h>

#include "tally.h"
#include "support/suite.h"

static const char *const names[] = {"Bug", "Incident", "Request"};

START_TEST(xxh64_reference_values)
{
    /* Published XXH64 values (seed 0), covering the short path, the 4- and
     * 1-byte tails, and the 32-byte stripes. */
    ck_assert_uint_eq(tl_xxh64("", 0, 0), 0xEF46DB3751D8E999ull);
    ck_assert_uint_eq(tl_xxh64("a", 1, 0), 0xD24EC4F1A98C6E5Bull);
    ck_assert_uint_eq(tl_xxh64("abc", 3, 0), 0x44BC2CF5AD770999ull);
    const char *s = "Nobody inspects the spammish repetition";
    ck_assert_uint_eq(tl_xxh64(s, strlen(s), 0), 0xFBCEA83C8A378BF1ull);
}
END_TEST

START_TEST(xxh64_any_alignment)
{
    uint8_t buf[300], copy[320];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    for (size_t n = 0; n <= sizeof buf; n += 7) {
        uint64_t h = tl_xxh64(buf, n, 0);
        for (size_t a = 1; a < 9; a++) {
            memcpy(copy + a, buf, n);
            ck_assert_uint_eq(tl_xxh64(copy + a, n, 0), h);
        }
        ck_assert_uint_ne(tl_xxh64(buf, n, 1), h); /* the seed matters */
    }
}
END_TEST

START_TEST(digest_is_a_sequence_of_frames)
{
    const uint8_t a[] = {0, 0, 0, 0, 2, '{', '}'};
    const uint8_t b[] = {0, 0, 0, 0, 3, '[', '1', ']'};
    tl_digest x, y, z, e;
    tl_digest_init(&x);
    tl_digest_init(&y);
    tl_digest_init(&z);
    tl_digest_init(&e);
    tl_digest_add(&x, a, sizeof a);
    tl_digest_add(&x, b, sizeof b);
    tl_digest_add(&y, a, sizeof a);
    tl_digest_add(&y, b, sizeof b);
    tl_digest_add(&z, b, sizeof b);
    tl_digest_add(&z, a, sizeof a);
    ck_assert_uint_eq(x.h, y.h);
    ck_assert_uint_ne(x.h, z.h); /* order matters */
    ck_assert_uint_ne(x.h, e.h);
    ck_assert_uint_eq(x.frames, 2);
    ck_assert_uint_eq(x.bytes, sizeof a + sizeof b);
    /* A frame seen twice is not the frame seen once. */
    tl_digest_add(&y, b, sizeof b);
    ck_assert_uint_ne(x.h, y.h);
    /* Nor is one frame the same as two that concatenate to it. */
    uint8_t ab[sizeof a + sizeof b];
    memcpy(ab, a, sizeof a);
    memcpy(ab + sizeof a, b, sizeof b);
    tl_digest_init(&e);
    tl_digest_add(&e, ab, sizeof ab);
    ck_assert_uint_ne(x.h, e.h);
}
END_TEST

START_TEST(rows_and_totals)
{
    tl_tally t;
    tl_init(&t, 3, names);
    tl_count(&t, 0, true, 100);
    tl_count(&t, 0, false, 50);
    tl_count(&t, 2, true, 10);
    tl_count(&t, -1, false, 5);
    tl_count(&t, 7, true, 1); /* out of range: the none row */
    ck_assert_uint_eq(t.seen[0], 2);
    ck_assert_uint_eq(t.kept[0], 1);
    ck_assert_uint_eq(t.seen[1], 0);
    ck_assert_uint_eq(t.seen[2], 1);
    ck_assert_uint_eq(t.seen[3], 2);
    ck_assert_uint_eq(t.kept[3], 1);
    ck_assert_uint_eq(t.messages, 5);
    ck_assert_uint_eq(t.bytes, 166);
    ck_assert_uint_eq(tl_kept(&t), 3);
    tl_judge_time(&t, 4, 4000);
    tl_judge_time(&t, 1, 1000);
    ck_assert_uint_eq(t.judged, 5);
    ck_assert_uint_eq(t.judge_ns, 5000);

    tl_tally u;
    tl_init(&u, 3, names);
    ck_assert(!tl_same_rows(&t, &u));
    tl_count(&u, 0, true, 1);
    tl_count(&u, 0, false, 1);
    tl_count(&u, 2, true, 1);
    tl_count(&u, 3, false, 1);
    tl_count(&u, -5, true, 1);
    ck_assert(tl_same_rows(&t, &u)); /* bytes and time are not rows */
    const char *other[] = {"Bug", "Incident", "Wish"};
    tl_init(&u, 3, other);
    ck_assert(!tl_same_rows(&t, &u));
    tl_init(&u, 2, names);
    ck_assert(!tl_same_rows(&t, &u));

    const char *many[TL_MAX_KINDS + 5];
    for (int k = 0; k < TL_MAX_KINDS + 5; k++)
        many[k] = "K";
    tl_init(&u, TL_MAX_KINDS + 5, many); /* clamped, never past the rows */
    ck_assert_int_eq(u.kinds, TL_MAX_KINDS);
    tl_count(&u, TL_MAX_KINDS + 2, true, 1);
    ck_assert_uint_eq(u.seen[TL_MAX_KINDS], 1);
}
END_TEST

/* The tally of the sample report. */
static void sample(tl_tally *t)
{
    tl_init(t, 3, names);
    uint64_t seen[] = {66199, 63289, 70512}, kept[] = {8205, 10745, 12500};
    for (int k = 0; k < 3; k++) {
        t->seen[k] = seen[k];
        t->kept[k] = kept[k];
    }
    t->messages = 200000;
    t->bytes = 813300000;
    tl_judge_time(t, 200000, 200000ull * 7100);
}

static char *printed(const tl_tally *t, bool json)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    ck_assert_ptr_nonnull(f);
    if (json)
        tl_print_json(f, t, 2.21);
    else
        tl_print(f, "optics", t, 2.21);
    fclose(f);
    return s;
}

START_TEST(report_text)
{
    tl_tally t;
    sample(&t);
    char *s = printed(&t, false);
    /* 200000 / 2.21 s is 90.5 k (the sample rounds its own,
     * unrounded, time). */
    ck_assert_str_eq(s, "optics: 200000 messages, 813.3 MB in 2.21 s:\n"
                        "  90 k messages/s, 368 MB/s\n"
                        "  judging them took 7.1 µs per message; the rest is sockets and framing\n"
                        "  kind            seen      kept\n"
                        "  Bug            66199      8205\n"
                        "  Incident       63289     10745\n"
                        "  Request        70512     12500\n"
                        "  none               0         0\n");
    free(s);
}
END_TEST

START_TEST(report_json)
{
    tl_tally t;
    sample(&t);
    const uint8_t frame[] = {0, 0, 0, 0, 1, '1'};
    tl_digest_add(&t.forwarded, frame, sizeof frame);
    t.bytes_copied = 0;
    t.allocations = 2;
    char *s = printed(&t, true);
    char want[128];
    snprintf(want, sizeof want, "\"digest\":\"%016llx\"", (unsigned long long)t.forwarded.h);
    ck_assert_msg(strstr(s, want) != NULL, "%s", s);
    const char *parts[] = {
        "\"messages\":200000,\"bytes\":813300000,\"seconds\":2.210,\"msgs_per_s\":90498,"
        "\"mb_per_s\":368.0,\"judge_ns_per_msg\":7100,",
        "\"kinds\":{\"Bug\":{\"seen\":66199,\"kept\":8205},\"Incident\":{\"seen\":63289,"
        "\"kept\":10745},\"Request\":{\"seen\":70512,\"kept\":12500},\"none\":{\"seen\":0,"
        "\"kept\":0}}",
        "\"kept\":31450,\"kept_bytes\":6,",
        "\"bytes_copied\":0,\"allocations\":2,\"judged\":200000,\"judge_ns\":1420000000",
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        ck_assert_msg(strstr(s, parts[i]) != NULL, "missing %s in %s", parts[i], s);
    ck_assert(s[0] == '"' && s[strlen(s) - 1] != '}'); /* members only */
    free(s);
}
END_TEST

START_TEST(report_of_nothing)
{
    tl_tally t;
    tl_init(&t, 3, names);
    char *s = printed(&t, false);
    ck_assert_msg(strstr(s, "optics: 0 messages, 0.0 MB in 2.21 s:\n  0 messages/s, 0 MB/s\n"
                            "  judging them took 0.0 µs per message") != NULL,
                  "%s", s);
    free(s);
}
END_TEST

static Suite *tally_suite(void)
{
    Suite *s = suite_create("tally");
    TCase *t = su_tcase(s, "tally", NULL, NULL, 0);
    tcase_add_test(t, xxh64_reference_values);
    tcase_add_test(t, xxh64_any_alignment);
    tcase_add_test(t, digest_is_a_sequence_of_frames);
    tcase_add_test(t, rows_and_totals);
    tcase_add_test(t, report_text);
    tcase_add_test(t, report_json);
    tcase_add_test(t, report_of_nothing);
    return s;
}

int main(void) { return su_run(tally_suite()); }
