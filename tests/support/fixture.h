/* fixture.h: memory that lives until the test's teardown.
 *
 * A test's buffers and arenas come from fx_alloc and go in fx_teardown, the
 * checked teardown of the test cases that use them (su_tcase(..., setup,
 * fx_teardown, ...)), so each test's process ends with nothing allocated and
 * LeakSanitizer reports only real leaks. Not thread-safe. */
#ifndef TRIAGE_TEST_FIXTURE_H
#define TRIAGE_TEST_FIXTURE_H

#include <stddef.h>

#include "arena.h"

/* n bytes (uninitialised), or the test fails. */
void *fx_alloc(size_t n);

/* The same zeroed. */
void *fx_zalloc(size_t n);

/* The same, and release(p) is called before p is freed (an object that
 * owns more memory frees it there). */
void *fx_alloc_owner(size_t n, void (*release)(void *p));

/* An arena over cap bytes of ar_map (a guard page after them), unmapped
 * in fx_teardown. */
void fx_arena(ar_arena *a, size_t cap);

/* Frees p (from one of the above) before the teardown. NULL is ignored. */
void fx_free(void *p);

/* Frees everything still allocated, newest first. */
void fx_teardown(void);

/* n zeroed bytes for the rest of the process, mapped (ar_map) rather than
 * malloc'd, for big buffers that hold no pointers to malloc'd memory: LeakSanitizer
 * scans every malloc'd block when a test's process ends, and there is one
 * such process per test. */
void *fx_mapped(size_t n);

#endif
