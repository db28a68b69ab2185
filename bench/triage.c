/* triage.c: bench `triage`: one message at a time, from its bytes to a
 * verdict, over a pool of 256 generated messages at size 7 (small enough
 * to stay in cache), for each layout (detail late, as declared, or first).
 *
 *   decode         decode the whole Issue into an arena, judge the model
 *   optics         slice out the detail, judge it through the scanners, by
 *                  the default rules as the filter runs them: as C, written
 *                  by triage-rulesc at build time (rules.h: ru_emit_c)
 *   optics-interp  the same, the rules run by the interpreter (rules loaded
 *                  at run time, any text)
 *   detail         slice out the detail alone (the walk the optics start with)
 *   direct         the default rules written in C: the generated scanners
 *                  called by name, no rules engine (what the engine adds is
 *                  optics less this); run only while schema/default.rules
 *                  gives every message of the pool the same verdict
 *   root-shared    rules reading two optics from the message's root (the
 *                  detail, sought for kind, and severityOf), interpreted:
 *                  one walk of the root finds both (level.h)
 *   root-alone     the same rules, each optic walking the root itself
 *                  (ru_share_root_walk off): what the shared walk saves
 *   optics-json    optics with --verify json: one pass validates the message
 *                  and finds the detail (jsonvalid.h), then the leaves
 *   optics-schema  optics with --verify schema: the generated validator
 *                  (decode's rules) hands back the detail, then the leaves
 *   json-validate  js_validate alone (json.h: the reference, what `check
 *                  --level json` runs)
 *   json-onepass   jv_valid alone, finding the detail (optics-json's pass)
 *   schema-validate tr_validate_Issue_views alone (optics-schema's pass)
 *   optics-gzip    the message arrives gzip-compressed: inflate, then optics
 *   decode-gzip    the same, then decode
 *   decode-flood   one Issue whose tags map holds 65 536 keys built to collide
 *                  under an unkeyed hash (filter/flood.h), decoded whole;
 *                  decode-flood-random the same with random keys: the two
 *                  should cost the same (late layout only)
 *
 * Before timing, every message's verdict from optics, at each verify
 * level, must equal decode's: a reader that disagrees fails the benchmark.
 *
 * With a schema other than the demo's (the Makefile's DEMO_MODEL empty), the
 * rows written for the demo's names are left out (detail, direct,
 * json-onepass, schema-validate, the flood rows, and root-shared/-alone,
 * whose rules name its optics); the others time that schema's messages by
 * its default rules. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "benches.h"
#include "gzip.h"
#include "reader.h"
#include "verify.h"
#include "skip.h"
#include "jsonvalid.h"
#ifdef TRIAGE_DEMO_MODEL
#include "flood.h"
#endif

#define POOL 256
#ifdef TRIAGE_DEMO_MODEL
#define ARENA (16u << 20) /* the direct row's arena: the demo's rows alone use one */
#else
#define ARENA 0
#endif

typedef struct {
    bn_pool pool;
    po_policy policy;
    po_policy interp;     /* the same rules, interpreted */
    rd_reader *rd;
#ifdef TRIAGE_DEMO_MODEL
    ar_arena arena;
    tr_Issue issue;
#endif
    vf_checker *verify;
    vf_level level;
    gz_inflater inflater;
    uint8_t *gz;          /* the pool's messages, each gzip-compressed */
    size_t *gz_off, *gz_len;
    bool gzip;            /* judge the compressed copies */
    ru_rules *root[2];    /* rules reading two optics from the root: walked once, and not */
} ctx_t;

static tr_message msg_at(ctx_t *c, size_t i)
{
    if (!c->gzip)
        return (tr_message){c->pool.buf + c->pool.off[i], c->pool.len[i]};
    tr_message plain = {NULL, 0};
    tr_error e = gz_inflate(&c->inflater, (tr_message){c->gz + c->gz_off[i], c->gz_len[i]}, &plain);
    (void)e; /* the copies were checked when made; an error leaves plain empty */
    return plain;
}

/* The decode reader (rd_decode: the schema's root decoded whole into its
 * arena, reset first), judging by the rules as --reader decode does. */
static int verdict_decode(ctx_t *c, size_t i)
{
    tr_message m = msg_at(c, i);
    if (!rd_decode(c->rd, m))
        return -2;
    int kind;
    return po_judge(&c->policy, &c->rd->ru, &kind) ? kind : -1;
}

/* The optics reader at c's level, judging by pol: the kind when kept. */
static int verdict_by(ctx_t *c, size_t i, const po_policy *pol)
{
    tr_message m = msg_at(c, i);
    if (!rd_message(c->rd, c->level, m))
        return -2;
    int kind;
    return po_judge(pol, &c->rd->ru, &kind) ? kind : -1;
}

/* The rules of the root-shared and root-alone rows, as the optics reader
 * judges by them, interpreted: the kind when kept. */
static int verdict_root(ctx_t *c, size_t i, const ru_rules *r)
{
    tr_message m = msg_at(c, i);
    if (!rd_message(c->rd, c->level, m))
        return -2;
    int d = ru_decide(r, &c->rd->ru);
    return d >= 0 ? d : -1;
}

static int verdict_optics(ctx_t *c, size_t i) { return verdict_by(c, i, &c->policy); }
static int verdict_interp(ctx_t *c, size_t i) { return verdict_by(c, i, &c->interp); }

#ifdef TRIAGE_DEMO_MODEL
/* The rows written for the demo's schema (the Makefile: DEMO_MODEL): its
 * optics called by name, its validator's views, its flood messages. */

/* schema/default.rules as C, over the scanners: the kind when kept, else -1. */
static int verdict_direct(ctx_t *c, size_t i)
{
    tr_message m = msg_at(c, i);
    tr_view_Detail d;
    tr_Detail_kind k;
    if (!tr_seek_detail(m, &d) || !tr_scan_kind(d, &k))
        return -1;
    bool keep = false;
    if (k == TR_DETAIL_INCIDENT) {
        tr_Severity sev;
        tr_Tier tier;
        keep = tr_scan_severity(d, &sev) && (sev == TR_SEVERITY_SEV1 || sev == TR_SEVERITY_SEV2) &&
               tr_scan_tier(d, &tier) && tier == TR_TIER_CRITICAL;
    } else if (k == TR_DETAIL_BUG) {
        tr_Module mod;
        keep = tr_scan_module(d, &mod) && mod == TR_MODULE_PAYMENTS;
    } else if (k == TR_DETAIL_REQUEST) {
        tr_Plan plan;
        tr_Votes votes;
        ar_reset(&c->arena);
        keep = tr_scan_plan(d, &plan) && (plan == TR_PLAN_BUSINESS || plan == TR_PLAN_ENTERPRISE) &&
               tr_scan_votes(d, &votes, &c->arena) && votes.count >= 130;
    }
    return keep ? (int)k : -1;
}

static void run_direct(void *ctx, size_t i) { bn_sink += (uint64_t)verdict_direct(ctx, i); }

static void run_json_onepass(void *ctx, size_t i)
{
    tr_message m = msg_at(ctx, i);
    jv_find f = {{"detail", 6}, NULL, NULL};
    bn_sink += jv_valid(m.p, m.p + m.n, &f) ? (uint64_t)(f.end - f.val) : 0;
}

static void run_schema_validate(void *ctx, size_t i)
{
    ctx_t *c = ctx;
    tr_message m = msg_at(c, i);
    tr_Issue_views v;
    ar_reset(&c->arena);
    bn_sink += tr_validate_Issue_views(m.p, m.n, &c->arena, &v).code == TR_E_OK ? v.detail.n : 0;
}

static void run_detail(void *ctx, size_t i)
{
    tr_view_Detail d;
    if (tr_scan_detail(msg_at(ctx, i), &d))
        bn_sink += d.n;
}
#endif

static void run_decode(void *ctx, size_t i) { bn_sink += (uint64_t)verdict_decode(ctx, i); }
static void run_root_shared(void *ctx, size_t i)
{
    bn_sink += (uint64_t)verdict_root(ctx, i, ((ctx_t *)ctx)->root[0]);
}
static void run_root_alone(void *ctx, size_t i)
{
    bn_sink += (uint64_t)verdict_root(ctx, i, ((ctx_t *)ctx)->root[1]);
}

static void run_optics(void *ctx, size_t i) { bn_sink += (uint64_t)verdict_optics(ctx, i); }
static void run_interp(void *ctx, size_t i) { bn_sink += (uint64_t)verdict_interp(ctx, i); }

static void run_json_validate(void *ctx, size_t i)
{
    tr_message m = msg_at(ctx, i);
    js_ctx c;
    js_ctx_init(&c, m.p, NULL);
    bn_sink += js_validate(&c, m.p, m.p + m.n) != NULL;
}

/* Compresses the pool's messages once, before anything is timed. */
static bool make_gzip(ctx_t *c)
{
    gz_deflater z;
    if (!gz_deflater_init(&z, GZ_DEFAULT_LEVEL))
        return false;
    size_t cap = gz_bound(&z, c->pool.total) + POOL * 64;
    c->gz = malloc(cap);
    c->gz_off = calloc(POOL, sizeof *c->gz_off);
    c->gz_len = calloc(POOL, sizeof *c->gz_len);
    bool ok = c->gz != NULL && c->gz_off != NULL && c->gz_len != NULL &&
              gz_inflater_init(&c->inflater, 0);
    size_t at = 0;
    for (size_t i = 0; ok && i < POOL; i++) {
        size_t n = gz_deflate(&z, (tr_message){c->pool.buf + c->pool.off[i], c->pool.len[i]},
                              c->gz + at, cap - at);
        c->gz_off[i] = at;
        c->gz_len[i] = n;
        at += n;
        ok = n > 0;
    }
    gz_deflater_destroy(&z);
    return ok;
}

static void report(const bn_opts *o, const char *cse, const char *layout, const bn_result *r,
                   double decode_ns, size_t avg_bytes)
{
    if (o->json)
        printf("{\"bench\":\"triage\",\"case\":\"%s\",\"layout\":\"%s\",\"size\":7,"
               "\"msg_bytes\":%zu,\"ns_per_msg\":%.1f,\"ns_min\":%.1f,\"ns_max\":%.1f,"
               "\"speedup_vs_decode\":%.6g,\"allocs_per_msg\":%.3f,\"bytes_alloc_per_msg\":%.1f,"
               "\"simd\":\"%s\"}\n",
               cse, layout, avg_bytes, r->median_ns, r->min_ns, r->max_ns, decode_ns / r->median_ns,
               r->allocs, r->bytes, sk_impl_name());
    else
        printf("triage %-15s %-6s %9.1f ns/msg  (%.1f..%.1f)  %6.1fx decode  %5.3f allocs/msg  %7.1f B/msg\n",
               cse, layout, r->median_ns, r->min_ns, r->max_ns, decode_ns / r->median_ns, r->allocs,
               r->bytes);
}

#ifdef TRIAGE_DEMO_MODEL
/* One flood message, decoded whole per call (the bench's one-message pool). */
typedef struct {
    const uint8_t *p;
    size_t n;
    ar_arena *arena;
    tr_Issue *issue;
} flood_t;

static void run_flood(void *ctx, size_t i)
{
    (void)i;
    flood_t *f = ctx;
    ar_reset(f->arena);
    bn_sink += (uint64_t)tr_decode_Issue(f->p, f->n, f->arena, f->issue).code;
}

/* decode-flood and decode-flood-random; false when they cannot be made. */
static bool bench_flood(const bn_opts *o, ctx_t *c, double decode_ns)
{
    static const char *const names[] = {"decode-flood", "decode-flood-random"};
    size_t arena_bytes = RD_DECODE_ARENA;
    void *mem = malloc(arena_bytes);
    ar_arena a;
    bool ok = mem != NULL;
    for (int k = 0; ok && k < 2; k++) {
        size_t len = 0;
        uint8_t *m = fl_message(65536, k == 0, 1, &len);
        if (m == NULL) {
            ok = false;
            break;
        }
        ar_init(&a, mem, arena_bytes);
        flood_t f = {m + 5, len - 5, &a, &c->issue};
        if (tr_decode_Issue(f.p, f.n, &a, &c->issue).code != TR_E_OK) {
            fprintf(stderr, "triage-bench: the flood message does not decode\n");
            ok = false;
        } else {
            bn_result r = bn_time(o, 1, run_flood, &f);
            report(o, names[k], "late", &r, decode_ns, len - 5);
        }
        free(m);
    }
    free(mem);
    return ok;
}
#endif

/* root-shared and root-alone: rules that read two optics from the message's
 * root, the detail (sought, for kind) and severityOf (detail . severity,
 * declared from the root), in one walk of it (level.h) and each in its
 * own (ru_share_root_walk off); the same verdicts, timed in turns. Only
 * where the schema has those optics. */
static bool root_rows(const bn_opts *o, ctx_t *c, const char *layout, double decode_ns,
                      size_t avg)
{
    static const char text[] = "keep kind == Incident && severityOf in [Sev1, Sev2]\n";
    char err[256];
    bool ok = true;
    for (int k = 0; k < 2; k++)
        c->root[k] = ru_parse(text, strlen(text), "root-shared", &tr_schema, err, sizeof err);
    if (c->root[0] == NULL || c->root[1] == NULL || ru_root_walk(c->root[0]) != 2)
        goto out; /* another schema: no such rows */
    ru_share_root_walk(c->root[1], false);
    for (size_t i = 0; i < POOL && ok; i++) {
        int shared = verdict_root(c, i, c->root[0]), alone = verdict_root(c, i, c->root[1]);
        if (shared != alone) {
            fprintf(stderr, "triage-bench: message %zu (%s): root-shared says %d, root-alone %d\n",
                    i, layout, shared, alone);
            ok = false;
        }
    }
    if (ok) {
        const bn_fn fns[2] = {run_root_shared, run_root_alone};
        void *const ctxs[2] = {c, c};
        bn_result r[2];
        bn_time_each(o, POOL, 2, fns, ctxs, r);
        report(o, "root-shared", layout, &r[0], decode_ns, avg);
        report(o, "root-alone", layout, &r[1], decode_ns, avg);
    }
out:
    for (int k = 0; k < 2; k++) {
        ru_free(c->root[k]);
        c->root[k] = NULL;
    }
    return ok;
}

int bench_triage(const bn_opts *o)
{
    sk_init();
    static const char *const layouts[] = {"late", "first"};
    int rc = 0;
    for (int l = 0; l < 2; l++) {
        ctx_t *c = calloc(1, sizeof *c);
        void *mem = ARENA > 0 ? malloc(ARENA) : NULL;
        char err[256];
        rd_choice none = {0}, interp = {.interpret = true};
        if (c == NULL || (ARENA > 0 && mem == NULL) || !bn_pool_make(&c->pool, POOL, 7, l == 1) ||
            !rd_policy(&none, &c->policy, err, sizeof err) ||
            !rd_policy(&interp, &c->interp, err, sizeof err) || (c->rd = rd_new()) == NULL ||
            !rd_decoding(c->rd)) {
            fprintf(stderr, "triage-bench: cannot set up the pool\n");
            free(c);
            free(mem);
            return 1;
        }
#ifdef TRIAGE_DEMO_MODEL
        ar_init(&c->arena, mem, ARENA);
#endif
        c->verify = vf_new();
        if (c->verify == NULL) {
            fprintf(stderr, "triage-bench: out of memory\n");
            return 1;
        }
        if (c->policy.compiled == NULL && l == 0)
            fprintf(stderr, "triage-bench: the rules in use have no C: optics runs them "
                            "interpreted too\n");
        /* the direct row is the default rules: it runs while they are (and
         * the schema is the demo's, which it is written for) */
#ifdef TRIAGE_DEMO_MODEL
        bool direct = true;
#endif
        for (size_t i = 0; i < POOL; i++) {
            int d = verdict_decode(c, i), op = verdict_optics(c, i), in = verdict_interp(c, i);
            if (d != op || d != in) {
                fprintf(stderr,
                        "triage-bench: message %zu (%s): decode says %d, optics %d, "
                        "optics-interp %d\n",
                        i, layouts[l], d, op, in);
                rc = 1;
            }
#ifdef TRIAGE_DEMO_MODEL
            direct = direct && verdict_direct(c, i) == op;
#endif
        }
#ifdef TRIAGE_DEMO_MODEL
        if (!direct && l == 0)
            fprintf(stderr, "triage-bench: no direct row: the rules in use are not the default "
                            "rules it writes in C\n");
#endif
        if (rc == 0) {
            size_t avg = c->pool.total / POOL;
            /* decode, optics, detail and direct timed together, their reps
             * in turns (bench.h): the ratios the targets read */
#ifdef TRIAGE_DEMO_MODEL
            const bn_fn fns[5] = {run_decode, run_optics, run_interp, run_detail, run_direct};
            int nfns = direct ? 5 : 4;
#else
            const bn_fn fns[3] = {run_decode, run_optics, run_interp};
            int nfns = 3;
#endif
            void *const ctxs[5] = {c, c, c, c, c};
            bn_result res[5];
            bn_time_each(o, POOL, nfns, fns, ctxs, res);
            bn_result dec = res[0];
            report(o, "decode", layouts[l], &res[0], dec.median_ns, avg);
            report(o, "optics", layouts[l], &res[1], dec.median_ns, avg);
            report(o, "optics-interp", layouts[l], &res[2], dec.median_ns, avg);
            if (nfns > 3)
                report(o, "detail", layouts[l], &res[3], dec.median_ns, avg);
            if (nfns > 4)
                report(o, "direct", layouts[l], &res[4], dec.median_ns, avg);
            static const struct {
                const char *name;
                vf_level level;
            } levels[] = {{"optics-json", VF_JSON}, {"optics-schema", VF_SCHEMA}};
            for (int v = 0; v < 2; v++) {
                c->level = levels[v].level;
                for (size_t i = 0; i < POOL; i++)
                    if (verdict_optics(c, i) != verdict_decode(c, i)) {
                        fprintf(stderr, "triage-bench: message %zu (%s): %s and decode disagree\n", i,
                                layouts[l], levels[v].name);
                        rc = 1;
                    }
                bn_result r = bn_time(o, POOL, run_optics, c);
                report(o, levels[v].name, layouts[l], &r, dec.median_ns, avg);
            }
            c->level = VF_OFF;
            if (!root_rows(o, c, layouts[l], dec.median_ns, avg))
                rc = 1;
            static const struct {
                const char *name;
                void (*fn)(void *, size_t);
            } passes[] = {{"json-validate", run_json_validate},
#ifdef TRIAGE_DEMO_MODEL
                          {"json-onepass", run_json_onepass},
                          {"schema-validate", run_schema_validate},
#endif
            };
            for (size_t v = 0; v < sizeof passes / sizeof passes[0]; v++) {
                bn_result r = bn_time(o, POOL, passes[v].fn, c);
                report(o, passes[v].name, layouts[l], &r, dec.median_ns, avg);
            }
            if (make_gzip(c)) {
                c->gzip = true;
                for (size_t i = 0; i < POOL; i++)
                    if (verdict_decode(c, i) != verdict_optics(c, i)) {
                        fprintf(stderr, "triage-bench: gzip message %zu: readers disagree\n", i);
                        rc = 1;
                    }
                bn_result og = bn_time(o, POOL, run_optics, c);
                report(o, "optics-gzip", layouts[l], &og, dec.median_ns, avg);
                bn_result dg = bn_time(o, POOL, run_decode, c);
                report(o, "decode-gzip", layouts[l], &dg, dec.median_ns, avg);
                c->gzip = false;
            } else {
                fprintf(stderr, "triage-bench: cannot compress the pool\n");
                rc = 1;
            }
#ifdef TRIAGE_DEMO_MODEL
            if (l == 0 && !bench_flood(o, c, dec.median_ns))
                rc = 1;
#endif
        }
        gz_inflater_destroy(&c->inflater);
        free(c->gz);
        free(c->gz_off);
        free(c->gz_len);
        vf_free(c->verify);
        rd_free(c->rd);
        po_free(&c->policy);
        po_free(&c->interp);
        bn_pool_free(&c->pool);
        free(c);
        free(mem);
    }
    return rc;
}
