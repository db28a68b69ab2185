/* bench.h: what the benchmarks share: timing, the message pool, reporting.
 *
 * Method: a warm-up pass, then reps timed passes over the pool (each pass
 * long enough to time: it repeats the pool until it takes ~2 ms); the figure
 * is the median ns per message, with the fastest and slowest reps beside it.
 * The machines are shared and noisy: compare ratios taken in one run; the
 * cases that are compared take their reps in turns (bn_time_each). */
#ifndef TRIAGE_BENCH_H
#define TRIAGE_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "counters.h"

typedef struct {
    bool json;  /* one JSON object per line */
    bool quick; /* few reps: CI only checks it runs */
} bn_opts;

typedef struct {
    double median_ns, min_ns, max_ns; /* per message */
    double allocs, bytes;             /* per message, counted over the timed passes */
} bn_result;

/* A pool of generated messages (bodies without frame headers) in one
 * buffer, each a view; generated with seed 1. */
typedef struct {
    uint8_t *buf;
    size_t *off, *len;
    size_t count, total;
} bn_pool;

bool bn_pool_make(bn_pool *p, size_t count, int size, bool detail_first);
void bn_pool_free(bn_pool *p);

/* Runs fn(ctx, i) for every message i of a pool of n, timed as above. */
typedef void (*bn_fn)(void *ctx, size_t i);
bn_result bn_time(const bn_opts *o, size_t n, bn_fn fn, void *ctx);

/* The same for k cases at once (k <= BN_MAX_CASES): case j runs fns[j]
 * with ctxs[j]; their reps take turns (case 0's first, case 1's first,
 * ..., case 0's second, ...), so a stretch of time when the machine is
 * slower weighs on every case alike and their ratios hold. out[j] gets
 * case j's figures. */
#define BN_MAX_CASES 16
void bn_time_each(const bn_opts *o, size_t n, int k, const bn_fn *fns, void *const *ctxs,
                  bn_result *out);

double bn_now(void);

/* Keeps the compiler from dropping a computed result. */
extern volatile uint64_t bn_sink;

#endif
