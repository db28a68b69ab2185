/* test_regression.c: every input under tests/regression/ (the bugs fixed,
 * one file each; TR_REGRESSION names another folder) through every fuzz
 * harness of tests/fuzz/harness.h, and generated messages, both layouts,
 * through them too: each harness's properties hold on each. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "issues.h"
#include "support/bytes.h"
#include "support/demo/verify_cases.h"
#include "support/fixture.h"
#include "support/suite.h"

static const char *regression_dir(void)
{
    const char *dir = getenv("TR_REGRESSION");
    return dir != NULL ? dir : "tests/regression";
}

START_TEST(regression_replay)
{
    const char *dir = regression_dir();
    DIR *d = opendir(dir);
    REQUIREF(d != NULL, "cannot open %s (run from the repository root)", dir);
    int files = 0;
    char failed[4096] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t nl = strlen(e->d_name);
        if (e->d_name[0] == '.' || (nl > 3 && strcmp(e->d_name + nl - 3, ".md") == 0))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        bb *f = vc_read_file(path);
        for (size_t h = 0; h < vc_nharnesses(); h++) {
            const char *why = vc_harness(h, f->p, f->n);
            if (why != NULL) {
                size_t l = strlen(failed);
                snprintf(failed + l, sizeof failed - l, "\n  %s through %s: %s", e->d_name,
                         vc_harness_name(h), why);
            }
        }
        files++;
    }
    closedir(d);
    REQUIREF(failed[0] == 0, "regression inputs fail:%s", failed);
    ck_assert_int_gt(files, 0);
}
END_TEST

/* The generated seeds hold too: both layouts, several sizes. */
START_TEST(generated_messages_pass_every_harness)
{
    iss_gen *g = iss_gen_new(3);
    REQUIRE(g != NULL);
    for (uint64_t i = 0; i < 60; i++) {
        size_t n;
        const uint8_t *f = iss_gen_frame(g, 7, i, i % 2 == 1, &n);
        REQUIRE(f != NULL);
        tr_message m = {f + FR_HEADER_LEN, n - FR_HEADER_LEN};
        ck_assert_int_eq(vc_check(VF_JSON, m).code, TR_E_OK);
        ck_assert_int_eq(vc_check(VF_SCHEMA, m).code, TR_E_OK);
        for (size_t h = 0; h < vc_nharnesses(); h++) {
            const char *why = vc_harness(h, m.p, m.n);
            REQUIREF(why == NULL, "message %llu through %s: %s", (unsigned long long)i,
                     vc_harness_name(h), why);
        }
    }
    iss_gen_free(g);
}
END_TEST

static Suite *regression_suite(void)
{
    Suite *s = suite_create("regression");
    TCase *t = su_tcase(s, "regression", NULL, fx_teardown, 600);
    tcase_add_test(t, regression_replay);
    tcase_add_test(t, generated_messages_pass_every_harness);
    return s;
}

int main(void)
{
    vc_init();
    return su_run(regression_suite());
}
