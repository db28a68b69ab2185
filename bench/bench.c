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
    bn_result r;
    bn_time_each(o, n, 1, &fn, &ctx, &r);
    return r;
}

void bn_time_each(const bn_opts *o, size_t n, int k, const bn_fn *fns, void *const *ctxs,
                  bn_result *out)
{
    enum { MAX_REPS = 31 };
    int reps = o->quick ? 3 : 21;
    if (k > BN_MAX_CASES) {
        fprintf(stderr, "triage-bench: %d cases timed together, at most %d\n", k, BN_MAX_CASES);
        abort();
    }
    double ns[BN_MAX_CASES][MAX_REPS];
    int passes[BN_MAX_CASES];
    uint64_t allocs[BN_MAX_CASES] = {0}, bytes[BN_MAX_CASES] = {0};
    /* each case's warm-up, and a first estimate of its pass */
    for (int j = 0; j < k; j++) {
        double t0 = bn_now();
        for (size_t i = 0; i < n; i++)
            fns[j](ctxs[j], i);
        double pass = bn_now() - t0;
        passes[j] = 1;
        if (!o->quick)
            while (pass * passes[j] < 2e-3 && passes[j] < 1 << 16)
                passes[j] *= 2;
    }
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < k; j++) {
            /* one pass untimed first: the case before this one (decode's
             * arena, 16 MiB written) may have pushed the pool out of the
             * caches, and the first pass back would be charged to this
             * case alone (measured: 20-30 ns a message on the late layout
             * for whichever case came right after decode) */
            for (size_t i = 0; i < n; i++)
                fns[j](ctxs[j], i);
            ct_allocs a0 = ct_now();
            double s = bn_now();
            for (int p = 0; p < passes[j]; p++)
                for (size_t i = 0; i < n; i++)
                    fns[j](ctxs[j], i);
            ns[j][r] = (bn_now() - s) * 1e9 / ((double)passes[j] * (double)n);
            ct_allocs a1 = ct_now();
            allocs[j] += a1.allocs - a0.allocs;
            bytes[j] += a1.bytes - a0.bytes;
        }
    for (int j = 0; j < k; j++) {
        qsort(ns[j], (size_t)reps, sizeof ns[j][0], cmp_double);
        double msgs = (double)reps * passes[j] * (double)n;
        out[j] = (bn_result){ns[j][reps / 2], ns[j][0], ns[j][reps - 1],
                             (double)allocs[j] / msgs, (double)bytes[j] / msgs};
    }
}
