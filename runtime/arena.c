/* arena.c: an arena's memory mapped (ar_map), and moving a scratch list to
 * its permanent place. */
#include "arena.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t page_size(void)
{
    long n = sysconf(_SC_PAGESIZE);
    return n > 0 ? (size_t)n : 4096;
}

/* The mapping: cap rounded up to pages, then the guard page. */
static size_t mapped_len(size_t cap, size_t page)
{
    return (cap + page - 1) / page * page + page;
}

void *ar_map(size_t cap)
{
    size_t page = page_size();
    if (cap == 0 || cap > SIZE_MAX / 2)
        return NULL;
    size_t len = mapped_len(cap, page);
    uint8_t *base = mmap(NULL, len, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    size_t guard = len - page;
    if (mprotect(base + guard, page, PROT_NONE) != 0) {
        munmap(base, len);
        return NULL;
    }
    /* less than a page in front, 64-aligned */
    return base + ((guard - cap) & ~(size_t)63);
}

void ar_unmap(void *p, size_t cap)
{
    if (p == NULL)
        return;
    size_t page = page_size();
    uint8_t *base = (uint8_t *)((uintptr_t)p & ~(uintptr_t)(page - 1));
    munmap(base, mapped_len(cap, page));
}

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
