/* test_ringbuf.c: the read buffer, mirrored and flat: contiguity across the
 * wrap point, the copy and allocation counters, and a model check. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frames.h"
#include "ringbuf.h"
#include "support/rng.h"
#include "support/suite.h"

static size_t page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static void init(rb_ring *rb, size_t cap, rb_mode mode)
{
    char err[128] = "";
    int rc = rb_init(rb, cap, mode, err, sizeof err);
    ck_assert_msg(rc == 0, "rb_init: %s", err);
}

START_TEST(capacity_rounds_to_pages)
{
    rb_ring rb;
    init(&rb, 1, RB_MIRROR);
    ck_assert_uint_eq(rb.cap, page());
    ck_assert(rb.mirrored);
    ck_assert_uint_eq(rb.allocations, 1);
    ck_assert_uint_eq(rb.bytes_copied, 0);
    ck_assert_str_eq(rb.why_flat, "");
    rb_destroy(&rb);

    init(&rb, 0, RB_FLAT);
    ck_assert_uint_eq(rb.cap, RB_DEFAULT_CAP);
    ck_assert_uint_ge(rb.cap, 2 * (FR_DEFAULT_MAX_LEN + FR_HEADER_LEN));
    ck_assert(!rb.mirrored);
    ck_assert_uint_eq(rb.allocations, 1);
    rb_destroy(&rb);

    init(&rb, page() + 1, RB_FLAT);
    ck_assert_uint_eq(rb.cap, 2 * page());
    rb_destroy(&rb);
}
END_TEST

START_TEST(mirror_shows_the_same_bytes_twice)
{
    rb_ring rb;
    init(&rb, 4 * page(), RB_MIRROR);
    rb.base[0] = 0xab;
    rb.base[rb.cap - 1] = 0xcd;
    ck_assert_uint_eq(rb.base[rb.cap], 0xab);
    ck_assert_uint_eq(rb.base[2 * rb.cap - 1], 0xcd);
    rb.base[rb.cap + 7] = 0x11;
    ck_assert_uint_eq(rb.base[7], 0x11);
    rb_destroy(&rb);
}
END_TEST

START_TEST(env_forces_flat)
{
    rb_ring rb;
    setenv("TR_RING", "flat", 1);
    init(&rb, 0, RB_AUTO);
    ck_assert(!rb.mirrored);
    ck_assert_str_eq(rb.why_flat, "TR_RING=flat");
    rb_destroy(&rb);
    /* An explicit mode is not overridden. */
    init(&rb, 0, RB_MIRROR);
    ck_assert(rb.mirrored);
    rb_destroy(&rb);
    unsetenv("TR_RING");
    init(&rb, 0, RB_AUTO);
    ck_assert(rb.mirrored);
    rb_destroy(&rb);
}
END_TEST

START_TEST(too_large_is_an_error)
{
    rb_ring rb;
    char err[128] = "";
    ck_assert_int_eq(rb_init(&rb, SIZE_MAX - 10, RB_FLAT, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "too large"));
}
END_TEST

/* A frame A of cap - 100 bytes, then the first `early` bytes of a frame B of
 * 1000 bytes in the same write; A is split and consumed, then the rest of B
 * arrives. B straddles the end of the buffer. Returns B's body view. */
static void straddle(rb_ring *rb, size_t early, fr_frame *b_out,
                     uint8_t *b_bytes)
{
    size_t alen = rb->cap - 100, blen = 1000;
    uint8_t *a = malloc(alen);
    fr_put_header(a, false, (uint32_t)(alen - FR_HEADER_LEN));
    memset(a + FR_HEADER_LEN, 'a', alen - FR_HEADER_LEN);
    fr_put_header(b_bytes, false, (uint32_t)(blen - FR_HEADER_LEN));
    for (size_t i = FR_HEADER_LEN; i < blen; i++)
        b_bytes[i] = (uint8_t)(i * 31 + 7);

    size_t room;
    uint8_t *w = rb_space(rb, &room);
    ck_assert_uint_ge(room, alen + early);
    memcpy(w, a, alen);
    memcpy(w + alen, b_bytes, early);
    rb_commit(rb, alen + early);

    fr_splitter sp;
    fr_init(&sp);
    size_t n;
    const uint8_t *d = rb_data(rb, &n);
    fr_frame f;
    ck_assert_int_eq(fr_next(&sp, d, d + n, rb->consumed, &f), FR_FRAME);
    ck_assert_uint_eq(fr_frame_size(&f), alen);
    rb_consume(rb, alen);
    d = rb_data(rb, &n);
    ck_assert_int_eq(fr_next(&sp, d, d + n, rb->consumed, &f), FR_NEED_MORE);

    w = rb_space(rb, &room);
    ck_assert_uint_ge(room, blen - early);
    memcpy(w, b_bytes + early, blen - early);
    rb_commit(rb, blen - early);
    d = rb_data(rb, &n);
    ck_assert_uint_eq(n, blen);
    ck_assert_int_eq(fr_next(&sp, d, d + n, rb->consumed, b_out), FR_FRAME);
    ck_assert_uint_eq(b_out->offset, alen);
    ck_assert_uint_eq(b_out->msg.n, blen - FR_HEADER_LEN);
    ck_assert(memcmp(b_out->head, b_bytes, blen) == 0);
    free(a);
}

START_TEST(straddling_frame_mirrored_no_copy)
{
    rb_ring rb;
    init(&rb, 16 * page(), RB_MIRROR);
    uint8_t b[1000];
    fr_frame f;
    straddle(&rb, 50, &f, b);
    /* The body runs across the end of the first mapping: one view. */
    ck_assert(f.msg.p < rb.base + rb.cap);
    ck_assert(f.msg.p + f.msg.n > rb.base + rb.cap);
    /* The bytes past the end are the ones at the start. */
    size_t over = (size_t)(f.msg.p + f.msg.n - (rb.base + rb.cap));
    ck_assert(memcmp(rb.base, rb.base + rb.cap, over) == 0);
    ck_assert_uint_eq(rb.bytes_copied, 0);
    ck_assert_uint_eq(rb.allocations, 1);
    rb_consume(&rb, fr_frame_size(&f));
    ck_assert_uint_eq(rb.r, 900);
    ck_assert_uint_eq(rb.len, 0);
    rb_destroy(&rb);
}
END_TEST

START_TEST(straddling_frame_flat_copies)
{
    rb_ring rb;
    init(&rb, 16 * page(), RB_FLAT);
    uint8_t b[1000];
    fr_frame f;
    straddle(&rb, 50, &f, b);
    /* Contiguous too, but the 50 early bytes were moved to the front. */
    ck_assert_ptr_eq(f.head, rb.base);
    ck_assert_uint_eq(rb.bytes_copied, 50);
    ck_assert_uint_eq(rb.allocations, 1);
    rb_destroy(&rb);
}
END_TEST

START_TEST(flat_without_unread_bytes_does_not_copy)
{
    /* If the straddling frame had not begun to arrive, the flat buffer
     * starts over at the front for free. */
    rb_ring rb;
    init(&rb, 16 * page(), RB_FLAT);
    uint8_t b[1000];
    fr_frame f;
    straddle(&rb, 0, &f, b);
    ck_assert_uint_eq(rb.bytes_copied, 0);
    rb_destroy(&rb);
}
END_TEST

START_TEST(full_ring_has_no_room)
{
    for (int m = 0; m < 2; m++) {
        rb_ring rb;
        init(&rb, page(), m ? RB_MIRROR : RB_FLAT);
        size_t room;
        uint8_t *w = rb_space(&rb, &room);
        ck_assert_uint_eq(room, rb.cap);
        memset(w, 1, room);
        rb_commit(&rb, room);
        (void)rb_space(&rb, &room);
        ck_assert_uint_eq(room, 0);
        rb_consume(&rb, 10);
        (void)rb_space(&rb, &room);
        ck_assert_uint_eq(room, 10);
        rb_destroy(&rb);
    }
}
END_TEST

/* Random writes and consumes against a model: the byte at stream offset k is
 * pattern(k), so every view can be checked wherever it lies. */
static uint8_t pattern(size_t k) { return (uint8_t)((k * 2654435761u) >> 13); }

static void model_check(rb_mode mode, uint64_t seed)
{
    rb_ring rb;
    init(&rb, 8 * page(), mode);
    rng_state rg = rng_seed(seed);
    size_t written = 0;
    for (int step = 0; step < 20000; step++) {
        uint64_t r = rng_next(&rg);
        size_t room;
        uint8_t *w = rb_space(&rb, &room);
        size_t n;
        const uint8_t *d = rb_data(&rb, &n);
        REQUIRE(n == written - rb.consumed);
        REQUIRE(room <= rb.cap - n);
        if (rb.mirrored)
            REQUIRE(room == rb.cap - n);
        /* Every byte now and then; the ends and the middle always. */
        if (step % 97 == 0) {
            for (size_t i = 0; i < n; i++)
                REQUIRE(d[i] == pattern(rb.consumed + i));
        } else if (n > 0) {
            REQUIRE(d[0] == pattern(rb.consumed));
            REQUIRE(d[n / 2] == pattern(rb.consumed + n / 2));
            REQUIRE(d[n - 1] == pattern(rb.consumed + n - 1));
        }
        if (r & 1) {
            size_t k = room ? (size_t)(r >> 8) % (room + 1) : 0;
            for (size_t i = 0; i < k; i++)
                w[i] = pattern(written + i);
            rb_commit(&rb, k);
            written += k;
        } else {
            size_t k = (size_t)(r >> 8) % (n + 1);
            rb_consume(&rb, k);
        }
    }
    ck_assert_uint_gt(rb.consumed, 4 * rb.cap); /* wrapped several times */
    if (rb.mirrored)
        ck_assert_uint_eq(rb.bytes_copied, 0);
    rb_destroy(&rb);
}

START_TEST(model_mirrored)
{
    for (uint64_t s = 1; s <= 8; s++)
        model_check(RB_MIRROR, s);
}
END_TEST

START_TEST(model_flat)
{
    for (uint64_t s = 1; s <= 8; s++)
        model_check(RB_FLAT, s);
}
END_TEST

static Suite *ring_suite(void)
{
    Suite *s = suite_create("ringbuf");
    TCase *t = su_tcase(s, "ring", NULL, NULL, 60);
    tcase_add_test(t, capacity_rounds_to_pages);
    tcase_add_test(t, mirror_shows_the_same_bytes_twice);
    tcase_add_test(t, env_forces_flat);
    tcase_add_test(t, too_large_is_an_error);
    tcase_add_test(t, straddling_frame_mirrored_no_copy);
    tcase_add_test(t, straddling_frame_flat_copies);
    tcase_add_test(t, flat_without_unread_bytes_does_not_copy);
    tcase_add_test(t, full_ring_has_no_room);
    tcase_add_test(t, model_mirrored);
    tcase_add_test(t, model_flat);
    return s;
}

int main(void) { return su_run(ring_suite()); }
