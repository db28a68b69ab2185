/* triage-bench: the benchmarks (README.md). Figures are for comparing ratios
 * within one run; nothing here asserts a time. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "benches.h"
#include "out.h"
#include "version.h"

static const struct {
    const char *name;
    int (*run)(const bn_opts *o);
    const char *what;
} benches[] = {
    {"triage", bench_triage, "one message from bytes to verdict: decode, optics, detail"},
    {"stream", bench_stream, "the filter's pipe in memory: 256 KiB pieces split, judged, gathered"},
#ifdef TRIAGE_DEMO_MODEL /* written for the demo's schema (the Makefile: DEMO_MODEL) */
    {"peers", bench_peers, "ours against simdjson, jsmn, cJSON, jq, memchr, memcpy (size 7)"},
    {"sweep", bench_sweep, "the same readers over message sizes 2, 7, 15, 40"},
#endif
    {"grpc", bench_grpc, "gRPC over HTTP/2 through triage-demo proxy's engine: 1, 8, 64 streams"},
    {"grpc-scale", bench_grpc_scale, "the proxy's workers 1..cores, 1-256 streams, added latency"},
    {"grpc-haproxy", bench_grpc_haproxy, "calls through HAProxy to 0-3 proxy processes"},
};
#define NBENCH (sizeof benches / sizeof benches[0])

static void help(FILE *f)
{
    fprintf(f, "usage: triage-bench [--json] [--quick] [--version] [--help] [NAME...]\n\n"
               "Runs the benchmarks (all, or those named):\n");
    for (size_t i = 0; i < NBENCH; i++)
        fprintf(f, "  %-8s %s\n", benches[i].name, benches[i].what);
    fprintf(f, "  --json     one JSON object per line\n"
               "  --quick    a few repetitions only (CI checks the benchmarks run)\n"
               "  --version  print the version and exit\n");
}

int main(int argc, char **argv)
{
    bn_opts o = {false, false};
    const char *names[16];
    int nnames = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            o.json = true;
        else if (strcmp(argv[i], "--quick") == 0)
            o.quick = true;
        else if (strcmp(argv[i], "--version") == 0) {
            printf("triage-bench %s\n", TR_VERSION);
            return 0;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "triage-bench: unknown option '%s' (see --help)\n", argv[i]);
            return 2;
        } else if (nnames < 16) {
            bool known = false;
            for (size_t b = 0; b < NBENCH; b++)
                known |= strcmp(argv[i], benches[b].name) == 0;
            if (!known) {
                fprintf(stderr, "triage-bench: no benchmark '%s' (see --help)\n", argv[i]);
                return 2;
            }
            names[nnames++] = argv[i];
        }
    }
    int rc = 0;
    for (size_t b = 0; b < NBENCH; b++) {
        bool run = nnames == 0;
        for (int k = 0; k < nnames; k++)
            run |= strcmp(names[k], benches[b].name) == 0;
        if (run && benches[b].run(&o) != 0)
            rc = 1;
        out_flush_failed(); /* its errno, if a write failed */
    }
    /* results that cannot be written are not results: say so */
    return out_close_as("triage-bench") != 0 ? 1 : rc;
}
