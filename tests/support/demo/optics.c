/* optics.c: the scanners against the decoder (optics.h). */
#include "optics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "reader.h"
#include "tr_optics.h"
#include "support/fixture.h"
#include "support/guard.h"
#include "support/simd.h"
#include "support/tree.h"

bool oc_use_simd(int i)
{
    if (!simd_use(i))
        return false;
#if defined(__x86_64__) || defined(__i386__)
    if (i >= 2 && !__builtin_cpu_supports("pclmul"))
        return false; /* skip.c then falls back to sse2 */
#endif
    ck_assert_str_eq(sk_impl_name(), simd_names[i]);
    ck_assert_str_eq(js_simd_name(), simd_names[i]);
    return true;
}

#define GUARD_CAP (8u << 20)
static gd_guard g_msg = GD_GUARD(GUARD_CAP), g_det = GD_GUARD(GUARD_CAP);

uint8_t *oc_place_msg(const void *data, size_t n) { return gd_place(&g_msg, data, n); }
uint8_t *oc_place_detail(const void *data, size_t n) { return gd_place(&g_det, data, n); }

/* ---- the policy, arenas ---- */

static po_policy pol;
static rd_reader *rd; /* both readers' rules reader */
ar_arena oc_arena;
static uint8_t *dec_mem;
#define DEC_CAP (32u << 20)

void oc_setup(void)
{
    if (rd == NULL) {
        rd_choice none = {0}; /* the default rules */
        char err[256];
        REQUIREF(rd_policy(&none, &pol, err, sizeof err), "%s", err);
        rd = rd_new();
        REQUIRE(rd != NULL);
    }
    if (dec_mem == NULL) {
        dec_mem = fx_mapped(DEC_CAP);
    }
    ar_init(&oc_arena, dec_mem, DEC_CAP);
    tj_reset();
    sk_init();
}

void oc_teardown(void)
{
    rd_free(rd);
    rd = NULL;
    po_free(&pol);
}

/* ---- failures keep their input ---- */

static int fail_count;

const char *oc_dump(const uint8_t *m, size_t n)
{
    static char path[128];
    snprintf(path, sizeof path, "/tmp/test_optics_fail_%d_%d.json", (int)getpid(), fail_count++);
    FILE *f = fopen(path, "wb");
    if (f != NULL) {
        fwrite(m, 1, n, f);
        fclose(f);
    }
    return path;
}


/* ---- what each reader reads ---- */

const char *const oc_names[O_N] = {"detail", "kind", "severity", "tier",
                                         "module", "plan", "votes", "severityOf"};


/* The leaves over a detail's bytes (kind, severity, tier, module, plan, votes). */
void oc_scan_leaves(const uint8_t *p, size_t n, oc_res *r)
{
    tr_view_Detail v = {p, n};
    tr_Detail_kind k;
    tr_Severity s;
    tr_Tier t;
    tr_Module m;
    tr_Plan pl;
    tr_Votes vo;
    uint64_t mem[64];
    ar_arena a;
    ar_init(&a, mem, sizeof mem);
    if ((r->hit[O_KIND] = tr_scan_kind(v, &k)))
        r->val[O_KIND] = k;
    if ((r->hit[O_SEV] = tr_scan_severity(v, &s)))
        r->val[O_SEV] = s;
    if ((r->hit[O_TIER] = tr_scan_tier(v, &t)))
        r->val[O_TIER] = t;
    if ((r->hit[O_MOD] = tr_scan_module(v, &m)))
        r->val[O_MOD] = m;
    if ((r->hit[O_PLAN] = tr_scan_plan(v, &pl)))
        r->val[O_PLAN] = pl;
    if ((r->hit[O_VOTES] = tr_scan_votes(v, &vo, &a)))
        r->val[O_VOTES] = vo.count;
}

/* The optics reader's verdict on a message's bytes (verify off). */
static void judge_bytes(const uint8_t *p, size_t n, oc_res *r)
{
    REQUIRE(rd_message(rd, VF_OFF, (tr_message){p, n}));
    r->jkind = -1;
    r->keep = po_judge(&pol, &rd->ru, &r->jkind);
}

/* Everything from a message's bytes. */
void oc_scan_msg(const uint8_t *p, size_t n, oc_res *r)
{
    memset(r, 0, sizeof *r);
    r->jkind = -1;
    tr_message msg = {p, n};
    tr_view_Detail v;
    tr_Severity s;
    if ((r->hit[O_SEVOF] = tr_scan_severityOf(msg, &s)))
        r->val[O_SEVOF] = s;
    if (!(r->hit[O_DETAIL] = tr_scan_detail(msg, &v))) {
        judge_bytes(p, n, r);
        /* No whole detail (absent, or cut short: a malformed message at
         * verify=off). The reader reads the kind into the detail from where
         * it starts (tr_seek_detail), so it has the kind exactly when the
         * kind's own value is there, complete; without a detail at all,
         * no kind: dropped. */
        tr_view_Detail at;
        tr_Detail_kind k;
        int want = tr_seek_detail(msg, &at) && tr_scan_kind(at, &k) ? (int)k : -1;
        OC_FAIL_IF(r->jkind != want, p, n, "no whole detail: judged kind %d, the kind there %d",
                r->jkind, want);
        OC_FAIL_IF(want < 0 && r->keep, p, n, "no detail, yet judged keep");
        return;
    }
    if (v.p < p || v.n > n || v.p + v.n > p + n) {
        OC_FAIL_IF(true, p, n, "detail view [%p, +%zu) outside the message [%p, +%zu)",
                (const void *)v.p, v.n, (const void *)p, n);
    }
    r->det_off = (size_t)(v.p - p);
    r->det_n = v.n;
    tr_Detail d;
    js_ctx c;
    ar_reset(&oc_arena);
    js_ctx_init(&c, v.p, &oc_arena);
    const uint8_t *q = tr_dec_Detail(&c, v.p, v.p + v.n, &d);
    r->val[O_DETAIL] = q == v.p + v.n ? (int64_t)d.kind : -1;
    oc_scan_leaves(v.p, v.n, r);
    judge_bytes(p, n, r);
}

/* The same paths over a decoded issue (tr_get_*), and the model reader's verdict. */
void oc_model_res(const tr_Issue *is, oc_res *r)
{
    memset(r, 0, sizeof *r);
    const tr_Detail *d;
    r->hit[O_DETAIL] = tr_get_detail(is, &d);
    REQUIRE(r->hit[O_DETAIL]);
    r->val[O_DETAIL] = d->kind;
    tr_Detail_kind k;
    tr_Severity s;
    tr_Tier t;
    tr_Module m;
    tr_Plan pl;
    const tr_Votes *vo;
    if ((r->hit[O_KIND] = tr_get_kind(d, &k)))
        r->val[O_KIND] = k;
    if ((r->hit[O_SEV] = tr_get_severity(d, &s)))
        r->val[O_SEV] = s;
    if ((r->hit[O_TIER] = tr_get_tier(d, &t)))
        r->val[O_TIER] = t;
    if ((r->hit[O_MOD] = tr_get_module(d, &m)))
        r->val[O_MOD] = m;
    if ((r->hit[O_PLAN] = tr_get_plan(d, &pl)))
        r->val[O_PLAN] = pl;
    if ((r->hit[O_VOTES] = tr_get_votes(d, &vo)))
        r->val[O_VOTES] = vo->count;
    if ((r->hit[O_SEVOF] = tr_get_severityOf(is, &s)))
        r->val[O_SEVOF] = s;
    rd_decoded(rd, is);
    r->jkind = -1;
    r->keep = po_judge(&pol, &rd->ru, &r->jkind);
}

static void fmt_o(const oc_res *r, int o, char *buf, size_t cap)
{
    if (r->hit[o])
        snprintf(buf, cap, "%lld", (long long)r->val[o]);
    else
        snprintf(buf, cap, "miss");
}

/* The optics in [o0, o1) and (when verdict) the verdicts must be equal. */
void oc_cmp(const oc_res *got, const oc_res *want, int o0, int o1, bool verdict,
                    const uint8_t *m, size_t n, const char *label)
{
    for (int o = o0; o < o1; o++) {
        bool same = got->hit[o] == want->hit[o] && (!got->hit[o] || got->val[o] == want->val[o]);
        if (!same) {
            char g[32], w[32];
            fmt_o(got, o, g, sizeof g);
            fmt_o(want, o, w, sizeof w);
            OC_FAIL_IF(true, m, n, "%s: optic %s: scanner %s, reference %s", label, oc_names[o], g, w);
        }
    }
    if (verdict)
        OC_FAIL_IF(got->keep != want->keep || got->jkind != want->jkind, m, n,
                "%s: verdict optics %s/%d, model %s/%d", label, got->keep ? "keep" : "drop",
                got->jkind, want->keep ? "keep" : "drop", want->jkind);
}

long oc_checked;

/* The central check: the message must decode, and every optic and the
 * verdict must match the model; the detail's leaves again on a copy of its
 * bytes at the end of a mapping. *out (if not NULL) receives the scan. */
void oc_check_msg(const uint8_t *msg, size_t n, const char *label, oc_res *out)
{
    const uint8_t *m = oc_place_msg(msg, n);
    tr_Issue is;
    ar_reset(&oc_arena);
    tr_error e = tr_decode_Issue(m, n, &oc_arena, &is);
    OC_FAIL_IF(e.code != TR_E_OK, msg, n, "%s: the decoder rejects it: %s at %zu (%s)", label,
            tr_error_name(e.code), e.offset, e.what ? e.what : "");
    oc_res mr, sr, dr;
    oc_model_res(&is, &mr);
    oc_scan_msg(m, n, &sr);
    oc_cmp(&sr, &mr, 0, O_N, true, m, n, label);
    memcpy(&dr, &sr, sizeof dr);
    const uint8_t *d = oc_place_detail(m + sr.det_off, sr.det_n);
    oc_scan_leaves(d, sr.det_n, &dr);
    oc_cmp(&dr, &mr, O_KIND, O_VOTES + 1, false, d, sr.det_n, label);
    oc_checked++;
    if (out != NULL)
        *out = sr;
}
uint64_t oc_digest(const oc_res *r)
{
    uint64_t h = 1469598103934665603ull;
    for (int o = 0; o < O_N; o++) {
        h = (h ^ (uint64_t)r->hit[o]) * 1099511628211ull;
        h = (h ^ (uint64_t)(r->hit[o] ? r->val[o] : 0)) * 1099511628211ull;
    }
    h = (h ^ r->det_off) * 1099511628211ull;
    h = (h ^ r->det_n) * 1099511628211ull;
    h = (h ^ (uint64_t)r->keep) * 1099511628211ull;
    h = (h ^ (uint64_t)(int64_t)r->jkind) * 1099511628211ull;
    return h;
}

/* ---- generated messages ---- */

uint8_t oc_base[ISS_MAX_MESSAGE];

/* Issue (seed, i) at size, encoded with detail first or in place, copied
 * into oc_base. */
size_t oc_gen_msg(iss_gen *g, uint64_t seed, uint64_t i, bool first)
{
    size_t n;
    const uint8_t *f = iss_gen_frame(g, seed, i, first, &n);
    REQUIRE(f != NULL);
    REQUIRE(n >= 5);
    memcpy(oc_base, f + 5, n - 5);
    return n - 5;
}

/* ---- samples, and every width ---- */

#define N_SAMPLES (2 * TR_DETAIL_COUNT * 2)

int oc_samples(const oc_sample **out)
{
    static oc_sample samples[N_SAMPLES];
    static int n_samples;
    *out = samples;
    if (n_samples)
        return n_samples;
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
                oc_sample *s = &samples[n_samples++];
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
    return n_samples;
}

int oc_widths(int w[SIMD_WIDTHS])
{
    int k = 0;
    for (int i = 0; i < SIMD_WIDTHS; i++)
        if (oc_use_simd(i))
            w[k++] = i;
    REQUIRE(k > 0 && w[0] == 0);
    return k;
}

void oc_every_width(oc_sweep sweep, const char *what, size_t cap, const uint8_t *m, size_t n,
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

