/* cmd.h: the subcommands of triage-demo and the option parsing they share. */
#ifndef TR_CMD_H
#define TR_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include "reader.h"
#include "verify.h"

int cmd_gen(int argc, char **argv);
int cmd_judge(int argc, char **argv);
int cmd_upstream(int argc, char **argv);
int cmd_filter(int argc, char **argv);
int cmd_downstream(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_proxy(int argc, char **argv);

/* Parses an unsigned decimal option value; prints an error naming the
 * option and returns false when it is not one or is above max. */
bool opt_u64(const char *opt, const char *val, uint64_t max, uint64_t *out);

/* true when argv[*i] is opt; then *val is its value (the next argument, or
 * the part after '=' in --opt=value). Reports a missing value. */
bool opt_match(int argc, char **argv, int *i, const char *opt, const char **val, bool *bad);

/* Option values the commands share; each prints "triage-demo CMD: ..." and
 * returns false when v is not one of its forms. */
bool opt_gzip(const char *cmd, const char *opt, const char *v, bool *gzip); /* identity|gzip */
bool opt_ratio(const char *cmd, const char *v, double *ratio);              /* [0, 1] */
bool opt_verify(const char *cmd, const char *v, vf_level *level);           /* off|json|schema */
bool opt_layout(const char *cmd, const char *v, bool *first);               /* late|first */

/* --rules FILE, --where EXPR, --policy FILE (each commands that judges
 * takes them): true when argv[*i] is one of them, recorded in c. */
bool opt_rules(int argc, char **argv, int *i, rd_choice *c, bool *bad);

/* The help text of the three, for the commands' --help. */
#define OPT_RULES_HELP                                                                   \
    "  --rules FILE     keep/drop rules over the schema's optics (default: the rules\n"  \
    "                   of schema/default.rules, built in; see docs/rules.md)\n"        \
    "  --where EXPR     the one rule 'keep EXPR'\n"                                      \
    "  --policy FILE    a policy file in the older JSON form (the rules it means)\n"

/* Parses a count that must be at least 1 (opt_u64, then 0 is an error
 * naming the option). */
bool opt_count(const char *cmd, const char *opt, const char *val, uint64_t max, uint64_t *out);

/* Results on stdout are never lost silently (issue 16). out_failed: true
 * once a write to stdout has failed (ferror), remembering the first
 * failure's errno; call it right after writing, so that errno is the
 * write's. out_close: flushes and closes stdout; 0, or 1 after printing
 * "triage-demo CMD: cannot write stdout: REASON" on stderr when any write
 * to it failed. Every command that writes results ends with it. */
bool out_failed(void);
bool out_flush_failed(void); /* fflush(stdout), then out_failed */
int out_close(const char *cmd);

#endif
