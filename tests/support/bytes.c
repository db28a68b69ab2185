/* bytes.c: bytes.h's buffers; bb_new's live in fixture.h's list. */
#include "bytes.h"

#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "suite.h"

static void release(void *p) { free(((bb *)p)->p); }

bb *bb_new(void)
{
    bb *b = fx_alloc_owner(sizeof *b, release);
    b->p = NULL;
    b->n = b->cap = 0;
    bb_reserve(b, 64);
    b->p[0] = 0;
    return b;
}

bb *bb_of(const void *p, size_t n)
{
    bb *b = bb_new();
    bb_put(b, p, n);
    return b;
}

bb *bb_str(const char *s) { return bb_of(s, strlen(s)); }

void bb_free(bb *b) { fx_free(b); }

void bb_reserve(bb *b, size_t n)
{
    if (b->n + n + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (b->n + n + 1 > cap)
        cap *= 2;
    b->p = realloc(b->p, cap);
    REQUIREF(b->p != NULL, "out of memory (%zu bytes)", cap);
    b->cap = cap;
}

void bb_put(bb *b, const void *s, size_t n)
{
    bb_reserve(b, n);
    if (n != 0)
        memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void bb_puts(bb *b, const char *s) { bb_put(b, s, strlen(s)); }

void bb_putc(bb *b, int c)
{
    uint8_t x = (uint8_t)c;
    bb_put(b, &x, 1);
}

void bb_rep(bb *b, const char *s, size_t times)
{
    size_t n = strlen(s);
    bb_reserve(b, n * times);
    for (size_t i = 0; i < times; i++)
        bb_put(b, s, n);
}
