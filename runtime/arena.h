/* arena.h: a bump allocator over a caller-owned buffer, reset per message.
 *
 * The caller owns the memory and its lifetime; the arena never calls malloc.
 * Permanent allocations grow up from the bottom; a scratch stack grows down
 * from the top, so a decoder can collect a list's elements before it knows
 * their count, then move them below in one piece (ar_scratch_commit). An
 * allocation that does not fit returns NULL: the caller reports TR_E_ARENA.
 */
#ifndef TR_ARENA_H
#define TR_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *base;
    size_t cap;
    size_t lo;        /* bytes used from the bottom (permanent) */
    size_t hi;        /* scratch stack: [hi, cap) is in use */
    size_t high;      /* most bytes in use at once since ar_init, lo + cap - hi */
} ar_arena;

void ar_init(ar_arena *a, void *buf, size_t cap);

/* Memory for an arena, or any large buffer, straight from the kernel: cap
 * bytes, 64-aligned, ending at most 63 bytes before a page that faults on
 * any access, and less than a page after another, so running past either
 * end stops the process there (under AddressSanitizer the bytes between
 * are poisoned too, as a malloc'd block's redzones are). Its pages cost
 * nothing until touched, and are given back whole by ar_unmap(p, cap) (p
 * may be NULL). NULL when they cannot be mapped. (From malloc, under
 * AddressSanitizer, a 64 MiB block had its 8 MiB of shadow memory written
 * as it was allocated and again as it was freed, whatever the arena used.) */
void *ar_map(size_t cap);
void ar_unmap(void *p, size_t cap);

/* AR_ASAN: defined when compiled with AddressSanitizer (clang or gcc); ar_map
 * poisons around its memory when arena.c was compiled so. */
#if defined(__SANITIZE_ADDRESS__)
#define AR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AR_ASAN 1
#endif
#endif

/* Forgets every allocation; keeps the high-water mark. */
static inline void ar_reset(ar_arena *a)
{
    a->lo = 0;
    a->hi = a->cap;
}

static inline void ar_note_high(ar_arena *a)
{
    size_t used = a->lo + (a->cap - a->hi);
    if (used > a->high)
        a->high = used;
}

/* n bytes aligned to 8 from the bottom, or NULL when full. */
static inline void *ar_alloc(ar_arena *a, size_t n)
{
    size_t at = (a->lo + 7u) & ~(size_t)7u;
    if (at > a->hi || n > a->hi - at)
        return NULL;
    a->lo = at + n;
    ar_note_high(a);
    return a->base + at;
}

/* Scratch stack: ar_scratch_mark, then ar_scratch_push per element, then
 * ar_scratch_commit to get them in push order as one block from the bottom,
 * which also pops them. Pushes are not padded, so elements of one list stay
 * contiguous: each size must be a multiple of its alignment (any C sizeof
 * is). A mark taken between lists is 8-aligned as long as every element
 * that holds a list is a multiple of 8 bytes (it holds a pointer, so it is). */
static inline size_t ar_scratch_mark(const ar_arena *a) { return a->hi; }

static inline void *ar_scratch_push(ar_arena *a, size_t n)
{
    size_t lo = (a->lo + 7u) & ~(size_t)7u;
    if (a->hi < lo || n > a->hi - lo)
        return NULL;
    a->hi -= n;
    ar_note_high(a);
    return a->base + a->hi;
}

/* Moves the elements pushed since mark (each elem bytes, count of them) to a
 * block from the bottom in push order; returns it (or NULL when full; an
 * empty list returns a non-NULL pointer that must not be read). */
void *ar_scratch_commit_slow(ar_arena *a, size_t mark, size_t elem, size_t count);

static inline void *ar_scratch_commit(ar_arena *a, size_t mark, size_t elem, size_t count)
{
    size_t total = elem * count;
    size_t at = (a->lo + 7u) & ~(size_t)7u;
    /* Inline, elem is a constant at each call, so the copies below are a few
     * moves each. The in-place reversal is only needed when the block's new
     * place overlaps the scratch it comes from (a nearly full arena). */
    if (count == 0 || at + total > mark - total)
        return ar_scratch_commit_slow(a, mark, elem, count);
    uint8_t *dst = a->base + at;
    const uint8_t *src = a->base + mark;
    for (size_t i = 0; i < count; i++)
        __builtin_memcpy(dst + i * elem, src - (i + 1) * elem, elem);
    a->hi = mark;
    a->lo = at + total;
    return dst;
}

/* Drops the scratch elements pushed since mark. */
static inline void ar_scratch_pop(ar_arena *a, size_t mark) { a->hi = mark; }

#endif
