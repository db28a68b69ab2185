/* rulesc.c: triage-rulesc, the build's rules compiler: loads a rules file
 * against the schema this build generated (tr_schema) and writes it as C
 * (rules.h: ru_emit_c) defining `const ru_compiled NAME`.
 *
 *   triage-rulesc RULES NAME OUT.c
 *
 * Rules that do not load against the schema (the demo's default rules in
 * a build for another schema) are not an error here: the file then defines
 * NAME empty, which fits no rules, the message goes to stderr as a warning,
 * and the program that needs them reports it when it loads them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rules.h"
#include "tr_optics.h"
#include "version.h"

static const char usage[] =
    "usage: triage-rulesc RULES NAME OUT.c\n"
    "\n"
    "Writes the rules file RULES, loaded against the schema this program was built\n"
    "for, as C defining `const ru_compiled NAME` (rules.h) into OUT.c. A program\n"
    "linked with it judges rules loaded from the same text through it\n"
    "(po_compiled, or NAME.judge), with the verdicts of the interpreter.\n"
    "  --version  print the version and exit\n";

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("triage-rulesc %s\n", TR_VERSION);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc != 4) {
        fputs(usage, stderr);
        return 2;
    }
    char err[512];
    ru_rules *r = ru_load(argv[1], &tr_schema, err, sizeof err);
    FILE *f = fopen(argv[3], "w");
    if (f == NULL) {
        fprintf(stderr, "triage-rulesc: cannot write %s: %s\n", argv[3], strerror(errno));
        ru_free(r);
        return 1;
    }
    bool ok;
    if (r == NULL) {
        fprintf(stderr, "triage-rulesc: warning: %s (not compiled)\n", err);
        ok = fprintf(f,
                     "/* %s.c: the rules of %s do not load against this schema, so none are\n"
                     " * compiled (triage-rulesc). */\n#include \"rules.h\"\n\n"
                     "const ru_compiled %s = {0};\n",
                     argv[2], argv[1], argv[2]) > 0 &&
             fflush(f) == 0;
    } else {
        ok = ru_emit_c(r, argv[2], argv[1], f);
    }
    ru_free(r);
    if (fclose(f) != 0 || !ok) {
        fprintf(stderr, "triage-rulesc: cannot write %s\n", argv[3]);
        return 1;
    }
    return 0;
}
