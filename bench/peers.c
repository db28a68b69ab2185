/* peers.c: benches `peers` and `sweep`: our two readers against
 * the libraries a user would pick instead, on the same messages, judged
 * with the same (default) policy, in the same run.
 *
 * The pool: 256 generated messages (seed 1, the messages bn_pool_make
 * makes, without its 8 KiB-a-message cap), for each layout (detail late, as
 * declared, or first), plus a padded copy for simdjson (peers.h).
 *
 *   decode             ours: decode the whole Issue into an arena, judge the model
 *   optics             ours: slice out detail, judge it through the scanners
 *   simdjson-ondemand  \
 *   simdjson-dom        | the peers (peers_simdjson.cpp, peers_jsmn.c, peers_cjson.c),
 *   jsmn                | each only when the build has it (a case a build lacks is
 *   cjson              /  left out, never printed with made-up figures)
 *   memchr             limit: memchr over the message for a byte that never occurs
 *   memcpy             limit: memcpy of the message
 *   memchr-front       limit: memchr over the bytes in front of detail only
 *   jq                 (peers only) jq as a whole process over the pool as
 *                      newline-delimited JSON, select() with the policy: MB/s
 *
 * Before anything is timed, decode and optics must agree on every message,
 * and every peer must give their verdict (kind and keep) on every message:
 * a peer that disagrees fails the benchmark (exit non-zero) and has no row.
 * jq must keep exactly the messages our readers keep.
 *
 * `peers` runs at size 7; `sweep` at sizes 2, 7, 15, 40 (no jq). A pool's
 * cases (jq aside) are timed together, their reps taking turns
 * (bn_time_each), so the ratios hold when the machine's speed moves. Each
 * row gives the median ns per message with the fastest and slowest reps, the
 * ratio to decode in the same run (speedup_vs_decode: decode's ns over the
 * case's), MB/s of message bytes, and allocations per message (counted in
 * an untimed pass). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "benches.h"
#include "issues.h"
#include "peers.h"
#include "reader.h"
#include "skip.h"

#define POOL 256
#define ARENA (16u << 20)

typedef struct {
    /* the pool, and its padded copy */
    uint8_t *buf, *pad;
    size_t *off, *len, *pad_off, *front;
    size_t total, max_len, front_total;
    int size;
    const char *layout;
    /* the policy, for ours and for the peers */
    po_policy policy;
    rd_reader *rd;
    pr_policy pp;
    pr_env env;
    /* decode's arena and model */
    void *arena_mem;
    ar_arena arena;
    tr_Issue issue;
    uint8_t *scratch; /* memcpy's destination */
    int *want;        /* our verdicts */
} ctx_t;

static void ctx_free(ctx_t *c)
{
    if (c == NULL)
        return;
    free(c->buf);
    free(c->pad);
    free(c->off);
    free(c->len);
    free(c->pad_off);
    free(c->front);
    free(c->arena_mem);
    free(c->scratch);
    free(c->want);
    rd_free(c->rd);
    po_free(&c->policy);
    free(c);
}

/* The names of set (NULL-terminated). */
static void names_of(pr_names *out, const char *const *set)
{
    out->count = 0;
    for (; *set != NULL && out->count < PR_MAX_NAMES; set++) {
        out->s[out->count] = *set;
        out->n[out->count] = strlen(*set);
        out->count++;
    }
}

/* The peers judge by hand what schema/default.rules says (the demo's
 * policy); the bench checks their verdicts against ours before timing, so
 * a change to the rules shows up as a failed check, not as wrong figures. */
static void peer_policy(pr_policy *pp)
{
    static const char *const urgent[] = {"Sev1", "Sev2", NULL}, *const tiers[] = {"Critical", NULL},
                             *const modules[] = {"Payments", NULL},
                             *const plans[] = {"Business", "Enterprise", NULL};
    const char *kinds[PR_MAX_NAMES + 1] = {NULL};
    int nk = rd_kinds(kinds, PR_MAX_NAMES);
    kinds[nk] = NULL;
    names_of(&pp->kinds, kinds);
    pp->bug = pr_find(&pp->kinds, "Bug", 3);
    pp->incident = pr_find(&pp->kinds, "Incident", 8);
    pp->request = pr_find(&pp->kinds, "Request", 7);
    names_of(&pp->urgent, urgent);
    names_of(&pp->tiers, tiers);
    names_of(&pp->modules, modules);
    names_of(&pp->plans, plans);
    pp->min_votes = 130;
}

static ctx_t *ctx_make(int size, bool first)
{
    ctx_t *c = calloc(1, sizeof *c);
    iss_gen *g = iss_gen_new(size);
    if (c == NULL || g == NULL)
        goto fail;
    c->size = size;
    c->layout = first ? "first" : "late";
    c->off = calloc(POOL, sizeof *c->off);
    c->len = calloc(POOL, sizeof *c->len);
    c->pad_off = calloc(POOL, sizeof *c->pad_off);
    c->front = calloc(POOL, sizeof *c->front);
    c->want = calloc(POOL, sizeof *c->want);
    c->arena_mem = malloc(ARENA);
    size_t cap = 1u << 20;
    c->buf = malloc(cap);
    if (c->off == NULL || c->len == NULL || c->pad_off == NULL || c->front == NULL ||
        c->want == NULL || c->arena_mem == NULL || c->buf == NULL)
        goto fail;
    for (size_t i = 0; i < POOL; i++) {
        size_t n;
        const uint8_t *f = iss_gen_frame(g, 1, i, first, &n);
        if (f == NULL)
            goto fail;
        n -= 5;
        while (c->total + n > cap) {
            uint8_t *b = realloc(c->buf, cap * 2);
            if (b == NULL)
                goto fail;
            c->buf = b;
            cap *= 2;
        }
        memcpy(c->buf + c->total, f + 5, n);
        c->off[i] = c->total;
        c->len[i] = n;
        c->total += n;
        if (n > c->max_len)
            c->max_len = n;
    }
    c->pad = malloc(c->total + POOL * PR_PAD);
    c->scratch = malloc(c->max_len + 1);
    if (c->pad == NULL || c->scratch == NULL)
        goto fail;
    for (size_t i = 0, at = 0; i < POOL; i++) {
        memcpy(c->pad + at, c->buf + c->off[i], c->len[i]);
        memset(c->pad + at + c->len[i], ' ', PR_PAD);
        c->pad_off[i] = at;
        at += c->len[i] + PR_PAD;
    }
    char err[1024];
    rd_choice none = {0};
    if (!rd_policy(&none, &c->policy, err, sizeof err) || (c->rd = rd_new()) == NULL)
        goto fail;
    peer_policy(&c->pp);
    c->env = (pr_env){c->buf, c->off, c->len, c->pad, c->pad_off, POOL, c->max_len, &c->pp};
    ar_init(&c->arena, c->arena_mem, ARENA);
    iss_gen_free(g);
    return c;
fail:
    iss_gen_free(g);
    ctx_free(c);
    return NULL;
}

static tr_message msg_at(const ctx_t *c, size_t i)
{
    return (tr_message){c->buf + c->off[i], c->len[i]};
}

static int verdict_decode(ctx_t *c, size_t i)
{
    tr_message m = msg_at(c, i);
    ar_reset(&c->arena);
    if (tr_decode_Issue(m.p, m.n, &c->arena, &c->issue).code != TR_E_OK)
        return pr_verdict(-1, false);
    rd_decoded(c->rd, &c->issue);
    int kind;
    bool keep = po_judge(&c->policy, &c->rd->ru, &kind);
    return pr_verdict(kind, keep);
}

static int verdict_optics(ctx_t *c, size_t i)
{
    rd_message(c->rd, VF_OFF, msg_at(c, i));
    int kind;
    bool keep = po_judge(&c->policy, &c->rd->ru, &kind);
    return pr_verdict(kind, keep);
}

typedef struct {
    ctx_t *c;
    const pr_peer *peer;
    void *st;
} run_t;

static void run_decode(void *p, size_t i) { bn_sink += (uint64_t)verdict_decode(((run_t *)p)->c, i); }
static void run_optics(void *p, size_t i) { bn_sink += (uint64_t)verdict_optics(((run_t *)p)->c, i); }

static void run_peer(void *p, size_t i)
{
    run_t *r = p;
    bn_sink += (uint64_t)r->peer->verdict(r->st, i);
}

static void run_memchr(void *p, size_t i)
{
    const ctx_t *c = ((run_t *)p)->c;
    bn_sink += (uintptr_t)memchr(c->buf + c->off[i], 0x01, c->len[i]);
}

static void run_memchr_front(void *p, size_t i)
{
    const ctx_t *c = ((run_t *)p)->c;
    bn_sink += (uintptr_t)memchr(c->buf + c->off[i], 0x01, c->front[i]);
}

static void run_memcpy(void *p, size_t i)
{
    const ctx_t *c = ((run_t *)p)->c;
    memcpy(c->scratch, c->buf + c->off[i], c->len[i]);
    bn_sink += c->scratch[c->len[i] - 1];
}

/* One row. decode_ns 0: this is decode itself. */
static void report(const bn_opts *o, const char *bench, const char *cse, const ctx_t *c,
                   const bn_result *r, double decode_ns, const char *impl, const char *what)
{
    double avg = (double)c->total / POOL;
    double ref = decode_ns > 0 ? decode_ns : r->median_ns;
    if (o->json)
        printf("{\"bench\":\"%s\",\"case\":\"%s\",\"layout\":\"%s\",\"size\":%d,\"messages\":%d,"
               "\"msg_bytes\":%.0f,\"front_bytes\":%.0f,\"ns_per_msg\":%.1f,\"ns_min\":%.1f,"
               "\"ns_max\":%.1f,\"mb_per_s\":%.1f,\"speedup_vs_decode\":%.3f,"
               "\"allocs_per_msg\":%.3f,\"bytes_alloc_per_msg\":%.1f,\"impl\":\"%s\","
               "\"what\":\"%s\"}\n",
               bench, cse, c->layout, c->size, POOL, avg, (double)c->front_total / POOL,
               r->median_ns, r->min_ns, r->max_ns, avg / r->median_ns * 1e3, ref / r->median_ns,
               r->allocs, r->bytes, impl, what);
    else
        printf("%-5s %-17s %-5s %2d %9.1f ns/msg (%.1f..%.1f)  %7.3fx decode  %8.1f MB/s  "
               "%7.1f allocs/msg\n",
               bench, cse, c->layout, c->size, r->median_ns, r->min_ns, r->max_ns,
               ref / r->median_ns, avg / r->median_ns * 1e3, r->allocs);
}

/* The allocations of fn over the pool: one untimed, counted pass (direct
 * hooks off), per message. */
static void counted(bn_fn fn, run_t *r, bn_result *res)
{
    ct_allocs a0 = ct_now();
    for (size_t i = 0; i < POOL; i++)
        fn(r, i);
    ct_allocs a1 = ct_now();
    res->allocs = (double)(a1.allocs - a0.allocs) / POOL;
    res->bytes = (double)(a1.bytes - a0.bytes) / POOL;
}

static const pr_peer *const peers[] = {
#ifdef TRIAGE_HAVE_SIMDJSON
    &pr_simdjson_ondemand, &pr_simdjson_dom,
#endif
    &pr_jsmn,
#ifdef TRIAGE_HAVE_CJSON
    &pr_cjson,
#endif
};
#define NPEERS (sizeof peers / sizeof peers[0])

static const char *peer_impl(const pr_peer *p)
{
#ifdef TRIAGE_HAVE_SIMDJSON
    if (p == &pr_simdjson_ondemand || p == &pr_simdjson_dom)
        return pr_simdjson_impl();
#endif
    (void)p;
    return "scalar";
}

static int bench_jq(const bn_opts *o, ctx_t *c, double decode_ns);

/* One pool (size, layout): check, then time every case. */
static int bench_pool(const bn_opts *o, const char *bench, int size, bool first, bool with_jq)
{
    ctx_t *c = ctx_make(size, first);
    if (c == NULL) {
        fprintf(stderr, "triage-bench: %s: cannot set up the pool (size %d)\n", bench, size);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; i < POOL; i++) {
        c->want[i] = verdict_decode(c, i);
        int op = verdict_optics(c, i);
        tr_view_Detail d;
        c->front[i] = tr_scan_detail(msg_at(c, i), &d) ? (size_t)(d.p - c->buf - c->off[i]) : 0;
        c->front_total += c->front[i];
        if (c->want[i] != op) {
            fprintf(stderr, "triage-bench: %s: message %zu (size %d, %s): decode says %d, optics %d\n",
                    bench, i, size, c->layout, c->want[i], op);
            rc = 1;
        }
    }
    if (rc != 0) {
        ctx_free(c);
        return rc;
    }
    /* the peers: made and checked before anything is timed */
    void *st[NPEERS + 1];
    for (size_t p = 0; p < NPEERS; p++) {
        st[p] = peers[p]->make(&c->env);
        if (st[p] == NULL) {
            fprintf(stderr, "triage-bench: %s: %s: cannot set up\n", bench, peers[p]->name);
            rc = 1;
            continue;
        }
        int bad = 0;
        for (size_t i = 0; i < POOL; i++) {
            int v = peers[p]->verdict(st[p], i);
            if (v != c->want[i] && bad++ < 3)
                fprintf(stderr,
                        "triage-bench: %s: %s disagrees on message %zu (size %d, %s): "
                        "verdict %d, ours %d\n",
                        bench, peers[p]->name, i, size, c->layout, v, c->want[i]);
        }
        if (bad > 0) {
            fprintf(stderr, "triage-bench: %s: %s disagrees on %d of %d messages: no row\n", bench,
                    peers[p]->name, bad, POOL);
            peers[p]->done(st[p]);
            st[p] = NULL;
            rc = 1;
        }
    }
    if (!o->json) {
        size_t kept = 0;
        for (size_t i = 0; i < POOL; i++)
            kept += c->want[i] & 1;
        printf("%s: %d messages, size %d, detail %s: %zu B/msg, detail at byte %zu on average, "
               "%zu kept\n",
               bench, POOL, size, c->layout, c->total / POOL, c->front_total / POOL, kept);
    }
    /* every case timed together, their reps in turns (bench.h): ours, the
     * peers (direct hooks on while timed), the limits */
    typedef struct {
        bn_fn fn;
        run_t run;
        const char *name, *impl, *what;
        bn_result counted; /* its allocations, from the untimed pass */
    } case_t;
    case_t cs[2 + NPEERS + 3];
    int k = 0;
#define CASE(FN, PEER, ST, NAME, IMPL, WHAT)                                              \
    cs[k++] = (case_t){.fn = (FN), .run = {c, (PEER), (ST)}, .name = (NAME), .impl = (IMPL), \
                       .what = (WHAT)}
    CASE(run_decode, NULL, NULL, "decode", sk_impl_name(),
         "ours: decode the whole Issue into an arena, judge the model");
    CASE(run_optics, NULL, NULL, "optics", sk_impl_name(),
         "ours: slice out detail, judge it through the scanners");
    for (size_t p = 0; p < NPEERS; p++)
        if (st[p] != NULL)
            CASE(run_peer, peers[p], st[p], peers[p]->name, peer_impl(peers[p]), peers[p]->what);
    CASE(run_memchr, NULL, NULL, "memchr", "glibc",
         "limit: memchr over the whole message for a byte that never occurs");
    CASE(run_memcpy, NULL, NULL, "memcpy", "glibc", "limit: memcpy of the whole message");
    CASE(run_memchr_front, NULL, NULL, "memchr-front", "glibc",
         "limit: memchr over the bytes in front of detail only");
#undef CASE
    bn_fn fns[2 + NPEERS + 3];
    void *ctxs[2 + NPEERS + 3];
    bn_result res[2 + NPEERS + 3];
    for (int j = 0; j < k; j++) {
        fns[j] = cs[j].fn;
        ctxs[j] = &cs[j].run;
        counted(cs[j].fn, &cs[j].run, &cs[j].counted);
        if (cs[j].run.peer != NULL && cs[j].run.peer->direct != NULL)
            cs[j].run.peer->direct(cs[j].run.st, true);
    }
    bn_time_each(o, POOL, k, fns, ctxs, res);
    double decode_ns = res[0].median_ns;
    for (int j = 0; j < k; j++) {
        const pr_peer *peer = cs[j].run.peer;
        if (peer != NULL && peer->direct != NULL)
            peer->direct(cs[j].run.st, false);
        res[j].allocs = cs[j].counted.allocs;
        res[j].bytes = cs[j].counted.bytes;
        report(o, bench, cs[j].name, c, &res[j], j == 0 ? 0 : decode_ns, cs[j].impl, cs[j].what);
        if (peer != NULL)
            peer->done(cs[j].run.st);
    }
    if (with_jq && bench_jq(o, c, decode_ns) != 0)
        rc = 1;
    fflush(stdout);
    ctx_free(c);
    return rc;
}

int bench_peers(const bn_opts *o)
{
    sk_init();
    int rc = 0;
    for (int l = 0; l < 2; l++)
        rc |= bench_pool(o, "peers", 7, l == 1, true);
    return rc;
}

int bench_sweep(const bn_opts *o)
{
    sk_init();
    static const int sizes[] = {2, 7, 15, 40};
    int rc = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int l = 0; l < 2; l++)
            rc |= bench_pool(o, "sweep", sizes[s], l == 1, false);
    return rc;
}

/* ---- jq, as a process */

/* `(PATH | IN("a","b"))`, or false for an empty set. */
static bool jq_in(FILE *f, const char *path, const pr_names *set)
{
    if (set->count == 0) {
        fputs("false", f);
        return true;
    }
    fprintf(f, "(%s | IN(", path);
    for (int i = 0; i < set->count; i++) {
        if (memchr(set->s[i], '"', set->n[i]) || memchr(set->s[i], '\\', set->n[i]))
            return false;
        fprintf(f, "%s\"%.*s\"", i ? "," : "", (int)set->n[i], set->s[i]);
    }
    fputs("))", f);
    return true;
}

static bool jq_kind(FILE *f, const pr_names *kinds, int k)
{
    if (memchr(kinds->s[k], '"', kinds->n[k]) || memchr(kinds->s[k], '\\', kinds->n[k]))
        return false;
    fprintf(f, "$d.type == \"%.*s\"", (int)kinds->n[k], kinds->s[k]);
    return true;
}

/* The policy as a jq program: with --argjson check true it writes keep or
 * drop for every message; with false it is the operator's select(). */
static bool jq_program(const char *path, const pr_policy *P)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    bool ok = true;
    fputs("def keep: .detail as $d | ($d | type) == \"object\" and (\n  (", f);
    ok &= jq_kind(f, &P->kinds, P->incident);
    fputs(" and ", f);
    ok &= jq_in(f, "$d.severity", &P->urgent);
    fputs(" and ", f);
    ok &= jq_in(f, "$d.impact.service.tier", &P->tiers);
    fputs(")\n  or (", f);
    ok &= jq_kind(f, &P->kinds, P->bug);
    fputs(" and ", f);
    ok &= jq_in(f, "$d.trace.frames[0].module", &P->modules);
    fputs(")\n  or (", f);
    ok &= jq_kind(f, &P->kinds, P->request);
    fprintf(f, " and ($d.votes.count | type) == \"number\" and $d.votes.count >= %lld and ",
            (long long)P->min_votes);
    ok &= jq_in(f, "$d.requester.contract.plan", &P->plans);
    fputs("));\nif $check then (if keep then \"keep\" else \"drop\" end) else select(keep) end\n",
          f);
    return fclose(f) == 0 && ok;
}

static bool write_ndjson(const char *path, const ctx_t *c, int copies)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    bool ok = true;
    for (int k = 0; k < copies; k++)
        for (size_t i = 0; i < POOL; i++)
            ok &= fwrite(c->buf + c->off[i], 1, c->len[i], f) == c->len[i] && putc('\n', f) != EOF;
    return fclose(f) == 0 && ok;
}

/* Runs cmd, reads its output: counts lines; when verdicts is given, also
 * checks line i is keep or drop as (verdicts[i] & 1) says. -1 on failure. */
static long jq_run(const char *cmd, const int *verdicts, size_t n, size_t *mismatch)
{
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    char line[256];
    long lines = 0;
    static char chunk[1 << 16];
    if (verdicts != NULL) {
        while (fgets(line, sizeof line, p) != NULL) {
            bool keep = strcmp(line, "keep\n") == 0;
            if ((size_t)lines >= n || (!keep && strcmp(line, "drop\n") != 0) ||
                keep != (verdicts[lines] & 1)) {
                if (*mismatch == (size_t)-1)
                    *mismatch = (size_t)lines;
            }
            lines++;
        }
    } else {
        size_t got;
        while ((got = fread(chunk, 1, sizeof chunk, p)) > 0)
            for (char *q = chunk; (q = memchr(q, '\n', (size_t)(chunk + got - q))) != NULL; q++)
                lines++;
    }
    return pclose(p) == 0 ? lines : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int bench_jq(const bn_opts *o, ctx_t *c, double decode_ns)
{
    if (system("command -v jq >/dev/null 2>&1") != 0)
        return 0; /* this machine lacks jq: no row */
    for (size_t i = 0; i < POOL; i++)
        if (memchr(c->buf + c->off[i], '\n', c->len[i]) != NULL) {
            fprintf(stderr, "triage-bench: peers: jq: message %zu has a newline: no NDJSON\n", i);
            return 1;
        }
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/triage-bench-jq-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "triage-bench: peers: jq: cannot make a temporary directory\n");
        return 1;
    }
    char prog[600], check[600], data[600], cmd[2048], version[64] = "jq";
    snprintf(prog, sizeof prog, "%s/policy.jq", dir);
    snprintf(check, sizeof check, "%s/pool.ndjson", dir);
    snprintf(data, sizeof data, "%s/run.ndjson", dir);
    int rc = 1;
    /* copies of the pool: some 16 MB a run, so the process start is small beside it */
    int copies = o->quick ? 1 : (int)(16.0e6 / (double)c->total) + 1;
    enum { MAX_RUNS = 9 };
    int runs = o->quick ? 1 : 5;
    size_t kept = 0;
    for (size_t i = 0; i < POOL; i++)
        kept += c->want[i] & 1;
    if (!jq_program(prog, &c->pp) || !write_ndjson(check, c, 1) || !write_ndjson(data, c, copies)) {
        fprintf(stderr, "triage-bench: peers: jq: cannot write %s\n", dir);
        goto out;
    }
    FILE *v = popen("jq --version 2>/dev/null", "r");
    if (v != NULL) {
        if (fgets(version, sizeof version, v) != NULL)
            version[strcspn(version, "\n")] = '\0';
        pclose(v);
    }
    /* the check: the same verdict as ours on every message */
    snprintf(cmd, sizeof cmd, "jq -r --argjson check true -f '%s' '%s'", prog, check);
    size_t mismatch = (size_t)-1;
    long lines = jq_run(cmd, c->want, POOL, &mismatch);
    if (lines != POOL || mismatch != (size_t)-1) {
        fprintf(stderr,
                "triage-bench: peers: jq disagrees (%s): %ld verdicts for %d messages, first "
                "difference at message %zd: no row\n",
                c->layout, lines, POOL, mismatch == (size_t)-1 ? (ssize_t)-1 : (ssize_t)mismatch);
        goto out;
    }
    snprintf(cmd, sizeof cmd, "jq -c --argjson check false -f '%s' '%s'", prog, data);
    double secs[MAX_RUNS];
    for (int r = o->quick ? 0 : -1; r < runs; r++) { /* r -1: warm-up */
        double t0 = bn_now();
        long got = jq_run(cmd, NULL, 0, NULL);
        double t = bn_now() - t0;
        if (got != (long)(kept * (size_t)copies)) {
            fprintf(stderr, "triage-bench: peers: jq kept %ld messages, ours %zu: no row\n", got,
                    kept * (size_t)copies);
            goto out;
        }
        if (r >= 0)
            secs[r] = t;
    }
    qsort(secs, (size_t)runs, sizeof secs[0], cmp_double);
    double msgs = (double)copies * POOL, bytes = (double)c->total * copies + msgs;
    bn_result res = {secs[runs / 2] * 1e9 / msgs, secs[0] * 1e9 / msgs,
                     secs[runs - 1] * 1e9 / msgs, 0, 0};
    double mbs = bytes / secs[runs / 2] / 1e6;
    if (o->json)
        printf("{\"bench\":\"peers\",\"case\":\"jq\",\"layout\":\"%s\",\"size\":%d,\"messages\":%.0f,"
               "\"msg_bytes\":%.0f,\"ns_per_msg\":%.1f,\"ns_min\":%.1f,\"ns_max\":%.1f,"
               "\"mb_per_s\":%.1f,\"speedup_vs_decode\":%.4f,\"runs\":%d,\"impl\":\"%s\","
               "\"what\":\"jq as a whole process: the pool as NDJSON, %d times over, through "
               "select() with the policy, output piped back\"}\n",
               c->layout, c->size, msgs, (double)c->total / POOL, res.median_ns, res.min_ns,
               res.max_ns, mbs, decode_ns / res.median_ns, runs, version, copies);
    else
        printf("%-5s %-17s %-5s %2d %9.1f ns/msg (%.1f..%.1f)  %7.3fx decode  %8.1f MB/s  "
               "(%s, a process over %.0f messages, %d runs)\n",
               "peers", "jq", c->layout, c->size, res.median_ns, res.min_ns, res.max_ns,
               decode_ns / res.median_ns, mbs, version, msgs, runs);
    rc = 0;
out:
    unlink(prog);
    unlink(check);
    unlink(data);
    rmdir(dir);
    return rc;
}
