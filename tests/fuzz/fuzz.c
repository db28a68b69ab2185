/* fuzz.c: the libFuzzer driver, built once per harness with
 * -DFZ_NAME="<name>" (the Makefile's fuzz targets); the properties live in
 * harness.h, shared with the regression replay. A failed property prints
 * its name and aborts, which libFuzzer reports as a crash with the input. */
#include "harness.h"

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
