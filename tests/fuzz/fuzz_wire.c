/* fuzz_wire.c: the harnesses of framing and compression (runtime/frames.h,
 * runtime/gzip.h). They check:
 *
 *   split   the splitter gives the same frames and the same error whatever
 *           pieces the stream arrives in; frames are views inside the
 *           input; fr_join and fr_gather count them right; errors are
 *           sticky and at the stated offsets
 *   gzip    inflating any bytes (as gzip or as deflate) gives an error or a
 *           view inside the inflater's buffer of at most its limit; a
 *           compressed payload inflates back to the same bytes when they
 *           fit the limit, and to INFLATE_LIMIT when they do not
 */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ======================================================== split ===== */

typedef struct {
    size_t offset, n;
    bool compressed;
} fz_fr;

typedef struct {
    fz_fr *frames;
    size_t count;
    fr_status last; /* FR_ERROR, or FR_NEED_MORE at the end */
    tr_code finish; /* fr_finish's answer */
    tr_error err;
    size_t err_frame;
} fz_split_result;

static uint64_t fz_rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Input: d[0] options (bit 0 allow compressed, bits 1-2 the length limit),
 * d[1] the seed of the piece sizes, then the stream. */
const char *fz_split(const uint8_t *d, size_t n)
{
    static const uint32_t limits[4] = {FR_DEFAULT_MAX_LEN, 0, 16, 1000};
    const char *why = NULL;
    if (n < 2)
        return NULL;
    bool allow = d[0] & 1;
    uint32_t max_len = limits[(d[0] >> 1) & 3];
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ d[1];
    const uint8_t *sd = d + 2;
    size_t sn = n - 2;
    uint8_t *s = fz_copy(sd, sn);
    fz_split_result ref = {calloc(sn / FR_HEADER_LEN + 1, sizeof(fz_fr)), 0, FR_NEED_MORE,
                           TR_E_OK, {TR_E_OK, 0, NULL}, 0};
    uint8_t *piece = NULL;
    if (ref.frames == NULL)
        fz_die("out of memory");

    /* In one piece: the reference. */
    fr_splitter sp;
    fr_init(&sp);
    sp.allow_compressed = allow;
    sp.max_len = max_len;
    size_t at = 0;
    for (;;) {
        fr_frame f;
        fr_status st = fr_next(&sp, s + at, s + sn, at, &f);
        if (st == FR_FRAME) {
            FZ_CHECK(f.head == s + at && f.msg.p == f.head + FR_HEADER_LEN, "split: frame view misplaced");
            FZ_CHECK(f.offset == at, "split: frame offset");
            FZ_CHECK(f.msg.n <= max_len, "split: frame over the limit");
            FZ_CHECK(fr_frame_size(&f) <= sn - at, "split: frame past the end");
            uint32_t len = (uint32_t)s[at + 1] << 24 | (uint32_t)s[at + 2] << 16 |
                           (uint32_t)s[at + 3] << 8 | s[at + 4];
            FZ_CHECK(f.msg.n == len, "split: frame length is not the header's");
            FZ_CHECK(s[at] <= 1 && f.compressed == (s[at] == 1), "split: flag");
            FZ_CHECK(!f.compressed || allow, "split: compressed frame let through");
            FZ_CHECK(fr_frame_end(&f) == s + at + FR_HEADER_LEN + len, "split: frame end");
            ref.frames[ref.count++] = (fz_fr){at, f.msg.n, f.compressed};
            at += fr_frame_size(&f);
            continue;
        }
        ref.last = st;
        break;
    }
    if (ref.last == FR_ERROR) {
        tr_code c = sp.err.code;
        FZ_CHECK(sp.err_frame == at, "split: err_frame is not the bad frame");
        FZ_CHECK(c == TR_E_FRAME_FLAG || c == TR_E_COMPRESSED || c == TR_E_FRAME_SIZE,
                 "split: unexpected error code");
        FZ_CHECK(c != TR_E_FRAME_FLAG || (s[at] > 1 && sp.err.offset == at), "split: FLAG offset");
        FZ_CHECK(c != TR_E_COMPRESSED || (s[at] == 1 && !allow && sp.err.offset == at),
                 "split: COMPRESSED offset");
        FZ_CHECK(c != TR_E_FRAME_SIZE || (sp.err.offset == at + 1 && sn - at >= FR_HEADER_LEN),
                 "split: FRAME_SIZE offset");
        tr_error before = sp.err;
        fr_frame f;
        FZ_CHECK(fr_next(&sp, s, s + sn, 0, &f) == FR_ERROR, "split: error not sticky");
        FZ_CHECK(sp.err.code == before.code && sp.err.offset == before.offset,
                 "split: first error does not win");
    }
    ref.finish = fr_finish(&sp, s + at, s + sn, at);
    ref.err = sp.err;
    ref.err_frame = sp.err_frame;
    if (ref.last == FR_NEED_MORE) {
        if (at == sn)
            FZ_CHECK(ref.finish == TR_E_OK, "split: clean end reported as an error");
        else
            FZ_CHECK(ref.finish == TR_E_FRAME_TRUNCATED && ref.err.offset == sn &&
                         ref.err_frame == at,
                     "split: truncation not reported at the end");
    } else {
        FZ_CHECK(ref.finish == ref.err.code, "split: fr_finish forgot the error");
    }

    /* Joining: frames back to back join into one iovec. */
    if (ref.count > 0) {
        fr_frame *fs = calloc(ref.count, sizeof *fs);
        struct iovec *iov = calloc(ref.count, sizeof *iov);
        if (fs == NULL || iov == NULL)
            fz_die("out of memory");
        size_t total = 0;
        for (size_t i = 0; i < ref.count; i++) {
            fs[i].head = s + ref.frames[i].offset;
            fs[i].msg.p = fs[i].head + FR_HEADER_LEN;
            fs[i].msg.n = ref.frames[i].n;
            fs[i].offset = ref.frames[i].offset;
            total += fr_frame_size(&fs[i]);
        }
        size_t k = fr_join(fs, ref.count, iov);
        bool ok = k == 1 && iov[0].iov_base == (void *)s && iov[0].iov_len == total;
        /* Every other frame: no two adjacent, so each takes an entry. */
        struct iovec g2[2];
        fr_gather g;
        fr_gather_init(&g, g2, 2);
        size_t added = 0;
        for (size_t i = 0; i < ref.count; i += 2) {
            bool fits = fr_gather_add(&g, &fs[i]);
            if (fits != (added < 2))
                ok = false;
            added += fits;
        }
        if (g.n != added || g.frames != added)
            ok = false;
        free(fs);
        free(iov);
        FZ_CHECK(ok, "split: join or gather miscounted");
    }

    /* In pieces: the same frames, the same end. Each call sees an exactly
     * sized copy of the bytes received and not yet consumed. */
    fr_init(&sp);
    sp.allow_compressed = allow;
    sp.max_len = max_len;
    size_t got = 0, done = 0, idx = 0;
    fr_status st = FR_NEED_MORE;
    while (st != FR_ERROR) {
        if (got == sn)
            break;
        uint64_t r = fz_rng(&seed);
        size_t step = (r & 3) == 0 ? (size_t)(r >> 8) % 64 + 1 : (r & 3) == 1 ? sn - got : (size_t)(r >> 8) % 7 + 1;
        got += step < sn - got ? step : sn - got;
        for (;;) {
            free(piece);
            piece = fz_copy(s + done, got - done);
            fr_frame f;
            st = fr_next(&sp, piece, piece + (got - done), done, &f);
            if (st != FR_FRAME)
                break;
            FZ_CHECK(idx < ref.count, "split: more frames in pieces than in one");
            FZ_CHECK(f.offset == ref.frames[idx].offset && f.msg.n == ref.frames[idx].n &&
                         f.compressed == ref.frames[idx].compressed && f.head == piece,
                     "split: a frame differs when the stream comes in pieces");
            FZ_CHECK(memcmp(f.msg.p, s + done + FR_HEADER_LEN, f.msg.n) == 0, "split: frame bytes");
            idx++;
            done += fr_frame_size(&f);
        }
    }
    FZ_CHECK(idx == ref.count, "split: fewer frames in pieces");
    FZ_CHECK(st == ref.last, "split: different end state in pieces");
    free(piece);
    piece = fz_copy(s + done, sn - done);
    tr_code fin = fr_finish(&sp, piece, piece + (sn - done), done);
    FZ_CHECK(fin == ref.finish && sp.err.code == ref.err.code && sp.err.offset == ref.err.offset &&
                 sp.err_frame == ref.err_frame,
             "split: different error in pieces");
out:
    free(piece);
    free(ref.frames);
    free(s);
    return why;
}

/* ======================================================== gzip ===== */

/* Input: d[0] bit 0 picks the property, bit 1 a small limit (1000 bytes,
 * to reach INFLATE_LIMIT often), bit 2 the format (set: deflate, a zlib
 * stream, gz_inflate_zlib; clear: gzip); the rest is the payload.
 *   bit 0 clear: inflate the payload as a message of that format. Any
 *     bytes: an error, or a view inside the inflater's buffer of at most
 *     the limit.
 *   bit 0 set: compress the payload, inflate it back: the same bytes when
 *     they fit the limit, INFLATE_LIMIT when they do not. */
const char *fz_gzip(const uint8_t *d, size_t n)
{
    static gz_inflater big, small;
    static gz_deflater def;
    static bool ready;
    if (!ready) {
        if (!gz_inflater_init(&big, 0) || !gz_inflater_init(&small, 1000) ||
            !gz_deflater_init(&def, GZ_DEFAULT_LEVEL))
            return "gzip: cannot set up";
        ready = true;
    }
    if (n == 0)
        return NULL;
    gz_inflater *z = (d[0] & 2) ? &small : &big;
    bool zlib = d[0] & 4;
    tr_error (*inflate)(gz_inflater *, tr_message, tr_message *) =
        zlib ? gz_inflate_zlib : gz_inflate;
    tr_message in = {d + 1, n - 1}, out = {NULL, 0};
    const char *why = NULL;
    uint8_t *buf = NULL;
    if ((d[0] & 1) == 0) {
        tr_error e = inflate(z, in, &out);
        FZ_CHECK(e.code != TR_E_OK || (out.n <= z->max_len && out.p >= z->buf &&
                                       out.p + out.n <= z->buf + z->max_len),
                 "gzip: a view outside the inflater's buffer or past the limit");
    } else {
        size_t cap = zlib ? libdeflate_zlib_compress_bound(def.c, in.n) : gz_bound(&def, in.n);
        buf = malloc(cap);
        FZ_CHECK(buf != NULL, "gzip: out of memory");
        size_t m = zlib ? libdeflate_zlib_compress(def.c, in.p, in.n, buf, cap)
                        : gz_deflate(&def, in, buf, cap);
        FZ_CHECK(m > 0, "gzip: compressing failed");
        tr_error e = inflate(z, (tr_message){buf, m}, &out);
        if (in.n <= z->max_len) {
            FZ_CHECK(e.code == TR_E_OK, "gzip: a round trip failed");
            FZ_CHECK(out.n == in.n && memcmp(out.p, in.p, in.n) == 0,
                     "gzip: a round trip changed the bytes");
        } else {
            FZ_CHECK(e.code == TR_E_INFLATE_LIMIT, "gzip: over the limit but not INFLATE_LIMIT");
        }
    }
out:
    free(buf);
    return why;
}
