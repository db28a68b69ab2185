/* check_util.h: what the Check suites share.
 *
 * REQUIRE and REQUIREF call into Check only on failure: ck_assert_* records
 * every passing assertion with a write to the parent process, which would
 * dominate the run time of the suites' hot loops. */
#ifndef TR_CHECK_UTIL_H
#define TR_CHECK_UTIL_H

#include <check.h>

#define REQUIRE(c)                                                            \
    do {                                                                      \
        if (!(c))                                                             \
            ck_abort_msg("%s:%d: failed: %s", __FILE__, __LINE__, #c);        \
    } while (0)

#define REQUIREF(c, ...)                                                      \
    do {                                                                      \
        if (!(c))                                                             \
            ck_abort_msg(__VA_ARGS__);                                        \
    } while (0)

#endif
