/* proxy.c: `triage-demo proxy`: the rules between real gRPC clients and
 * servers, over HTTP/2 (the engine is runtime/h2proxy.h; this file gives it
 * a listening socket, a judge and a stop signal, and prints the tally).
 *
 * --workers N: N engines, each on its own thread with its own listening
 * socket (SO_REUSEPORT), its own connections to the server and its own
 * judge context (reader, inflater, tally); they share only the compiled
 * rules, which are immutable. The main thread waits for a signal and
 * passes it on to every engine (hp_stop), then sums the tallies. One
 * worker runs on the main thread, as the proxy always did. */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "clock.h"
#include "cmd.h"
#include "h2proxy.h"
#include "gzip.h"
#include "opts.h"
#include "out.h"
#include "pipe.h"
#include "reader.h"
#include "services.h"
#include "skip.h"
#include "tally.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: triage-demo proxy --listen HOST:PORT --to HOST:PORT\n"
            "                         [--rules FILE | --where EXPR | --policy FILE]\n"
            "                         [--direction requests|responses|both]\n"
            "                         [--reader optics|decode|none] [--verify off|json|schema]\n"
            "                         [--grpc-encoding LIST] [--grace MS]\n"
            "                         [--connect-timeout MS] [--idle-timeout SECONDS]\n"
            "                         [--max-connections N] [--workers N] [--busy-poll US]\n"
            "                         [--json]\n"
            "\n"
            "A gRPC proxy: accepts HTTP/2 cleartext (prior knowledge, as gRPC clients\n"
            "use on insecure channels), prints 'listening HOST:PORT' (port 0: an\n"
            "ephemeral one), and forwards every call to the server at --to, any\n"
            "method: headers, trailers, statuses and resets unchanged, and in the\n"
            "chosen direction(s) only the messages the rules keep, byte for byte.\n"
            "  --listen HOST:PORT  where clients connect\n"
            "  --to HOST:PORT      the gRPC server (h2c); one connection shared by all calls\n"
            OPT_RULES_HELP
            "  --direction D       judge requests, responses or both (default both);\n"
            "                      the other direction is forwarded whole\n"
            "  --reader optics     read only the values the rules need (default)\n"
            "  --reader decode     decode each message whole, judge the model\n"
            "  --reader none       keep every message (a relay: what moving costs)\n"
            "  --verify LEVEL      off, json or schema: what the optics reader checks\n"
            "  --grpc-encoding LIST  the compressed messages judged, as their call's\n"
            "                      grpc-encoding names them: gzip, deflate, or both\n"
            "                      (gzip,deflate: the default); identity: none. One is\n"
            "                      inflated to be judged and forwarded as it came; one\n"
            "                      in an encoding not listed ends its call with INTERNAL\n"
            "  --grace MS          after SIGTERM or SIGINT, how long calls in flight may\n"
            "                      finish before they are cancelled (default 5000)\n"
            "  --connect-timeout MS  how long a connection to the server may take to\n"
            "                      open (TCP, then the server's SETTINGS) before the\n"
            "                      calls waiting get UNAVAILABLE (10000)\n"
            "  --idle-timeout SECONDS  a client connection with no call open for this long\n"
            "                      is closed (GOAWAY, then the connection; default 300;\n"
            "                      0: never)\n"
            "  --max-connections N  client connections open at once (default 1024 per\n"
            "                      worker, N shared out among the workers); more wait in\n"
            "                      the listening socket's queue until one closes\n"
            "  --workers N         N event loops on N threads, each with its own listening\n"
            "                      socket on the same port (SO_REUSEPORT: the kernel spreads\n"
            "                      connections, a connection's calls stay on one) and its\n"
            "                      own connections to the server (default: the cores this\n"
            "                      process may run on)\n"
            "  --busy-poll US      after each event, each worker polls without sleeping\n"
            "                      for US microseconds (at most 10000) before it waits:\n"
            "                      what arrives meanwhile is taken without a wake-up,\n"
            "                      which saves latency at the price of that much CPU\n"
            "                      (default 0: never)\n"
            "  --json              the tally as one JSON object\n"
            "The proxy's own statuses: UNAVAILABLE when the server cannot be reached or\n"
            "its connection fails; INTERNAL for a malformed message (compressed without\n"
            "grpc-encoding, cut short, or failing to inflate) or one in an encoding not\n"
            "read; RESOURCE_EXHAUSTED for one over 4 MiB or a header list over 64 KiB.\n"
            "Each ends that call only.\n"
            "A connection ended by an error (not HTTP/2, a protocol error, a read or\n"
            "write error, a server that cannot be reached) is a line on stderr with\n"
            "the peer and the reason (at most 20 a second).\n"
            "SIGTERM or SIGINT: stop accepting, let calls finish (a second signal a\n"
            "second later: at once), print the tally, exit 0. Exit status 2 on bad options, 1 when the\n"
            "proxy cannot start.\n");
}

typedef struct {
    rd_type reader;
    po_policy policy;
    rd_reader *rd;
    vf_level verify;
    unsigned reads; /* the encodings judged: bit 1 << gz_encoding */
    gz_inflater gz;
    tl_tally tally;
    uint64_t inflated, refused;
} px_ctx;

/* The encodings --grpc-encoding names (gzip.h's names), each the bit
 * 1 << its gz_encoding in px_ctx.reads; identity sets none: a message that
 * is not compressed is always read, and one flagged compressed under the
 * name identity never is. */
#define PX_READS_ALL (1u << GZ_GZIP | 1u << GZ_DEFLATE) /* the default */

/* --grpc-encoding's list: encodings' names, comma-separated, each at most
 * once; *reads their bits. */
static bool px_encodings(const char *v, unsigned *reads)
{
    unsigned seen = 0;
    *reads = 0;
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        gz_encoding e = GZ_IDENTITY;
        if (!gz_encoding_parse(p, n, &e) || (seen >> e & 1)) {
            fprintf(stderr, "triage-demo proxy: --grpc-encoding is a list of identity, gzip "
                            "and deflate (each once), not '%s'\n", v);
            return false;
        }
        seen |= 1u << e;
        if (e != GZ_IDENTITY)
            *reads |= 1u << e;
        if (p[n] == '\0')
            return true;
        p += n + 1;
    }
}

/* What the proxy reads, for its messages: "gzip and deflate", ... */
static const char *px_reads_text(unsigned reads)
{
    bool gz = reads >> GZ_GZIP & 1, zl = reads >> GZ_DEFLATE & 1;
    return gz && zl ? "gzip and deflate"
           : gz     ? "gzip only"
           : zl     ? "deflate only"
                    : "no compressed message (--grpc-encoding identity)";
}

static int px_judge(void *ctx, const hp_message *m, char *why, size_t whylen)
{
    px_ctx *x = ctx;
    size_t frame = FR_HEADER_LEN + m->n;
    if (x->reader == RD_NONE) {
        tl_count(&x->tally, -1, true, frame);
        return HP_KEEP;
    }
    tr_message msg = {m->p, m->n};
    if (m->compressed) {
        gz_encoding enc = GZ_IDENTITY;
        if (!gz_encoding_parse(m->encoding, strlen(m->encoding), &enc) ||
            !(x->reads >> enc & 1)) {
            snprintf(why, whylen,
                     "a message compressed with '%s', which this proxy does not read "
                     "(it reads %s)",
                     m->encoding, px_reads_text(x->reads));
            tl_count(&x->tally, -1, false, frame);
            x->refused++;
            return HP_REFUSE;
        }
        tr_error e = gz_inflate_as(&x->gz, enc, msg, &msg);
        if (e.code != TR_E_OK) {
            snprintf(why, whylen, "%s: %s (%s) at byte %zu of a message", m->encoding,
                     tr_error_text(e.code), tr_error_name(e.code), e.offset);
            tl_count(&x->tally, -1, false, frame);
            x->refused++;
            return HP_REFUSE;
        }
        x->inflated++;
    }
    int kind = -1;
    bool keep;
    uint64_t t0 = clk_now_ns(); /* the monotonic clock is read in user space */
    if (x->reader == RD_OPTICS)
        keep = rd_message(x->rd, x->verify, msg) && po_judge(&x->policy, &x->rd->ru, &kind);
    else
        keep = rd_decode(x->rd, msg) && po_judge(&x->policy, &x->rd->ru, &kind);
    tl_judge_time(&x->tally, 1, clk_now_ns() - t0);
    tl_count(&x->tally, kind, keep, frame);
    return keep ? HP_KEEP : HP_DROP;
}

/* What a worker that failed adds to the main thread's eventfd (one that
 * stopped adds 1). */
#define PX_FAILED (1ull << 32)
/* The most --workers takes. */
#define PX_MAX_WORKERS 256

/* One worker: its engine, its judge's context, its thread's outcome. */
typedef struct {
    px_ctx x;
    hp_engine *e;
    pthread_t th;
    bool started;
    int rc;
    char err[NET_ERR_LEN + 64];
    int done_fd; /* the main thread's eventfd, written when hp_run returns */
    int id, of;  /* worker id of `of` */
} px_worker;

/* The engine's log: a connection ended by an error, on stderr. */
static void px_log(void *ctx, const char *line)
{
    const px_worker *w = ctx;
    if (w->of > 1)
        fprintf(stderr, "triage-demo proxy: worker %d: %s\n", w->id, line);
    else
        fprintf(stderr, "triage-demo proxy: %s\n", line);
}

static void *px_worker_main(void *arg)
{
    px_worker *w = arg;
    w->rc = hp_run(w->e, w->err, sizeof w->err);
    /* the main thread learns of a failure from the count alone: it reads
     * w->rc only after the join */
    uint64_t one = w->rc == 0 ? 1 : PX_FAILED;
    ssize_t r = write(w->done_fd, &one, sizeof one);
    (void)r;
    return NULL;
}

/* The cores this process may run on (at least 1, at most PX_MAX_WORKERS). */
static int px_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n < 1 ? 1 : n > PX_MAX_WORKERS ? PX_MAX_WORKERS : n;
}

/* Adds b's rows and counters to a (same kinds). */
static void px_tally_add(tl_tally *a, const tl_tally *b)
{
    for (int k = 0; k <= a->kinds; k++) {
        a->seen[k] += b->seen[k];
        a->kept[k] += b->kept[k];
    }
    a->messages += b->messages;
    a->bytes += b->bytes;
    a->judged += b->judged;
    a->judge_ns += b->judge_ns;
    a->allocations += b->allocations;
}

static void print_json(const px_ctx *x, const hp_stats *s, const char *dir, double seconds,
                       const px_worker *w, int n)
{
    printf("{\"reader\":\"%s\",\"direction\":\"%s\",\"calls\":%llu,", rd_type_name(x->reader),
           dir, (unsigned long long)s->calls);
    tl_print_json(stdout, &x->tally, seconds);
    printf(",\"calls_failed\":%llu,\"window_failed\":%llu,\"calls_cancelled\":%llu,\"connections\":%llu,"
           "\"connections_failed\":%llu,\"upstream_connections\":%llu,"
           "\"requests\":{\"seen\":%llu,\"kept\":%llu,\"bytes\":%llu,\"kept_bytes\":%llu},"
           "\"responses\":{\"seen\":%llu,\"kept\":%llu,\"bytes\":%llu,\"kept_bytes\":%llu},"
           "\"messages_copied\":%llu,"
           "\"messages_moved\":%llu,\"messages_placed\":%llu,\"idle_closed\":%llu,"
           "\"accept_limited\":%llu,\"ring_bytes_released\":%llu,"
           "\"engine_allocations\":%llu,\"h2_allocations\":%llu,\"peak_held_bytes\":%llu,"
           "\"inflated\":%llu,\"refused\":%llu,\"workers\":%d,\"per_worker\":[",
           (unsigned long long)s->calls_failed, (unsigned long long)s->window_failed,
           (unsigned long long)s->calls_cancelled,
           (unsigned long long)s->connections, (unsigned long long)s->connections_failed,
           (unsigned long long)s->upstream_connections, (unsigned long long)s->messages[0],
           (unsigned long long)s->kept[0], (unsigned long long)s->bytes[0],
           (unsigned long long)s->kept_bytes[0],
           (unsigned long long)s->messages[1], (unsigned long long)s->kept[1],
           (unsigned long long)s->bytes[1], (unsigned long long)s->kept_bytes[1],
           (unsigned long long)s->messages_copied, (unsigned long long)s->messages_moved,
           (unsigned long long)s->messages_placed, (unsigned long long)s->idle_closed,
           (unsigned long long)s->accept_limited,
           (unsigned long long)s->ring_bytes_released, (unsigned long long)s->allocations,
           (unsigned long long)s->h2_allocations, (unsigned long long)s->peak_held,
           (unsigned long long)x->inflated, (unsigned long long)x->refused, n);
    for (int i = 0; i < n; i++) {
        const hp_stats *t = hp_stats_of(w[i].e);
        printf("%s{\"calls\":%llu,\"calls_failed\":%llu,\"connections\":%llu,"
               "\"upstream_connections\":%llu,\"messages\":%llu,\"kept\":%llu,"
               "\"requests\":{\"seen\":%llu,\"kept\":%llu},\"responses\":{\"seen\":%llu,"
               "\"kept\":%llu},\"peak_held_bytes\":%llu}",
               i ? "," : "", (unsigned long long)t->calls, (unsigned long long)t->calls_failed,
               (unsigned long long)t->connections, (unsigned long long)t->upstream_connections,
               (unsigned long long)w[i].x.tally.messages,
               (unsigned long long)tl_kept(&w[i].x.tally), (unsigned long long)t->messages[0],
               (unsigned long long)t->kept[0], (unsigned long long)t->messages[1],
               (unsigned long long)t->kept[1], (unsigned long long)t->peak_held);
    }
    printf("]}\n");
}

static void print_text(const px_ctx *x, const hp_stats *s, const char *dir, double seconds,
                       const px_worker *w, int n)
{
    char label[64];
    snprintf(label, sizeof label, "proxy (%s, %s)", rd_type_name(x->reader), dir);
    tl_print(stdout, label, &x->tally, seconds);
    printf("  calls: %llu (%llu ended by the proxy, %llu of them to free a connection's window "
           "full of incomplete messages; %llu cancelled) on %llu connections, "
           "%llu to the server; %llu connections ended by an error\n",
           (unsigned long long)s->calls, (unsigned long long)s->calls_failed,
           (unsigned long long)s->window_failed,
           (unsigned long long)s->calls_cancelled, (unsigned long long)s->connections,
           (unsigned long long)s->upstream_connections,
           (unsigned long long)s->connections_failed);
    printf("  requests: %llu seen, %llu kept; responses: %llu seen, %llu kept\n",
           (unsigned long long)s->messages[0], (unsigned long long)s->kept[0],
           (unsigned long long)s->messages[1], (unsigned long long)s->kept[1]);
    printf("  copies: %llu bytes in %llu messages (%llu moved out of a stalled stream's way; "
           "%llu split messages placed without one); allocations: %llu (engine %llu, nghttp2 "
           "%llu); at most %llu bytes held\n",
           (unsigned long long)s->bytes_copied, (unsigned long long)s->messages_copied,
           (unsigned long long)s->messages_moved, (unsigned long long)s->messages_placed,
           (unsigned long long)x->tally.allocations, (unsigned long long)s->allocations,
           (unsigned long long)s->h2_allocations, (unsigned long long)s->peak_held);
    printf("  idle connections closed: %llu; accepting paused at --max-connections: %llu "
           "times; ring pages given back: %llu bytes\n",
           (unsigned long long)s->idle_closed, (unsigned long long)s->accept_limited,
           (unsigned long long)s->ring_bytes_released);
    if (n > 1)
        for (int i = 0; i < n; i++) {
            const hp_stats *t = hp_stats_of(w[i].e);
            printf("  worker %d: %llu calls on %llu connections, %llu messages, %llu kept\n", i,
                   (unsigned long long)t->calls, (unsigned long long)t->connections,
                   (unsigned long long)(t->messages[0] + t->messages[1]),
                   (unsigned long long)(t->kept[0] + t->kept[1]));
        }
}

/* Runs n > 1 workers on threads until they all stopped: SIGTERM and SIGINT
 * (read from sfd) go to every engine, and so does one worker's failure.
 * 0, or 1 when a worker failed. */
static int px_run_threads(px_worker *w, int n, int sfd)
{
    int done_fd = eventfd(0, EFD_CLOEXEC);
    if (done_fd < 0) {
        perror("triage-demo proxy: eventfd");
        return 1;
    }
    int started = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        w[i].done_fd = done_fd;
        if (pthread_create(&w[i].th, NULL, px_worker_main, &w[i]) != 0) {
            fprintf(stderr, "triage-demo proxy: cannot start worker %d's thread\n", i);
            rc = 1;
            break;
        }
        w[i].started = true;
        started++;
    }
    if (rc != 0)
        for (int i = 0; i < started; i++)
            hp_stop(w[i].e);
    for (uint64_t done = 0; done < (uint64_t)started;) {
        struct pollfd p[2] = {{.fd = sfd, .events = POLLIN}, {.fd = done_fd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0)
            continue; /* EINTR */
        if (p[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            ssize_t r = read(sfd, &si, sizeof si);
            (void)r;
            for (int i = 0; i < started; i++)
                hp_stop(w[i].e);
        }
        if (p[1].revents & POLLIN) {
            uint64_t k = 0;
            if (read(done_fd, &k, sizeof k) == (ssize_t)sizeof k)
                done += (k & (PX_FAILED - 1)) + k / PX_FAILED;
            if (k >= PX_FAILED) /* a worker's loop failed: stop the rest */
                for (int i = 0; i < started; i++)
                    hp_stop(w[i].e);
        }
    }
    for (int i = 0; i < started; i++) {
        pthread_join(w[i].th, NULL);
        if (w[i].rc != 0) {
            fprintf(stderr, "triage-demo proxy: worker %d: %s\n", i, w[i].err);
            rc = 1;
        }
    }
    close(done_fd);
    return rc;
}

/* n listening sockets on hostport in fds (one: as every service makes it;
 * more: SO_REUSEPORT on the same port), and the line 'listening HOST:PORT'. */
static bool px_listen(const char *hostport, int n, int *fds)
{
    if (n == 1) {
        fds[0] = svc_listen("proxy", hostport);
        return fds[0] >= 0;
    }
    char err[NET_ERR_LEN];
    net_addr a;
    uint16_t port = 0;
    if (net_parse_addr(hostport, &a, err, sizeof err) != 0 ||
        hp_listen(hostport, n, fds, &port, err, sizeof err) != 0) {
        fprintf(stderr, "triage-demo proxy: %s\n", err);
        return false;
    }
    bool v6 = strchr(a.host, ':') != NULL;
    printf("listening %s%s%s:%u\n", v6 ? "[" : "", a.host, v6 ? "]" : "", (unsigned)port);
    if (out_flush_failed()) {
        for (int i = 0; i < n; i++)
            close(fds[i]);
        return false;
    }
    return true;
}

int cmd_proxy(int argc, char **argv)
{
    const char *listen_at = NULL, *to = NULL, *reader_s = "optics", *dir = "both";
    rd_choice choice = {0};
    bool bad = false, json = false;
    unsigned reads = PX_READS_ALL;
    vf_level verify = VF_OFF;
    uint64_t grace = 5000, connect_ms = HP_CONNECT_MS, workers = (uint64_t)px_cores();
    uint64_t idle_s = HP_IDLE_MS / 1000, max_conns = 0; /* 0: HP_MAX_CONNECTIONS a worker */
    uint64_t busy_us = 0;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help(stdout);
            return 0;
        } else if (opt_match(argc, argv, &i, "--listen", &v, &bad)) {
            listen_at = v;
        } else if (opt_match(argc, argv, &i, "--to", &v, &bad)) {
            to = v;
        } else if (opt_match(argc, argv, &i, "--reader", &v, &bad)) {
            reader_s = v;
        } else if (opt_match(argc, argv, &i, "--direction", &v, &bad)) {
            dir = v;
        } else if (opt_rules(argc, argv, &i, &choice, &bad)) {
        } else if (opt_match(argc, argv, &i, "--verify", &v, &bad)) {
            bad = bad || !opt_verify("proxy", v, &verify);
        } else if (opt_match(argc, argv, &i, "--grpc-encoding", &v, &bad)) {
            bad = bad || !px_encodings(v, &reads);
        } else if (opt_match(argc, argv, &i, "--grace", &v, &bad)) {
            bad = bad || !opt_u64("--grace", v, 3600000, &grace);
        } else if (opt_match(argc, argv, &i, "--connect-timeout", &v, &bad)) {
            bad = bad || !opt_count("proxy", "--connect-timeout", v, 3600000, &connect_ms);
        } else if (opt_match(argc, argv, &i, "--idle-timeout", &v, &bad)) {
            bad = bad || !opt_u64("--idle-timeout", v, 7 * 24 * 3600, &idle_s);
        } else if (opt_match(argc, argv, &i, "--max-connections", &v, &bad)) {
            bad = bad || !opt_count("proxy", "--max-connections", v, 1u << 24, &max_conns);
        } else if (opt_match(argc, argv, &i, "--busy-poll", &v, &bad)) {
            bad = bad || !opt_u64("--busy-poll", v, 10000, &busy_us);
        } else if (opt_match(argc, argv, &i, "--workers", &v, &bad)) {
            bad = bad || !opt_count("proxy", "--workers", v, PX_MAX_WORKERS, &workers);
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else {
            fprintf(stderr, "triage-demo proxy: unknown option '%s' (see --help)\n", argv[i]);
            bad = true;
        }
    }
    if (bad)
        return 2;
    if (listen_at == NULL || to == NULL) {
        fprintf(stderr, "triage-demo proxy: --listen and --to are required (see --help)\n");
        return 2;
    }
    if (max_conns != 0 && max_conns < workers) {
        fprintf(stderr, "triage-demo proxy: --max-connections %llu is fewer than the %llu "
                        "workers (each keeps at least one)\n",
                (unsigned long long)max_conns, (unsigned long long)workers);
        return 2;
    }
    px_ctx x;
    memset(&x, 0, sizeof x);
    if (!rd_type_parse(reader_s, &x.reader)) {
        fprintf(stderr, "triage-demo proxy: --reader is optics, decode or none, not '%s'\n",
                reader_s);
        return 2;
    }
    bool req = strcmp(dir, "requests") == 0 || strcmp(dir, "both") == 0;
    bool rsp = strcmp(dir, "responses") == 0 || strcmp(dir, "both") == 0;
    if (!req && !rsp) {
        fprintf(stderr, "triage-demo proxy: --direction is requests, responses or both, not '%s'\n",
                dir);
        return 2;
    }
    net_addr a;
    char err[NET_ERR_LEN + 64];
    if (net_parse_addr(to, &a, err, sizeof err) != 0) {
        fprintf(stderr, "triage-demo proxy: --to: %s\n", err);
        return 2;
    }
    if (!svc_policy("proxy", &choice, &x.policy))
        return 2;
    sk_init();
    x.verify = verify;
    x.reads = reads;
    const char *names[TL_MAX_KINDS];
    tl_init(&x.tally, rd_kinds(names, TL_MAX_KINDS), names);
    int n = (int)workers, rc = 1, sfd = -1, lfd_left = 0;
    int *fds = NULL;
    px_worker *w = calloc((size_t)n, sizeof *w);
    if (w == NULL || (fds = calloc((size_t)n, sizeof *fds)) == NULL) {
        fprintf(stderr, "triage-demo proxy: out of memory\n");
        goto out;
    }
    x.tally.allocations += 2;
    for (int i = 0; i < n; i++) {
        px_ctx *wx = &w[i].x;
        *wx = x; /* the policy's rules are shared: immutable */
        wx->tally.allocations = 0;
        if (x.reader == RD_NONE)
            continue;
        wx->rd = rd_new();
        if (wx->rd == NULL || (x.reader == RD_DECODE && !rd_decoding(wx->rd)) ||
            (reads != 0 && !gz_inflater_init(&wx->gz, 0))) {
            fprintf(stderr, "triage-demo proxy: out of memory\n");
            goto out;
        }
        wx->tally.allocations += RD_ALLOCS + (x.reader == RD_DECODE ? RD_DECODE_ALLOCS : 0) +
                                 (reads != 0 ? wx->gz.allocs : 0);
    }
    /* SIGTERM and SIGINT arrive on a descriptor the loop (or, with workers,
     * the main thread) watches; blocked before any worker starts, so no
     * thread takes them. A peer gone mid-write is an error return, never a
     * signal. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0) {
        perror("triage-demo proxy: signalfd");
        goto out;
    }
    if (!px_listen(listen_at, n, fds))
        goto out;
    lfd_left = n;
    for (int i = 0; i < n; i++) {
        hp_config cfg = {
            .listen_fd = fds[i],
            .upstream = to,
            .judge_requests = req,
            .judge_responses = rsp,
            .judge = px_judge,
            .judge_ctx = &w[i].x,
            .stop_fd = n == 1 ? sfd : -1,
            .grace_ms = (int)grace,
            .connect_ms = (int)connect_ms,
            .idle_ms = idle_s > 0 ? (int)(idle_s * 1000) : -1,
            /* N shared out: the first N % n workers take one more */
            .max_connections = (int)(max_conns / (uint64_t)n +
                                     ((uint64_t)i < max_conns % (uint64_t)n)),
            .busy_poll_us = (int)busy_us,
            .log = px_log,
            .log_ctx = &w[i],
        };
        w[i].id = i;
        w[i].of = n;
        lfd_left--; /* hp_new owns it now, failing or not */
        w[i].e = hp_new(&cfg, err, sizeof err);
        if (w[i].e == NULL) {
            fprintf(stderr, "triage-demo proxy: %s\n", err);
            goto out;
        }
    }
    uint64_t t0 = clk_now_ns();
    if (n == 1) {
        if (hp_run(w[0].e, err, sizeof err) != 0) {
            fprintf(stderr, "triage-demo proxy: %s\n", err);
            goto out;
        }
    } else if (px_run_threads(w, n, sfd) != 0) {
        goto out;
    }
    double seconds = (double)(clk_now_ns() - t0) / 1e9;
    hp_stats sum;
    memset(&sum, 0, sizeof sum);
    for (int i = 0; i < n; i++) {
        hp_stats_add(&sum, hp_stats_of(w[i].e));
        px_tally_add(&x.tally, &w[i].x.tally);
        x.inflated += w[i].x.inflated;
        x.refused += w[i].x.refused;
    }
    const hp_stats *s = &sum;
    /* kept frames of the judged direction(s), as the tally counts them (the
     * proxy hashes nothing: the digest stays the empty one) */
    x.tally.forwarded.frames = (req ? s->kept[0] : 0) + (rsp ? s->kept[1] : 0);
    x.tally.forwarded.bytes = (req ? s->kept_bytes[0] : 0) + (rsp ? s->kept_bytes[1] : 0);
    x.tally.bytes_copied = s->bytes_copied;
    x.tally.allocations += s->allocations + s->h2_allocations;
    if (json)
        print_json(&x, s, dir, seconds, w, n);
    else
        print_text(&x, s, dir, seconds, w, n);
    rc = out_close("proxy");
out:
    for (int i = n - lfd_left; fds != NULL && i < n; i++)
        close(fds[i]);
    for (int i = 0; w != NULL && i < n; i++) {
        hp_free(w[i].e);
        if (reads != 0 && w[i].x.gz.d != NULL)
            gz_inflater_destroy(&w[i].x.gz);
        rd_free(w[i].x.rd);
    }
    free(w);
    free(fds);
    if (sfd >= 0)
        close(sfd);
    po_free(&x.policy);
    return rc;
}
