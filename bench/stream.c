/* stream.c: bench `stream`: the filter's pipe in memory (filter/pipe.h, the
 * code the filter runs). 1024 generated messages' frames (size 7, detail
 * late) arrive in 256 KiB pieces: each piece is copied into the read buffer
 * where read(2) would have put it, then split in place, judged, tallied,
 * and the kept frames gathered into iovecs for writev (not written: the
 * sockets are what `run` measures).
 *
 *   optics  judge through the scanners
 *   decode  decode the whole Issue, judge the model
 *   none    judge nothing, keep everything (the relay's pipe)
 *   optics-gzip, decode-gzip  the same pipe over the same messages, every
 *           frame gzipped (grpc-encoding gzip): each is inflated into the
 *           pipe's one reused buffer, then judged; inflate time is reported
 *           apart from judging, and kept frames are gathered compressed
 *
 * Per message: ns (whole pipe), of which judging; allocations and bytes
 * allocated (malloc, counted); bytes copied inside the read buffer (0 with
 * the mirrored ring: a frame that straddles its end is read in place). The
 * arrival copy stands in for the kernel's and is not counted. Before
 * timing, one pass per reader: optics must tally exactly as decode. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "benches.h"
#include "issues.h"
#include "pipe.h"
#include "reader.h"
#include "skip.h"

#define MESSAGES 1024

typedef struct {
    uint8_t *stream;
    size_t len;
    pp_pipe *pp;
    rb_ring ring;
    bool failed;
} ctx_t;

/* One pass: the whole stream, piece by piece. */
static void pass(void *arg, size_t unused)
{
    (void)unused;
    ctx_t *c = arg;
    for (size_t at = 0; at < c->len;) {
        size_t room;
        uint8_t *w = rb_space(&c->ring, &room);
        size_t n = c->len - at;
        if (n > RB_READ_CHUNK)
            n = RB_READ_CHUNK;
        if (n > room)
            n = room;
        memcpy(w, c->stream + at, n);
        rb_commit(&c->ring, n);
        at += n;
        size_t avail, used;
        const uint8_t *d = rb_data(&c->ring, &avail);
        if (pp_feed(c->pp, d, d + avail, c->ring.consumed, &used) != PP_OK)
            c->failed = true;
        bn_sink += c->pp->sink.gather.n;
        fr_gather_reset(&c->pp->sink.gather); /* "written" */
        rb_consume(&c->ring, used);
    }
}

static uint8_t *make_stream(bool gzip, size_t *len)
{
    iss_gen *g = iss_gen_new(7);
    if (g != NULL && !iss_gen_compress(g, gzip ? GZ_GZIP : GZ_IDENTITY, 1)) {
        iss_gen_free(g);
        g = NULL;
    }
    size_t cap = (size_t)MESSAGES * 16384, n = 0;
    uint8_t *buf = malloc(cap);
    if (g == NULL || buf == NULL)
        goto fail;
    for (uint64_t i = 0; i < MESSAGES; i++) {
        size_t fn;
        const uint8_t *f = iss_gen_frame(g, 1, i, false, &fn);
        if (f == NULL || cap - n < fn)
            goto fail;
        memcpy(buf + n, f, fn);
        n += fn;
    }
    iss_gen_free(g);
    *len = n;
    return buf;
fail:
    iss_gen_free(g);
    free(buf);
    return NULL;
}

static bool setup(ctx_t *c, rd_type r, bool gzip, const po_policy *pol, uint8_t *stream,
                  size_t len)
{
    char err[256];
    memset(c, 0, sizeof *c);
    c->stream = stream;
    c->len = len;
    c->pp = pp_new(r, pol, err, sizeof err);
    if (c->pp != NULL && !pp_set_encoding(c->pp, gzip ? GZ_GZIP : GZ_IDENTITY)) {
        snprintf(err, sizeof err, "out of memory (inflater)");
        pp_free(c->pp);
        c->pp = NULL;
    }
    if (c->pp == NULL || rb_init(&c->ring, 0, RB_AUTO, err, sizeof err) != 0) {
        fprintf(stderr, "triage-bench stream: %s\n", err);
        pp_free(c->pp);
        return false;
    }
    c->pp->ring = &c->ring;
    c->pp->tally.allocations += c->ring.allocations;
    /* Fault the ring's pages in now: a pass covers only a quarter of it. */
    memset(c->ring.base, 0, c->ring.cap);
    return true;
}

static void teardown(ctx_t *c)
{
    pp_free(c->pp);
    rb_destroy(&c->ring);
}

int bench_stream(const bn_opts *o)
{
    sk_init();
    size_t len, zlen;
    uint8_t *stream = make_stream(false, &len);
    uint8_t *zstream = make_stream(true, &zlen);
    rd_choice none = {0};
    po_policy pol;
    char err[1024];
    if (stream == NULL || zstream == NULL || !rd_policy(&none, &pol, err, sizeof err)) {
        fprintf(stderr, "triage-bench stream: cannot set up the stream\n");
        free(stream);
        free(zstream);
        return 1;
    }

    /* Both readers must judge the pool alike before anything is timed. */
    /* So must the gzip readers, on the compressed pool, as on the plain. */
    ctx_t a, b, za, zb;
    int rc = 0;
    if (!setup(&a, RD_OPTICS, false, &pol, stream, len) ||
        !setup(&b, RD_DECODE, false, &pol, stream, len) ||
        !setup(&za, RD_OPTICS, true, &pol, zstream, zlen) ||
        !setup(&zb, RD_DECODE, true, &pol, zstream, zlen)) {
        free(stream);
        free(zstream);
        return 1;
    }
    pass(&a, 0);
    pass(&b, 0);
    pass(&za, 0);
    pass(&zb, 0);
    if (a.failed || b.failed || !tl_same_rows(&a.pp->tally, &b.pp->tally) ||
        a.pp->tally.forwarded.h != b.pp->tally.forwarded.h) {
        fprintf(stderr, "triage-bench stream: optics and decode disagree on the pool\n");
        rc = 1;
    }
    if (za.failed || zb.failed || !tl_same_rows(&za.pp->tally, &a.pp->tally) ||
        !tl_same_rows(&zb.pp->tally, &a.pp->tally) ||
        za.pp->tally.forwarded.h != zb.pp->tally.forwarded.h ||
        za.pp->inflated != MESSAGES || zb.pp->inflated != MESSAGES) {
        fprintf(stderr, "triage-bench stream: the gzip readers disagree with the plain ones\n");
        rc = 1;
    }
    teardown(&a);
    teardown(&b);
    teardown(&za);
    teardown(&zb);

    static const struct {
        rd_type reader;
        bool gzip;
        const char *name;
    } cases[] = {{RD_OPTICS, false, "optics"},
                 {RD_DECODE, false, "decode"},
                 {RD_NONE, false, "none"},
                 {RD_OPTICS, true, "optics-gzip"},
                 {RD_DECODE, true, "decode-gzip"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0] && rc == 0; k++) {
        ctx_t c;
        bool gz = cases[k].gzip;
        if (!setup(&c, cases[k].reader, gz, &pol, gz ? zstream : stream, gz ? zlen : len)) {
            rc = 1;
            break;
        }
        bn_result r = bn_time(o, 1, pass, &c);
        const tl_tally *t = &c.pp->tally;
        double msgs = (double)t->messages;
        double judge = t->judged > 0 ? (double)t->judge_ns / (double)t->judged : 0;
        double copied = (double)c.ring.bytes_copied;
        const char *name = cases[k].name;
        double inflate = c.pp->inflated > 0 ? (double)c.pp->inflate_ns / (double)c.pp->inflated : 0;
        double ratio = c.pp->inflated_bytes > 0
                           ? (double)c.pp->compressed_bytes / (double)c.pp->inflated_bytes
                           : 0;
        /* bn_time's figures are per pass; a pass is MESSAGES messages. */
        if (o->json)
            printf("{\"bench\":\"stream\",\"case\":\"%s\",\"size\":7,\"messages\":%d,"
                   "\"piece\":%u,\"stream_bytes\":%zu,\"ring\":\"%s\",\"ns_per_msg\":%.1f,"
                   "\"ns_min\":%.1f,\"ns_max\":%.1f,\"judge_ns_per_msg\":%.1f,"
                   "\"allocs_per_msg\":%.4f,\"bytes_alloc_per_msg\":%.1f,"
                   "\"bytes_copied_per_msg\":%.1f,\"straddled\":%llu,\"kept_per_pass\":%.0f,"
                   "\"grpc_encoding\":\"%s\",\"inflate_ns_per_msg\":%.1f,"
                   "\"compression_ratio\":%.4f}\n",
                   name, MESSAGES, RB_READ_CHUNK, gz ? zlen : len, c.ring.mirrored ? "mirrored" : "flat",
                   r.median_ns / MESSAGES, r.min_ns / MESSAGES, r.max_ns / MESSAGES, judge,
                   r.allocs / MESSAGES, r.bytes / MESSAGES, copied / msgs,
                   (unsigned long long)c.pp->straddled,
                   (double)tl_kept(t) / (msgs / MESSAGES), gz ? "gzip" : "identity", inflate,
                   ratio);
        else
            printf("stream %-11s %8.1f ns/msg  (%.1f..%.1f)  judging %7.1f ns  inflating %7.1f ns"
                   "  %5.3f allocs/msg  %5.1f B copied/msg  %s ring, %llu frames straddled its end\n",
                   name, r.median_ns / MESSAGES, r.min_ns / MESSAGES, r.max_ns / MESSAGES, judge,
                   inflate, r.allocs / MESSAGES, copied / msgs, c.ring.mirrored ? "mirrored" : "flat",
                   (unsigned long long)c.pp->straddled);
        if (c.failed)
            rc = 1;
        teardown(&c);
    }
    po_free(&pol);
    free(stream);
    free(zstream);
    return rc;
}
