/* counters.h: allocations counted by interposing malloc (glibc), so a
 * benchmark can show what a hot path allocates per message. */
#ifndef TRIAGE_COUNTERS_H
#define TRIAGE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t allocs; /* malloc, calloc, realloc and aligned calls */
    uint64_t bytes;  /* bytes they asked for */
} ct_allocs;

/* The counts so far (since the process started). */
ct_allocs ct_now(void);

#endif
