/* rawclient.c: a gRPC client that can send what no gRPC library sends, for
 * tests/grpc/run.sh: calls on one HTTP/2 connection (nghttp2), each with a
 * request body given in hex, and for each call one line with what came back:
 *
 *   rawclient HOST:PORT PATH BODYHEX [PATH BODYHEX ...]
 *   call N: status S message "M" data B rst R
 *
 * N counts the calls from 1 in the order given; S is the grpc-status of the
 * trailers (or of a trailers-only response), "-" when none came; M its
 * grpc-message; B the DATA bytes received; R the RST_STREAM code, "-" when
 * none. The calls are all sent at once. Exit status 0 when every call ended
 * (one way or the other) within 10 s, 1 otherwise, 2 on bad arguments. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "clock.h"
#include "h2call.h"
#include "net.h"

#define MAX_CALLS 16

typedef struct {
    const char *path;
    uint8_t *body; /* owned: what req.p points at */
    hc_body req;
    hc_status st;
    size_t data;
    int rst; /* -1: none */
    bool closed;
} call;

static call calls[MAX_CALLS];
static int ncalls, nclosed;

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl,
                     const uint8_t *val, size_t vl, uint8_t flags, void *ud)
{
    (void)flags;
    (void)ud;
    call *c = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (c != NULL)
        hc_status_header(&c->st, name, nl, val, vl);
    return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *d, size_t n,
                   void *ud)
{
    (void)flags;
    (void)d;
    (void)ud;
    call *c = nghttp2_session_get_stream_user_data(s, sid);
    if (c != NULL)
        c->data += n;
    return 0;
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)ud;
    if (f->hd.type != NGHTTP2_RST_STREAM)
        return 0;
    call *c = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (c != NULL)
        c->rst = (int)f->rst_stream.error_code;
    return 0;
}

static int on_close(nghttp2_session *s, int32_t sid, uint32_t code, void *ud)
{
    (void)code;
    (void)ud;
    call *c = nghttp2_session_get_stream_user_data(s, sid);
    if (c != NULL && !c->closed) {
        c->closed = true;
        nclosed++;
    }
    return 0;
}

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

static uint8_t *unhex(const char *h, size_t *n)
{
    size_t len = strlen(h);
    if (len % 2 != 0)
        return NULL;
    uint8_t *b = malloc(len / 2 + 1);
    for (size_t i = 0; b != NULL && i < len / 2; i++) {
        int hi = hexval(h[2 * i]), lo = hexval(h[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(b);
            return NULL;
        }
        b[i] = (uint8_t)(hi << 4 | lo);
    }
    *n = len / 2;
    return b;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (argc - 2) % 2 != 0 || (argc - 2) / 2 > MAX_CALLS) {
        fprintf(stderr, "usage: rawclient HOST:PORT PATH BODYHEX [PATH BODYHEX ...]\n");
        return 2;
    }
    for (int i = 2; i < argc; i += 2) {
        call *c = &calls[ncalls++];
        c->path = argv[i];
        c->body = unhex(argv[i + 1], &c->req.len);
        c->req.p = c->body;
        c->rst = -1;
        snprintf(c->st.status, sizeof c->st.status, "-");
        if (c->body == NULL) {
            fprintf(stderr, "rawclient: bad hex '%s'\n", argv[i + 1]);
            return 2;
        }
    }
    char err[NET_ERR_LEN];
    int fd = net_connect(argv[1], err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "rawclient: %s\n", err);
        return 1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    nghttp2_session_callbacks *cb;
    nghttp2_session *s;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    nghttp2_session_client_new(&s, cb, NULL);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0);
    for (int i = 0; i < ncalls; i++) {
        call *c = &calls[i];
        if (hc_submit(s, c->path, argv[1], &c->req, c) < 0) {
            fprintf(stderr, "rawclient: cannot submit call %d\n", i + 1);
            return 1;
        }
    }
    uint64_t t0 = clk_now_ns();
    bool dead = false;
    while (nclosed < ncalls && !dead) {
        const uint8_t *d;
        ssize_t n;
        while ((n = nghttp2_session_mem_send(s, &d)) > 0) {
            for (ssize_t off = 0; off < n;) {
                ssize_t w = send(fd, d + off, (size_t)(n - off), MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                    continue;
                if (w < 0) {
                    dead = true;
                    break;
                }
                off += w;
            }
        }
        long left = 10000 - (long)((clk_now_ns() - t0) / 1000000);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (dead || left <= 0 || poll(&p, 1, (int)left) <= 0)
            break;
        uint8_t buf[65536];
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r <= 0 || nghttp2_session_mem_recv(s, buf, (size_t)r) < 0)
            dead = true;
    }
    for (int i = 0; i < ncalls; i++) {
        call *c = &calls[i];
        printf("call %d: status %s message \"%s\" data %zu rst ", i + 1, c->st.status,
               c->st.message, c->data);
        if (c->rst < 0)
            printf("-\n");
        else
            printf("%d\n", c->rst);
        free(c->body);
    }
    nghttp2_session_del(s);
    close(fd);
    return nclosed == ncalls ? 0 : 1;
}
