/* grpc.c: bench `grpc`: gRPC over HTTP/2 through the proxy (runtime/h2proxy.h),
 * three processes on loopback, as `triage-demo run` has them:
 *
 *   server  a C nghttp2 gRPC server (a child process): each call asks for
 *           x-count messages and gets them streamed, cycling through a pool
 *           of 256 generated Issues (size 7, detail late), one message per
 *           DATA frame, then grpc-status 0 in trailers;
 *   proxy   the engine in a child process, responses judged with the
 *           default rules: optics, decode, or relay (keeps all, reads none);
 *   client  the load generator (this process): one HTTP/2 connection, S
 *           concurrent calls (1, 8, 64) sharing the messages between them,
 *           counting messages and checking every call ends with status 0.
 *   direct  the client straight to the server, no proxy.
 *
 * Per row: a warm-up of a tenth of the messages, then the timed run; the
 * figures are messages (and MB) the server sent per second of the timed run,
 * the median of REPS runs, the cases taking turns (so that each sees the
 * same machine: it is shared and noisy).
 * The proxy's copies and allocations per message are those of the timed run
 * (the judge takes a snapshot when the warm-up's last message passes):
 * engine and nghttp2 counters, and every malloc of the proxy process
 * (counters.h), the connection's and the calls' own allocations included;
 * and those of its steady state, from half of the timed run's messages to
 * nine tenths (the free lists have grown to what the calls in flight need
 * at once by then; snapshots when those messages pass the judge). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "bench.h"
#include "benches.h"
#include "frames.h"
#include "h2proxy.h"
#include "issues.h"
#include "net.h"
#include "policy.h"
#include "reader.h"
#include "skip.h"

/* The process's CPU time (user and system), seconds. */
static double proc_cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

#define POOL 256
#define REPS 3 /* each row's reps (1 with --quick); the median is reported */
#define PATH "/triage.Bench/Stream"

typedef struct {
    uint8_t *buf;
    size_t off[POOL], len[POOL];
    size_t bytes;
    size_t kept[POOL], nkept; /* the messages the default rules keep (grpc-scale) */
} frame_pool;

static bool pool_make(frame_pool *p)
{
    iss_gen *g = iss_gen_new(7);
    size_t cap = (size_t)POOL * 16384;
    p->buf = malloc(cap);
    p->bytes = 0;
    if (g == NULL || p->buf == NULL) {
        iss_gen_free(g);
        return false;
    }
    for (size_t i = 0; i < POOL; i++) {
        size_t n;
        const uint8_t *f = iss_gen_frame(g, 1, i, false, &n);
        if (f == NULL || cap - p->bytes < n) {
            iss_gen_free(g);
            return false;
        }
        memcpy(p->buf + p->bytes, f, n);
        p->off[i] = p->bytes;
        p->len[i] = n;
        p->bytes += n;
    }
    iss_gen_free(g);
    return true;
}

/* ---- HTTP/2 over a non-blocking socket, for both peers: what nghttp2
 * wants to send goes out (the rest waits in pend), what arrives goes in. */

typedef struct {
    int fd;
    nghttp2_session *s;
    uint8_t *pend;
    size_t pend_len, pend_off, pend_cap;
    bool dead;
} h2io;

/* What nghttp2 serializes is gathered into pend (up to IO_BATCH bytes)
 * and sent in one call: one send per frame would make the peers, not the
 * proxy, the bench's bottleneck. */
#define IO_BATCH (256u * 1024u)
#define IO_CAP (IO_BATCH + 64u * 1024u)

static void io_send(h2io *c)
{
    if (c->pend == NULL) {
        c->pend = malloc(IO_CAP);
        c->pend_cap = IO_CAP;
        if (c->pend == NULL) {
            c->dead = true;
            return;
        }
    }
    while (!c->dead) {
        if (c->pend_off == c->pend_len)
            c->pend_off = c->pend_len = 0;
        while (c->pend_len < IO_BATCH) {
            const uint8_t *d;
            ssize_t n = nghttp2_session_mem_send(c->s, &d);
            if (n < 0) {
                c->dead = true;
                return;
            }
            if (n == 0)
                break;
            if ((size_t)n > c->pend_cap - c->pend_len) {
                uint8_t *b = realloc(c->pend, c->pend_len + (size_t)n);
                if (b == NULL) {
                    c->dead = true;
                    return;
                }
                c->pend = b;
                c->pend_cap = c->pend_len + (size_t)n;
            }
            memcpy(c->pend + c->pend_len, d, (size_t)n);
            c->pend_len += (size_t)n;
        }
        if (c->pend_off == c->pend_len)
            return;
        ssize_t w = send(c->fd, c->pend + c->pend_off, c->pend_len - c->pend_off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno != EAGAIN && errno != EINTR)
                c->dead = true;
            return;
        }
        c->pend_off += (size_t)w;
        if (c->pend_off < c->pend_len)
            return; /* the socket is full: wait for POLLOUT */
    }
}

static void io_recv(h2io *c)
{
    uint8_t buf[65536];
    for (int i = 0; i < 16 && !c->dead; i++) {
        ssize_t r = recv(c->fd, buf, sizeof buf, 0);
        if (r < 0) {
            if (errno != EAGAIN && errno != EINTR)
                c->dead = true;
            return;
        }
        if (r == 0) {
            c->dead = true;
            return;
        }
        if (nghttp2_session_mem_recv(c->s, buf, (size_t)r) < 0)
            c->dead = true;
    }
}

static short io_events(const h2io *c)
{
    short ev = POLLIN;
    if (c->pend_off < c->pend_len || nghttp2_session_want_write(c->s))
        ev |= POLLOUT;
    return ev;
}

static void io_free(h2io *c)
{
    if (c->s)
        nghttp2_session_del(c->s);
    if (c->fd >= 0)
        close(c->fd);
    free(c->pend);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

static int nonblock_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ---- gRPC messages out of DATA chunks (client and server alike) */

/* A message being read: its 5-byte prefix, then its payload, of which the
 * first bytes are kept in buf (a request's one-way stamp, below). */
#define GM_KEEP 12
typedef struct {
    uint8_t buf[5 + GM_KEEP];
    uint32_t have; /* bytes of the message in buf */
    uint32_t need; /* payload bytes still to come, once the prefix is whole */
} gm_reader;

/* Reads from *d (*n bytes left) up to the end of a message: true when one
 * ended (m->have of its bytes in m->buf); the next call starts the next. */
static bool gm_take(gm_reader *m, const uint8_t **d, size_t *n)
{
    while (*n > 0) {
        if (m->have >= 5 && m->need == 0)
            m->have = 0; /* the last call ended a message */
        if (m->have < 5) {
            m->buf[m->have++] = *(*d)++;
            --*n;
            if (m->have == 5) {
                m->need = fr_len(m->buf);
                if (m->need == 0)
                    return true;
            }
            continue;
        }
        size_t t = *n < m->need ? *n : m->need;
        size_t room = sizeof m->buf - m->have, keep = t < room ? t : room;
        memcpy(m->buf + m->have, *d, keep);
        m->have += (uint32_t)keep;
        m->need -= (uint32_t)t;
        *d += t;
        *n -= t;
        if (m->need == 0)
            return true;
    }
    return false;
}

/* ---- one way: each message's time from sender to receiver
 *
 * In the latency rows each request message carries when the client sent it
 * and the client's call (its slot); the server, a child forked after this
 * mapping was made (MAP_SHARED), notes how long the request took to reach it
 * and when it began the answer for that slot; the client, when the answer is
 * whole, how long the answer took. Both ends read CLOCK_MONOTONIC (bn_now),
 * the machine's one clock. Requests are forwarded unjudged, answers judged. */
#define LAT_SLOTS 256      /* client calls measured (calls past them: round trips only) */
#define LAT_CAP 65536      /* one-way samples kept a run, each direction */
#define LAT_REQ_LEN GM_KEEP /* a request message's payload: the time sent, the slot */
typedef struct {
    _Atomic double answered[LAT_SLOTS]; /* when the server began each slot's answer */
    atomic_size_t nreq, nans;
    double req[LAT_CAP], ans[LAT_CAP]; /* seconds, in arrival order */
} lat_shared;
static lat_shared *lat_sh; /* NULL: not measured (no request carries a time) */

static void lat_note(double *to, atomic_size_t *n, double secs)
{
    size_t i = atomic_fetch_add(n, 1);
    if (i < LAT_CAP)
        to[i] = secs;
}

/* ---- the server */

typedef struct {
    const frame_pool *pool;
    uint64_t count, sent, next;
    size_t at; /* bytes of the current message sent */
    /* x-echo: a kept message back for each request message (ping-pong) */
    bool echo, req_done, responding;
    uint64_t owed;
    size_t cur;
    gm_reader rq; /* the request message being read */
    int slot; /* the client's call the last request came from (-1: none) */
} srv_stream;

/* Echo mode: one kept message of the pool for each request message,
 * deferred until one arrives; trailers once the request ended. */
static ssize_t srv_echo_read(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
                             uint32_t *flags, srv_stream *st)
{
    if (st->at == 0) {
        if (st->owed == 0) {
            if (!st->req_done)
                return NGHTTP2_ERR_DEFERRED;
            *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
            nghttp2_nv t[] = {{(uint8_t *)"grpc-status", (uint8_t *)"0", 11, 1, 0}};
            nghttp2_submit_trailer(s, sid, t, 1);
            return 0;
        }
        st->cur = st->pool->kept[st->next++ % st->pool->nkept];
        if (lat_sh != NULL && st->slot >= 0)
            atomic_store(&lat_sh->answered[st->slot], bn_now());
    }
    size_t left = st->pool->len[st->cur] - st->at;
    size_t n = left < length ? left : length;
    memcpy(buf, st->pool->buf + st->pool->off[st->cur] + st->at, n);
    st->at += n;
    if (st->at == st->pool->len[st->cur]) {
        st->at = 0;
        st->owed--;
        st->sent++;
    }
    return (ssize_t)n;
}

static ssize_t srv_read(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
                        uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)ud;
    srv_stream *st = src->ptr;
    if (st->echo)
        return srv_echo_read(s, sid, buf, length, flags, st);
    if (st->sent == st->count) {
        *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        nghttp2_nv t[] = {{(uint8_t *)"grpc-status", (uint8_t *)"0", 11, 1, 0}};
        nghttp2_submit_trailer(s, sid, t, 1);
        return 0;
    }
    size_t i = st->next % POOL;
    size_t left = st->pool->len[i] - st->at;
    size_t n = left < length ? left : length;
    memcpy(buf, st->pool->buf + st->pool->off[i] + st->at, n);
    st->at += n;
    if (st->at == st->pool->len[i]) {
        st->at = 0;
        st->sent++;
        st->next++;
    }
    return (ssize_t)n;
}

static int srv_begin(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    srv_stream *st = calloc(1, sizeof *st);
    if (st == NULL)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    st->pool = ud;
    st->slot = -1;
    nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st);
    return 0;
}

static int srv_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl,
                      const uint8_t *val, size_t vl, uint8_t flags, void *ud)
{
    (void)flags;
    (void)ud;
    srv_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (st == NULL)
        return 0;
    char v[32];
    if (nl == 7 && memcmp(name, "x-count", 7) == 0 && vl < sizeof v) {
        memcpy(v, val, vl);
        v[vl] = '\0';
        st->count = strtoull(v, NULL, 10);
    } else if (nl == 7 && memcmp(name, "x-start", 7) == 0 && vl < sizeof v) {
        memcpy(v, val, vl);
        v[vl] = '\0';
        st->next = strtoull(v, NULL, 10);
    } else if (nl == 6 && memcmp(name, "x-echo", 6) == 0) {
        st->echo = st->pool->nkept > 0;
    }
    return 0;
}

static void srv_respond(nghttp2_session *s, int32_t sid, srv_stream *st)
{
    nghttp2_nv h[] = {
        {(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
        {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0},
    };
    nghttp2_data_provider p = {.source.ptr = st, .read_callback = srv_read};
    nghttp2_submit_response(s, sid, h, 2, &p);
    st->responding = true;
}

/* A whole request message (st->rq): owed an answer; in the latency rows,
 * its one-way time. */
static void srv_request(srv_stream *st)
{
    st->owed++;
    if (lat_sh == NULL || st->rq.have != 5 + LAT_REQ_LEN)
        return;
    double sent;
    uint32_t slot;
    memcpy(&sent, st->rq.buf + 5, sizeof sent);
    memcpy(&slot, st->rq.buf + 5 + sizeof sent, sizeof slot);
    lat_note(lat_sh->req, &lat_sh->nreq, bn_now() - sent);
    st->slot = slot < LAT_SLOTS ? (int)slot : -1;
}

/* Echo mode: each request message is owed an answer. */
static int srv_chunk(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *d, size_t n,
                     void *ud)
{
    (void)flags;
    (void)ud;
    srv_stream *st = nghttp2_session_get_stream_user_data(s, sid);
    if (st == NULL || !st->echo)
        return 0;
    uint64_t owed = st->owed;
    while (gm_take(&st->rq, &d, &n))
        srv_request(st);
    if (st->owed != owed && st->responding)
        nghttp2_session_resume_data(s, sid);
    return 0;
}

static int srv_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)ud;
    srv_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (st == NULL)
        return 0;
    if (st->echo) { /* answer as requests come: respond at once */
        if (f->hd.type == NGHTTP2_HEADERS && !st->responding)
            srv_respond(s, f->hd.stream_id, st);
        if (f->hd.flags & NGHTTP2_FLAG_END_STREAM) {
            st->req_done = true;
            nghttp2_session_resume_data(s, f->hd.stream_id);
        }
        return 0;
    }
    if (f->hd.flags & NGHTTP2_FLAG_END_STREAM)
        srv_respond(s, f->hd.stream_id, st);
    return 0;
}

static int srv_close(nghttp2_session *s, int32_t sid, uint32_t code, void *ud)
{
    (void)code;
    (void)ud;
    free(nghttp2_session_get_stream_user_data(s, sid));
    return 0;
}

/* The gRPC bench running (peers_setup sets it), named by the code they share
 * (the server, the load generator, the proxy children) in what it says. */
static const char *bench_name = "grpc";

/* What nghttp2 found wrong in a peer's frames (the connection error it
 * answers with GOAWAY, or a stream's): on stderr, so that a failed run says
 * which side erred and how, not only that calls failed. */
static int h2_error(nghttp2_session *s, int code, const char *msg, size_t len, void *ud)
{
    (void)ud;
    fprintf(stderr, "triage-bench %s: %s: nghttp2: %.*s (%s)\n", bench_name,
            nghttp2_session_check_server_session(s) ? "server" : "client", (int)len, msg,
            nghttp2_strerror(code));
    return 0;
}

static void h2_settings(nghttp2_session *s)
{
    nghttp2_settings_entry set[] = {
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 16u << 20},
        {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, 1u << 20},
    };
    nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, set, 2);
    nghttp2_session_set_local_window_size(s, NGHTTP2_FLAG_NONE, 0, 64u << 20);
}

#define SRV_CONNS 128 /* HAProxy opens a connection per call it cannot yet share */

/* The server's loop, in the child: until SIGTERM. */
static void serve(int lfd, const frame_pool *pool)
{
    nghttp2_session_callbacks *cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, srv_begin);
    nghttp2_session_callbacks_set_on_header_callback(cb, srv_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, srv_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, srv_close);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, srv_chunk);
    nghttp2_session_callbacks_set_error_callback2(cb, h2_error);
    h2io conns[SRV_CONNS];
    for (int i = 0; i < SRV_CONNS; i++) {
        memset(&conns[i], 0, sizeof conns[i]);
        conns[i].fd = -1;
    }
    for (;;) {
        struct pollfd p[SRV_CONNS + 1];
        p[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < SRV_CONNS; i++)
            p[i + 1] = (struct pollfd){.fd = conns[i].fd, .events = conns[i].fd >= 0 ? io_events(&conns[i]) : 0};
        if (poll(p, SRV_CONNS + 1, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents & POLLIN) {
            int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
            for (int i = 0; fd >= 0 && i < SRV_CONNS; i++)
                if (conns[i].fd < 0) {
                    conns[i].fd = fd;
                    nonblock_nodelay(fd);
                    nghttp2_session_server_new(&conns[i].s, cb, (void *)pool);
                    h2_settings(conns[i].s);
                    fd = -1;
                }
            if (fd >= 0)
                close(fd);
        }
        for (int i = 0; i < SRV_CONNS; i++) {
            h2io *c = &conns[i];
            if (c->fd < 0)
                continue;
            if (p[i + 1].revents & (POLLIN | POLLHUP | POLLERR))
                io_recv(c);
            io_send(c);
            if (c->dead)
                io_free(c);
        }
    }
}

/* ---- the client: S calls at a time */

typedef struct {
    uint64_t msgs, bytes;
    gm_reader rd;   /* the answer message being read */
    bool status_ok, done;
    int status;     /* grpc-status, -1 before it came */
    /* echo mode: one request out, its answer back, then the next */
    uint64_t want;
    double t_sent;
    bool to_send, finish;
    uint32_t slot; /* the call's index */
} cl_stream;

typedef struct {
    cl_stream *st;
    int n, done, failed;
    char why[300];   /* the first failed call: its stream, code, status and message */
    char msg[160];   /* the last non-empty grpc-message */
    uint64_t msgs, bytes;
    bool echo;
    double *lat;     /* echo mode: each answer's round trip, seconds */
    size_t nlat, cap;
} cl_run;

/* Echo mode's request body: one message when one is due (empty, or in the
 * latency rows the time sent and the call: lat_shared). */
static ssize_t cl_echo_body(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
                            uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)s;
    (void)sid;
    (void)ud;
    (void)length;
    cl_stream *st = src->ptr;
    if (st->to_send) {
        /* one message: in the latency rows, of the time sent and the call */
        size_t n = lat_sh != NULL && length >= 5 + LAT_REQ_LEN ? LAT_REQ_LEN : 0;
        st->to_send = false;
        fr_put_header(buf, false, (uint32_t)n);
        st->t_sent = bn_now();
        if (n != 0) {
            memcpy(buf + 5, &st->t_sent, sizeof st->t_sent);
            memcpy(buf + 5 + sizeof st->t_sent, &st->slot, sizeof st->slot);
        }
        return (ssize_t)(5 + n);
    }
    if (st->finish) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        return 0;
    }
    return NGHTTP2_ERR_DEFERRED;
}

/* A whole response message arrived on st. */
static void cl_message(nghttp2_session *s, int32_t sid, cl_run *r, cl_stream *st)
{
    st->msgs++;
    r->msgs++;
    if (!r->echo)
        return;
    double now = bn_now();
    if (r->nlat < r->cap)
        r->lat[r->nlat++] = now - st->t_sent;
    if (lat_sh != NULL && st->slot < LAT_SLOTS) {
        double began = atomic_load(&lat_sh->answered[st->slot]);
        if (began > 0)
            lat_note(lat_sh->ans, &lat_sh->nans, now - began);
    }
    if (st->msgs < st->want)
        st->to_send = true;
    else
        st->finish = true;
    nghttp2_session_resume_data(s, sid);
}

static ssize_t cl_body(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
                       uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)s;
    (void)sid;
    (void)src;
    (void)ud;
    (void)length;
    fr_put_header(buf, false, 0); /* one empty request message */
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return 5;
}

static int cl_chunk(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *d, size_t n,
                    void *ud)
{
    (void)flags;
    cl_run *r = ud;
    cl_stream *st = nghttp2_session_get_stream_user_data(s, sid);
    if (st == NULL)
        return 0;
    r->bytes += n;
    while (gm_take(&st->rd, &d, &n))
        cl_message(s, sid, r, st);
    return 0;
}

static int cl_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl,
                     const uint8_t *val, size_t vl, uint8_t flags, void *ud)
{
    (void)flags;
    cl_run *r = ud;
    cl_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (st != NULL && nl == 11 && memcmp(name, "grpc-status", 11) == 0) {
        st->status_ok = vl == 1 && val[0] == '0';
        st->status = 0;
        for (size_t i = 0; i < vl && i < 4 && val[i] >= '0' && val[i] <= '9'; i++)
            st->status = st->status * 10 + (val[i] - '0');
    }
    if (st != NULL && nl == 12 && memcmp(name, "grpc-message", 12) == 0 && vl > 0)
        snprintf(r->msg, sizeof r->msg, "%.*s", (int)vl, (const char *)val);
    return 0;
}

static int cl_close(nghttp2_session *s, int32_t sid, uint32_t code, void *ud)
{
    cl_run *r = ud;
    cl_stream *st = nghttp2_session_get_stream_user_data(s, sid);
    if (st == NULL)
        return 0;
    st->done = true;
    r->done++;
    if (code != 0 || !st->status_ok) {
        if (r->failed++ == 0)
            snprintf(r->why, sizeof r->why,
                     "the first: stream %d, %llu of %llu messages, RST_STREAM %s, grpc-status %d "
                     "\"%s\"",
                     sid, (unsigned long long)st->msgs, (unsigned long long)st->want,
                     code != 0 ? nghttp2_http2_strerror(code) : "none", st->status, r->msg);
    }
    return 0;
}

/* S calls over C new connections to port (call i on connection i % C):
 * count messages in all, count/S each. Streaming: the server sends them
 * at once; echo (lat != NULL, lat_cap entries): each is the answer to a
 * request message, the next request sent when the answer arrived, and
 * the round trips go into lat (*nlat of them). The seconds it took, or -1. */
static double load_n(uint16_t port, int streams, int conns, uint64_t count, uint64_t start,
                     double *lat, size_t lat_cap, size_t *nlat, uint64_t *kept, uint64_t *bytes)
{
    char err[NET_ERR_LEN], addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)port);
    if (conns > streams)
        conns = streams;
    h2io *c = calloc((size_t)conns, sizeof *c);
    cl_run r = {.n = streams, .echo = lat != NULL, .lat = lat, .cap = lat_cap};
    r.st = calloc((size_t)streams, sizeof *r.st);
    if (c == NULL || r.st == NULL) {
        free(c);
        free(r.st);
        return -1;
    }
    nghttp2_session_callbacks *cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, cl_chunk);
    nghttp2_session_callbacks_set_on_header_callback(cb, cl_header);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, cl_close);
    nghttp2_session_callbacks_set_error_callback2(cb, h2_error);
    bool ok = true;
    for (int k = 0; k < conns; k++)
        c[k].fd = -1;
    for (int k = 0; k < conns && ok; k++) {
        c[k].fd = net_connect(addr, err, sizeof err);
        if (c[k].fd < 0) {
            fprintf(stderr, "triage-bench %s: %s\n", bench_name, err);
            ok = false;
        } else if (nonblock_nodelay(c[k].fd) != 0) {
            ok = false;
        } else {
            nghttp2_session_client_new(&c[k].s, cb, &r);
            h2_settings(c[k].s);
        }
    }
    nghttp2_session_callbacks_del(cb);
    double t0 = bn_now();
    for (int i = 0; i < streams && ok; i++) {
        char n[24], at[24];
        uint64_t share = count / (uint64_t)streams + ((uint64_t)i < count % (uint64_t)streams);
        snprintf(n, sizeof n, "%llu", (unsigned long long)share);
        snprintf(at, sizeof at, "%llu", (unsigned long long)(start + (uint64_t)i * 97));
        nghttp2_nv h[] = {
            {(uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0},
            {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
            {(uint8_t *)":path", (uint8_t *)PATH, 5, sizeof PATH - 1, 0},
            {(uint8_t *)":authority", (uint8_t *)addr, 10, strlen(addr), 0},
            {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0},
            {(uint8_t *)"te", (uint8_t *)"trailers", 2, 8, 0},
            {(uint8_t *)"x-count", (uint8_t *)n, 7, strlen(n), 0},
            {(uint8_t *)"x-start", (uint8_t *)at, 7, strlen(at), 0},
            {(uint8_t *)"x-echo", (uint8_t *)"1", 6, 1, 0},
        };
        cl_stream *st = &r.st[i];
        st->status = -1;
        st->slot = (uint32_t)i;
        st->want = share;
        st->to_send = share > 0;
        st->finish = share == 0;
        nghttp2_data_provider p = {.source.ptr = st,
                                   .read_callback = r.echo ? cl_echo_body : cl_body};
        nghttp2_submit_request(c[i % conns].s, NULL, h, r.echo ? 9 : 8, &p, st);
    }
    struct pollfd *p = calloc((size_t)conns, sizeof *p);
    ok = ok && p != NULL;
    while (ok && r.done < streams) {
        for (int k = 0; k < conns; k++) {
            if (c[k].dead) {
                ok = false;
                break;
            }
            io_send(&c[k]);
            p[k] = (struct pollfd){.fd = c[k].fd, .events = io_events(&c[k])};
        }
        if (!ok)
            break;
        if (poll(p, (nfds_t)conns, 10000) <= 0) {
            fprintf(stderr, "triage-bench %s: no progress for 10 s\n", bench_name);
            break;
        }
        for (int k = 0; k < conns; k++)
            if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
                io_recv(&c[k]);
    }
    double t = bn_now() - t0;
    ok = r.done == streams && r.failed == 0;
    if (!ok)
        fprintf(stderr, "triage-bench %s: %d of %d calls ended, %d failed%s%s\n", bench_name,
                r.done, streams, r.failed, r.failed > 0 ? "; " : "", r.failed > 0 ? r.why : "");
    *kept = r.msgs;
    *bytes = r.bytes;
    if (nlat != NULL)
        *nlat = r.nlat;
    free(p);
    free(r.st);
    for (int k = 0; k < conns; k++)
        io_free(&c[k]);
    free(c);
    return ok ? t : -1;
}

/* S streaming calls of count/S messages each over one new connection. */
static double load(uint16_t port, int streams, uint64_t count, uint64_t start, uint64_t *kept,
                   uint64_t *bytes)
{
    return load_n(port, streams, 1, count, start, NULL, 0, NULL, kept, bytes);
}

/* ---- the proxy, in a child process */

typedef enum { CASE_DIRECT, CASE_RELAY, CASE_OPTICS, CASE_DECODE } bench_case;
static const char *const case_names[] = {"direct", "relay", "optics", "decode"};

typedef struct {
    bench_case c;
    po_policy policy;
    rd_reader *rd;
    hp_engine *e;
    uint64_t seen, warm, count;
    hp_stats at;     /* the engine's counters when the warm-up ended */
    ct_allocs ct_at; /* and the process's mallocs */
    double cpu_at;   /* and its CPU time */
    hp_stats s1, s2; /* when half, and nine tenths, of the timed run passed */
    ct_allocs ct1, ct2;
} judge_ctx;

/* A proxy's connection ended by an error: on stderr, so a failed run says
 * what the proxy saw. */
static void proxy_log(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "triage-bench %s: proxy: %s\n", bench_name, line);
}

static int judge(void *ctx, const hp_message *m, char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    judge_ctx *j = ctx;
    if (++j->seen == j->warm) {
        j->at = *hp_stats_of(j->e);
        j->ct_at = ct_now();
        j->cpu_at = proc_cpu_s();
    } else if (j->count > 0 && j->seen == j->warm + j->count / 2) {
        j->s1 = *hp_stats_of(j->e);
        j->ct1 = ct_now();
    } else if (j->count > 0 && j->seen == j->warm + j->count - j->count / 10) {
        j->s2 = *hp_stats_of(j->e);
        j->ct2 = ct_now();
    }
    if (j->c == CASE_RELAY)
        return HP_KEEP;
    tr_message msg = {m->p, m->n};
    int kind = -1;
    bool keep = j->c == CASE_OPTICS ? rd_message(j->rd, VF_OFF, msg) : rd_decode(j->rd, msg);
    return keep && po_judge(&j->policy, &j->rd->ru, &kind) ? HP_KEEP : HP_DROP;
}

/* What the proxy child reports through its pipe when it stops. */
typedef struct {
    hp_stats at, end, s1, s2;
    ct_allocs ct_at, ct_end, ct1, ct2;
    double cpu_at, cpu_end;
    uint64_t seen;
    int ok;
} proxy_report;

static void proxy_child(int lfd, uint16_t server_port, bench_case c, const po_policy *pol,
                        uint64_t warm, uint64_t count, int out)
{
    proxy_report rep;
    memset(&rep, 0, sizeof rep);
    judge_ctx j = {.c = c, .policy = *pol, .warm = warm, .count = count};
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    char to[32], err[NET_ERR_LEN + 64];
    snprintf(to, sizeof to, "127.0.0.1:%u", (unsigned)server_port);
    if (c != CASE_RELAY) {
        j.rd = rd_new();
        if (j.rd == NULL || (c == CASE_DECODE && !rd_decoding(j.rd)))
            goto out;
    }
    hp_config cfg = {.listen_fd = lfd, .upstream = to, .judge_responses = true,
                     .judge = judge, .judge_ctx = &j, .stop_fd = sfd, .grace_ms = 2000,
                     .log = proxy_log};
    j.e = hp_new(&cfg, err, sizeof err);
    if (j.e == NULL) {
        fprintf(stderr, "triage-bench %s: proxy: %s\n", bench_name, err);
        goto out;
    }
    if (hp_run(j.e, err, sizeof err) != 0) {
        fprintf(stderr, "triage-bench %s: proxy: %s\n", bench_name, err);
        goto out;
    }
    rep.at = j.at;
    rep.end = *hp_stats_of(j.e);
    rep.s1 = j.s1;
    rep.s2 = j.s2;
    rep.ct1 = j.ct1;
    rep.ct2 = j.ct2;
    rep.ct_at = j.ct_at;
    rep.ct_end = ct_now();
    rep.cpu_at = j.cpu_at;
    rep.cpu_end = proc_cpu_s();
    rep.seen = j.seen;
    rep.ok = 1;
out:
    if (write(out, &rep, sizeof rep) != (ssize_t)sizeof rep)
        rep.ok = 0;
    _exit(rep.ok ? 0 : 1);
}

/* A listening socket on an ephemeral loopback port. */
static int listen_any(uint16_t *port)
{
    char err[NET_ERR_LEN];
    int fd = net_listen("127.0.0.1:0", 64, port, err, sizeof err);
    if (fd < 0)
        fprintf(stderr, "triage-bench %s: %s\n", bench_name, err);
    return fd;
}

/* SIGTERM, up to 5 s to exit, then SIGKILL. How the child ended goes into
 * how (when how is not NULL), for a child whose report is missing. */
static void stop_how(pid_t pid, char *how, size_t howlen)
{
    if (pid <= 0)
        return;
    int st = 0;
    kill(pid, SIGTERM);
    for (int i = 0; i < 500; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            if (how == NULL)
                return;
            if (WIFEXITED(st))
                snprintf(how, howlen, "it exited with status %d", WEXITSTATUS(st));
            else
                snprintf(how, howlen, "it was killed by signal %d (%s)", WTERMSIG(st),
                         strsignal(WTERMSIG(st)));
            return;
        }
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (how != NULL)
        snprintf(how, howlen, "it had not exited 5 s after SIGTERM and was killed");
}

static void stop(pid_t pid) { stop_how(pid, NULL, 0); }

/* Stops a proxy child and reads its report (size bytes from fd, then
 * closed): whether it came whole. When it did not, says on stderr how the
 * child ended, so that a failed row is never silent. */
static bool take_report(pid_t pid, int fd, void *rep, size_t size)
{
    char how[96] = "";
    stop_how(pid, how, sizeof how);
    ssize_t n = read(fd, rep, size);
    close(fd);
    if (n == (ssize_t)size)
        return true;
    fprintf(stderr, "triage-bench %s: proxy process %d gave no report: %s\n", bench_name,
            (int)pid, how);
    return false;
}

/* The message pool and the default rules, which every grpc bench starts
 * with; false (said on stderr, for the bench named) when they cannot be
 * set up. */
static bool peers_setup(const char *bench, frame_pool *pool, po_policy *pol)
{
    bench_name = bench;
    sk_init();
    rd_choice none = {0};
    char err[1024];
    if (!pool_make(pool) || !rd_policy(&none, pol, err, sizeof err)) {
        fprintf(stderr, "triage-bench %s: cannot set up the pool or the rules\n", bench);
        free(pool->buf);
        return false;
    }
    return true;
}

/* The server, forked on a loopback port (*port) serving the pool until
 * stop(); its pid, or -1 when it could not start. */
static pid_t server_start(const frame_pool *pool, uint16_t *port)
{
    int lfd = listen_any(port);
    if (lfd < 0)
        return -1;
    fflush(stdout);
    pid_t pid = net_fork_tied();
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        serve(lfd, pool);
        _exit(0);
    }
    close(lfd);
    return pid;
}

typedef struct {
    double seconds;
    uint64_t kept, bytes_in;
    proxy_report rep;
    bool has_proxy;
} row;

static bool run_row(bench_case c, int streams, uint64_t count, uint16_t server_port,
                    const po_policy *pol, row *out)
{
    memset(out, 0, sizeof *out);
    uint64_t warm = count / 10 > (uint64_t)streams ? count / 10 : (uint64_t)streams;
    uint16_t port = server_port;
    pid_t pid = -1;
    int pfd[2] = {-1, -1};
    if (c != CASE_DIRECT) {
        int lfd = listen_any(&port);
        if (lfd < 0 || pipe(pfd) != 0)
            return false;
        fflush(stdout);
        pid = net_fork_tied();
        if (pid == 0) {
            close(pfd[0]);
            proxy_child(lfd, server_port, c, pol, warm, count, pfd[1]);
        }
        close(lfd);
        close(pfd[1]);
        if (pid < 0)
            return false;
    }
    uint64_t k, b;
    bool ok = load(port, streams, warm, 0, &k, &b) >= 0;
    double t = ok ? load(port, streams, count, 7, &out->kept, &out->bytes_in) : -1;
    ok = t >= 0;
    out->seconds = t;
    if (pid > 0) {
        out->has_proxy = take_report(pid, pfd[0], &out->rep, sizeof out->rep) && out->rep.ok;
        ok = ok && out->has_proxy;
    }
    return ok;
}

static int by_seconds(const void *a, const void *b)
{
    double x = ((const row *)a)->seconds, y = ((const row *)b)->seconds;
    return x < y ? -1 : x > y;
}

/* One line for a case: the median rep by time, its slowest and fastest
 * beside it (msgs/s), and that rep's proxy counters. */
static void print_row(const bn_opts *o, bench_case c, int streams, uint64_t count,
                      double frame_avg, row *reps, int n)
{
    qsort(reps, (size_t)n, sizeof *reps, by_seconds);
    const row *r = &reps[n / 2];
    double mps = (double)count / r->seconds;
    double lo = (double)count / reps[n - 1].seconds, hi = (double)count / reps[0].seconds;
    double mbps = (double)count * frame_avg / r->seconds / 1e6;
    double copied = 0, allocs = 0, h2 = 0, mallocs = 0, s_copied = 0, s_allocs = 0, s_mallocs = 0;
    if (r->has_proxy) {
        const proxy_report *p = &r->rep;
        copied = (double)(p->end.bytes_copied - p->at.bytes_copied) / (double)count;
        allocs = (double)(p->end.allocations - p->at.allocations) / (double)count;
        h2 = (double)(p->end.h2_allocations - p->at.h2_allocations) / (double)count;
        mallocs = (double)(p->ct_end.allocs - p->ct_at.allocs) / (double)count;
        double mid = (double)(count - count / 10 - count / 2); /* the steady state's messages */
        s_copied = (double)(p->s2.bytes_copied - p->s1.bytes_copied) / mid;
        s_allocs = (double)(p->s2.allocations + p->s2.h2_allocations - p->s1.allocations -
                            p->s1.h2_allocations) / mid;
        s_mallocs = (double)(p->ct2.allocs - p->ct1.allocs) / mid;
    }
    if (o->json) {
        printf("{\"bench\":\"grpc\",\"case\":\"%s\",\"streams\":%d,\"messages\":%llu,"
               "\"msg_bytes\":%.0f,\"kept\":%llu,\"seconds\":%.3f,\"msgs_per_s\":%.0f,"
               "\"msgs_per_s_min\":%.0f,\"msgs_per_s_max\":%.0f,\"mb_per_s\":%.1f,"
               "\"ns_per_msg\":%.0f,\"reps\":%d",
               case_names[c], streams, (unsigned long long)count, frame_avg,
               (unsigned long long)r->kept, r->seconds, mps, lo, hi, mbps, 1e9 / mps, n);
        if (r->has_proxy) {
            const proxy_report *p = &r->rep;
            printf(",\"bytes_copied_per_msg\":%.2f,\"allocs_per_msg\":%.4f,"
                   "\"engine_allocs_per_msg\":%.4f,\"h2_allocs_per_msg\":%.4f,"
                   "\"mallocs_per_msg\":%.4f,\"peak_held_bytes\":%llu,\"bytes_copied\":%llu,"
                   "\"messages_copied\":%llu,\"messages_placed\":%llu,\"mallocs\":%llu,"
                   "\"steady_bytes_copied_per_msg\":%.2f,\"steady_allocs_per_msg\":%.4f,"
                   "\"steady_mallocs_per_msg\":%.4f,\"steady_engine_allocs\":%llu,"
                   "\"steady_h2_allocs\":%llu",
                   copied, allocs + h2, allocs, h2, mallocs, (unsigned long long)p->end.peak_held,
                   (unsigned long long)(p->end.bytes_copied - p->at.bytes_copied),
                   (unsigned long long)(p->end.messages_copied - p->at.messages_copied),
                   (unsigned long long)(p->end.messages_placed - p->at.messages_placed),
                   (unsigned long long)(p->ct_end.allocs - p->ct_at.allocs), s_copied, s_allocs,
                   s_mallocs, (unsigned long long)(p->s2.allocations - p->s1.allocations),
                   (unsigned long long)(p->s2.h2_allocations - p->s1.h2_allocations));
        }
        if (r->has_proxy)
            printf(",\"proxy_cpu_us_per_msg\":%.3f",
                   (r->rep.cpu_end - r->rep.cpu_at) / (double)count * 1e6);
        printf("}\n");
    } else if (r->has_proxy) {
        printf("  %-7s %7d %9.0f %8.1f %7llu %12.2f %11.4f %11.4f %8.2f %9.4f   (%.0f-%.0f "
               "msgs/s)\n",
               case_names[c], streams, mps, mbps, (unsigned long long)r->kept, copied,
               allocs + h2, mallocs, s_copied, s_mallocs, lo, hi);
    } else {
        printf("  %-7s %7d %9.0f %8.1f %7llu %12s %11s %11s %8s %9s   (%.0f-%.0f msgs/s)\n",
               case_names[c], streams, mps, mbps, (unsigned long long)r->kept, "-", "-", "-",
               "-", "-", lo, hi);
    }
    fflush(stdout);
}

int bench_grpc(const bn_opts *o)
{
    frame_pool pool;
    po_policy pol;
    if (!peers_setup("grpc", &pool, &pol))
        return 1;
    double frame_avg = (double)pool.bytes / POOL;
    uint16_t sport;
    pid_t server = server_start(&pool, &sport);
    if (server < 0) {
        free(pool.buf);
        po_free(&pol);
        return 1;
    }
    uint64_t count = o->quick ? 3000 : 200000;
    int reps = o->quick ? 1 : REPS;
    static const int streams[] = {1, 8, 64};
    if (!o->json)
        printf("grpc: %llu messages of %.0f B on average per row, server to client through the "
               "proxy (responses judged with the default rules), one connection; median of %d;\n"
               "copies and allocations per message of the timed run (its connection and calls "
               "included), then of its steady state (from half its messages to nine tenths)\n"
               "  %-7s %7s %9s %8s %7s %12s %11s %11s %8s %9s\n",
               (unsigned long long)count, frame_avg, reps, "case", "streams", "msgs/s", "MB/s",
               "kept", "copied B/msg", "allocs/msg", "mallocs/msg", "steady B", "mallocs");
    int rc = 0;
    for (size_t si = 0; si < sizeof streams / sizeof streams[0]; si++) {
        /* the cases take turns, so that each rep of each sees the same machine */
        row r[CASE_DECODE + 1][REPS];
        bool ok[CASE_DECODE + 1] = {true, true, true, true};
        for (int rep = 0; rep < reps; rep++)
            for (int c = CASE_DIRECT; c <= CASE_DECODE; c++)
                if (ok[c] && !run_row((bench_case)c, streams[si], count, sport, &pol, &r[c][rep])) {
                    fprintf(stderr, "triage-bench grpc: %s with %d streams failed\n",
                            case_names[c], streams[si]);
                    ok[c] = false;
                    rc = 1;
                }
        for (int c = CASE_DIRECT; c <= CASE_DECODE; c++)
            if (ok[c])
                print_row(o, (bench_case)c, streams[si], count, frame_avg, r[c], reps);
    }
    stop(server);
    free(pool.buf);
    po_free(&pol);
    return rc;
}

/* ---- grpc-scale: the proxy's workers, many streams, and its latency
 *
 * The proxy child runs W engines on W threads (hp_listen: one port), each
 * pinned to a core; the load generator (this process) and the server are
 * pinned to the last core the process may use, the first worker to the
 * first, so with two cores one worker runs apart from them and a second
 * shares the peers' core. Throughput: S streams over min(S, 8) connections
 * (the kernel hashes each connection to one worker); the proxy's CPU time
 * per message (the process's, setup and warm-up included) and its peak
 * resident memory. Latency: 1 or 8 calls on one connection that each send a
 * request message and wait for its answer (a message the rules keep) before
 * the next, directly or through one worker, unpinned: the round trip, and
 * each message's own time, one way (lat_shared: the request's payload is
 * when it was sent and its call); the added latency is the difference of
 * the percentiles. TRIAGE_GRPC_SCALE=latency
 * in the environment runs the latency rows alone, =throughput the others. */

#define SCALE_MAX_WORKERS 16
#define SCALE_CONNS 8

typedef struct {
    uint64_t seen[SCALE_MAX_WORKERS];  /* messages judged per worker */
    uint64_t calls[SCALE_MAX_WORKERS]; /* calls per worker */
    double cpu_s;      /* the proxy process's user + system time */
    uint64_t hwm_kb;   /* its peak resident memory (VmHWM) */
    int ok;
} scale_report;

typedef struct {
    hp_engine *e;
    int cpu;
} scale_worker;

static void *scale_worker_main(void *arg)
{
    scale_worker *w = arg;
    if (w->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
    char err[NET_ERR_LEN + 64];
    if (hp_run(w->e, err, sizeof err) != 0)
        fprintf(stderr, "triage-bench %s: proxy: %s\n", bench_name, err);
    return NULL;
}

static uint64_t vm_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kb = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = strtoull(line + 6, NULL, 10);
    if (f != NULL)
        fclose(f);
    return kb;
}

static double cpu_seconds(int who)
{
    struct rusage u;
    getrusage(who, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

/* The proxy child: n engines (optics, responses judged) on fds, busy
 * polling for busy_us after events, until SIGTERM. */
static void scale_child(const int *fds, int n, const int *cpus, int busy_us,
                        uint16_t server_port, const po_policy *pol, int out)
{
    scale_report rep;
    memset(&rep, 0, sizeof rep);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    char to[32], err[NET_ERR_LEN + 64];
    snprintf(to, sizeof to, "127.0.0.1:%u", (unsigned)server_port);
    judge_ctx j[SCALE_MAX_WORKERS];
    scale_worker w[SCALE_MAX_WORKERS];
    pthread_t th[SCALE_MAX_WORKERS];
    memset(j, 0, sizeof j);
    memset(w, 0, sizeof w);
    int started = 0;
    rep.ok = 1;
    for (int i = 0; i < n; i++) {
        j[i] = (judge_ctx){.c = CASE_OPTICS, .policy = *pol};
        j[i].rd = rd_new();
        hp_config cfg = {.listen_fd = fds[i], .upstream = to, .judge_responses = true,
                         .judge = judge, .judge_ctx = &j[i], .stop_fd = -1, .grace_ms = 2000,
                         .busy_poll_us = busy_us, .log = proxy_log};
        w[i].cpu = cpus[i];
        w[i].e = j[i].rd != NULL ? hp_new(&cfg, err, sizeof err) : NULL;
        j[i].e = w[i].e;
        if (w[i].e == NULL || pthread_create(&th[i], NULL, scale_worker_main, &w[i]) != 0) {
            fprintf(stderr, "triage-bench %s: proxy: cannot start worker %d\n", bench_name, i);
            rep.ok = 0;
            break;
        }
        started++;
    }
    int sig;
    if (rep.ok)
        sigwait(&set, &sig);
    for (int i = 0; i < started; i++)
        hp_stop(w[i].e);
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        rep.seen[i] = j[i].seen;
        rep.calls[i] = hp_stats_of(w[i].e)->calls;
    }
    rep.cpu_s = cpu_seconds(RUSAGE_SELF);
    rep.hwm_kb = vm_hwm_kb();
    if (write(out, &rep, sizeof rep) != (ssize_t)sizeof rep)
        rep.ok = 0;
    _exit(rep.ok ? 0 : 1);
}

typedef struct {
    int workers, streams, conns; /* workers 0: direct */
    int busy_us;                 /* the workers' busy polling (hp_config.busy_poll_us) */
    double seconds, client_cpu_s;
    uint64_t msgs;
    scale_report rep;
    double *lat;
    size_t nlat;
} scale_row;

/* One run: a proxy child with r->workers engines (none: direct), a warm-up,
 * then count messages (streamed, or echoed when r->lat is set). */
static bool scale_run(scale_row *r, uint64_t count, size_t lat_cap, uint16_t sport,
                      const po_policy *pol, const int *cpus)
{
    uint16_t port = sport;
    pid_t pid = -1;
    int pfd[2] = {-1, -1};
    if (r->workers > 0) {
        int fds[SCALE_MAX_WORKERS];
        char err[NET_ERR_LEN];
        if (hp_listen("127.0.0.1:0", r->workers, fds, &port, err, sizeof err) != 0) {
            fprintf(stderr, "triage-bench grpc-scale: %s\n", err);
            return false;
        }
        if (pipe(pfd) != 0)
            return false;
        fflush(stdout);
        pid = net_fork_tied();
        if (pid == 0) {
            close(pfd[0]);
            scale_child(fds, r->workers, cpus, r->busy_us, sport, pol, pfd[1]);
        }
        for (int i = 0; i < r->workers; i++)
            close(fds[i]);
        close(pfd[1]);
        if (pid < 0)
            return false;
    }
    uint64_t k, b;
    uint64_t warm = count / 10 > (uint64_t)r->streams ? count / 10 : (uint64_t)r->streams;
    bool ok = load_n(port, r->streams, r->conns, warm, 0, r->lat, lat_cap, &r->nlat, &k, &b) >= 0;
    if (lat_sh != NULL) { /* the warm-up's calls all ended: nothing more is noted for them */
        atomic_store(&lat_sh->nreq, 0);
        atomic_store(&lat_sh->nans, 0);
    }
    double c0 = cpu_seconds(RUSAGE_SELF);
    double t = ok ? load_n(port, r->streams, r->conns, count, 7, r->lat, lat_cap, &r->nlat,
                           &r->msgs, &b)
                  : -1;
    r->client_cpu_s = cpu_seconds(RUSAGE_SELF) - c0;
    r->seconds = t;
    ok = t >= 0;
    if (pid > 0)
        ok = take_report(pid, pfd[0], &r->rep, sizeof r->rep) && r->rep.ok && ok;
    return ok;
}

static int by_row_seconds(const void *a, const void *b)
{
    double x = ((const scale_row *)a)->seconds, y = ((const scale_row *)b)->seconds;
    return x < y ? -1 : x > y;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void scale_print(const bn_opts *o, scale_row *reps, int n, uint64_t count)
{
    qsort(reps, (size_t)n, sizeof *reps, by_row_seconds);
    const scale_row *r = &reps[n / 2];
    double mps = (double)count / r->seconds;
    double lo = (double)count / reps[n - 1].seconds, hi = (double)count / reps[0].seconds;
    const char *c = r->workers > 0 ? "optics" : "direct";
    uint64_t seen = 0; /* the warm-up's messages too, as the CPU time counts them */
    for (int i = 0; i < r->workers; i++)
        seen += r->rep.seen[i];
    double pcpu = seen > 0 ? r->rep.cpu_s / (double)seen * 1e6 : 0;
    if (o->json) {
        printf("{\"bench\":\"grpc-scale\",\"kind\":\"throughput\",\"case\":\"%s\",\"workers\":%d,"
               "\"streams\":%d,\"connections\":%d,\"messages\":%llu,\"seconds\":%.3f,"
               "\"msgs_per_s\":%.0f,\"msgs_per_s_min\":%.0f,\"msgs_per_s_max\":%.0f,\"reps\":%d,"
               "\"client_cpu_us_per_msg\":%.3f",
               c, r->workers, r->streams, r->conns, (unsigned long long)count, r->seconds, mps,
               lo, hi, n, r->client_cpu_s / (double)count * 1e6);
        if (r->workers > 0) {
            printf(",\"proxy_cpu_us_per_msg\":%.3f,\"proxy_hwm_kb\":%llu,\"per_worker\":[", pcpu,
                   (unsigned long long)r->rep.hwm_kb);
            for (int i = 0; i < r->workers; i++)
                printf("%s%llu", i ? "," : "", (unsigned long long)r->rep.seen[i]);
            printf("]");
        }
        printf("}\n");
    } else {
        printf("  %-7s %7d %7d %5d %9.0f   (%.0f-%.0f)", c, r->workers, r->streams, r->conns, mps,
               lo, hi);
        if (r->workers > 0) {
            printf("  proxy %.2f µs CPU/msg, peak RSS %.1f MiB, per worker:", pcpu,
                   (double)r->rep.hwm_kb / 1024);
            for (int i = 0; i < r->workers; i++)
                printf(" %llu", (unsigned long long)r->rep.seen[i]);
        }
        printf("\n");
    }
    fflush(stdout);
}

/* The p50 and p99 of n samples (seconds; sorted here), microseconds. */
static void percentiles(double *v, size_t n, double *p50, double *p99)
{
    qsort(v, n, sizeof *v, by_double);
    *p50 = n > 0 ? v[n / 2] * 1e6 : 0;
    *p99 = n > 0 ? v[n * 99 / 100] * 1e6 : 0;
}

/* A latency case's percentiles, microseconds, one run's or (lat_print)
 * the median over the runs: the round trip, and each direction's one way. */
enum { LP_RT50, LP_RT99, LP_RQ50, LP_RQ99, LP_AN50, LP_AN99, LP_N };

/* One run's: its round trips and what lat_sh gathered, a request and an
 * answer for each (the caller checked). */
static void lat_percentiles(scale_row *r, double *p)
{
    percentiles(r->lat, r->nlat, &p[LP_RT50], &p[LP_RT99]);
    percentiles(lat_sh->req, r->nlat, &p[LP_RQ50], &p[LP_RQ99]);
    percentiles(lat_sh->ans, r->nlat, &p[LP_AN50], &p[LP_AN99]);
}

/* One latency line: each percentile the median over n runs (ps[run][LP_*]);
 * through the proxy, less direct's (d); direct's (d NULL) into out. */
static void lat_print(const bn_opts *o, const char *c, int workers, int busy_us, int streams,
                      size_t samples, double (*ps)[LP_N], int n, const double *d, double *out)
{
    double m[LP_N], a[LP_N], col[REPS]; /* the medians, and less direct's */
    for (int k = 0; k < LP_N; k++) {
        for (int i = 0; i < n; i++)
            col[i] = ps[i][k];
        qsort(col, (size_t)n, sizeof *col, by_double);
        m[k] = col[n / 2];
        if (d == NULL)
            out[k] = m[k];
        else
            a[k] = m[k] - d[k];
    }
    if (o->json) {
        printf("{\"bench\":\"grpc-scale\",\"kind\":\"latency\",\"case\":\"%s\",\"workers\":%d,"
               "\"busy_poll_us\":%d,\"streams\":%d,\"samples\":%zu,\"reps\":%d,"
               "\"p50_us\":%.1f,\"p99_us\":%.1f,\"request_p50_us\":%.1f,\"request_p99_us\":%.1f,"
               "\"answer_p50_us\":%.1f,\"answer_p99_us\":%.1f",
               c, workers, busy_us, streams, samples, n, m[LP_RT50], m[LP_RT99], m[LP_RQ50],
               m[LP_RQ99], m[LP_AN50], m[LP_AN99]);
        if (d != NULL)
            printf(",\"added_p50_us\":%.1f,\"added_p99_us\":%.1f,"
                   "\"request_added_p50_us\":%.1f,\"request_added_p99_us\":%.1f,"
                   "\"answer_added_p50_us\":%.1f,\"answer_added_p99_us\":%.1f",
                   a[LP_RT50], a[LP_RT99], a[LP_RQ50], a[LP_RQ99], a[LP_AN50], a[LP_AN99]);
        printf("}\n");
    } else {
        printf("  %-11s %3d %7d  round trip p50 %.1f µs, p99 %.1f µs", c, workers, streams,
               m[LP_RT50], m[LP_RT99]);
        if (d != NULL)
            printf("; added p50 %.1f µs, p99 %.1f µs", a[LP_RT50], a[LP_RT99]);
        if (busy_us > 0)
            printf("; busy polling %d µs", busy_us);
        printf("  (%zu samples, median of %d)\n", samples, n);
        printf("  %-11s %3s %7s  one way: request p50 %.1f µs, p99 %.1f µs; answer p50 %.1f µs, "
               "p99 %.1f µs", "", "", "", m[LP_RQ50], m[LP_RQ99], m[LP_AN50], m[LP_AN99]);
        if (d != NULL)
            printf("; added per message: request p50 %.1f µs, p99 %.1f µs; answer p50 %.1f µs, "
                   "p99 %.1f µs",
                   a[LP_RQ50], a[LP_RQ99], a[LP_AN50], a[LP_AN99]);
        printf("\n");
    }
    fflush(stdout);
}

int bench_grpc_scale(const bn_opts *o)
{
    frame_pool pool;
    po_policy pol;
    if (!peers_setup("grpc-scale", &pool, &pol))
        return 1;
    rd_reader *rd = rd_new();
    if (rd == NULL) {
        fprintf(stderr, "triage-bench grpc-scale: cannot set up the pool or the rules\n");
        free(pool.buf);
        po_free(&pol);
        return 1;
    }
    /* the messages the rules keep, for the echo calls (all answered) */
    pool.nkept = 0;
    for (size_t i = 0; i < POOL; i++) {
        tr_message m = {pool.buf + pool.off[i] + 5, pool.len[i] - 5};
        int kind;
        if (rd_message(rd, VF_OFF, m) && po_judge(&pol, &rd->ru, &kind))
            pool.kept[pool.nkept++] = i;
    }
    rd_free(rd);
    /* the cores: the peers on the last, worker i on the i-th (modulo) */
    cpu_set_t all, one;
    CPU_ZERO(&all);
    sched_getaffinity(0, sizeof all, &all);
    int cpus[SCALE_MAX_WORKERS], ncpu = 0, listed[CPU_SETSIZE];
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all))
            listed[ncpu++] = c;
    int maxw = ncpu < SCALE_MAX_WORKERS ? ncpu : SCALE_MAX_WORKERS;
    for (int i = 0; i < SCALE_MAX_WORKERS; i++)
        cpus[i] = listed[i % ncpu];
    CPU_ZERO(&one);
    CPU_SET(listed[ncpu - 1], &one);
    sched_setaffinity(0, sizeof one, &one); /* the client, and the server forked next */

    /* the one-way times: shared with the server forked next */
    void *sh = mmap(NULL, sizeof *lat_sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh != MAP_FAILED)
        lat_sh = sh;
    uint16_t sport;
    pid_t server = lat_sh != NULL ? server_start(&pool, &sport) : -1;
    int rc = 0;
    if (server < 0) {
        rc = 1;
        goto out;
    }
    uint64_t count = o->quick ? 3000 : 200000;
    int reps = o->quick ? 1 : REPS;
    static const int streams[] = {1, 8, 64, 256};
    if (!o->json)
        printf("grpc-scale: %llu messages per row through the proxy (optics, responses judged), "
               "workers 1..%d pinned to cores %d.., the server and load generator on core %d; "
               "median of %d\n  %-7s %7s %7s %5s %9s\n",
               (unsigned long long)count, maxw, listed[0], listed[ncpu - 1], reps, "case",
               "workers", "streams", "conns", "msgs/s");
    /* TRIAGE_GRPC_SCALE=latency: the latency rows alone; =throughput: those alone */
    const char *only = getenv("TRIAGE_GRPC_SCALE");
    bool lat_only = only != NULL && strcmp(only, "latency") == 0;
    bool thr_only = only != NULL && strcmp(only, "throughput") == 0;
    for (size_t si = 0; si < sizeof streams / sizeof streams[0] && rc == 0 && !lat_only; si++) {
        scale_row r[SCALE_MAX_WORKERS + 1][REPS];
        int conns = streams[si] < SCALE_CONNS ? streams[si] : SCALE_CONNS;
        for (int rep = 0; rep < reps && rc == 0; rep++)
            for (int w = 0; w <= maxw && rc == 0; w++) {
                r[w][rep] = (scale_row){.workers = w, .streams = streams[si], .conns = conns};
                if (!scale_run(&r[w][rep], count, 0, sport, &pol, cpus)) {
                    fprintf(stderr, "triage-bench grpc-scale: %d workers, %d streams failed\n",
                            w, streams[si]);
                    rc = 1;
                }
            }
        for (int w = 0; w <= maxw && rc == 0; w++)
            scale_print(o, r[w], reps, count);
    }
    /* latency: 1 and 8 calls in ping-pong on one connection, direct and
     * through one worker, none of them pinned: with the peers sharing one
     * core, a wake-up may wait for the scheduler's tick (4 ms) */
    sched_setaffinity(server, sizeof all, &all);
    sched_setaffinity(0, sizeof all, &all);
    for (int i = 0; i < SCALE_MAX_WORKERS; i++)
        cpus[i] = -1;
    size_t rounds = o->quick ? 2000 : 40000;
    static const int lat_streams[] = {1, 8};
    /* direct, through the proxy, and through the proxy busy polling
     * (proxy --busy-poll), taking turns */
    enum { LAT_CASES = 3, LAT_BUSY_US = 100 };
    static const char *const lat_case[LAT_CASES] = {"direct", "optics", "optics-busy"};
    for (size_t li = 0; li < 2 && rc == 0 && !thr_only; li++) {
        double ps[LAT_CASES][REPS][LP_N];
        size_t samples = 0;
        for (int rep = 0; rep < reps && rc == 0; rep++)
            for (int c = 0; c < LAT_CASES && rc == 0; c++) {
                scale_row r = {.workers = c > 0, .busy_us = c == 2 ? LAT_BUSY_US : 0,
                               .streams = lat_streams[li], .conns = 1};
                r.lat = malloc(rounds * sizeof *r.lat);
                if (r.lat == NULL || !scale_run(&r, rounds, rounds, sport, &pol, cpus) ||
                    r.nlat == 0) {
                    fprintf(stderr, "triage-bench grpc-scale: latency (%s, %d streams) failed\n",
                            lat_case[c], r.streams);
                    rc = 1;
                } else if (r.nlat > LAT_CAP || atomic_load(&lat_sh->nreq) != r.nlat ||
                           atomic_load(&lat_sh->nans) != r.nlat) {
                    /* each round trip is one request and one answer, each timed */
                    fprintf(stderr,
                            "triage-bench grpc-scale: latency (%s, %d streams): %zu round trips "
                            "but %zu requests and %zu answers timed one way\n",
                            lat_case[c], r.streams, r.nlat, atomic_load(&lat_sh->nreq),
                            atomic_load(&lat_sh->nans));
                    rc = 1;
                } else {
                    lat_percentiles(&r, ps[c][rep]);
                    samples = r.nlat;
                }
                free(r.lat);
            }
        double d[LP_N]; /* direct's, the first case */
        for (int c = 0; c < LAT_CASES && rc == 0; c++)
            lat_print(o, lat_case[c], c > 0, c == 2 ? LAT_BUSY_US : 0, lat_streams[li], samples,
                      ps[c], reps, c > 0 ? d : NULL, d);
    }
out:
    stop(server);
    if (lat_sh != NULL)
        munmap(lat_sh, sizeof *lat_sh);
    lat_sh = NULL;
    sched_setaffinity(0, sizeof all, &all);
    free(pool.buf);
    po_free(&pol);
    return rc;
}

/* ---- grpc-haproxy: calls through HAProxy to several proxy processes
 *
 * The same server and load generator; P proxy processes (one worker each,
 * responses judged) behind HAProxy, run in the foreground (haproxy -db)
 * with deploy/haproxy.cfg (TRIAGE_HAPROXY_CFG: another file), its bind
 * port and server lines replaced by free loopback ports and the proxies;
 * P = 0: HAProxy straight to the server. Per row: each proxy's calls and
 * messages, and the total rate. Without haproxy on the PATH (or in
 * /usr/sbin), it says so and runs nothing. */

static bool find_haproxy(char *path, size_t n)
{
    const char *env = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/usr/local/sbin", env != NULL ? env : "");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d != NULL;
         d = strtok_r(NULL, ":", &save)) {
        snprintf(path, n, "%s/haproxy", d);
        if (access(path, X_OK) == 0)
            return true;
    }
    return false;
}

/* deploy/haproxy.cfg with port on its bind line and ports[0..np-1] as its
 * servers (none: the server at sport) into a temporary file; its path in
 * out, or false. */
static bool haproxy_config(uint16_t port, const uint16_t *ports, int np, uint16_t sport,
                           char *out, size_t n)
{
    const char *src = getenv("TRIAGE_HAPROXY_CFG");
    if (src == NULL)
        src = "deploy/haproxy.cfg";
    FILE *in = fopen(src, "r");
    if (in == NULL) {
        fprintf(stderr, "triage-bench grpc-haproxy: cannot read %s (run from the repository, "
                        "or set TRIAGE_HAPROXY_CFG)\n", src);
        return false;
    }
    snprintf(out, n, "/tmp/triage-haproxy-XXXXXX");
    int fd = mkstemp(out);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        fclose(in);
        return false;
    }
    char line[1024];
    while (fgets(line, sizeof line, in) != NULL) {
        if (strncmp(line, "    server ", 11) == 0)
            continue;
        if (strncmp(line, "    bind ", 9) == 0) {
            const char *proto = strstr(line, " proto ");
            fprintf(f, "    bind 127.0.0.1:%u%s", (unsigned)port, proto != NULL ? proto : "\n");
            continue;
        }
        fputs(line, f);
        if (strncmp(line, "    # servers", 13) == 0) {
            for (int i = 0; i < np; i++)
                fprintf(f, "    server proxy%d 127.0.0.1:%u proto h2\n", i + 1, (unsigned)ports[i]);
            if (np == 0)
                fprintf(f, "    server direct 127.0.0.1:%u proto h2\n", (unsigned)sport);
        }
    }
    fclose(in);
    return fclose(f) == 0;
}

static int free_port(uint16_t *port)
{
    int fd = listen_any(port);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static bool wait_port(uint16_t port, pid_t pid)
{
    char addr[32], err[NET_ERR_LEN];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)port);
    for (int i = 0; i < 500; i++) {
        int fd = net_connect(addr, err, sizeof err);
        if (fd >= 0) {
            close(fd);
            return true;
        }
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return false;
        usleep(20000);
    }
    return false;
}

#define HX_MAX_PROXIES 4

static bool haproxy_row(const bn_opts *o, const char *haproxy, int np, int streams, int conns,
                        uint64_t count, uint16_t sport, const po_policy *pol)
{
    pid_t px[HX_MAX_PROXIES], hx = -1;
    int pfd[HX_MAX_PROXIES];
    uint16_t ports[HX_MAX_PROXIES], hport;
    scale_report rep[HX_MAX_PROXIES];
    int cpus[1] = {-1}, started = 0;
    bool ok = true;
    char cfg[64] = "";
    memset(rep, 0, sizeof rep);
    for (int i = 0; i < np && ok; i++) {
        int fd, p[2];
        char err[NET_ERR_LEN];
        if (hp_listen("127.0.0.1:0", 1, &fd, &ports[i], err, sizeof err) != 0 || pipe(p) != 0) {
            ok = false;
            break;
        }
        fflush(stdout);
        px[i] = net_fork_tied();
        if (px[i] == 0) {
            close(p[0]);
            scale_child(&fd, 1, cpus, 0, sport, pol, p[1]);
        }
        close(fd);
        close(p[1]);
        pfd[i] = p[0];
        ok = px[i] > 0;
        started += ok;
    }
    ok = ok && free_port(&hport) == 0 && haproxy_config(hport, ports, np, sport, cfg, sizeof cfg);
    if (ok) {
        fflush(stdout);
        hx = net_fork_tied();
        if (hx == 0) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0)
                dup2(null, 1);
            execl(haproxy, "haproxy", "-db", "-q", "-f", cfg, (char *)NULL);
            _exit(127);
        }
        ok = hx > 0 && wait_port(hport, hx);
        if (!ok)
            fprintf(stderr, "triage-bench grpc-haproxy: haproxy did not start (%s)\n", cfg);
    }
    uint64_t k, b, msgs = 0;
    double t = -1;
    if (ok) {
        uint64_t warm = count / 10 > (uint64_t)streams ? count / 10 : (uint64_t)streams;
        if (load_n(hport, streams, conns, warm, 0, NULL, 0, NULL, &k, &b) >= 0)
            t = load_n(hport, streams, conns, count, 7, NULL, 0, NULL, &msgs, &b);
        ok = t >= 0;
    }
    stop(hx);
    for (int i = 0; i < started; i++) {
        ok = take_report(px[i], pfd[i], &rep[i], sizeof rep[i]) && rep[i].ok && ok;
    }
    if (cfg[0] != '\0')
        unlink(cfg);
    if (!ok)
        return false;
    double mps = (double)count / t;
    if (o->json) {
        printf("{\"bench\":\"grpc-haproxy\",\"proxies\":%d,\"streams\":%d,\"connections\":%d,"
               "\"messages\":%llu,\"seconds\":%.3f,\"msgs_per_s\":%.0f,\"per_proxy\":[",
               np, streams, conns, (unsigned long long)count, t, mps);
        for (int i = 0; i < np; i++)
            printf("%s{\"calls\":%llu,\"messages\":%llu}", i ? "," : "",
                   (unsigned long long)rep[i].calls[0], (unsigned long long)rep[i].seen[0]);
        printf("]}\n");
    } else {
        printf("  %d proxies: %9.0f msgs/s", np, mps);
        if (np == 0)
            printf("  (HAProxy straight to the server)");
        for (int i = 0; i < np; i++)
            printf("%s proxy %d: %llu calls, %llu messages", i ? ";" : "  ", i + 1,
                   (unsigned long long)rep[i].calls[0], (unsigned long long)rep[i].seen[0]);
        printf("\n");
    }
    fflush(stdout);
    return true;
}

int bench_grpc_haproxy(const bn_opts *o)
{
    char haproxy[512];
    if (!find_haproxy(haproxy, sizeof haproxy)) {
        fprintf(stderr, "triage-bench grpc-haproxy: no haproxy on this machine (scripts/deps.sh "
                        "installs it): nothing run\n");
        return 0;
    }
    frame_pool pool;
    po_policy pol;
    if (!peers_setup("grpc-haproxy", &pool, &pol))
        return 1;
    uint16_t sport;
    pid_t server = server_start(&pool, &sport);
    int rc = server < 0;
    uint64_t count = o->quick ? 3000 : 200000;
    const int streams = 64, conns = 8;
    if (!o->json && rc == 0)
        printf("grpc-haproxy: %llu messages through HAProxy (%s), %d calls over %d connections, "
               "to 0-3 proxy processes (one worker each, responses judged); each proxy's calls "
               "and messages count the warm-up's too\n",
               (unsigned long long)count, haproxy, streams, conns);
    for (int np = 0; np <= 3 && rc == 0; np++)
        if (!haproxy_row(o, haproxy, np, streams, conns, count, sport, &pol)) {
            fprintf(stderr, "triage-bench grpc-haproxy: %d proxies failed\n", np);
            rc = 1;
        }
    stop(server);
    free(pool.buf);
    po_free(&pol);
    return rc;
}
