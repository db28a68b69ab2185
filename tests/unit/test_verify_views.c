/* test_verify_views.c: the detail (the kind's base) each verify level
 * (filter/verify.h) hands the rules is the scanner's own view of it: at
 * verify=off the scanner's, at json the one the one-pass validator finds
 * (jsonvalid.h), at schema the one the validator records (validate_views); at
 * every size and in both layouts. */
#include "frames.h"
#include "issues.h"
#include "optic.h"
#include "tr_optics.h"
#include "support/demo/verify_cases.h"
#include "support/suite.h"

/* The detail (the kind's base) the verify levels hand the rules: at json
 * the one-pass validator finds it (jsonvalid.h), at schema the validator
 * records it (validate_views); both are the scanner's view, at every size
 * and in both layouts. */
START_TEST(verify_levels_find_the_scanners_detail)
{
    static const int sizes[] = {1, 2, 7, 15, 40};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        iss_gen *g = iss_gen_new(sizes[k]);
        REQUIRE(g != NULL);
        for (uint64_t i = 0; i < 80; i++) {
            size_t n;
            const uint8_t *f = iss_gen_frame(g, 21 + k, i, i % 2 == 1, &n);
            REQUIRE(f != NULL);
            tr_message m = {f + FR_HEADER_LEN, n - FR_HEADER_LEN};
            tr_view_Detail want;
            REQUIRE(tr_scan_detail(m, &want));
            int base = tr_schema.optics[tr_schema.kind].base;
            REQUIRE(base >= 0);
            for (int lv = VF_OFF; lv <= VF_SCHEMA; lv++) {
                op_value got;
                REQUIREF(rd_message(vc_reader(), (vf_level)lv, m) && ru_read(&vc_reader()->ru, base, &got),
                         "size %d message %llu: no detail at %s", sizes[k],
                         (unsigned long long)i, vf_level_name((vf_level)lv));
                REQUIREF(got.bytes.p == want.p && got.bytes.n == want.n,
                         "size %d message %llu: another detail at %s", sizes[k],
                         (unsigned long long)i, vf_level_name((vf_level)lv));
            }
            tr_Issue_views views;
            ar_reset(vc_arena());
            ck_assert_int_eq(tr_validate_Issue_views(m.p, m.n, vc_arena(), &views).code, TR_E_OK);
            REQUIRE(views.has_detail && views.detail.p == want.p && views.detail.n == want.n);
        }
        iss_gen_free(g);
    }
}
END_TEST

static Suite *views_suite(void)
{
    Suite *s = suite_create("verify_views");
    TCase *t = su_tcase(s, "views", NULL, NULL, 600);
    tcase_add_test(t, verify_levels_find_the_scanners_detail);
    return s;
}

int main(void)
{
    vc_init();
    return su_run(views_suite());
}
