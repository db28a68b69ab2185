/* rng.h: reproducible random numbers for tests (xorshift64*).
 *
 * Not the generator's rg_rng (runtime/rng.h), which draws the model's
 * values: these choose test inputs (lengths, positions, bytes), and a test
 * that prints its seed can be run again exactly. */
#ifndef TRIAGE_TEST_RNG_H
#define TRIAGE_TEST_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s; /* never 0 */
} rng_state;

/* Distinct seeds give unrelated streams; any seed will do, 0 too. */
static inline rng_state rng_seed(uint64_t seed)
{
    rng_state r = {seed * 0x9e3779b97f4a7c15ull + 1};
    if (r.s == 0)
        r.s = 1;
    return r;
}

static inline uint64_t rng_next(rng_state *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform enough in [0, n); 0 when n is 0. */
static inline uint64_t rng_below(rng_state *r, uint64_t n) { return n ? rng_next(r) % n : 0; }

#endif
