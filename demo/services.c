/* services.c: `triage-demo upstream`, `filter` and `downstream`. */
#include "services.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmd.h"
#include "issues.h"
#include "net.h"
#include "opts.h"
#include "out.h"
#include "pipe.h"
#include "reader.h"
#include "skip.h"
#include "source.h"
#include "tally.h"

bool svc_policy(const char *cmd, const rd_choice *c, po_policy *out)
{
    char err[1024];
    if (rd_policy(c, out, err, sizeof err))
        return true;
    fprintf(stderr, "triage-demo %s: %s\n", cmd, err);
    return false;
}

int svc_listen(const char *cmd, const char *hostport)
{
    char err[NET_ERR_LEN];
    net_addr a;
    uint16_t port = 0;
    int fd = -1;
    if (net_parse_addr(hostport, &a, err, sizeof err) == 0)
        fd = net_listen(hostport, NET_BACKLOG, &port, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "triage-demo %s: %s\n", cmd, err);
        return -1;
    }
    bool v6 = strchr(a.host, ':') != NULL;
    printf("listening %s%s%s:%u\n", v6 ? "[" : "", a.host, v6 ? "]" : "", (unsigned)port);
    if (out_flush_failed()) {
        /* nobody can learn the port: give up now (out_close names it) */
        close(fd);
        return -1;
    }
    return fd;
}

void svc_print_inflate(FILE *f, gz_encoding enc, uint64_t inflated, uint64_t compressed_bytes,
                       uint64_t inflated_bytes, uint64_t inflate_ns, uint64_t failed)
{
    fprintf(f, "  %s: %llu messages inflated, compression ratio %.3f (compressed/inflated); "
               "inflating took %.1f µs per message, apart from judging",
            gz_encoding_name(enc), (unsigned long long)inflated,
            inflated_bytes > 0 ? (double)compressed_bytes / (double)inflated_bytes : 0.0,
            inflated > 0 ? (double)inflate_ns / (double)inflated / 1e3 : 0.0);
    if (failed > 0)
        fprintf(f, "; %llu did not inflate (dropped)", (unsigned long long)failed);
    fputc('\n', f);
}

void svc_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static bool want_help(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

/* ---- upstream */

static void upstream_help(FILE *f)
{
    fprintf(f,
            "usage: triage-demo upstream --listen HOST:PORT --count N [--seed S] [--size K]\n"
            "                            [--layout late|first] [--connections C]\n"
            "                            [--compress identity|gzip|deflate] [--compress-ratio R]\n"
            "                            [--pool P] [--stop-after B]\n"
            "\n"
            "Generates a pool of messages as gRPC frames into memory, then listens,\n"
            "prints 'listening HOST:PORT' (the port bound: give port 0 for an\n"
            "ephemeral one) and streams N frames to each connection in turn, cycling\n"
            "through the pool, then closes it. After each connection it prints one\n"
            "JSON line: {\"connection\":C,\"messages\":M,\"bytes\":B,\"pool\":P,\n"
            "\"pool_bytes\":Q,\"max_rss_kb\":R,\"error\":null or \"...\"}.\n"
            "  --count N        messages (default 1000)\n"
            "  --pool P         distinct messages generated (default 4096): message i\n"
            "                   is issue i mod P of the run, so up to P messages are\n"
            "                   the bytes of `gen --count N`, and memory does not grow\n"
            "                   with N; 0: all N distinct (memory grows with N)\n"
            "  --seed S, --size K, --layout late|first   as for gen\n"
            "  --compress gzip  gzip the messages (compressed flag 1), before listening\n"
            "  --compress deflate  compress them as gRPC's deflate does (zlib streams)\n"
            "  --compress-ratio R  when compressing, only a share R in [0, 1] of them\n"
            "  --connections C  serve C connections, one after the other, then exit\n"
            "                   (default 1; 0: until killed)\n"
            "  --stop-after B   a faulty peer, for tests: close each connection after\n"
            "                   B bytes, wherever that is\n"
            "Exit status: 0; 1 when a connection or stdout fails (named on stderr, a\n"
            "connection's with the byte and the messages written before it); 2 on\n"
            "bad options.\n");
}

/* The pool: its frames back to back in one buffer (grown by doubling:
 * generation is not timed), and where each ends. Kept in user memory and
 * written with writev: tried, a memfd sent with sendfile saved the upstream
 * little and cost the filter more, its receive copy then reading pages no
 * cache had seen. A stream of N messages cycles through it, so memory is the
 * pool's whatever N (holding all of `run 200000` took 805 MB). */
typedef struct {
    uint8_t *buf;
    size_t len;    /* bytes in buf */
    size_t *ends;  /* ends[i]: the end of frame i in buf */
    uint64_t n;    /* frames */
} frame_pool;

static void pool_free(frame_pool *p)
{
    free(p->buf);
    free(p->ends);
    memset(p, 0, sizeof *p);
}

static bool generate(frame_pool *p, uint64_t n, uint64_t seed, int size, bool first,
                     gz_encoding enc, double ratio)
{
    memset(p, 0, sizeof *p);
    iss_gen *g = iss_gen_new(size);
    if (g != NULL && !iss_gen_compress(g, enc, ratio)) {
        iss_gen_free(g);
        g = NULL;
    }
    size_t cap = 1 << 20;
    p->buf = malloc(cap);
    p->ends = n <= SIZE_MAX / sizeof *p->ends ? malloc((size_t)(n > 0 ? n : 1) * sizeof *p->ends)
                                               : NULL;
    if (g == NULL || p->buf == NULL || p->ends == NULL)
        goto oom;
    for (uint64_t i = 0; i < n; i++) {
        size_t fn;
        const uint8_t *f = iss_gen_frame(g, seed, i, first, &fn);
        if (f == NULL) {
            fprintf(stderr, "triage-demo upstream: message %llu does not fit the frame limit\n",
                    (unsigned long long)i);
            goto fail;
        }
        if (cap - p->len < fn) {
            while (cap - p->len < fn)
                cap *= 2;
            uint8_t *nb = realloc(p->buf, cap);
            if (nb == NULL)
                goto oom;
            p->buf = nb;
        }
        memcpy(p->buf + p->len, f, fn);
        p->len += fn;
        p->ends[i] = p->len;
        p->n = i + 1;
    }
    iss_gen_free(g);
    return true;
oom:
    fprintf(stderr, "triage-demo upstream: out of memory\n");
fail:
    iss_gen_free(g);
    pool_free(p);
    return false;
}

/* Whole messages in the first `bytes` bytes of a stream cycling through p. */
static uint64_t pool_messages(const frame_pool *p, uint64_t bytes)
{
    if (p->len == 0)
        return 0;
    uint64_t whole = bytes / p->len, rest = bytes % p->len;
    size_t lo = 0, hi = (size_t)p->n; /* frames ending at or before rest */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->ends[mid] <= rest)
            lo = mid + 1;
        else
            hi = mid;
    }
    return whole * p->n + lo;
}

/* Writes `count` messages cycling through p, at most stop_after bytes, to
 * fd; *sent receives the bytes that went out. 0, or -1 with err set. */
static int serve(int fd, const frame_pool *p, uint64_t count, uint64_t stop_after, uint64_t *sent,
                 char *err, size_t errlen)
{
    enum { CHUNK = 64 }; /* pool passes per writev call */
    struct iovec iov[CHUNK];
    uint64_t left = count, budget = stop_after;
    *sent = 0;
    while (left > 0 && budget > 0 && p->n > 0) {
        size_t k = 0;
        uint64_t chunk = 0;
        while (k < CHUNK && left > 0 && budget > 0) {
            uint64_t take = left < p->n ? left : p->n;
            uint64_t bytes = p->ends[take - 1];
            if (bytes > budget)
                bytes = budget;
            iov[k++] = (struct iovec){p->buf, (size_t)bytes};
            chunk += bytes;
            budget -= bytes;
            left -= take;
        }
        if (net_writev_all(fd, iov, k, err, errlen) != 0) {
            /* net_writev_all advances the entries past what went out */
            uint64_t unsent = 0;
            for (size_t i = 0; i < k; i++)
                unsent += iov[i].iov_len;
            *sent += chunk - unsent;
            return -1;
        }
        *sent += chunk;
    }
    return 0;
}

int cmd_upstream(int argc, char **argv)
{
    const char *listen_at = NULL;
    uint64_t count = 1000, seed = 1, size = 7, conns = 1, stop_after = UINT64_MAX, pool = 4096;
    bool first = false, bad = false, ratio_set = false;
    gz_encoding enc = GZ_IDENTITY;
    double ratio = 1;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL;
        if (want_help(argv[i])) {
            upstream_help(stdout);
            return 0;
        } else if (opt_match(argc, argv, &i, "--listen", &v, &bad)) {
            listen_at = v;
        } else if (opt_match(argc, argv, &i, "--count", &v, &bad)) {
            bad = bad || !opt_u64("--count", v, UINT64_MAX, &count);
        } else if (opt_match(argc, argv, &i, "--seed", &v, &bad)) {
            bad = bad || !opt_u64("--seed", v, UINT64_MAX, &seed);
        } else if (opt_match(argc, argv, &i, "--size", &v, &bad)) {
            bad = bad || !opt_u64("--size", v, 1000, &size);
        } else if (opt_match(argc, argv, &i, "--connections", &v, &bad)) {
            bad = bad || !opt_u64("--connections", v, UINT64_MAX, &conns);
        } else if (opt_match(argc, argv, &i, "--pool", &v, &bad)) {
            bad = bad || !opt_u64("--pool", v, UINT64_MAX, &pool);
        } else if (opt_match(argc, argv, &i, "--compress", &v, &bad)) {
            bad = bad || !opt_encoding("upstream", "--compress", v, &enc);
        } else if (opt_match(argc, argv, &i, "--compress-ratio", &v, &bad)) {
            bad = bad || !opt_ratio("upstream", v, &ratio);
            ratio_set = true;
        } else if (opt_match(argc, argv, &i, "--stop-after", &v, &bad)) {
            bad = bad || !opt_u64("--stop-after", v, UINT64_MAX, &stop_after);
        } else if (opt_match(argc, argv, &i, "--layout", &v, &bad)) {
            bad = bad || !opt_layout("upstream", v, &first);
        } else {
            fprintf(stderr, "triage-demo upstream: unknown option '%s' (see --help)\n", argv[i]);
            bad = true;
        }
    }
    if (!bad && listen_at == NULL) {
        fprintf(stderr, "triage-demo upstream: --listen HOST:PORT is required\n");
        bad = true;
    }
    if (!bad && ratio_set && enc == GZ_IDENTITY) {
        fprintf(stderr,
                "triage-demo upstream: --compress-ratio needs --compress gzip or deflate\n");
        bad = true;
    }
    if (bad)
        return 2;

    frame_pool fp;
    if (!generate(&fp, pool == 0 || pool > count ? count : pool, seed, (int)size, first, enc,
                  ratio))
        return 1;
    int lfd = svc_listen("upstream", listen_at);
    if (lfd < 0) {
        pool_free(&fp);
        out_close("upstream");
        return 1;
    }
    int rc = 0;
    char err[NET_ERR_LEN];
    for (uint64_t c = 0; conns == 0 || c < conns; c++) {
        int fd = net_accept(lfd, err, sizeof err);
        if (fd < 0) {
            fprintf(stderr, "triage-demo upstream: %s\n", err);
            rc = 1;
            break;
        }
        /* A few iovecs per call, each the whole pool: the kernel takes as
         * much per call as the socket buffer has room for. */
        uint64_t sent;
        bool failed = serve(fd, &fp, count, stop_after, &sent, err, sizeof err) != 0;
        uint64_t msgs = pool_messages(&fp, sent);
        shutdown(fd, SHUT_WR);
        close(fd);
        char what[NET_ERR_LEN + 96] = "";
        if (failed) {
            snprintf(what, sizeof what, "connection %llu: %s, at byte %llu, after %llu messages written",
                     (unsigned long long)c + 1, err, (unsigned long long)sent,
                     (unsigned long long)msgs);
            fprintf(stderr, "triage-demo upstream: %s\n", what);
            rc = 1;
        }
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("{\"connection\":%llu,\"messages\":%llu,\"bytes\":%llu,\"pool\":%llu,"
               "\"pool_bytes\":%zu,\"max_rss_kb\":%ld,\"error\":",
               (unsigned long long)c + 1, (unsigned long long)msgs, (unsigned long long)sent,
               (unsigned long long)fp.n, fp.len, ru.ru_maxrss);
        if (failed)
            svc_json_string(stdout, what);
        else
            printf("null");
        printf("}\n");
        if (out_flush_failed())
            break; /* whoever started us no longer listens: out_close says so */
    }
    close(lfd);
    pool_free(&fp);
    int wrc = out_close("upstream");
    return rc != 0 ? rc : wrc;
}

/* ---- filter */

static void filter_help(FILE *f)
{
    fprintf(f,
            "usage: triage-demo filter --from HOST:PORT --to HOST:PORT\n"
            "                          [--reader optics|decode|none] [--rules FILE | --where EXPR |\n"
            "                          --policy FILE] [--json]\n"
            "                          [--verify off|json|schema]\n"
            "                          [--grpc-encoding identity|gzip|deflate]\n"
            "                          [--threads 1|2] [--progress N]\n"
            "\n"
            "Connects to the downstream (--to), then the upstream (--from), and forwards\n"
            "the frames the policy keeps, byte for byte, until the upstream closes.\n"
            "Prints the tally at the end.\n"
            "  --reader optics  read only the values the rules need, where they lie (default)\n"
            "  --reader decode  decode the whole message, judge the model\n"
            "  --reader none    forward everything, judge nothing (the relay)\n"
            OPT_RULES_HELP
            "  --verify off     optics trust the bytes they do not read (default)\n"
            "  --verify json    optics also require one well-formed JSON text\n"
            "  --verify schema  optics also require what the full decoder accepts\n"
            "                   (a message failing it is judged none and dropped)\n"
            "  --grpc-encoding identity  a compressed frame is a framing error (default)\n"
            "  --grpc-encoding gzip      compressed frames are inflated, then judged; a\n"
            "                   kept one is forwarded as it came, compressed. One that\n"
            "                   does not inflate is judged none, dropped, and reported\n"
            "                   on stderr with its offset; the stream goes on\n"
            "  --grpc-encoding deflate   the same for gRPC's deflate (zlib streams)\n"
            "  --json           the tally as one JSON object\n"
            "  --threads 1|2    1: read, judge, write in one thread (default);\n"
            "                   2: a writer thread behind a bounded queue\n"
            "  --progress N     a progress line on stderr, out of N messages\n"
            "Exit status: 0 when the upstream ended between frames and everything kept\n"
            "was written; 2 on a framing error (after forwarding every whole kept\n"
            "message before it); 1 when a peer cannot be reached or fails (a\n"
            "downstream that goes away is named with the byte of the stream to it\n"
            "and the messages written), or stdout cannot be written.\n");
}

typedef struct {
    const char *label;
    uint64_t total;
    bool shown;
} progress_line;

static void show_progress(void *ctx, const tl_tally *t)
{
    progress_line *pl = ctx;
    double pct = pl->total > 0 ? 100.0 * (double)t->messages / (double)pl->total : 0;
    fprintf(stderr, "\r%s: %llu of %llu messages (%.0f%%), %llu kept ", pl->label,
            (unsigned long long)t->messages, (unsigned long long)pl->total, pct,
            (unsigned long long)tl_kept(t));
    pl->shown = true;
}

static const char *const outcome_names[] = {"done", "upstream_bad", "upstream_io",
                                            "downstream_io", "setup"};

int cmd_filter(int argc, char **argv)
{
    const char *from = NULL, *to = NULL, *reader_s = "optics";
    rd_choice choice = {0};
    uint64_t threads = 1, progress = 0;
    bool bad = false, json = false;
    gz_encoding enc = GZ_IDENTITY;
    vf_level verify = VF_OFF;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL;
        if (want_help(argv[i])) {
            filter_help(stdout);
            return 0;
        } else if (opt_match(argc, argv, &i, "--from", &v, &bad)) {
            from = v;
        } else if (opt_match(argc, argv, &i, "--to", &v, &bad)) {
            to = v;
        } else if (opt_match(argc, argv, &i, "--reader", &v, &bad)) {
            reader_s = v;
        } else if (opt_rules(argc, argv, &i, &choice, &bad)) {
        } else if (opt_match(argc, argv, &i, "--threads", &v, &bad)) {
            bad = bad || !opt_count("filter", "--threads", v, 2, &threads);
        } else if (opt_match(argc, argv, &i, "--progress", &v, &bad)) {
            bad = bad || !opt_count("filter", "--progress", v, UINT64_MAX, &progress);
        } else if (opt_match(argc, argv, &i, "--verify", &v, &bad)) {
            bad = bad || !opt_verify("filter", v, &verify);
        } else if (opt_match(argc, argv, &i, "--grpc-encoding", &v, &bad)) {
            bad = bad || !opt_encoding("filter", "--grpc-encoding", v, &enc);
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else {
            fprintf(stderr, "triage-demo filter: unknown option '%s' (see --help)\n", argv[i]);
            bad = true;
        }
    }
    rd_type reader = RD_OPTICS;
    if (!bad && !rd_type_parse(reader_s, &reader)) {
        fprintf(stderr, "triage-demo filter: --reader is optics, decode or none, not '%s'\n",
                reader_s);
        bad = true;
    }
    if (!bad && (from == NULL || to == NULL)) {
        fprintf(stderr, "triage-demo filter: --from HOST:PORT and --to HOST:PORT are required\n");
        bad = true;
    }
    po_policy policy __attribute__((cleanup(po_free))) = {0};
    if (bad || !svc_policy("filter", &choice, &policy))
        return 2;

    sk_init();
    char err[NET_ERR_LEN];
    /* Downstream first: when it cannot be reached, nothing is taken from
     * the upstream. */
    int out = net_connect(to, err, sizeof err);
    if (out < 0) {
        fprintf(stderr, "triage-demo filter: downstream: %s\n", err);
        return 1;
    }
    int in = net_connect(from, err, sizeof err);
    if (in < 0) {
        fprintf(stderr, "triage-demo filter: upstream: %s\n", err);
        close(out);
        return 1;
    }
    pp_pipe *pp = pp_new(reader, &policy, err, sizeof err);
    if (pp != NULL && (!pp_set_verify(pp, verify) || !pp_set_encoding(pp, enc))) {
        snprintf(err, sizeof err, "out of memory");
        pp_free(pp);
        pp = NULL;
    }
    if (pp == NULL) {
        fprintf(stderr, "triage-demo filter: %s\n", err);
        close(in);
        close(out);
        return 1;
    }
    pp->warn = stderr;
    progress_line pl = {rd_type_name(reader), progress, false};
    fw_opts o = {
        .ring_mode = RB_AUTO,
        .threads = (int)threads,
        .linger_ms = 30000,
        .progress = progress > 0 ? show_progress : NULL,
        .progress_ctx = &pl,
    };
    fw_result res;
    fw_outcome oc = pp_stream(pp, in, out, &o, &res);
    close(in);
    close(out);
    if (pl.shown)
        fprintf(stderr, "\r\033[K");
    char what[NET_ERR_LEN + 256];
    fw_describe(&res, what, sizeof what);
    if (oc == FW_DOWNSTREAM_IO) {
        /* Where the stream to it stopped: the kept frames handed to it. When
         * the downstream left while we waited for input, all of them went
         * out; when a write failed, the last gather is counted too. */
        size_t w = strlen(what);
        snprintf(what + w, sizeof what - w, ", at byte %llu of the stream to it, after %llu messages written",
                 (unsigned long long)pp->tally.forwarded.bytes,
                 (unsigned long long)pp->tally.forwarded.frames);
    }
    if (json) {
        printf("{\"reader\":\"%s\",", rd_type_name(reader));
        tl_print_json(stdout, &pp->tally, res.seconds);
        printf(",\"ring\":\"%s\",\"threads\":%d,\"straddled\":%llu,\"reads\":%llu,"
               "\"writes\":%llu,\"outcome\":\"%s\",",
               res.mirrored ? "mirrored" : "flat", res.threads,
               (unsigned long long)pp->straddled, (unsigned long long)res.reads,
               (unsigned long long)res.writes, outcome_names[oc]);
        printf("\"verify\":\"%s\",\"grpc_encoding\":\"%s\",\"inflated\":%llu,"
               "\"compressed_bytes\":%llu,\"inflated_bytes\":%llu,\"inflate_ns\":%llu,"
               "\"inflate_failed\":%llu,\"error\":",
               vf_level_name(verify), gz_encoding_name(enc),
               (unsigned long long)pp->inflated, (unsigned long long)pp->compressed_bytes,
               (unsigned long long)pp->inflated_bytes, (unsigned long long)pp->inflate_ns,
               (unsigned long long)pp->inflate_failed);
        if (oc == FW_DONE)
            printf("null");
        else
            svc_json_string(stdout, what);
        printf("}\n");
    } else {
        tl_print(stdout, rd_type_name(reader), &pp->tally, res.seconds);
        if (enc != GZ_IDENTITY && reader != RD_NONE)
            svc_print_inflate(stdout, enc, pp->inflated, pp->compressed_bytes,
                              pp->inflated_bytes, pp->inflate_ns, pp->inflate_failed);
    }
    if (oc != FW_DONE)
        fprintf(stderr, "triage-demo filter: %s\n", what);
    pp_free(pp);
    int wrc = out_close("filter");
    return oc == FW_DONE ? wrc : oc == FW_UPSTREAM_BAD ? 2 : 1;
}

/* ---- downstream */

static void downstream_help(FILE *f)
{
    fprintf(f,
            "usage: triage-demo downstream --listen HOST:PORT [--rules FILE | --where EXPR |\n"
            "                              --policy FILE] [--count-only]\n"
            "                              [--grpc-encoding identity|gzip|deflate]\n"
            "\n"
            "Prints 'listening HOST:PORT', accepts one connection and reads frames until\n"
            "it closes. Decodes every message with the full decoder and judges it with\n"
            "the model reader; at the end prints one JSON line:\n"
            "  {\"received\":N,\"bytes\":B,\"decoded\":N,\"kept_by_policy\":N,\n"
            "   \"digest\":\"...\",\"error\":null}\n"
            "digest: XXH64 of each frame, folded in order (runtime/tally.h), the same\n"
            "the filter computes over what it forwards.\n"
            OPT_RULES_HELP
            "  --count-only     only count and digest; decoded and kept_by_policy are null\n"
            "  --grpc-encoding gzip  compressed frames are gzip: inflated, then decoded\n"
            "                   (one that does not inflate does not decode); the digest\n"
            "                   is over the frames as received\n"
            "  --grpc-encoding deflate  the same for gRPC's deflate (zlib streams)\n"
            "Exit status: 0 when the stream ended between frames; 2 on a framing error;\n"
            "1 on a network error, or when stdout cannot be written.\n");
}

int cmd_downstream(int argc, char **argv)
{
    const char *listen_at = NULL;
    rd_choice choice = {0};
    bool bad = false, count_only = false;
    gz_encoding enc = GZ_IDENTITY;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL;
        if (want_help(argv[i])) {
            downstream_help(stdout);
            return 0;
        } else if (opt_match(argc, argv, &i, "--grpc-encoding", &v, &bad)) {
            bad = bad || !opt_encoding("downstream", "--grpc-encoding", v, &enc);
        } else if (opt_match(argc, argv, &i, "--listen", &v, &bad)) {
            listen_at = v;
        } else if (opt_rules(argc, argv, &i, &choice, &bad)) {
        } else if (strcmp(argv[i], "--count-only") == 0) {
            count_only = true;
        } else {
            fprintf(stderr, "triage-demo downstream: unknown option '%s' (see --help)\n", argv[i]);
            bad = true;
        }
    }
    if (!bad && listen_at == NULL) {
        fprintf(stderr, "triage-demo downstream: --listen HOST:PORT is required\n");
        bad = true;
    }
    po_policy policy __attribute__((cleanup(po_free))) = {0};
    if (bad || !svc_policy("downstream", &choice, &policy))
        return 2;

    sk_init();
    pp_pipe *pp = NULL; /* for its decode reader */
    char err[NET_ERR_LEN];
    if (!count_only && (pp = pp_new(RD_DECODE, &policy, err, sizeof err)) == NULL) {
        fprintf(stderr, "triage-demo downstream: %s\n", err);
        return 1;
    }
    int lfd = svc_listen("downstream", listen_at);
    if (lfd < 0) {
        pp_free(pp);
        out_close("downstream");
        return 1;
    }
    int fd = net_accept(lfd, err, sizeof err);
    close(lfd);
    if (fd < 0) {
        fprintf(stderr, "triage-demo downstream: %s\n", err);
        pp_free(pp);
        return 1;
    }
    src_input src;
    if (!src_open(&src, fd, enc, err, sizeof err)) {
        fprintf(stderr, "triage-demo downstream: %s\n", err);
        close(fd);
        pp_free(pp);
        return 1;
    }
    uint64_t received = 0, decoded = 0, kept = 0;
    tl_digest dg;
    tl_digest_init(&dg);
    fr_frame f;
    int r;
    while ((r = src_next(&src, &f)) == 1) {
        received++;
        tl_digest_add(&dg, f.head, fr_frame_size(&f));
        if (count_only)
            continue;
        tr_message m;
        if (src_message(&src, &f, &m).code != TR_E_OK)
            continue; /* a message that does not inflate does not decode */
        if (!rd_decode(pp->rd, m))
            continue;
        decoded++;
        int kind;
        kept += po_judge(&policy, &pp->rd->ru, &kind);
    }
    printf("{\"received\":%llu,\"bytes\":%llu,", (unsigned long long)received,
           (unsigned long long)dg.bytes);
    if (count_only)
        printf("\"decoded\":null,\"kept_by_policy\":null,");
    else
        printf("\"decoded\":%llu,\"kept_by_policy\":%llu,", (unsigned long long)decoded,
               (unsigned long long)kept);
    printf("\"digest\":\"%016llx\",\"error\":", (unsigned long long)dg.h);
    if (r < 0) {
        char what[256];
        if (src.err.code == TR_E_IO)
            snprintf(what, sizeof what, "%s at byte %zu", src.io_err, src.err.offset);
        else
            snprintf(what, sizeof what, "%s (%s) at byte %zu", tr_error_text(src.err.code),
                     tr_error_name(src.err.code), src.err.offset);
        svc_json_string(stdout, what);
    } else {
        printf("null");
    }
    printf("}\n");
    if (r < 0)
        src_report(&src, "downstream");
    src_close(&src);
    close(fd);
    pp_free(pp);
    int wrc = out_close("downstream");
    return r < 0 ? (src.err.code == TR_E_IO ? 1 : 2) : wrc;
}
