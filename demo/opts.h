/* opts.h: the option parsing the subcommands share. */
#ifndef TRIAGE_OPTS_H
#define TRIAGE_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "gzip.h"
#include "reader.h"
#include "verify.h"

/* Parses an unsigned decimal option value; prints an error naming the
 * option and returns false when it is not one or is above max. */
bool opt_u64(const char *opt, const char *val, uint64_t max, uint64_t *out);

/* true when argv[*i] is opt; then *val is its value (the next argument, or
 * the part after '=' in --opt=value). Reports a missing value. */
bool opt_match(int argc, char **argv, int *i, const char *opt, const char **val, bool *bad);

/* Option values the commands share; each prints "triage-demo CMD: ..." and
 * returns false when v is not one of its forms. */
bool opt_encoding(const char *cmd, const char *opt, const char *v,
                  gz_encoding *e);                                 /* identity|gzip|deflate */
bool opt_ratio(const char *cmd, const char *v, double *ratio);    /* [0, 1] */
bool opt_verify(const char *cmd, const char *v, vf_level *level); /* off|json|schema */
bool opt_layout(const char *cmd, const char *v, bool *first);     /* late|first */

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

#endif
