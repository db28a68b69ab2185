/* frames.c: the gRPC frame splitter and the writev joiner. */
#include "frames.h"

void fr_init(fr_splitter *s)
{
    s->max_len = FR_DEFAULT_MAX_LEN;
    s->allow_compressed = false;
    s->err.code = TR_E_OK;
    s->err.offset = 0;
    s->err_frame = 0;
}

static fr_status fail(fr_splitter *s, tr_code code, size_t at, size_t frame)
{
    if (s->err.code == TR_E_OK)
        s->err_frame = frame;
    tr_error_set(&s->err, code, at);
    return FR_ERROR;
}

fr_status fr_next(fr_splitter *s, const uint8_t *p, const uint8_t *end,
                  size_t off, fr_frame *out)
{
    if (s->err.code != TR_E_OK)
        return FR_ERROR;
    if (p == end)
        return FR_NEED_MORE;
    size_t avail = (size_t)(end - p);

    /* The flag byte is judged as soon as it arrives. */
    if (p[0] > 1)
        return fail(s, TR_E_FRAME_FLAG, off, off);
    if (p[0] == 1 && !s->allow_compressed)
        return fail(s, TR_E_COMPRESSED, off, off);
    if (avail < FR_HEADER_LEN)
        return FR_NEED_MORE;

    uint32_t len = fr_len(p);
    /* From the header alone: an oversize body is never waited for. */
    if (len > s->max_len)
        return fail(s, TR_E_FRAME_SIZE, off + 1, off);
    if (avail - FR_HEADER_LEN < len)
        return FR_NEED_MORE;

    out->head = p;
    out->msg.p = p + FR_HEADER_LEN;
    out->msg.n = len;
    out->offset = off;
    out->compressed = p[0] == 1;
    return FR_FRAME;
}

tr_code fr_finish(fr_splitter *s, const uint8_t *p, const uint8_t *end,
                  size_t off)
{
    if (s->err.code == TR_E_OK && p != end)
        fail(s, TR_E_FRAME_TRUNCATED, off + (size_t)(end - p), off);
    return s->err.code;
}

void fr_put_header(uint8_t out[FR_HEADER_LEN], bool compressed, uint32_t len)
{
    out[0] = compressed ? 1 : 0;
    out[1] = (uint8_t)(len >> 24);
    out[2] = (uint8_t)(len >> 16);
    out[3] = (uint8_t)(len >> 8);
    out[4] = (uint8_t)len;
}

void fr_gather_init(fr_gather *g, struct iovec *iov, size_t cap)
{
    g->iov = iov;
    g->cap = cap;
    fr_gather_reset(g);
}

bool fr_gather_add(fr_gather *g, const fr_frame *f)
{
    size_t size = fr_frame_size(f);
    struct iovec *last = g->n > 0 ? &g->iov[g->n - 1] : NULL;
    if (last && (const uint8_t *)last->iov_base + last->iov_len == f->head) {
        last->iov_len += size;
    } else if (g->n < g->cap) {
        /* writev's iovec is not const-qualified; the bytes are only read. */
        g->iov[g->n].iov_base = (void *)(uintptr_t)f->head;
        g->iov[g->n].iov_len = size;
        g->n++;
    } else {
        return false;
    }
    g->frames++;
    g->bytes += size;
    return true;
}

size_t fr_join(const fr_frame *frames, size_t n, struct iovec *iov)
{
    fr_gather g;
    fr_gather_init(&g, iov, n);
    for (size_t i = 0; i < n; i++) {
        /* Cannot fail: n entries hold n frames even with no merging. */
        bool ok = fr_gather_add(&g, &frames[i]);
        (void)ok;
    }
    return g.n;
}
