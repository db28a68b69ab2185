/* guard.c: guard.h's buffers, mmap'd with a PROT_NONE page after them. */
#include "guard.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "suite.h"

uint8_t *gd_end(gd_guard *g)
{
    if (g->body == NULL) {
        size_t pg = (size_t)sysconf(_SC_PAGESIZE);
        size_t body = (g->cap + pg - 1) / pg * pg;
        uint8_t *m = mmap(NULL, body + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(m != MAP_FAILED);
        REQUIRE(mprotect(m + body, pg, PROT_NONE) == 0);
        g->body = m + body - g->cap;
        g->len = body + pg;
    }
    return g->body + g->cap;
}

uint8_t *gd_place(gd_guard *g, const void *data, size_t n)
{
    REQUIREF(n <= g->cap, "%zu bytes do not fit a guard of %zu", n, g->cap);
    uint8_t *p = gd_end(g) - n;
    if (n != 0 && p != data)
        memmove(p, data, n);
    return p;
}

void gd_release(gd_guard *g)
{
    if (g->body == NULL)
        return;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *m = g->body + g->cap + pg - g->len;
    munmap(m, g->len);
    g->body = NULL;
    g->len = 0;
}
