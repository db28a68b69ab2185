/* suite.h: what every Check suite under tests/unit/ is built on.
 *
 * REQUIRE and REQUIREF call into Check only on failure: ck_assert_* records
 * every passing assertion with a write to the parent process, which would
 * dominate the run time of the suites' hot loops.
 *
 * A suite's main() ends in return su_run(my_suite()); su_tcase makes a test
 * case with its fixture and time limit and adds it to the suite. */
#ifndef TRIAGE_TEST_SUITE_H
#define TRIAGE_TEST_SUITE_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

#define REQUIRE(c)                                                            \
    do {                                                                      \
        if (!(c))                                                             \
            ck_abort_msg("%s:%d: failed: %s", __FILE__, __LINE__, #c);        \
    } while (0)

/* The message (a printf format and its arguments) on failure. */
#define REQUIREF(c, ...)                                                      \
    do {                                                                      \
        if (!(c))                                                             \
            ck_abort_msg(__VA_ARGS__);                                        \
    } while (0)

/* A test case named name added to s: setup and teardown as a checked
 * fixture (run in each test's process; either may be NULL), and a time
 * limit of seconds per test (0: Check's default). */
TCase *su_tcase(Suite *s, const char *name, void (*setup)(void), void (*teardown)(void),
                double seconds);

/* Runs every test of s (CK_RUN_SUITE, CK_RUN_CASE and CK_FORK apply) and
 * returns main's exit status: EXIT_SUCCESS when none failed. */
int su_run(Suite *s);

/* Whether the tests run in this process (CK_FORK=no), so that counts they
 * keep in static variables are there to print after su_run. */
bool su_nofork(void);

/* Whether an exhaustive loop (over every byte of a message, every prefix,
 * every generated message) checks its position i: one position in
 * TR_TEST_STRIDE (from the environment; every one when it is unset), those
 * with (i + key) a multiple of it. key is a number of what the loop walks
 * (its length, say), so that different messages check different positions
 * and one message the same ones every time (its runs on each SIMD width are
 * compared). make test-san sets it: the sanitizer build checks a share of
 * what the plain build checks whole. */
bool su_pick(size_t i, size_t key);

#endif
