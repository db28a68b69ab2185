/* pipe.c: split, judge, tally, gather; and the loop between two sockets. */
#include "pipe.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "reader.h"
#include "tr_optics.h"

uint64_t pp_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

pp_pipe *pp_new(rd_type reader, const po_policy *policy, char *err, size_t errlen)
{
    pp_pipe *pp = calloc(1, sizeof *pp);
    if (pp == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pp->reader = reader;
    pp->policy = *policy;
    fr_init(&pp->split);
    const char *names[TL_MAX_KINDS];
    tl_init(&pp->tally, rd_kinds(names, TL_MAX_KINDS), names);
    pp->tally.allocations = 1;
    fr_gather_init(&pp->gather, pp->iov, PP_IOV);
    if (reader != RD_NONE) {
        pp->rd = rd_new();
        if (pp->rd == NULL) {
            snprintf(err, errlen, "out of memory (reader)");
            free(pp);
            return NULL;
        }
        pp->tally.allocations += RD_ALLOCS;
    }
    if (reader == RD_DECODE) {
        if (!rd_decoding(pp->rd)) {
            snprintf(err, errlen, "out of memory (decode arena)");
            pp_free(pp);
            return NULL;
        }
        pp->tally.allocations += RD_DECODE_ALLOCS;
    }
    return pp;
}

void pp_free(pp_pipe *pp)
{
    if (pp == NULL)
        return;
    rd_free(pp->rd);
    if (pp->gzip)
        gz_inflater_destroy(&pp->gz);
    free(pp);
}

bool pp_set_verify(pp_pipe *pp, vf_level level)
{
    pp->verify = level;
    return true;
}

bool pp_set_gzip(pp_pipe *pp)
{
    if (pp->gzip)
        return true;
    if (pp->reader != RD_NONE) {
        if (!gz_inflater_init(&pp->gz, 0))
            return false;
        pp->tally.allocations += pp->gz.allocs;
    }
    pp->gzip = true;
    pp->split.allow_compressed = true;
    return true;
}

/* ---- the pipe over bytes in memory */

static bool judge_one(pp_pipe *pp, tr_message m, int *kind)
{
    *kind = -1;
    if (pp->reader == RD_OPTICS) {
        if (!rd_message(pp->rd, pp->verify, m))
            return false;
        return po_judge(&pp->policy, &pp->rd->ru, kind);
    }
    if (!rd_decode(pp->rd, m))
        return false;
    return po_judge(&pp->policy, &pp->rd->ru, kind);
}

/* CPU time of this thread: judging time should not count the moments the
 * scheduler gave the core to the upstream or the downstream (three
 * processes on two cores). */
static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A compressed message that does not inflate: judged none and dropped (by
 * the caller), counted, and said once on pp->warn. */
static void inflate_failed(pp_pipe *pp, const fr_frame *f, tr_error e)
{
    pp->inflate_failed++;
    pp->inflate_err = e;
    pp->inflate_err_frame = f->offset;
    if (pp->warn != NULL)
        fprintf(pp->warn, "gzip: %s (%s) at byte %zu, in the message at byte %zu: dropped\n",
                tr_error_text(e.code), tr_error_name(e.code), f->offset + FR_HEADER_LEN + e.offset,
                f->offset);
}

/* Judges batch[0 .. n) (timed as one piece: two clock reads per batch,
 * not per message), then tallies and gathers in order. */
static pp_status handle_batch(pp_pipe *pp, size_t n)
{
    if (pp->reader == RD_NONE) {
        for (size_t i = 0; i < n; i++) {
            pp->kind[i] = -1;
            pp->keep[i] = true;
        }
    } else if (!pp->gzip) {
        uint64_t t0 = cpu_ns();
        for (size_t i = 0; i < n; i++)
            pp->keep[i] = judge_one(pp, pp->batch[i].msg, &pp->kind[i]);
        tl_judge_time(&pp->tally, n, cpu_ns() - t0);
    } else {
        /* One message at a time through the inflater's one buffer. The
         * batch's thread CPU time is read twice, as above, and split
         * between inflating and judging in proportion to the monotonic
         * clock's time for each step: the thread CPU clock is a system
         * call (~0.4 us here), too dear to read per message, while the
         * monotonic one is read in user space (~20 ns). */
        uint64_t c0 = cpu_ns(), t = pp_now_ns(), inflate_mono = 0, judge_mono = 0;
        uint64_t judged = 0;
        for (size_t i = 0; i < n; i++) {
            const fr_frame *f = &pp->batch[i];
            tr_message m = f->msg;
            if (f->compressed) {
                tr_error e = gz_inflate(&pp->gz, f->msg, &m);
                uint64_t t1 = pp_now_ns();
                inflate_mono += t1 - t;
                t = t1;
                if (e.code != TR_E_OK) {
                    inflate_failed(pp, f, e);
                    pp->kind[i] = -1;
                    pp->keep[i] = false;
                    continue;
                }
                pp->inflated++;
                pp->compressed_bytes += f->msg.n;
                pp->inflated_bytes += m.n;
            }
            pp->keep[i] = judge_one(pp, m, &pp->kind[i]);
            uint64_t t2 = pp_now_ns();
            judge_mono += t2 - t;
            judged++;
            t = t2;
        }
        uint64_t cpu = cpu_ns() - c0, mono = inflate_mono + judge_mono;
        uint64_t inflate = mono > 0 ? (uint64_t)((double)cpu * (double)inflate_mono / (double)mono) : 0;
        pp->inflate_ns += inflate;
        tl_judge_time(&pp->tally, judged, cpu - inflate);
    }
    const uint8_t *ring_end = pp->ring != NULL ? pp->ring->base + pp->ring->cap : NULL;
    for (size_t i = 0; i < n; i++) {
        const fr_frame *f = &pp->batch[i];
        size_t size = fr_frame_size(f);
        tl_count(&pp->tally, pp->kind[i], pp->keep[i], size);
        if (ring_end != NULL && f->head < ring_end && fr_frame_end(f) > ring_end)
            pp->straddled++;
        if (!pp->keep[i])
            continue;
        tl_digest_add(&pp->tally.forwarded, f->head, size);
        if (!fr_gather_add(&pp->gather, f)) {
            if (pp->flush != NULL) {
                if (pp->flush(pp, pp->flush_ctx) != 0)
                    return PP_FLUSH_FAILED;
            } else {
                fr_gather_reset(&pp->gather);
            }
            /* An empty gather always has room. */
            bool ok = fr_gather_add(&pp->gather, f);
            (void)ok;
        }
    }
    return PP_OK;
}

pp_status pp_feed(pp_pipe *pp, const uint8_t *p, const uint8_t *end, size_t off, size_t *used)
{
    size_t pos = 0;
    fr_status st = FR_NEED_MORE;
    for (;;) {
        size_t n = 0;
        while (n < PP_BATCH) {
            st = fr_next(&pp->split, p + pos, end, off + pos, &pp->batch[n]);
            if (st != FR_FRAME)
                break;
            pos += fr_frame_size(&pp->batch[n]);
            n++;
        }
        if (n > 0 && handle_batch(pp, n) != PP_OK) {
            *used = pos;
            return PP_FLUSH_FAILED;
        }
        if (n < PP_BATCH)
            break;
    }
    *used = pos;
    return st == FR_ERROR ? PP_BAD_STREAM : PP_OK;
}

/* ---- between two sockets */

static void say(pp_result *res, const char *fmt, const char *what)
{
    snprintf(res->msg, sizeof res->msg, fmt, what);
}

/* The downstream never sends; readable means it closed or failed. */
static void downstream_gone(int out, pp_result *res)
{
    char b;
    ssize_t n = recv(out, &b, 1, MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        say(res, "downstream failed: %s", strerror(errno));
    else if (n > 0)
        say(res, "%s", "downstream sent data; it is expected to only read");
    else
        say(res, "%s", "downstream closed the connection");
}

/* Waits until in is readable (0) or the downstream went away (-1). */
static int wait_input(int in, int out, pp_result *res)
{
    struct pollfd p[2] = {{.fd = in, .events = POLLIN}, {.fd = out, .events = POLLRDHUP}};
    for (;;) {
        int r = poll(p, 2, -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            say(res, "poll: %s", strerror(errno));
            return -1;
        }
        if (p[1].revents != 0) {
            downstream_gone(out, res);
            return -1;
        }
        return 0;
    }
}

/* After the last write: half-close, then wait (bounded) for the downstream
 * to close its end, which it does once it has read everything. The
 * downstream never sends, so its end of input before ours means it left
 * early; a reset means it closed with our bytes unread. Either is an error
 * (-1, res->msg), though the writes themselves went into socket buffers. */
static int finish_output(int out, int linger_ms, pp_result *res)
{
    struct pollfd early = {.fd = out, .events = POLLRDHUP};
    if (poll(&early, 1, 0) > 0 && early.revents != 0) {
        downstream_gone(out, res);
        return -1;
    }
    shutdown(out, SHUT_WR);
    if (linger_ms <= 0)
        return 0;
    uint64_t deadline = pp_now_ns() + (uint64_t)linger_ms * 1000000u;
    for (;;) {
        uint64_t now = pp_now_ns();
        if (now >= deadline)
            return 0; /* it keeps the connection open: not ours to judge */
        struct pollfd p = {.fd = out, .events = POLLIN};
        int r = poll(&p, 1, (int)((deadline - now) / 1000000u) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        char buf[256];
        ssize_t n = recv(out, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0)
            return 0;
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n < 0) {
            say(res, "downstream reset the connection before reading everything (%s)",
                strerror(errno));
            return -1;
        }
    }
}

/* finish_output, keeping an upstream error when there was one (the first
 * error wins). */
static void end_output(int out, int linger_ms, pp_result *res)
{
    pp_result late;
    memset(&late, 0, sizeof late);
    if (finish_output(out, linger_ms, &late) == 0 || res->outcome != PP_DONE)
        return;
    res->outcome = PP_DOWNSTREAM_IO;
    memcpy(res->msg, late.msg, sizeof res->msg);
}

typedef struct {
    int out;
    uint64_t writes;
} write_ctx;

static int write_gathered(pp_pipe *pp, void *ctx)
{
    write_ctx *w = ctx;
    int rc = 0;
    if (pp->gather.n > 0) {
        rc = net_writev_all(w->out, pp->gather.iov, pp->gather.n, pp->err, sizeof pp->err);
        w->writes++;
    }
    fr_gather_reset(&pp->gather);
    return rc;
}

typedef struct {
    uint64_t next_ns;
    const pp_stream_opts *o;
} progress_clock;

static void maybe_progress(progress_clock *pc, const tl_tally *t)
{
    if (pc->o->progress == NULL)
        return;
    uint64_t now = pp_now_ns();
    if (now < pc->next_ns)
        return;
    pc->next_ns = now + 200000000u;
    pc->o->progress(pc->o->progress_ctx, t);
}

/* The one-thread loop: read a piece, handle its whole frames, write the
 * kept ones, consume; repeat. */

/* One read from upstream into the ring; on failure the result says so
 * (PP_UPSTREAM_IO, with the stream offset) and -1 comes back. */
static ssize_t read_upstream(int in, rb_ring *ring, pp_result *res)
{
    char err[NET_ERR_LEN];
    ssize_t r = net_read_ring(in, ring, err, sizeof err);
    if (r < 0) {
        res->outcome = PP_UPSTREAM_IO;
        res->err.code = TR_E_IO;
        res->err.offset = ring->consumed + ring->len;
        say(res, "upstream: %s", err);
        return -1;
    }
    res->reads += r > 0;
    return r;
}

static void stream_1(pp_pipe *pp, rb_ring *ring, int in, int out, const pp_stream_opts *o,
                     pp_result *res)
{
    write_ctx w = {out, 0};
    pp->flush = write_gathered;
    pp->flush_ctx = &w;
    progress_clock pc = {0, o};
    for (;;) {
        if (wait_input(in, out, res) != 0) {
            res->outcome = PP_DOWNSTREAM_IO;
            return;
        }
        ssize_t r = read_upstream(in, ring, res);
        if (r < 0)
            break;
        size_t n, used;
        const uint8_t *d = rb_data(ring, &n);
        pp_status st = pp_feed(pp, d, d + n, ring->consumed, &used);
        if (st != PP_FLUSH_FAILED && write_gathered(pp, &w) != 0)
            st = PP_FLUSH_FAILED;
        res->writes = w.writes;
        if (st == PP_FLUSH_FAILED) {
            res->outcome = PP_DOWNSTREAM_IO;
            say(res, "downstream: %s", pp->err);
            return;
        }
        rb_consume(ring, used);
        if (st == PP_BAD_STREAM) {
            res->outcome = PP_UPSTREAM_BAD;
            res->err = pp->split.err;
            break;
        }
        maybe_progress(&pc, &pp->tally);
        if (r == 0) {
            d = rb_data(ring, &n);
            if (fr_finish(&pp->split, d, d + n, ring->consumed) != TR_E_OK) {
                res->outcome = PP_UPSTREAM_BAD;
                res->err = pp->split.err;
            }
            break;
        }
    }
    end_output(out, o->linger_ms, res);
}

/* ---- two threads: the reader judges and queues, the writer writes */

typedef struct {
    struct iovec iov[PP_IOV];
    size_t n;
    size_t release; /* stream offset: bytes before it may be reused once written */
    bool last;
} slot;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t filled, freed;
    slot slots[PP_SLOTS];
    size_t head, count;  /* the queue: slots[head .. head + count) are filled */
    size_t cur;          /* the slot the reader gathers into (not queued) */
    size_t released;     /* written up to this stream offset */
    bool failed;         /* the writer stopped on an error */
    uint64_t writes;
    char err[NET_ERR_LEN];
    int out;
} queue;

static void *writer_main(void *arg)
{
    queue *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->count == 0)
            pthread_cond_wait(&q->filled, &q->mu);
        slot *s = &q->slots[q->head];
        pthread_mutex_unlock(&q->mu);
        int rc = 0;
        if (s->n > 0)
            rc = net_writev_all(q->out, s->iov, s->n, q->err, sizeof q->err);
        pthread_mutex_lock(&q->mu);
        q->writes += s->n > 0;
        bool last = s->last;
        if (rc != 0) {
            q->failed = true;
            pthread_cond_signal(&q->freed);
            break;
        }
        if (s->release > q->released)
            q->released = s->release;
        q->head = (q->head + 1) % PP_SLOTS;
        q->count--;
        pthread_cond_signal(&q->freed);
        if (last)
            break;
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* Queues the slot being gathered and takes the next free one (waiting for
 * the writer: the backpressure). -1 when the writer has failed. */
static int submit(pp_pipe *pp, queue *q, size_t release, bool last)
{
    pthread_mutex_lock(&q->mu);
    slot *s = &q->slots[q->cur];
    s->n = pp->gather.n;
    s->release = release;
    s->last = last;
    q->count++;
    pthread_cond_signal(&q->filled);
    /* cur is free again only after the writer has passed it; the next one
     * after the queue's tail is free when count < PP_SLOTS. */
    while (!q->failed && q->count == PP_SLOTS && !last)
        pthread_cond_wait(&q->freed, &q->mu);
    bool failed = q->failed;
    q->cur = (q->head + q->count) % PP_SLOTS;
    pthread_mutex_unlock(&q->mu);
    fr_gather_init(&pp->gather, q->slots[q->cur].iov, PP_IOV);
    return failed ? -1 : 0;
}

static int submit_full(pp_pipe *pp, void *ctx)
{
    queue *q = ctx;
    if (submit(pp, q, 0, false) != 0) {
        snprintf(pp->err, sizeof pp->err, "%s", q->err);
        return -1;
    }
    return 0;
}

/* The reader's side: like stream_1, but writes are queued, and ring bytes
 * are consumed only up to what the writer has released. parsed is the
 * stream offset up to which frames have been handled. */
static void stream_2(pp_pipe *pp, rb_ring *ring, int in, int out, const pp_stream_opts *o,
                     pp_result *res)
{
    queue *q = calloc(1, sizeof *q);
    if (q == NULL) {
        res->outcome = PP_SETUP;
        say(res, "%s", "out of memory (writer queue)");
        return;
    }
    pp->tally.allocations++;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->filled, NULL);
    pthread_cond_init(&q->freed, NULL);
    q->out = out;
    pthread_t th;
    if (pthread_create(&th, NULL, writer_main, q) != 0) {
        res->outcome = PP_SETUP;
        say(res, "%s", "cannot start the writer thread");
        free(q);
        return;
    }
    fr_gather_init(&pp->gather, q->slots[0].iov, PP_IOV);
    pp->flush = submit_full;
    pp->flush_ctx = q;
    progress_clock pc = {0, o};
    size_t parsed = 0;
    bool writer_done = false;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        /* Reuse what the writer is done with; if the ring is full of bytes
         * it still needs, wait for it. */
        for (;;) {
            rb_consume(ring, q->released - ring->consumed);
            if (q->failed || ring->len < ring->cap)
                break;
            pthread_cond_wait(&q->freed, &q->mu);
        }
        bool failed = q->failed;
        pthread_mutex_unlock(&q->mu);
        if (failed || wait_input(in, out, res) != 0) {
            if (failed)
                say(res, "downstream: %s", q->err);
            res->outcome = PP_DOWNSTREAM_IO;
            break;
        }
        ssize_t r = read_upstream(in, ring, res);
        if (r < 0)
            break;
        size_t n, used;
        const uint8_t *d = rb_data(ring, &n);
        size_t skip = parsed - ring->consumed;
        pp_status st = pp_feed(pp, d + skip, d + n, parsed, &used);
        parsed += used;
        if (st == PP_FLUSH_FAILED) {
            res->outcome = PP_DOWNSTREAM_IO;
            say(res, "%s", pp->err);
            break;
        }
        if (st == PP_BAD_STREAM) {
            res->outcome = PP_UPSTREAM_BAD;
            res->err = pp->split.err;
            break;
        }
        if (r == 0) {
            if (fr_finish(&pp->split, d + skip + used, d + n, parsed) != TR_E_OK) {
                res->outcome = PP_UPSTREAM_BAD;
                res->err = pp->split.err;
            }
            break;
        }
        if (submit(pp, q, parsed, false) != 0) {
            res->outcome = PP_DOWNSTREAM_IO;
            say(res, "downstream: %s", q->err);
            writer_done = true;
            break;
        }
        maybe_progress(&pc, &pp->tally);
    }
    /* The last batch (what was gathered before the end or the error) and
     * the writer's exit. */
    if (!writer_done && submit(pp, q, parsed, true) != 0 && res->outcome != PP_DOWNSTREAM_IO) {
        res->outcome = PP_DOWNSTREAM_IO;
        say(res, "downstream: %s", q->err);
    }
    pthread_join(th, NULL);
    res->writes = q->writes;
    if (res->outcome != PP_DOWNSTREAM_IO)
        end_output(out, o->linger_ms, res);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->filled);
    pthread_cond_destroy(&q->freed);
    free(q);
    fr_gather_init(&pp->gather, pp->iov, PP_IOV);
    pp->flush = NULL;
}

pp_outcome pp_stream(pp_pipe *pp, int in, int out, const pp_stream_opts *o, pp_result *res)
{
    uint64_t t0 = pp_now_ns();
    memset(res, 0, sizeof *res);
    res->outcome = PP_DONE;
    rb_ring ring;
    char err[NET_ERR_LEN];
    if (rb_init(&ring, o->ring_cap, o->ring_mode, err, sizeof err) != 0) {
        res->outcome = PP_SETUP;
        say(res, "%s", err);
        return res->outcome;
    }
    /* A whole frame must fit with room to read the next piece. */
    size_t fit = ring.cap / 2 - FR_HEADER_LEN;
    if (pp->split.max_len > fit)
        pp->split.max_len = (uint32_t)fit;
    pp->tally.allocations += ring.allocations;
    pp->ring = &ring;
    res->mirrored = ring.mirrored;
    res->threads = o->threads == 2 && ring.mirrored ? 2 : 1;
    if (res->threads == 2)
        stream_2(pp, &ring, in, out, o, res);
    else
        stream_1(pp, &ring, in, out, o, res);
    pp->tally.bytes_copied += ring.bytes_copied;
    pp->ring = NULL;
    rb_destroy(&ring);
    res->seconds = (double)(pp_now_ns() - t0) / 1e9;
    return res->outcome;
}

const char *pp_describe(const pp_result *res, char *buf, size_t n)
{
    switch (res->outcome) {
    case PP_DONE:
        snprintf(buf, n, "done");
        break;
    case PP_UPSTREAM_BAD:
        snprintf(buf, n, "upstream: %s (%s) at byte %zu", tr_error_text(res->err.code),
                 tr_error_name(res->err.code), res->err.offset);
        break;
    case PP_UPSTREAM_IO:
        snprintf(buf, n, "%s at byte %zu", res->msg, res->err.offset);
        break;
    default:
        snprintf(buf, n, "%s", res->msg);
        break;
    }
    return buf;
}
