/* fuzz.c: the libFuzzer driver, built once per harness with
 * -DFZ_NAME="<name>" (the Makefile's fuzz targets); the properties live in
 * harness.h, shared with the regression replay, and in model.h (those that
 * hold for any schema). With -DFZ_MODEL_ONLY, only model.h's: the build for
 * a schema other than the demo's. A failed property prints its name and
 * aborts, which libFuzzer reports as a crash with the input. */
#ifdef FZ_MODEL_ONLY
#include "model.h"
typedef fzm_fn fz_fn;
#define fz_init fzm_init
#define fz_find fzm_find
#define fz_die fzm_die
#else
#include "harness.h"
#endif

#ifndef FZ_NAME
#error "build with -DFZ_NAME=\"<harness>\""
#endif

static fz_fn run;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    run = fz_find(FZ_NAME);
    if (run == NULL)
        fz_die("no harness named " FZ_NAME " in tests/fuzz/harness.h");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    const char *why = run(d, n);
    if (why != NULL) {
        fprintf(stderr, "property failed (%s): %s\n", FZ_NAME, why);
        abort();
    }
    return 0;
}
