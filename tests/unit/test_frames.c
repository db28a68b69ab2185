/* test_frames.c: the frame splitter and joiner, alone and fed through the
 * read buffer in pieces of every size. */
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "ringbuf.h"
#include "support/rng.h"
#include "support/suite.h"

/* Reproducible streams and piece sizes from a seed. */
static rng_state rg;

static uint64_t rnd(void) { return rng_next(&rg); }

static size_t rnd_below(size_t n) { return (size_t)rng_below(&rg, n); }

/* A stream of frames back to back, with each frame's offset and length. */
typedef struct {
    uint8_t *buf;
    size_t len;
    size_t n;
    size_t *off;  /* stream offset of frame i's header */
    size_t *body; /* frame i's body length */
} stream;

#define MAX_BODY 70000u

static void stream_make(stream *s, uint64_t seed, size_t nframes)
{
    rg = rng_seed(seed);
    s->n = nframes;
    s->off = malloc(nframes * sizeof *s->off);
    s->body = malloc(nframes * sizeof *s->body);
    size_t total = 0;
    for (size_t i = 0; i < nframes; i++) {
        size_t b;
        switch (i % 4) {
        case 0: b = rnd_below(MAX_BODY + 1); break;
        case 1: b = rnd_below(64); break;
        case 2: b = i % 8 == 2 ? 0 : rnd_below(2000); break;
        default: b = i % 16 == 3 ? MAX_BODY : rnd_below(MAX_BODY + 1); break;
        }
        s->off[i] = total;
        s->body[i] = b;
        total += FR_HEADER_LEN + b;
    }
    s->len = total;
    s->buf = malloc(total ? total : 1);
    for (size_t i = 0; i < nframes; i++) {
        uint8_t *h = s->buf + s->off[i];
        fr_put_header(h, false, (uint32_t)s->body[i]);
        for (size_t j = 0; j < s->body[i]; j++)
            h[FR_HEADER_LEN + j] = (uint8_t)rnd();
    }
}

static void stream_free(stream *s)
{
    free(s->buf);
    free(s->off);
    free(s->body);
}

/* --- the header ------------------------------------------------------- */

START_TEST(put_header_is_big_endian)
{
    uint8_t h[FR_HEADER_LEN];
    fr_put_header(h, false, 0x01020304u);
    const uint8_t want[] = {0, 1, 2, 3, 4};
    ck_assert_mem_eq(h, want, sizeof want);
    fr_put_header(h, true, 0xfffffffeu);
    const uint8_t want2[] = {1, 0xff, 0xff, 0xff, 0xfe};
    ck_assert_mem_eq(h, want2, sizeof want2);
}
END_TEST

START_TEST(splits_a_frame_in_place)
{
    uint8_t b[FR_HEADER_LEN + 3 + FR_HEADER_LEN];
    fr_put_header(b, false, 3);
    memcpy(b + FR_HEADER_LEN, "abc", 3);
    fr_put_header(b + 8, false, 0);
    const size_t have = 10; /* only 2 bytes of the next header */
    fr_splitter s;
    fr_init(&s);
    fr_frame f;
    ck_assert_int_eq(fr_next(&s, b, b + have, 100, &f), FR_FRAME);
    ck_assert_ptr_eq(f.head, b);
    ck_assert_ptr_eq(f.msg.p, b + FR_HEADER_LEN);
    ck_assert_uint_eq(f.msg.n, 3);
    ck_assert_uint_eq(f.offset, 100);
    ck_assert(!f.compressed);
    ck_assert_uint_eq(fr_frame_size(&f), 8);
    ck_assert_ptr_eq(fr_frame_end(&f), b + 8);
    ck_assert_int_eq(fr_next(&s, b + 8, b + have, 108, &f), FR_NEED_MORE);
    ck_assert_int_eq(fr_next(&s, b + 8, b + 8, 108, &f), FR_NEED_MORE);
    ck_assert_int_eq(fr_finish(&s, b + 8, b + 8, 108), TR_E_OK);
    ck_assert_int_eq(s.err.code, TR_E_OK);
}
END_TEST

START_TEST(empty_body_and_empty_stream)
{
    uint8_t b[FR_HEADER_LEN];
    fr_put_header(b, false, 0);
    fr_splitter s;
    fr_init(&s);
    fr_frame f;
    ck_assert_int_eq(fr_next(&s, NULL, NULL, 0, &f), FR_NEED_MORE);
    ck_assert_int_eq(fr_next(&s, b, b + 5, 0, &f), FR_FRAME);
    ck_assert_uint_eq(f.msg.n, 0);
    ck_assert_uint_eq(fr_frame_size(&f), 5);
    ck_assert_int_eq(fr_finish(&s, b + 5, b + 5, 5), TR_E_OK);
}
END_TEST

/* --- each failure, with its offset ------------------------------------ */

/* Two good frames (12 bytes) and room for a third at offset 12. */
static size_t two_frames(uint8_t *b)
{
    fr_put_header(b, false, 2);
    memcpy(b + 5, "{}", 2);
    fr_put_header(b + 7, false, 0);
    return 12;
}

/* Splits [b, b + n) from stream offset base; returns the last status and the
 * frames seen. */
static fr_status split_all(fr_splitter *s, const uint8_t *b, size_t n,
                           size_t base, size_t *frames, size_t *pos)
{
    fr_frame f;
    fr_status st;
    *frames = 0;
    *pos = 0;
    while ((st = fr_next(s, b + *pos, b + n, base + *pos, &f)) == FR_FRAME) {
        *pos += fr_frame_size(&f);
        ++*frames;
    }
    return st;
}

START_TEST(compressed_refused_at_its_flag)
{
    uint8_t b[64];
    size_t at = two_frames(b);
    fr_put_header(b + at, true, 4);
    memcpy(b + at + 5, "abcd", 4);
    const size_t base = 1000;
    /* Known from the flag byte alone, before the rest of the header. */
    fr_splitter s;
    fr_init(&s);
    size_t frames, pos;
    ck_assert_int_eq(split_all(&s, b, at + 1, base, &frames, &pos), FR_ERROR);
    ck_assert_uint_eq(frames, 2);
    ck_assert_int_eq(s.err.code, TR_E_COMPRESSED);
    ck_assert_uint_eq(s.err.offset, base + at);
    ck_assert_uint_eq(s.err_frame, base + at);

    /* Negotiated: the same bytes are a frame. */
    fr_init(&s);
    s.allow_compressed = true;
    fr_frame f;
    ck_assert_int_eq(fr_next(&s, b + at, b + at + 9, base + at, &f), FR_FRAME);
    ck_assert(f.compressed);
    ck_assert_uint_eq(f.msg.n, 4);
}
END_TEST

START_TEST(bad_flag_at_its_offset)
{
    for (unsigned flag = 2; flag < 256; flag++) {
        uint8_t b[64];
        size_t at = two_frames(b);
        fr_put_header(b + at, false, 1);
        b[at] = (uint8_t)flag;
        b[at + 5] = '1';
        fr_splitter s;
        fr_init(&s);
        s.allow_compressed = flag & 1; /* irrelevant for 2..255 */
        size_t frames, pos;
        ck_assert_int_eq(split_all(&s, b, at + 6, 7, &frames, &pos), FR_ERROR);
        ck_assert_uint_eq(frames, 2);
        ck_assert_int_eq(s.err.code, TR_E_FRAME_FLAG);
        ck_assert_uint_eq(s.err.offset, 7 + at);
        /* And from the flag byte alone. */
        fr_init(&s);
        ck_assert_int_eq(split_all(&s, b, at + 1, 7, &frames, &pos), FR_ERROR);
        ck_assert_int_eq(s.err.code, TR_E_FRAME_FLAG);
        ck_assert_uint_eq(s.err.offset, 7 + at);
    }
}
END_TEST

START_TEST(oversize_from_the_header_alone)
{
    uint8_t b[64];
    size_t at = two_frames(b);
    fr_put_header(b + at, false, FR_DEFAULT_MAX_LEN + 1);
    fr_splitter s;
    fr_init(&s);
    size_t frames, pos;
    /* 4 header bytes: not yet known. */
    ck_assert_int_eq(split_all(&s, b, at + 4, 0, &frames, &pos), FR_NEED_MORE);
    ck_assert_uint_eq(frames, 2);
    /* 5 header bytes and no body: rejected, nothing more is waited for. */
    ck_assert_int_eq(fr_next(&s, b + at, b + at + 5, at, &(fr_frame){0}),
                     FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_FRAME_SIZE);
    ck_assert_uint_eq(s.err.offset, at + 1); /* the length field */
    ck_assert_uint_eq(s.err_frame, at);

    /* Exactly the limit is fine: the splitter waits for the body. */
    fr_init(&s);
    fr_put_header(b + at, false, FR_DEFAULT_MAX_LEN);
    ck_assert_int_eq(split_all(&s, b, at + 5, 0, &frames, &pos), FR_NEED_MORE);
    ck_assert_int_eq(s.err.code, TR_E_OK);

    /* A smaller limit of our own. */
    fr_init(&s);
    s.max_len = 2; /* the two good frames have bodies of 2 and 0 */
    fr_put_header(b + at, false, 3);
    ck_assert_int_eq(split_all(&s, b, at + 5, 0, &frames, &pos), FR_ERROR);
    ck_assert_uint_eq(frames, 2);
    ck_assert_int_eq(s.err.code, TR_E_FRAME_SIZE);
    ck_assert_uint_eq(s.err.offset, at + 1);
}
END_TEST

START_TEST(limit_is_checked_before_the_first_body)
{
    /* max_len 1 rejects the first frame of two_frames (body 2). */
    uint8_t b[64];
    (void)two_frames(b);
    fr_splitter s;
    fr_init(&s);
    s.max_len = 1;
    size_t frames, pos;
    ck_assert_int_eq(split_all(&s, b, 5, 40, &frames, &pos), FR_ERROR);
    ck_assert_uint_eq(frames, 0);
    ck_assert_uint_eq(s.err.offset, 41);
}
END_TEST

START_TEST(truncated_in_the_header)
{
    uint8_t b[64];
    size_t at = two_frames(b);
    fr_put_header(b + at, false, 9);
    for (size_t cut = 1; cut < FR_HEADER_LEN; cut++) {
        fr_splitter s;
        fr_init(&s);
        size_t frames, pos;
        ck_assert_int_eq(split_all(&s, b, at + cut, 50, &frames, &pos),
                         FR_NEED_MORE);
        ck_assert_uint_eq(frames, 2);
        ck_assert_uint_eq(pos, at);
        ck_assert_int_eq(fr_finish(&s, b + pos, b + at + cut, 50 + pos),
                         TR_E_FRAME_TRUNCATED);
        ck_assert_uint_eq(s.err.offset, 50 + at + cut); /* where input ended */
        ck_assert_uint_eq(s.err_frame, 50 + at);
    }
}
END_TEST

START_TEST(truncated_in_the_body)
{
    uint8_t b[64];
    size_t at = two_frames(b);
    fr_put_header(b + at, false, 9);
    memcpy(b + at + 5, "123456789", 9);
    for (size_t cut = FR_HEADER_LEN; cut < FR_HEADER_LEN + 9; cut++) {
        fr_splitter s;
        fr_init(&s);
        size_t frames, pos;
        ck_assert_int_eq(split_all(&s, b, at + cut, 0, &frames, &pos),
                         FR_NEED_MORE);
        ck_assert_uint_eq(frames, 2);
        ck_assert_int_eq(fr_finish(&s, b + pos, b + at + cut, pos),
                         TR_E_FRAME_TRUNCATED);
        ck_assert_uint_eq(s.err.offset, at + cut);
        ck_assert_uint_eq(s.err_frame, at);
    }
    /* The whole frame: no error. */
    fr_splitter s;
    fr_init(&s);
    size_t frames, pos;
    ck_assert_int_eq(split_all(&s, b, at + 14, 0, &frames, &pos), FR_NEED_MORE);
    ck_assert_uint_eq(frames, 3);
    ck_assert_int_eq(fr_finish(&s, b + pos, b + at + 14, pos), TR_E_OK);
}
END_TEST

START_TEST(every_prefix_of_a_stream)
{
    stream st;
    stream_make(&st, 7, 24);
    /* Each prefix is split from the start of the frame it ends in, so a
     * prefix per byte stays cheap. */
    size_t fi = 0;
    for (size_t cut = 0; cut <= st.len; cut++) {
        while (fi < st.n && st.off[fi] + FR_HEADER_LEN + st.body[fi] <= cut)
            fi++;
        size_t start = fi < st.n ? st.off[fi] : st.len;
        fr_splitter s;
        fr_init(&s);
        size_t frames, pos;
        REQUIRE(split_all(&s, st.buf + start, cut - start, start, &frames,
                          &pos) == FR_NEED_MORE);
        REQUIRE(frames == 0);
        tr_code c = fr_finish(&s, st.buf + start, st.buf + cut, start);
        if (cut == start) {
            REQUIRE(c == TR_E_OK);
        } else {
            REQUIRE(c == TR_E_FRAME_TRUNCATED);
            REQUIRE(s.err.offset == cut);
            REQUIRE(s.err_frame == start);
        }
    }
    stream_free(&st);
}
END_TEST

START_TEST(first_error_wins)
{
    uint8_t b[16];
    fr_put_header(b, false, 1);
    b[0] = 9;
    fr_splitter s;
    fr_init(&s);
    fr_frame f;
    ck_assert_int_eq(fr_next(&s, b, b + 6, 3, &f), FR_ERROR);
    fr_put_header(b + 8, false, 0); /* a good frame later */
    ck_assert_int_eq(fr_next(&s, b + 8, b + 13, 11, &f), FR_ERROR);
    ck_assert_int_eq(fr_finish(&s, b + 8, b + 10, 11), TR_E_FRAME_FLAG);
    ck_assert_int_eq(s.err.code, TR_E_FRAME_FLAG);
    ck_assert_uint_eq(s.err.offset, 3);
    ck_assert_uint_eq(s.err_frame, 3);
}
END_TEST

/* --- join ------------------------------------------------------------- */

/* Splits a whole stream held in one buffer. */
static size_t split_stream(const stream *st, fr_frame *out)
{
    fr_splitter s;
    fr_init(&s);
    fr_status last;
    size_t n = 0, pos;
    for (pos = 0; (last = fr_next(&s, st->buf + pos, st->buf + st->len, pos,
                                  &out[n])) == FR_FRAME;
         pos += fr_frame_size(&out[n]), n++)
        ;
    ck_assert_int_eq(last, FR_NEED_MORE);
    ck_assert_uint_eq(pos, st->len);
    return n;
}

/* The bytes iov covers, in order, against the kept frames' bytes. */
static void check_iov(const struct iovec *iov, size_t cnt, const fr_frame *kept,
                      size_t nk)
{
    size_t want = 0, got = 0;
    for (size_t i = 0; i < nk; i++)
        want += fr_frame_size(&kept[i]);
    for (size_t i = 0; i < cnt; i++)
        got += iov[i].iov_len;
    REQUIRE(got == want);
    uint8_t *a = malloc(want + 1), *b = malloc(want + 1);
    size_t at = 0;
    for (size_t i = 0; i < nk; i++) {
        memcpy(a + at, kept[i].head, fr_frame_size(&kept[i]));
        at += fr_frame_size(&kept[i]);
    }
    at = 0;
    for (size_t i = 0; i < cnt; i++) {
        REQUIRE(iov[i].iov_len > 0);
        memcpy(b + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    REQUIRE(memcmp(a, b, want) == 0);
    free(a);
    free(b);
}

/* Keeps frame i when keep(i); returns the iovec count of the join and checks
 * it equals the number of runs of consecutive kept frames. */
static size_t join_pattern(const fr_frame *all, size_t n, int pattern)
{
    fr_frame *kept = calloc(n, sizeof *kept);
    struct iovec *iov = calloc(n, sizeof *iov);
    size_t nk = 0, runs = 0;
    bool prev = false;
    for (size_t i = 0; i < n; i++) {
        bool k = pattern == 0   ? true
                 : pattern == 1 ? i % 2 == 0
                 : pattern == 2 ? i % 3 != 2
                                : (i * 7 + 3) % 5 < 2;
        if (k) {
            kept[nk++] = all[i];
            if (!prev)
                runs++;
        }
        prev = k;
    }
    size_t cnt = fr_join(kept, nk, iov);
    ck_assert_uint_eq(cnt, runs);
    check_iov(iov, cnt, kept, nk);
    /* Each iovec starts at a kept frame's header: no bytes were copied. */
    for (size_t i = 0, j = 0; i < cnt; i++) {
        while (j < nk && kept[j].head != iov[i].iov_base)
            j++;
        REQUIRE(j < nk);
    }
    free(kept);
    free(iov);
    return cnt;
}

START_TEST(join_merges_adjacent_frames)
{
    stream st;
    stream_make(&st, 11, 90);
    fr_frame *all = malloc(st.n * sizeof *all);
    size_t n = split_stream(&st, all);
    ck_assert_uint_eq(n, st.n);
    ck_assert_uint_eq(join_pattern(all, n, 0), 1);  /* all: one piece */
    ck_assert_uint_eq(join_pattern(all, n, 1), 45); /* every other: apart */
    ck_assert_uint_eq(join_pattern(all, n, 2), 30); /* pairs merge */
    (void)join_pattern(all, n, 3);
    ck_assert_uint_eq(fr_join(all, 0, NULL), 0);
    free(all);
    stream_free(&st);
}
END_TEST

START_TEST(gather_reports_full)
{
    stream st;
    stream_make(&st, 3, 8);
    fr_frame all[8];
    ck_assert_uint_eq(split_stream(&st, all), 8);
    struct iovec iov[2];
    fr_gather g;
    fr_gather_init(&g, iov, 2);
    ck_assert(fr_gather_add(&g, &all[0]));
    ck_assert(fr_gather_add(&g, &all[1])); /* merges */
    ck_assert(fr_gather_add(&g, &all[3]));
    ck_assert(!fr_gather_add(&g, &all[5])); /* needs a third entry */
    ck_assert(fr_gather_add(&g, &all[4])); /* but this one merges */
    ck_assert_uint_eq(g.n, 2);
    ck_assert_uint_eq(g.frames, 4);
    ck_assert_uint_eq(g.bytes, fr_frame_size(&all[0]) + fr_frame_size(&all[1]) +
                                   fr_frame_size(&all[3]) +
                                   fr_frame_size(&all[4]));
    fr_gather_reset(&g);
    ck_assert(fr_gather_add(&g, &all[5]));
    ck_assert_uint_eq(g.n, 1);
    ck_assert_ptr_eq(iov[0].iov_base, all[5].head);
    stream_free(&st);
}
END_TEST

/* --- the round trip through the read buffer --------------------------- */

/* Feeds the stream into a ring in pieces of `piece` bytes (0: random sizes
 * from 1 to 300000), splitting after each piece; every body must come out in
 * order and equal, and the join of every other frame of each batch must be
 * those frames' bytes exactly, one iovec each. */
static void round_trip(const stream *st, rb_mode mode, size_t cap,
                       size_t piece, uint64_t seed)
{
    char err[128];
    rb_ring rb;
    ck_assert_msg(rb_init(&rb, cap, mode, err, sizeof err) == 0, "%s", err);
    ck_assert(rb.mirrored == (mode == RB_MIRROR));
    rg = rng_seed(seed);
    fr_splitter sp;
    fr_init(&sp);
    fr_frame *kept = malloc(st->n * sizeof *kept);
    struct iovec *iov = malloc(st->n * sizeof *iov);
    size_t in = 0, got = 0;
    for (;;) {
        size_t n;
        const uint8_t *d = rb_data(&rb, &n);
        size_t pos = 0, nk = 0;
        fr_frame f;
        fr_status s;
        while ((s = fr_next(&sp, d + pos, d + n, rb.consumed + pos, &f)) ==
               FR_FRAME) {
            REQUIRE(got < st->n);
            REQUIRE(f.offset == st->off[got]);
            REQUIRE(f.msg.n == st->body[got]);
            REQUIRE(memcmp(f.head, st->buf + st->off[got],
                           fr_frame_size(&f)) == 0);
            if (got % 2 == 0)
                kept[nk++] = f;
            got++;
            pos += fr_frame_size(&f);
        }
        REQUIRE(s == FR_NEED_MORE);
        if (nk > 0) {
            size_t cnt = fr_join(kept, nk, iov);
            REQUIRE(cnt == nk); /* never adjacent: one dropped between */
            check_iov(iov, cnt, kept, nk);
        }
        rb_consume(&rb, pos);
        if (in == st->len)
            break;
        size_t room;
        uint8_t *w = rb_space(&rb, &room);
        REQUIRE(room > 0);
        size_t k = piece ? piece : 1 + rnd_below(300000);
        if (k > room)
            k = room;
        if (k > st->len - in)
            k = st->len - in;
        memcpy(w, st->buf + in, k);
        rb_commit(&rb, k);
        in += k;
    }
    ck_assert_uint_eq(got, st->n);
    size_t n;
    const uint8_t *d = rb_data(&rb, &n);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(fr_finish(&sp, d, d + n, rb.consumed), TR_E_OK);
    ck_assert_uint_eq(rb.consumed, st->len);
    ck_assert_uint_eq(rb.allocations, 1);
    if (rb.mirrored)
        ck_assert_uint_eq(rb.bytes_copied, 0);
    free(kept);
    free(iov);
    rb_destroy(&rb);
}

/* Small enough that the stream wraps it many times. */
#define SMALL_CAP (2 * (MAX_BODY + FR_HEADER_LEN))

static void round_trips(rb_mode mode)
{
    stream st;
    stream_make(&st, 42, 64);
    for (size_t piece = 1; piece <= 64; piece++)
        round_trip(&st, mode, SMALL_CAP, piece, 0);
    for (uint64_t seed = 1; seed <= 16; seed++)
        round_trip(&st, mode, SMALL_CAP, 0, seed);
    round_trip(&st, mode, SMALL_CAP, 256 * 1024, 0);
    round_trip(&st, mode, 0, 256 * 1024, 0); /* the default 16 MiB */
    round_trip(&st, mode, 0, 0, 99);
    stream_free(&st);
}

START_TEST(round_trip_mirrored) { round_trips(RB_MIRROR); }
END_TEST

START_TEST(round_trip_flat) { round_trips(RB_FLAT); }
END_TEST

START_TEST(round_trip_many_seeds)
{
    /* Other streams, random pieces, both buffers. */
    for (uint64_t seed = 100; seed < 108; seed++) {
        stream st;
        stream_make(&st, seed, 40);
        round_trip(&st, RB_MIRROR, SMALL_CAP, 0, seed);
        round_trip(&st, RB_FLAT, SMALL_CAP, 0, seed);
        round_trip(&st, RB_MIRROR, SMALL_CAP, 1 + seed % 7, seed);
        stream_free(&st);
    }
}
END_TEST

static Suite *frames_suite(void)
{
    Suite *s = suite_create("frames");
    TCase *t = su_tcase(s, "split", NULL, NULL, 0);
    tcase_add_test(t, put_header_is_big_endian);
    tcase_add_test(t, splits_a_frame_in_place);
    tcase_add_test(t, empty_body_and_empty_stream);
    tcase_add_test(t, compressed_refused_at_its_flag);
    tcase_add_test(t, bad_flag_at_its_offset);
    tcase_add_test(t, oversize_from_the_header_alone);
    tcase_add_test(t, limit_is_checked_before_the_first_body);
    tcase_add_test(t, truncated_in_the_header);
    tcase_add_test(t, truncated_in_the_body);
    tcase_add_test(t, every_prefix_of_a_stream);
    tcase_add_test(t, first_error_wins);
    t = su_tcase(s, "join", NULL, NULL, 0);
    tcase_add_test(t, join_merges_adjacent_frames);
    tcase_add_test(t, gather_reports_full);
    t = su_tcase(s, "round_trip", NULL, NULL, 120);
    tcase_add_test(t, round_trip_mirrored);
    tcase_add_test(t, round_trip_flat);
    tcase_add_test(t, round_trip_many_seeds);
    return s;
}

int main(void) { return su_run(frames_suite()); }
