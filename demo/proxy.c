/* proxy.c: `triage-demo proxy`: the rules between real gRPC clients and
 * servers, over HTTP/2 (the engine is runtime/h2proxy.h; this file gives it
 * a listening socket, a judge and a stop signal, and prints the tally). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cmd.h"
#include "h2proxy.h"
#include "inflate.h"
#include "pipe.h"
#include "readers.h"
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
            "                         [--grpc-encoding identity|gzip] [--grace MS]\n"
            "                         [--connect-timeout MS] [--json]\n"
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
            "  --grpc-encoding gzip  judge messages of calls with grpc-encoding gzip\n"
            "                      (inflated, forwarded as they came); identity (default):\n"
            "                      a compressed message ends its call with INTERNAL\n"
            "  --grace MS          after SIGTERM or SIGINT, how long calls in flight may\n"
            "                      finish before they are cancelled (default 5000)\n"
            "  --connect-timeout MS  how long a connection to the server may take to\n"
            "                      open before the calls waiting get UNAVAILABLE (10000)\n"
            "  --json              the tally as one JSON object\n"
            "The proxy's own statuses: UNAVAILABLE when the server cannot be reached or\n"
            "its connection fails; INTERNAL for a malformed message (compressed without\n"
            "grpc-encoding, cut short, or failing to inflate); RESOURCE_EXHAUSTED for\n"
            "one over 4 MiB. Each ends that call only.\n"
            "SIGTERM or SIGINT: stop accepting, let calls finish (a second signal a\n"
            "second later: at once), print the tally, exit 0. Exit status 2 on bad options, 1 when the\n"
            "proxy cannot start.\n");
}

typedef struct {
    pp_reader reader;
    po_policy policy;
    rd_reader *rd;
    vf_level verify;
    bool gzip;
    gz_inflater gz;
    tl_tally tally;
    uint64_t inflated, refused;
} px_ctx;

static int px_judge(void *ctx, const hp_message *m, char *why, size_t whylen)
{
    px_ctx *x = ctx;
    size_t frame = FR_HEADER_LEN + m->n;
    if (x->reader == PP_NONE) {
        tl_count(&x->tally, -1, true, frame);
        return HP_KEEP;
    }
    tr_message msg = {m->p, m->n};
    if (m->compressed) {
        if (!x->gzip || strcmp(m->encoding, "gzip") != 0) {
            snprintf(why, whylen,
                     "a message compressed with '%s', which this proxy does not read "
                     "(it reads gzip when started with --grpc-encoding gzip)",
                     m->encoding);
            tl_count(&x->tally, -1, false, frame);
            x->refused++;
            return HP_REFUSE;
        }
        tr_error e = gz_inflate(&x->gz, msg, &msg);
        if (e.code != TR_E_OK) {
            snprintf(why, whylen, "gzip: %s (%s) at byte %zu of a message",
                     tr_error_text(e.code), tr_error_name(e.code), e.offset);
            tl_count(&x->tally, -1, false, frame);
            x->refused++;
            return HP_REFUSE;
        }
        x->inflated++;
    }
    int kind = -1;
    bool keep;
    uint64_t t0 = pp_now_ns(); /* the monotonic clock is read in user space */
    if (x->reader == PP_OPTICS)
        keep = rd_message(x->rd, x->verify, msg) && po_judge(&x->policy, &x->rd->ru, &kind);
    else
        keep = rd_decode(x->rd, msg) && po_judge(&x->policy, &x->rd->ru, &kind);
    tl_judge_time(&x->tally, 1, pp_now_ns() - t0);
    tl_count(&x->tally, kind, keep, frame);
    return keep ? HP_KEEP : HP_DROP;
}

static void print_json(const px_ctx *x, const hp_stats *s, const char *dir, double seconds)
{
    printf("{\"reader\":\"%s\",\"direction\":\"%s\",\"calls\":%llu,", pp_reader_name(x->reader),
           dir, (unsigned long long)s->calls);
    tl_print_json(stdout, &x->tally, seconds);
    printf(",\"calls_failed\":%llu,\"calls_cancelled\":%llu,\"connections\":%llu,"
           "\"upstream_connections\":%llu,\"requests\":{\"seen\":%llu,\"kept\":%llu,"
           "\"bytes\":%llu,\"kept_bytes\":%llu},\"responses\":{\"seen\":%llu,\"kept\":%llu,"
           "\"bytes\":%llu,\"kept_bytes\":%llu},\"messages_copied\":%llu,"
           "\"engine_allocations\":%llu,\"h2_allocations\":%llu,\"peak_held_bytes\":%llu,"
           "\"inflated\":%llu,\"refused\":%llu}\n",
           (unsigned long long)s->calls_failed, (unsigned long long)s->calls_cancelled,
           (unsigned long long)s->connections, (unsigned long long)s->upstream_connections,
           (unsigned long long)s->messages[0], (unsigned long long)s->kept[0],
           (unsigned long long)s->bytes[0], (unsigned long long)s->kept_bytes[0],
           (unsigned long long)s->messages[1], (unsigned long long)s->kept[1],
           (unsigned long long)s->bytes[1], (unsigned long long)s->kept_bytes[1],
           (unsigned long long)s->messages_copied, (unsigned long long)s->allocations,
           (unsigned long long)s->h2_allocations, (unsigned long long)s->peak_held,
           (unsigned long long)x->inflated, (unsigned long long)x->refused);
}

static void print_text(const px_ctx *x, const hp_stats *s, const char *dir, double seconds)
{
    char label[64];
    snprintf(label, sizeof label, "proxy (%s, %s)", pp_reader_name(x->reader), dir);
    tl_print(stdout, label, &x->tally, seconds);
    printf("  calls: %llu (%llu ended by the proxy, %llu cancelled) on %llu connections, "
           "%llu to the server\n",
           (unsigned long long)s->calls, (unsigned long long)s->calls_failed,
           (unsigned long long)s->calls_cancelled, (unsigned long long)s->connections,
           (unsigned long long)s->upstream_connections);
    printf("  requests: %llu seen, %llu kept; responses: %llu seen, %llu kept\n",
           (unsigned long long)s->messages[0], (unsigned long long)s->kept[0],
           (unsigned long long)s->messages[1], (unsigned long long)s->kept[1]);
    printf("  copies: %llu bytes in %llu messages; allocations: %llu (engine %llu, nghttp2 "
           "%llu); at most %llu bytes held\n",
           (unsigned long long)s->bytes_copied, (unsigned long long)s->messages_copied,
           (unsigned long long)x->tally.allocations, (unsigned long long)s->allocations,
           (unsigned long long)s->h2_allocations, (unsigned long long)s->peak_held);
}

int cmd_proxy(int argc, char **argv)
{
    const char *listen_at = NULL, *to = NULL, *reader_s = "optics", *dir = "both";
    rd_choice choice = {NULL, NULL, NULL};
    bool bad = false, json = false, gzip = false;
    vf_level verify = VF_OFF;
    uint64_t grace = 5000, connect_ms = HP_CONNECT_MS;
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
            bad = bad || !opt_gzip("proxy", "--grpc-encoding", v, &gzip);
        } else if (opt_match(argc, argv, &i, "--grace", &v, &bad)) {
            bad = bad || !opt_u64("--grace", v, 3600000, &grace);
        } else if (opt_match(argc, argv, &i, "--connect-timeout", &v, &bad)) {
            bad = bad || !opt_count("proxy", "--connect-timeout", v, 3600000, &connect_ms);
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
    px_ctx x;
    memset(&x, 0, sizeof x);
    if (!pp_reader_parse(reader_s, &x.reader)) {
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
    x.gzip = gzip;
    const char *names[TL_MAX_KINDS];
    tl_init(&x.tally, rd_kinds(names, TL_MAX_KINDS), names);
    int rc = 1;
    hp_engine *e = NULL;
    int sfd = -1;
    if (x.reader != PP_NONE) {
        x.rd = rd_new();
        if (x.rd == NULL || (x.reader == PP_DECODE && !rd_decoding(x.rd)) ||
            (gzip && !gz_inflater_init(&x.gz, 0))) {
            fprintf(stderr, "triage-demo proxy: out of memory\n");
            goto out;
        }
        x.tally.allocations += RD_ALLOCS + (x.reader == PP_DECODE ? RD_DECODE_ALLOCS : 0) +
                               (gzip ? x.gz.allocs : 0);
    }
    /* SIGTERM and SIGINT arrive on a descriptor the loop watches; a peer
     * gone mid-write is an error return, never a signal. */
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
    int lfd = svc_listen("proxy", listen_at);
    if (lfd < 0)
        goto out;
    hp_config cfg = {
        .listen_fd = lfd,
        .upstream = to,
        .judge_requests = req,
        .judge_responses = rsp,
        .judge = px_judge,
        .judge_ctx = &x,
        .stop_fd = sfd,
        .grace_ms = (int)grace,
        .connect_ms = (int)connect_ms,
    };
    e = hp_new(&cfg, err, sizeof err);
    if (e == NULL) {
        fprintf(stderr, "triage-demo proxy: %s\n", err);
        goto out;
    }
    uint64_t t0 = pp_now_ns();
    if (hp_run(e, err, sizeof err) != 0) {
        fprintf(stderr, "triage-demo proxy: %s\n", err);
        goto out;
    }
    double seconds = (double)(pp_now_ns() - t0) / 1e9;
    const hp_stats *s = hp_stats_of(e);
    /* kept frames of the judged direction(s), as the tally counts them (the
     * proxy hashes nothing: the digest stays the empty one) */
    x.tally.forwarded.frames = (req ? s->kept[0] : 0) + (rsp ? s->kept[1] : 0);
    x.tally.forwarded.bytes = (req ? s->kept_bytes[0] : 0) + (rsp ? s->kept_bytes[1] : 0);
    x.tally.bytes_copied = s->bytes_copied;
    x.tally.allocations += s->allocations + s->h2_allocations;
    if (json)
        print_json(&x, s, dir, seconds);
    else
        print_text(&x, s, dir, seconds);
    rc = out_close("proxy");
out:
    hp_free(e);
    if (sfd >= 0)
        close(sfd);
    if (gzip && x.gz.d != NULL)
        gz_inflater_destroy(&x.gz);
    rd_free(x.rd);
    po_free(&x.policy);
    return rc;
}
