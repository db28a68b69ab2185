/* counters.c: malloc interposition for counting. glibc exports its own
 * allocator as __libc_malloc and friends; ours count, then forward. */
#include "counters.h"

#include <stdatomic.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

static _Atomic uint64_t n_allocs, n_bytes;

static void count(size_t n)
{
    atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&n_bytes, n, memory_order_relaxed);
}

void *malloc(size_t n)
{
    count(n);
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    count(n * size);
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    count(n);
    return __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    count(n);
    void *p = __libc_memalign(align, n);
    if (p == NULL)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}

void free(void *p) { __libc_free(p); }

ct_allocs ct_now(void)
{
    return (ct_allocs){atomic_load_explicit(&n_allocs, memory_order_relaxed),
                       atomic_load_explicit(&n_bytes, memory_order_relaxed)};
}
