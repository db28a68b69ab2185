/* gen.c: `triage-demo gen`: generated messages as gRPC frames on stdout.
 * Message i comes from the random stream (seed, i), so the same seed and
 * size give the same bytes, and any message can be regenerated alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "issues.h"
#include "opts.h"
#include "out.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: triage-demo gen [--count N] [--seed S] [--size K] [--layout late|first]\n"
            "                       [--compress identity|gzip|deflate] [--compress-ratio R]\n"
            "\n"
            "Writes N generated messages (%s, the schema's root type) to stdout as gRPC\n"
            "frames (1-byte flag, 4-byte big-endian length, JSON). Same seed and size,\n"
            "same bytes.\n"
            "  --count N        messages to write (default 1000)\n"
            "  --seed S         random seed (default 1)\n"
            "  --size K         list and map lengths are 0..K (default 7, about 4.1 KB)\n"
            "  --layout late    fields in declared order (default; the demo's detail\n"
            "                   near the end)\n"
            "  --layout first   the same messages with the field the kind is read\n"
            "                   through (the demo's detail) moved to the front\n"
            "  --compress gzip  gzip the messages (compressed flag 1; default identity)\n"
            "  --compress deflate  compress them as gRPC's deflate does (a zlib stream)\n"
            "  --compress-ratio R  when compressing, only a share R in [0, 1] of them\n"
            "                   (default 1), chosen by (seed, message number)\n"
            "Exit status: 0, or 1 when stdout cannot be written (named on stderr).\n",
            tr_schema.types[tr_schema.root].name);
}

int cmd_gen(int argc, char **argv)
{
    uint64_t count = 1000, seed = 1, size = 7;
    bool first = false, bad = false, ratio_set = false;
    gz_encoding enc = GZ_IDENTITY;
    double ratio = 1;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help(stdout);
            return 0;
        } else if (opt_match(argc, argv, &i, "--count", &v, &bad)) {
            bad = bad || !opt_u64("--count", v, UINT64_MAX, &count);
        } else if (opt_match(argc, argv, &i, "--seed", &v, &bad)) {
            bad = bad || !opt_u64("--seed", v, UINT64_MAX, &seed);
        } else if (opt_match(argc, argv, &i, "--size", &v, &bad)) {
            bad = bad || !opt_u64("--size", v, 1000, &size);
        } else if (opt_match(argc, argv, &i, "--layout", &v, &bad)) {
            bad = bad || !opt_layout("gen", v, &first);
        } else if (opt_match(argc, argv, &i, "--compress", &v, &bad)) {
            bad = bad || !opt_encoding("gen", "--compress", v, &enc);
        } else if (opt_match(argc, argv, &i, "--compress-ratio", &v, &bad)) {
            bad = bad || !opt_ratio("gen", v, &ratio);
            ratio_set = true;
        } else {
            fprintf(stderr, "triage-demo gen: unknown option '%s' (see --help)\n", argv[i]);
            bad = true;
        }
    }
    if (!bad && ratio_set && enc == GZ_IDENTITY) {
        fprintf(stderr, "triage-demo gen: --compress-ratio needs --compress gzip or deflate\n");
        bad = true;
    }
    if (bad)
        return 2;

    iss_gen *g = iss_gen_new((int)size);
    if (g != NULL && !iss_gen_compress(g, enc, ratio)) {
        iss_gen_free(g);
        g = NULL;
    }
    if (g == NULL) {
        fprintf(stderr, "triage-demo gen: out of memory\n");
        return 1;
    }
    int rc = 0;
    for (uint64_t i = 0; i < count; i++) {
        size_t n;
        const uint8_t *frame = iss_gen_frame(g, seed, i, first, &n);
        if (frame == NULL) {
            fprintf(stderr, "triage-demo gen: message %llu does not fit the frame limit\n",
                    (unsigned long long)i);
            rc = 1;
            break;
        }
        if (fwrite(frame, 1, n, stdout) != n) {
            out_failed(); /* out_close says what */
            break;
        }
    }
    iss_gen_free(g);
    int wrc = out_close("gen");
    return rc != 0 ? rc : wrc;
}
