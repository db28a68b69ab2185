/* test_optics_threats.c: docs/security.md's cases for the optic scanners and the
 * optics reader at verify=off (optics.h), built on generated issues whose
 * detail is replaced by a literal one of each case.
 *
 * On text the decoder rejects a scanner may hit or miss, but never
 * misreads: a field twice in one object (TR_E_DUPLICATE for the decoder)
 * reads as its first occurrence, whether the detail itself, its tag or a
 * leaf's record is repeated (a second tag naming another case may turn a
 * leaf into a miss); malformed text (cut short, unbalanced, bad escapes or
 * UTF-8, too deep) is a miss or the same value, never another one; a
 * detail of no known kind is dropped by both readers. On text the decoder
 * accepts, every scanner agrees with it exactly: escapes in keys and values,
 * keys that differ from wanted ones only in letter case (unknown fields),
 * the wanted keys nested in objects, arrays and strings elsewhere, and
 * escapes and quotes at every offset from a 64-byte block's start (the
 * walk's carries across blocks, once per SIMD width).
 *
 * The literals spell the demo's fields; a schema that adds fields to its
 * cases gets them completed from a generated detail of the same case
 * (literals.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issues.h"
#include "tr_model.h"
#include "tr_optics.h"
#include "support/bytes.h"
#include "support/demo/literals.h"
#include "support/demo/optics.h"
#include "support/demo/variants.h"
#include "support/simd.h"
#include "support/suite.h"
#include "support/tree.h"

/* Literal details, complete for the decoder. */
#define INC(sev, tier)                                                                  \
    "{\"type\":\"Incident\",\"severity\":\"" sev "\",\"startedAt\":1,\"mitigated\":false," \
    "\"impact\":{\"users\":3,\"errorRate\":0.25,\"service\":{\"name\":\"api\",\"tier\":\"" tier \
    "\",\"region\":\"eu\"}}}"
#define BUG(mod)                                                                        \
    "{\"type\":\"Bug\",\"component\":\"c\",\"build\":\"b\",\"reproducible\":true,"     \
    "\"trace\":{\"exception\":\"E\",\"message\":\"m\",\"frames\":[{\"module\":\"" mod     \
    "\",\"function\":\"f\",\"file\":\"x.c\",\"line\":1},{\"module\":\"Auth\",\"function\":\"g\"," \
    "\"file\":\"y.c\",\"line\":2}]}}"
#define REQ(count, plan)                                                                \
    "{\"type\":\"Request\",\"product\":\"p\",\"votes\":{\"count\":" count "},"           \
    "\"quarter\":\"Q1\",\"requester\":{\"name\":\"n\",\"contract\":{\"plan\":\"" plan        \
    "\",\"seats\":5,\"renewsAt\":9}}}"

/* ---- the literals, completed for the schema at hand ----
 * The literals spell the demo's fields of Bug, Incident and Request; a
 * schema that adds a field to those cases, or to a record under them, gets
 * them completed from a generated detail of the case (literals.h). */

#define LITERAL_KEYS INC("Sev1", "Critical") BUG("Payments") REQ("200", "Enterprise")

/* The case detail d's tag names (\u escapes of ASCII undone), or -1. */
static int tag_case(const tj *d)
{
    if (d == NULL || d->t != TJ_OBJ)
        return -1;
    long t = tj_find(d, "type");
    if (t < 0 || d->items[t]->t != TJ_STR)
        return -1;
    const char *r = d->items[t]->s;
    size_t rn = d->items[t]->n, n = 0;
    char name[128];
    for (size_t i = 0; i < rn && n < sizeof name; i++) {
        if (r[i] == '\\' && i + 5 < rn && r[i + 1] == 'u') {
            unsigned u;
            if (sscanf(r + i + 2, "%4x", &u) != 1 || u >= 0x80)
                return -1;
            name[n++] = (char)u;
            i += 5;
        } else if (r[i] == '\\') {
            return -1;
        } else {
            name[n++] = r[i];
        }
    }
    return tr_Detail_from(name, n);
}

/* The detail text completed (a static buffer, until the next call), or
 * the text itself when there is nothing to complete. */
static const char *completed(const char *detail)
{
    static bb out;
    return lit_complete_detail(&out, detail, strlen(detail), LITERAL_KEYS) ? (const char *)out.p : detail;
}

/* A member's value (text) for detail d, completed as d's own member key. */
static tj *completed_member(const tj *d, const char *key, const char *value)
{
    int k = tag_case(d);
    if (k < 0)
        return tj_parse0(value);
    static bb out;
    lit_complete_member(&out, k, key, value, LITERAL_KEYS);
    return tj_parse((const char *)out.p, out.n);
}

/* Replaces root's detail by the detail text, completed. */
static void set_detail(tj *root, const char *detail)
{
    long i = tj_find(root, "detail");
    REQUIRE(i >= 0);
    root->items[i] = tj_parse0(completed(detail));
}

static iss_gen *threat_gen;
static uint8_t threat_base[ISS_MAX_MESSAGE];
static size_t threat_base_n;

/* A generated issue (size 2) as a tree, with its detail replaced by the
 * literal detail text (completed) and detail first or in place. */
static tj *threat_tree(const char *detail, bool first)
{
    if (threat_gen == NULL) {
        threat_gen = iss_gen_new(2);
        threat_base_n = oc_gen_msg(threat_gen, 3, 3, false);
        memcpy(threat_base, oc_base, threat_base_n);
    }
    tj_reset();
    tj *root = tj_parse((const char *)threat_base, threat_base_n);
    set_detail(root, detail);
    if (first)
        vr_detail_first(root);
    return root;
}

static uint8_t threat_buf[1 << 22];

static size_t write_tree(const tj *t) { return tj_write_compact(t, threat_buf, sizeof threat_buf); }

/* The reference a detail text gives, completed (the model's optics and verdict). */
static oc_res ref_of(const char *detail)
{
    detail = completed(detail);
    size_t n = strlen(detail);
    tr_Detail d;
    js_ctx c;
    ar_reset(&oc_arena);
    js_ctx_init(&c, (const uint8_t *)detail, &oc_arena);
    const uint8_t *q = tr_dec_Detail(&c, (const uint8_t *)detail, (const uint8_t *)detail + n, &d);
    REQUIREF(q == (const uint8_t *)detail + n, "test literal does not decode: %s", detail);
    tr_Issue fake;
    memset(&fake, 0, sizeof fake);
    fake.detail = d;
    oc_res r;
    oc_model_res(&fake, &r);
    return r;
}

/* Expectations on an input the decoder rejects. */
enum { E_ANY, E_MISS, E_SAME, E_MISS_OR_SAME };

static long n_threats;

/* The decoder must reject [m, m+n); each optic o must then meet mode[o]
 * against want (E_SAME: hit with want's value, or miss where want misses).
 * The verdict: with want (same_verdict), or drop when no detail is read. */
static void expect_rejected(const uint8_t *msg, size_t n, const char *label, const oc_res *want,
                            const int mode[O_N], bool same_verdict)
{
    const uint8_t *m = oc_place_msg(msg, n);
    tr_Issue is;
    ar_reset(&oc_arena);
    tr_error e = tr_decode_Issue(m, n, &oc_arena, &is);
    OC_FAIL_IF(e.code == TR_E_OK, m, n, "%s: the decoder accepts it", label);
    oc_res r;
    oc_scan_msg(m, n, &r);
    char l[256];
    for (int o = 0; o < O_N; o++) {
        snprintf(l, sizeof l, "%s (decoder: %s)", label, tr_error_name(e.code));
        switch (mode[o]) {
        case E_MISS:
            OC_FAIL_IF(r.hit[o], m, n, "%s: optic %s hits (%lld), expected a miss", l, oc_names[o],
                    (long long)r.val[o]);
            break;
        case E_SAME:
            oc_cmp(&r, want, o, o + 1, false, m, n, l);
            break;
        case E_MISS_OR_SAME:
            if (r.hit[o])
                oc_cmp(&r, want, o, o + 1, false, m, n, l);
            break;
        default:
            break;
        }
    }
    if (same_verdict)
        oc_cmp(&r, want, 0, 0, true, m, n, label);
    if (!r.hit[O_DETAIL] || !r.hit[O_KIND])
        OC_FAIL_IF(r.keep, m, n, "%s: kept without a detail or a kind", label);
    n_threats++;
}

static void modes_all(int mode[O_N], int v)
{
    for (int o = 0; o < O_N; o++)
        mode[o] = v;
}

/* A message the decoder accepts: everything as the decoder reads it. */
static void expect_accepted(const uint8_t *msg, size_t n, const char *label)
{
    oc_check_msg(msg, n, label, NULL);
    n_threats++;
}

/* For one of the kinds' literal details: its text and reference. */
static const char *const lit_details[] = {INC("Sev1", "Critical"), INC("Sev4", "Minor"),
                                          BUG("Payments"),         BUG("Auth"),
                                          REQ("200", "Enterprise"), REQ("3", "Free")};
#define N_LITS 6

START_TEST(test_threat_duplicate_detail)
{
    /* docs/model.md: a field twice in one object is rejected by the decoder
     * (TR_E_DUPLICATE); the scanners (verify=off) read the first occurrence. */
    char l[200];
    for (int a = 0; a < N_LITS; a++) {
        for (int b = 0; b < N_LITS; b++) {
            if (a == b)
                continue;
            oc_res want = ref_of(lit_details[a]);
            want.hit[O_SEVOF] = want.hit[O_SEV];
            want.val[O_SEVOF] = want.val[O_SEV];
            int mode[O_N];
            modes_all(mode, E_SAME);
            /* where the two go: both at the front, both at the back, around the rest */
            for (int where = 0; where < 4; where++) {
                tj *root = threat_tree(lit_details[a], where == 0);
                long i = tj_find(root, "detail");
                size_t at = where == 0 ? 1 : where == 1 ? root->count : where == 2 ? (size_t)i + 1 : 0;
                if (where == 3) {
                    /* a first, at the front; b at the very end */
                    vr_detail_first(root);
                    at = root->count;
                }
                tj_insert_key(root, at, "detail", tj_parse0(lit_details[b]));
                REQUIRE(tj_find(root, "detail") >= 0);
                size_t n = write_tree(root);
                snprintf(l, sizeof l, "duplicate detail %d then %d, placement %d", a, b, where);
                expect_rejected(threat_buf, n, l, &want, mode, true);
                /* the view is the first detail's bytes */
                oc_res r;
                oc_scan_msg(oc_place_msg(threat_buf, n), n, &r);
                const char *first_det = completed(lit_details[a]);
                REQUIRE(r.det_n == strlen(first_det));
                REQUIRE(memcmp(threat_buf + r.det_off, first_det, r.det_n) == 0);
                /* escaped, pretty: the same */
                n = tj_write(root, threat_buf, sizeof threat_buf, (uint64_t)(a * 7 + b), true, 300, 0);
                snprintf(l, sizeof l, "duplicate detail %d then %d, placement %d, escaped keys", a, b, where);
                expect_rejected(threat_buf, n, l, &want, mode, true);
            }
        }
    }
}
END_TEST

/* Inserts member (key, value text) into detail's object at index at (<0: end). */
static void detail_insert(tj *root, long at, const char *key, const char *value)
{
    tj *d = tj_get(root, "detail");
    tj_insert_key(d, at < 0 ? d->count : (size_t)at, key, completed_member(d, key, value));
}

START_TEST(test_threat_duplicate_in_focus)
{
    char l[200];
    int mode[O_N];
    /* a wanted leaf's record twice: the first wins */
    static const struct {
        int lit;
        const char *key, *other;
        int o;
    } leaf[] = {
        {0, "severity", "\"Sev4\"", O_SEV},
        {1, "severity", "\"Sev1\"", O_SEV},
        {0, "impact", "{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\",\"tier\":\"Minor\",\"region\":\"r\"}}", O_TIER},
        {1, "impact", "{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\",\"tier\":\"Critical\",\"region\":\"r\"}}", O_TIER},
        {2, "trace", "{\"exception\":\"E\",\"message\":\"m\",\"frames\":[{\"module\":\"Auth\",\"function\":\"f\",\"file\":\"x\",\"line\":1}]}", O_MOD},
        {3, "trace", "{\"exception\":\"E\",\"message\":\"m\",\"frames\":[{\"module\":\"Payments\",\"function\":\"f\",\"file\":\"x\",\"line\":1}]}", O_MOD},
        {4, "votes", "{\"count\":1}", O_VOTES},
        {5, "votes", "{\"count\":200}", O_VOTES},
        {4, "requester", "{\"name\":\"n\",\"contract\":{\"plan\":\"Free\",\"seats\":1,\"renewsAt\":2}}", O_PLAN},
        {5, "requester", "{\"name\":\"n\",\"contract\":{\"plan\":\"Enterprise\",\"seats\":1,\"renewsAt\":2}}", O_PLAN},
    };
    for (size_t t = 0; t < sizeof leaf / sizeof leaf[0]; t++) {
        for (int first = 0; first < 2; first++) {
            for (int tag_last = 0; tag_last < 2; tag_last++) {
                oc_res want = ref_of(lit_details[leaf[t].lit]);
                want.hit[O_SEVOF] = want.hit[O_SEV];
                want.val[O_SEVOF] = want.val[O_SEV];
                modes_all(mode, E_SAME);
                mode[O_DETAIL] = E_ANY; /* the view holds both: tr_dec_Detail rejects it */
                /* the second occurrence at the end of the detail, then with the tag last */
                tj *root = threat_tree(lit_details[leaf[t].lit], first);
                detail_insert(root, -1, leaf[t].key, leaf[t].other);
                if (tag_last)
                    vr_place_tag(root, 1, NULL);
                size_t n = write_tree(root);
                snprintf(l, sizeof l, "duplicate %s (second %s)%s%s", leaf[t].key, leaf[t].other,
                         first ? ", detail first" : "", tag_last ? ", tag last" : "");
                expect_rejected(threat_buf, n, l, &want, mode, true);
                /* the second occurrence at the front, the real one after it:
                 * then the "first" is the other value */
                root = threat_tree(lit_details[leaf[t].lit], first);
                tj *d = tj_get(root, "detail");
                long real = tj_find(d, leaf[t].key);
                tj_insert_key(d, (size_t)real, leaf[t].key, completed_member(d, leaf[t].key, leaf[t].other));
                if (tag_last)
                    vr_place_tag(root, 1, NULL);
                tj *copy = tj_get(root, "detail");
                tj_remove(copy, (size_t)tj_find(copy, leaf[t].key) + 1);
                /* copy now holds just the other value; its reference */
                uint8_t dbuf[4096];
                size_t dn = tj_write_compact(copy, dbuf, sizeof dbuf - 1);
                dbuf[dn] = 0;
                oc_res want2 = ref_of((const char *)dbuf);
                want2.hit[O_SEVOF] = want2.hit[O_SEV];
                want2.val[O_SEVOF] = want2.val[O_SEV];
                root = threat_tree(lit_details[leaf[t].lit], first);
                d = tj_get(root, "detail");
                real = tj_find(d, leaf[t].key);
                tj_insert_key(d, (size_t)real, leaf[t].key, completed_member(d, leaf[t].key, leaf[t].other));
                if (tag_last)
                    vr_place_tag(root, 1, NULL);
                n = write_tree(root);
                snprintf(l, sizeof l, "duplicate %s (first %s)%s%s", leaf[t].key, leaf[t].other,
                         first ? ", detail first" : "", tag_last ? ", tag last" : "");
                modes_all(mode, E_SAME);
                mode[O_DETAIL] = E_ANY; /* the view is the whole (duplicate-holding) detail */
                expect_rejected(threat_buf, n, l, &want2, mode, true);
            }
        }
    }
    /* the tag twice: kind reads the first; a leaf under the first tag's case
     * reads its value or misses (the walk stops at a second tag naming
     * another case); a leaf of the second tag's case never hits */
    for (int a = 0; a < N_LITS; a++) {
        for (int k = 0; k < TR_DETAIL_COUNT; k++) { /* every case the schema has */
            char kind[64];
            snprintf(kind, sizeof kind, "\"%.*s\"", (int)tr_Detail_names[k].n, tr_Detail_names[k].p);
            for (int pos = 0; pos < 2; pos++) {
                oc_res want = ref_of(lit_details[a]);
                REQUIRE(want.hit[O_KIND]);
                if ((int)want.val[O_KIND] == k)
                    continue;
                want.hit[O_SEVOF] = want.hit[O_SEV];
                want.val[O_SEVOF] = want.val[O_SEV];
                tj *root = threat_tree(lit_details[a], false);
                detail_insert(root, pos == 0 ? 1 : -1, "type", kind);
                size_t n = write_tree(root);
                snprintf(l, sizeof l, "duplicate tag: %s then %s at %s", lit_details[a], kind,
                         pos == 0 ? "second place" : "the end");
                modes_all(mode, E_MISS_OR_SAME);
                mode[O_KIND] = E_SAME;
                mode[O_DETAIL] = E_ANY;
                expect_rejected(threat_buf, n, l, &want, mode, false);
            }
        }
    }
    /* a key twice inside the votes record: tr_dec_Votes (the focus
     * decoder, which verifies) rejects it: a miss, never the second */
    {
        oc_res want = ref_of(REQ("200", "Enterprise"));
        modes_all(mode, E_SAME);
        mode[O_DETAIL] = E_ANY;
        mode[O_VOTES] = E_MISS_OR_SAME;
        tj *root = threat_tree(REQ("200", "Enterprise"), false);
        tj *vo = tj_get(tj_get(root, "detail"), "votes");
        tj_insert_key(vo, 1, "count", tj_parse0("1"));
        size_t n = write_tree(root);
        expect_rejected(threat_buf, n, "votes.count twice", &want, mode, false);
    }
}
END_TEST

START_TEST(test_threat_escapes)
{
    char l[200];
    /* escaped keys: the same key, for every reader (the decoder accepts) */
    static const struct {
        const char *from, *to;
    } keys[] = {
        {"detail", "\\u0064etail"},
        {"detail", "\\u0064\\u0065\\u0074\\u0061\\u0069\\u006C"},
        {"detail", "detai\\u006c"},
        {"type", "typ\\u0065"},
        {"type", "\\u0074ype"},
        {"severity", "s\\u0065verity"},
        {"severity", "severit\\u0079"},
        {"impact", "\\u0069mpact"},
        {"service", "servic\\u0065"},
        {"tier", "t\\u0069er"},
        {"trace", "trac\\u0065"},
        {"frames", "\\u0066rames"},
        {"module", "modul\\u0065"},
        {"requester", "request\\u0065r"},
        {"contract", "\\u0063ontract"},
        {"plan", "pla\\u006E"},
        {"votes", "vote\\u0073"},
        {"count", "\\u0063ount"},
    };
    for (int a = 0; a < N_LITS; a++) {
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            for (int first = 0; first < 2; first++) {
                tj *root = threat_tree(lit_details[a], first);
                /* rename every member named keys[k].from, at every level */
                tj *stack[512];
                int sp = 0;
                stack[sp++] = root;
                while (sp) {
                    tj *o = stack[--sp];
                    for (size_t i = 0; i < o->count; i++) {
                        if (o->t == TJ_OBJ && o->klen[i] == strlen(keys[k].from) &&
                            memcmp(o->keys[i], keys[k].from, o->klen[i]) == 0) {
                            o->keys[i] = keys[k].to;
                            o->klen[i] = strlen(keys[k].to);
                        }
                        if ((o->items[i]->t == TJ_OBJ || o->items[i]->t == TJ_ARR) && sp < 512)
                            stack[sp++] = o->items[i];
                    }
                }
                size_t n = write_tree(root);
                snprintf(l, sizeof l, "key %s written %s in %s", keys[k].from, keys[k].to, lit_details[a]);
                expect_accepted(threat_buf, n, l);
            }
        }
    }
    /* an escaped key that names another key: "\u0044etail" is Detail, an
     * unknown field, beside the real detail, in both orders */
    for (int a = 0; a < N_LITS; a++) {
        for (int order = 0; order < 2; order++) {
            tj *root = threat_tree(lit_details[a], false);
            long i = tj_find(root, "detail");
            tj_insert_key(root, (size_t)i + (size_t)order, "\\u0044etail", tj_parse0(lit_details[(a + 1) % N_LITS]));
            tj_insert_key(root, order ? 0 : root->count, "\\u0044\\u0065\\u0054ail", tj_parse0(lit_details[(a + 2) % N_LITS]));
            size_t n = write_tree(root);
            expect_accepted(threat_buf, n, "\\u0044etail beside detail");
            tj *d = tj_get(root, "detail");
            tj_insert_key(d, order ? 0 : d->count, "Typ\\u0065", tj_parse0("\"Bug\""));
            tj_insert_key(d, order ? 0 : d->count, "typ\\u0045", tj_parse0("\"Request\""));
            tj_insert_key(d, order ? 0 : d->count, "\\u0053everity", tj_parse0("\"Sev1\""));
            n = write_tree(root);
            expect_accepted(threat_buf, n, "Typ\\u0065, typ\\u0045 and \\u0053everity inside detail");
        }
    }
    /* escaped values: compared after unescaping */
    static const struct {
        const char *detail;
    } vals[] = {
        {"{\"type\":\"Incident\",\"severity\":\"Sev\\u0031\",\"startedAt\":1,\"mitigated\":false,\"impact\":{\"users\":3,\"errorRate\":0.25,\"service\":{\"name\":\"api\",\"tier\":\"Critic\\u0061l\",\"region\":\"eu\"}}}"},
        {"{\"type\":\"Incid\\u0065nt\",\"severity\":\"\\u0053\\u0065\\u0076\\u0032\",\"startedAt\":1,\"mitigated\":false,\"impact\":{\"users\":3,\"errorRate\":0.25,\"service\":{\"name\":\"api\",\"tier\":\"\\u0043ritical\",\"region\":\"eu\"}}}"},
        {"{\"type\":\"\\u0042ug\",\"component\":\"c\",\"build\":\"b\",\"reproducible\":true,\"trace\":{\"exception\":\"E\",\"message\":\"m\",\"frames\":[{\"module\":\"P\\u0061yments\",\"function\":\"f\",\"file\":\"x.c\",\"line\":1}]}}"},
        {"{\"type\":\"Reques\\u0074\",\"product\":\"p\",\"votes\":{\"count\":150},\"quarter\":\"Q1\",\"requester\":{\"name\":\"n\",\"contract\":{\"plan\":\"Enterpris\\u0065\",\"seats\":5,\"renewsAt\":9}}}"},
        {"{\"type\":\"Request\",\"product\":\"p\",\"votes\":{\"c\\u006funt\":150},\"quarter\":\"Q1\",\"requester\":{\"name\":\"n\",\"contract\":{\"plan\":\"\\u0042usiness\",\"seats\":5,\"renewsAt\":9}}}"},
        {"{\"type\":\"Incident\",\"severity\":\"Sev\\u0034\",\"startedAt\":1,\"mitigated\":false,\"impact\":{\"users\":3,\"errorRate\":0.25,\"service\":{\"name\":\"api\",\"tier\":\"Minor\",\"region\":\"eu\"}}}"},
    };
    for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
        for (int first = 0; first < 2; first++) {
            tj *root = threat_tree(vals[v].detail, first);
            size_t n = write_tree(root);
            snprintf(l, sizeof l, "escaped values %zu", v);
            expect_accepted(threat_buf, n, l);
            oc_res want = ref_of(vals[v].detail);
            REQUIRE(want.hit[O_KIND]);
        }
    }
    /* values that are no case once unescaped, or not valid: a miss; the
     * decoder rejects them */
    static const struct {
        const char *sev;
        const char *why;
    } bad[] = {
        {"\"Sev1\\ud800\"", "lone surrogate"},
        {"\"Sev1\\udc00\"", "lone low surrogate"},
        {"\"Sev\\u00311\"", "Sev11"},
        {"\"Sev1\\u0000\"", "escaped NUL"},
        {"\"Sev1\x01\"", "raw control byte"},
        {"\"Sev1\x7f\\u0020\"", "DEL and a space"},
        {"\"Sev\\/1\"", "Sev/1"},
        {"\"Sev\\x31\"", "unknown escape"},
        {"\"Sev\\u31\"", "short \\u"},
        {"\"\xff\"", "invalid UTF-8"},
        {"\"Sev1\xc0\xaf\"", "overlong UTF-8"},
        {"\"sev1\"", "another case"},
        {"\"SEV1\"", "another case"},
        {"\"Sev1 \"", "trailing space"},
        {"\" Sev1\"", "leading space"},
        {"\"Sev\"", "a prefix of a case"},
        {"\"Sev12\"", "longer than a case"},
        {"null", "null"},
        {"1", "a number"},
        {"[\"Sev1\"]", "an array"},
        {"{\"Sev1\":1}", "an object"},
        {"true", "a literal"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        for (int first = 0; first < 2; first++) {
            char det[1024];
            snprintf(det, sizeof det,
                     "{\"type\":\"Incident\",\"severity\":%s,\"startedAt\":1,\"mitigated\":false,"
                     "\"impact\":{\"users\":3,\"errorRate\":0.25,\"service\":{\"name\":\"api\","
                     "\"tier\":\"Critical\",\"region\":\"eu\"}}}",
                     bad[b].sev);
            tj *root = threat_tree(INC("Sev1", "Critical"), first);
            set_detail(root, det);
            size_t n = write_tree(root);
            oc_res want = ref_of(INC("Sev1", "Critical"));
            int mode[O_N];
            modes_all(mode, E_SAME);
            mode[O_DETAIL] = E_ANY;
            mode[O_SEV] = mode[O_SEVOF] = E_MISS;
            snprintf(l, sizeof l, "severity %s (%s)", bad[b].sev, bad[b].why);
            expect_rejected(threat_buf, n, l, &want, mode, false);
            oc_res r;
            oc_scan_msg(oc_place_msg(threat_buf, n), n, &r);
            OC_FAIL_IF(r.keep, threat_buf, n, "%s: kept", l);
        }
    }
    /* tags that are no case: no kind, no leaf */
    static const char *const bad_tags[] = {"\"incident\"", "\"INCIDENT\"", "\"Incident\\u0000\"",
                                           "\"Incidents\"", "\"Inc\"", "\"\"", "null", "0",
                                           "\"Incident\\\\\"", "\"Inci\\u0044ent\""};
    for (size_t b = 0; b < sizeof bad_tags / sizeof bad_tags[0]; b++) {
        for (int tag_last = 0; tag_last < 2; tag_last++) {
            tj *root = threat_tree(INC("Sev1", "Critical"), tag_last);
            tj *d = tj_get(root, "detail");
            d->items[tj_find(d, "type")] = tj_parse0(bad_tags[b]);
            if (tag_last)
                vr_place_tag(root, 1, NULL);
            size_t n = write_tree(root);
            oc_res want = ref_of(INC("Sev1", "Critical"));
            int mode[O_N];
            modes_all(mode, E_MISS);
            mode[O_DETAIL] = E_ANY;
            snprintf(l, sizeof l, "tag %s%s", bad_tags[b], tag_last ? ", last" : "");
            expect_rejected(threat_buf, n, l, &want, mode, false);
        }
    }
    /* the same for the tag: no kind */
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        char det[1024];
        char tag[64];
        /* reuse the bad forms on "Incident" where they are strings */
        snprintf(tag, sizeof tag, "%s", bad[b].sev);
        char *s = strstr(tag, "Sev1");
        if (s == NULL)
            continue;
        snprintf(det, sizeof det, "{\"type\":%.*sIncident%s,\"severity\":\"Sev1\",\"startedAt\":1,"
                                  "\"mitigated\":false,\"impact\":{\"users\":3,\"errorRate\":0.25,"
                                  "\"service\":{\"name\":\"api\",\"tier\":\"Critical\",\"region\":\"eu\"}}}",
                 (int)(s - tag), tag, s + 4);
        tj *root = threat_tree(INC("Sev1", "Critical"), false);
        set_detail(root, det);
        size_t n = write_tree(root);
        oc_res want = ref_of(INC("Sev1", "Critical"));
        int mode[O_N];
        modes_all(mode, E_MISS);
        mode[O_DETAIL] = E_ANY;
        snprintf(l, sizeof l, "tag %.150s", det);
        expect_rejected(threat_buf, n, l, &want, mode, false);
    }
}
END_TEST

START_TEST(test_threat_case_and_nesting)
{
    char l[256];
    /* Detail beside detail (an unknown field), nested details in other
     * objects, arrays and strings: only Issue.detail counts. The decoder
     * accepts all of these (unknown fields are skipped), so the scanners
     * must agree with it. */
    static const char *const around[] = {
        "\"Detail\":" INC("Sev1", "Critical"),
        "\"DETAIL\":" INC("Sev1", "Critical"),
        "\"detail \":" INC("Sev1", "Critical"),
        "\"details\":" INC("Sev1", "Critical"),
        "\"x\":{\"detail\":" INC("Sev1", "Critical") "}",
        "\"x\":[{\"detail\":" INC("Sev1", "Critical") "}]",
        "\"x\":[\"detail\",{\"a\":[{\"detail\":" BUG("Payments") "}]}]",
        "\"x\":\"detail\"",
        "\"x\":\"\\\"detail\\\":{\\\"type\\\":\\\"Incident\\\",\\\"severity\\\":\\\"Sev1\\\"}\"",
        "\"x\":\"\\\\\"",
        "\"x\":\"\\\\\\\\\\\"\"",
        "\"x\":\"\\\\\\\"detail\\\\\\\"\"",
        "\"x\":\"}}}]]]\"",
        "\"x\":\"{{{[[[\"",
        "\"x\":\"{\\\"detail\\\":[\\\"\"",
        "\"x\":[\"]\",\"}\",{\"]\":\"}\"}]",
        "\"x\":{\"}\":\"{\",\"\\\\\":\"\\\"\"}",
        "\"\\\"detail\":" INC("Sev1", "Critical"),
        "\"d\\\\\":" INC("Sev1", "Critical"),
        "\"detail\\u0000\":" INC("Sev1", "Critical"),
        "\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{\"detail\":{}}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        "\"x\":{\"a\":{\"b\":{\"c\":{\"detail\":" REQ("200", "Enterprise") "}}}}",
        "\"x\":-1.5e-300",
        "\"x\":true,\"y\":false,\"z\":null",
        "\"\xc3\xa9\":\"\xf0\x9f\x98\x80\\ud83d\\ude00\"",
        "\"x\":{}",
        "\"x\":[]",
        "\"\":\"\"",
    };
    for (int a = 0; a < N_LITS; a++) {
        for (size_t k = 0; k < sizeof around / sizeof around[0]; k++) {
            for (int where = 0; where < 4; where++) {
                tj *root = threat_tree(lit_details[a], where >= 2);
                long i = tj_find(root, "detail");
                /* before detail (at the front or just before), after it (just after or at the end) */
                size_t at = where == 0 ? 0 : where == 1 ? (size_t)i : where == 2 ? (size_t)i + 1 : root->count;
                char txt[2048];
                snprintf(txt, sizeof txt, "{%s}", around[k]);
                tj *o = tj_parse0(txt);
                for (size_t j = 0; j < o->count; j++)
                    tj_insert(root, at + j, o->keys[j], o->klen[j], o->items[j]);
                size_t n = write_tree(root);
                snprintf(l, sizeof l, "%s around detail %d, placement %d", around[k], a, where);
                expect_accepted(threat_buf, n, l);
                n = tj_write(root, threat_buf, sizeof threat_buf, k * 31 + (size_t)where, true, 0, 0);
                expect_accepted(threat_buf, n, l);
            }
        }
    }
    /* the same look-alikes inside a detail, around its wanted keys */
    static const char *const inside[] = {
        "\"Type\":\"Bug\"",
        "\"types\":\"Bug\"",
        "\"typ\":\"Bug\"",
        "\"x\":\"type\"",
        "\"x\":{\"type\":\"Request\",\"votes\":{\"count\":200}}",
        "\"x\":[\"type\",\"Bug\",{\"type\":\"Bug\"}]",
        "\"Severity\":\"Sev1\"",
        "\"severityScore\":1.5",
        "\"severity_\":\"Sev1\"",
        "\"x\":\"severity\"",
        "\"x\":{\"severity\":\"Sev1\"}",
        "\"t\":\"\\\"type\\\":\\\"Bug\\\"\"",
        "\"s\":\"\\\\\",\"type_\":\"\\\\\\\"\"",
        "\"x\":\"}]\"",
        "\"detail\":" INC("Sev1", "Critical"),
    };
    for (int a = 0; a < N_LITS; a++) {
        for (size_t k = 0; k < sizeof inside / sizeof inside[0]; k++) {
            for (int where = 0; where < 3; where++) {
                tj *root = threat_tree(lit_details[a], where == 1);
                tj *d = tj_get(root, "detail");
                size_t at = where == 0 ? 0 : where == 1 ? 1 : d->count;
                char txt[2048];
                snprintf(txt, sizeof txt, "{%s}", inside[k]);
                tj *o = tj_parse0(txt);
                for (size_t j = 0; j < o->count; j++)
                    tj_insert(d, at + j, o->keys[j], o->klen[j], o->items[j]);
                if (where == 2)
                    vr_place_tag(root, 1, NULL);
                size_t n = write_tree(root);
                snprintf(l, sizeof l, "%s inside detail %d, placement %d", inside[k], a, where);
                expect_accepted(threat_buf, n, l);
            }
        }
    }
    /* nested look-alikes along the deeper paths: tier under impact, plan
     * under requester, module in the second frame, count in a nested object */
    static const struct {
        int lit;
        const char *path0, *path1, *member;
    } deep[] = {
        {1, "impact", NULL, "\"tier\":\"Critical\""},
        {1, "impact", NULL, "\"x\":{\"service\":{\"tier\":\"Critical\"}}"},
        {1, "impact", "service", "\"Tier\":\"Critical\""},
        {1, "impact", "service", "\"x\":\"tier\""},
        {4, "requester", NULL, "\"plan\":\"Enterprise\""},
        {5, "requester", NULL, "\"plan\":\"Enterprise\""},
        {5, "requester", "contract", "\"Plan\":\"Enterprise\",\"planX\":\"Business\""},
        {5, "votes", NULL, "\"Count\":200,\"counts\":200,\"x\":{\"count\":200}"},
        {3, "trace", NULL, "\"module\":\"Payments\",\"Frames\":[{\"module\":\"Payments\"}]"},
    };
    for (size_t k = 0; k < sizeof deep / sizeof deep[0]; k++) {
        for (int front = 0; front < 2; front++) {
            tj *root = threat_tree(lit_details[deep[k].lit], false);
            tj *o = tj_get(tj_get(root, "detail"), deep[k].path0);
            if (deep[k].path1)
                o = tj_get(o, deep[k].path1);
            REQUIRE(o != NULL);
            char txt[1024];
            snprintf(txt, sizeof txt, "{%s}", deep[k].member);
            tj *m = tj_parse0(txt);
            for (size_t j = 0; j < m->count; j++)
                tj_insert(o, front ? j : o->count, m->keys[j], m->klen[j], m->items[j]);
            size_t n = write_tree(root);
            snprintf(l, sizeof l, "%s in %s.%s", deep[k].member, deep[k].path0,
                     deep[k].path1 ? deep[k].path1 : "");
            expect_accepted(threat_buf, n, l);
        }
    }
    /* a second frame whose module differs: frames[0] counts */
    {
        tj *root = threat_tree(BUG("Auth"), false);
        tj *f = tj_get(tj_get(tj_get(root, "detail"), "trace"), "frames");
        tj *t0 = f->items[0];
        f->items[0] = f->items[1];
        f->items[1] = t0;
        size_t n = write_tree(root);
        expect_accepted(threat_buf, n, "frames reordered");
    }
}
END_TEST

START_TEST(test_threat_malformed)
{
    char l[256];
    int mode[O_N];
    /* malformed data outside the judged path, comments, trailing commas,
     * single quotes, NaN: the decoder rejects; a scanner misses or reads
     * what is there (never a value from inside the junk) */
    static const char *const junk[] = {
        "\"junk\":[1,}",
        "\"junk\":{\"a\":1,}",
        "\"junk\":[1 2]",
        "\"junk\":tru",
        "\"junk\":'detail'",
        "\"junk\":NaN",
        "\"junk\":Infinity",
        "\"junk\":1/*\"x\":{}*/",
        "\"junk\"//x\n:1",
        "\"junk\":01",
        "\"junk\":+1",
        "\"junk\":\"\xff\xfe\"",
        "\"junk\":\"a\x01\"",
        "\"junk\":\"\\q\"",
        "\"junk\":\"\\ud800\"",
        "'junk':1",
        "junk:1",
        "\"junk\" 1",
        "\"junk\"::1",
        "\"junk\":1,,\"x\":2",
        "\"junk\":[\"detail\":" INC("Sev1", "Critical") "]",
        "\"junk\":{\"x\":1 \"detail\":" INC("Sev1", "Critical") "}",
    };
    for (int a = 0; a < N_LITS; a++) {
        oc_res want = ref_of(lit_details[a]);
        want.hit[O_SEVOF] = want.hit[O_SEV];
        want.val[O_SEVOF] = want.val[O_SEV];
        for (size_t k = 0; k < sizeof junk / sizeof junk[0]; k++) {
            for (int where = 0; where < 3; where++) {
                tj *root = threat_tree(lit_details[a], where == 2);
                size_t n = write_tree(root);
                /* splice the junk as text: at the front, just before detail, or at the end */
                uint8_t *msg = malloc(n + 4096);
                size_t at;
                if (where == 0) {
                    at = 1;
                } else if (where == 1) {
                    uint8_t *p = memmem(threat_buf, n, "\"detail\":", 9);
                    REQUIRE(p != NULL);
                    at = (size_t)(p - threat_buf);
                } else {
                    at = n - 1;
                }
                size_t jn = strlen(junk[k]);
                memcpy(msg, threat_buf, at);
                size_t w = at;
                if (where == 2)
                    msg[w++] = ',';
                memcpy(msg + w, junk[k], jn);
                w += jn;
                if (where != 2)
                    msg[w++] = ',';
                memcpy(msg + w, threat_buf + at, n - at);
                w += n - at;
                modes_all(mode, E_MISS_OR_SAME);
                snprintf(l, sizeof l, "junk %s, placement %d, detail %d", junk[k], where, a);
                expect_rejected(msg, w, l, &want, mode, false);
                free(msg);
            }
        }
    }
    /* numbers in the votes record: only what tr_dec_Votes accepts (-0 is 0;
     * @range in the schema bounds the generator only, not the decoder) */
    static const struct {
        const char *count;
        bool ok;
        int64_t v;
    } nums[] = {
        {"130", true, 130}, {"-0", true, 0}, {"0", true, 0}, {"200", true, 200},
        {"201", true, 201}, {"-1", true, -1}, {"2147483647", true, 2147483647},
        {"-2147483648", true, -2147483647 - 1}, {"2147483648", false, 0}, {"1e0", false, 0},
        {"130.0", false, 0}, {"1.3e2", false, 0}, {"\"200\"", false, 0}, {"null", false, 0},
        {"999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999", false, 0},
        {"0130", false, 0}, {"+130", false, 0}, {"130 ", true, 130}, {"true", false, 0},
        {"[200]", false, 0}, {"-", false, 0}, {"1.", false, 0}, {".5", false, 0},
    };
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
        char det[512];
        snprintf(det, sizeof det,
                 "{\"type\":\"Request\",\"product\":\"p\",\"votes\":{\"count\":%s},"
                 "\"quarter\":\"Q1\",\"requester\":{\"name\":\"n\",\"contract\":{\"plan\":"
                 "\"Enterprise\",\"seats\":5,\"renewsAt\":9}}}",
                 nums[k].count);
        tj *root = threat_tree(REQ("130", "Enterprise"), false);
        set_detail(root, det);
        size_t n = write_tree(root);
        snprintf(l, sizeof l, "votes count %s", nums[k].count);
        if (nums[k].ok) {
            expect_accepted(threat_buf, n, l);
            oc_res r;
            oc_scan_msg(oc_place_msg(threat_buf, n), n, &r);
            REQUIRE(r.hit[O_VOTES]);
            REQUIRE(r.val[O_VOTES] == nums[k].v);
        } else {
            oc_res want = ref_of(REQ("130", "Enterprise"));
            modes_all(mode, E_SAME);
            mode[O_DETAIL] = E_ANY;
            mode[O_VOTES] = E_MISS;
            expect_rejected(threat_buf, n, l, &want, mode, false);
        }
    }
    /* null where a value is required: a miss; null for an optional field:
     * absent (the decoder accepts) */
    {
        tj *root = threat_tree(INC("Sev1", "Critical"), false);
        tj *d = tj_get(root, "detail");
        d->items[tj_find(d, "severity")] = tj_parse0("null");
        size_t n = write_tree(root);
        oc_res want = ref_of(INC("Sev1", "Critical"));
        modes_all(mode, E_SAME);
        mode[O_DETAIL] = E_ANY;
        mode[O_SEV] = mode[O_SEVOF] = E_MISS;
        expect_rejected(threat_buf, n, "severity null", &want, mode, false);
        root = threat_tree(INC("Sev1", "Critical"), false);
        root->items[tj_find(root, "detail")] = tj_parse0("null");
        n = write_tree(root);
        modes_all(mode, E_MISS);
        mode[O_DETAIL] = E_ANY; /* a raw view of "null" is no misread */
        expect_rejected(threat_buf, n, "detail null", &want, mode, false);
        oc_res r;
        oc_scan_msg(oc_place_msg(threat_buf, n), n, &r);
        REQUIRE(!r.keep);
        root = threat_tree(INC("Sev1", "Critical"), false);
        static const char *const opt[] = {"resolution", "dueAt", "resolvedAt", "parentId"};
        for (int i = 0; i < 4; i++) {
            long j = tj_find(root, opt[i]);
            if (j >= 0)
                root->items[j] = tj_parse0("null");
            else
                tj_insert_key(root, 0, opt[i], tj_parse0("null"));
        }
        n = write_tree(root);
        expect_accepted(threat_buf, n, "optional fields null");
    }
    /* trailing content: the decoder rejects; the scanners read the first value */
    static const char *const trailing[] = {" x", "x", "{}", " {\"detail\":" INC("Sev4", "Minor") "}",
                                           ",\"detail\":" INC("Sev4", "Minor"), "\x00", "]"};
    for (int a = 0; a < N_LITS; a++) {
        oc_res want = ref_of(lit_details[a]);
        want.hit[O_SEVOF] = want.hit[O_SEV];
        want.val[O_SEVOF] = want.val[O_SEV];
        for (size_t k = 0; k < sizeof trailing / sizeof trailing[0]; k++) {
            tj *root = threat_tree(lit_details[a], a % 2);
            size_t n = write_tree(root);
            size_t tn = k == 5 ? 1 : strlen(trailing[k]);
            memcpy(threat_buf + n, trailing[k], tn);
            modes_all(mode, E_SAME);
            snprintf(l, sizeof l, "trailing %s after detail %d", trailing[k], a);
            expect_rejected(threat_buf, n + tn, l, &want, mode, true);
        }
        /* a byte-order mark, UTF-16: the decoder rejects; nothing is misread */
        tj *root = threat_tree(lit_details[a], false);
        size_t n = write_tree(root);
        memmove(threat_buf + 3, threat_buf, n);
        memcpy(threat_buf, "\xEF\xBB\xBF", 3);
        modes_all(mode, E_MISS_OR_SAME);
        expect_rejected(threat_buf, n + 3, "byte-order mark", &want, mode, false);
        static uint8_t u16[1 << 16];
        memmove(threat_buf, threat_buf + 3, n);
        REQUIRE(2 * n + 2 <= sizeof u16);
        u16[0] = 0xFF;
        u16[1] = 0xFE;
        for (size_t i = 0; i < n; i++) {
            u16[2 + 2 * i] = threat_buf[i];
            u16[3 + 2 * i] = 0;
        }
        modes_all(mode, E_MISS);
        expect_rejected(u16, 2 * n + 2, "UTF-16LE", &want, mode, false);
        expect_rejected(u16 + 2, 2 * n, "UTF-16LE without BOM", &want, mode, false);
    }
}
END_TEST

/* Keys and case names are case-sensitive (docs/model.md): a key differing from
 * a wanted one only in letter case is an unknown field, a value differing
 * from a case name only in letter case is no case. Every letter position
 * is varied (the walk filters candidates by their first byte, but a quote
 * in the last lane of a 64-byte block is always a candidate, so the key
 * matcher itself must be exact: swept over every alignment). */
START_TEST(test_threat_letter_case)
{
    if (!oc_use_simd(_i))
        return;
    char l[256];
    int mode[O_N];
    static const char *const keys[] = {"detail", "type", "severity", "impact", "service", "tier",
                                       "trace", "frames", "module", "requester", "contract",
                                       "plan", "votes", "count"};
    /* a key with one letter's case flipped, holding the decoy, before the
     * real member: the decoder skips it; the scanners must too */
    for (int a = 0; a < N_LITS; a++) {
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            size_t kl = strlen(keys[k]);
            for (size_t pos = 0; pos < kl; pos++) {
                tj *root = threat_tree(lit_details[a], (pos & 1) != 0);
                /* find the object holding keys[k] */
                tj *stack[512], *holder = NULL;
                int sp = 0;
                stack[sp++] = root;
                while (sp && holder == NULL) {
                    tj *o = stack[--sp];
                    if (o->t == TJ_OBJ && tj_find(o, keys[k]) >= 0 && (o == root || strcmp(keys[k], "detail") != 0))
                        holder = o;
                    for (size_t i = 0; i < o->count && sp < 512; i++)
                        if (o->items[i]->t == TJ_OBJ || o->items[i]->t == TJ_ARR)
                            stack[sp++] = o->items[i];
                }
                if (holder == NULL)
                    continue;
                char ck[32];
                snprintf(ck, sizeof ck, "%s", keys[k]);
                ck[pos] = (char)(ck[pos] ^ 0x20);
                tj_insert_key(holder, (size_t)tj_find(holder, keys[k]), ck, tj_parse0(vr_decoy_of(keys[k])));
                size_t n = write_tree(root);
                snprintf(l, sizeof l, "key %s before %s in detail %d", ck, keys[k], a);
                expect_accepted(threat_buf, n, l);
            }
        }
    }
    /* the same at every alignment: "Detail" (decoy: Sev1) before the real
     * detail, "Type" before the tag, "Severity" before severity */
    for (size_t padlen = 0; padlen < 80; padlen++) {
        char pad[128];
        memset(pad, 'a', padlen);
        pad[padlen] = 0;
        for (int which = 0; which < 3; which++) {
            tj *root = threat_tree(INC("Sev4", "Minor"), which == 0 ? false : (padlen & 1) != 0);
            tj *o = which == 0 ? root : tj_get(root, "detail");
            long at = tj_find(o, which == 0 ? "detail" : which == 1 ? "type" : "severity");
            tj_insert_key(o, (size_t)at, which == 0 ? "Detail" : which == 1 ? "Type" : "Severity",
                          tj_parse0(which == 0 ? vr_decoy_of("detail") : which == 1 ? "\"Bug\"" : "\"Sev1\""));
            tj_insert_key(o, (size_t)at, "p", tj_str(pad));
            if (which == 0) /* and at the front, for the detail-first layout's walk */
                tj_insert_key(o, 0, "p", tj_str(pad));
            size_t n = write_tree(root);
            snprintf(l, sizeof l, "%s after a %zu-byte string",
                     which == 0 ? "Detail" : which == 1 ? "Type" : "Severity", padlen);
            expect_accepted(threat_buf, n, l);
        }
    }
    /* case names with one letter's case flipped: no case (the decoder rejects) */
    static const struct {
        int lit;
        const char *key, *name;
        int o;
    } vals[] = {
        {0, "severity", "Sev1", O_SEV},     {0, "tier", "Critical", O_TIER},
        {2, "module", "Payments", O_MOD},   {4, "plan", "Enterprise", O_PLAN},
        {0, "type", "Incident", O_KIND},    {2, "type", "Bug", O_KIND},
        {4, "type", "Request", O_KIND},
    };
    for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
        size_t nl = strlen(vals[v].name);
        for (size_t pos = 0; pos < nl; pos++) {
            if (!((vals[v].name[pos] | 0x20) >= 'a' && (vals[v].name[pos] | 0x20) <= 'z'))
                continue;
            char det[1024], from[64], to[64];
            snprintf(from, sizeof from, "\"%s\":\"%s\"", vals[v].key, vals[v].name);
            snprintf(to, sizeof to, "%s", from);
            to[strlen(vals[v].key) + 4 + pos] ^= 0x20;
            const char *lit = lit_details[vals[v].lit];
            const char *f = strstr(lit, from);
            REQUIREF(f != NULL, "%s not in %s", from, lit);
            snprintf(det, sizeof det, "%.*s%s%s", (int)(f - lit), lit, to, f + strlen(from));
            tj *root = threat_tree(det, (pos & 1) != 0);
            size_t n = write_tree(root);
            oc_res want = ref_of(lit);
            want.hit[O_SEVOF] = want.hit[O_SEV];
            want.val[O_SEVOF] = want.val[O_SEV];
            modes_all(mode, E_SAME);
            mode[O_DETAIL] = E_ANY;
            if (vals[v].o == O_KIND) {
                modes_all(mode, E_MISS);
                mode[O_DETAIL] = E_ANY;
            } else {
                mode[vals[v].o] = E_MISS;
                if (vals[v].o == O_SEV)
                    mode[O_SEVOF] = E_MISS;
            }
            snprintf(l, sizeof l, "value %s", to);
            expect_rejected(threat_buf, n, l, &want, mode, false);
        }
    }
}
END_TEST

/* Deep nesting: no recursion, a bounded walk, and the limit where the
 * decoder's is (JS_MAX_DEPTH, the top-level object at depth 1). */
START_TEST(test_threat_depth)
{
    const size_t deep = 100000;
    char l[128];
    int mode[O_N];
    size_t cap = 6 * deep + 8192;
    uint8_t *msg = malloc(cap);
    for (int a = 0; a < N_LITS; a += 2) {
        oc_res want = ref_of(lit_details[a]);
        want.hit[O_SEVOF] = want.hit[O_SEV];
        want.val[O_SEVOF] = want.val[O_SEV];
        for (int shape = 0; shape < 6; shape++) {
            /* shape 0: deep closed arrays before detail; 1: unclosed; 2: objects;
             * 3: after detail (detail first); 4: within the limit (255 + root);
             * 5: one past it */
            size_t depth = shape == 4 ? JS_MAX_DEPTH - 1 : shape == 5 ? JS_MAX_DEPTH : deep;
            tj *root = threat_tree(lit_details[a], shape == 3);
            size_t n = write_tree(root);
            size_t w = 0;
            if (shape == 3) {
                memcpy(msg, threat_buf, n - 1);
                w = n - 1;
                memcpy(msg + w, ",\"x\":", 5);
                w += 5;
            } else {
                memcpy(msg, "{\"x\":", 5);
                w = 5;
            }
            for (size_t i = 0; i < depth; i++) {
                if (shape == 2) {
                    memcpy(msg + w, "{\"a\":", 5);
                    w += 5;
                } else {
                    msg[w++] = '[';
                }
            }
            if (shape == 2)
                msg[w++] = '1';
            if (shape != 1)
                for (size_t i = 0; i < depth; i++)
                    msg[w++] = shape == 2 ? '}' : ']';
            if (shape == 3) {
                msg[w++] = '}';
            } else {
                msg[w++] = ',';
                memcpy(msg + w, threat_buf + 1, n - 1);
                w += n - 1;
            }
            REQUIRE(w <= cap);
            snprintf(l, sizeof l, "depth %zu shape %d detail %d", depth, shape, a);
            if (shape == 4) {
                expect_accepted(msg, w, l);
            } else {
                modes_all(mode, shape == 3 ? E_SAME : E_MISS_OR_SAME);
                expect_rejected(msg, w, l, &want, mode, false);
            }
        }
        /* deep nesting inside detail, before its wanted keys */
        {
            char *det = malloc(2 * deep + 1024);
            size_t w = 0;
            w += (size_t)sprintf(det, "{\"x\":");
            for (size_t i = 0; i < deep; i++)
                det[w++] = '[';
            for (size_t i = 0; i < deep; i++)
                det[w++] = ']';
            det[w++] = ',';
            const char *full = completed(lit_details[a]);
            strcpy(det + w, full + 1);
            tj *root = threat_tree(lit_details[a], false);
            size_t n = write_tree(root);
            uint8_t *p = memmem(threat_buf, n, "\"detail\":", 9);
            REQUIRE(p != NULL);
            size_t at = (size_t)(p - threat_buf) + 9, dl = strlen(full);
            size_t dn = strlen(det);
            memcpy(msg, threat_buf, at);
            memcpy(msg + at, det, dn);
            memcpy(msg + at + dn, threat_buf + at + dl, n - at - dl);
            modes_all(mode, E_MISS_OR_SAME);
            snprintf(l, sizeof l, "depth %zu inside detail %d", deep, a);
            expect_rejected(msg, n - dl + dn, l, &want, mode, false);
            /* and the detail alone */
            oc_res r;
            memset(&r, 0, sizeof r);
            oc_scan_leaves(oc_place_detail(det, dn), dn, &r);
            for (int o = O_KIND; o <= O_VOTES; o++)
                if (r.hit[o])
                    oc_cmp(&r, &want, o, o + 1, false, (const uint8_t *)det, dn, l);
            free(det);
        }
    }
    free(msg);
}
END_TEST

/* Escapes and quotes at every offset from a 64-byte block's start, before
 * detail and inside it: the walk's carries across blocks (a backslash
 * ending a block, a string open across a boundary, runs of backslashes of
 * both parities). The decoder accepts all of these. */
START_TEST(test_block_boundaries)
{
    if (!oc_use_simd(_i))
        return;
    static const char *const tails[] = {"\\\"", "\\\\", "\\\\\\\"", "\\\\\\\\", "\\\\\\\\\\\"}{[",
                                        "\\\"detail\\\":{", "d", "\\u0064", "}]\\\\"};
    char l[160];
    static char pad[400];
    for (int a = 0; a < N_LITS; a++) {
        for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
            for (size_t len = 0; len < 140; len++) {
                memset(pad, 'a', len);
                pad[len] = 0;
                char raw[512];
                snprintf(raw, sizeof raw, "%s%s", pad, tails[t]);
                for (int inside = 0; inside < 2; inside++) {
                    tj *root = threat_tree(lit_details[a], (len & 1) != 0);
                    tj *o = inside ? tj_get(root, "detail") : root;
                    size_t at = inside ? (len % 3 == 0 ? 0 : 1) : (size_t)tj_find(root, "detail");
                    tj_insert_key(o, at, "p", tj_str(raw));
                    /* a key near the boundary too: "d" then the long one */
                    tj_insert_key(o, at, raw, tj_str(tails[t]));
                    if (inside && len % 2)
                        vr_place_tag(root, 1, NULL);
                    size_t n = write_tree(root);
                    snprintf(l, sizeof l, "pad %zu tail %s %s detail %d", len, tails[t],
                             inside ? "inside" : "before", a);
                    expect_accepted(threat_buf, n, l);
                }
            }
        }
    }
}
END_TEST

/* The model reader and the optics reader on a detail of an unknown kind, or
 * without a tag: no kind, dropped by both. */
START_TEST(test_no_kind)
{
    static const char *const dets[] = {
        "{\"type\":\"Feature\",\"severity\":\"Sev1\"}",
        "{\"severity\":\"Sev1\",\"impact\":{\"service\":{\"tier\":\"Critical\"}}}",
        "{}",
        "[]",
        "\"Incident\"",
        "{\"Type\":\"Incident\",\"severity\":\"Sev1\"}",
    };
    for (size_t k = 0; k < sizeof dets / sizeof dets[0]; k++) {
        tj *root = threat_tree(INC("Sev1", "Critical"), k % 2);
        set_detail(root, dets[k]);
        size_t n = write_tree(root);
        int mode[O_N];
        modes_all(mode, E_MISS);
        mode[O_DETAIL] = E_ANY;
        oc_res want;
        memset(&want, 0, sizeof want);
        char l[160];
        snprintf(l, sizeof l, "detail %s", dets[k]);
        expect_rejected(threat_buf, n, l, &want, mode, false);
        oc_res r;
        oc_scan_msg(oc_place_msg(threat_buf, n), n, &r);
        REQUIRE(!r.keep);
        REQUIRE(r.jkind == -1);
    }
}
END_TEST


static Suite *threats_suite(void)
{
    Suite *s = suite_create("optics_threats");
    TCase *t = su_tcase(s, "threats", oc_setup, oc_teardown, 600);
    tcase_add_test(t, test_threat_duplicate_detail);
    tcase_add_test(t, test_threat_duplicate_in_focus);
    tcase_add_test(t, test_threat_escapes);
    tcase_add_test(t, test_threat_case_and_nesting);
    tcase_add_test(t, test_threat_malformed);
    tcase_add_test(t, test_threat_depth);
    tcase_add_loop_test(t, test_threat_letter_case, 0, SIMD_WIDTHS);
    tcase_add_loop_test(t, test_block_boundaries, 0, SIMD_WIDTHS);
    tcase_add_test(t, test_no_kind);
    return s;
}

int main(void)
{
    int rc = su_run(threats_suite());
    if (su_nofork()) /* the counts live in this process */
        printf("optics_threats: %ld threat inputs\n", n_threats);
    return rc;
}
