/* test_filter.c: the filter's pipe (filter/pipe.h) between two loopback TCP
 * connections: what it forwards is exactly the kept frames, byte for byte;
 * a frame that straddles the ring's end is read in place (the copy counter
 * stays 0 with the mirrored ring, and counts the move with the flat one);
 * and the faults: an upstream that stops after N bytes for many N, a
 * framing error mid-stream, a downstream that goes away. Each with one
 * thread and with the writer thread. And gzip frames (grpc-encoding gzip):
 * kept ones are forwarded compressed, byte for byte, judged as the same
 * messages plain; one that does not inflate mid-stream is judged none,
 * dropped, reported once with its offset, and the stream goes on. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "issues.h"
#include "net.h"
#include "pipe.h"
#include "reader.h"
#include "skip.h"
#include "support/suite.h"

/* ---- the stream under test: generated issues, and the oracle's verdicts */

#define NMSG 300

static uint8_t *stream;
static size_t stream_len;
static size_t off[NMSG + 1]; /* frame i is [off[i], off[i + 1]) */
static bool kept[NMSG];
static po_policy policy;

/* What pp_new allocates for the optics reader: the pipe, and its reader. */
#define PIPE_ALLOCS (1 + RD_ALLOCS)

/* The verdict on one message from a contiguous copy, straight through the
 * scanners (the optics reader, verify off): the oracle the pipe is held to. */
static bool oracle(rd_reader *rd, const uint8_t *frame, size_t n)
{
    tr_message m = {frame + FR_HEADER_LEN, n - FR_HEADER_LEN};
    ck_assert(rd_message(rd, VF_OFF, m));
    int kind;
    return po_judge(&policy, &rd->ru, &kind);
}

static void setup(void)
{
    sk_init();
    signal(SIGPIPE, SIG_IGN);
    rd_choice none = {0}; /* the default rules */
    char err[256];
    ck_assert_msg(rd_policy(&none, &policy, err, sizeof err), "%s", err);
    rd_reader *rd = rd_new();
    ck_assert_ptr_nonnull(rd);
    iss_gen *g = iss_gen_new(7);
    ck_assert_ptr_nonnull(g);
    size_t cap = (size_t)NMSG * 16384;
    stream = malloc(cap);
    stream_len = 0;
    for (int i = 0; i < NMSG; i++) {
        size_t n;
        const uint8_t *f = iss_gen_frame(g, 7, (uint64_t)i, false, &n);
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_le(stream_len + n, cap);
        memcpy(stream + stream_len, f, n);
        off[i] = stream_len;
        stream_len += n;
        kept[i] = oracle(rd, f, n);
    }
    off[NMSG] = stream_len;
    iss_gen_free(g);
    rd_free(rd);
}

static void teardown(void)
{
    free(stream);
    po_free(&policy);
}

/* The kept frames that end at or before byte cut, back to back. */
static size_t expected(size_t cut, uint8_t *out, size_t *count)
{
    size_t n = 0;
    *count = 0;
    for (int i = 0; i < NMSG && off[i + 1] <= cut; i++)
        if (kept[i]) {
            memcpy(out + n, stream + off[i], off[i + 1] - off[i]);
            n += off[i + 1] - off[i];
            ++*count;
        }
    return n;
}

/* ---- peers */

static void tcp_pair(int *c, int *a)
{
    char err[NET_ERR_LEN] = "";
    uint16_t port = 0;
    int l = net_listen("127.0.0.1:0", 4, &port, err, sizeof err);
    ck_assert_msg(l >= 0, "%s", err);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)port);
    *c = net_connect(addr, err, sizeof err);
    ck_assert_msg(*c >= 0, "%s", err);
    *a = net_accept(l, err, sizeof err);
    ck_assert_msg(*a >= 0, "%s", err);
    close(l);
}

/* The fake upstream: sends [0, len) of buf in pieces of varying size, then
 * closes (len short of the stream: a peer that stops after len bytes). */
typedef struct {
    int fd;
    const uint8_t *buf;
    size_t len;
} upstream;

static void *upstream_main(void *arg)
{
    upstream *u = arg;
    size_t at = 0, k = 1;
    char err[NET_ERR_LEN];
    while (at < u->len) {
        size_t n = k < u->len - at ? k : u->len - at;
        struct iovec iov = {(void *)(uintptr_t)(u->buf + at), n};
        if (net_writev_all(u->fd, &iov, 1, err, sizeof err) != 0)
            break; /* the filter went away: fine for the fault tests */
        at += n;
        k = k * 7 % 90001 + 1;
    }
    close(u->fd);
    return NULL;
}

/* The fake downstream: reads everything (or, with limit, stops reading
 * after limit bytes and closes: a downstream that goes away). */
typedef struct {
    int fd;
    uint8_t *buf;
    size_t cap, len, limit;
} downstream;

static void *downstream_main(void *arg)
{
    downstream *d = arg;
    for (;;) {
        size_t want = d->cap - d->len;
        if (d->limit > 0 && d->limit - d->len < want)
            want = d->limit - d->len;
        if (want == 0)
            break;
        ssize_t n = read(d->fd, d->buf + d->len, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        d->len += (size_t)n;
    }
    close(d->fd);
    return NULL;
}

typedef struct {
    fw_outcome outcome;
    fw_result res;
    tl_tally tally;
    uint64_t straddled;
    uint8_t *got;
    size_t got_len;
} filtered;

/* Runs the pipe between a fake upstream sending the first cut bytes and a
 * fake downstream (stopping after down_limit bytes if > 0). */
static void filter(size_t cut, rb_mode mode, size_t ring_cap, int threads, size_t down_limit,
                   filtered *out)
{
    int up_c, up_a, down_c, down_a;
    tcp_pair(&up_c, &up_a);
    tcp_pair(&down_c, &down_a);
    upstream u = {up_c, stream, cut};
    downstream d = {down_a, malloc(stream_len + 1), stream_len + 1, 0, down_limit};
    pthread_t tu, td;
    REQUIRE(pthread_create(&tu, NULL, upstream_main, &u) == 0);
    REQUIRE(pthread_create(&td, NULL, downstream_main, &d) == 0);

    char err[NET_ERR_LEN];
    pp_pipe *pp = pp_new(RD_OPTICS, &policy, err, sizeof err);
    ck_assert_msg(pp != NULL, "%s", err);
    fw_opts o = {.ring_cap = ring_cap, .ring_mode = mode, .threads = threads,
                        .linger_ms = 5000};
    out->outcome = pp_stream(pp, up_a, down_c, &o, &out->res);
    /* The filter's process would exit here: its sockets close. */
    close(up_a);
    close(down_c);
    pthread_join(tu, NULL);
    pthread_join(td, NULL);
    out->tally = pp->tally;
    out->straddled = pp->straddled;
    out->got = d.buf;
    out->got_len = d.len;
    pp_free(pp);
}

/* Forwarded exactly the kept frames before cut, and tallied them. */
static void check_forwarded(const filtered *f, size_t cut)
{
    uint8_t *want = malloc(stream_len);
    size_t count;
    size_t n = expected(cut, want, &count);
    ck_assert_msg(f->got_len == n, "cut %zu: forwarded %zu bytes, want %zu", cut, f->got_len, n);
    REQUIRE(memcmp(f->got, want, n) == 0);
    ck_assert_uint_eq(tl_kept(&f->tally), count);
    ck_assert_uint_eq(f->tally.forwarded.bytes, n);
    free(want);
}

/* ---- tests */

/* A 64 KiB ring holds ~15 of these 4 KB frames, so over 300 frames many
 * straddle its end. The mirrored ring reads them in place: nothing is
 * copied, and the one allocation is the setup's. The flat ring must move
 * the unread tail to the front, and the counter shows it. Either way the
 * output is byte-identical. */
static void straddle(int threads)
{
    filtered f;
    filter(stream_len, RB_MIRROR, 64 << 10, threads, 0, &f);
    ck_assert_int_eq(f.outcome, FW_DONE);
    ck_assert(f.res.mirrored);
    ck_assert_int_eq(f.res.threads, threads);
    ck_assert_uint_eq(f.tally.messages, NMSG);
    ck_assert_uint_gt(f.straddled, 10);
    ck_assert_uint_eq(f.tally.bytes_copied, 0);
    /* The pipe and its reader, the ring, and with two threads the writer's
     * queue: nothing per message. */
    ck_assert_uint_eq(f.tally.allocations, PIPE_ALLOCS + 1 + (threads == 2));
    check_forwarded(&f, stream_len);
    free(f.got);

    filter(stream_len, RB_FLAT, 64 << 10, threads, 0, &f);
    ck_assert_int_eq(f.outcome, FW_DONE);
    ck_assert(!f.res.mirrored);
    ck_assert_int_eq(f.res.threads, 1); /* the flat ring is never shared */
    ck_assert_uint_eq(f.straddled, 0);
    ck_assert_uint_gt(f.tally.bytes_copied, 0);
    check_forwarded(&f, stream_len);
    free(f.got);
}

START_TEST(straddling_frames_are_read_in_place) { straddle(1); }
END_TEST

START_TEST(straddling_frames_are_read_in_place_2) { straddle(2); }
END_TEST

/* The cuts: around the first kept frames' boundaries (inside the header,
 * at it, just past it, inside the body), and pseudo-random ones. */
static size_t cuts(size_t *out)
{
    size_t n = 0;
    static const int d[] = {-1, 0, 1, 2, 4, 5, 6, 100};
    for (int i = 0, found = 0; i < NMSG && found < 8; i++) {
        if (!kept[i])
            continue;
        found++;
        for (size_t k = 0; k < sizeof d / sizeof d[0]; k++)
            for (int e = 0; e < 2; e++) {
                long c = (long)off[i + e] + d[k];
                if (c >= 0 && (size_t)c <= stream_len)
                    out[n++] = (size_t)c;
            }
    }
    uint64_t x = 99;
    for (int i = 0; i < 40; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        out[n++] = (size_t)(x >> 20) % (stream_len + 1);
    }
    out[n++] = 0;
    out[n++] = 1;
    out[n++] = stream_len - 1;
    out[n++] = stream_len;
    return n;
}

/* An upstream that stops after cut bytes: every whole kept frame before
 * the cut is forwarded, then FRAME_TRUNCATED at the cut's offset (or a
 * clean end when the cut falls between frames). */
static void cut_short(int threads)
{
    size_t c[200];
    size_t n = cuts(c);
    ck_assert_uint_gt(n, 100);
    for (size_t i = 0; i < n; i++) {
        filtered f;
        filter(c[i], RB_AUTO, 64 << 10, threads, 0, &f);
        bool boundary = false;
        for (int k = 0; k <= NMSG; k++)
            boundary |= off[k] == c[i];
        if (boundary) {
            ck_assert_msg(f.outcome == FW_DONE, "cut %zu: outcome %d", c[i], f.outcome);
        } else {
            ck_assert_msg(f.outcome == FW_UPSTREAM_BAD, "cut %zu: outcome %d", c[i], f.outcome);
            ck_assert_int_eq(f.res.err.code, TR_E_FRAME_TRUNCATED);
            ck_assert_uint_eq(f.res.err.offset, c[i]);
            char what[512];
            char want[64];
            snprintf(want, sizeof want, "at byte %zu", c[i]);
            ck_assert_ptr_nonnull(strstr(fw_describe(&f.res, what, sizeof what), want));
        }
        check_forwarded(&f, c[i]);
        free(f.got);
    }
}

START_TEST(upstream_stops_after_n_bytes) { cut_short(1); }
END_TEST

START_TEST(upstream_stops_after_n_bytes_2) { cut_short(2); }
END_TEST

/* A framing error mid-stream (a compressed flag, then an oversize length):
 * the kept frames before it are forwarded, the error names the offset. */
static void bad_frame(int threads)
{
    uint8_t *orig = malloc(stream_len);
    memcpy(orig, stream, stream_len);
    int at = 150;
    stream[off[at]] = 1;
    filtered f;
    filter(stream_len, RB_AUTO, 0, threads, 0, &f);
    ck_assert_int_eq(f.outcome, FW_UPSTREAM_BAD);
    ck_assert_int_eq(f.res.err.code, TR_E_COMPRESSED);
    ck_assert_uint_eq(f.res.err.offset, off[at]);
    ck_assert_uint_eq(f.tally.messages, (uint64_t)at);
    check_forwarded(&f, off[at]);
    free(f.got);

    memcpy(stream, orig, stream_len);
    fr_put_header(stream + off[at], false, FR_DEFAULT_MAX_LEN + 1);
    filter(stream_len, RB_AUTO, 0, threads, 0, &f);
    ck_assert_int_eq(f.outcome, FW_UPSTREAM_BAD);
    ck_assert_int_eq(f.res.err.code, TR_E_FRAME_SIZE);
    ck_assert_uint_eq(f.res.err.offset, off[at] + 1);
    check_forwarded(&f, off[at]);
    free(f.got);
    memcpy(stream, orig, stream_len);
    free(orig);
}

START_TEST(framing_error_mid_stream) { bad_frame(1); }
END_TEST

START_TEST(framing_error_mid_stream_2) { bad_frame(2); }
END_TEST

/* A downstream that stops reading and closes: a clear error, no hang (the
 * test's timeout would catch one). What it did read is a prefix of the
 * kept frames. */
static void downstream_leaves(int threads)
{
    size_t limits[] = {1, 5000, 100000};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        filtered f;
        filter(stream_len, RB_AUTO, 64 << 10, threads, limits[i], &f);
        ck_assert_msg(f.outcome == FW_DOWNSTREAM_IO, "limit %zu: outcome %d", limits[i],
                      f.outcome);
        ck_assert_msg(strstr(f.res.msg, "downstream") != NULL, "%s", f.res.msg);
        uint8_t *want = malloc(stream_len);
        size_t count;
        size_t n = expected(stream_len, want, &count);
        ck_assert_uint_le(f.got_len, n);
        REQUIRE(memcmp(f.got, want, f.got_len) == 0);
        free(want);
        free(f.got);
    }
}

START_TEST(downstream_goes_away) { downstream_leaves(1); }
END_TEST

START_TEST(downstream_goes_away_2) { downstream_leaves(2); }
END_TEST

/* The readers agree through the pipe: same rows, same digest. */
START_TEST(readers_agree_in_memory)
{
    rd_type rs[] = {RD_OPTICS, RD_DECODE};
    tl_tally t[2];
    for (int r = 0; r < 2; r++) {
        char err[256];
        pp_pipe *pp = pp_new(rs[r], &policy, err, sizeof err);
        ck_assert_ptr_nonnull(pp);
        size_t used;
        ck_assert_int_eq(pp_feed(pp, stream, stream + stream_len, 0, &used), PP_OK);
        ck_assert_uint_eq(used, stream_len);
        t[r] = pp->tally;
        pp_free(pp);
    }
    ck_assert(tl_same_rows(&t[0], &t[1]));
    ck_assert_uint_eq(t[0].forwarded.h, t[1].forwarded.h);
    ck_assert_uint_eq(t[0].messages, NMSG);
    ck_assert_uint_gt(t[0].judged, 0);
    /* none: everything kept, nothing judged, all in the none row */
    char err[256];
    pp_pipe *pp = pp_new(RD_NONE, &policy, err, sizeof err);
    size_t used;
    ck_assert_int_eq(pp_feed(pp, stream, stream + stream_len, 0, &used), PP_OK);
    ck_assert_uint_eq(pp->tally.seen[pp->tally.kinds], NMSG);
    ck_assert_uint_eq(pp->tally.kept[pp->tally.kinds], NMSG);
    ck_assert_uint_eq(pp->tally.judged, 0);
    pp_free(pp);
}
END_TEST


/* ---- compressed frames (gzip and deflate) */

/* The same NMSG issues as the stream, every one compressed with e (flag 1). */
static uint8_t *gz_stream(gz_encoding e, size_t *len, size_t *zoff)
{
    iss_gen *g = iss_gen_new(7);
    ck_assert_ptr_nonnull(g);
    ck_assert(iss_gen_compress(g, e, 1));
    size_t cap = (size_t)NMSG * 16384, n = 0;
    uint8_t *buf = malloc(cap);
    for (int i = 0; i < NMSG; i++) {
        size_t fn;
        const uint8_t *f = iss_gen_frame(g, 7, (uint64_t)i, false, &fn);
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(f[0], 1);
        memcpy(buf + n, f, fn);
        zoff[i] = n;
        n += fn;
    }
    zoff[NMSG] = n;
    iss_gen_free(g);
    *len = n;
    return buf;
}

/* The pipe with grpc-encoding e between a fake upstream sending buf and a
 * fake downstream; warnings into *warn (malloc'd text). */
static void filter_gz(gz_encoding e, const uint8_t *buf, size_t len, int threads, filtered *out,
                      pp_pipe **kept_pp, char **warn)
{
    int up_c, up_a, down_c, down_a;
    tcp_pair(&up_c, &up_a);
    tcp_pair(&down_c, &down_a);
    upstream u = {up_c, buf, len};
    downstream d = {down_a, malloc(len + 1), len + 1, 0, 0};
    pthread_t tu, td;
    REQUIRE(pthread_create(&tu, NULL, upstream_main, &u) == 0);
    REQUIRE(pthread_create(&td, NULL, downstream_main, &d) == 0);
    char err[NET_ERR_LEN];
    pp_pipe *pp = pp_new(RD_OPTICS, &policy, err, sizeof err);
    ck_assert_msg(pp != NULL, "%s", err);
    ck_assert(pp_set_encoding(pp, e));
    size_t wlen = 0;
    pp->warn = open_memstream(warn, &wlen);
    fw_opts o = {.ring_mode = RB_AUTO, .threads = threads, .linger_ms = 5000};
    out->outcome = pp_stream(pp, up_a, down_c, &o, &out->res);
    close(up_a);
    close(down_c);
    pthread_join(tu, NULL);
    pthread_join(td, NULL);
    fclose(pp->warn);
    pp->warn = NULL;
    out->tally = pp->tally;
    out->got = d.buf;
    out->got_len = d.len;
    *kept_pp = pp;
}

/* The frames of buf (offsets zoff) that are kept and not in bad[], back
 * to back. */
static size_t gz_expected(const uint8_t *buf, const size_t *zoff, const int *bad, int nbad,
                          uint8_t *out, size_t *count)
{
    size_t n = 0;
    *count = 0;
    for (int i = 0; i < NMSG; i++) {
        bool skip = false;
        for (int b = 0; b < nbad; b++)
            skip = skip || bad[b] == i;
        if (!kept[i] || skip)
            continue;
        memcpy(out + n, buf + zoff[i], zoff[i + 1] - zoff[i]);
        n += zoff[i + 1] - zoff[i];
        ++*count;
    }
    return n;
}

static void gz_forwarded(gz_encoding e, int threads)
{
    static size_t zoff[NMSG + 1];
    size_t len;
    uint8_t *buf = gz_stream(e, &len, zoff);
    ck_assert_uint_lt(len, stream_len); /* they did compress */
    filtered f;
    pp_pipe *pp;
    char *warn = NULL;
    filter_gz(e, buf, len, threads, &f, &pp, &warn);
    ck_assert_int_eq(f.outcome, FW_DONE);
    ck_assert_uint_eq(f.tally.messages, NMSG);
    ck_assert_uint_eq(pp->inflated, NMSG);
    ck_assert_uint_eq(pp->inflate_failed, 0);
    ck_assert_uint_eq(pp->compressed_bytes, len - (size_t)NMSG * FR_HEADER_LEN);
    ck_assert_uint_eq(pp->inflated_bytes, stream_len - (size_t)NMSG * FR_HEADER_LEN);
    ck_assert_str_eq(warn, "");
    /* The pipe and its reader, the ring, the inflater's two (and the
     * writer's queue): nothing per message. */
    ck_assert_uint_eq(f.tally.allocations, PIPE_ALLOCS + 1 + 2 + (threads == 2));
    uint8_t *want = malloc(len);
    size_t count;
    size_t n = gz_expected(buf, zoff, NULL, 0, want, &count);
    ck_assert_uint_gt(count, 0);
    ck_assert_uint_eq(tl_kept(&f.tally), count);
    ck_assert_uint_eq(f.got_len, n);
    REQUIRE(memcmp(f.got, want, n) == 0);

    /* The verdicts are those on the same messages plain. */
    char err[256];
    pp_pipe *plain = pp_new(RD_OPTICS, &policy, err, sizeof err);
    size_t used;
    ck_assert_int_eq(pp_feed(plain, stream, stream + stream_len, 0, &used), PP_OK);
    ck_assert(tl_same_rows(&plain->tally, &f.tally));
    pp_free(plain);
    pp_free(pp);
    free(warn);
    free(want);
    free(f.got);
    free(buf);
}

START_TEST(gzip_frames_forwarded_byte_identical) { gz_forwarded(GZ_GZIP, 1); }
END_TEST

START_TEST(gzip_frames_forwarded_byte_identical_2) { gz_forwarded(GZ_GZIP, 2); }
END_TEST

START_TEST(deflate_frames_forwarded_byte_identical) { gz_forwarded(GZ_DEFLATE, 1); }
END_TEST

START_TEST(deflate_frames_forwarded_byte_identical_2) { gz_forwarded(GZ_DEFLATE, 2); }
END_TEST

/* Frame 100's first byte is broken (gzip's magic, deflate's method),
 * frame 200's checksum is wrong (gzip's CRC-32, 8 bytes from the end;
 * deflate's Adler-32, the last 4): each is judged none and dropped, said
 * once with its offset, and everything else goes through as if they were
 * not there. */
static void gz_corrupt(gz_encoding e, int threads)
{
    static size_t zoff[NMSG + 1];
    size_t len;
    uint8_t *buf = gz_stream(e, &len, zoff);
    int bad[2] = {100, 200};
    size_t sum = e == GZ_GZIP ? 8 : 4;
    buf[zoff[100] + FR_HEADER_LEN] ^= 0xff;
    buf[zoff[201] - sum] ^= 0x01;
    filtered f;
    pp_pipe *pp;
    char *warn = NULL;
    filter_gz(e, buf, len, threads, &f, &pp, &warn);
    ck_assert_int_eq(f.outcome, FW_DONE);
    ck_assert_uint_eq(f.tally.messages, NMSG);
    ck_assert_uint_eq(pp->inflate_failed, 2);
    ck_assert_uint_eq(pp->inflated, NMSG - 2);
    ck_assert_uint_eq(f.tally.seen[f.tally.kinds], 2);
    ck_assert_uint_eq(f.tally.kept[f.tally.kinds], 0);
    char line[2][256];
    tr_code corrupt = e == GZ_GZIP ? TR_E_GZIP_CORRUPT : TR_E_ZLIB_CORRUPT;
    tr_code check = e == GZ_GZIP ? TR_E_GZIP_CRC : TR_E_ZLIB_ADLER;
    static const char form[] =
        "%s: %s (%s) at byte %zu (byte %zu of the message of the frame at byte %zu): dropped\n";
    snprintf(line[0], sizeof line[0], form, gz_encoding_name(e), tr_error_text(corrupt),
             tr_error_name(corrupt), zoff[100] + FR_HEADER_LEN, (size_t)0, zoff[100]);
    snprintf(line[1], sizeof line[1], form, gz_encoding_name(e), tr_error_text(check),
             tr_error_name(check), zoff[201] - sum, zoff[201] - sum - (zoff[200] + FR_HEADER_LEN),
             zoff[200]);
    char both[512];
    snprintf(both, sizeof both, "%s%s", line[0], line[1]);
    ck_assert_str_eq(warn, both);
    uint8_t *want = malloc(len);
    size_t count;
    size_t n = gz_expected(buf, zoff, bad, 2, want, &count);
    ck_assert_uint_eq(tl_kept(&f.tally), count);
    ck_assert_uint_eq(f.got_len, n);
    REQUIRE(memcmp(f.got, want, n) == 0);
    pp_free(pp);
    free(warn);
    free(want);
    free(f.got);
    free(buf);
}

START_TEST(corrupt_gzip_mid_stream_dropped_as_none) { gz_corrupt(GZ_GZIP, 1); }
END_TEST

START_TEST(corrupt_gzip_mid_stream_dropped_as_none_2) { gz_corrupt(GZ_GZIP, 2); }
END_TEST

START_TEST(corrupt_deflate_mid_stream_dropped_as_none) { gz_corrupt(GZ_DEFLATE, 1); }
END_TEST

/* gzip frames through a pipe told deflate (or the other way round): no
 * message inflates, each is judged none and dropped, nothing goes on, and
 * the stream is read to its end. */
START_TEST(frames_in_the_other_encoding_are_all_dropped)
{
    static const gz_encoding pairs[2][2] = {{GZ_GZIP, GZ_DEFLATE}, {GZ_DEFLATE, GZ_GZIP}};
    for (int k = 0; k < 2; k++) {
        static size_t zoff[NMSG + 1];
        size_t len;
        uint8_t *buf = gz_stream(pairs[k][0], &len, zoff);
        filtered f;
        pp_pipe *pp;
        char *warn = NULL;
        filter_gz(pairs[k][1], buf, len, 1, &f, &pp, &warn);
        ck_assert_int_eq(f.outcome, FW_DONE);
        ck_assert_uint_eq(f.tally.messages, NMSG);
        ck_assert_uint_eq(pp->inflate_failed, NMSG);
        ck_assert_uint_eq(pp->inflated, 0);
        ck_assert_uint_eq(tl_kept(&f.tally), 0);
        ck_assert_uint_eq(f.got_len, 0);
        ck_assert_ptr_nonnull(strstr(warn, gz_encoding_name(pairs[k][1])));
        pp_free(pp);
        free(warn);
        free(f.got);
        free(buf);
    }
}
END_TEST

/* --verify schema: the pipe's optics then judge as decode on this stream,
 * with one checker made at setup and nothing allocated per message. */
START_TEST(verify_schema_in_the_pipe)
{
    char err[256];
    pp_pipe *pp = pp_new(RD_OPTICS, &policy, err, sizeof err);
    ck_assert_ptr_nonnull(pp);
    ck_assert(pp_set_verify(pp, VF_SCHEMA));
    ck_assert_uint_eq(pp->tally.allocations, PIPE_ALLOCS); /* the checker is the reader's */
    pp_pipe *dec = pp_new(RD_DECODE, &policy, err, sizeof err);
    size_t used;
    ck_assert_int_eq(pp_feed(pp, stream, stream + stream_len, 0, &used), PP_OK);
    ck_assert_int_eq(pp_feed(dec, stream, stream + stream_len, 0, &used), PP_OK);
    ck_assert(tl_same_rows(&pp->tally, &dec->tally));
    ck_assert_uint_eq(pp->tally.allocations, PIPE_ALLOCS);
    /* A message the scanners read (the first, with bytes after the JSON
     * text): off judges its kind, schema judges it none. */
    size_t n = off[1] - FR_HEADER_LEN;
    uint8_t *frame = malloc(off[1] + 2);
    memcpy(frame, stream, off[1]);
    memcpy(frame + off[1], " x", 2);
    fr_put_header(frame, false, (uint32_t)(n + 2));
    pp_pipe *lazy = pp_new(RD_OPTICS, &policy, err, sizeof err);
    ck_assert(pp_set_verify(lazy, VF_OFF));
    ck_assert_int_eq(pp_feed(lazy, frame, frame + off[1] + 2, 0, &used), PP_OK);
    ck_assert_uint_eq(lazy->tally.seen[lazy->tally.kinds], 0);
    uint64_t none = pp->tally.seen[pp->tally.kinds];
    ck_assert_int_eq(pp_feed(pp, frame, frame + off[1] + 2, 0, &used), PP_OK);
    ck_assert_uint_eq(pp->tally.seen[pp->tally.kinds], none + 1);
    pp_free(lazy);
    free(frame);
    pp_free(pp);
    pp_free(dec);
}
END_TEST

static Suite *filter_suite(void)
{
    Suite *s = suite_create("filter");
    TCase *t = su_tcase(s, "filter", NULL, NULL, 120);
    tcase_add_unchecked_fixture(t, setup, teardown);
    tcase_add_test(t, readers_agree_in_memory);
    tcase_add_test(t, straddling_frames_are_read_in_place);
    tcase_add_test(t, straddling_frames_are_read_in_place_2);
    tcase_add_test(t, upstream_stops_after_n_bytes);
    tcase_add_test(t, upstream_stops_after_n_bytes_2);
    tcase_add_test(t, framing_error_mid_stream);
    tcase_add_test(t, framing_error_mid_stream_2);
    tcase_add_test(t, downstream_goes_away);
    tcase_add_test(t, downstream_goes_away_2);
    tcase_add_test(t, gzip_frames_forwarded_byte_identical);
    tcase_add_test(t, gzip_frames_forwarded_byte_identical_2);
    tcase_add_test(t, corrupt_gzip_mid_stream_dropped_as_none);
    tcase_add_test(t, corrupt_gzip_mid_stream_dropped_as_none_2);
    tcase_add_test(t, deflate_frames_forwarded_byte_identical);
    tcase_add_test(t, deflate_frames_forwarded_byte_identical_2);
    tcase_add_test(t, corrupt_deflate_mid_stream_dropped_as_none);
    tcase_add_test(t, frames_in_the_other_encoding_are_all_dropped);
    tcase_add_test(t, verify_schema_in_the_pipe);
    return s;
}

int main(void) { return su_run(filter_suite()); }
