/* conformance.c: reading JSONTestSuite's files (conformance.h). */
#include "conformance.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "suite.h"

int cf_each(void (*fn)(const char *name, const uint8_t *p, size_t n, void *ctx), void *ctx, bool note)
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
    uint8_t *buf = malloc(CF_MAX);
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
        size_t n = fread(buf, 1, CF_MAX, f);
        REQUIREF(feof(f), "%s is larger than %u bytes", path, CF_MAX);
        fclose(f);
        fn(name, buf, n, ctx);
        seen++;
    }
    closedir(d);
    free(buf);
    return seen;
}
