/* guard.h: inputs that end right before an unmapped page.
 *
 * A reader that looks one byte past its end faults here instead of passing
 * by luck (or only under ASan). A guard is mapped on first use and stays
 * for the process (each test runs in a process of its own), unless
 * gd_release unmaps it. Not thread-safe. */
#ifndef TRIAGE_TEST_GUARD_H
#define TRIAGE_TEST_GUARD_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t cap;    /* the most bytes it takes (rounded up to pages when mapped) */
    uint8_t *body; /* cap bytes, then a PROT_NONE page; NULL until first use */
    size_t len;    /* the mapping's length */
} gd_guard;

#define GD_GUARD(cap) {(cap), NULL, 0}

/* Copies the n bytes at data (n <= cap; data may lie in the guard itself)
 * so that the last one is the last readable byte; returns the copy. */
uint8_t *gd_place(gd_guard *g, const void *data, size_t n);

/* The first unmapped byte: gd_place(g, d, n) == gd_end(g) - n. */
uint8_t *gd_end(gd_guard *g);

void gd_release(gd_guard *g);

#endif
