/* test_optics_corruptions.c: the optic scanners and the optics reader
 * (optics.h) on single-byte corruptions of a few messages (oc_samples: one
 * of each kind at size 2 and 3, both layouts) and of re-written ones
 * (variants.h's light variant).
 *
 * Every byte from 64 before the detail to 64 after it (and the first 64)
 * set to each of 26 values, every 5th byte elsewhere to the structural
 * ones: no crash and no read outside the bytes (each input ends at an
 * unmapped page); whenever the decoder still accepts the message, every
 * optic agrees with it; the same for the detail's leaves on the corrupted
 * detail alone. The samples are dealt to the SIMD widths in turn, and every
 * 5th sample's corruptions run on every width, whose results must be
 * identical to the narrowest width's (portable). Under TR_TEST_STRIDE=k
 * (make test-san) one position in k (suite.h's su_pick). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_model.h"
#include "tr_optics.h"
#include "support/demo/optics.h"
#include "support/demo/variants.h"
#include "support/simd.h"
#include "support/suite.h"

static const uint8_t corrupt_bytes[] = {0x00, 0x01, 0x1f, ' ', '\t', '"', '\\', '{', '}', '[', ']',
                                        ':', ',', '/', 'u', 'x', '0', '9', '-', 'e', 0x7f, 0x80,
                                        0xc3, 0xff};

/* Each byte is set to every one of corrupt_bytes, and to two neighbours of
 * its own value. */
#define N_CANDIDATES (sizeof corrupt_bytes + 2)

static long n_corrupt, n_corrupt_valid;

static bool is_structural(uint8_t b)
{
    return b == '"' || b == '\\' || b == '{' || b == '}' || b == '[' || b == ']' || b == 0 || b == 0xff;
}

/* Every single-byte change of [msg, msg+n) to each of corrupt_bytes and to
 * its neighbours: no crash and no read outside the bytes; whenever the
 * decoder still accepts the message, every optic agrees with it; the
 * detail's leaves likewise on the corrupted detail alone. hashes (when not
 * NULL) receives a digest of each result, in order; returns how many. */
static size_t check_corruptions(const uint8_t *msg, size_t n, const char *label, uint64_t *hashes)
{
    static uint8_t buf[1 << 16];
    REQUIRE(n <= sizeof buf);
    oc_res full;
    oc_check_msg(msg, n, label, &full);
    size_t count = 0;
    char l[200];
    for (size_t pos = 0; pos < n; pos++) {
        uint8_t cand[N_CANDIDATES];
        memcpy(cand, corrupt_bytes, sizeof corrupt_bytes);
        cand[sizeof corrupt_bytes] = (uint8_t)(msg[pos] + 1);
        cand[sizeof corrupt_bytes + 1] = (uint8_t)(msg[pos] ^ 0x20);
        /* every byte from 64 before the detail to 64 after it, and the
         * first 64; elsewhere every 5th byte, to the structural bytes only */
        bool dense = pos < 64 || (pos + 64 >= full.det_off && pos < full.det_off + full.det_n + 64);
        if ((!dense && pos % 5 != 0) || !su_pick(pos, n)) {
            count += sizeof cand;
            continue;
        }
        for (size_t ci = 0; ci < sizeof cand; ci++) {
            if (cand[ci] == msg[pos] || (!dense && !is_structural(cand[ci]))) {
                count++;
                continue;
            }
            memcpy(buf, msg, n);
            buf[pos] = cand[ci];
            uint8_t *m = oc_place_msg(buf, n);
            oc_res r;
            oc_scan_msg(m, n, &r);
            bool in_detail = pos >= full.det_off && pos < full.det_off + full.det_n;
            if (in_detail) {
                const uint8_t *d = oc_place_detail(m + full.det_off, full.det_n);
                oc_res dr;
                memset(&dr, 0, sizeof dr);
                oc_scan_leaves(d, full.det_n, &dr);
                if (hashes)
                    hashes[count] ^= oc_digest(&dr) * 31;
                /* the detail alone, against tr_dec_Detail when it accepts */
                tr_Detail dd;
                js_ctx c;
                ar_reset(&oc_arena);
                js_ctx_init(&c, d, &oc_arena);
                const uint8_t *q = tr_dec_Detail(&c, d, d + full.det_n, &dd);
                if (q == d + full.det_n) {
                    tr_Issue fake;
                    memset(&fake, 0, sizeof fake);
                    fake.detail = dd;
                    oc_res mr;
                    oc_model_res(&fake, &mr);
                    snprintf(l, sizeof l, "%s: detail byte %zu set to 0x%02x", label,
                             pos - full.det_off, cand[ci]);
                    oc_cmp(&dr, &mr, O_KIND, O_VOTES + 1, false, d, full.det_n, l);
                }
            }
            tr_Issue is;
            ar_reset(&oc_arena);
            if (tr_decode_Issue(m, n, &oc_arena, &is).code == TR_E_OK) {
                oc_res mr;
                oc_model_res(&is, &mr);
                snprintf(l, sizeof l, "%s: byte %zu set to 0x%02x (the decoder accepts it)", label,
                         pos, cand[ci]);
                oc_cmp(&r, &mr, 0, O_N, true, m, n, l);
                n_corrupt_valid++;
            }
            if (hashes)
                hashes[count] ^= oc_digest(&r);
            count++;
            n_corrupt++;
        }
    }
    return count;
}

/* The corruptions of every sample: the samples are dealt to the widths in
 * turn (a share each, and a light variant of its first sample), and every
 * 5th sample's run on every width, identical. */
START_TEST(test_corruptions)
{
    int w[SIMD_WIDTHS], nw = oc_widths(w);
    const oc_sample *samples;
    int n_samples = oc_samples(&samples);
    static uint8_t v[1 << 16];
    int share = (n_samples + SIMD_WIDTHS - 1) / SIMD_WIDTHS;
    for (int s = 0; s < n_samples; s++) {
        int k = s / share < nw ? s / share : nw - 1; /* the widths this CPU has, in turn */
        if (s % 5 == 0) {
            oc_every_width(check_corruptions, "corruption", samples[s].n * N_CANDIDATES, samples[s].p,
                        samples[s].n, samples[s].label, w, nw);
        } else {
            REQUIRE(oc_use_simd(w[k]));
            check_corruptions(samples[s].p, samples[s].n, samples[s].label, NULL);
        }
        if (s % share == 0) {
            REQUIRE(oc_use_simd(w[k]));
            size_t vn = vr_make(samples[s].p, samples[s].n, V_LIGHT, (uint64_t)s + 100, v, sizeof v);
            char l[160];
            snprintf(l, sizeof l, "%s variant light", samples[s].label);
            check_corruptions(v, vn, l, NULL);
        }
    }
    REQUIRE(n_corrupt_valid > 0);
}
END_TEST

static Suite *corruptions_suite(void)
{
    Suite *s = suite_create("optics_corruptions");
    TCase *t = su_tcase(s, "corruptions", oc_setup, oc_teardown, 900);
    tcase_add_test(t, test_corruptions);
    return s;
}

int main(void)
{
    int rc = su_run(corruptions_suite());
    if (su_nofork()) /* the counts live in this process */
        printf("optics_corruptions: %ld corruptions (%ld the decoder accepts)\n", n_corrupt, n_corrupt_valid);
    return rc;
}
