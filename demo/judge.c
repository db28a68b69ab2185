/* judge.c: `triage-demo judge`: one verdict line per framed message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "inflate.h"
#include "readers.h"
#include "skip.h"
#include "source.h"
#include "tr_model.h"
#include "verify.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: triage-demo judge [--reader optics|decode] [--policy FILE]\n"
            "                         [--verify off|json|schema] [--grpc-encoding identity|gzip]\n"
            "\n"
            "Reads gRPC frames from stdin and writes one line per message, in order:\n"
            "'<kind> <keep|drop>', kind being Bug, Incident, Request or none (no kind\n"
            "could be read, or the reader rejected the message).\n"
            "  --reader optics  read only the detail's few values where they lie (default)\n"
            "  --reader decode  decode the whole Issue, judge the model\n"
            "  --policy FILE    a policy file (JSON; default: MODEL.md's demo policy)\n"
            "  --verify off     optics trust the bytes they do not read (default)\n"
            "  --verify json    optics also require one well-formed JSON text\n"
            "  --verify schema  optics also require what the full decoder accepts, so\n"
            "                   their verdict equals decode's on any input\n"
            "  --summary        print a tally to stderr at the end\n"
            "  --grpc-encoding identity  a compressed frame is a framing error (default)\n"
            "  --grpc-encoding gzip      compressed frames are gzip: inflated, then judged\n"
            "Exit status: 0 when the input ends on a frame boundary; 2 on a framing\n"
            "error or a gzip message that does not inflate (corrupt, CRC, over 4 MiB),\n"
            "after the lines of every whole message before it, or a bad policy; 1\n"
            "when stdout cannot be written (named on stderr).\n");
}

int cmd_judge(int argc, char **argv)
{
    const char *policy_path = NULL, *reader = "optics";
    bool bad = false, summary = false, gzip = false;
    vf_level verify = VF_OFF;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help(stdout);
            return 0;
        } else if (opt_match(argc, argv, &i, "--reader", &v, &bad)) {
            reader = v;
        } else if (opt_match(argc, argv, &i, "--policy", &v, &bad)) {
            policy_path = v;
        } else if (opt_match(argc, argv, &i, "--verify", &v, &bad)) {
            bad = bad || !opt_verify("judge", v, &verify);
        } else if (opt_match(argc, argv, &i, "--grpc-encoding", &v, &bad)) {
            bad = bad || !opt_gzip("judge", "--grpc-encoding", v, &gzip);
        } else if (strcmp(argv[i], "--summary") == 0) {
            summary = true;
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

    char err[512];
    po_schema schema = rd_schema();
    po_policy policy;
    if (policy_path != NULL ? !po_load(policy_path, &schema, &policy, err, sizeof err)
                            : !po_default(&schema, &policy, err, sizeof err)) {
        fprintf(stderr, "triage-demo judge: %s\n", err);
        return 2;
    }

    sk_init();
    src_reader src;
    if (!src_open(&src, STDIN_FILENO, gzip, err, sizeof err)) {
        fprintf(stderr, "triage-demo judge: %s\n", err);
        return 1;
    }
    uint8_t *mem = malloc(RD_DECODE_ARENA);
    vf_checker *vc = vf_new();
    gz_inflater gz = {0};
    if (mem == NULL || vc == NULL || (gzip && !gz_inflater_init(&gz, 0))) {
        free(mem);
        vf_free(vc);
        gz_inflater_destroy(&gz);
        fprintf(stderr, "triage-demo judge: out of memory\n");
        src_close(&src);
        return 1;
    }
    ar_arena arena;
    ar_init(&arena, mem, RD_DECODE_ARENA);
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

    uint64_t seen[TR_DETAIL_COUNT + 1] = {0}, kept[TR_DETAIL_COUNT + 1] = {0};
    tr_Issue issue;
    fr_frame f;
    int r;
    tr_error inflate_err = {0};
    while ((r = src_next(&src, &f)) == 1) {
        /* A compressed message is judged in the inflater's buffer. */
        tr_message msg = f.msg;
        if (f.compressed) {
            inflate_err = gz_inflate(&gz, f.msg, &msg);
            if (inflate_err.code != TR_E_OK)
                break;
        }
        ar_reset(&arena);
        int kind = -1;
        bool keep = false;
        if (optics) {
            tr_view_Detail detail;
            if (vf_detail(vc, verify, msg, &detail)) {
                rd_bytes st;
                po_reader rd = rd_optics(&st, detail);
                keep = po_judge(&policy, &rd, &kind);
            }
        } else {
            tr_error e = tr_decode_Issue(msg.p, msg.n, &arena, &issue);
            if (e.code == TR_E_OK) {
                po_reader rd = rd_model(&issue.detail);
                keep = po_judge(&policy, &rd, &kind);
            }
        }
        const char *name = kind >= 0 ? tr_Detail_names[kind].p : "none";
        printf("%s %s\n", name, keep ? "keep" : "drop");
        if (out_failed())
            break; /* the verdicts are lost: stop, and say so below */
        int row = kind >= 0 ? kind : TR_DETAIL_COUNT;
        seen[row]++;
        kept[row] += keep;
    }
    int wrc = out_close("judge");
    int rc = 0;
    if (inflate_err.code != TR_E_OK) {
        fprintf(stderr, "triage-demo judge: %s (%s) at byte %zu, in the message at byte %zu\n",
                tr_error_text(inflate_err.code), tr_error_name(inflate_err.code),
                f.offset + FR_HEADER_LEN + inflate_err.offset, f.offset);
        rc = 2;
    } else if (r < 0) {
        src_report(&src, "judge");
        rc = 2;
    }
    if (summary) {
        fprintf(stderr, "%-10s %10s %10s\n", "kind", "seen", "kept");
        for (int k = 0; k <= TR_DETAIL_COUNT; k++)
            fprintf(stderr, "%-10s %10llu %10llu\n", k < TR_DETAIL_COUNT ? tr_Detail_names[k].p : "none",
                    (unsigned long long)seen[k], (unsigned long long)kept[k]);
    }
    free(mem);
    vf_free(vc);
    gz_inflater_destroy(&gz);
    src_close(&src);
    return rc != 0 ? rc : wrc;
}
