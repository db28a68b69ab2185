/* test_gzip.c: gzip messages inflated into the reused buffer: round trips
 * of generated Issues, mixed frames through the splitter, verdicts equal to
 * the plain messages', and the bad cases (bomb, corrupt, truncated, CRC). */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "frames.h"
#include "gzip.h"
#include "issues.h"
#include "reader.h"
#include "skip.h"
#include "support/suite.h"

/* libdeflate's own allocations, counted through its allocator hook (set in
 * main before any compressor exists), so the tests see every allocation on
 * the inflate path: ours in z.allocs, libdeflate's here. */
static uint64_t lib_allocs;

static void *count_malloc(size_t n)
{
    lib_allocs++;
    return malloc(n);
}

static double now(void)
{
    return (double)clk_now_ns() / 1e9;
}

/* A gzip member of [p, p + n) in a fresh malloc'd buffer; *out_n its size. */
static uint8_t *gzip_of(const void *p, size_t n, int level, size_t *out_n)
{
    gz_deflater c;
    ck_assert(gz_deflater_init(&c, level));
    size_t cap = gz_bound(&c, n);
    uint8_t *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    tr_message in = {p, n};
    *out_n = gz_deflate(&c, in, out, cap);
    ck_assert_uint_gt(*out_n, 0);
    gz_deflater_destroy(&c);
    return out;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

/* Message i of (seed, size) as plain JSON, copied into buf; returns its length. */
static size_t plain_message(iss_gen *g, uint64_t seed, uint64_t i, uint8_t *buf, size_t cap)
{
    size_t n;
    const uint8_t *f = iss_gen_frame(g, seed, i, false, &n);
    REQUIRE(f != NULL && f[0] == 0 && n - FR_HEADER_LEN <= cap);
    memcpy(buf, f + FR_HEADER_LEN, n - FR_HEADER_LEN);
    return n - FR_HEADER_LEN;
}

/* Message i of (seed, size 7) as plain JSON, in a malloc'd buffer of
 * exactly its length (so ASan sees a read past it); *n its length. */
static uint8_t *one_message(uint64_t seed, uint64_t i, size_t *n)
{
    iss_gen *g = iss_gen_new(7);
    uint8_t *buf = malloc(ISS_MAX_MESSAGE);
    REQUIRE(g != NULL && buf != NULL);
    *n = plain_message(g, seed, i, buf, ISS_MAX_MESSAGE);
    uint8_t *msg = realloc(buf, *n);
    REQUIRE(msg != NULL);
    iss_gen_free(g);
    return msg;
}

/* --- round trips -------------------------------------------------------- */

START_TEST(round_trip_generated)
{
    static const int sizes[] = {0, 1, 3, 7, 20};
    static const int levels[] = {0, 1, 6, 12};
    gz_inflater z;
    gz_deflater c;
    ck_assert(gz_inflater_init(&z, 0));
    ck_assert_uint_eq(z.max_len, FR_DEFAULT_MAX_LEN);
    uint8_t *plain = malloc(ISS_MAX_MESSAGE);
    size_t cap = 2 * (size_t)ISS_MAX_MESSAGE;
    uint8_t *packed = malloc(cap);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        iss_gen *g = iss_gen_new(sizes[s]);
        ck_assert_ptr_nonnull(g);
        for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
            ck_assert(gz_deflater_init(&c, levels[l]));
            for (uint64_t seed = 1; seed <= 2; seed++)
                for (uint64_t i = 0; i < 50; i++) {
                    size_t n = plain_message(g, seed, i, plain, ISS_MAX_MESSAGE);
                    tr_message in = {plain, n}, out;
                    REQUIRE(gz_bound(&c, n) <= cap);
                    size_t m = gz_deflate(&c, in, packed, cap);
                    REQUIRE(m > 0);
                    tr_message gz = {packed, m};
                    tr_error e = gz_inflate(&z, gz, &out);
                    REQUIRE(e.code == TR_E_OK);
                    REQUIRE(out.p == z.buf && out.n == n && memcmp(out.p, plain, n) == 0);
                }
            gz_deflater_destroy(&c);
        }
        iss_gen_free(g);
    }
    free(plain);
    free(packed);
    gz_inflater_destroy(&z);
}
END_TEST

START_TEST(empty_message_round_trip)
{
    size_t m;
    uint8_t *gz = gzip_of("", 0, 6, &m);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    tr_message in = {gz, m}, out;
    tr_error e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_OK);
    ck_assert_uint_eq(out.n, 0);
    gz_inflater_destroy(&z);
    free(gz);
}
END_TEST

START_TEST(gzip_is_deterministic)
{
    /* gen's contract: same seed and size, same bytes, compressed too. */
    const char *text = "{\"id\":1,\"title\":\"same bytes every time\"}";
    size_t m1, m2;
    uint8_t *a = gzip_of(text, strlen(text), 6, &m1);
    uint8_t *b = gzip_of(text, strlen(text), 6, &m2);
    ck_assert_uint_eq(m1, m2);
    ck_assert_mem_eq(a, b, m1);
    free(a);
    free(b);
}
END_TEST

START_TEST(deflate_reports_no_room)
{
    uint8_t msg[1000], out[16];
    for (size_t k = 0; k < sizeof msg; k++)
        msg[k] = (uint8_t)(k * 7919u >> 3);
    gz_deflater c;
    ck_assert(gz_deflater_init(&c, 6));
    tr_message in = {msg, sizeof msg};
    ck_assert_uint_eq(gz_deflate(&c, in, out, sizeof out), 0);
    gz_deflater_destroy(&c);
}
END_TEST

START_TEST(concatenated_members)
{
    /* RFC 1952 members back to back are one message, as Go's and Java's
     * gzip readers take them. */
    size_t m1, m2;
    uint8_t *a = gzip_of("{\"a\":", 5, 6, &m1);
    uint8_t *b = gzip_of("1}", 2, 1, &m2);
    uint8_t *both = malloc(m1 + m2 + 1);
    memcpy(both, a, m1);
    memcpy(both + m1, b, m2);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    tr_message in = {both, m1 + m2}, out;
    tr_error e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_OK);
    ck_assert_uint_eq(out.n, 7);
    ck_assert_mem_eq(out.p, "{\"a\":1}", 7);

    /* Anything after the last member is a bad next header... */
    both[m1 + m2] = 'x';
    in.n = m1 + m2 + 1;
    e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_GZIP_CORRUPT);
    ck_assert_uint_eq(e.offset, m1 + m2);
    ck_assert_uint_eq(out.n, 0);
    /* ...or, when it starts like one, a cut one. */
    both[m1 + m2] = 0x1f;
    e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_GZIP_TRUNCATED);
    ck_assert_uint_eq(e.offset, m1 + m2 + 1);

    /* Two members within the limit each, over it together. */
    gz_inflater_destroy(&z);
    ck_assert(gz_inflater_init(&z, 6));
    in.n = m1 + m2;
    e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_INFLATE_LIMIT);
    ck_assert_uint_eq(e.offset, m1 + 10); /* the second member's deflate data */
    gz_inflater_destroy(&z);
    free(a);
    free(b);
    free(both);
}
END_TEST

START_TEST(optional_header_fields)
{
    /* libdeflate writes a bare header; other senders add FEXTRA, FNAME,
     * FCOMMENT and FHCRC, which are skipped (FHCRC checked). */
    const char *text = "{\"kind\":\"Bug\"}";
    size_t m;
    uint8_t *gz = gzip_of(text, strlen(text), 6, &m);
    static const uint8_t extra[] = {4, 0, 'A', 'B', 2, 0};
    uint8_t buf[256];
    memcpy(buf, gz, 10);
    buf[3] = 0x02 | 0x04 | 0x08 | 0x10;
    size_t q = 10;
    memcpy(buf + q, extra, sizeof extra);
    q += sizeof extra;
    memcpy(buf + q, "name.json", 10);
    q += 10;
    memcpy(buf + q, "a comment", 10);
    q += 10;
    uint32_t hcrc = libdeflate_crc32(0, buf, q) & 0xffff;
    buf[q] = (uint8_t)hcrc;
    buf[q + 1] = (uint8_t)(hcrc >> 8);
    size_t fhcrc_at = q;
    q += 2;
    memcpy(buf + q, gz + 10, m - 10);
    size_t n = q + m - 10;

    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    tr_message in = {buf, n}, out;
    tr_error e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_OK);
    ck_assert_uint_eq(out.n, strlen(text));
    ck_assert_mem_eq(out.p, text, out.n);

    buf[fhcrc_at] ^= 1;
    e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_GZIP_CRC);
    ck_assert_uint_eq(e.offset, fhcrc_at);
    buf[fhcrc_at] ^= 1;

    /* Every cut inside the header is a cut, at the input's end. */
    for (size_t k = 1; k < fhcrc_at + 2; k++) {
        in.n = k;
        e = gz_inflate(&z, in, &out);
        ck_assert_int_eq(e.code, TR_E_GZIP_TRUNCATED);
        ck_assert_uint_eq(e.offset, k);
    }
    gz_inflater_destroy(&z);
    free(gz);
}
END_TEST

/* --- frames: mixed, through the splitter, judged ------------------------ */

/* A stream of count frames at (seed, size), a share ratio of them gzipped;
 * malloc'd, *len its size. */
static uint8_t *make_stream(uint64_t seed, int size, uint64_t count, double ratio, size_t *len)
{
    iss_gen *g = iss_gen_new(size);
    ck_assert_ptr_nonnull(g);
    ck_assert(iss_gen_compress(g, GZ_GZIP, ratio));
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = malloc(cap);
    for (uint64_t i = 0; i < count; i++) {
        size_t fn;
        const uint8_t *f = iss_gen_frame(g, seed, i, false, &fn);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f[0], iss_compressed(seed, i, ratio));
        while (n + fn > cap)
            buf = realloc(buf, cap *= 2);
        memcpy(buf + n, f, fn);
        n += fn;
    }
    iss_gen_free(g);
    *len = n;
    return buf;
}

START_TEST(share_compressed_follows_the_ratio)
{
    static const double ratios[] = {0, 0.1, 0.5, 0.9, 1};
    for (size_t r = 0; r < sizeof ratios / sizeof *ratios; r++) {
        unsigned hits = 0;
        for (uint64_t i = 0; i < 10000; i++)
            hits += iss_compressed(3, i, ratios[r]);
        double share = hits / 10000.0;
        ck_assert_msg(share >= ratios[r] - 0.02 && share <= ratios[r] + 0.02,
                      "ratio %g gave %g", ratios[r], share);
    }
    /* Another seed draws other messages. */
    unsigned same = 0;
    for (uint64_t i = 0; i < 1000; i++)
        same += iss_compressed(1, i, 0.5) == iss_compressed(2, i, 0.5);
    ck_assert_uint_lt(same, 600);
}
END_TEST

START_TEST(mixed_frames_through_the_splitter)
{
    const uint64_t count = 600;
    size_t plain_len, mixed_len;
    uint8_t *plain = make_stream(7, 7, count, 0, &plain_len);
    uint8_t *mixed = make_stream(7, 7, count, 0.5, &mixed_len);
    ck_assert_uint_lt(mixed_len, plain_len);

    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    fr_splitter sp, sm;
    fr_init(&sp);
    fr_init(&sm);
    sm.allow_compressed = true;
    size_t op = 0, om = 0, compressed = 0;
    for (uint64_t i = 0; i < count; i++) {
        fr_frame fp, fm;
        REQUIRE(fr_next(&sp, plain + op, plain + plain_len, op, &fp) == FR_FRAME);
        REQUIRE(fr_next(&sm, mixed + om, mixed + mixed_len, om, &fm) == FR_FRAME);
        REQUIRE(!fp.compressed && fm.compressed == iss_compressed(7, i, 0.5));
        tr_message msg = fm.msg;
        if (fm.compressed) {
            compressed++;
            REQUIRE(gz_inflate(&z, fm.msg, &msg).code == TR_E_OK);
        }
        REQUIRE(msg.n == fp.msg.n && memcmp(msg.p, fp.msg.p, msg.n) == 0);
        op += fr_frame_size(&fp);
        om += fr_frame_size(&fm);
    }
    ck_assert_uint_eq(op, plain_len);
    ck_assert_uint_eq(om, mixed_len);
    ck_assert_int_eq(fr_finish(&sm, mixed + om, mixed + mixed_len, om), TR_E_OK);
    ck_assert_uint_gt(compressed, count / 3);
    ck_assert_uint_lt(compressed, 2 * count / 3);

    /* Without the encoding, the first compressed frame stops the stream. */
    fr_splitter s;
    fr_init(&s);
    size_t o = 0, first = 0;
    for (uint64_t i = 0; !iss_compressed(7, i, 0.5); i++) {
        fr_frame f;
        ck_assert_int_eq(fr_next(&s, mixed + o, mixed + mixed_len, o, &f), FR_FRAME);
        o += fr_frame_size(&f);
        first = o;
    }
    fr_frame f;
    ck_assert_int_eq(fr_next(&s, mixed + o, mixed + mixed_len, o, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_COMPRESSED);
    ck_assert_uint_eq(s.err.offset, first);

    gz_inflater_destroy(&z);
    free(plain);
    free(mixed);
}
END_TEST

typedef struct {
    int kind;
    bool keep;
} verdict;

static verdict judge_optics(const po_policy *p, rd_reader *rd, tr_message m)
{
    verdict v = {-1, false};
    REQUIRE(rd_message(rd, VF_OFF, m));
    v.keep = po_judge(p, &rd->ru, &v.kind);
    return v;
}

static verdict judge_decode(const po_policy *p, rd_reader *rd, ar_arena *a, tr_message m)
{
    verdict v = {-1, false};
    tr_Issue issue;
    ar_reset(a);
    if (tr_decode_Issue(m.p, m.n, a, &issue).code == TR_E_OK) {
        rd_decoded(rd, &issue);
        v.keep = po_judge(p, &rd->ru, &v.kind);
    }
    return v;
}

START_TEST(verdicts_equal_plain_ones)
{
    sk_init();
    rd_choice none = {0}; /* the default rules */
    po_policy policy;
    char err[256];
    ck_assert_msg(rd_policy(&none, &policy, err, sizeof err), "%s", err);
    rd_reader *rd = rd_new();
    ck_assert_ptr_nonnull(rd);
    size_t arena_cap = 64u << 20;
    uint8_t *mem = malloc(arena_cap);
    ar_arena arena;
    ar_init(&arena, mem, arena_cap);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    uint8_t *plain = malloc(ISS_MAX_MESSAGE);
    static const int sizes[] = {1, 7, 15};
    unsigned kinds_seen = 0, kept = 0, judged = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        iss_gen *pg = iss_gen_new(sizes[s]), *zg = iss_gen_new(sizes[s]);
        ck_assert(zg != NULL && pg != NULL && iss_gen_compress(zg, GZ_GZIP, 1));
        for (uint64_t i = 0; i < 300; i++) {
            size_t n = plain_message(pg, 11, i, plain, ISS_MAX_MESSAGE);
            tr_message pm = {plain, n}, zm;
            size_t fn;
            const uint8_t *f = iss_gen_frame(zg, 11, i, false, &fn);
            REQUIRE(f != NULL && f[0] == 1);
            tr_message gz = {f + FR_HEADER_LEN, fn - FR_HEADER_LEN};
            REQUIRE(gz_inflate(&z, gz, &zm).code == TR_E_OK);
            verdict po = judge_optics(&policy, rd, pm), zo = judge_optics(&policy, rd, zm);
            verdict pd = judge_decode(&policy, rd, &arena, pm);
            verdict zd = judge_decode(&policy, rd, &arena, zm);
            REQUIRE(po.kind == zo.kind && po.keep == zo.keep);
            REQUIRE(pd.kind == zd.kind && pd.keep == zd.keep);
            REQUIRE(zo.kind == zd.kind && zo.keep == zd.keep);
            if (zd.kind >= 0)
                kinds_seen |= 1u << zd.kind;
            kept += zd.keep;
            judged++;
        }
        iss_gen_free(pg);
        iss_gen_free(zg);
    }
    /* The comparison means something only if the verdicts vary. */
    ck_assert_uint_eq(kinds_seen, (1u << tr_schema.optics[tr_schema.kind].ncases) - 1);
    ck_assert_uint_gt(kept, 0);
    ck_assert_uint_lt(kept, judged);
    free(plain);
    free(mem);
    gz_inflater_destroy(&z);
    rd_free(rd);
    po_free(&policy);
}
END_TEST

/* --- limits ------------------------------------------------------------- */

START_TEST(bomb_is_rejected_from_its_trailer)
{
    const size_t big = 100u << 20;
    uint8_t *zeros = calloc(1, big);
    ck_assert_ptr_nonnull(zeros);
    size_t m;
    uint8_t *bomb = gzip_of(zeros, big, 6, &m);
    free(zeros);
    ck_assert_uint_lt(m, 200u << 10);

    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    uint64_t ours = z.allocs, theirs = lib_allocs;
    tr_message in = {bomb, m}, out;
    double t0 = now();
    tr_error e = gz_inflate(&z, in, &out);
    double early = now() - t0;
    ck_assert_int_eq(e.code, TR_E_INFLATE_LIMIT);
    ck_assert_uint_eq(e.offset, m - 4);
    ck_assert_uint_eq(out.n, 0);

    /* The same bomb lying in its trailer (it says 100 bytes) is stopped by
     * the buffer's end instead: 4 MiB inflated, not 100. */
    put_le32(bomb + m - 4, 100);
    t0 = now();
    e = gz_inflate(&z, in, &out);
    double stopped = now() - t0;
    ck_assert_int_eq(e.code, TR_E_INFLATE_LIMIT);
    ck_assert_uint_eq(e.offset, 10);
    ck_assert_uint_eq(out.n, 0);
    ck_assert_uint_eq(z.allocs, ours);
    ck_assert_uint_eq(lib_allocs, theirs);
    /* Generous bounds (sanitizer builds are slow); typically ~1 us and ~2 ms. */
    ck_assert_msg(early < 0.01, "early reject took %.6f s", early);
    ck_assert_msg(stopped < 1.0, "stopped bomb took %.6f s", stopped);
    gz_inflater_destroy(&z);
    free(bomb);
}
END_TEST

START_TEST(limit_is_exact)
{
    enum { LIMIT = 1000 };
    uint8_t msg[LIMIT + 1];
    for (size_t k = 0; k < sizeof msg; k++)
        msg[k] = (uint8_t)(k * 2654435761u >> 13);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, LIMIT));
    ck_assert_uint_eq(z.max_len, LIMIT);
    size_t m;
    uint8_t *gz = gzip_of(msg, LIMIT, 6, &m);
    tr_message in = {gz, m}, out;
    tr_error e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_OK);
    ck_assert_uint_eq(out.n, LIMIT);
    free(gz);

    /* One byte over: the trailer says so. */
    gz = gzip_of(msg, LIMIT + 1, 6, &m);
    in.p = gz;
    in.n = m;
    e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_INFLATE_LIMIT);
    ck_assert_uint_eq(e.offset, m - 4);
    /* With the trailer hiding it, the inflating itself stops at the limit. */
    put_le32(gz + m - 4, LIMIT);
    e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_INFLATE_LIMIT);
    ck_assert_uint_eq(e.offset, 10);
    free(gz);
    gz_inflater_destroy(&z);
}
END_TEST

START_TEST(implausible_trailer_is_not_taken_for_a_bomb)
{
    /* A few hundred bytes of deflate data cannot make 4 MiB: a trailer that
     * says so is not believed, and the member is inflated and found out. */
    const char *text = "{\"detail\":{\"kind\":\"Incident\",\"severity\":\"High\"}}";
    size_t m;
    uint8_t *gz = gzip_of(text, strlen(text), 6, &m);
    put_le32(gz + m - 4, 0xfffffff0u);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    tr_message in = {gz, m}, out;
    tr_error e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_GZIP_SIZE);
    ck_assert_uint_eq(e.offset, m - 4);
    gz_inflater_destroy(&z);
    free(gz);
}
END_TEST

/* --- corrupt, CRC, truncated -------------------------------------------- */

START_TEST(bad_header_bytes)
{
    const char *text = "{}";
    size_t m;
    uint8_t *gz = gzip_of(text, 2, 6, &m);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    tr_message in = {gz, m}, out;
    static const struct {
        size_t at;
        uint8_t value;
    } cases[] = {{0, 0x1e}, {1, 0x8a}, {2, 7}, {3, 0x20}, {3, 0x80}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        uint8_t was = gz[cases[k].at];
        gz[cases[k].at] = cases[k].value;
        tr_error e = gz_inflate(&z, in, &out);
        ck_assert_int_eq(e.code, TR_E_GZIP_CORRUPT);
        ck_assert_uint_eq(e.offset, cases[k].at);
        gz[cases[k].at] = was;
    }
    /* Plain JSON sent with flag 1 is not gzip: corrupt at byte 0, not
     * taken for a bomb by its last four bytes. */
    const char *json = "{\"detail\":{\"kind\":\"Bug\"},\"title\":\"xxxxxxxxxxxxxxxx\"}";
    tr_message j = {(const uint8_t *)json, strlen(json)};
    tr_error e = gz_inflate(&z, j, &out);
    ck_assert_int_eq(e.code, TR_E_GZIP_CORRUPT);
    ck_assert_uint_eq(e.offset, 0);
    gz_inflater_destroy(&z);
    free(gz);
}
END_TEST

START_TEST(every_single_byte_corruption)
{
    size_t n, m;
    uint8_t *plain = one_message(5, 0, &n);
    uint8_t *gz = gzip_of(plain, n, 6, &m);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    tr_message in = {gz, m}, out;
    static const uint8_t flips[] = {0x01, 0x80, 0xff};
    unsigned by_code[TR_E_COUNT_] = {0};
    size_t t = m - 8; /* libdeflate's member: a 10-byte header, no options */
    for (size_t at = 0; at < m; at++)
        for (size_t k = 0; k < sizeof flips; k++) {
            gz[at] ^= flips[k];
            tr_error e = gz_inflate(&z, in, &out);
            gz[at] ^= flips[k];
            by_code[e.code]++;
            if (e.code == TR_E_OK) {
                /* Only bytes nobody reads: MTIME, XFL, OS, FTEXT, and the
                 * padding bits after the last deflate block. */
                REQUIRE((at >= 4 && at < 10) || (at == 3 && flips[k] == 0x01) ||
                        at == t - 1);
                REQUIRE(out.n == n && memcmp(out.p, plain, n) == 0);
                continue;
            }
            REQUIRE(out.n == 0 && e.offset <= m);
            if (at < 3)
                REQUIRE(e.code == TR_E_GZIP_CORRUPT && e.offset == at);
            else if (at >= t && at < t + 4)
                REQUIRE(e.code == TR_E_GZIP_CRC && e.offset == t);
            else if (at >= t + 4)
                REQUIRE(e.code == TR_E_GZIP_SIZE && e.offset == t + 4);
            else if (at >= 10)
                REQUIRE(e.code == TR_E_GZIP_CORRUPT || e.code == TR_E_GZIP_CRC ||
                        e.code == TR_E_GZIP_SIZE || e.code == TR_E_GZIP_TRUNCATED ||
                        e.code == TR_E_INFLATE_LIMIT);
        }
    /* The deflate data's corruptions show both ways. */
    ck_assert_uint_gt(by_code[TR_E_GZIP_CORRUPT], 0);
    ck_assert_uint_gt(by_code[TR_E_GZIP_CRC], 4 * sizeof flips);
    gz_inflater_destroy(&z);
    free(gz);
    free(plain);
}
END_TEST

START_TEST(crc_mismatch_in_well_formed_data)
{
    /* Two messages of one length: A's deflate data under B's trailer
     * inflates cleanly, to the wrong bytes; only the CRC can tell. */
    const char *a = "{\"kind\":\"Bug\",\"n\":1}", *b = "{\"kind\":\"Bug\",\"n\":2}";
    size_t ma, mb;
    uint8_t *ga = gzip_of(a, strlen(a), 6, &ma);
    uint8_t *gb = gzip_of(b, strlen(b), 6, &mb);
    memcpy(ga + ma - 8, gb + mb - 8, 8);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    tr_message in = {ga, ma}, out;
    tr_error e = gz_inflate(&z, in, &out);
    ck_assert_int_eq(e.code, TR_E_GZIP_CRC);
    ck_assert_uint_eq(e.offset, ma - 8);
    ck_assert_uint_eq(out.n, 0);
    ck_assert_str_eq(tr_error_name(e.code), "GZIP_CRC");
    ck_assert_str_eq(tr_error_text(e.code), "gzip CRC mismatch");
    gz_inflater_destroy(&z);
    free(ga);
    free(gb);
}
END_TEST

typedef tr_error (*inflate_fn)(gz_inflater *, tr_message, tr_message *);

/* Every prefix of the compressed message [c, c + m), whose wrapper has a
 * head-byte header and a tail-byte trailer, through inflate: an error each
 * time, a cut (code cut, at the end) inside the header or the trailer, a
 * cut or damage (code bad) inside the deflate data, where libdeflate cannot
 * tell them apart and nothing else may come out. *cuts and *bads count
 * them. */
static void every_prefix(inflate_fn inflate, const uint8_t *c, size_t m, size_t head,
                         size_t tail, tr_code cut_code, tr_code bad_code, unsigned *cuts,
                         unsigned *bads)
{
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    *cuts = *bads = 0;
    for (size_t k = 0; k < m; k++) {
        /* a copy of exactly k bytes, so ASan sees any read past the cut */
        uint8_t *cut = malloc(k ? k : 1);
        memcpy(cut, c, k);
        tr_message in = {cut, k}, out;
        tr_error e = inflate(&z, in, &out);
        free(cut);
        REQUIRE(e.code != TR_E_OK && out.n == 0);
        if (k < head || k >= m - tail)
            REQUIRE(e.code == cut_code && e.offset == k);
        else
            REQUIRE(e.code == cut_code || e.code == bad_code);
        *cuts += e.code == cut_code;
        *bads += e.code == bad_code;
    }
    gz_inflater_destroy(&z);
}

START_TEST(every_prefix_is_an_error)
{
    size_t n, m;
    uint8_t *plain = one_message(9, 3, &n);
    uint8_t *gz = gzip_of(plain, n, 6, &m);
    unsigned truncated, corrupt;
    every_prefix(gz_inflate, gz, m, 10, 8, TR_E_GZIP_TRUNCATED, TR_E_GZIP_CORRUPT, &truncated,
                 &corrupt);
    ck_assert_uint_ge(truncated, 10 + 8);
    ck_assert_uint_gt(corrupt, 0);
    free(gz);
    free(plain);
}
END_TEST

/* --- the buffer is reused ----------------------------------------------- */

START_TEST(buffer_is_reused)
{
    size_t len;
    uint8_t *stream = make_stream(21, 7, 1000, 1, &len);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    ck_assert_uint_eq(z.allocs, 2);
    uint64_t theirs = lib_allocs;
    const uint8_t *buf = z.buf;
    fr_splitter s;
    fr_init(&s);
    s.allow_compressed = true;
    size_t off = 0, total = 0;
    for (int i = 0; i < 1000; i++) {
        fr_frame f;
        REQUIRE(fr_next(&s, stream + off, stream + len, off, &f) == FR_FRAME);
        REQUIRE(f.compressed);
        tr_message out;
        REQUIRE(gz_inflate(&z, f.msg, &out).code == TR_E_OK);
        REQUIRE(out.p == buf && out.n > 0);
        total += out.n;
        off += fr_frame_size(&f);
    }
    ck_assert_uint_eq(off, len);
    ck_assert_uint_eq(z.allocs, 2);
    ck_assert_uint_eq(lib_allocs, theirs);
    ck_assert_ptr_eq(z.buf, buf);
    ck_assert_uint_gt(total, 1000u * 1000u);
    gz_inflater_destroy(&z);
    free(stream);
}
END_TEST

/* --- deflate: one zlib stream (grpc-encoding: deflate) ------------------ */

/* A zlib stream of [p, p + n) in a fresh malloc'd buffer; *out_n its size. */
static uint8_t *zlib_of(const void *p, size_t n, int level, size_t *out_n)
{
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    ck_assert_ptr_nonnull(c);
    size_t cap = libdeflate_zlib_compress_bound(c, n);
    uint8_t *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    *out_n = libdeflate_zlib_compress(c, p, n, out, cap);
    ck_assert_uint_gt(*out_n, 0);
    libdeflate_free_compressor(c);
    return out;
}

START_TEST(zlib_round_trip)
{
    iss_gen *g = iss_gen_new(7);
    uint8_t *plain = malloc(ISS_MAX_MESSAGE);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    static const int levels[] = {0, 1, 6, 12};
    for (uint64_t i = 0; i < 40; i++) {
        size_t n = plain_message(g, 31, i, plain, ISS_MAX_MESSAGE), m;
        uint8_t *zl = zlib_of(plain, n, levels[i % 4], &m);
        uint64_t theirs = lib_allocs;
        tr_message in = {zl, m}, out;
        tr_error e = gz_inflate_zlib(&z, in, &out);
        REQUIRE(e.code == TR_E_OK && out.p == z.buf && out.n == n &&
                memcmp(out.p, plain, n) == 0);
        REQUIRE(lib_allocs == theirs && z.allocs == 2); /* nothing allocated */
        free(zl);
    }
    size_t m;
    uint8_t *zl = zlib_of("", 0, 6, &m);
    tr_message in = {zl, m}, out;
    ck_assert_int_eq(gz_inflate_zlib(&z, in, &out).code, TR_E_OK);
    ck_assert_uint_eq(out.n, 0);
    free(zl);
    gz_inflater_destroy(&z);
    free(plain);
    iss_gen_free(g);
}
END_TEST

/* The encodings by name, as --grpc-encoding and --compress take them: each
 * name parses to its encoding and back, nothing else parses; what
 * gz_deflate_as writes in gzip and deflate, gz_inflate_as reads back (and
 * the generator's frames in it are its format: gzip's magic, a zlib
 * header), while the other compressed format is an error; identity
 * compresses nothing and reads the bytes as they are. */
START_TEST(encodings_by_name)
{
    static const char *const names[] = {"identity", "gzip", "deflate"};
    for (int e = 0; e < 3; e++) {
        gz_encoding got = (gz_encoding)-1;
        ck_assert(gz_encoding_parse(names[e], strlen(names[e]), &got));
        ck_assert_int_eq(got, e);
        ck_assert_str_eq(gz_encoding_name(got), names[e]);
    }
    static const char *const others[] = {"", "GZIP", "zlib", "snappy", "gzip ", "deflate,gzip"};
    for (size_t k = 0; k < sizeof others / sizeof *others; k++) {
        gz_encoding got = GZ_GZIP;
        ck_assert(!gz_encoding_parse(others[k], strlen(others[k]), &got));
    }

    size_t n;
    uint8_t *plain = one_message(13, 2, &n);
    gz_inflater z;
    gz_deflater c;
    ck_assert(gz_inflater_init(&z, 0) && gz_deflater_init(&c, GZ_DEFAULT_LEVEL));
    size_t cap = gz_bound(&c, n);
    uint8_t *packed = malloc(cap);
    tr_message out;
    ck_assert_uint_eq(gz_deflate_as(&c, GZ_IDENTITY, (tr_message){plain, n}, packed, cap), 0);
    ck_assert_int_eq(gz_inflate_as(&z, GZ_IDENTITY, (tr_message){plain, n}, &out).code, TR_E_OK);
    ck_assert(out.p == plain && out.n == n); /* identity: the bytes as they are */
    for (int e = GZ_GZIP; e <= GZ_DEFLATE; e++) {
        size_t m = gz_deflate_as(&c, (gz_encoding)e, (tr_message){plain, n}, packed, cap);
        ck_assert_uint_gt(m, 0);
        tr_error err = gz_inflate_as(&z, (gz_encoding)e, (tr_message){packed, m}, &out);
        ck_assert_int_eq(err.code, TR_E_OK);
        ck_assert(out.n == n && memcmp(out.p, plain, n) == 0);
        gz_encoding other = e == GZ_GZIP ? GZ_DEFLATE : GZ_GZIP;
        err = gz_inflate_as(&z, other, (tr_message){packed, m}, &out);
        ck_assert_int_eq(err.code, e == GZ_GZIP ? TR_E_ZLIB_CORRUPT : TR_E_GZIP_CORRUPT);
        ck_assert_uint_eq(out.n, 0);

        iss_gen *g = iss_gen_new(7);
        ck_assert(g != NULL && iss_gen_compress(g, (gz_encoding)e, 1));
        size_t fn;
        const uint8_t *f = iss_gen_frame(g, 13, 2, false, &fn);
        ck_assert(f != NULL && f[0] == 1);
        ck_assert_uint_eq(f[FR_HEADER_LEN], e == GZ_GZIP ? 0x1f : 0x78);
        err = gz_inflate_as(&z, (gz_encoding)e, (tr_message){f + FR_HEADER_LEN, fn - FR_HEADER_LEN},
                            &out);
        ck_assert_int_eq(err.code, TR_E_OK);
        ck_assert(out.n == n && memcmp(out.p, plain, n) == 0);
        iss_gen_free(g);
    }
    /* compressing with identity is no compression: flag 0, the JSON as is */
    iss_gen *g = iss_gen_new(7);
    ck_assert(g != NULL && iss_gen_compress(g, GZ_IDENTITY, 1));
    size_t fn;
    const uint8_t *f = iss_gen_frame(g, 13, 2, false, &fn);
    ck_assert(f != NULL && f[0] == 0 && fn == n + FR_HEADER_LEN &&
              memcmp(f + FR_HEADER_LEN, plain, n) == 0);
    iss_gen_free(g);
    free(packed);
    free(plain);
    gz_deflater_destroy(&c);
    gz_inflater_destroy(&z);
}
END_TEST

START_TEST(zlib_bad_bytes)
{
    const char *text = "{\"detail\":{\"type\":\"Bug\"}}";
    size_t n = strlen(text), m;
    uint8_t *zl = zlib_of(text, n, 6, &m);
    uint8_t *buf = malloc(m + 1);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    tr_message in = {buf, m}, out;
    tr_error e;
#define ZL_EXPECT(code_, offset_)                                                     \
    do {                                                                              \
        e = gz_inflate_zlib(&z, in, &out);                                            \
        ck_assert_int_eq(e.code, (code_));                                            \
        ck_assert_uint_eq(e.offset, (offset_));                                       \
        ck_assert_uint_eq(out.n, 0);                                                  \
        memcpy(buf, zl, m);                                                           \
        in.n = m;                                                                     \
    } while (0)
    memcpy(buf, zl, m);
    ck_assert_int_eq(gz_inflate_zlib(&z, in, &out).code, TR_E_OK);
    ck_assert_mem_eq(out.p, text, n);
    /* the method is not deflate; a window over 32 KiB */
    buf[0] = (uint8_t)((buf[0] & 0xf0) | 7);
    ZL_EXPECT(TR_E_ZLIB_CORRUPT, 0);
    buf[0] = (uint8_t)(0x80 | (buf[0] & 0x0f));
    ZL_EXPECT(TR_E_ZLIB_CORRUPT, 0);
    /* the header's check bits; a preset dictionary (check bits made right) */
    buf[1] ^= 1;
    ZL_EXPECT(TR_E_ZLIB_CORRUPT, 1);
    buf[1] = 0x20;
    buf[1] = (uint8_t)(buf[1] + (31 - ((unsigned)buf[0] << 8 | buf[1]) % 31) % 31);
    ck_assert_uint_eq(((unsigned)buf[0] << 8 | buf[1]) % 31, 0);
    ZL_EXPECT(TR_E_ZLIB_CORRUPT, 1);
    /* the checksum */
    buf[m - 1] ^= 0x40;
    ZL_EXPECT(TR_E_ZLIB_ADLER, m - 4);
    /* a byte after the stream */
    buf[m] = 0;
    in.n = m + 1;
    ZL_EXPECT(TR_E_ZLIB_CORRUPT, m);
    /* empty; a first byte alone */
    in.n = 0;
    ZL_EXPECT(TR_E_ZLIB_TRUNCATED, 0);
    in.n = 1;
    ZL_EXPECT(TR_E_ZLIB_TRUNCATED, 1);
    gz_inflater_destroy(&z);
    /* the limit is exact: n bytes fit in n, not in n - 1 */
    ck_assert(gz_inflater_init(&z, n));
    ck_assert_int_eq(gz_inflate_zlib(&z, in, &out).code, TR_E_OK);
    ck_assert_uint_eq(out.n, n);
    gz_inflater_destroy(&z);
    ck_assert(gz_inflater_init(&z, n - 1));
    ZL_EXPECT(TR_E_INFLATE_LIMIT, 2);
    gz_inflater_destroy(&z);
    /* a gzip member is not a zlib stream, nor the other way round */
    size_t gm;
    uint8_t *gz = gzip_of(text, n, 6, &gm);
    ck_assert(gz_inflater_init(&z, 0));
    in = (tr_message){gz, gm};
    ck_assert_int_eq(gz_inflate_zlib(&z, in, &out).code, TR_E_ZLIB_CORRUPT);
    in = (tr_message){zl, m};
    ck_assert_int_eq(gz_inflate(&z, in, &out).code, TR_E_GZIP_CORRUPT);
#undef ZL_EXPECT
    gz_inflater_destroy(&z);
    free(gz);
    free(buf);
    free(zl);
}
END_TEST

START_TEST(zlib_every_prefix_and_byte)
{
    size_t n, m;
    uint8_t *plain = one_message(5, 1, &n);
    uint8_t *zl = zlib_of(plain, n, 6, &m);
    unsigned truncated, corrupt;
    every_prefix(gz_inflate_zlib, zl, m, 2, 4, TR_E_ZLIB_TRUNCATED, TR_E_ZLIB_CORRUPT, &truncated,
                 &corrupt);
    ck_assert_uint_ge(truncated, 2 + 4);
    ck_assert_uint_gt(corrupt, 0);
    gz_inflater z;
    ck_assert(gz_inflater_init(&z, 0));
    size_t t = m - 4; /* the checksum */
    /* every byte flipped: an error, or the message itself */
    static const uint8_t flips[] = {0x01, 0x80, 0xff};
    unsigned adler = 0;
    tr_message in = {zl, m}, out;
    for (size_t at = 0; at < m; at++)
        for (size_t k = 0; k < sizeof flips; k++) {
            zl[at] ^= flips[k];
            tr_error e = gz_inflate_zlib(&z, in, &out);
            zl[at] ^= flips[k];
            if (e.code == TR_E_OK) {
                /* a bit the inflater never reads (the padding after the
                 * last block, one seen in the data): the message itself */
                REQUIRE(at >= 2 && at < t);
                REQUIRE(out.n == n && memcmp(out.p, plain, n) == 0);
                continue;
            }
            REQUIRE(out.n == 0 && e.offset <= m);
            if (at < 2)
                REQUIRE(e.code == TR_E_ZLIB_CORRUPT && e.offset == at);
            else if (at >= t)
                REQUIRE(e.code == TR_E_ZLIB_ADLER && e.offset == t);
            else
                REQUIRE(e.code == TR_E_ZLIB_CORRUPT || e.code == TR_E_ZLIB_ADLER ||
                        e.code == TR_E_ZLIB_TRUNCATED || e.code == TR_E_INFLATE_LIMIT);
            adler += e.code == TR_E_ZLIB_ADLER;
        }
    ck_assert_uint_gt(adler, 4 * sizeof flips); /* the data's damage shows there too */
    gz_inflater_destroy(&z);
    free(zl);
    free(plain);
}
END_TEST

static Suite *inflate_suite(void)
{
    Suite *s = suite_create("gzip");
    TCase *t = su_tcase(s, "round_trip", NULL, NULL, 120);
    tcase_add_test(t, round_trip_generated);
    tcase_add_test(t, empty_message_round_trip);
    tcase_add_test(t, gzip_is_deterministic);
    tcase_add_test(t, deflate_reports_no_room);
    tcase_add_test(t, concatenated_members);
    tcase_add_test(t, optional_header_fields);
    t = su_tcase(s, "frames", NULL, NULL, 120);
    tcase_add_test(t, share_compressed_follows_the_ratio);
    tcase_add_test(t, mixed_frames_through_the_splitter);
    tcase_add_test(t, verdicts_equal_plain_ones);
    tcase_add_test(t, buffer_is_reused);
    t = su_tcase(s, "bad", NULL, NULL, 120);
    tcase_add_test(t, bomb_is_rejected_from_its_trailer);
    tcase_add_test(t, limit_is_exact);
    tcase_add_test(t, implausible_trailer_is_not_taken_for_a_bomb);
    tcase_add_test(t, bad_header_bytes);
    tcase_add_test(t, every_single_byte_corruption);
    tcase_add_test(t, crc_mismatch_in_well_formed_data);
    tcase_add_test(t, every_prefix_is_an_error);
    t = su_tcase(s, "deflate", NULL, NULL, 120);
    tcase_add_test(t, zlib_round_trip);
    tcase_add_test(t, zlib_bad_bytes);
    tcase_add_test(t, zlib_every_prefix_and_byte);
    tcase_add_test(t, encodings_by_name);
    return s;
}

int main(void)
{
    /* Before any compressor exists, as libdeflate requires. */
    libdeflate_set_memory_allocator(count_malloc, free);
    return su_run(inflate_suite());
}
