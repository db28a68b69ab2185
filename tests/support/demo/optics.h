/* optics.h: reading a message with the optic scanners and with the decoder,
 * and comparing the two, for the optics suites (tests/unit/test_optics_*.c).
 *
 * The reference is always the full decoder: a message is decoded with
 * tr_decode_Issue and each optic read with tr_get_<name>; the scanners
 * (build/gen/tr_scan_*.c over runtime/skip.c) must give the same hit or
 * miss and the same value, and po_judge (the default rules) the same
 * verdict and kind through the decode reader (rd_decoded) and the optics
 * reader (rd_message, verify off). Every input the scanners read here ends
 * at an unmapped page (oc_place_msg), and a detail's leaf scanners are also
 * run on a copy of the detail's bytes that ends at its own unmapped page
 * (oc_place_detail).
 *
 * On a failure the offending input is written to
 * /tmp/test_optics_fail_*.json (its path is in the message). Needs the
 * demo's schema and demo/. Not thread-safe. */
#ifndef TRIAGE_TEST_OPTICS_H
#define TRIAGE_TEST_OPTICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "issues.h"
#include "skip.h"
#include "tr_model.h"
#include "support/simd.h"
#include "support/suite.h"

/* The checked fixture of every optics test case: the policy and readers,
 * the decoder's arena, the tree arena (tree.h); oc_teardown frees the
 * policy and readers (LeakSanitizer then has less to scan when the test's
 * process ends). */
void oc_setup(void);
void oc_teardown(void);

/* The decoder's arena (32 MiB), reset by each use. */
extern ar_arena oc_arena;

/* Width i of simd.h for the scanners, the walk (skip.c) and json.c alike;
 * false when the CPU lacks it, or lacks PCLMUL (skip.c then takes sse2). */
bool oc_use_simd(int i);

/* Copies of n bytes ending right before an unmapped page: the message's,
 * and the detail's (a second guard, so a detail can be placed while its
 * message is). */
uint8_t *oc_place_msg(const void *data, size_t n);
uint8_t *oc_place_detail(const void *data, size_t n);

/* Fails the test with the message (printf format) when cond holds, naming
 * the SIMD width and a file holding the input [m, m+n). */
#define OC_FAIL_IF(cond, m, n, ...)                                                            \
    do {                                                                                       \
        if (cond) {                                                                            \
            char fail_msg_[512];                                                               \
            snprintf(fail_msg_, sizeof fail_msg_, __VA_ARGS__);                                \
            ck_abort_msg("%s [impl %s; input %zu bytes in %s]", fail_msg_, sk_impl_name(),     \
                         (size_t)(n), oc_dump((m), (n)));                                      \
        }                                                                                      \
    } while (0)
const char *oc_dump(const uint8_t *m, size_t n);

/* ---- what each reader reads ---- */

/* The optics compared: the detail itself (its view, and the kind
 * tr_dec_Detail reads from it), its leaves, and severityOf (a path from
 * the root). */
enum { O_DETAIL, O_KIND, O_SEV, O_TIER, O_MOD, O_PLAN, O_VOTES, O_SEVOF, O_N };
extern const char *const oc_names[O_N];

typedef struct {
    bool hit[O_N];
    int64_t val[O_N]; /* detail: the kind tr_dec_Detail reads from the view (-1: none) */
    size_t det_off, det_n; /* the detail's view, as an offset into the message */
    bool keep;
    int jkind;
} oc_res;

/* The leaves over a detail's bytes (kind, severity, tier, module, plan, votes). */
void oc_scan_leaves(const uint8_t *p, size_t n, oc_res *r);

/* Everything the scanners and the optics reader read from a message's
 * bytes. Without a whole detail, the verdict must be the one the kind
 * where the detail starts gives (checked here). */
void oc_scan_msg(const uint8_t *p, size_t n, oc_res *r);

/* The same paths over a decoded issue (tr_get_*), and the model reader's verdict. */
void oc_model_res(const tr_Issue *is, oc_res *r);

/* The optics in [o0, o1) and (when verdict) the verdicts must be equal;
 * [m, m+n) is the input, label names it. */
void oc_cmp(const oc_res *got, const oc_res *want, int o0, int o1, bool verdict, const uint8_t *m,
            size_t n, const char *label);

/* The central check: the message must decode, and every optic and the
 * verdict must match the model; the detail's leaves again on a copy of its
 * bytes at the end of a mapping. *out (if not NULL) receives the scan. */
void oc_check_msg(const uint8_t *msg, size_t n, const char *label, oc_res *out);

/* Messages checked in full by oc_check_msg, for a suite's summary. */
extern long oc_checked;

/* A digest of everything in r, to compare results across widths. */
uint64_t oc_digest(const oc_res *r);

/* ---- generated messages ---- */

/* Issue (seed, i) of g, encoded with detail first or in place, copied into
 * oc_base; returns its length. */
extern uint8_t oc_base[ISS_MAX_MESSAGE];
size_t oc_gen_msg(iss_gen *g, uint64_t seed, uint64_t i, bool first);

/* ---- samples, and every width ---- */

/* A few messages: at size 2 and 3 one of each kind the schema has, each in
 * both layouts (Bug ones with a non-empty frame list); made once per
 * process. Returns how many, *out the first. */
typedef struct {
    uint8_t *p;
    size_t n;
    char label[96];
} oc_sample;
int oc_samples(const oc_sample **out);

/* The widths of simd.h this CPU has (oc_use_simd), narrowest (portable)
 * first; how many. */
int oc_widths(int w[SIMD_WIDTHS]);

/* A sweep of results over the input [m, m+n) (every prefix, every
 * corruption): a digest of each into digests (zeroed by the caller) when
 * not NULL; returns how many. */
typedef size_t (*oc_sweep)(const uint8_t *m, size_t n, const char *label, uint64_t *digests);

/* The sweep under each of the nw widths w (at most cap results): each
 * width's digests must be the first's, what names a result in a failure. */
void oc_every_width(oc_sweep sweep, const char *what, size_t cap, const uint8_t *m, size_t n,
                    const char *label, const int *w, int nw);

#endif
