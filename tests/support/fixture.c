/* fixture.c: fixture.h's allocations, each behind a header that links it
 * into the list fx_teardown empties. */
#include "fixture.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"

typedef struct node {
    struct node *prev, *next;
    void (*release)(void *p);
} node;

/* The header's size, rounded up so that the memory after it keeps malloc's
 * alignment. */
#define HEAD ((sizeof(node) + alignof(max_align_t) - 1) / alignof(max_align_t) * alignof(max_align_t))

static node live = {&live, &live, NULL};

void *fx_alloc_owner(size_t n, void (*release)(void *p))
{
    node *h = malloc(HEAD + n);
    REQUIREF(h != NULL, "out of memory (%zu bytes)", n);
    h->release = release;
    h->next = live.next;
    h->prev = &live;
    live.next->prev = h;
    live.next = h;
    return (char *)h + HEAD;
}

void *fx_alloc(size_t n) { return fx_alloc_owner(n, NULL); }

void *fx_zalloc(size_t n)
{
    void *p = fx_alloc(n);
    memset(p, 0, n);
    return p;
}

typedef struct {
    void *mem;
    size_t cap;
} mapping;

static void unmap(void *p)
{
    mapping *m = p;
    ar_unmap(m->mem, m->cap);
}

void fx_arena(ar_arena *a, size_t cap)
{
    mapping *m = fx_alloc_owner(sizeof *m, unmap);
    m->cap = cap;
    m->mem = ar_map(cap);
    REQUIREF(m->mem != NULL, "cannot map an arena of %zu bytes", cap);
    ar_init(a, m->mem, cap);
}

void fx_free(void *p)
{
    if (p == NULL)
        return;
    node *h = (node *)((char *)p - HEAD);
    h->prev->next = h->next;
    h->next->prev = h->prev;
    if (h->release != NULL)
        h->release(p);
    free(h);
}

void fx_teardown(void)
{
    while (live.next != &live)
        fx_free((char *)live.next + HEAD);
}

void *fx_mapped(size_t n)
{
    void *p = ar_map(n);
    REQUIREF(p != NULL, "cannot map %zu bytes", n);
    return p;
}
