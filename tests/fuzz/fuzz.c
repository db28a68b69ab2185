/* fuzz.c: the libFuzzer driver. One binary per build holds every harness
 * of the build; the Makefile links bin/fuzz_NAME to it for each, and the
 * harness run is the one named by the name the binary runs under (argv[0]
 * without its directory and "fuzz_"). libFuzzer's modes that start argv[0]
 * again (-fork, -jobs, -merge) so run the same harness. An unknown name
 * is an error that lists the known ones.
 *
 * With -DFZ_MODEL_ONLY, the build for a schema other than the demo's:
 * model and scan_<optic> alone (fuzz_model.c). A failed property prints
 * the harness's name and the property, and aborts, which libFuzzer reports
 * as a crash with the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FZ_MODEL_ONLY
#include "fuzz.h"
static void (*const setup)(void) = fzm_init;
static fz_fn (*const lookup)(const char *name) = fzm_find;
static void (*const known)(FILE *f) = fzm_list;
#else
#include "harness.h"
static void (*const setup)(void) = fz_init;
static fz_fn (*const lookup)(const char *name) = fz_find;
static void (*const known)(FILE *f) = fz_list;
#endif

#define FZ_PREFIX "fuzz_"

static fz_fn run;
static const char *run_name;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *prog = *argc > 0 && (*argv)[0] != NULL ? (*argv)[0] : "";
    const char *slash = strrchr(prog, '/');
    const char *base = slash != NULL ? slash + 1 : prog;
    if (strncmp(base, FZ_PREFIX, strlen(FZ_PREFIX)) == 0) {
        run_name = base + strlen(FZ_PREFIX);
        run = lookup(run_name);
    }
    if (run == NULL) {
        if (run_name != NULL)
            fprintf(stderr, "%s: no harness is named '%s'; the harnesses are:", prog, run_name);
        else
            fprintf(stderr, "%s: run as " FZ_PREFIX "NAME (a link to this binary), NAME one of:",
                    prog);
        known(stderr);
        fputc('\n', stderr);
        exit(2);
    }
    setup();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    const char *why = run(d, n);
    if (why != NULL) {
        fprintf(stderr, "property failed (%s): %s\n", run_name, why);
        abort();
    }
    return 0;
}
