/* run.c: `triage-demo run`: the three services on the loopback interface,
 * once per reader, and the report.
 *
 * Each service is this program again (fork, exec /proc/self/exe), as in a
 * deployment: three processes and two TCP connections. The upstream
 * generates a pool of messages once (4096 by default), before it listens,
 * and serves one connection per reader in turn, cycling through the pool
 * for N messages, so its memory does not grow with N; each reader gets a
 * fresh downstream and filter. The three services' figures come back as
 * JSON lines on their stdout (the upstream's after each connection, with
 * its max RSS). An untimed warm-up session with fewer messages goes
 * first. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define JSMN_STATIC
#define JSMN_STRICT
#include <jsmn.h>

#include "cmd.h"
#include "opts.h"
#include "net.h"
#include "out.h"
#include "pipe.h"
#include "services.h"
#include "tally.h"
#include "tr_model.h"

/* ---- children */

typedef struct {
    pid_t pid; /* 0: not running */
    int out;   /* read end of its stdout */
} child;

/* Starts this program with argv (argv[0] is the command name) with stdout
 * into a pipe; stdin is /dev/null, stderr is ours. */
static bool spawn(child *c, char *const argv[])
{
    int p[2];
    c->pid = 0;
    c->out = -1;
    if (pipe2(p, O_CLOEXEC) != 0) {
        fprintf(stderr, "triage-demo run: pipe: %s\n", strerror(errno));
        return false;
    }
    fflush(NULL);
    pid_t pid = net_fork_tied(); /* the services end with run, however it ends */
    if (pid < 0) {
        fprintf(stderr, "triage-demo run: fork: %s\n", strerror(errno));
        close(p[0]);
        close(p[1]);
        return false;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (nul >= 0)
            dup2(nul, STDIN_FILENO);
        dup2(p[1], STDOUT_FILENO);
        char *const *a = argv;
        execv("/proc/self/exe", a);
        fprintf(stderr, "triage-demo run: exec /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    close(p[1]);
    c->pid = pid;
    c->out = p[0];
    return true;
}

/* Reads the child's stdout until EOF into buf (NUL-terminated, truncated
 * to fit); timeout_ms < 0 waits for ever. false on a timeout. */
static bool read_all(child *c, char *buf, size_t cap, int timeout_ms)
{
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = c->out, .events = POLLIN};
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            break;
        char tmp[4096];
        ssize_t got = read(c->out, tmp, sizeof tmp);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            buf[n] = '\0';
            return true;
        }
        size_t take = (size_t)got < cap - 1 - n ? (size_t)got : cap - 1 - n;
        memcpy(buf + n, tmp, take);
        n += take;
    }
    buf[n] = '\0';
    return false;
}

/* The first line: "listening HOST:PORT"; the address goes to addr. */
static bool read_listening(child *c, const char *what, char *addr, size_t cap)
{
    char line[512];
    size_t n = 0;
    while (n < sizeof line - 1) {
        ssize_t got = read(c->out, line + n, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (line[n] == '\n')
            break;
        n++;
    }
    line[n] = '\0';
    static const char prefix[] = "listening ";
    if (strncmp(line, prefix, sizeof prefix - 1) != 0) {
        fprintf(stderr, "triage-demo run: the %s did not start\n", what);
        return false;
    }
    snprintf(addr, cap, "%s", line + sizeof prefix - 1);
    return true;
}

/* One line of the child's stdout into buf (NUL-terminated, without the
 * newline, truncated to fit); false when none came within timeout_ms. */
static bool read_line(child *c, char *buf, size_t cap, int timeout_ms)
{
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = c->out, .events = POLLIN};
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        char ch;
        ssize_t got = read(c->out, &ch, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0 || ch == '\n') {
            buf[n] = '\0';
            return got > 0;
        }
        if (n + 1 < cap)
            buf[n++] = ch;
    }
    buf[n] = '\0';
    return false;
}

/* Waits for the child; its exit status, or 128 + signal. */
static int reap(child *c)
{
    if (c->pid <= 0)
        return 0;
    int st;
    while (waitpid(c->pid, &st, 0) < 0)
        if (errno != EINTR)
            return 1;
    c->pid = 0;
    if (c->out >= 0)
        close(c->out);
    c->out = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Ends a child we started that is stuck (waiting for a peer that failed). */
static void stop(child *c)
{
    if (c->pid > 0)
        kill(c->pid, SIGTERM);
    reap(c);
}

/* ---- reading their JSON lines */

typedef struct {
    const char *js;
    jsmntok_t tok[256];
    int n;
} jdoc;

static bool jparse(jdoc *d, const char *js)
{
    jsmn_parser p;
    jsmn_init(&p);
    d->js = js;
    d->n = jsmn_parse(&p, js, strlen(js), d->tok, 256);
    return d->n > 0 && d->tok[0].type == JSMN_OBJECT;
}

/* The token after token i and everything inside it. */
static int jskip(const jdoc *d, int i)
{
    int next = i + 1;
    for (int k = 0; k < d->tok[i].size; k++)
        next = jskip(d, next);
    return next;
}

/* The value of key in the object at token obj, or -1. */
static int jfind(const jdoc *d, int obj, const char *key)
{
    if (obj < 0 || d->tok[obj].type != JSMN_OBJECT)
        return -1;
    int i = obj + 1;
    size_t kn = strlen(key);
    for (int k = 0; k < d->tok[obj].size; k++) {
        const jsmntok_t *t = &d->tok[i];
        if ((size_t)(t->end - t->start) == kn && memcmp(d->js + t->start, key, kn) == 0)
            return i + 1;
        i = jskip(d, i);
    }
    return -1;
}

/* A number member; false when absent or null. */
static bool jnum(const jdoc *d, int obj, const char *key, double *out)
{
    int v = jfind(d, obj, key);
    if (v < 0 || d->tok[v].type != JSMN_PRIMITIVE || d->js[d->tok[v].start] == 'n')
        return false;
    *out = strtod(d->js + d->tok[v].start, NULL);
    return true;
}

static uint64_t ju64(const jdoc *d, int obj, const char *key)
{
    int v = jfind(d, obj, key);
    if (v < 0 || d->tok[v].type != JSMN_PRIMITIVE)
        return 0;
    return strtoull(d->js + d->tok[v].start, NULL, 10);
}

/* A string member into buf ("" when absent or null). */
static void jstr(const jdoc *d, int obj, const char *key, char *buf, size_t cap)
{
    int v = jfind(d, obj, key);
    buf[0] = '\0';
    if (v >= 0 && d->tok[v].type == JSMN_STRING)
        snprintf(buf, cap, "%.*s", d->tok[v].end - d->tok[v].start, d->js + d->tok[v].start);
}

/* ---- one reader's run */

typedef struct {
    rd_choice choice; /* --rules, --where or --policy, passed on */
    uint64_t threads;
    bool json, progress;
    vf_level verify; /* the filter's */
    gz_encoding enc; /* frames compressed so: filter and downstream inflate */
} run_opts;

typedef struct {
    rd_type reader;
    tl_tally t;
    double seconds;
    char ring[16];
    int threads;
    uint64_t reads, writes, straddled;
    uint64_t ds_received, ds_bytes, ds_decoded, ds_kept;
    uint64_t inflated, compressed_bytes, inflated_bytes, inflate_ns, inflate_failed;
    bool count_only;
    char ds_digest[32];
    bool up_known; /* the upstream reported this connection */
    uint64_t up_pool, up_pool_bytes, up_max_rss_kb;
    bool ok;
    char why[512];
} result;

static void fail(result *r, const char *fmt, const char *a, const char *b)
{
    if (r->ok)
        snprintf(r->why, sizeof r->why, fmt, a, b);
    r->ok = false;
}

/* The filter's tally, rebuilt from its JSON line. */
static bool read_filter(result *r, const char *line)
{
    static jdoc d;
    if (!jparse(&d, line))
        return false;
    const char *names[TL_MAX_KINDS];
    int nk = rd_kinds(names, TL_MAX_KINDS);
    tl_init(&r->t, nk, names);
    int kinds = jfind(&d, 0, "kinds");
    for (int k = 0; k <= nk; k++) {
        int row = jfind(&d, kinds, k < nk ? names[k] : "none");
        r->t.seen[k] = ju64(&d, row, "seen");
        r->t.kept[k] = ju64(&d, row, "kept");
    }
    r->t.messages = ju64(&d, 0, "messages");
    r->t.bytes = ju64(&d, 0, "bytes");
    r->t.judged = ju64(&d, 0, "judged");
    r->t.judge_ns = ju64(&d, 0, "judge_ns");
    r->t.bytes_copied = ju64(&d, 0, "bytes_copied");
    r->t.allocations = ju64(&d, 0, "allocations");
    r->t.forwarded.bytes = ju64(&d, 0, "kept_bytes");
    r->t.forwarded.frames = tl_kept(&r->t);
    char digest[32];
    jstr(&d, 0, "digest", digest, sizeof digest);
    r->t.forwarded.h = strtoull(digest, NULL, 16);
    if (!jnum(&d, 0, "seconds", &r->seconds))
        return false;
    jstr(&d, 0, "ring", r->ring, sizeof r->ring);
    r->threads = (int)ju64(&d, 0, "threads");
    r->reads = ju64(&d, 0, "reads");
    r->writes = ju64(&d, 0, "writes");
    r->straddled = ju64(&d, 0, "straddled");
    r->inflated = ju64(&d, 0, "inflated");
    r->compressed_bytes = ju64(&d, 0, "compressed_bytes");
    r->inflated_bytes = ju64(&d, 0, "inflated_bytes");
    r->inflate_ns = ju64(&d, 0, "inflate_ns");
    r->inflate_failed = ju64(&d, 0, "inflate_failed");
    return true;
}

static bool read_downstream(result *r, const char *line)
{
    static jdoc d;
    if (!jparse(&d, line))
        return false;
    r->ds_received = ju64(&d, 0, "received");
    r->ds_bytes = ju64(&d, 0, "bytes");
    double v;
    r->count_only = !jnum(&d, 0, "decoded", &v);
    r->ds_decoded = r->count_only ? 0 : (uint64_t)v;
    r->ds_kept = ju64(&d, 0, "kept_by_policy");
    jstr(&d, 0, "digest", r->ds_digest, sizeof r->ds_digest);
    return true;
}

/* The upstream's line for connection conn (services.c); lines of earlier
 * connections that a failed run left unread are skipped. */
static void read_upstream_line(result *r, child *up, uint64_t conn, int timeout_ms)
{
    static char line[1024];
    static jdoc d;
    do {
        if (!read_line(up, line, sizeof line, timeout_ms) || !jparse(&d, line))
            return;
    } while (ju64(&d, 0, "connection") < conn);
    if (ju64(&d, 0, "connection") != conn || jfind(&d, 0, "max_rss_kb") < 0)
        return;
    r->up_known = true;
    r->up_pool = ju64(&d, 0, "pool");
    r->up_pool_bytes = ju64(&d, 0, "pool_bytes");
    r->up_max_rss_kb = ju64(&d, 0, "max_rss_kb");
}

/* up_child serves this run as its connection number conn (from 1): its
 * line about it is read after the run. */
static void one_run(result *r, rd_type reader, const char *up, child *up_child, uint64_t conn,
                    uint64_t count, const run_opts *o, bool timed)
{
    memset(r, 0, sizeof *r);
    r->reader = reader;
    r->ok = true;
    const char *name = rd_type_name(reader);

    char *dargv[10];
    int k = 0;
    dargv[k++] = "triage-demo";
    dargv[k++] = "downstream";
    dargv[k++] = "--listen=127.0.0.1:0";
    char enc_opt[48];
    snprintf(enc_opt, sizeof enc_opt, "--grpc-encoding=%s", gz_encoding_name(o->enc));
    if (o->enc != GZ_IDENTITY)
        dargv[k++] = enc_opt;
    if (reader == RD_NONE)
        dargv[k++] = "--count-only";
    /* the rules, as two arguments (an expression may be long) */
    char *rules_opt[2] = {NULL, NULL};
    if (o->choice.rules != NULL)
        rules_opt[0] = "--rules", rules_opt[1] = (char *)o->choice.rules;
    else if (o->choice.where != NULL)
        rules_opt[0] = "--where", rules_opt[1] = (char *)o->choice.where;
    else if (o->choice.policy != NULL)
        rules_opt[0] = "--policy", rules_opt[1] = (char *)o->choice.policy;
    if (rules_opt[0] != NULL) {
        dargv[k++] = rules_opt[0];
        dargv[k++] = rules_opt[1];
    }
    dargv[k] = NULL;
    child ds, flt;
    char ds_addr[512];
    if (!spawn(&ds, dargv)) {
        fail(r, "cannot start the downstream%s%s", "", "");
        return;
    }
    if (!read_listening(&ds, "downstream", ds_addr, sizeof ds_addr)) {
        reap(&ds);
        fail(r, "the downstream did not start%s%s", "", "");
        return;
    }

    char from[540], to[540], rd[32], thr[32], prog[48];
    snprintf(from, sizeof from, "--from=%s", up);
    snprintf(to, sizeof to, "--to=%s", ds_addr);
    snprintf(rd, sizeof rd, "--reader=%s", name);
    snprintf(thr, sizeof thr, "--threads=%llu", (unsigned long long)o->threads);
    snprintf(prog, sizeof prog, "--progress=%llu", (unsigned long long)count);
    char vfy[32];
    snprintf(vfy, sizeof vfy, "--verify=%s", vf_level_name(o->verify));
    char *fargv[16];
    k = 0;
    fargv[k++] = "triage-demo";
    fargv[k++] = "filter";
    fargv[k++] = from;
    fargv[k++] = to;
    fargv[k++] = rd;
    fargv[k++] = thr;
    fargv[k++] = "--json";
    fargv[k++] = vfy;
    if (o->enc != GZ_IDENTITY)
        fargv[k++] = enc_opt;
    if (rules_opt[0] != NULL) {
        fargv[k++] = rules_opt[0];
        fargv[k++] = rules_opt[1];
    }
    if (o->progress && timed)
        fargv[k++] = prog;
    fargv[k] = NULL;
    if (!spawn(&flt, fargv)) {
        stop(&ds);
        fail(r, "cannot start the filter%s%s", "", "");
        return;
    }
    static char fout[8192], dout[8192];
    read_all(&flt, fout, sizeof fout, -1);
    int fst = reap(&flt);
    /* The upstream has served the connection when the filter got to its
     * end; a filter that failed may never have connected to it. */
    read_upstream_line(r, up_child, conn, fst == 0 ? 30000 : 200);
    /* A filter that failed may never have connected to the downstream. */
    bool ds_done = read_all(&ds, dout, sizeof dout, fst == 0 ? -1 : 5000);
    int dst = ds_done ? reap(&ds) : (stop(&ds), -1);

    if (!read_filter(r, fout)) {
        fail(r, "the filter failed (exit status %s)%s", fst == 0 ? "0" : "non-zero", "");
        return;
    }
    if (fst != 0) {
        char st[16];
        snprintf(st, sizeof st, "%d", fst);
        fail(r, "the filter exited with status %s%s", st, "");
    }
    if (!ds_done || !read_downstream(r, dout)) {
        fail(r, "the downstream did not report%s%s", "", "");
        return;
    }
    if (dst != 0) {
        char st[16];
        snprintf(st, sizeof st, "%d", dst);
        fail(r, "the downstream exited with status %s%s", st, "");
    }
    char a[64], b[64];
    if (r->t.messages != count) {
        snprintf(a, sizeof a, "%llu", (unsigned long long)r->t.messages);
        snprintf(b, sizeof b, "%llu", (unsigned long long)count);
        fail(r, "the filter saw %s messages, the upstream sent %s", a, b);
    }
    if (r->ds_received != tl_kept(&r->t)) {
        snprintf(a, sizeof a, "%llu", (unsigned long long)r->ds_received);
        snprintf(b, sizeof b, "%llu", (unsigned long long)tl_kept(&r->t));
        fail(r, "the downstream received %s messages, the filter kept %s", a, b);
    }
    if (r->ds_bytes != r->t.forwarded.bytes) {
        snprintf(a, sizeof a, "%llu", (unsigned long long)r->ds_bytes);
        snprintf(b, sizeof b, "%llu", (unsigned long long)r->t.forwarded.bytes);
        fail(r, "the downstream received %s bytes, the filter forwarded %s", a, b);
    }
    snprintf(a, sizeof a, "%016llx", (unsigned long long)r->t.forwarded.h);
    if (strcmp(r->ds_digest, a) != 0)
        fail(r, "digest: the downstream's is %s, the filter's %s", r->ds_digest, a);
    if (!r->count_only && (r->ds_decoded != r->ds_received || r->ds_kept != r->ds_received)) {
        snprintf(a, sizeof a, "%llu", (unsigned long long)r->ds_decoded);
        snprintf(b, sizeof b, "%llu", (unsigned long long)r->ds_kept);
        fail(r, "the downstream decodes %s of them and its policy keeps %s", a, b);
    }
}

/* ---- the report */

/* Compressed bytes / inflated bytes, and inflate time per inflated
 * message; false when this reader inflated nothing (the relay). */
static bool inflate_figures(const result *r, double *ratio, double *ns)
{
    if (r->inflated == 0 || r->inflated_bytes == 0)
        return false;
    *ratio = (double)r->compressed_bytes / (double)r->inflated_bytes;
    *ns = (double)r->inflate_ns / (double)r->inflated;
    return true;
}

static void report_text(const result *r, const run_opts *o)
{
    tl_print(stdout, rd_type_name(r->reader), &r->t, r->seconds);
    if (o->enc != GZ_IDENTITY && r->reader != RD_NONE)
        svc_print_inflate(stdout, o->enc, r->inflated, r->compressed_bytes, r->inflated_bytes,
                          r->inflate_ns, r->inflate_failed);
    if (r->count_only)
        printf("  downstream received %llu messages (%llu kept); it only counts them (relay)\n",
               (unsigned long long)r->ds_received, (unsigned long long)tl_kept(&r->t));
    else
        printf("  downstream received %llu messages (%llu kept); %llu decode as %s, "
               "and the policy keeps %llu of them\n",
               (unsigned long long)r->ds_received, (unsigned long long)tl_kept(&r->t),
               (unsigned long long)r->ds_decoded, tr_schema.types[tr_schema.root].name,
               (unsigned long long)r->ds_kept);
    if (r->up_known)
        printf("  upstream: %llu distinct messages (%.1f MB of frames)%s; its max RSS "
               "%.1f MB, which does not grow with N\n",
               (unsigned long long)r->up_pool, (double)r->up_pool_bytes / 1e6,
               r->t.messages > r->up_pool ? ", cycled" : "",
               (double)r->up_max_rss_kb * 1024 / 1e6);
    if (!r->ok)
        printf("  CHECK FAILED: %s\n", r->why);
}

static void report_json(const result *r, const run_opts *o)
{
    printf("{\"reader\":\"%s\",", rd_type_name(r->reader));
    tl_print_json(stdout, &r->t, r->seconds);
    printf(",\"downstream\":{\"received\":%llu,\"bytes\":%llu,", (unsigned long long)r->ds_received,
           (unsigned long long)r->ds_bytes);
    if (r->count_only)
        printf("\"decoded\":null,\"kept_by_policy\":null,");
    else
        printf("\"decoded\":%llu,\"kept_by_policy\":%llu,", (unsigned long long)r->ds_decoded,
               (unsigned long long)r->ds_kept);
    printf("\"digest\":");
    svc_json_string(stdout, r->ds_digest);
    printf("},");
    if (r->up_known)
        printf("\"upstream\":{\"pool\":%llu,\"pool_bytes\":%llu,\"max_rss_kb\":%llu},",
               (unsigned long long)r->up_pool, (unsigned long long)r->up_pool_bytes,
               (unsigned long long)r->up_max_rss_kb);
    printf("\"ring\":");
    svc_json_string(stdout, r->ring);
    if (o->enc != GZ_IDENTITY) {
        double ratio, ns;
        if (inflate_figures(r, &ratio, &ns))
            printf(",\"compression_ratio\":%.4f,\"inflate_ns_per_msg\":%.1f", ratio, ns);
        else
            printf(",\"compression_ratio\":null,\"inflate_ns_per_msg\":null");
        printf(",\"inflate_failed\":%llu", (unsigned long long)r->inflate_failed);
    }
    if (o->verify != VF_OFF)
        printf(",\"verify\":\"%s\"", vf_level_name(o->verify));
    printf(",\"threads\":%d,\"reads\":%llu,\"writes\":%llu,\"straddled\":%llu,\"ok\":%s,"
           "\"error\":",
           r->threads, (unsigned long long)r->reads, (unsigned long long)r->writes,
           (unsigned long long)r->straddled, r->ok ? "true" : "false");
    if (r->ok)
        printf("null");
    else
        svc_json_string(stdout, r->why);
    printf("}\n");
}

/* ---- a session: one upstream, one run per reader */

typedef struct {
    uint64_t seed, size, pool;
    const char *layout;
    gz_encoding enc; /* the upstream compresses so */
    double ratio;    /* this share of the messages */
} gen_opts;

static void note(bool tty, const char *fmt, unsigned long long n)
{
    if (!tty)
        return;
    fprintf(stderr, "\r\033[K");
    fprintf(stderr, fmt, n);
}

static bool session(uint64_t count, const rd_type *readers, int nreaders, const gen_opts *g,
                    const run_opts *o, bool timed, result *res)
{
    char cnt[40], seed[40], size[40], conns[40], layout[40], pool[40];
    snprintf(pool, sizeof pool, "--pool=%llu", (unsigned long long)g->pool);
    snprintf(cnt, sizeof cnt, "--count=%llu", (unsigned long long)count);
    snprintf(seed, sizeof seed, "--seed=%llu", (unsigned long long)g->seed);
    snprintf(size, sizeof size, "--size=%llu", (unsigned long long)g->size);
    snprintf(conns, sizeof conns, "--connections=%d", nreaders);
    snprintf(layout, sizeof layout, "--layout=%s", g->layout);
    char ratio[64], compress[48];
    snprintf(ratio, sizeof ratio, "--compress-ratio=%.17g", g->ratio);
    snprintf(compress, sizeof compress, "--compress=%s", gz_encoding_name(g->enc));
    char *uargv[] = {"triage-demo", "upstream", "--listen=127.0.0.1:0", cnt, seed, size, conns,
                     layout, pool, g->enc != GZ_IDENTITY ? compress : NULL, ratio, NULL};
    note(o->progress, timed ? "run: generating the upstream's messages, %llu to send"
                               : "run: warm-up, %llu messages",
         (unsigned long long)count);
    child up;
    char up_addr[512];
    if (!spawn(&up, uargv))
        return false;
    if (!read_listening(&up, "upstream", up_addr, sizeof up_addr)) {
        reap(&up);
        return false;
    }
    note(o->progress, "", 0);
    bool ok = true;
    for (int i = 0; i < nreaders; i++) {
        one_run(&res[i], readers[i], up_addr, &up, (uint64_t)i + 1, count, o, timed);
        if (o->progress)
            fprintf(stderr, "\r\033[K");
        if (timed) {
            if (o->json)
                report_json(&res[i], o);
            else
                report_text(&res[i], o);
            if (out_flush_failed()) {
                ok = false; /* the report is lost: stop (out_close names it) */
                break;
            }
        }
        if (!res[i].ok) {
            fprintf(stderr, "triage-demo run: %s%s: %s\n", rd_type_name(readers[i]),
                    timed ? "" : " (warm-up)", res[i].why);
            ok = false;
        }
    }
    /* A failed filter may not have taken its connection; the upstream would
     * wait for it. */
    if (ok) {
        int st = reap(&up);
        if (st != 0) {
            fprintf(stderr, "triage-demo run: the upstream exited with status %d\n", st);
            ok = false;
        }
    } else {
        stop(&up);
    }
    return ok;
}

static void run_help(FILE *f)
{
    fprintf(f,
            "usage: triage-demo run [N] [--reader optics|decode|none|all] [--json]\n"
            "                       [--size K] [--seed S] [--layout late|first]\n"
            "                       [--rules FILE | --where EXPR | --policy FILE]\n"
            "                       [--warmup W] [--threads 1|2] [--pool P]\n"
            "                       [--verify off|json|schema]\n"
            "                       [--compress identity|gzip|deflate] [--compress-ratio R]\n"

            "\n"
            "Starts the upstream, the filter and the downstream on 127.0.0.1 (ephemeral\n"
            "ports; each its own process), streams N generated messages (default 200000)\n"
            "through the filter once per reader (all: optics, decode, none), and prints\n"
            "a report per reader. An untimed warm-up with W messages goes first (default\n"
            "N/10, at most 20000; 0: none). Checks that the downstream received exactly\n"
            "what the filter kept (count, bytes, digest), that it decodes them all and\n"
            "its policy keeps them all, and that optics and decode judged alike; exits 1\n"
            "when a check fails, 2 on bad options, and 1 when stdout cannot be\n"
            "written (named on stderr).\n"
            "  --json     one JSON object per reader\n"
            "  --rules, --where, --policy  what the filter and the downstream judge with\n"
            "             (see judge --help; default: the built-in schema/default.rules)\n"
            "  --pool P   the upstream's distinct messages (default 4096; see upstream\n"
            "             --help): N messages cycle through them, so the upstream's\n"
            "             memory does not grow with N (the report gives its max RSS);\n"
            "             0: all N distinct\n"
            "  --threads  the filter's (see filter --help)\n"
            "  --verify   the filter's optics verify level (see filter --help)\n"
            "  --compress gzip  the upstream gzips the messages (a share R with\n"
            "             --compress-ratio); filter and downstream get --grpc-encoding\n"
            "             gzip. The report adds the compression ratio (compressed bytes\n"
            "             / inflated bytes) and the filter's inflate time per message,\n"
            "             measured apart from judging\n"
            "  --compress deflate  the same with gRPC's deflate (zlib streams)\n");
}

int cmd_run(int argc, char **argv)
{
    uint64_t count = 200000, warmup = UINT64_MAX, threads = 1;
    gen_opts g = {1, 7, 4096, "late", GZ_IDENTITY, 1};
    run_opts o = {.threads = 1, .verify = VF_OFF};
    bool ratio_set = false;
    const char *reader_s = "all";
    bool bad = false, have_n = false;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            run_help(stdout);
            return 0;
        } else if (opt_match(argc, argv, &i, "--reader", &v, &bad)) {
            reader_s = v;
        } else if (opt_match(argc, argv, &i, "--size", &v, &bad)) {
            bad = bad || !opt_u64("--size", v, 1000, &g.size);
        } else if (opt_match(argc, argv, &i, "--seed", &v, &bad)) {
            bad = bad || !opt_u64("--seed", v, UINT64_MAX, &g.seed);
        } else if (opt_match(argc, argv, &i, "--layout", &v, &bad)) {
            bool first_unused;
            g.layout = v;
            bad = bad || !opt_layout("run", v, &first_unused);
        } else if (opt_rules(argc, argv, &i, &o.choice, &bad)) {
        } else if (opt_match(argc, argv, &i, "--verify", &v, &bad)) {
            bad = bad || !opt_verify("run", v, &o.verify);
        } else if (opt_match(argc, argv, &i, "--compress", &v, &bad)) {
            bad = bad || !opt_encoding("run", "--compress", v, &g.enc);
        } else if (opt_match(argc, argv, &i, "--compress-ratio", &v, &bad)) {
            bad = bad || !opt_ratio("run", v, &g.ratio);
            ratio_set = true;
        } else if (opt_match(argc, argv, &i, "--warmup", &v, &bad)) {
            bad = bad || !opt_u64("--warmup", v, UINT64_MAX, &warmup);
        } else if (opt_match(argc, argv, &i, "--threads", &v, &bad)) {
            bad = bad || !opt_count("run", "--threads", v, 2, &threads);
        } else if (opt_match(argc, argv, &i, "--pool", &v, &bad)) {
            bad = bad || !opt_u64("--pool", v, UINT64_MAX, &g.pool);
        } else if (strcmp(argv[i], "--json") == 0) {
            o.json = true;
        } else if ((argv[i][0] != '-' || (argv[i][1] >= '0' && argv[i][1] <= '9')) && !have_n) {
            bad = !opt_count("run", "N", argv[i], UINT64_MAX, &count);
            have_n = true;
        } else {
            fprintf(stderr, "triage-demo run: unknown option '%s' (see --help)\n", argv[i]);
            bad = true;
        }
    }
    rd_type readers[3] = {RD_OPTICS, RD_DECODE, RD_NONE};
    int nreaders = 3;
    if (!bad && strcmp(reader_s, "all") != 0) {
        nreaders = 1;
        if (!rd_type_parse(reader_s, &readers[0])) {
            fprintf(stderr, "triage-demo run: --reader is optics, decode, none or all, not '%s'\n",
                    reader_s);
            bad = true;
        }
    }
    if (!bad && ratio_set && g.enc == GZ_IDENTITY) {
        fprintf(stderr, "triage-demo run: --compress-ratio needs --compress gzip or deflate\n");
        bad = true;
    }
    o.enc = g.enc;
    o.threads = threads;
    po_policy policy;
    if (bad || !svc_policy("run", &o.choice, &policy))
        return 2;
    po_free(&policy); /* checked here; the filter and the downstream load their own */
    if (o.choice.rules == NULL && o.choice.where == NULL && o.choice.policy == NULL &&
        rd_defaults_replaced())
        o.choice.where = "true"; /* what they stand for, said once (above) */
    o.progress = isatty(STDERR_FILENO);
    if (warmup == UINT64_MAX) {
        warmup = count / 10;
        if (warmup > 20000)
            warmup = 20000;
        if (warmup == 0)
            warmup = 1;
    }

    result res[3];
    if (warmup > 0 && !session(warmup, readers, nreaders, &g, &o, false, res))
        return out_close("run"), 1;
    bool ok = session(count, readers, nreaders, &g, &o, true, res);

    /* The two readers must judge every message alike. */
    const result *opt = NULL, *dec = NULL, *none = NULL;
    for (int i = 0; i < nreaders; i++) {
        if (res[i].reader == RD_OPTICS)
            opt = &res[i];
        else if (res[i].reader == RD_DECODE)
            dec = &res[i];
        else
            none = &res[i];
    }
    if (ok && opt != NULL && dec != NULL && !tl_same_rows(&opt->t, &dec->t)) {
        fprintf(stderr, "triage-demo run: optics and decode disagree on the kinds table\n");
        ok = false;
    }
    if (ok && opt != NULL && !o.json && (dec != NULL || none != NULL)) {
        double ro = (double)opt->t.messages / opt->seconds;
        printf("optics ran at");
        if (none != NULL)
            printf(" %.2fx the relay's rate", ro / ((double)none->t.messages / none->seconds));
        if (none != NULL && dec != NULL)
            printf(" and");
        if (dec != NULL)
            printf(" %.2fx decode's", ro / ((double)dec->t.messages / dec->seconds));
        printf("; the downstream's counts and digests match the filter's\n");
    }
    int wrc = out_close("run");
    return ok ? wrc : 1;
}
