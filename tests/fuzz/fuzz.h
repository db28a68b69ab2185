/* fuzz.h (tests/fuzz): what the harness files share, for any schema.
 *
 * A harness is an fz_fn: it takes arbitrary bytes, runs the code under test
 * on an exactly sized copy (so the sanitizers see any read past the end)
 * and returns NULL when every property holds, else a static text naming the
 * one that failed. Crashes, leaks and undefined behaviour are the
 * sanitizers' to report. Nothing here is thread-safe.
 *
 * The files, each built once per build:
 *   fuzz.c         the libFuzzer driver: one binary holds every harness of
 *                  its build and runs the one named by the name it runs
 *                  under (bin/fuzz_NAME, a link to it)
 *   fuzz_model.c   model and scan_<optic>: what holds for any schema, read
 *                  through the generated tables; and what this header
 *                  declares (copies, SIMD widths, the model's buffers)
 *   fuzz_wire.c    split, gzip: framing and compression
 *   fuzz_decode.c  decode, validate, json: the decoder and the JSON layer
 *   fuzz_judge.c   policy, differential: what a filter decides
 *   fuzz_rules.c   rules: the rule language, over its own synthetic schema
 *   harness.c      the demo's table of harnesses and the state they share
 *                  (harness.h; tests/unit/test_regression.c replays
 *                  tests/regression/ through that table)
 * A build for a schema the demo cannot run on holds fuzz.c and
 * fuzz_model.c alone.
 */
#ifndef TRIAGE_FUZZ_FUZZ_H
#define TRIAGE_FUZZ_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "arena.h"
#include "optic.h"

typedef const char *(*fz_fn)(const uint8_t *d, size_t n);

typedef struct {
    const char *name;
    fz_fn fn;
} fz_harness;

/* In a harness: on a failed property, why names it and control goes to out
 * (where the harness frees what it holds and returns why). */
#define FZ_CHECK(cond, what)                                                  \
    do {                                                                      \
        if (!(cond)) {                                                        \
            why = (what);                                                     \
            goto out;                                                         \
        }                                                                     \
    } while (0)

/* Prints "fuzz harness: what" and aborts: for the harness's own failures
 * (out of memory), never for a property. */
__attribute__((noreturn)) void fz_die(const char *what);

/* An exactly sized heap copy of [d, d+n) (1 byte when n is 0), so that a
 * read past the end is ASan's. The caller frees it. */
uint8_t *fz_copy(const uint8_t *d, size_t n);

/* n bytes of zeroes for the process's life (never freed), mapped apart
 * from the heap, with an inaccessible page after them: LeakSanitizer scans
 * every heap block for pointers, at exit and after an input that allocated
 * more than it freed, and the harnesses' arenas and buffers (hundreds of
 * MB, which hold no pointer to the heap) were most of each run's start. */
void *fz_region(size_t n);

/* Switches the JSON layer (and the skipper) to SIMD width i of
 * fzm.impls; the harnesses leave the widest (fzm.nimpls - 1) on. */
void fz_use_impl(int i);

#define FZM_ARENA (64u << 20)
#define FZM_ENCODE_CAP (16u << 20)
#define FZM_SCRATCH (64u << 10)

/* The model harnesses' buffers, borrowed by the differential harness. */
typedef struct {
    bool ready;
    uint8_t *dec_mem, *dec2_mem, *scan_mem, *enc, *enc2;
    ar_arena dec, dec2, scan;
    void *v1, *v2;          /* structs of the largest type */
    const char *impls[4];   /* the SIMD widths this CPU has, widest last */
    int nimpls;
    int optic;              /* the optic scan_<optic> reads */
    _Alignas(16) uint8_t scratch[FZM_SCRATCH];
    _Alignas(16) uint8_t scratch2[FZM_SCRATCH]; /* a second record, to compare with the first */
} fzm_state;

extern fzm_state fzm;

/* Sets up the JSON layer, the SIMD widths and the buffers; once is enough. */
void fzm_init(void);

/* Encodes v of type t into buf (FZM_ENCODE_CAP bytes): its length, or
 * (size_t)-1 when it does not fit. */
size_t fzm_encode(int t, const void *v, uint8_t *buf);

/* Whether a scanner's value sv and the getter's gv of optic o agree.
 * canonical: the input is what our encoder writes (raw views are then
 * compared byte for byte when their focus is no declared type). */
bool fzm_agree(const op_optic *o, const op_value *sv, const op_value *gv, bool canonical);

const char *fzm_model(const uint8_t *d, size_t n);
/* scan_<optic>, for the optic fzm.optic. */
const char *fzm_scan(const uint8_t *d, size_t n);
/* Every scan_<optic> on one input: the regression replay, and make test's
 * smoke runs (harness scan_every). */
const char *fzm_scan_every(const uint8_t *d, size_t n);

/* The harness named name, "model", "scan_every" or "scan_<optic>" for a
 * declared optic (that optic is then fzm.optic); NULL when there is none. */
fz_fn fzm_find(const char *name);

/* Writes the names fzm_find knows, each after a space. */
void fzm_list(FILE *f);
/* The same, scan_<optic> alone. */
void fzm_list_scans(FILE *f);

#endif
