/* bench.c: timing and the message pool. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "issues.h"

volatile uint64_t bn_sink;

double bn_now(void)
{
    return (double)clk_now_ns() / 1e9;
}

bool bn_pool_make(bn_pool *p, size_t count, int size, bool detail_first)
{
    memset(p, 0, sizeof *p);
    iss_gen *g = iss_gen_new(size);
    p->off = calloc(count, sizeof *p->off);
    p->len = calloc(count, sizeof *p->len);
    size_t cap = count * 8192 + 4 * ISS_MAX_MESSAGE / 1024;
    p->buf = malloc(cap);
    if (g == NULL || p->off == NULL || p->len == NULL || p->buf == NULL)
        goto fail;
    for (size_t i = 0; i < count; i++) {
        size_t n;
        const uint8_t *f = iss_gen_frame(g, 1, i, detail_first, &n);
        if (f == NULL || p->total + n > cap)
            goto fail;
        memcpy(p->buf + p->total, f + 5, n - 5);
        p->off[i] = p->total;
        p->len[i] = n - 5;
        p->total += n - 5;
    }
    p->count = count;
    iss_gen_free(g);
    return true;
fail:
    iss_gen_free(g);
    bn_pool_free(p);
    return false;
}

void bn_pool_free(bn_pool *p)
{
    free(p->buf);
    free(p->off);
    free(p->len);
    memset(p, 0, sizeof *p);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bn_result bn_time(const bn_opts *o, size_t n, bn_fn fn, void *ctx)
{
    enum { MAX_REPS = 31 };
    int reps = o->quick ? 3 : 21;
    /* warm-up, and a first estimate of a pass */
    double t0 = bn_now();
    for (size_t i = 0; i < n; i++)
        fn(ctx, i);
    double pass = bn_now() - t0;
    int passes = 1;
    if (!o->quick)
        while (pass * passes < 2e-3 && passes < 1 << 16)
            passes *= 2;
    double ns[MAX_REPS];
    ct_allocs a0 = ct_now();
    for (int r = 0; r < reps; r++) {
        double s = bn_now();
        for (int k = 0; k < passes; k++)
            for (size_t i = 0; i < n; i++)
                fn(ctx, i);
        ns[r] = (bn_now() - s) * 1e9 / ((double)passes * (double)n);
    }
    ct_allocs a1 = ct_now();
    qsort(ns, (size_t)reps, sizeof ns[0], cmp_double);
    double msgs = (double)reps * passes * (double)n;
    return (bn_result){ns[reps / 2], ns[0], ns[reps - 1], (double)(a1.allocs - a0.allocs) / msgs,
                       (double)(a1.bytes - a0.bytes) / msgs};
}
