/* suite.c: the runner and test-case helper of suite.h. */
#include "suite.h"

#include <stdlib.h>
#include <string.h>

TCase *su_tcase(Suite *s, const char *name, void (*setup)(void), void (*teardown)(void),
                double seconds)
{
    TCase *t = tcase_create(name);
    if (setup != NULL || teardown != NULL)
        tcase_add_checked_fixture(t, setup, teardown);
    if (seconds > 0)
        tcase_set_timeout(t, seconds);
    suite_add_tcase(s, t);
    return t;
}

int su_run(Suite *s)
{
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

bool su_nofork(void)
{
    const char *f = getenv("CK_FORK");
    return f != NULL && strcmp(f, "no") == 0;
}

bool su_pick(size_t i, size_t key)
{
    static size_t stride; /* 0: not read yet */
    if (stride == 0) {
        const char *v = getenv("TR_TEST_STRIDE");
        long k = v != NULL ? strtol(v, NULL, 10) : 1;
        stride = k >= 1 ? (size_t)k : 1;
    }
    return (i + key) % stride == 0;
}
