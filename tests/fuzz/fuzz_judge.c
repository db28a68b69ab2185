/* fuzz_judge.c: the harnesses of what a filter decides: the policy file,
 * and the verdicts of every reader at every verify level (docs/security.md's
 * rule). They check:
 *
 *   policy        jp_parse accepts only JSON, only known names, and what it
 *                 accepts means the default's three rules, whatever was on
 *                 the stack before
 *   differential  verify=schema optics give the decoder's verdict on every
 *                 input (vf_check then the rules, and rd_message),
 *                 verify=json accepts all the decoder accepts and reads its
 *                 values, and verify=off optics read the decoder's values
 *                 on every message the decoder accepts; at every SIMD width;
 *                 and at every level the default rules as C (triage-rulesc)
 *                 decide as the interpreter does, reading the same optics,
 *                 and rules reading two optics from the root in one walk of
 *                 it decide as rules reading the same values one walk each
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "jsonpolicy.h"

/* ======================================================= policy ===== */

/* jp_parse keeps jsmn's tokens in an uninitialized array on its stack. So
 * that a read of a token jsmn did not write gives the same answer on every
 * run, and one ASan sees, the stack below the caller is first filled with
 * tokens that point 1 MiB past any text: {type, start, end, size} as ints,
 * each a JSMN_ARRAY (2) or JSMN_PRIMITIVE (4) of one element, rotated by
 * `shift` ints since the token array may sit at any 4-byte offset. */
__attribute__((noinline)) static void fz_dirty_stack(int shift)
{
    volatile int junk[16384];
    static const int pattern[8] = {2, 1 << 20, (1 << 20) + 5, 1, 4, 1 << 20, (1 << 20) + 5, 1};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        junk[i] = pattern[(i + (size_t)shift) % 8];
}

const char *fz_policy(const uint8_t *d, size_t n)
{
    const char *why = NULL;
    char *t = (char *)fz_copy(d, n);
    po_policy p = {0};
    char err[128];
    bool ok = false;
    for (int shift = 0; shift < 8; shift += 1) {
        memset(err, 'x', sizeof err);
        fz_dirty_stack(shift);
        po_free(&p);
        bool ok2 = jp_parse(t, n, "fuzz", &tr_schema, &p, err, sizeof err);
        if (shift > 0)
            FZ_CHECK(ok2 == ok, "policy: the answer depends on what was on the stack");
        ok = ok2;
    }
    if (!ok) {
        FZ_CHECK(memchr(err, 0, sizeof err) != NULL, "policy: error message not terminated");
        FZ_CHECK(strncmp(err, "fuzz", 4) == 0, "policy: error message does not name the file");
        goto out;
    }
    FZ_CHECK(p.rules != NULL && ru_count(p.rules) == 3,
             "policy: an accepted file does not mean the three rules");
    js_ctx c;
    js_ctx_init(&c, (const uint8_t *)t, NULL);
    FZ_CHECK(js_validate(&c, (const uint8_t *)t, (const uint8_t *)t + n) != NULL,
             "policy: accepted a file that is not JSON");
out:
    po_free(&p);
    free(t);
    return why;
}

/* ================================================= differential ===== */

fz_verdict fz_judge_optics(vf_level level, tr_message m)
{
    fz_verdict v = {-1, false};
    if (rd_message(fz.rd, level, m))
        v.keep = po_judge(&fz.policy, &fz.rd->ru, &v.kind);
    return v;
}

/* verify=off's scanners read, on a message the decoder accepted into
 * fz.issue, what the model getters read: every optic a message reaches. */
static const char *fz_same_values(tr_message m)
{
    size_t en = fzm_encode(tr_schema.root, &fz.issue, fzm.enc2);
    bool canonical = en == m.n && memcmp(fzm.enc2, m.p, m.n) == 0;
    for (int i = 0; i < tr_schema.noptics; i++) {
        if (!op_from_message(&tr_schema, i))
            continue;
        op_value sv, gv;
        memset(&sv, 0, sizeof sv);
        memset(&gv, 0, sizeof gv);
        ar_reset(&fzm.scan);
        bool sh = op_scan_message(&tr_schema, i, m.p, m.n, &sv, fzm.scratch, &fzm.scan);
        bool gh = op_get_message(&tr_schema, i, &fz.issue, &gv);
        if (sh != gh)
            return "differential: verify=off optics hit or miss where the decoder does not";
        if (sh && !fzm_agree(&tr_schema.optics[i], &sv, &gv, canonical))
            return "differential: verify=off optics read other values than the decoder";
    }
    return NULL;
}

/* Which optics the subject has read for its message (bit i: optic i). */
static uint64_t fz_read_mask(const ru_subject *subj)
{
    uint64_t m = 0;
    for (int i = 0; i < tr_schema.noptics && i < 64; i++)
        m |= (uint64_t)ru_subject_read(subj, i) << i;
    return m;
}

/* The default rules as C and interpreted, on message m read at level: the
 * same deciding rule and verdict, having read the same optics. */
static const char *fz_compiled_as_interpreted(vf_level level, tr_message m)
{
    const ru_compiled *c = fz.policy.compiled;
    const ru_rules *r = fz.policy.rules;
    ru_subject *subj = &fz.rd->ru;
    if (c == NULL)
        return "differential: the default rules are not judged as C";
    if (!rd_message(fz.rd, level, m))
        return NULL;
    int dc = c->decide(r, subj);
    uint64_t nc = subj->reads, mc = fz_read_mask(subj);
    (void)rd_message(fz.rd, level, m);
    int di = ru_decide(r, subj);
    if (dc != di)
        return "differential: the default rules as C decide by another rule than interpreted";
    if (nc != subj->reads || mc != fz_read_mask(subj))
        return "differential: the default rules as C read other optics than interpreted";
    (void)rd_message(fz.rd, level, m);
    bool jc = c->judge(r, subj);
    mc = fz_read_mask(subj);
    (void)rd_message(fz.rd, level, m);
    if (jc != ru_judge(r, subj) || mc != fz_read_mask(subj))
        return "differential: the default rules as C judge otherwise than interpreted";
    return NULL;
}

/* The codes that say "not JSON" (or nested past the limit), as opposed to
 * "JSON, but not an Issue" (TR_E_TOO_LONG is the latter: only an f64
 * field's number is held to JS_MAX_NUMBER_LEN). */
static bool fz_json_code(tr_code c)
{
    switch (c) {
    case TR_E_EOF: case TR_E_SYNTAX: case TR_E_TRAILING: case TR_E_BOM: case TR_E_DEPTH:
    case TR_E_CTRL: case TR_E_ESCAPE: case TR_E_SURROGATE: case TR_E_UTF8: case TR_E_NUMBER:
        return true;
    default:
        return false;
    }
}

/* Rules that read two optics from the message's root (the detail, sought,
 * and severityOf: one walk of the root for both, level.h) and rules that
 * read the same values through the detail (each optic its own walk): the
 * same rule decides, at every level. */
static const char *fz_shared_as_alone(vf_level level, tr_message m)
{
    static ru_rules *shared, *alone;
    if (shared == NULL) {
        static const char a[] = "keep kind == Incident && severityOf in [Sev1, Sev2]\n"
                                "keep has(detail) && severityOf == Sev3\n";
        static const char b[] = "keep kind == Incident && severity in [Sev1, Sev2]\n"
                                "keep has(detail) && severity == Sev3\n";
        char err[256];
        shared = ru_parse(a, strlen(a), "shared", &tr_schema, err, sizeof err);
        alone = ru_parse(b, strlen(b), "alone", &tr_schema, err, sizeof err);
        if (shared == NULL || alone == NULL || ru_root_walk(shared) != 2)
            return "differential: the rules sharing the root's walk do not load so";
    }
    if (!rd_message(fz.rd, level, m))
        return NULL;
    int da = ru_decide(shared, &fz.rd->ru);
    (void)rd_message(fz.rd, level, m);
    if (da != ru_decide(alone, &fz.rd->ru))
        return "differential: rules reading the root in one walk decide otherwise than each "
               "optic alone";
    return NULL;
}

const char *fz_differential(const uint8_t *d, size_t n)
{
    const char *why = NULL;
    uint8_t *m = fz_copy(d, n);
    tr_message msg = {m, n};

    /* The decoder: a message it rejects is `none drop`. */
    tr_error e = fz_decode_into(m, n, &fz.dec, &fz.issue);
    fz_verdict dec = {-1, false};
    if (e.code == TR_E_OK) {
        rd_decoded(fz.rd, &fz.issue);
        dec.keep = po_judge(&fz.policy, &fz.rd->ru, &dec.kind);
    }

    for (int i = 0; i < fz.nimpls; i++) {
        fz_use_impl(i);
        tr_error vj = vf_check(fz.vc, VF_JSON, msg);
        FZ_CHECK(e.code != TR_E_OK || vj.code == TR_E_OK, "differential: verify=json rejects what decodes");
        tr_error vs = vf_check(fz.vc, VF_SCHEMA, msg);
        FZ_CHECK(vs.code == e.code && (vs.code == TR_E_OK || vs.offset == e.offset),
                 "differential: verify=schema and the decoder differ in code or offset");
        FZ_CHECK(vs.code == TR_E_OK || vj.code != TR_E_OK || !fz_json_code(vs.code),
                 "differential: verify=schema rejects as bad JSON what verify=json accepts");

        /* judge --reader optics at each level */
        fz_verdict opt = fz_judge_optics(VF_SCHEMA, msg);
        FZ_CHECK(opt.kind == dec.kind && opt.keep == dec.keep,
                 "differential: verify=schema optics and decode give different verdicts");
        static const vf_level levels[] = {VF_OFF, VF_JSON, VF_SCHEMA};
        for (int l = 0; l < 3; l++) {
            const char *w = fz_compiled_as_interpreted(levels[l], msg);
            FZ_CHECK(w == NULL, w);
            w = fz_shared_as_alone(levels[l], msg);
            FZ_CHECK(w == NULL, w);
        }
        fz_verdict json = fz_judge_optics(VF_JSON, msg);
        if (vj.code != TR_E_OK)
            FZ_CHECK(json.kind == -1 && !json.keep, "differential: verify=json judged a message it rejects");

        /* verify=json and off, on what the decoder accepts: the same verdict, and off reads the same values */
        if (e.code == TR_E_OK) {
            FZ_CHECK(json.kind == dec.kind && json.keep == dec.keep,
                     "differential: verify=json optics and decode differ on a message that decodes");
            fz_verdict off = fz_judge_optics(VF_OFF, msg);
            FZ_CHECK(off.kind == dec.kind && off.keep == dec.keep,
                     "differential: verify=off optics and decode differ on a message that decodes");
            const char *w = fz_same_values(msg);
            FZ_CHECK(w == NULL, w);
        }
    }
out:
    fz_use_impl(fz.nimpls - 1);
    free(m);
    return why;
}
