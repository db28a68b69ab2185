/* test_net.c: the TCP helpers on the loopback interface: addresses, listen /
 * connect / accept, reads into the ring, gather writes through partial
 * writes and signals, a peer that goes away, and a relay of kept frames. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "frames.h"
#include "net.h"
#include "ringbuf.h"
#include "support/suite.h"

static uint8_t pattern(size_t k) { return (uint8_t)((k * 2654435761u) >> 11); }

/* A connected pair over loopback TCP: *c the connecting end, *a the
 * accepted one. */
static void tcp_pair(int *c, int *a)
{
    char err[NET_ERR_LEN] = "";
    uint16_t port = 0;
    int l = net_listen("127.0.0.1:0", 4, &port, err, sizeof err);
    ck_assert_msg(l >= 0, "%s", err);
    ck_assert_uint_gt(port, 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)port);
    *c = net_connect(addr, err, sizeof err);
    ck_assert_msg(*c >= 0, "%s", err);
    *a = net_accept(l, err, sizeof err);
    ck_assert_msg(*a >= 0, "%s", err);
    ck_assert_msg(net_nodelay(*c, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(net_nodelay(*a, err, sizeof err) == 0, "%s", err);
    close(l);
}

/* --- addresses -------------------------------------------------------- */

START_TEST(parses_addresses)
{
    net_addr a;
    char err[NET_ERR_LEN];
    ck_assert_int_eq(net_parse_addr("127.0.0.1:8080", &a, err, sizeof err), 0);
    ck_assert_str_eq(a.host, "127.0.0.1");
    ck_assert_uint_eq(a.port, 8080);
    ck_assert_int_eq(net_parse_addr("[::1]:0", &a, err, sizeof err), 0);
    ck_assert_str_eq(a.host, "::1");
    ck_assert_uint_eq(a.port, 0);
    ck_assert_int_eq(net_parse_addr(":65535", &a, err, sizeof err), 0);
    ck_assert_str_eq(a.host, "");
    ck_assert_uint_eq(a.port, 65535);
    ck_assert_int_eq(net_parse_addr("localhost:1", &a, err, sizeof err), 0);
    ck_assert_str_eq(a.host, "localhost");

    const char *bad[] = {"localhost", "h:", "h:65536", "h:8x", "h:-1",
                         "::1:80", "h: 80", "h:99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        ck_assert_msg(net_parse_addr(bad[i], &a, err, sizeof err) == -1, "%s",
                      bad[i]);
        ck_assert_msg(strstr(err, bad[i]) != NULL, "'%s' not named in '%s'",
                      bad[i], err);
    }
    /* A short error buffer is truncated, not overrun. */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    ck_assert_int_eq(net_parse_addr("nope", &a, tiny, 5), -1);
    ck_assert_uint_eq(strlen(tiny), 4);
    ck_assert_int_eq(tiny[5], 'x');
    ck_assert_int_eq(net_parse_addr("nope", &a, NULL, 0), -1);
}
END_TEST

/* --- listen, connect, write, read back -------------------------------- */

START_TEST(write_and_read_back)
{
    int c, a;
    tcp_pair(&c, &a);
    char err[NET_ERR_LEN] = "";
    uint8_t m1[] = "hello, ", m2[] = "", m3[] = "world";
    struct iovec iov[3] = {{m1, 7}, {m2, 0}, {m3, 5}};
    ck_assert_msg(net_writev_all(c, iov, 3, err, sizeof err) == 0, "%s", err);
    close(c);

    rb_ring rb;
    ck_assert_msg(rb_init(&rb, 0, RB_AUTO, err, sizeof err) == 0, "%s", err);
    ssize_t r;
    while ((r = net_read_ring(a, &rb, err, sizeof err)) > 0)
        ;
    ck_assert_msg(r == 0, "%s", err); /* end of input */
    size_t n;
    const uint8_t *d = rb_data(&rb, &n);
    ck_assert_uint_eq(n, 12);
    ck_assert(memcmp(d, "hello, world", 12) == 0);
    rb_destroy(&rb);
    close(a);
}
END_TEST

START_TEST(listen_reports_the_address)
{
    char err[NET_ERR_LEN] = "";
    uint16_t port = 0;
    int l = net_listen("127.0.0.1:0", 1, &port, err, sizeof err);
    ck_assert_int_ge(l, 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)port);
    /* The same port again without SO_REUSEPORT: in use. */
    int l2 = net_listen(addr, 1, NULL, err, sizeof err);
    ck_assert_int_eq(l2, -1);
    char want[128];
    snprintf(want, sizeof want, "cannot listen on %s: %s", addr,
             strerror(EADDRINUSE));
    ck_assert_str_eq(err, want);
    close(l);
}
END_TEST

START_TEST(connect_to_a_closed_port_names_it)
{
    char err[NET_ERR_LEN] = "";
    uint16_t port = 0;
    int l = net_listen("127.0.0.1:0", 1, &port, err, sizeof err);
    ck_assert_int_ge(l, 0);
    close(l); /* nothing listens there now */
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)port);
    ck_assert_int_eq(net_connect(addr, err, sizeof err), -1);
    char want[128];
    snprintf(want, sizeof want, "cannot connect to %s: %s", addr,
             strerror(ECONNREFUSED));
    ck_assert_str_eq(err, want);

    ck_assert_int_eq(net_connect("127.0.0.1", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "'127.0.0.1'"));
    ck_assert_int_eq(net_connect("no-such-host.invalid:80", err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(
        strstr(err, "cannot connect to no-such-host.invalid:80: "));
}
END_TEST

START_TEST(read_states)
{
    int c, a;
    tcp_pair(&c, &a);
    char err[NET_ERR_LEN] = "";
    rb_ring rb;
    ck_assert_int_eq(rb_init(&rb, 1, RB_MIRROR, err, sizeof err), 0);
    /* Non-blocking with nothing to read. */
    fcntl(a, F_SETFL, fcntl(a, F_GETFL) | O_NONBLOCK);
    ck_assert_int_eq(net_read_ring(a, &rb, err, sizeof err), NET_AGAIN);
    /* A full ring is the caller's mistake, reported as such. */
    uint8_t big[8192];
    memset(big, 7, sizeof big);
    struct iovec iov = {big, sizeof big};
    ck_assert_int_eq(net_writev_all(c, &iov, 1, err, sizeof err), 0);
    size_t got = 0;
    while (got < rb.cap) {
        ssize_t r = net_read_ring(a, &rb, err, sizeof err);
        REQUIRE(r != -1);
        if (r > 0)
            got += (size_t)r;
    }
    ck_assert_int_eq(net_read_ring(a, &rb, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "read buffer full"));
    /* A bad descriptor. */
    rb_consume(&rb, rb.len);
    ck_assert_int_eq(net_read_ring(-1, &rb, err, sizeof err), -1);
    char want[128];
    snprintf(want, sizeof want, "read: %s", strerror(EBADF));
    ck_assert_str_eq(err, want);
    rb_destroy(&rb);
    close(a);
    close(c);
}
END_TEST

/* --- many bytes, many iovecs, with signals interrupting ----------------- */

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

typedef struct {
    int fd;
    size_t want;
    size_t got;
    size_t reads;
    size_t biggest;
    int bad; /* first mismatching offset + 1, or 0 */
    char err[NET_ERR_LEN];
} reader;

static void *read_all(void *arg)
{
    reader *r = arg;
    rb_ring rb;
    if (rb_init(&rb, 0, RB_AUTO, r->err, sizeof r->err) != 0)
        return NULL;
    for (;;) {
        ssize_t n = net_read_ring(r->fd, &rb, r->err, sizeof r->err);
        if (n <= 0)
            break;
        r->reads++;
        if ((size_t)n > r->biggest)
            r->biggest = (size_t)n;
        size_t len;
        const uint8_t *d = rb_data(&rb, &len);
        for (size_t i = 0; i < len && !r->bad; i++)
            if (d[i] != pattern(r->got + i))
                r->bad = (int)(r->got + i) + 1;
        r->got += len;
        rb_consume(&rb, len);
    }
    rb_destroy(&rb);
    return NULL;
}

START_TEST(writev_all_survives_partial_writes_and_signals)
{
    int c, a;
    tcp_pair(&c, &a);
    int small = 4096;
    setsockopt(c, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);

    /* 3000 iovecs (more than IOV_MAX) of odd sizes over one buffer. */
    enum { NIOV = 3000 };
    static struct iovec iov[NIOV];
    size_t total = 0;
    for (int i = 0; i < NIOV; i++)
        total += 1 + (size_t)(i * 7919) % 2000;
    uint8_t *buf = malloc(total);
    for (size_t k = 0; k < total; k++)
        buf[k] = pattern(k);
    size_t at = 0;
    for (int i = 0; i < NIOV; i++) {
        size_t n = 1 + (size_t)(i * 7919) % 2000;
        iov[i].iov_base = buf + at;
        iov[i].iov_len = n;
        at += n;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = 0; /* no SA_RESTART: calls fail with EINTR or go partial */
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
    struct itimerval it = {{0, 300}, {0, 300}};
    ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);

    reader r = {.fd = a, .want = total};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, read_all, &r), 0);
    char err[NET_ERR_LEN] = "";
    int rc = net_writev_all(c, iov, NIOV, err, sizeof err);
    close(c);
    pthread_join(t, NULL);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);

    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_msg(r.got == total, "got %zu of %zu: %s", r.got, total, r.err);
    ck_assert_msg(r.bad == 0, "wrong byte at %d", r.bad - 1);
    ck_assert_uint_le(r.biggest, NET_READ_MAX);
    ck_assert_uint_gt(alarms, 0);
    free(buf);
    close(a);
}
END_TEST

START_TEST(peer_gone_is_an_error_not_a_signal)
{
    /* SIGPIPE stays at its default, which would kill this process: the
     * helper must not raise it. */
    signal(SIGPIPE, SIG_DFL);
    int c, a;
    tcp_pair(&c, &a);
    close(a);
    static uint8_t chunk[65536];
    char err[NET_ERR_LEN] = "";
    int rc = 0;
    for (int i = 0; i < 1000 && rc == 0; i++) {
        struct iovec iov = {chunk, sizeof chunk};
        rc = net_writev_all(c, &iov, 1, err, sizeof err);
    }
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err, "peer closed the connection") != NULL, "%s", err);
    close(c);
}
END_TEST

START_TEST(writev_all_on_a_pipe)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    char err[NET_ERR_LEN] = "";
    uint8_t m[] = "abcdef";
    struct iovec iov[2] = {{m, 3}, {m + 3, 3}};
    ck_assert_msg(net_writev_all(p[1], iov, 2, err, sizeof err) == 0, "%s",
                  err);
    char got[7] = "";
    ck_assert_int_eq(read(p[0], got, 6), 6);
    ck_assert_str_eq(got, "abcdef");
    close(p[0]);
    close(p[1]);
}
END_TEST

/* --- a relay: the filter's path in miniature ---------------------------- */

typedef struct {
    int fd;
    const uint8_t *buf;
    size_t len;
    char err[NET_ERR_LEN];
    int rc;
} writer;

/* Sends the stream in pieces of varying size. */
static void *write_stream(void *arg)
{
    writer *w = arg;
    size_t at = 0, k = 1;
    while (at < w->len && w->rc == 0) {
        size_t n = k < w->len - at ? k : w->len - at;
        struct iovec iov = {(void *)(uintptr_t)(w->buf + at), n};
        w->rc = net_writev_all(w->fd, &iov, 1, w->err, sizeof w->err);
        at += n;
        k = k * 3 % 100003 + 1;
    }
    shutdown(w->fd, SHUT_WR);
    return NULL;
}

typedef struct {
    int fd;
    uint8_t *buf;
    size_t cap, len;
} sink;

static void *drain(void *arg)
{
    sink *s = arg;
    for (;;) {
        ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len);
        if (n <= 0)
            break;
        s->len += (size_t)n;
    }
    return NULL;
}

static void relay(rb_mode mode)
{
    /* 300 frames of 0..70000 bytes; every other one is kept. */
    enum { N = 300 };
    size_t total = 0, kept_total = 0;
    size_t body[N];
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t r = (size_t)(x >> 33);
        body[i] = i % 5 == 0 ? r % 70001 : r % 300;
        total += FR_HEADER_LEN + body[i];
        if (i % 2 == 0)
            kept_total += FR_HEADER_LEN + body[i];
    }
    uint8_t *stream = malloc(total), *want = malloc(kept_total);
    size_t at = 0, wat = 0;
    for (int i = 0; i < N; i++) {
        fr_put_header(stream + at, false, (uint32_t)body[i]);
        for (size_t j = 0; j < body[i]; j++)
            stream[at + FR_HEADER_LEN + j] = pattern(at + j);
        if (i % 2 == 0) {
            memcpy(want + wat, stream + at, FR_HEADER_LEN + body[i]);
            wat += FR_HEADER_LEN + body[i];
        }
        at += FR_HEADER_LEN + body[i];
    }

    int up_c, up_a;
    tcp_pair(&up_c, &up_a);
    int down_c, down_a;
    tcp_pair(&down_c, &down_a);
    writer w = {.fd = up_c, .buf = stream, .len = total};
    sink s = {.fd = down_a, .cap = kept_total + 1};
    s.buf = malloc(s.cap);
    pthread_t tw, ts;
    ck_assert_int_eq(pthread_create(&tw, NULL, write_stream, &w), 0);
    ck_assert_int_eq(pthread_create(&ts, NULL, drain, &s), 0);

    char err[NET_ERR_LEN] = "";
    rb_ring rb;
    ck_assert_msg(rb_init(&rb, 2 * (70000 + FR_HEADER_LEN), mode, err,
                          sizeof err) == 0,
                  "%s", err);
    fr_splitter sp;
    fr_init(&sp);
    struct iovec iov[64];
    fr_gather g;
    fr_gather_init(&g, iov, 64);
    size_t seen = 0;
    for (;;) {
        ssize_t r = net_read_ring(up_a, &rb, err, sizeof err);
        ck_assert_msg(r >= 0, "%s", err);
        size_t n, pos = 0;
        const uint8_t *d = rb_data(&rb, &n);
        fr_frame f;
        fr_status st;
        while ((st = fr_next(&sp, d + pos, d + n, rb.consumed + pos, &f)) ==
               FR_FRAME) {
            if (seen++ % 2 == 0 && !fr_gather_add(&g, &f)) {
                REQUIRE(net_writev_all(down_c, g.iov, g.n, err,
                                       sizeof err) == 0);
                fr_gather_reset(&g);
                REQUIRE(fr_gather_add(&g, &f));
            }
            pos += fr_frame_size(&f);
        }
        REQUIRE(st == FR_NEED_MORE);
        /* Kept frames are views into the ring: write them out before their
         * bytes are consumed (and before the next read may move them). */
        if (g.n > 0) {
            REQUIRE(net_writev_all(down_c, g.iov, g.n, err, sizeof err) == 0);
            fr_gather_reset(&g);
        }
        rb_consume(&rb, pos);
        if (r == 0) {
            d = rb_data(&rb, &n);
            ck_assert_int_eq(fr_finish(&sp, d, d + n, rb.consumed), TR_E_OK);
            break;
        }
    }
    shutdown(down_c, SHUT_WR);
    pthread_join(tw, NULL);
    pthread_join(ts, NULL);
    ck_assert_msg(w.rc == 0, "%s", w.err);
    ck_assert_uint_eq(seen, N);
    ck_assert_uint_eq(rb.consumed, total);
    ck_assert_uint_eq(s.len, kept_total);
    ck_assert(memcmp(s.buf, want, kept_total) == 0);
    ck_assert_uint_eq(rb.allocations, 1);
    if (rb.mirrored)
        ck_assert_uint_eq(rb.bytes_copied, 0);
    rb_destroy(&rb);
    close(up_c);
    close(up_a);
    close(down_c);
    close(down_a);
    free(s.buf);
    free(stream);
    free(want);
}

START_TEST(relay_mirrored) { relay(RB_MIRROR); }
END_TEST

START_TEST(relay_flat) { relay(RB_FLAT); }
END_TEST

static Suite *net_suite(void)
{
    Suite *s = suite_create("net");
    TCase *t = su_tcase(s, "net", NULL, NULL, 60);
    tcase_add_test(t, parses_addresses);
    tcase_add_test(t, write_and_read_back);
    tcase_add_test(t, listen_reports_the_address);
    tcase_add_test(t, connect_to_a_closed_port_names_it);
    tcase_add_test(t, read_states);
    tcase_add_test(t, writev_all_survives_partial_writes_and_signals);
    tcase_add_test(t, peer_gone_is_an_error_not_a_signal);
    tcase_add_test(t, writev_all_on_a_pipe);
    tcase_add_test(t, relay_mirrored);
    tcase_add_test(t, relay_flat);
    return s;
}

int main(void) { return su_run(net_suite()); }
