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
 * (counters.h), the calls' own allocations included. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "bench.h"
#include "h2proxy.h"
#include "issues.h"
#include "net.h"
#include "policy.h"
#include "readers.h"
#include "skip.h"
#include "triage.h"

#define POOL 256
#define REPS 3 /* each row's reps (1 with --quick); the median is reported */
#define PATH "/triage.Bench/Stream"

typedef struct {
    uint8_t *buf;
    size_t off[POOL], len[POOL];
    size_t bytes;
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

/* ---- the server */

typedef struct {
    const frame_pool *pool;
    uint64_t count, sent, next;
    size_t at; /* bytes of the current message sent */
} srv_stream;

static ssize_t srv_read(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
                        uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)ud;
    srv_stream *st = src->ptr;
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
    }
    return 0;
}

static int srv_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)ud;
    if (!(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    srv_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (st == NULL)
        return 0;
    nghttp2_nv h[] = {
        {(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
        {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0},
    };
    nghttp2_data_provider p = {.source.ptr = st, .read_callback = srv_read};
    nghttp2_submit_response(s, f->hd.stream_id, h, 2, &p);
    return 0;
}

static int srv_close(nghttp2_session *s, int32_t sid, uint32_t code, void *ud)
{
    (void)code;
    (void)ud;
    free(nghttp2_session_get_stream_user_data(s, sid));
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

#define SRV_CONNS 16

/* The server's loop, in the child: until SIGTERM. */
static void serve(int lfd, const frame_pool *pool)
{
    nghttp2_session_callbacks *cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, srv_begin);
    nghttp2_session_callbacks_set_on_header_callback(cb, srv_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, srv_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, srv_close);
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
    uint32_t need;  /* body bytes left of the current message */
    uint8_t hdr[5];
    uint8_t have;   /* prefix bytes of it received */
    bool status_ok, done;
} cl_stream;

typedef struct {
    cl_stream *st;
    int n, done, failed;
    uint64_t msgs, bytes;
} cl_run;

static ssize_t cl_body(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
                       uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)s;
    (void)sid;
    (void)src;
    (void)ud;
    (void)length;
    memset(buf, 0, 5); /* one empty request message */
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
    while (n > 0) {
        if (st->have < 5) {
            st->hdr[st->have++] = *d++;
            n--;
            if (st->have == 5) {
                st->need = (uint32_t)st->hdr[1] << 24 | (uint32_t)st->hdr[2] << 16 |
                           (uint32_t)st->hdr[3] << 8 | st->hdr[4];
                if (st->need == 0) {
                    st->msgs++;
                    r->msgs++;
                    st->have = 0;
                }
            }
            continue;
        }
        size_t t = n < st->need ? n : st->need;
        st->need -= (uint32_t)t;
        d += t;
        n -= t;
        if (st->need == 0) {
            st->msgs++;
            r->msgs++;
            st->have = 0;
        }
    }
    return 0;
}

static int cl_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl,
                     const uint8_t *val, size_t vl, uint8_t flags, void *ud)
{
    (void)flags;
    (void)ud;
    cl_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (st != NULL && nl == 11 && memcmp(name, "grpc-status", 11) == 0)
        st->status_ok = vl == 1 && val[0] == '0';
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
    if (code != 0 || !st->status_ok)
        r->failed++;
    return 0;
}

/* S calls of count/S messages each over one new connection to port;
 * the seconds it took, or -1. */
static double load(uint16_t port, int streams, uint64_t count, uint64_t start, uint64_t *kept,
                   uint64_t *bytes)
{
    char err[NET_ERR_LEN], addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)port);
    h2io c = {.fd = net_connect(addr, err, sizeof err)};
    if (c.fd < 0) {
        fprintf(stderr, "triage-bench grpc: %s\n", err);
        return -1;
    }
    if (nonblock_nodelay(c.fd) != 0) {
        close(c.fd);
        return -1;
    }
    cl_run r = {.n = streams};
    r.st = calloc((size_t)streams, sizeof *r.st);
    nghttp2_session_callbacks *cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, cl_chunk);
    nghttp2_session_callbacks_set_on_header_callback(cb, cl_header);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, cl_close);
    nghttp2_session_client_new(&c.s, cb, &r);
    nghttp2_session_callbacks_del(cb);
    h2_settings(c.s);
    double t0 = bn_now();
    for (int i = 0; i < streams; i++) {
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
        };
        nghttp2_data_provider p = {.read_callback = cl_body};
        nghttp2_submit_request(c.s, NULL, h, 8, &p, &r.st[i]);
    }
    while (r.done < streams && !c.dead) {
        io_send(&c);
        struct pollfd p = {.fd = c.fd, .events = io_events(&c)};
        if (poll(&p, 1, 10000) <= 0) {
            fprintf(stderr, "triage-bench grpc: no progress for 10 s\n");
            break;
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR))
            io_recv(&c);
    }
    double t = bn_now() - t0;
    bool ok = r.done == streams && r.failed == 0;
    if (!ok)
        fprintf(stderr, "triage-bench grpc: %d of %d calls ended, %d failed\n", r.done, streams,
                r.failed);
    *kept = r.msgs;
    *bytes = r.bytes;
    free(r.st);
    io_free(&c);
    return ok ? t : -1;
}

/* ---- the proxy, in a child process */

typedef enum { CASE_DIRECT, CASE_RELAY, CASE_OPTICS, CASE_DECODE } bench_case;
static const char *const case_names[] = {"direct", "relay", "optics", "decode"};

typedef struct {
    bench_case c;
    po_policy policy;
    rd_reader *rd;
    hp_engine *e;
    uint64_t seen, warm;
    hp_stats at;     /* the engine's counters when the warm-up ended */
    ct_allocs ct_at; /* and the process's mallocs */
} judge_ctx;

static int judge(void *ctx, const hp_message *m, char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    judge_ctx *j = ctx;
    if (++j->seen == j->warm) {
        j->at = *hp_stats_of(j->e);
        j->ct_at = ct_now();
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
    hp_stats at, end;
    ct_allocs ct_at, ct_end;
    uint64_t seen;
    int ok;
} proxy_report;

static void proxy_child(int lfd, uint16_t server_port, bench_case c, const po_policy *pol,
                        uint64_t warm, int out)
{
    proxy_report rep;
    memset(&rep, 0, sizeof rep);
    judge_ctx j = {.c = c, .policy = *pol, .warm = warm};
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
                     .judge = judge, .judge_ctx = &j, .stop_fd = sfd, .grace_ms = 2000};
    j.e = hp_new(&cfg, err, sizeof err);
    if (j.e == NULL) {
        fprintf(stderr, "triage-bench grpc: proxy: %s\n", err);
        goto out;
    }
    if (hp_run(j.e, err, sizeof err) != 0) {
        fprintf(stderr, "triage-bench grpc: proxy: %s\n", err);
        goto out;
    }
    rep.at = j.at;
    rep.end = *hp_stats_of(j.e);
    rep.ct_at = j.ct_at;
    rep.ct_end = ct_now();
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
        fprintf(stderr, "triage-bench grpc: %s\n", err);
    return fd;
}

static void stop(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 500; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
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
        pid = fork();
        if (pid == 0) {
            close(pfd[0]);
            proxy_child(lfd, server_port, c, pol, warm, pfd[1]);
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
        stop(pid);
        ssize_t r = read(pfd[0], &out->rep, sizeof out->rep);
        close(pfd[0]);
        out->has_proxy = r == (ssize_t)sizeof out->rep && out->rep.ok;
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
    double copied = 0, allocs = 0, h2 = 0, mallocs = 0;
    if (r->has_proxy) {
        const proxy_report *p = &r->rep;
        copied = (double)(p->end.bytes_copied - p->at.bytes_copied) / (double)count;
        allocs = (double)(p->end.allocations - p->at.allocations) / (double)count;
        h2 = (double)(p->end.h2_allocations - p->at.h2_allocations) / (double)count;
        mallocs = (double)(p->ct_end.allocs - p->ct_at.allocs) / (double)count;
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
                   "\"messages_copied\":%llu,\"mallocs\":%llu",
                   copied, allocs + h2, allocs, h2, mallocs, (unsigned long long)p->end.peak_held,
                   (unsigned long long)(p->end.bytes_copied - p->at.bytes_copied),
                   (unsigned long long)(p->end.messages_copied - p->at.messages_copied),
                   (unsigned long long)(p->ct_end.allocs - p->ct_at.allocs));
        }
        printf("}\n");
    } else if (r->has_proxy) {
        printf("  %-7s %7d %9.0f %8.1f %7llu %12.2f %11.4f %11.4f   (%.0f-%.0f msgs/s)\n",
               case_names[c], streams, mps, mbps, (unsigned long long)r->kept, copied,
               allocs + h2, mallocs, lo, hi);
    } else {
        printf("  %-7s %7d %9.0f %8.1f %7llu %12s %11s %11s   (%.0f-%.0f msgs/s)\n",
               case_names[c], streams, mps, mbps, (unsigned long long)r->kept, "-", "-", "-", lo,
               hi);
    }
    fflush(stdout);
}

int bench_grpc(const bn_opts *o)
{
    sk_init();
    frame_pool pool;
    rd_choice none = {NULL, NULL, NULL};
    po_policy pol;
    char err[1024];
    if (!pool_make(&pool) || !rd_policy(&none, &pol, err, sizeof err)) {
        fprintf(stderr, "triage-bench grpc: cannot set up the pool or the rules\n");
        free(pool.buf);
        return 1;
    }
    double frame_avg = (double)pool.bytes / POOL;
    uint16_t sport;
    int slfd = listen_any(&sport);
    if (slfd < 0) {
        free(pool.buf);
        po_free(&pol);
        return 1;
    }
    fflush(stdout);
    pid_t server = fork();
    if (server == 0) {
        signal(SIGTERM, SIG_DFL);
        serve(slfd, &pool);
        _exit(0);
    }
    close(slfd);
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
               "proxy (responses judged with the default rules), one connection; median of %d\n"
               "  %-7s %7s %9s %8s %7s %12s %11s %11s\n",
               (unsigned long long)count, frame_avg, reps, "case", "streams", "msgs/s", "MB/s",
               "kept", "copied B/msg", "allocs/msg", "mallocs/msg");
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
