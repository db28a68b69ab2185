/* judge.c: `triage-demo judge`: one verdict line per framed message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "gzip.h"
#include "opts.h"
#include "out.h"
#include "reader.h"
#include "skip.h"
#include "source.h"
#include "tally.h"
#include "tr_optics.h"
#include "verify.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: triage-demo judge [--reader optics|decode] [--rules FILE | --where EXPR |\n"
            "                         --policy FILE] [--verify off|json|schema]\n"
            "                         [--grpc-encoding identity|gzip|deflate] [--ndjson]\n"
            "                         [--print OPTIC[,OPTIC...]] [--summary]\n"
            "\n"
            "Reads gRPC frames from stdin and writes one line per message, in order:\n"
            "'<kind> <keep|drop>', kind being a case of the schema's kind optic (its\n"
            "union's tag) or none (no kind could be read, or the reader rejected the\n"
            "message).\n"
            "  --reader optics  read only the values the rules need, where they lie (default)\n"
            "  --reader decode  decode the whole message, judge the model\n"
            OPT_RULES_HELP
            "  --verify off     optics trust the bytes they do not read (default)\n"
            "  --verify json    optics also require one well-formed JSON text\n"
            "  --verify schema  optics also require what the full decoder accepts, so\n"
            "                   their verdict equals decode's on any input\n"
            "  --print OPTICS   instead of verdicts, each message's values of these optics\n"
            "                   (comma-separated names), tab-separated, '-' for a miss\n"
            "  --ndjson         read one JSON message per line instead of frames\n"
            "  --summary        print a tally to stderr at the end\n"
            "  --grpc-encoding identity  a compressed frame is a framing error (default)\n"
            "  --grpc-encoding gzip      compressed frames are gzip: inflated, then judged\n"
            "  --grpc-encoding deflate   compressed frames are gRPC's deflate (zlib streams)\n"
            "Exit status: 0 when the input ends on a frame boundary; 2 on a framing\n"
            "error or a compressed message that does not inflate (corrupt, a checksum\n"
            "that differs, over 4 MiB), after the lines of every whole message before\n"
            "it, or bad rules; 1 when stdout cannot be written (named on stderr).\n");
}

/* --print's optics: names separated by commas, each declared. */
static int print_list(const char *v, int *optics, int max)
{
    int n = 0;
    for (const char *p = v;;) {
        const char *c = strchr(p, ',');
        size_t len = c != NULL ? (size_t)(c - p) : strlen(p);
        int i = op_find(&tr_schema, p, len);
        if (i < 0 || n == max) {
            if (i < 0) {
                fprintf(stderr, "triage-demo judge: --print: no optic '%.*s' (optics:", (int)len, p);
                for (int k = 0; k < tr_schema.noptics; k++)
                    fprintf(stderr, "%s %s", k ? "," : "", tr_schema.optics[k].name);
                fprintf(stderr, ")\n");
            } else {
                fprintf(stderr, "triage-demo judge: --print: more than %d optics\n", max);
            }
            return -1;
        }
        if (!op_from_message(&tr_schema, i)) {
            fprintf(stderr, "triage-demo judge: --print: optic '%s' cannot be read from a "
                            "message (no raw optic from the root reaches %s)\n",
                    tr_schema.optics[i].name, tr_schema.types[tr_schema.optics[i].source].name);
            return -1;
        }
        optics[n++] = i;
        if (c == NULL)
            return n;
        p = c + 1;
    }
}

/* One --print line: the optics' values, tab-separated, '-' for a miss. */
static void print_values(ru_subject *rd, const int *optics, int n, char *buf, size_t cap)
{
    for (int k = 0; k < n; k++) {
        const op_optic *o = &tr_schema.optics[optics[k]];
        const op_value *v = ru_value(rd, optics[k]);
        size_t w = v != NULL ? ru_format(o, v, ru_subject_is_model(rd), buf, cap) : 0;
        if (k > 0)
            putchar('\t');
        if (w == 0)
            putchar('-');
        else
            fwrite(buf, 1, w, stdout);
    }
    putchar('\n');
}

#define PRINT_MAX RU_MAX_OPTICS /* as many as a schema may declare */

int cmd_judge(int argc, char **argv)
{
    const char *reader = "optics", *print = NULL;
    rd_choice choice = {0};
    bool bad = false, summary = false, ndjson = false;
    gz_encoding enc = GZ_IDENTITY;
    vf_level verify = VF_OFF;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help(stdout);
            return 0;
        } else if (opt_match(argc, argv, &i, "--reader", &v, &bad)) {
            reader = v;
        } else if (opt_rules(argc, argv, &i, &choice, &bad)) {
        } else if (opt_match(argc, argv, &i, "--verify", &v, &bad)) {
            bad = bad || !opt_verify("judge", v, &verify);
        } else if (opt_match(argc, argv, &i, "--grpc-encoding", &v, &bad)) {
            bad = bad || !opt_encoding("judge", "--grpc-encoding", v, &enc);
        } else if (opt_match(argc, argv, &i, "--print", &v, &bad)) {
            print = v;
        } else if (strcmp(argv[i], "--summary") == 0) {
            summary = true;
        } else if (strcmp(argv[i], "--ndjson") == 0) {
            ndjson = true;
        } else {
            fprintf(stderr, "triage-demo judge: unknown option '%s' (see --help)\n", argv[i]);
            bad = true;
        }
    }
    if (bad)
        return 2;
    bool optics = strcmp(reader, "optics") == 0;
    if (!optics && strcmp(reader, "decode") != 0) {
        fprintf(stderr, "triage-demo judge: --reader is optics or decode, not '%s'\n", reader);
        return 2;
    }
    int printed[PRINT_MAX], nprint = 0;
    if (print != NULL && (nprint = print_list(print, printed, PRINT_MAX)) < 0)
        return 2;

    char err[1024];
    /* --print judges nothing: the default rules are not loaded for it
     * (they may name optics another schema lacks); rules given are */
    po_policy policy = {0};
    bool given = choice.rules != NULL || choice.where != NULL || choice.policy != NULL;
    if ((print == NULL || given) && !rd_policy(&choice, &policy, err, sizeof err)) {
        fprintf(stderr, "triage-demo judge: %s\n", err);
        return 2;
    }

    sk_init();
    src_input src;
    if (!src_open(&src, STDIN_FILENO, enc, err, sizeof err)) {
        fprintf(stderr, "triage-demo judge: %s\n", err);
        po_free(&policy);
        return 1;
    }
    src.ndjson = ndjson;
    /* a --print value as text: a string escapes a byte to at most 6 */
    size_t text_cap = (size_t)FR_DEFAULT_MAX_LEN * 6 + 64;
    char *text = malloc(text_cap);
    rd_reader *rd = rd_new();
    if (text == NULL || rd == NULL || (!optics && !rd_decoding(rd))) {
        free(text);
        rd_free(rd);
        po_free(&policy);
        fprintf(stderr, "triage-demo judge: out of memory\n");
        src_close(&src);
        return 1;
    }
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

    const char *kinds[TL_MAX_KINDS];
    int nkinds = rd_kinds(kinds, TL_MAX_KINDS);
    uint64_t seen[TL_MAX_KINDS + 1] = {0}, kept[TL_MAX_KINDS + 1] = {0};
    fr_frame f;
    int r;
    tr_error inflate_err = {0};
    while ((r = src_next(&src, &f)) == 1) {
        /* A compressed message is judged in the source's inflater buffer. */
        tr_message msg;
        inflate_err = src_message(&src, &f, &msg);
        if (inflate_err.code != TR_E_OK)
            break;
        int kind = -1;
        bool keep = false;
        bool read = optics ? rd_message(rd, verify, msg) : rd_decode(rd, msg);
        if (print != NULL) {
            if (read) {
                print_values(&rd->ru, printed, nprint, text, text_cap);
            } else {
                for (int k = 0; k < nprint; k++)
                    fputs(k ? "\t-" : "-", stdout);
                putchar('\n');
            }
        } else {
            if (read)
                keep = po_judge(&policy, &rd->ru, &kind);
            if (kind >= nkinds)
                kind = -1;
            printf("%s %s\n", kind >= 0 ? kinds[kind] : "none", keep ? "keep" : "drop");
        }
        if (out_failed())
            break; /* the lines are lost: stop, and say so below */
        int row = kind >= 0 ? kind : nkinds;
        seen[row]++;
        kept[row] += keep;
    }
    int wrc = out_close("judge");
    int rc = 0;
    if (inflate_err.code != TR_E_OK) {
        fprintf(stderr,
                "triage-demo judge: %s: %s (%s) at byte %zu (byte %zu of the message of the "
                "frame at byte %zu)\n",
                gz_encoding_name(enc), tr_error_text(inflate_err.code),
                tr_error_name(inflate_err.code), f.offset + FR_HEADER_LEN + inflate_err.offset,
                inflate_err.offset, f.offset);
        rc = 2;
    } else if (r < 0) {
        src_report(&src, "judge");
        rc = 2;
    }
    if (summary) {
        int w = tl_kind_width(kinds, nkinds, 0);
        fprintf(stderr, "%-*s %10s %10s\n", w, "kind", "seen", "kept");
        for (int k = 0; k <= nkinds; k++)
            fprintf(stderr, "%-*s %10llu %10llu\n", w, k < nkinds ? kinds[k] : "none",
                    (unsigned long long)seen[k], (unsigned long long)kept[k]);
    }
    free(text);
    rd_free(rd);
    po_free(&policy);
    src_close(&src);
    return rc != 0 ? rc : wrc;
}
