/* simd.h: the string-scanning widths of runtime/json.h, for suites that
 * run a test once per width (a Check loop test over 0 .. SIMD_WIDTHS-1).
 *
 * simd_use(i) forces width i for json.c and, through sk_init, for the
 * scanners' walk (skip.c); it is false when the CPU lacks the width, and
 * the loop test then has nothing to do for i. A module that needs more of
 * the CPU than json.c (skip.c and valid.c take sse2 without PCLMUL) is
 * checked by its own suite. Loop tests run in a process each (Check's fork
 * mode), so a width forced in one does not leak into the next. */
#ifndef TRIAGE_TEST_SIMD_H
#define TRIAGE_TEST_SIMD_H

#include <stdbool.h>

#define SIMD_WIDTHS 4

/* "portable", "sse2", "avx2", "avx512": narrowest first. */
extern const char *const simd_names[SIMD_WIDTHS];

bool simd_use(int i);

#endif
