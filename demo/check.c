/* check.c: `triage-demo check`: the two validators, one line per message:
 * `ok`, or `bad <offset> <reason>` (offset inside the message). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "opts.h"
#include "out.h"
#include "source.h"
#include "verify.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: triage-demo check [--level json|schema] [--ndjson]\n"
            "                         [--grpc-encoding identity|gzip|deflate]\n"
            "\n"
            "Reads gRPC frames from stdin and writes one line per message: 'ok', or\n"
            "'bad <offset> <reason>', offset being the byte inside the message where\n"
            "the problem was found.\n"
            "  --level json    the message is one well-formed JSON text (RFC 8259,\n"
            "                  UTF-8 included)\n"
            "  --level schema  it also decodes as the schema's root, as the full decoder\n"
            "                  reads it (default)\n"
            "  --ndjson        read one JSON message per line instead of frames\n"
            "  --grpc-encoding gzip|deflate  compressed frames are inflated, then checked\n"
            "                  (offsets in the inflated message); one that does not\n"
            "                  inflate is bad at the offset in its compressed bytes\n"
            "                  (default identity: a compressed frame is a framing error)\n"
            "Exit status: 0 when the input ends on a frame boundary, 2 on a framing error,\n"
            "1 when stdout cannot be written (named on stderr).\n");
}

int cmd_check(int argc, char **argv)
{
    vf_level level = VF_SCHEMA;
    bool bad = false, ndjson = false;
    gz_encoding enc = GZ_IDENTITY;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help(stdout);
            return 0;
        } else if (opt_match(argc, argv, &i, "--level", &v, &bad)) {
            if (!bad && !vf_parse_level(v, &level) ) {
                fprintf(stderr, "triage-demo check: --level is json or schema, not '%s'\n", v);
                bad = true;
            } else if (!bad && level == VF_OFF) {
                fprintf(stderr, "triage-demo check: --level is json or schema\n");
                bad = true;
            }
        } else if (strcmp(argv[i], "--ndjson") == 0) {
            ndjson = true;
        } else if (opt_match(argc, argv, &i, "--grpc-encoding", &v, &bad)) {
            bad = bad || !opt_encoding("check", "--grpc-encoding", v, &enc);
        } else {
            fprintf(stderr, "triage-demo check: unknown option '%s' (see --help)\n", argv[i]);
            bad = true;
        }
    }
    if (bad)
        return 2;

    char err[256];
    vf_checker *vc = vf_new();
    src_input src;
    if (vc == NULL || !src_open(&src, STDIN_FILENO, enc, err, sizeof err)) {
        fprintf(stderr, "triage-demo check: %s\n", vc == NULL ? "out of memory" : err);
        vf_free(vc);
        return 1;
    }
    src.ndjson = ndjson;
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    fr_frame f;
    int r;
    while ((r = src_next(&src, &f)) == 1) {
        tr_message m;
        tr_error e = src_message(&src, &f, &m);
        if (e.code == TR_E_OK)
            e = vf_check(vc, level, m);
        if (e.code == TR_E_OK)
            fputs("ok\n", stdout);
        else if (e.what != NULL)
            printf("bad %zu %s (%s: %s)\n", e.offset, tr_error_text(e.code), tr_error_name(e.code),
                   e.what);
        else
            printf("bad %zu %s (%s)\n", e.offset, tr_error_text(e.code), tr_error_name(e.code));
        if (out_failed())
            break; /* the lines are lost: stop, and say so below */
    }
    int wrc = out_close("check");
    int rc = 0;
    if (r < 0) {
        src_report(&src, "check");
        rc = 2;
    }
    src_close(&src);
    vf_free(vc);
    return rc != 0 ? rc : wrc;
}
