/* ringbuf.h: the read buffer, in which every unread byte range is contiguous.
 *
 * Mirrored (the normal case): one memfd of cap bytes mapped twice, back to
 * back, so the bytes at [base, base + cap) appear again at [base + cap,
 * base + 2 cap). A message that straddles the wrap point is one contiguous
 * view anyway, and nothing is ever copied: bytes_copied stays 0.
 *
 * Flat (fallback where memfd or mmap fails, or forced): one plain buffer.
 * When the room after the unread bytes falls below one read (RB_READ_CHUNK),
 * rb_space moves the unread bytes to the front; each moved byte is counted
 * in bytes_copied. So a view of unread bytes stays valid until those bytes
 * are consumed, except that in the flat buffer a call to rb_space may move
 * them: take views again after rb_space (or check rb->mirrored).
 *
 * Memory: the struct is the caller's; rb_init makes the one allocation
 * (counted in allocations) and rb_destroy frees it. Nothing else allocates.
 * cap is rounded up to a multiple of the page size. It must hold at least
 * two of the largest frames so a whole frame fits with room to read the next
 * one; RB_DEFAULT_CAP does for the 4 MiB default.
 *
 * Reading and writing: rb_space gives where to write (pointer and contiguous
 * room), rb_commit makes n written bytes readable, rb_data gives the unread
 * bytes, rb_consume drops n of them. Not thread-safe.
 */
#ifndef TR_RINGBUF_H
#define TR_RINGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How much one read asks for. */
#define RB_READ_CHUNK (256u * 1024u)
/* 16 MiB: at least 2 x (4 MiB + 5), a multiple of any page size. */
#define RB_DEFAULT_CAP (16u * 1024u * 1024u)

typedef enum {
    RB_AUTO,   /* TR_RING=flat in the environment forces flat; else mirrored,
                  falling back to flat when that fails */
    RB_MIRROR, /* mirrored or fail */
    RB_FLAT,   /* flat */
} rb_mode;

typedef struct {
    uint8_t *base;
    size_t cap;           /* bytes that can be held unread */
    size_t r;             /* index of the first unread byte, in [0, cap) */
    size_t len;           /* unread bytes */
    size_t consumed;      /* bytes consumed: the stream offset of rb_data */
    bool mirrored;
    size_t allocations;   /* made by rb_init: 1 */
    size_t bytes_copied;  /* moved by the flat buffer's compaction */
    char why_flat[128];   /* RB_AUTO fell back to flat: why, else "" */
} rb_ring;

/* Allocates a ring of at least cap bytes (0 means RB_DEFAULT_CAP). Returns 0,
 * or -1 with the reason written to err (errlen bytes, NUL-terminated) and
 * nothing allocated. */
int rb_init(rb_ring *rb, size_t cap, rb_mode mode, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Frees the buffer; rb can be initialised again. */
void rb_destroy(rb_ring *rb);

/* Where to write next; *room gets the contiguous bytes there (0 when full).
 * Flat only: may first move the unread bytes to the front (see above). */
uint8_t *rb_space(rb_ring *rb, size_t *room);

/* n bytes written at rb_space's pointer are now unread; n <= room. */
void rb_commit(rb_ring *rb, size_t n);

/* The unread bytes, contiguous; *n gets their count. */
static inline const uint8_t *rb_data(const rb_ring *rb, size_t *n)
{
    *n = rb->len;
    return rb->base + rb->r;
}

/* Drops the first n unread bytes; n <= the unread count. */
void rb_consume(rb_ring *rb, size_t n);

#endif
