/* test_optics_prefixes.c: the optic scanners and the optics reader
 * (optics.h) on every prefix of a few messages (oc_samples: one of each
 * kind at size 2 and 3, both layouts) and of a re-written one of each
 * (variants.h's light variant: pretty, escaped, shuffled, with decoys),
 * under every SIMD width.
 *
 * Every prefix of a message at the end of a mapping, and every prefix of
 * its detail's bytes alone: each optic misses or reads exactly what it
 * reads on the whole message (a value cut short is a miss, never a shorter
 * value), and a message without a detail is never kept. Every width scans
 * every prefix, and its results must be identical to the narrowest width's
 * (portable). Under TR_TEST_STRIDE=k (make test-san) one prefix in k, and
 * the whole message (suite.h's su_pick). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_model.h"
#include "tr_optics.h"
#include "support/demo/optics.h"
#include "support/demo/variants.h"
#include "support/simd.h"
#include "support/suite.h"

/* Prefixes looked at, and those with a whole detail, for the summary. */
static long n_prefixes, n_prefix_hits;

/* Every prefix of [msg, msg+n) at the end of a mapping: each optic misses
 * or reads exactly what it reads on the whole message; the same for every
 * prefix of the detail's own bytes. digests (when not NULL) receives a
 * digest of each result, the message's n + 1 then the detail's (for the
 * comparison across widths); returns how many. */
static size_t check_prefixes(const uint8_t *msg, size_t n, const char *label, uint64_t *digests)
{
    char l[200];
    oc_res full;
    oc_check_msg(msg, n, label, &full);
    for (size_t len = 0; len <= n; len++) {
        if (len < n && !su_pick(len, n))
            continue;
        const uint8_t *m = oc_place_msg(msg, len);
        oc_res r;
        oc_scan_msg(m, len, &r);
        n_prefixes++;
        snprintf(l, sizeof l, "%s prefix %zu of %zu", label, len, n);
        if (r.hit[O_DETAIL]) {
            n_prefix_hits++;
            OC_FAIL_IF(r.det_off != full.det_off || r.det_n != full.det_n, m, len,
                    "%s: detail view at %zu+%zu, whole message %zu+%zu", l, r.det_off, r.det_n,
                    full.det_off, full.det_n);
            oc_cmp(&r, &full, 0, O_N, true, m, len, l);
        } else {
            OC_FAIL_IF(r.keep, m, len, "%s: kept without a detail", l);
        }
        for (int o = 0; o < O_N; o++)
            if (r.hit[o])
                oc_cmp(&r, &full, o, o + 1, false, m, len, l);
        if (digests)
            digests[len] = oc_digest(&r);
    }
    const uint8_t *d0 = msg + full.det_off;
    for (size_t len = 0; len <= full.det_n; len++) {
        if (len < full.det_n && !su_pick(len, full.det_n))
            continue;
        const uint8_t *d = oc_place_detail(d0, len);
        oc_res r;
        memset(&r, 0, sizeof r);
        oc_scan_leaves(d, len, &r);
        n_prefixes++;
        snprintf(l, sizeof l, "%s: detail prefix %zu of %zu", label, len, full.det_n);
        for (int o = O_KIND; o <= O_VOTES; o++)
            if (r.hit[o])
                oc_cmp(&r, &full, o, o + 1, false, d, len, l);
        if (len == full.det_n)
            oc_cmp(&r, &full, O_KIND, O_VOTES + 1, false, d, len, l);
        if (digests)
            digests[n + 1 + len] = oc_digest(&r);
    }
    return n + 1 + full.det_n + 1;
}

/* Every prefix of every sample and of its light variant, on every width
 * (each width's results identical). */
START_TEST(test_prefixes)
{
    int w[SIMD_WIDTHS], nw = oc_widths(w);
    const oc_sample *samples;
    int n_samples = oc_samples(&samples);
    static uint8_t v[1 << 16];
    for (int s = 0; s < n_samples; s++) {
        oc_every_width(check_prefixes, "prefix", 2 * samples[s].n + 2, samples[s].p, samples[s].n,
                    samples[s].label, w, nw);
        /* and a re-written one: pretty, escaped, shuffled, with decoys */
        size_t vn = vr_make(samples[s].p, samples[s].n, V_LIGHT, (uint64_t)s, v, sizeof v);
        char l[160];
        snprintf(l, sizeof l, "%s variant light", samples[s].label);
        oc_every_width(check_prefixes, "prefix", 2 * vn + 2, v, vn, l, w, nw);
    }
    REQUIRE(n_prefix_hits > 0);
}
END_TEST

static Suite *prefixes_suite(void)
{
    Suite *s = suite_create("optics_prefixes");
    TCase *t = su_tcase(s, "prefixes", oc_setup, oc_teardown, 900);
    tcase_add_test(t, test_prefixes);
    return s;
}

int main(void)
{
    int rc = su_run(prefixes_suite());
    if (su_nofork()) /* the counts live in this process */
        printf("optics_prefixes: %ld prefixes (%ld with a detail)\n", n_prefixes, n_prefix_hits);
    return rc;
}
