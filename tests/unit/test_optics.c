/* test_optics.c: the Check suite for the optic scanners (build/gen/tr_scan_*.c,
 * runtime/skip.c) against the same paths over the decoded model
 * (tr_get_*), and for the two policy readers (filter/reader.c).
 *
 * The reference is always the full decoder: a message is decoded with
 * tr_decode_Issue and each optic read with tr_get_<name>; the scanners must
 * give the same hit or miss and the same value, and po_judge (the default
 * rules) must give the same verdict and kind through the decode reader
 * (rd_decoded) and the optics reader (rd_message, verify off).
 *
 * Inputs:
 *  - generated issues at every size 2..40, several seeds, both layouts
 *    (detail in its declared place, and first);
 *  - variants of those, re-written by test_optics_json.h: pretty-printed,
 *    members shuffled (the union tag not first, or last), keys and values
 *    \u-escaped, unknown members inserted before and inside detail and along
 *    every path (names sharing a prefix with wanted keys, case variants,
 *    strings equal to key names, nested objects and arrays holding the
 *    wanted keys), optional fields as null and empty lists left out, nasty
 *    strings (escaped quotes, backslashes, brackets, UTF-8, surrogate
 *    pairs) in every free-text field;
 *  - THREATS.md's cases, built on generated issues;
 *  - every prefix of a few messages (and of their details alone), and
 *    single-byte corruptions of them: every position from 64 bytes before
 *    the detail to 64 after it to 26 values, every 5th elsewhere to the
 *    structural bytes.
 *
 * Semantics checked (verify=off). On any text the decoder accepts, every
 * scanner agrees with the decoder. On text the decoder rejects, a scanner
 * may hit or miss, but never misreads: for duplicates (which the decoder
 * rejects, TR_E_DUPLICATE) the first occurrence wins (a second tag naming
 * another case may turn a leaf into a miss); a value cut short is a miss,
 * never a shorter value. After a single-byte corruption the decoder still
 * accepts, the scanners must agree with it exactly.
 *
 * Every input the scanners read ends at an unmapped page (guard_place), and
 * a detail's leaf scanners are also run on a copy of the detail's bytes that
 * ends at its own unmapped page. The equality tests run once per SIMD
 * implementation (JS_SIMD=portable|sse2|avx2|avx512; loop tests), and
 * test_impls_identical runs all four in one process on the same inputs
 * (including prefixes and corruptions) and requires identical results.
 *
 * On a failure the offending input is written to /tmp/test_optics_fail_*.json
 * (its path is in the message).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "issues.h"
#include "policy.h"
#include "reader.h"
#include "skip.h"
#include "tr_model.h"
#include "tr_optics.h"

#include "literals.h"
#include "test_optics_json.h"

/* ---- SIMD implementations ---- */

static const char *const impl_names[] = {"portable", "sse2", "avx2", "avx512"};
#define N_IMPLS 4

/* Selects implementation i as the brief says (JS_SIMD, then sk_init); since
 * js_init decides once per process, js_force_simd makes the choice stick
 * when something chose already. false when the CPU lacks it. */
static bool use_impl(int i)
{
    setenv("JS_SIMD", impl_names[i], 1);
    sk_init();
    if (strcmp(sk_impl_name(), impl_names[i]) != 0) {
        if (js_force_simd(impl_names[i]) == NULL)
            return false;
        sk_init();
    }
#if defined(__x86_64__) || defined(__i386__)
    if (i >= 2 && !__builtin_cpu_supports("pclmul"))
        return false; /* skip.c then falls back to sse2 */
#endif
    ck_assert_str_eq(sk_impl_name(), impl_names[i]);
    ck_assert_str_eq(js_simd_name(), impl_names[i]);
    return true;
}

/* ---- inputs that end right before an unmapped page ---- */

#define GUARD_CAP (8u << 20)

typedef struct {
    uint8_t *body; /* GUARD_CAP bytes, then a PROT_NONE page */
} guard;

static guard g_msg, g_det;

static uint8_t *guard_place(guard *g, const void *data, size_t n)
{
    if (g->body == NULL) {
        size_t pg = (size_t)sysconf(_SC_PAGESIZE);
        uint8_t *m = mmap(NULL, GUARD_CAP + pg, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE_TRUE((m) != (MAP_FAILED));
        REQUIRE_TRUE(mprotect(m + GUARD_CAP, pg, PROT_NONE) == 0);
        g->body = m;
    }
    REQUIRE_TRUE((n) <= (GUARD_CAP));
    uint8_t *p = g->body + GUARD_CAP - n;
    if (n != 0 && p != data)
        memmove(p, data, n);
    return p;
}

/* ---- the policy, arenas ---- */

static po_policy pol;
static rd_reader *rd; /* both readers' rules reader */
static ar_arena dec_arena;
static uint8_t *dec_mem;
#define DEC_CAP (32u << 20)

static void setup(void)
{
    if (rd == NULL) {
        rd_choice none = {0}; /* the default rules */
        char err[256];
        REQUIRE(rd_policy(&none, &pol, err, sizeof err), "%s", err);
        rd = rd_new();
        REQUIRE_TRUE(rd != NULL);
    }
    if (dec_mem == NULL) {
        dec_mem = malloc(DEC_CAP);
        REQUIRE_TRUE((dec_mem) != NULL);
    }
    ar_init(&dec_arena, dec_mem, DEC_CAP);
    tj_reset();
    sk_init();
}

/* ---- failures keep their input ---- */

static int fail_count;

static const char *dump(const uint8_t *m, size_t n)
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

#define FAIL_IF(cond, m, n, ...)                                                        \
    do {                                                                                \
        if (cond) {                                                                     \
            char fail_msg_[512];                                                        \
            snprintf(fail_msg_, sizeof fail_msg_, __VA_ARGS__);                         \
            ck_abort_msg("%s [impl %s; input %zu bytes in %s]", fail_msg_, sk_impl_name(), \
                         (size_t)(n), dump((m), (n)));                                  \
        }                                                                               \
    } while (0)

/* ---- what each reader reads ---- */

enum { O_DETAIL, O_KIND, O_SEV, O_TIER, O_MOD, O_PLAN, O_VOTES, O_SEVOF, O_N };
static const char *const o_names[O_N] = {"detail", "kind", "severity", "tier",
                                         "module", "plan", "votes", "severityOf"};

typedef struct {
    bool hit[O_N];
    int64_t val[O_N]; /* detail: the kind tr_dec_Detail reads from the view (-1: none) */
    size_t det_off, det_n; /* the detail's view, as an offset into the message */
    bool keep;
    int jkind;
} res;

/* The leaves over a detail's bytes (kind, severity, tier, module, plan, votes). */
static void scan_leaves(const uint8_t *p, size_t n, res *r)
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
static void judge_bytes(const uint8_t *p, size_t n, res *r)
{
    REQUIRE_TRUE(rd_message(rd, VF_OFF, (tr_message){p, n}));
    r->jkind = -1;
    r->keep = po_judge(&pol, &rd->ru, &r->jkind);
}

/* Everything from a message's bytes. */
static void scan_msg(const uint8_t *p, size_t n, res *r)
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
        FAIL_IF(r->jkind != want, p, n, "no whole detail: judged kind %d, the kind there %d",
                r->jkind, want);
        FAIL_IF(want < 0 && r->keep, p, n, "no detail, yet judged keep");
        return;
    }
    if (v.p < p || v.n > n || v.p + v.n > p + n) {
        FAIL_IF(true, p, n, "detail view [%p, +%zu) outside the message [%p, +%zu)",
                (const void *)v.p, v.n, (const void *)p, n);
    }
    r->det_off = (size_t)(v.p - p);
    r->det_n = v.n;
    tr_Detail d;
    js_ctx c;
    ar_reset(&dec_arena);
    js_ctx_init(&c, v.p, &dec_arena);
    const uint8_t *q = tr_dec_Detail(&c, v.p, v.p + v.n, &d);
    r->val[O_DETAIL] = q == v.p + v.n ? (int64_t)d.kind : -1;
    scan_leaves(v.p, v.n, r);
    judge_bytes(p, n, r);
}

/* The same paths over a decoded issue (tr_get_*), and the model reader's verdict. */
static void model_res(const tr_Issue *is, res *r)
{
    memset(r, 0, sizeof *r);
    const tr_Detail *d;
    r->hit[O_DETAIL] = tr_get_detail(is, &d);
    REQUIRE_TRUE(r->hit[O_DETAIL]);
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

static void fmt_o(const res *r, int o, char *buf, size_t cap)
{
    if (r->hit[o])
        snprintf(buf, cap, "%lld", (long long)r->val[o]);
    else
        snprintf(buf, cap, "miss");
}

/* The optics in [o0, o1) and (when verdict) the verdicts must be equal. */
static void cmp_res(const res *got, const res *want, int o0, int o1, bool verdict,
                    const uint8_t *m, size_t n, const char *label)
{
    for (int o = o0; o < o1; o++) {
        bool same = got->hit[o] == want->hit[o] && (!got->hit[o] || got->val[o] == want->val[o]);
        if (!same) {
            char g[32], w[32];
            fmt_o(got, o, g, sizeof g);
            fmt_o(want, o, w, sizeof w);
            FAIL_IF(true, m, n, "%s: optic %s: scanner %s, reference %s", label, o_names[o], g, w);
        }
    }
    if (verdict)
        FAIL_IF(got->keep != want->keep || got->jkind != want->jkind, m, n,
                "%s: verdict optics %s/%d, model %s/%d", label, got->keep ? "keep" : "drop",
                got->jkind, want->keep ? "keep" : "drop", want->jkind);
}

static long n_checked; /* messages checked in full, for the summary */

/* The central check: the message must decode, and every optic and the
 * verdict must match the model; the detail's leaves again on a copy of its
 * bytes at the end of a mapping. *out (if not NULL) receives the scan. */
static void check_msg(const uint8_t *msg, size_t n, const char *label, res *out)
{
    const uint8_t *m = guard_place(&g_msg, msg, n);
    tr_Issue is;
    ar_reset(&dec_arena);
    tr_error e = tr_decode_Issue(m, n, &dec_arena, &is);
    FAIL_IF(e.code != TR_E_OK, msg, n, "%s: the decoder rejects it: %s at %zu (%s)", label,
            tr_error_name(e.code), e.offset, e.what ? e.what : "");
    res mr, sr, dr;
    model_res(&is, &mr);
    scan_msg(m, n, &sr);
    cmp_res(&sr, &mr, 0, O_N, true, m, n, label);
    memcpy(&dr, &sr, sizeof dr);
    const uint8_t *d = guard_place(&g_det, m + sr.det_off, sr.det_n);
    scan_leaves(d, sr.det_n, &dr);
    cmp_res(&dr, &mr, O_KIND, O_VOTES + 1, false, d, sr.det_n, label);
    n_checked++;
    if (out != NULL)
        *out = sr;
}

/* ---- the variants ---- */

enum {
    V_PRETTY,
    V_SHUFFLE,
    V_TYPE_LAST,
    V_ESC_KEYS,
    V_ESC_VALS,
    V_UNKNOWN,
    V_NULLS,
    V_FIRST,
    V_NASTY,
    V_ALL,
    V_ALL2,
    V_LIGHT,
    V_COUNT
};
static const char *const v_names[V_COUNT] = {
    "pretty", "shuffled", "type-last", "escaped-keys", "escaped-values", "unknown-fields",
    "nulls",  "first",    "nasty-strings", "all", "all-first", "light"};

/* Each wanted key, with a decoy value of its type (one a careless reader
 * would keep: Sev1, Critical, Payments, Enterprise, 200 votes). */
static const struct {
    const char *key, *decoy;
} wanted[] = {
    {"detail", "{\"type\":\"Incident\",\"severity\":\"Sev1\",\"impact\":{\"service\":{\"tier\":\"Critical\"}}}"},
    {"type", "\"Incident\""},
    {"severity", "\"Sev1\""},
    {"impact", "{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\",\"tier\":\"Critical\",\"region\":\"r\"}}"},
    {"service", "{\"tier\":\"Critical\"}"},
    {"tier", "\"Critical\""},
    {"trace", "{\"frames\":[{\"module\":\"Payments\"}]}"},
    {"frames", "[{\"module\":\"Payments\"}]"},
    {"module", "\"Payments\""},
    {"requester", "{\"contract\":{\"plan\":\"Enterprise\"}}"},
    {"contract", "{\"plan\":\"Enterprise\"}"},
    {"plan", "\"Enterprise\""},
    {"votes", "{\"count\":200}"},
    {"count", "200"},
};

static const char *decoy_of(const char *key)
{
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (strcmp(wanted[i].key, key) == 0)
            return wanted[i].decoy;
    ck_abort_msg("no decoy for %s", key);
    return NULL;
}

/* A JSON text as the raw content of a string (quotes and backslashes escaped). */
static const char *as_string_raw(const char *json)
{
    size_t n = strlen(json);
    char *d = tj_alloc(2 * n + 1), *w = d;
    for (size_t i = 0; i < n; i++) {
        if (json[i] == '"' || json[i] == '\\')
            *w++ = '\\';
        *w++ = json[i];
    }
    *w = 0;
    return d;
}

/* Unknown members around wanted key K in object o, at random places (the
 * first at the front, so before the real member). */
static void add_decoys(tj *o, const char *K, uint64_t *rng)
{
    const char *dj = decoy_of(K);
    char k[96], v[512];
    size_t kl = strlen(K);
    int added = 0;
#define AT() (added++ == 0 ? 0 : (size_t)tj_below(rng, o->count + 1))
    snprintf(k, sizeof k, "%sX", K); /* same start, longer */
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%ss", K);
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%.*s", (int)(kl - 1), K); /* a proper prefix */
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%c%s", K[0] - 32, K + 1); /* another case */
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%.*s\\u00%02X", (int)(kl - 1), K, K[kl - 1] - 32); /* escaped, other case */
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%s\\u0000", K); /* escaped, longer */
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%s ", K);
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "z_%s", K); /* a string value equal to the key */
    tj_insert_key(o, AT(), k, tj_str(K));
    snprintf(k, sizeof k, "%.1s", K); /* key: K's first letter; value: K */
    if (tj_find(o, k) < 0)
        tj_insert_key(o, AT(), k, tj_str(K));
    snprintf(k, sizeof k, "n_%s", K); /* K inside a nested object */
    snprintf(v, sizeof v, "{\"%s\":%s,\"x\":{\"%s\":%s}}", K, dj, K, dj);
    tj_insert_key(o, AT(), k, tj_parse0(v));
    snprintf(k, sizeof k, "a_%s", K); /* K inside arrays */
    snprintf(v, sizeof v, "[\"%s\",{\"%s\":%s},[[%s]],\"%s\"]", K, K, dj, dj, K);
    tj_insert_key(o, AT(), k, tj_parse0(v));
    snprintf(k, sizeof k, "s_%s", K); /* K and its decoy inside a string */
    snprintf(v, sizeof v, "\"%s\":%s", K, dj);
    tj_insert_key(o, AT(), k, tj_str(as_string_raw(v)));
#undef AT
}

/* The fields whose strings name an enum's case or a union's case: learnt
 * from the decoder, which names the field when it rejects a value as no
 * case (TR_E_ENUM, TR_E_TAG), so no schema's enum fields are listed here.
 * Their values (and the strings of a list or map under them) stay as they
 * are; make_variant learns one and tries again when a nasty string lands
 * on one. */
#define MAX_ENUM_KEYS 64
static char enum_keys[MAX_ENUM_KEYS][64];
static int n_enum_keys;

static bool is_enum_key(const char *k, size_t kn)
{
    for (int i = 0; i < n_enum_keys; i++)
        if (strlen(enum_keys[i]) == kn && memcmp(enum_keys[i], k, kn) == 0)
            return true;
    return false;
}

/* false when it is known already (or there is no room). */
static bool learn_enum_key(const char *k)
{
    if (k == NULL || strlen(k) >= sizeof enum_keys[0] || n_enum_keys == MAX_ENUM_KEYS ||
        is_enum_key(k, strlen(k)))
        return false;
    snprintf(enum_keys[n_enum_keys++], sizeof enum_keys[0], "%s", k);
    return true;
}

/* Raw string contents that trip a careless skipper. */
static const char *const nasty[] = {
    "\\\"detail\\\":{\\\"type\\\":\\\"Incident\\\",\\\"severity\\\":\\\"Sev1\\\"}",
    "\\\\",
    "\\\\\\\\\\\"",
    "}}]]}",
    "{{[[{",
    "\\\\\\\"",
    "d\\\\",
    "t\\\"",
    "\\u0064etail",
    "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80 caf\xc3\xa9",
    "\\ud83d\\ude00\\uD83D\\uDE00",
    "\\b\\f\\n\\r\\t\\/\\u0000\\u001f",
    "detail",
    "type",
    "severity",
    "",
    "{\\\"detail\\\":[\\\"\\\\\\\\\\\"]}",
};

static const char *nasty_pick(uint64_t *rng)
{
    size_t i = (size_t)tj_below(rng, sizeof nasty / sizeof nasty[0] + 1);
    if (i == sizeof nasty / sizeof nasty[0]) {
        /* a long string with quotes and backslashes at varied offsets */
        char *d = tj_alloc(400);
        size_t n = 0, len = 40 + (size_t)tj_below(rng, 200);
        while (n < len) {
            switch (tj_below(rng, 8)) {
            case 0: d[n++] = '\\'; d[n++] = '"'; break;
            case 1: d[n++] = '\\'; d[n++] = '\\'; break;
            case 2: d[n++] = "{}[]"[tj_below(rng, 4)]; break;
            default: d[n++] = "detail type"[tj_below(rng, 11)]; break;
            }
        }
        d[n] = 0;
        return d;
    }
    return nasty[i];
}

/* Replaces free-text string values (not enum values, not keys) at random.
 * The random choices do not depend on which keys are known to be enums, so
 * learning one more changes only the values under it. in_enum: v is the
 * value of an enum field (a list or map of cases). */
static void put_nasty(tj *v, uint64_t *rng, bool in_enum)
{
    for (size_t i = 0; i < v->count; i++) {
        tj *c = v->items[i];
        bool enum_key = v->t == TJ_OBJ && is_enum_key(v->keys[i], v->klen[i]);
        if (c->t == TJ_STR) {
            if (tj_below(rng, 3) == 0) {
                const char *s = nasty_pick(rng);
                if (!in_enum && !enum_key)
                    v->items[i] = tj_str(s);
            }
        } else if (c->t == TJ_OBJ || c->t == TJ_ARR) {
            put_nasty(c, rng, enum_key);
        }
    }
}

static void shuffle_all(tj *v, uint64_t *rng)
{
    if (v->t == TJ_OBJ)
        for (size_t i = v->count; i > 1; i--)
            tj_move(v, (size_t)tj_below(rng, i), i - 1);
    if (v->t == TJ_OBJ || v->t == TJ_ARR)
        for (size_t i = 0; i < v->count; i++)
            shuffle_all(v->items[i], rng);
}

/* Empty lists and maps left out, at every level. */
static void drop_empty(tj *v)
{
    for (size_t i = 0; i < v->count;) {
        tj *c = v->items[i];
        if (v->t == TJ_OBJ && (c->t == TJ_ARR || c->t == TJ_OBJ) && c->count == 0) {
            tj_remove(v, i);
            continue;
        }
        if (c->t == TJ_OBJ || c->t == TJ_ARR)
            drop_empty(c);
        i++;
    }
}

/* Optional fields absent in the message written as null; empty lists and maps left out. */
static void nulls(tj *root, uint64_t *rng)
{
    static const char *const opt[] = {"resolution", "dueAt", "resolvedAt", "parentId"};
    drop_empty(root);
    for (size_t i = 0; i < 4; i++)
        if (tj_find(root, opt[i]) < 0)
            tj_insert_key(root, (size_t)tj_below(rng, root->count + 1), opt[i], tj_parse0("null"));
}

/* The objects along the optics' paths, for decoys and tag placement. */
typedef struct {
    tj *root, *detail, *path[8];
    const char *pkey[8];
    int npath;
} paths;

static void find_paths(tj *root, paths *ps)
{
    memset(ps, 0, sizeof *ps);
    ps->root = root;
    ps->detail = tj_get(root, "detail");
    REQUIRE_TRUE((ps->detail) != NULL);
    tj *d = ps->detail, *x;
#define ADD(obj, key)                                                                   \
    do {                                                                                \
        if ((obj) != NULL && (obj)->t == TJ_OBJ) {                                      \
            ps->path[ps->npath] = (obj);                                                \
            ps->pkey[ps->npath++] = (key);                                              \
        }                                                                               \
    } while (0)
    if ((x = tj_get(d, "impact")) != NULL) {
        ADD(x, "service");
        ADD(tj_get(x, "service"), "tier");
    }
    if ((x = tj_get(d, "trace")) != NULL) {
        ADD(x, "frames");
        tj *f = tj_get(x, "frames");
        if (f != NULL && f->t == TJ_ARR && f->count > 0)
            ADD(f->items[0], "module");
    }
    if ((x = tj_get(d, "requester")) != NULL) {
        ADD(x, "contract");
        ADD(tj_get(x, "contract"), "plan");
    }
    ADD(tj_get(d, "votes"), "count");
#undef ADD
}

static void decoys(tj *root, uint64_t *rng)
{
    paths ps;
    find_paths(root, &ps);
    tj *d = ps.detail;
    const char *kind = d->items[tj_find(d, "type")]->s;
    /* inside detail: the tag's look-alikes, every case's wanted keys (a
     * foreign case's are unknown fields here), and severityScore */
    static const char *const dkeys[] = {"type", "severity", "impact", "trace", "votes", "requester"};
    for (size_t i = 0; i < 6; i++)
        add_decoys(d, dkeys[i], rng);
    if (strncmp(kind, "Incident", 8) != 0) {
        tj_insert_key(d, 0, "severity", tj_parse0("\"Sev1\""));
        tj_insert_key(d, (size_t)tj_below(rng, d->count + 1), "impact", tj_parse0(decoy_of("impact")));
    }
    if (strncmp(kind, "Bug", 3) != 0)
        tj_insert_key(d, (size_t)tj_below(rng, d->count + 1), "trace", tj_parse0(decoy_of("trace")));
    if (strncmp(kind, "Request", 7) != 0) {
        tj_insert_key(d, (size_t)tj_below(rng, d->count + 1), "votes", tj_parse0("{\"count\":200}"));
        tj_insert_key(d, (size_t)tj_below(rng, d->count + 1), "requester",
                      tj_parse0("{\"name\":\"n\",\"contract\":{\"plan\":\"Enterprise\",\"seats\":1,\"renewsAt\":2}}"));
    }
    tj_insert_key(d, (size_t)tj_below(rng, d->count + 1), "severityScore", tj_parse0("1.5"));
    tj_insert_key(d, (size_t)tj_below(rng, d->count + 1), "detail", tj_parse0(decoy_of("detail")));
    for (int i = 0; i < ps.npath; i++)
        add_decoys(ps.path[i], ps.pkey[i], rng);
    /* at the root, before detail: look-alikes of detail; severityScore is a real field there */
    add_decoys(root, "detail", rng);
    long at = tj_find(root, "detail");
    tj_insert_key(root, (size_t)tj_below(rng, (uint64_t)at + 1), "Detail", tj_parse0(decoy_of("detail")));
    tj_insert_key(root, 0, "x", tj_str("detail"));
    /* and nested under other records: Person, Team, Org are objects too */
    tj *rep = tj_get(root, "reporter");
    if (rep != NULL) {
        tj_insert_key(rep, 0, "detail", tj_parse0(decoy_of("detail")));
        tj *team = tj_get(rep, "team");
        if (team != NULL)
            tj_insert_key(team, team->count, "detail", tj_parse0(decoy_of("detail")));
    }
}

/* A few look-alikes only (a smaller message, for the quadratic tests). */
static void light_decoys(tj *root)
{
    tj *d = tj_get(root, "detail");
    tj_insert_key(d, 0, "typeX", tj_str("Bug"));
    tj_insert_key(d, 1, "x", tj_str("type"));
    tj_insert_key(d, 2, "severityScore", tj_parse0("1.5"));
    tj_insert_key(d, 3, "n", tj_parse0("{\"type\":\"Request\",\"severity\":\"Sev1\",\"votes\":{\"count\":200}}"));
    long i = tj_find(root, "detail");
    tj_insert_key(root, (size_t)i, "detailX", tj_parse0(decoy_of("detail")));
    tj_insert_key(root, (size_t)i, "x", tj_str("detail"));
    tj_insert_key(root, (size_t)i, "s", tj_str("\\\"detail\\\":{\\\\"));
}

/* Moves detail's tag: 1 last, 2 anywhere but first. */
static void place_tag(tj *root, int how, uint64_t *rng)
{
    tj *d = tj_get(root, "detail");
    long t = tj_find(d, "type");
    REQUIRE_TRUE((t) >= (0));
    if (d->count < 2)
        return;
    size_t to = how == 1 ? d->count - 1 : 1 + (size_t)tj_below(rng, d->count - 1);
    tj_move(d, (size_t)t, to);
}

static void detail_first(tj *root)
{
    long i = tj_find(root, "detail");
    REQUIRE_TRUE((i) >= (0));
    tj_move(root, (size_t)i, 0);
}

static uint8_t var_buf[GUARD_CAP];

/* Variant v of the message [m, m+n) (a compact encoding), once. */
static size_t make_variant_once(const uint8_t *m, size_t n, int v, uint64_t seed, uint8_t *out,
                                size_t cap)
{
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull + (uint64_t)v * 7919u + 1;
    tj_reset();
    tj *root = tj_parse((const char *)m, n);
    bool pretty = false;
    int ek = 0, ev = 0;
    switch (v) {
    case V_PRETTY:
        pretty = true;
        break;
    case V_SHUFFLE:
        shuffle_all(root, &rng);
        place_tag(root, 2, &rng);
        break;
    case V_TYPE_LAST:
        place_tag(root, 1, &rng);
        break;
    case V_ESC_KEYS:
        ek = 350;
        break;
    case V_ESC_VALS:
        ev = 350;
        break;
    case V_UNKNOWN:
        decoys(root, &rng);
        break;
    case V_NULLS:
        nulls(root, &rng);
        break;
    case V_FIRST:
        detail_first(root);
        break;
    case V_NASTY:
        put_nasty(root, &rng, false);
        break;
    case V_LIGHT:
        nulls(root, &rng);
        light_decoys(root);
        shuffle_all(root, &rng);
        place_tag(root, 1, &rng);
        if (tj_below(&rng, 2))
            detail_first(root);
        pretty = true;
        ek = 200;
        ev = 200;
        break;
    case V_ALL:
    case V_ALL2:
        put_nasty(root, &rng, false);
        nulls(root, &rng);
        decoys(root, &rng);
        shuffle_all(root, &rng);
        place_tag(root, tj_below(&rng, 2) ? 1 : 2, &rng);
        if (v == V_ALL2)
            detail_first(root);
        pretty = true;
        ek = 200;
        ev = 200;
        break;
    default:
        ck_abort();
    }
    return tj_write(root, out, cap, rng, pretty, ek, ev);
}

/* Variant v of the message [m, m+n): when a nasty string replaced an enum
 * value (the decoder names the field), that field is learnt and the
 * variant made again, from the same seed. */
static size_t make_variant(const uint8_t *m, size_t n, int v, uint64_t seed, uint8_t *out,
                           size_t cap)
{
    for (;;) {
        size_t vn = make_variant_once(m, n, v, seed, out, cap);
        if (v != V_NASTY && v != V_ALL && v != V_ALL2)
            return vn;
        tr_Issue is;
        ar_reset(&dec_arena);
        tr_error e = tr_decode_Issue(out, vn, &dec_arena, &is);
        if ((e.code != TR_E_ENUM && e.code != TR_E_TAG) || !learn_enum_key(e.what))
            return vn;
    }
}

/* ---- generated messages ---- */

static uint8_t base_buf[ISS_MAX_MESSAGE];

/* Issue (seed, i) at size, encoded with detail first or in place, copied
 * into base_buf. */
static size_t gen_msg(iss_gen *g, uint64_t seed, uint64_t i, bool first)
{
    size_t n;
    const uint8_t *f = iss_gen_frame(g, seed, i, first, &n);
    REQUIRE_TRUE((f) != NULL);
    REQUIRE_TRUE((n) >= (5));
    memcpy(base_buf, f + 5, n - 5);
    return n - 5;
}

#define SEEDS 8
#define MIN_SIZE 2
#define MAX_SIZE 40

static long n_hits[O_N]; /* hits per optic over the generated messages (coverage) */

static void run_generated(bool variants, int impl)
{
    static uint8_t copy[ISS_MAX_MESSAGE];
    char label[160];
    memset(n_hits, 0, sizeof n_hits);
    for (int size = MIN_SIZE; size <= MAX_SIZE; size++) {
        iss_gen *g = iss_gen_new(size);
        REQUIRE_TRUE((g) != NULL);
        for (uint64_t seed = 1; seed <= SEEDS; seed++) {
            for (int first = 0; first < 2; first++) {
                uint64_t idx = (uint64_t)size * 1000 + seed;
                size_t n = gen_msg(g, 77 + seed, idx, first);
                snprintf(label, sizeof label, "size %d seed %llu i %llu %s", size,
                         (unsigned long long)(77 + seed), (unsigned long long)idx,
                         first ? "detail-first" : "late");
                res base;
                check_msg(base_buf, n, label, &base);
                for (int o = 0; o < O_N; o++)
                    n_hits[o] += base.hit[o];
                if (!variants)
                    continue;
                memcpy(copy, base_buf, n);
                res bm;
                {
                    /* the base's model, to compare each variant's decode with */
                    tr_Issue is;
                    ar_reset(&dec_arena);
                    REQUIRE_TRUE(tr_decode_Issue(copy, n, &dec_arena, &is).code == TR_E_OK);
                    model_res(&is, &bm);
                }
                for (int v = 0; v < V_COUNT; v++) {
                    size_t vn = make_variant(copy, n, v, seed * 131 + (uint64_t)size + (uint64_t)first * 7 + (uint64_t)impl,
                                             var_buf, sizeof var_buf);
                    char vl[200];
                    snprintf(vl, sizeof vl, "%s variant %s", label, v_names[v]);
                    res vr;
                    check_msg(var_buf, vn, vl, &vr);
                    /* the variant carries the same values as the original (the
                     * re-writer's own check; check_msg compared it with its decode) */
                    cmp_res(&vr, &bm, O_KIND, O_N, true, var_buf, vn, vl);
                }
            }
        }
        iss_gen_free(g);
    }
    /* the generated messages reach every optic, hits and misses */
    for (int o = 0; o < O_N; o++)
        REQUIRE(n_hits[o] > 0, "no generated message hits optic %s", o_names[o]);
    REQUIRE(n_hits[O_SEV] < n_hits[O_KIND], "no miss for severity");
}

START_TEST(test_generated)
{
    if (!use_impl(_i))
        return;
    run_generated(false, _i);
}
END_TEST

START_TEST(test_variants)
{
    if (!use_impl(_i))
        return;
    run_generated(true, _i);
}
END_TEST

/* ---- prefixes and corruptions ---- */

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
            REQUIRE_TRUE(k >= 0 && k < TR_DETAIL_COUNT);
            if (have[k])
                continue;
            if (k == TR_DETAIL_BUG && is->detail.u.Bug.trace.frames.count == 0)
                continue;
            have[k] = true;
            nhave++;
            for (int first = 0; first < 2; first++) {
                REQUIRE_TRUE((n_samples) < (N_SAMPLES));
                size_t n = gen_msg(g, 5, i, first);
                sample *s = &samples[n_samples++];
                s->p = malloc(n);
                memcpy(s->p, base_buf, n);
                s->n = n;
                snprintf(s->label, sizeof s->label, "size %d seed 5 i %llu %s", size,
                         (unsigned long long)i, first ? "detail-first" : "late");
            }
        }
        iss_gen_free(g);
    }
    REQUIRE_TRUE((n_samples) == (N_SAMPLES));
}

static long n_prefixes, n_prefix_hits;

/* Every prefix of [msg, msg+n) at the end of a mapping: each optic misses
 * or reads exactly what it reads on the whole message; the same for every
 * prefix of the detail's own bytes. res out receives one result per prefix
 * when not NULL (for the cross-implementation comparison). */
static void check_prefixes(const uint8_t *msg, size_t n, const char *label, res *outs)
{
    char l[200];
    res full;
    check_msg(msg, n, label, &full);
    for (size_t len = 0; len <= n; len++) {
        const uint8_t *m = guard_place(&g_msg, msg, len);
        res r;
        scan_msg(m, len, &r);
        n_prefixes++;
        snprintf(l, sizeof l, "%s prefix %zu of %zu", label, len, n);
        if (r.hit[O_DETAIL]) {
            n_prefix_hits++;
            FAIL_IF(r.det_off != full.det_off || r.det_n != full.det_n, m, len,
                    "%s: detail view at %zu+%zu, whole message %zu+%zu", l, r.det_off, r.det_n,
                    full.det_off, full.det_n);
            cmp_res(&r, &full, 0, O_N, true, m, len, l);
        } else {
            FAIL_IF(r.keep, m, len, "%s: kept without a detail", l);
        }
        for (int o = 0; o < O_N; o++)
            if (r.hit[o])
                cmp_res(&r, &full, o, o + 1, false, m, len, l);
        if (outs)
            outs[len] = r;
    }
    const uint8_t *d0 = msg + full.det_off;
    for (size_t len = 0; len <= full.det_n; len++) {
        const uint8_t *d = guard_place(&g_det, d0, len);
        res r;
        memset(&r, 0, sizeof r);
        scan_leaves(d, len, &r);
        n_prefixes++;
        snprintf(l, sizeof l, "%s: detail prefix %zu of %zu", label, len, full.det_n);
        for (int o = O_KIND; o <= O_VOTES; o++)
            if (r.hit[o])
                cmp_res(&r, &full, o, o + 1, false, d, len, l);
        if (len == full.det_n)
            cmp_res(&r, &full, O_KIND, O_VOTES + 1, false, d, len, l);
        if (outs)
            outs[n + 1 + len] = r;
    }
}

START_TEST(test_prefixes)
{
    if (!use_impl(_i))
        return;
    make_samples();
    static uint8_t v[1 << 16];
    for (int s = 0; s < n_samples; s++) {
        check_prefixes(samples[s].p, samples[s].n, samples[s].label, NULL);
        /* and a re-written one: pretty, escaped, shuffled, with decoys */
        size_t vn = make_variant(samples[s].p, samples[s].n, V_LIGHT, (uint64_t)s, v, sizeof v);
        char l[160];
        snprintf(l, sizeof l, "%s variant light", samples[s].label);
        check_prefixes(v, vn, l, NULL);
    }
    REQUIRE_TRUE((n_prefix_hits) > (0));
}
END_TEST

static const uint8_t corrupt_bytes[] = {0x00, 0x01, 0x1f, ' ', '\t', '"', '\\', '{', '}', '[', ']',
                                        ':', ',', '/', 'u', 'x', '0', '9', '-', 'e', 0x7f, 0x80,
                                        0xc3, 0xff};

static long n_corrupt, n_corrupt_valid;

/* Every single-byte change of [msg, msg+n) to each of corrupt_bytes and to
 * its neighbours: no crash and no read outside the bytes; whenever the
 * decoder still accepts the message, every optic agrees with it; the
 * detail's leaves likewise on the corrupted detail alone. hashes (when not
 * NULL) receives a digest of each result, in order. */
static uint64_t res_digest(const res *r)
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

static bool is_structural(uint8_t b)
{
    return b == '"' || b == '\\' || b == '{' || b == '}' || b == '[' || b == ']' || b == 0 || b == 0xff;
}

static size_t check_corruptions(const uint8_t *msg, size_t n, const char *label, uint64_t *hashes)
{
    static uint8_t buf[1 << 16];
    REQUIRE_TRUE((n) <= (sizeof buf));
    res full;
    check_msg(msg, n, label, &full);
    size_t count = 0;
    char l[200];
    for (size_t pos = 0; pos < n; pos++) {
        uint8_t cand[sizeof corrupt_bytes + 2];
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
            uint8_t *m = guard_place(&g_msg, buf, n);
            res r;
            scan_msg(m, n, &r);
            bool in_detail = pos >= full.det_off && pos < full.det_off + full.det_n;
            if (in_detail) {
                const uint8_t *d = guard_place(&g_det, m + full.det_off, full.det_n);
                res dr;
                memset(&dr, 0, sizeof dr);
                scan_leaves(d, full.det_n, &dr);
                if (hashes)
                    hashes[count] ^= res_digest(&dr) * 31;
                /* the detail alone, against tr_dec_Detail when it accepts */
                tr_Detail dd;
                js_ctx c;
                ar_reset(&dec_arena);
                js_ctx_init(&c, d, &dec_arena);
                const uint8_t *q = tr_dec_Detail(&c, d, d + full.det_n, &dd);
                if (q == d + full.det_n) {
                    tr_Issue fake;
                    memset(&fake, 0, sizeof fake);
                    fake.detail = dd;
                    res mr;
                    model_res(&fake, &mr);
                    snprintf(l, sizeof l, "%s: detail byte %zu set to 0x%02x", label,
                             pos - full.det_off, cand[ci]);
                    cmp_res(&dr, &mr, O_KIND, O_VOTES + 1, false, d, full.det_n, l);
                }
            }
            tr_Issue is;
            ar_reset(&dec_arena);
            if (tr_decode_Issue(m, n, &dec_arena, &is).code == TR_E_OK) {
                res mr;
                model_res(&is, &mr);
                snprintf(l, sizeof l, "%s: byte %zu set to 0x%02x (the decoder accepts it)", label,
                         pos, cand[ci]);
                cmp_res(&r, &mr, 0, O_N, true, m, n, l);
                n_corrupt_valid++;
            }
            if (hashes)
                hashes[count] ^= res_digest(&r);
            count++;
            n_corrupt++;
        }
    }
    return count;
}

START_TEST(test_corruptions)
{
    if (!use_impl(_i))
        return;
    make_samples();
    static uint8_t v[1 << 16];
    /* each implementation takes its share of the samples (all of them are
     * covered) and a re-written one; test_impls_identical runs some of
     * them on every implementation */
    int share = (n_samples + N_IMPLS - 1) / N_IMPLS, s0 = share * _i;
    for (int s = s0; s < s0 + share && s < n_samples; s++) {
        check_corruptions(samples[s].p, samples[s].n, samples[s].label, NULL);
        if (s == s0) {
            size_t vn = make_variant(samples[s].p, samples[s].n, V_LIGHT,
                                     (uint64_t)s + 100, v, sizeof v);
            char l[160];
            snprintf(l, sizeof l, "%s variant light", samples[s].label);
            check_corruptions(v, vn, l, NULL);
        }
    }
    REQUIRE_TRUE((n_corrupt_valid) > (0));
}
END_TEST

/* ---- all implementations on the same inputs ---- */

START_TEST(test_impls_identical)
{
    bool avail[N_IMPLS];
    int navail = 0;
    for (int i = 0; i < N_IMPLS; i++)
        navail += avail[i] = use_impl(i);
    REQUIRE_TRUE(avail[0]);
    if (navail < 2)
        return;
    make_samples();
    /* messages and variants: results per implementation */
    enum { NM = 3 * 2 * V_COUNT * 3 };
    static res got[N_IMPLS][NM];
    static uint8_t v[1 << 17];
    for (int i = 0; i < N_IMPLS; i++) {
        if (!avail[i])
            continue;
        use_impl(i);
        int k = 0;
        for (int size = 2; size <= 40; size += 19) {
            iss_gen *g = iss_gen_new(size);
            for (uint64_t seed = 1; seed <= 3; seed++) {
                for (int first = 0; first < 2; first++) {
                    size_t n = gen_msg(g, 900 + seed, seed, first);
                    static uint8_t copy[ISS_MAX_MESSAGE];
                    memcpy(copy, base_buf, n);
                    for (int vi = 0; vi < V_COUNT; vi++) {
                        size_t vn = make_variant(copy, n, vi, seed, v, sizeof v);
                        const uint8_t *m = guard_place(&g_msg, v, vn);
                        REQUIRE_TRUE((k) < (NM));
                        scan_msg(m, vn, &got[i][k]);
                        if (i > 0 && avail[0]) {
                            res *a = &got[0][k], *b = &got[i][k];
                            FAIL_IF(res_digest(a) != res_digest(b), m, vn,
                                    "size %d seed %llu variant %s: %s differs from portable", size,
                                    (unsigned long long)seed, v_names[vi], impl_names[i]);
                        }
                        k++;
                    }
                }
            }
            iss_gen_free(g);
        }
    }
    /* prefixes and corruptions of the samples: every result identical */
    for (int s = 0; s < n_samples; s += 5) {
        size_t n = samples[s].n;
        size_t cap = n + 2 + 4096;
        res *outs[N_IMPLS];
        size_t nc = n * (sizeof corrupt_bytes + 2);
        uint64_t *hs[N_IMPLS];
        for (int i = 0; i < N_IMPLS; i++) {
            outs[i] = calloc(cap, sizeof(res));
            hs[i] = calloc(nc, sizeof(uint64_t));
            if (!avail[i])
                continue;
            use_impl(i);
            check_prefixes(samples[s].p, n, samples[s].label, outs[i]);
            check_corruptions(samples[s].p, n, samples[s].label, hs[i]);
            if (i == 0)
                continue;
            for (size_t j = 0; j < cap; j++)
                FAIL_IF(res_digest(&outs[0][j]) != res_digest(&outs[i][j]), samples[s].p,
                        j <= n ? j : n, "%s: prefix result %zu: %s differs from portable",
                        samples[s].label, j, impl_names[i]);
            for (size_t j = 0; j < nc; j++)
                FAIL_IF(hs[0][j] != hs[i][j], samples[s].p, n,
                        "%s: corruption %zu (byte %zu): %s differs from portable",
                        samples[s].label, j, j / (sizeof corrupt_bytes + 2), impl_names[i]);
        }
        for (int i = 0; i < N_IMPLS; i++) {
            free(outs[i]);
            free(hs[i]);
        }
    }
}
END_TEST

/* ---- THREATS.md ---- */

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
 * The literals spell the demo's fields of Bug, Incident and Request. A
 * schema that adds a field to those cases, or to a record under them,
 * would leave them incomplete: a detail is completed with every member of a
 * generated detail of the case its tag names (literals.h's lit_template)
 * whose key no literal spells, recursively through the members both have
 * (a list's elements from the generated list's first). With the demo's
 * schema nothing is added. */

#define LITERAL_KEYS INC("Sev1", "Critical") BUG("Payments") REQ("200", "Enterprise")

static bool literal_key(const char *k, size_t kn)
{
    char pat[96];
    if (kn + 4 > sizeof pat)
        return false;
    snprintf(pat, sizeof pat, "\"%.*s\":", (int)kn, k);
    return strstr(LITERAL_KEYS, pat) != NULL;
}

static void complete_val(tj *lit, const tj *tmpl);

static void complete_obj(tj *lit, const tj *tmpl)
{
    for (size_t i = 0; i < tmpl->count; i++) {
        bool found = false;
        for (size_t j = 0; j < lit->count; j++) {
            if (lit->klen[j] == tmpl->klen[i] && memcmp(lit->keys[j], tmpl->keys[i], tmpl->klen[i]) == 0) {
                found = true;
                complete_val(lit->items[j], tmpl->items[i]);
            }
        }
        if (!found && !literal_key(tmpl->keys[i], tmpl->klen[i]))
            tj_insert(lit, lit->count, tmpl->keys[i], tmpl->klen[i], tmpl->items[i]);
    }
}

static void complete_val(tj *lit, const tj *tmpl)
{
    if (lit->t == TJ_OBJ && tmpl->t == TJ_OBJ)
        complete_obj(lit, tmpl);
    else if (lit->t == TJ_ARR && tmpl->t == TJ_ARR && tmpl->count > 0)
        for (size_t j = 0; j < lit->count; j++)
            complete_val(lit->items[j], tmpl->items[0]);
}

/* The generated detail of the case d's tag names (\u escapes of ASCII
 * undone), as a tree; NULL when it names none. */
static tj *template_of(const tj *d)
{
    if (d == NULL || d->t != TJ_OBJ)
        return NULL;
    long t = tj_find(d, "type");
    if (t < 0 || d->items[t]->t != TJ_STR)
        return NULL;
    const char *r = d->items[t]->s;
    size_t rn = d->items[t]->n, n = 0;
    char name[128];
    for (size_t i = 0; i < rn && n < sizeof name; i++) {
        if (r[i] == '\\' && i + 5 < rn && r[i + 1] == 'u') {
            unsigned u;
            if (sscanf(r + i + 2, "%4x", &u) != 1 || u >= 0x80)
                return NULL;
            name[n++] = (char)u;
            i += 5;
        } else if (r[i] == '\\') {
            return NULL;
        } else {
            name[n++] = r[i];
        }
    }
    int k = tr_Detail_from(name, n);
    return k < 0 ? NULL : tj_parse0(lit_template(k));
}

static void complete_detail(tj *d)
{
    tj *tmpl = template_of(d);
    if (tmpl != NULL)
        complete_obj(d, tmpl);
}

/* A member's value (text) for detail d, completed as d's own member key. */
static tj *completed_member(const tj *d, const char *key, const char *value)
{
    tj *v = tj_parse0(value), *tmpl = template_of(d);
    const tj *tv = tmpl != NULL ? tj_get(tmpl, key) : NULL;
    if (tv != NULL)
        complete_val(v, tv);
    return v;
}

/* Replaces root's detail by the detail text, completed. */
static void set_detail(tj *root, const char *detail)
{
    long i = tj_find(root, "detail");
    REQUIRE_TRUE((i) >= (0));
    root->items[i] = tj_parse0(detail);
    complete_detail(root->items[i]);
}

/* The detail text completed, compact (a static buffer, until the next call). */
static const char *completed(const char *detail)
{
    static uint8_t out[1 << 16];
    tj *d = tj_parse0(detail);
    complete_detail(d);
    size_t n = tj_write_compact(d, out, sizeof out - 1);
    out[n] = 0;
    return (const char *)out;
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
        threat_base_n = gen_msg(threat_gen, 3, 3, false);
        memcpy(threat_base, base_buf, threat_base_n);
    }
    tj_reset();
    tj *root = tj_parse((const char *)threat_base, threat_base_n);
    set_detail(root, detail);
    if (first)
        detail_first(root);
    return root;
}

static uint8_t threat_buf[1 << 22];

static size_t write_tree(const tj *t) { return tj_write_compact(t, threat_buf, sizeof threat_buf); }

/* The reference a detail text gives, completed (the model's optics and verdict). */
static res ref_of(const char *detail)
{
    detail = completed(detail);
    size_t n = strlen(detail);
    tr_Detail d;
    js_ctx c;
    ar_reset(&dec_arena);
    js_ctx_init(&c, (const uint8_t *)detail, &dec_arena);
    const uint8_t *q = tr_dec_Detail(&c, (const uint8_t *)detail, (const uint8_t *)detail + n, &d);
    REQUIRE(q == (const uint8_t *)detail + n, "test literal does not decode: %s", detail);
    tr_Issue fake;
    memset(&fake, 0, sizeof fake);
    fake.detail = d;
    res r;
    model_res(&fake, &r);
    return r;
}

/* Expectations on an input the decoder rejects. */
enum { E_ANY, E_MISS, E_SAME, E_MISS_OR_SAME };

static long n_threats;

/* The decoder must reject [m, m+n); each optic o must then meet mode[o]
 * against want (E_SAME: hit with want's value, or miss where want misses).
 * The verdict: with want (same_verdict), or drop when no detail is read. */
static void expect_rejected(const uint8_t *msg, size_t n, const char *label, const res *want,
                            const int mode[O_N], bool same_verdict)
{
    const uint8_t *m = guard_place(&g_msg, msg, n);
    tr_Issue is;
    ar_reset(&dec_arena);
    tr_error e = tr_decode_Issue(m, n, &dec_arena, &is);
    FAIL_IF(e.code == TR_E_OK, m, n, "%s: the decoder accepts it", label);
    res r;
    scan_msg(m, n, &r);
    char l[256];
    for (int o = 0; o < O_N; o++) {
        snprintf(l, sizeof l, "%s (decoder: %s)", label, tr_error_name(e.code));
        switch (mode[o]) {
        case E_MISS:
            FAIL_IF(r.hit[o], m, n, "%s: optic %s hits (%lld), expected a miss", l, o_names[o],
                    (long long)r.val[o]);
            break;
        case E_SAME:
            cmp_res(&r, want, o, o + 1, false, m, n, l);
            break;
        case E_MISS_OR_SAME:
            if (r.hit[o])
                cmp_res(&r, want, o, o + 1, false, m, n, l);
            break;
        default:
            break;
        }
    }
    if (same_verdict)
        cmp_res(&r, want, 0, 0, true, m, n, label);
    if (!r.hit[O_DETAIL] || !r.hit[O_KIND])
        FAIL_IF(r.keep, m, n, "%s: kept without a detail or a kind", label);
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
    check_msg(msg, n, label, NULL);
    n_threats++;
}

/* For one of the kinds' literal details: its text and reference. */
static const char *const lit_details[] = {INC("Sev1", "Critical"), INC("Sev4", "Minor"),
                                          BUG("Payments"),         BUG("Auth"),
                                          REQ("200", "Enterprise"), REQ("3", "Free")};
#define N_LITS 6

START_TEST(test_threat_duplicate_detail)
{
    /* MODEL.md: a field twice in one object is rejected by the decoder
     * (TR_E_DUPLICATE); the scanners (verify=off) read the first occurrence. */
    char l[200];
    for (int a = 0; a < N_LITS; a++) {
        for (int b = 0; b < N_LITS; b++) {
            if (a == b)
                continue;
            res want = ref_of(lit_details[a]);
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
                    detail_first(root);
                    at = root->count;
                }
                tj_insert_key(root, at, "detail", tj_parse0(lit_details[b]));
                REQUIRE_TRUE(tj_find(root, "detail") >= 0);
                size_t n = write_tree(root);
                snprintf(l, sizeof l, "duplicate detail %d then %d, placement %d", a, b, where);
                expect_rejected(threat_buf, n, l, &want, mode, true);
                /* the view is the first detail's bytes */
                res r;
                scan_msg(guard_place(&g_msg, threat_buf, n), n, &r);
                const char *first_det = completed(lit_details[a]);
                REQUIRE_TRUE((r.det_n) == (strlen(first_det)));
                REQUIRE_TRUE(memcmp(threat_buf + r.det_off, first_det, r.det_n) == 0);
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
                res want = ref_of(lit_details[leaf[t].lit]);
                want.hit[O_SEVOF] = want.hit[O_SEV];
                want.val[O_SEVOF] = want.val[O_SEV];
                modes_all(mode, E_SAME);
                mode[O_DETAIL] = E_ANY; /* the view holds both: tr_dec_Detail rejects it */
                /* the second occurrence at the end of the detail, then with the tag last */
                tj *root = threat_tree(lit_details[leaf[t].lit], first);
                detail_insert(root, -1, leaf[t].key, leaf[t].other);
                if (tag_last)
                    place_tag(root, 1, NULL);
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
                    place_tag(root, 1, NULL);
                tj *copy = tj_get(root, "detail");
                tj_remove(copy, (size_t)tj_find(copy, leaf[t].key) + 1);
                /* copy now holds just the other value; its reference */
                uint8_t dbuf[4096];
                size_t dn = tj_write_compact(copy, dbuf, sizeof dbuf - 1);
                dbuf[dn] = 0;
                res want2 = ref_of((const char *)dbuf);
                want2.hit[O_SEVOF] = want2.hit[O_SEV];
                want2.val[O_SEVOF] = want2.val[O_SEV];
                root = threat_tree(lit_details[leaf[t].lit], first);
                d = tj_get(root, "detail");
                real = tj_find(d, leaf[t].key);
                tj_insert_key(d, (size_t)real, leaf[t].key, completed_member(d, leaf[t].key, leaf[t].other));
                if (tag_last)
                    place_tag(root, 1, NULL);
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
                res want = ref_of(lit_details[a]);
                REQUIRE_TRUE(want.hit[O_KIND]);
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
        res want = ref_of(REQ("200", "Enterprise"));
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
            res want = ref_of(vals[v].detail);
            REQUIRE_TRUE(want.hit[O_KIND]);
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
            res want = ref_of(INC("Sev1", "Critical"));
            int mode[O_N];
            modes_all(mode, E_SAME);
            mode[O_DETAIL] = E_ANY;
            mode[O_SEV] = mode[O_SEVOF] = E_MISS;
            snprintf(l, sizeof l, "severity %s (%s)", bad[b].sev, bad[b].why);
            expect_rejected(threat_buf, n, l, &want, mode, false);
            res r;
            scan_msg(guard_place(&g_msg, threat_buf, n), n, &r);
            FAIL_IF(r.keep, threat_buf, n, "%s: kept", l);
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
                place_tag(root, 1, NULL);
            size_t n = write_tree(root);
            res want = ref_of(INC("Sev1", "Critical"));
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
        res want = ref_of(INC("Sev1", "Critical"));
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
                    place_tag(root, 1, NULL);
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
            REQUIRE_TRUE((o) != NULL);
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
        res want = ref_of(lit_details[a]);
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
                    REQUIRE_TRUE((p) != NULL);
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
            res r;
            scan_msg(guard_place(&g_msg, threat_buf, n), n, &r);
            REQUIRE_TRUE(r.hit[O_VOTES]);
            REQUIRE_TRUE((r.val[O_VOTES]) == (nums[k].v));
        } else {
            res want = ref_of(REQ("130", "Enterprise"));
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
        res want = ref_of(INC("Sev1", "Critical"));
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
        res r;
        scan_msg(guard_place(&g_msg, threat_buf, n), n, &r);
        REQUIRE_TRUE(!r.keep);
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
        res want = ref_of(lit_details[a]);
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
        REQUIRE_TRUE((2 * n + 2) <= (sizeof u16));
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

/* Keys and case names are case-sensitive (MODEL.md): a key differing from
 * a wanted one only in letter case is an unknown field, a value differing
 * from a case name only in letter case is no case. Every letter position
 * is varied (the walk filters candidates by their first byte, but a quote
 * in the last lane of a 64-byte block is always a candidate, so the key
 * matcher itself must be exact: swept over every alignment). */
START_TEST(test_threat_letter_case)
{
    if (!use_impl(_i))
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
                tj_insert_key(holder, (size_t)tj_find(holder, keys[k]), ck, tj_parse0(decoy_of(keys[k])));
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
                          tj_parse0(which == 0 ? decoy_of("detail") : which == 1 ? "\"Bug\"" : "\"Sev1\""));
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
            REQUIRE(f != NULL, "%s not in %s", from, lit);
            snprintf(det, sizeof det, "%.*s%s%s", (int)(f - lit), lit, to, f + strlen(from));
            tj *root = threat_tree(det, (pos & 1) != 0);
            size_t n = write_tree(root);
            res want = ref_of(lit);
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
        res want = ref_of(lit_details[a]);
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
            REQUIRE_TRUE((w) <= (cap));
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
            REQUIRE_TRUE((p) != NULL);
            size_t at = (size_t)(p - threat_buf) + 9, dl = strlen(full);
            size_t dn = strlen(det);
            memcpy(msg, threat_buf, at);
            memcpy(msg + at, det, dn);
            memcpy(msg + at + dn, threat_buf + at + dl, n - at - dl);
            modes_all(mode, E_MISS_OR_SAME);
            snprintf(l, sizeof l, "depth %zu inside detail %d", deep, a);
            expect_rejected(msg, n - dl + dn, l, &want, mode, false);
            /* and the detail alone */
            res r;
            memset(&r, 0, sizeof r);
            scan_leaves(guard_place(&g_det, det, dn), dn, &r);
            for (int o = O_KIND; o <= O_VOTES; o++)
                if (r.hit[o])
                    cmp_res(&r, &want, o, o + 1, false, (const uint8_t *)det, dn, l);
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
    if (!use_impl(_i))
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
                        place_tag(root, 1, NULL);
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
        res want;
        memset(&want, 0, sizeof want);
        char l[160];
        snprintf(l, sizeof l, "detail %s", dets[k]);
        expect_rejected(threat_buf, n, l, &want, mode, false);
        res r;
        scan_msg(guard_place(&g_msg, threat_buf, n), n, &r);
        REQUIRE_TRUE(!r.keep);
        REQUIRE_TRUE((r.jkind) == (-1));
    }
}
END_TEST

static Suite *optics_suite(void)
{
    Suite *s = suite_create("optics");
    TCase *tc = tcase_create("generated");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_generated, 0, N_IMPLS);
    tcase_add_loop_test(tc, test_variants, 0, N_IMPLS);
    suite_add_tcase(s, tc);

    tc = tcase_create("threats");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_threat_duplicate_detail);
    tcase_add_test(tc, test_threat_duplicate_in_focus);
    tcase_add_test(tc, test_threat_escapes);
    tcase_add_test(tc, test_threat_case_and_nesting);
    tcase_add_test(tc, test_threat_malformed);
    tcase_add_test(tc, test_threat_depth);
    tcase_add_loop_test(tc, test_threat_letter_case, 0, N_IMPLS);
    tcase_add_loop_test(tc, test_block_boundaries, 0, N_IMPLS);
    tcase_add_test(tc, test_no_kind);
    suite_add_tcase(s, tc);

    tc = tcase_create("robustness");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_prefixes, 0, N_IMPLS);
    tcase_add_loop_test(tc, test_corruptions, 0, N_IMPLS);
    tcase_add_test(tc, test_impls_identical);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(optics_suite());
    srunner_run_all(sr, CK_NORMAL);
    if (srunner_fork_status(sr) == CK_NOFORK) /* the counts live in this process */
        printf("optics: %ld messages checked against the decoder, %ld prefixes (%ld with a "
               "detail), %ld corruptions (%ld the decoder accepts), %ld threat inputs\n",
               n_checked, n_prefixes, n_prefix_hits, n_corrupt, n_corrupt_valid, n_threats);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
