/* opts.c: option parsing shared by the subcommands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

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
