/* verify_cases.c: the messages and expectations of verify_cases.h, over
 * the fuzz harnesses' state (tests/fuzz/harness.h, included here only). */
#include "verify_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "support/complete.h"
#include "support/demo/literals.h"
#include "support/suite.h"

bb *vc_rest;
vc_piece vc_keep, vc_drop;
const char vc_layouts[6][4] = {"XDR", "DXR", "RXD", "RDX", "XRD", "DRX"};

/* ---- the literal details, completed for the schema at hand ----
 * The literals spell the demo's fields of Bug, Incident and Request. A
 * schema that adds fields to those cases (or to the records under them)
 * would leave them incomplete: a detail that is valid JSON and whose tag
 * names a case is completed (literals.h) with the members of a generated
 * detail of that case whose keys no literal spells. With the demo's schema
 * nothing changes, byte for byte. */

#define LITERAL_KEYS INCIDENT("Sev1", "Critical") BUG("Payments") REQUEST("1", "Free")

vc_piece vc_complete_detail(vc_piece d, bb *out)
{
    return lit_complete_detail(out, d.p, d.n, LITERAL_KEYS) ? vc_of(out) : d;
}

vc_piece vc_complete_member(vc_piece m, bb *out)
{
    const char *e = m.p + m.n, *p = cp_ws(m.p, e);
    if (p == e || *p != '"')
        return m;
    const char *q = p + 1;
    while (q < e && *q != '"')
        q += *q == '\\' ? 2 : 1;
    char key[16];
    size_t kn;
    if (q >= e || !cp_key(p + 1, (size_t)(q - p - 1), key, sizeof key, &kn) || kn != 6 ||
        memcmp(key, "detail", 6) != 0)
        return m;
    const char *v = cp_ws(q + 1, e);
    if (v == e || *v != ':')
        return m;
    v = cp_ws(v + 1, e);
    static bb val;
    vc_piece d = vc_complete_detail((vc_piece){v, (size_t)(e - v)}, &val);
    if (d.p == v)
        return m;
    out->n = 0;
    bb_put(out, m.p, (size_t)(v - m.p));
    bb_put(out, d.p, d.n);
    return vc_of(out);
}

void vc_init(void)
{
    fz_init();
    /* the rest of a generated Issue, detail taken out */
    iss_gen *g = iss_gen_new(2);
    size_t n = 0;
    const uint8_t *f = g != NULL ? iss_gen_frame(g, 1, 3, true, &n) : NULL;
    tr_message m = {f != NULL ? f + FR_HEADER_LEN : NULL, f != NULL ? n - FR_HEADER_LEN : 0};
    tr_view_Detail dv;
    if (f == NULL || !tr_scan_detail(m, &dv) || dv.p[dv.n] != ',') {
        fprintf(stderr, "verify_cases: the generated message has no detail first\n");
        exit(EXIT_FAILURE);
    }
    const uint8_t *r = dv.p + dv.n + 1;
    static bb rest;
    bb_put(&rest, r, (size_t)(m.p + m.n - 1 - r));
    vc_rest = &rest;
    iss_gen_free(g);
    static bb kb, db;
    vc_keep = vc_complete_member(VC_P(D_KEEP), &kb);
    vc_drop = vc_complete_member(VC_P(D_DROP), &db);
}

bb *vc_compose(const vc_piece *m, size_t k, size_t *pos)
{
    bb *b = bb_new();
    bb_put(b, "{", 1);
    for (size_t i = 0; i < k; i++) {
        if (i)
            bb_put(b, ",", 1);
        if (pos != NULL)
            pos[i] = b->n;
        bb_put(b, m[i].p, m[i].n);
    }
    bb_put(b, "}", 1);
    return b;
}

bool vc_rest_member(const char *key, size_t *start, size_t *end)
{
    /* the rest is NUL-terminated: the NUL ends the last member's number */
    const uint8_t *p = vc_rest->p, *e = vc_rest->p + vc_rest->n;
    size_t kn = strlen(key);
    while (p < e) {
        const uint8_t *ks = p, *ke = sk_string_end(p, e);
        REQUIRE(*p == '"' && ke != NULL && ke < e && *ke == ':');
        const uint8_t *ve = sk_value_end(ke + 1, e + 1);
        REQUIRE(ve != NULL);
        if ((size_t)(ke - ks) == kn + 2 && memcmp(ks + 1, key, kn) == 0) {
            *start = (size_t)(ks - vc_rest->p);
            *end = (size_t)(ve - vc_rest->p);
            return true;
        }
        p = ve < e ? ve + 1 : ve; /* past the ',' */
    }
    return false;
}

bb *vc_rest_without(const char *key)
{
    size_t s, end;
    REQUIREF(vc_rest_member(key, &s, &end), "no member %s in the generated message", key);
    bb *b = bb_new();
    if (s == 0) { /* first member: drop its following comma */
        REQUIRE(vc_rest->p[end] == ',');
        bb_put(b, vc_rest->p + end + 1, vc_rest->n - end - 1);
    } else { /* drop its preceding comma */
        bb_put(b, vc_rest->p, s - 1);
        bb_put(b, vc_rest->p + end, vc_rest->n - end);
    }
    return b;
}

/* ---- verdicts ---- */

tr_error vc_check(vf_level level, tr_message m) { return vf_check(fz.vc, level, m); }

tr_error vc_decode(tr_message m)
{
    ar_reset(&fz.dec);
    return tr_decode_Issue(m.p, m.n, &fz.dec, &fz.issue);
}

const tr_Issue *vc_issue(void) { return &fz.issue; }

vc_verdict vc_judge_decode(tr_message m)
{
    vc_verdict v = {-1, false};
    if (vc_decode(m).code == TR_E_OK) {
        rd_decoded(fz.rd, &fz.issue);
        v.keep = po_judge(&fz.policy, &fz.rd->ru, &v.kind);
    }
    return v;
}

vc_verdict vc_judge_optics(vf_level level, tr_message m)
{
    fz_verdict f = fz_judge_optics(level, m);
    return (vc_verdict){f.kind, f.keep};
}

void vc_differential(const char *name, tr_message m)
{
    const char *why = fz_differential(m.p, m.n);
    REQUIREF(why == NULL, "%s: %s", name, why);
}

void vc_expect_ok(const char *name, tr_message m, int kind, bool keep)
{
    vc_expect(name, m, TR_E_OK, 0, TR_E_OK, 0, kind, keep);
}

void vc_expect_bad(const char *name, tr_message m, tr_code jcode, size_t joff, tr_code scode, size_t soff)
{
    vc_expect(name, m, jcode, joff, scode, soff, -1, false);
}

void vc_expect(const char *name, tr_message m, tr_code jcode, size_t joff, tr_code scode, size_t soff,
               int kind, bool keep)
{
    tr_error j = vf_check(fz.vc, VF_JSON, m);
    REQUIREF(j.code == jcode && (jcode == TR_E_OK || joff == VC_ANY || j.offset == joff),
             "%s: json level: got %s at %zu, want %s at %zu", name, tr_error_name(j.code), j.offset,
             tr_error_name(jcode), joff);
    tr_error s = vf_check(fz.vc, VF_SCHEMA, m);
    tr_error d = vc_decode(m);
    REQUIREF(s.code == d.code && (s.code == TR_E_OK || s.offset == d.offset),
             "%s: schema level %s at %zu, decoder %s at %zu", name, tr_error_name(s.code), s.offset,
             tr_error_name(d.code), d.offset);
    REQUIREF(s.code == scode && (scode == TR_E_OK || soff == VC_ANY || s.offset == soff),
             "%s: schema level: got %s at %zu, want %s at %zu", name, tr_error_name(s.code),
             s.offset, tr_error_name(scode), soff);
    if (jcode != TR_E_OK)
        REQUIREF(scode != TR_E_OK, "%s: the table says not JSON but an Issue", name);
    vc_differential(name, m);
    vc_verdict want = scode == TR_E_OK ? (vc_verdict){kind, keep} : (vc_verdict){-1, false};
    vc_verdict got[4] = {vc_judge_decode(m), vc_judge_optics(VF_SCHEMA, m), vc_judge_optics(VF_JSON, m),
                         vc_judge_optics(VF_OFF, m)};
    static const char *const who[] = {"decode", "optics schema", "optics json", "optics off"};
    for (int i = 0; i < 4; i++) {
        if (i == 2 && scode != TR_E_OK && jcode == TR_E_OK)
            continue; /* JSON but no Issue: verify=json may read it */
        if (i == 3 && scode != TR_E_OK)
            continue; /* verify=off trusts what it does not read */
        REQUIREF(got[i].kind == want.kind && got[i].keep == want.keep,
                 "%s: %s says %d %s, want %d %s", name, who[i], got[i].kind,
                 got[i].keep ? "keep" : "drop", want.kind, want.keep ? "keep" : "drop");
    }
}

rd_reader *vc_reader(void) { return fz.rd; }

ar_arena *vc_arena(void) { return &fz.dec; }

tr_message vc_base(void) { return (tr_message){fz.base, fz.base_n}; }

/* ---- the fuzz harnesses ---- */

size_t vc_nharnesses(void) { return FZ_NHARNESSES; }

const char *vc_harness_name(size_t h) { return fz_harnesses[h].name; }

const char *vc_harness(size_t h, const uint8_t *p, size_t n) { return fz_harnesses[h].fn(p, n); }

bb *vc_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    REQUIREF(f != NULL, "cannot open %s", path);
    bb *b = bb_new();
    char tmp[65536];
    size_t r;
    while ((r = fread(tmp, 1, sizeof tmp, f)) > 0)
        bb_put(b, tmp, r);
    fclose(f);
    return b;
}
