/* check_util.h: what the Check suites share.
 *
 * REQUIRE and REQUIREF call into Check only on failure: ck_assert_* records
 * every passing assertion with a write to the parent process, which would
 * dominate the run time of the suites' hot loops. */
#ifndef TR_CHECK_UTIL_H
#define TR_CHECK_UTIL_H

#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(c)                                                            \
    do {                                                                      \
        if (!(c))                                                             \
            ck_abort_msg("%s:%d: failed: %s", __FILE__, __LINE__, #c);        \
    } while (0)

#define REQUIREF(c, ...)                                                      \
    do {                                                                      \
        if (!(c))                                                             \
            ck_abort_msg(__VA_ARGS__);                                        \
    } while (0)

/* JSONTestSuite's parsing files, third-party data read where it lies (never
 * copied into the project): the folder TR_CONFORMANCE names, else
 * ../shared/conformance/JSONTestSuite/test_parsing. Calls fn with the name
 * and bytes of each file named y_*, n_* or i_* (at most 1 MiB each) and
 * returns how many; -1 when the folder is absent, after a note on stderr
 * when `note` (the caller skips those cases). */
#define CU_CONFORMANCE_MAX (1u << 20)

__attribute__((unused)) static int cu_conformance(void (*fn)(const char *name, const uint8_t *p, size_t n, void *ctx),
                                                  void *ctx, int note)
{
    const char *dir = getenv("TR_CONFORMANCE");
    if (dir == NULL)
        dir = "../shared/conformance/JSONTestSuite/test_parsing";
    DIR *d = opendir(dir);
    if (d == NULL) {
        if (note)
            fprintf(stderr, "note: %s not found, JSONTestSuite cases skipped\n", dir);
        return -1;
    }
    uint8_t *buf = malloc(CU_CONFORMANCE_MAX);
    REQUIRE(buf != NULL);
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if ((name[0] != 'y' && name[0] != 'n' && name[0] != 'i') || name[1] != '_')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "rb");
        REQUIREF(f != NULL, "cannot open %s", path);
        size_t n = fread(buf, 1, CU_CONFORMANCE_MAX, f);
        REQUIREF(feof(f), "%s is larger than %u bytes", path, CU_CONFORMANCE_MAX);
        fclose(f);
        fn(name, buf, n, ctx);
        seen++;
    }
    closedir(d);
    free(buf);
    return seen;
}

#endif
