/* rng.h: the random generator's leaves, written by hand; the generated
 * tr_random_* functions compose them following the schema.
 *
 * Deterministic: the same seed gives the same values on every machine
 * (xoshiro256** seeded through splitmix64; no libc rand, no floats from
 * platform-dependent functions). Strings are written into the caller's arena;
 * when it is full a string comes back empty (n == 0): size the arena.
 */
#ifndef TR_RNG_H
#define TR_RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "json.h"

typedef struct {
    uint64_t s[4];
} rg_rng;

/* Seeds a stream: (seed, stream) pairs give independent sequences, so
 * message i of a run can be generated alone from (seed, i). */
void rg_seed(rg_rng *r, uint64_t seed, uint64_t stream);
uint64_t rg_next(rg_rng *r);
/* Uniform in [0, n), n > 0 (no modulo bias). */
uint64_t rg_below(rg_rng *r, uint64_t n);
/* Uniform in [lo, hi]. */
int64_t rg_range(rg_rng *r, int64_t lo, int64_t hi);

/* Leaves, one per scalar type. */
int64_t rg_i64(rg_rng *r);   /* timestamps, ids: [0, 2^41) */
int32_t rg_i32(rg_rng *r);   /* counts: [0, 10000) */
double rg_f64(rg_rng *r);    /* [0, 1e6), two decimals or full precision */
bool rg_bool(rg_rng *r);
/* Words; one string in twenty holds something JSON must escape ('"', '\\',
 * a control character) or non-ASCII text (2-, 3- and 4-byte UTF-8, the last
 * needing a surrogate pair when written as \u escapes). */
js_str rg_string(rg_rng *r, ar_arena *a);
/* A map key unique within its map (a word, '-', then i). */
js_str rg_map_key(rg_rng *r, ar_arena *a, size_t i);
/* A list's or map's length: [0, size] (0 for a size below 1). */
size_t rg_count(rg_rng *r, int size);
/* The size a list's or map's items get: half of size; a negative size
 * (nothing in lists and maps, all the way down) stays as it is. */
static inline int rg_half(int size) { return size < 0 ? size : size / 2; }
/* A list an optic reads item i of (0 < i below this) is made i + 1 long in
 * about half of the lists whose size (1 or more) cannot reach it, the items
 * before i with empty lists and maps (the generated random functions): so
 * such an optic hits in random messages. Past it, an optic of a far item
 * may never hit in them. */
#define RG_INDEX_PLANT 32
/* Whether an optional field is present: one time in two. */
bool rg_present(rg_rng *r);
/* A union case or enum value: uniform in [0, n). */
int rg_choice(rg_rng *r, int n);

#endif
