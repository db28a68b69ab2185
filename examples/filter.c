/* filter.c: a program of one's own over the installed library (docs/library.md).
 *
 * Reads a stream of gRPC frames from stdin (what `triage-demo gen` writes),
 * judges each message with keep/drop rules over the schema's optics, and
 * prints "<kind> <keep|drop>" per message, as `triage-demo judge` does. The
 * rules read the optics they need through the schema's tables (tr_schema,
 * generated in tr_optics.h), each with its generated scanner; the kind is the
 * case the schema's kind optic reads (its union's tag), read the same way.
 * Nothing here names the schema's types: it builds for any schema. Nothing is
 * decoded and nothing is allocated per message.
 *
 *   cc filter.c $(pkg-config --cflags --libs triage) -o filter
 *   triage-demo gen --count 10 | ./filter my.rules
 */
#include <stdio.h>
#include <stdlib.h>

#include <frames.h>
#include <policy.h>
#include <tr_optics.h>

/* The whole of f in one malloc'd buffer, its length in *n; NULL when out of memory. */
static uint8_t *read_all(FILE *f, size_t *n)
{
    size_t cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    *n = 0;
    while (buf != NULL) {
        *n += fread(buf + *n, 1, cap - *n, f);
        if (*n < cap)
            return buf;
        uint8_t *more = realloc(buf, cap *= 2);
        if (more == NULL)
            free(buf);
        buf = more;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: filter RULES < FRAMES\n");
        return 2;
    }
    char err[512];
    po_policy policy;
    if (!po_rules_file(argv[1], &tr_schema, &policy, err, sizeof err)) {
        fprintf(stderr, "filter: %s\n", err);
        return 2;
    }

    /* The message being judged, with the optics read from it so far. Its
     * arena takes the strings scanners unescape: as large as a message can be. */
    static ru_subject subj; /* about 20 KiB: not on the stack */
    ar_arena arena;
    void *mem = malloc(FR_DEFAULT_MAX_LEN);
    size_t n;
    uint8_t *buf = read_all(stdin, &n);
    if (mem == NULL || buf == NULL) {
        fprintf(stderr, "filter: out of memory\n");
        return 1;
    }
    ar_init(&arena, mem, FR_DEFAULT_MAX_LEN);
    if (!ru_subject_init(&subj, &tr_schema, &arena))
        return 1;

    /* The case names of the schema's kind optic: its first optic on a union's
     * tag that a message can be read through (none: every kind is "none"). */
    const js_str *kinds = tr_schema.kind >= 0 ? tr_schema.optics[tr_schema.kind].cases : NULL;

    fr_splitter s;
    fr_frame f;
    size_t off = 0;
    fr_init(&s);
    while (fr_next(&s, buf + off, buf + n, off, &f) == FR_FRAME) {
        /* The rules, reading the optics they need from the message's bytes,
         * then its kind (most often read by the rules already). */
        ru_subject_bytes(&subj, f.msg.p, f.msg.n);
        int kind;
        bool keep = po_judge(&policy, &subj, &kind);
        printf("%s %s\n", kind >= 0 ? kinds[kind].p : "none", keep ? "keep" : "drop");
        off += fr_frame_size(&f);
    }
    if (fr_finish(&s, buf + off, buf + n, off) != TR_E_OK) {
        fprintf(stderr, "filter: %s at byte %zu\n", tr_error_text(s.err.code), s.err.offset);
        return 2;
    }
    po_free(&policy);
    free(buf);
    free(mem);
    return fflush(stdout) == 0 ? 0 : 1;
}
