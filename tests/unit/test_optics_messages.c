/* test_optics_messages.c: the optic scanners (build/gen/tr_scan_*.c over
 * runtime/skip.c) and the two policy readers (filter/reader.c) against the
 * decoder (optics.h), on generated messages and on re-written variants of
 * them (variants.h).
 *
 * Generated issues at every size 2..40, several seeds, both layouts (detail
 * in its declared place, and first), and each of those re-written every way
 * variants.h knows: each must decode, and every scanner and the optics
 * reader's verdict must agree with the decoder's reading (verify=off); a
 * variant must also carry the values of the message it was made from. The
 * generated messages reach every optic, hits and misses. Once per SIMD
 * width (a loop test; each width gets variants of its own seeds); and the
 * variants of a few messages of three sizes read the same on every width.
 * Under TR_TEST_STRIDE=k (make test-san) one seed in k at each size
 * (suite.h's su_pick). */
#include <stdio.h>
#include <string.h>

#include "issues.h"
#include "tr_model.h"
#include "support/demo/optics.h"
#include "support/demo/variants.h"
#include "support/simd.h"
#include "support/suite.h"

#define SEEDS 8
#define MIN_SIZE 2
#define MAX_SIZE 40

static long n_variants;

/* Every generated message and its variants, on width impl. (A test of the
 * generated messages alone would check a subset of this: each base message
 * gets the same oc_check_msg here before its variants are made.) */
START_TEST(test_generated_and_variants)
{
    if (!oc_use_simd(_i))
        return;
    static uint8_t copy[ISS_MAX_MESSAGE], var[8u << 20];
    long hits[O_N] = {0}; /* per optic over the generated messages (coverage) */
    char label[160];
    for (int size = MIN_SIZE; size <= MAX_SIZE; size++) {
        iss_gen *g = iss_gen_new(size);
        REQUIRE(g != NULL);
        for (uint64_t seed = 1; seed <= SEEDS; seed++) {
            if (!su_pick(seed, (size_t)size))
                continue;
            for (int first = 0; first < 2; first++) {
                uint64_t idx = (uint64_t)size * 1000 + seed;
                size_t n = oc_gen_msg(g, 77 + seed, idx, first);
                snprintf(label, sizeof label, "size %d seed %llu i %llu %s", size,
                         (unsigned long long)(77 + seed), (unsigned long long)idx,
                         first ? "detail-first" : "late");
                oc_res base;
                oc_check_msg(oc_base, n, label, &base);
                for (int o = 0; o < O_N; o++)
                    hits[o] += base.hit[o];
                memcpy(copy, oc_base, n);
                oc_res bm;
                {
                    /* the base's model, to compare each variant's decode with */
                    tr_Issue is;
                    ar_reset(&oc_arena);
                    REQUIRE(tr_decode_Issue(copy, n, &oc_arena, &is).code == TR_E_OK);
                    oc_model_res(&is, &bm);
                }
                for (int v = 0; v < V_COUNT; v++) {
                    uint64_t vseed = seed * 131 + (uint64_t)size + (uint64_t)first * 7 + (uint64_t)_i;
                    size_t vn = vr_make(copy, n, v, vseed, var, sizeof var);
                    char vl[200];
                    snprintf(vl, sizeof vl, "%s variant %s", label, vr_names[v]);
                    oc_res vr;
                    oc_check_msg(var, vn, vl, &vr);
                    /* the variant carries the same values as the original (the
                     * re-writer's own check; oc_check_msg compared it with its decode) */
                    oc_cmp(&vr, &bm, O_KIND, O_N, true, var, vn, vl);
                    n_variants++;
                }
            }
        }
        iss_gen_free(g);
    }
    /* the generated messages reach every optic, hits and misses */
    for (int o = 0; o < O_N; o++)
        REQUIREF(hits[o] > 0, "no generated message hits optic %s", oc_names[o]);
    REQUIREF(hits[O_SEV] < hits[O_KIND], "no miss for severity");
}
END_TEST

/* Every variant of generated messages of three sizes reads the same on
 * every width. */
START_TEST(test_variants_identical)
{
    int w[SIMD_WIDTHS], nw = oc_widths(w);
    enum { NM = 3 * 3 * 2 * V_COUNT };
    static oc_res got[SIMD_WIDTHS][NM];
    static uint8_t v[1 << 17], copy[ISS_MAX_MESSAGE];
    for (int k = 0; k < nw; k++) {
        REQUIRE(oc_use_simd(w[k]));
        int j = 0;
        for (int size = 2; size <= 40; size += 19) {
            iss_gen *g = iss_gen_new(size);
            REQUIRE(g != NULL);
            for (uint64_t seed = 1; seed <= 3; seed++) {
                for (int first = 0; first < 2; first++) {
                    size_t n = oc_gen_msg(g, 900 + seed, seed, first);
                    memcpy(copy, oc_base, n);
                    for (int vi = 0; vi < V_COUNT; vi++) {
                        size_t vn = vr_make(copy, n, vi, seed, v, sizeof v);
                        const uint8_t *m = oc_place_msg(v, vn);
                        REQUIRE(j < NM);
                        oc_scan_msg(m, vn, &got[k][j]);
                        OC_FAIL_IF(k > 0 && oc_digest(&got[0][j]) != oc_digest(&got[k][j]), m, vn,
                                   "size %d seed %llu variant %s: %s differs from %s", size,
                                   (unsigned long long)seed, vr_names[vi], simd_names[w[k]], simd_names[w[0]]);
                        j++;
                    }
                }
            }
            iss_gen_free(g);
        }
    }
}
END_TEST

static Suite *messages_suite(void)
{
    Suite *s = suite_create("optics_messages");
    TCase *t = su_tcase(s, "messages", oc_setup, oc_teardown, 600);
    tcase_add_loop_test(t, test_generated_and_variants, 0, SIMD_WIDTHS);
    tcase_add_test(t, test_variants_identical);
    return s;
}

int main(void)
{
    int rc = su_run(messages_suite());
    if (su_nofork()) /* the counts live in this process */
        printf("optics_messages: %ld messages checked against the decoder (%ld variants)\n", oc_checked,
               n_variants);
    return rc;
}
