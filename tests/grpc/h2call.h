/* h2call.h: a test client's side of a gRPC call over nghttp2, shared by
 * tests/grpc/rawclient.c and tests/unit/test_h2proxy.c: the request body,
 * sent from memory, its request headers, and the grpc-status and
 * grpc-message that came back.
 *
 * Header only (static functions), like filter/flood.h. */
#ifndef TRIAGE_H2CALL_H
#define TRIAGE_H2CALL_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

/* A request body: len bytes at p (not owned), sent bytes gone out, in DATA
 * frames of at most cut bytes (0: as many as nghttp2 asks for). */
typedef struct {
    const uint8_t *p;
    size_t len, sent, cut;
} hc_body;

/* The read_callback of a data provider whose source.ptr is an hc_body. */
static ssize_t hc_body_read(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
                            uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)s;
    (void)sid;
    (void)ud;
    hc_body *b = src->ptr;
    size_t n = b->len - b->sent;
    if (n > length)
        n = length;
    if (b->cut > 0 && n > b->cut)
        n = b->cut;
    memcpy(buf, b->p + b->sent, n);
    b->sent += n;
    if (b->sent == b->len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* Submits a call: a POST to path of the body b (which must outlive the
 * stream), stream_data the stream's user data. The stream's id, or
 * nghttp2's error (< 0). */
static int32_t hc_submit(nghttp2_session *s, const char *path, const char *authority, hc_body *b,
                         void *stream_data)
{
    nghttp2_nv h[] = {
        {(uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0},
        {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
        {(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), 0},
        {(uint8_t *)":authority", (uint8_t *)authority, 10, strlen(authority), 0},
        {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0},
        {(uint8_t *)"te", (uint8_t *)"trailers", 2, 8, 0},
    };
    nghttp2_data_provider p = {.source.ptr = b, .read_callback = hc_body_read};
    return nghttp2_submit_request(s, NULL, h, sizeof h / sizeof h[0], &p, stream_data);
}

/* What the trailers (or a trailers-only response) said. */
typedef struct {
    char status[16];   /* grpc-status, as the caller set it until one comes */
    char message[256]; /* grpc-message */
} hc_status;

/* Keeps a header that is grpc-status or grpc-message; false for any other. */
static bool hc_status_header(hc_status *st, const uint8_t *name, size_t nl, const uint8_t *val,
                             size_t vl)
{
    if (nl == 11 && memcmp(name, "grpc-status", 11) == 0)
        snprintf(st->status, sizeof st->status, "%.*s", (int)vl, (const char *)val);
    else if (nl == 12 && memcmp(name, "grpc-message", 12) == 0)
        snprintf(st->message, sizeof st->message, "%.*s", (int)vl, (const char *)val);
    else
        return false;
    return true;
}

#endif
