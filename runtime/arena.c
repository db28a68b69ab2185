/* arena.c: an arena's memory mapped (ar_map), and moving a scratch list to
 * its permanent place. */
#include "arena.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Under AddressSanitizer the mapping's bytes around the arena are poisoned,
 * as a malloc'd block's redzones are: an access to the slack in front
 * (under a page) or the gap behind (under 64 bytes) is ASan's to report;
 * the guard pages beyond them stop the process in every build. */
#ifdef AR_ASAN
#include <sanitizer/asan_interface.h>
#define AR_POISON(p, n) __asan_poison_memory_region((p), (n))
#define AR_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define AR_POISON(p, n) ((void)(p), (void)(n))
#define AR_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

static size_t page_size(void)
{
    long n = sysconf(_SC_PAGESIZE);
    return n > 0 ? (size_t)n : 4096;
}

/* The mapping: a guard page, cap rounded up to pages, a guard page. The
 * arena ends less than 64 bytes before the second guard, 64-aligned. */
static size_t pages_of(size_t cap, size_t page) { return (cap + page - 1) / page * page; }

static size_t map_len(size_t cap, size_t page) { return pages_of(cap, page) + 2 * page; }

static size_t front_of(size_t cap, size_t page)
{
    return page + ((pages_of(cap, page) - cap) & ~(size_t)63);
}

void *ar_map(size_t cap)
{
    size_t page = page_size();
    if (cap == 0 || cap > SIZE_MAX / 2)
        return NULL;
    size_t len = map_len(cap, page);
    uint8_t *base = mmap(NULL, len, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    if (mprotect(base, page, PROT_NONE) != 0 ||
        mprotect(base + len - page, page, PROT_NONE) != 0) {
        munmap(base, len);
        return NULL;
    }
    uint8_t *p = base + front_of(cap, page);
    AR_POISON(base + page, (size_t)(p - (base + page)));
    AR_POISON(p + cap, (size_t)(base + len - page - (p + cap)));
    return p;
}

void ar_unmap(void *p, size_t cap)
{
    if (p == NULL)
        return;
    size_t page = page_size();
    uint8_t *base = (uint8_t *)p - front_of(cap, page), *end = (uint8_t *)p + cap;
    size_t len = map_len(cap, page);
    /* what was poisoned must not stay so for whatever is mapped there next
     * (the two ranges only: the whole mapping's shadow is what malloc cost) */
    AR_UNPOISON(base + page, (size_t)((uint8_t *)p - (base + page)));
    AR_UNPOISON(end, (size_t)(base + len - page - end));
    munmap(base, len);
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
