/* forward.c: the loop between two descriptors, on one thread or two. */
#include "forward.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"

void fw_sink_init(fw_sink *s, struct iovec *iov, size_t cap)
{
    memset(s, 0, sizeof *s);
    fr_gather_init(&s->gather, iov, cap);
}

fw_status fw_sink_add(fw_sink *s, const fr_frame *f)
{
    if (fr_gather_add(&s->gather, f))
        return FW_OK;
    if (s->flush != NULL) {
        if (s->flush(s, s->flush_ctx) != 0)
            return FW_FLUSH_FAILED;
    } else {
        fr_gather_reset(&s->gather);
    }
    /* An empty gather always has room. */
    bool ok = fr_gather_add(&s->gather, f);
    (void)ok;
    return FW_OK;
}

/* ---- one thread */

static void say(fw_result *res, const char *fmt, const char *what)
{
    snprintf(res->msg, sizeof res->msg, fmt, what);
}

/* The downstream never sends; readable means it closed or failed. */
static void downstream_gone(int out, fw_result *res)
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
static int wait_input(int in, int out, fw_result *res)
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
static int finish_output(int out, int linger_ms, fw_result *res)
{
    struct pollfd early = {.fd = out, .events = POLLRDHUP};
    if (poll(&early, 1, 0) > 0 && early.revents != 0) {
        downstream_gone(out, res);
        return -1;
    }
    shutdown(out, SHUT_WR);
    if (linger_ms <= 0)
        return 0;
    uint64_t deadline = clk_now_ns() + (uint64_t)linger_ms * 1000000u;
    for (;;) {
        uint64_t now = clk_now_ns();
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
static void end_output(int out, int linger_ms, fw_result *res)
{
    fw_result late;
    memset(&late, 0, sizeof late);
    if (finish_output(out, linger_ms, &late) == 0 || res->outcome != FW_DONE)
        return;
    res->outcome = FW_DOWNSTREAM_IO;
    memcpy(res->msg, late.msg, sizeof res->msg);
}

typedef struct {
    int out;
    uint64_t writes;
} write_ctx;

static int write_gathered(fw_sink *s, void *ctx)
{
    write_ctx *w = ctx;
    int rc = 0;
    if (s->gather.n > 0) {
        rc = net_writev_all(w->out, s->gather.iov, s->gather.n, s->err, sizeof s->err);
        w->writes++;
    }
    fr_gather_reset(&s->gather);
    return rc;
}

typedef struct {
    uint64_t next_ns;
    const fw_opts *o;
} progress_clock;

static void maybe_progress(progress_clock *pc, const tl_tally *t)
{
    if (pc->o->progress == NULL)
        return;
    uint64_t now = clk_now_ns();
    if (now < pc->next_ns)
        return;
    pc->next_ns = now + 200000000u;
    pc->o->progress(pc->o->progress_ctx, t);
}

/* The one-thread loop: read a piece, feed its whole frames, write the
 * gathered ones, consume; repeat. */

/* One read from upstream into the ring; on failure the result says so
 * (FW_UPSTREAM_IO, with the stream offset) and -1 comes back. */
static ssize_t read_upstream(int in, rb_ring *ring, fw_result *res)
{
    char err[NET_ERR_LEN];
    ssize_t r = net_read_ring(in, ring, err, sizeof err);
    if (r < 0) {
        res->outcome = FW_UPSTREAM_IO;
        res->err.code = TR_E_IO;
        res->err.offset = ring->consumed + ring->len;
        say(res, "upstream: %s", err);
        return -1;
    }
    res->reads += r > 0;
    return r;
}

static void stream_1(const fw_feeder *fe, rb_ring *ring, int in, int out, const fw_opts *o,
                     fw_result *res)
{
    write_ctx w = {out, 0};
    fe->sink->flush = write_gathered;
    fe->sink->flush_ctx = &w;
    progress_clock pc = {0, o};
    for (;;) {
        if (wait_input(in, out, res) != 0) {
            res->outcome = FW_DOWNSTREAM_IO;
            return;
        }
        ssize_t r = read_upstream(in, ring, res);
        if (r < 0)
            break;
        size_t n, used;
        const uint8_t *d = rb_data(ring, &n);
        fw_status st = fe->feed(fe->ctx, d, d + n, ring->consumed, &used);
        if (st != FW_FLUSH_FAILED && write_gathered(fe->sink, &w) != 0)
            st = FW_FLUSH_FAILED;
        res->writes = w.writes;
        if (st == FW_FLUSH_FAILED) {
            res->outcome = FW_DOWNSTREAM_IO;
            say(res, "downstream: %s", fe->sink->err);
            return;
        }
        rb_consume(ring, used);
        if (st == FW_BAD_STREAM) {
            res->outcome = FW_UPSTREAM_BAD;
            res->err = fe->split->err;
            break;
        }
        maybe_progress(&pc, fe->tally);
        if (r == 0) {
            d = rb_data(ring, &n);
            if (fr_finish(fe->split, d, d + n, ring->consumed) != TR_E_OK) {
                res->outcome = FW_UPSTREAM_BAD;
                res->err = fe->split->err;
            }
            break;
        }
    }
    end_output(out, o->linger_ms, res);
}

/* ---- two threads: the reading thread feeds and queues, the writer writes */

typedef struct {
    struct iovec iov[FW_IOV];
    size_t n;
    size_t release; /* stream offset: bytes before it may be reused once written */
    bool last;
} slot;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t filled, freed;
    slot slots[FW_SLOTS];
    size_t head, count;  /* the queue: slots[head .. head + count) are filled */
    size_t cur;          /* the slot the reading thread gathers into (not queued) */
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
        q->head = (q->head + 1) % FW_SLOTS;
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
static int submit(fw_sink *sink, queue *q, size_t release, bool last)
{
    pthread_mutex_lock(&q->mu);
    slot *s = &q->slots[q->cur];
    s->n = sink->gather.n;
    s->release = release;
    s->last = last;
    q->count++;
    pthread_cond_signal(&q->filled);
    /* cur is free again only after the writer has passed it; the next one
     * after the queue's tail is free when count < FW_SLOTS. */
    while (!q->failed && q->count == FW_SLOTS && !last)
        pthread_cond_wait(&q->freed, &q->mu);
    bool failed = q->failed;
    q->cur = (q->head + q->count) % FW_SLOTS;
    pthread_mutex_unlock(&q->mu);
    fr_gather_init(&sink->gather, q->slots[q->cur].iov, FW_IOV);
    return failed ? -1 : 0;
}

static int submit_full(fw_sink *s, void *ctx)
{
    queue *q = ctx;
    if (submit(s, q, 0, false) != 0) {
        snprintf(s->err, sizeof s->err, "%s", q->err);
        return -1;
    }
    return 0;
}

/* The reading thread's side: like stream_1, but writes are queued, and ring bytes
 * are consumed only up to what the writer has released. parsed is the
 * stream offset up to which frames have been handled. */
static void stream_2(const fw_feeder *fe, rb_ring *ring, int in, int out, const fw_opts *o,
                     fw_result *res)
{
    queue *q = calloc(1, sizeof *q);
    if (q == NULL) {
        res->outcome = FW_SETUP;
        say(res, "%s", "out of memory (writer queue)");
        return;
    }
    fe->tally->allocations++;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->filled, NULL);
    pthread_cond_init(&q->freed, NULL);
    q->out = out;
    pthread_t th;
    if (pthread_create(&th, NULL, writer_main, q) != 0) {
        res->outcome = FW_SETUP;
        say(res, "%s", "cannot start the writer thread");
        free(q);
        return;
    }
    fr_gather own = fe->sink->gather;
    fr_gather_init(&fe->sink->gather, q->slots[0].iov, FW_IOV);
    fe->sink->flush = submit_full;
    fe->sink->flush_ctx = q;
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
            res->outcome = FW_DOWNSTREAM_IO;
            break;
        }
        ssize_t r = read_upstream(in, ring, res);
        if (r < 0)
            break;
        size_t n, used;
        const uint8_t *d = rb_data(ring, &n);
        size_t skip = parsed - ring->consumed;
        fw_status st = fe->feed(fe->ctx, d + skip, d + n, parsed, &used);
        parsed += used;
        if (st == FW_FLUSH_FAILED) {
            res->outcome = FW_DOWNSTREAM_IO;
            say(res, "%s", fe->sink->err);
            break;
        }
        if (st == FW_BAD_STREAM) {
            res->outcome = FW_UPSTREAM_BAD;
            res->err = fe->split->err;
            break;
        }
        if (r == 0) {
            if (fr_finish(fe->split, d + skip + used, d + n, parsed) != TR_E_OK) {
                res->outcome = FW_UPSTREAM_BAD;
                res->err = fe->split->err;
            }
            break;
        }
        if (submit(fe->sink, q, parsed, false) != 0) {
            res->outcome = FW_DOWNSTREAM_IO;
            say(res, "downstream: %s", q->err);
            writer_done = true;
            break;
        }
        maybe_progress(&pc, fe->tally);
    }
    /* The last batch (what was gathered before the end or the error) and
     * the writer's exit. */
    if (!writer_done && submit(fe->sink, q, parsed, true) != 0 && res->outcome != FW_DOWNSTREAM_IO) {
        res->outcome = FW_DOWNSTREAM_IO;
        say(res, "downstream: %s", q->err);
    }
    pthread_join(th, NULL);
    res->writes = q->writes;
    if (res->outcome != FW_DOWNSTREAM_IO)
        end_output(out, o->linger_ms, res);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->filled);
    pthread_cond_destroy(&q->freed);
    free(q);
    fr_gather_init(&fe->sink->gather, own.iov, own.cap);
}

fw_outcome fw_run(const fw_feeder *fe, int in, int out, const fw_opts *o, fw_result *res)
{
    uint64_t t0 = clk_now_ns();
    memset(res, 0, sizeof *res);
    res->outcome = FW_DONE;
    rb_ring ring;
    char err[NET_ERR_LEN];
    if (rb_init(&ring, o->ring_cap, o->ring_mode, err, sizeof err) != 0) {
        res->outcome = FW_SETUP;
        say(res, "%s", err);
        return res->outcome;
    }
    /* A whole frame must fit with room to read the next piece. */
    size_t fit = ring.cap / 2 - FR_HEADER_LEN;
    if (fe->split->max_len > fit)
        fe->split->max_len = (uint32_t)fit;
    fe->tally->allocations += ring.allocations;
    *fe->ring = &ring;
    res->mirrored = ring.mirrored;
    res->threads = o->threads == 2 && ring.mirrored ? 2 : 1;
    if (res->threads == 2)
        stream_2(fe, &ring, in, out, o, res);
    else
        stream_1(fe, &ring, in, out, o, res);
    fe->sink->flush = NULL;
    fe->tally->bytes_copied += ring.bytes_copied;
    *fe->ring = NULL;
    rb_destroy(&ring);
    res->seconds = (double)(clk_now_ns() - t0) / 1e9;
    return res->outcome;
}

const char *fw_describe(const fw_result *res, char *buf, size_t n)
{
    switch (res->outcome) {
    case FW_DONE:
        snprintf(buf, n, "done");
        break;
    case FW_UPSTREAM_BAD:
        snprintf(buf, n, "upstream: %s (%s) at byte %zu", tr_error_text(res->err.code),
                 tr_error_name(res->err.code), res->err.offset);
        break;
    case FW_UPSTREAM_IO:
        snprintf(buf, n, "%s at byte %zu", res->msg, res->err.offset);
        break;
    default:
        snprintf(buf, n, "%s", res->msg);
        break;
    }
    return buf;
}
