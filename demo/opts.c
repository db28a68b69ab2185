/* opts.c: option parsing shared by the subcommands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opts.h"

bool opt_u64(const char *opt, const char *val, uint64_t max, uint64_t *out)
{
    char *endp;
    errno = 0;
    if (val[0] < '0' || val[0] > '9') {
        fprintf(stderr, "triage-demo: %s wants a number, got '%s'\n", opt, val);
        return false;
    }
    unsigned long long v = strtoull(val, &endp, 10);
    if (errno != 0 || *endp != '\0' || v > max) {
        fprintf(stderr, "triage-demo: %s wants a number up to %llu, got '%s'\n", opt,
                (unsigned long long)max, val);
        return false;
    }
    *out = v;
    return true;
}

bool opt_match(int argc, char **argv, int *i, const char *opt, const char **val, bool *bad)
{
    const char *a = argv[*i];
    size_t n = strlen(opt);
    if (strncmp(a, opt, n) != 0)
        return false;
    if (a[n] == '=') {
        *val = a + n + 1;
        return true;
    }
    if (a[n] != '\0')
        return false;
    if (*i + 1 >= argc) {
        fprintf(stderr, "triage-demo: %s needs a value\n", opt);
        *bad = true;
        return true;
    }
    *val = argv[++*i];
    return true;
}

bool opt_encoding(const char *cmd, const char *opt, const char *v, gz_encoding *e)
{
    if (gz_encoding_parse(v, strlen(v), e))
        return true;
    fprintf(stderr, "triage-demo %s: %s is identity, gzip or deflate, not '%s'\n", cmd, opt, v);
    return false;
}

bool opt_ratio(const char *cmd, const char *v, double *ratio)
{
    char *e = NULL;
    *ratio = strtod(v, &e);
    if (e != v && *e == '\0' && *ratio >= 0 && *ratio <= 1)
        return true;
    fprintf(stderr, "triage-demo %s: --compress-ratio is a number in [0, 1], not '%s'\n", cmd, v);
    return false;
}

bool opt_verify(const char *cmd, const char *v, vf_level *level)
{
    if (vf_parse_level(v, level))
        return true;
    fprintf(stderr, "triage-demo %s: --verify is off, json or schema, not '%s'\n", cmd, v);
    return false;
}

bool opt_layout(const char *cmd, const char *v, bool *first)
{
    if (strcmp(v, "first") == 0 || strcmp(v, "late") == 0) {
        *first = strcmp(v, "first") == 0;
        return true;
    }
    fprintf(stderr, "triage-demo %s: --layout is late or first, not '%s'\n", cmd, v);
    return false;
}

bool opt_count(const char *cmd, const char *opt, const char *val, uint64_t max, uint64_t *out)
{
    if (!opt_u64(opt, val, max, out))
        return false;
    if (*out > 0)
        return true;
    fprintf(stderr, "triage-demo %s: %s must be at least 1, not '%s'\n", cmd, opt, val);
    return false;
}

bool opt_rules(int argc, char **argv, int *i, rd_choice *c, bool *bad)
{
    static const char *const names[3] = {"--rules", "--where", "--policy"};
    const char **slot[3] = {&c->rules, &c->where, &c->policy};
    for (int k = 0; k < 3; k++) {
        const char *v = NULL;
        if (!opt_match(argc, argv, i, names[k], &v, bad))
            continue;
        if (*slot[k] != NULL && v != NULL) {
            /* one of the three, once: a second would silently replace the first */
            fprintf(stderr, "triage-demo: give at most one of --rules, --where and --policy (%s "
                            "is given twice)\n", names[k]);
            *bad = true;
        }
        *slot[k] = v;
        return true;
    }
    return false;
}
