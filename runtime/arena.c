/* arena.c: moving a scratch list to its permanent place. */
#include "arena.h"

#include <string.h>

void ar_init(ar_arena *a, void *buf, size_t cap)
{
    a->base = buf;
    a->cap = cap & ~(size_t)7u;
    a->lo = 0;
    a->hi = a->cap;
    a->high = 0;
}

void *ar_scratch_commit_slow(ar_arena *a, size_t mark, size_t elem, size_t count)
{
    static uint64_t empty;
    if (count == 0) {
        a->hi = mark;
        return &empty;
    }
    /* Elements were pushed downwards: element i sits at mark - (i+1)*elem.
     * Reverse them in place, then move the block down as one piece (the two
     * regions may overlap, hence memmove). */
    size_t total = elem * count;
    size_t at = (a->lo + 7u) & ~(size_t)7u;
    uint8_t *lowest = a->base + mark - total;
    for (size_t i = 0, j = count - 1; i < j; i++, j--) {
        uint8_t *x = lowest + i * elem, *y = lowest + j * elem;
        for (size_t k = 0; k < elem; k++) {
            uint8_t t = x[k];
            x[k] = y[k];
            y[k] = t;
        }
    }
    a->hi = mark;
    a->lo = at + total;
    memmove(a->base + at, lowest, total);
    return a->base + at;
}
