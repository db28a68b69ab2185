/* test_optics_robustness.c: the optic scanners and the optics reader
 * (optics.h) on every prefix and on single-byte corruptions of a few
 * messages, under every SIMD width, and every width's results identical.
 *
 * The samples: at size 2 and 3 one message of each kind the schema has,
 * each in both layouts, and a re-written one of each (variants.h's light
 * variant: pretty, escaped, shuffled, with decoys).
 *
 * Prefixes: every prefix of a message at the end of a mapping, and every
 * prefix of its detail's bytes alone: each optic misses or reads exactly
 * what it reads on the whole message (a value cut short is a miss, never a
 * shorter value), and a message without a detail is never kept.
 * Corruptions: every byte from 64 before the detail to 64 after it (and
 * the first 64) set to each of 26 values, every 5th byte elsewhere to the
 * structural ones: no crash and no read outside the bytes; whenever the
 * decoder still accepts the message, every optic agrees with it; the same
 * for the detail's leaves on the corrupted detail alone.
 *
 * Every width scans every prefix of every sample, and the results must be
 * identical to the narrowest width's (portable); the corruptions of each
 * sample are spread over the widths, and those of three samples run on
 * every width, identical. Variants of generated messages of three sizes
 * must also read the same on every width. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issues.h"
#include "tr_model.h"
#include "tr_optics.h"
#include "support/demo/optics.h"
#include "support/demo/variants.h"
#include "support/simd.h"
#include "support/suite.h"

/* ---- the samples ---- */

/* A few messages: at size 2 and 3, one of each kind the schema has, each in
 * both layouts (Bug ones with a non-empty frame list). */
typedef struct {
    uint8_t *p;
    size_t n;
    char label[96];
} sample;

#define N_SAMPLES (2 * TR_DETAIL_COUNT * 2)
static sample samples[N_SAMPLES];
static int n_samples;

static void make_samples(void)
{
    if (n_samples)
        return;
    for (int size = 2; size <= 3; size++) {
        iss_gen *g = iss_gen_new(size);
        bool have[TR_DETAIL_COUNT] = {false};
        int nhave = 0;
        for (uint64_t i = 0; i < 1000 && nhave < TR_DETAIL_COUNT; i++) {
            const tr_Issue *is = iss_gen_issue(g, 5, i);
            int k = (int)is->detail.kind;
            REQUIRE(k >= 0 && k < TR_DETAIL_COUNT);
            if (have[k])
                continue;
            if (k == TR_DETAIL_BUG && is->detail.u.Bug.trace.frames.count == 0)
                continue;
            have[k] = true;
            nhave++;
            for (int first = 0; first < 2; first++) {
                REQUIRE(n_samples < N_SAMPLES);
                size_t n = oc_gen_msg(g, 5, i, first);
                sample *s = &samples[n_samples++];
                s->p = malloc(n);
                REQUIRE(s->p != NULL);
                memcpy(s->p, oc_base, n);
                s->n = n;
                snprintf(s->label, sizeof s->label, "size %d seed 5 i %llu %s", size,
                         (unsigned long long)i, first ? "detail-first" : "late");
            }
        }
        iss_gen_free(g);
    }
    REQUIRE(n_samples == N_SAMPLES);
}

/* ---- prefixes ---- */

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

/* ---- corruptions ---- */

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
        if (!dense && pos % 5 != 0) {
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

/* ---- every width ---- */

/* The widths this CPU has, narrowest (portable) first; how many. */
static int widths(int w[SIMD_WIDTHS])
{
    int k = 0;
    for (int i = 0; i < SIMD_WIDTHS; i++)
        if (oc_use_simd(i))
            w[k++] = i;
    REQUIRE(k > 0 && w[0] == 0);
    return k;
}

/* A sweep of results over the input [m, m+n) (check_prefixes,
 * check_corruptions): a digest of each into digests; how many. */
typedef size_t (*sweep_fn)(const uint8_t *m, size_t n, const char *label, uint64_t *digests);

/* The sweep under every width (at most cap results), each width's digests
 * the first's. */
static void every_width(sweep_fn sweep, const char *what, size_t cap, const uint8_t *m, size_t n,
                        const char *label, const int *w, int nw)
{
    uint64_t *first = calloc(cap, sizeof *first), *d = calloc(cap, sizeof *d);
    REQUIRE(first != NULL && d != NULL);
    for (int k = 0; k < nw; k++) {
        REQUIRE(oc_use_simd(w[k]));
        uint64_t *out = k == 0 ? first : d;
        memset(out, 0, cap * sizeof *out);
        REQUIRE(sweep(m, n, label, out) <= cap);
        for (size_t j = 0; k > 0 && j < cap; j++)
            OC_FAIL_IF(first[j] != d[j], m, n, "%s: %s result %zu: %s differs from %s", label, what, j,
                       simd_names[w[k]], simd_names[w[0]]);
    }
    free(first);
    free(d);
}

/* Every prefix of every sample and of its light variant, on every width
 * (each width's results identical). */
START_TEST(test_prefixes)
{
    int w[SIMD_WIDTHS], nw = widths(w);
    make_samples();
    static uint8_t v[1 << 16];
    for (int s = 0; s < n_samples; s++) {
        every_width(check_prefixes, "prefix", 2 * samples[s].n + 2, samples[s].p, samples[s].n,
                    samples[s].label, w, nw);
        /* and a re-written one: pretty, escaped, shuffled, with decoys */
        size_t vn = vr_make(samples[s].p, samples[s].n, V_LIGHT, (uint64_t)s, v, sizeof v);
        char l[160];
        snprintf(l, sizeof l, "%s variant light", samples[s].label);
        every_width(check_prefixes, "prefix", 2 * vn + 2, v, vn, l, w, nw);
    }
    REQUIRE(n_prefix_hits > 0);
}
END_TEST

/* The corruptions of every sample: the samples are dealt to the widths in
 * turn (a share each, and a light variant of its first sample), and every
 * 5th sample's run on every width, identical. */
START_TEST(test_corruptions)
{
    int w[SIMD_WIDTHS], nw = widths(w);
    make_samples();
    static uint8_t v[1 << 16];
    int share = (n_samples + SIMD_WIDTHS - 1) / SIMD_WIDTHS;
    for (int s = 0; s < n_samples; s++) {
        int k = s / share < nw ? s / share : nw - 1; /* the widths this CPU has, in turn */
        if (s % 5 == 0) {
            every_width(check_corruptions, "corruption", samples[s].n * N_CANDIDATES, samples[s].p,
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

/* Every variant of generated messages of three sizes reads the same on
 * every width. */
START_TEST(test_variants_identical)
{
    int w[SIMD_WIDTHS], nw = widths(w);
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

static Suite *robustness_suite(void)
{
    Suite *s = suite_create("optics_robustness");
    TCase *t = su_tcase(s, "robustness", oc_setup, NULL, 900);
    tcase_add_test(t, test_prefixes);
    tcase_add_test(t, test_corruptions);
    tcase_add_test(t, test_variants_identical);
    return s;
}

int main(void)
{
    int rc = su_run(robustness_suite());
    if (su_nofork()) /* the counts live in this process */
        printf("optics_robustness: %ld prefixes (%ld with a detail), %ld corruptions (%ld the decoder "
               "accepts)\n",
               n_prefixes, n_prefix_hits, n_corrupt, n_corrupt_valid);
    return rc;
}
