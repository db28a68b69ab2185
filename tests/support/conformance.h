/* conformance.h: JSONTestSuite's parsing files, third-party data read where
 * it lies (never copied into the project): the folder TR_CONFORMANCE names,
 * else ../shared/conformance/JSONTestSuite/test_parsing (from the
 * repository's root, where the suites run). */
#ifndef TRIAGE_TEST_CONFORMANCE_H
#define TRIAGE_TEST_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CF_MAX (1u << 20) /* the largest file read */

/* Calls fn with the name and bytes of each file named y_*, n_* or i_* and
 * returns how many; -1 when the folder is absent, after a note on stderr
 * when note is set (the caller then skips those cases). */
int cf_each(void (*fn)(const char *name, const uint8_t *p, size_t n, void *ctx), void *ctx, bool note);

#endif
