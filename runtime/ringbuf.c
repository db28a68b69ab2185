/* ringbuf.c: the mirrored ring and its flat fallback. */
#include "ringbuf.h"

#include "error.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef __linux__
/* Maps one memfd of cap bytes twice, back to back. Returns the base or NULL
 * with err set. */
static uint8_t *map_mirror(size_t cap, char *err, size_t errlen)
{
    char eb[64];
    int fd = memfd_create("tr-ring", MFD_CLOEXEC);
    if (fd < 0) {
        tr_say(err, errlen, "memfd_create: %s", tr_errno_text(errno, eb, sizeof eb));
        return NULL;
    }
    if (ftruncate(fd, (off_t)cap) != 0) {
        tr_say(err, errlen, "ftruncate: %s", tr_errno_text(errno, eb, sizeof eb));
        close(fd);
        return NULL;
    }
    /* Reserve 2 cap of address space first so the two MAP_FIXED mappings
     * replace only what we own. */
    void *res = mmap(NULL, 2 * cap, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (res == MAP_FAILED) {
        tr_say(err, errlen, "mmap (reserve): %s", tr_errno_text(errno, eb, sizeof eb));
        close(fd);
        return NULL;
    }
    uint8_t *base = res;
    for (int i = 0; i < 2; i++) {
        void *m = mmap(base + (size_t)i * cap, cap, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_FIXED, fd, 0);
        if (m == MAP_FAILED) {
            tr_say(err, errlen, "mmap (half %d): %s", i,
                tr_errno_text(errno, eb, sizeof eb));
            munmap(base, 2 * cap);
            close(fd);
            return NULL;
        }
    }
    close(fd); /* the mappings keep the memory */
    return base;
}
#else
static uint8_t *map_mirror(size_t cap, char *err, size_t errlen)
{
    (void)cap;
    tr_say(err, errlen, "mirrored ring needs Linux (memfd_create)");
    return NULL;
}
#endif

int rb_init(rb_ring *rb, size_t cap, rb_mode mode, char *err, size_t errlen)
{
    memset(rb, 0, sizeof *rb);
    if (cap == 0)
        cap = RB_DEFAULT_CAP;
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    if (cap > (SIZE_MAX / 2 - page)) {
        tr_say(err, errlen, "ring capacity %zu is too large", cap);
        return -1;
    }
    cap = (cap + page - 1) / page * page;

    if (mode == RB_AUTO) {
        const char *env = getenv("TR_RING");
        if (env != NULL && strcmp(env, "flat") == 0) {
            mode = RB_FLAT;
            snprintf(rb->why_flat, sizeof rb->why_flat, "TR_RING=flat");
        }
    }
    if (mode != RB_FLAT) {
        char why[sizeof rb->why_flat];
        rb->base = map_mirror(cap, why, sizeof why);
        if (rb->base != NULL) {
            rb->mirrored = true;
        } else if (mode == RB_MIRROR) {
            tr_say(err, errlen, "cannot map the mirrored ring: %s", why);
            return -1;
        } else {
            memcpy(rb->why_flat, why, sizeof why);
        }
    }
    if (rb->base == NULL) {
        rb->base = malloc(cap);
        if (rb->base == NULL) {
            tr_say(err, errlen, "cannot allocate a %zu-byte read buffer", cap);
            return -1;
        }
    }
    rb->cap = cap;
    rb->allocations = 1;
    return 0;
}

void rb_destroy(rb_ring *rb)
{
    if (rb->base != NULL) {
        if (rb->mirrored)
            munmap(rb->base, 2 * rb->cap);
        else
            free(rb->base);
    }
    rb->base = NULL;
    rb->cap = rb->r = rb->len = 0;
}

uint8_t *rb_space(rb_ring *rb, size_t *room)
{
    if (rb->mirrored) {
        /* The write position may be past cap - 1 only by wrapping; the
         * mirror makes [w, w + room) contiguous wherever w is. */
        size_t w = rb->r + rb->len;
        if (w >= rb->cap)
            w -= rb->cap;
        *room = rb->cap - rb->len;
        return rb->base + w;
    }
    size_t tail = rb->cap - rb->r - rb->len;
    if (tail < RB_READ_CHUNK && rb->r > 0) {
        memmove(rb->base, rb->base + rb->r, rb->len);
        rb->bytes_copied += rb->len;
        rb->r = 0;
        tail = rb->cap - rb->len;
    }
    *room = tail;
    return rb->base + rb->r + rb->len;
}

void rb_commit(rb_ring *rb, size_t n)
{
    assert(n <= rb->cap - rb->len - (rb->mirrored ? 0 : rb->r));
    rb->len += n;
}

void rb_consume(rb_ring *rb, size_t n)
{
    assert(n <= rb->len);
    rb->len -= n;
    rb->consumed += n;
    rb->r += n;
    if (rb->mirrored) {
        if (rb->r >= rb->cap)
            rb->r -= rb->cap;
    } else if (rb->len == 0) {
        rb->r = 0; /* empty: start over at the front, no copy needed */
    }
}
