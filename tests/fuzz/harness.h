/* harness.h (tests/fuzz): the demo schema's harnesses, by name, and the
 * state they share.
 *
 * fz_harnesses lists every harness the demo's fuzz build holds but the
 * scan_<optic> ones (fzm_find's; scan_every stands for them all). The
 * driver (fuzz.c) picks one by name; tests/unit/test_regression.c runs every
 * file under tests/regression/ through each, and borrows fz's decoder,
 * checker and policy. What each checks is said in its file: fuzz_wire.c,
 * fuzz_decode.c, fuzz_judge.c, fuzz_model.c, fuzz_rules.c.
 *
 * fz_init must be called once first (it calls fzm_init); nothing here is
 * thread-safe.
 */
#ifndef TRIAGE_FUZZ_HARNESS_H
#define TRIAGE_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "frames.h"
#include "fuzz.h"
#include "gzip.h"
#include "issues.h"
#include "policy.h"
#include "reader.h"
#include "skip.h"
#include "tr_model.h"
#include "tr_optics.h"
#include "jsonvalid.h"
#include "verify.h"

/* The decoder's arena, as demo/judge.c sizes it (16 x the 4 MiB frame). */
#define FZ_DECODE_ARENA (64u << 20)
/* Room for re-encoding a decoded message (absent lists come back as []). */
#define FZ_ENCODE_CAP (16u << 20)

typedef struct {
    bool ready;
    uint8_t *dec_mem, *dec2_mem, *enc, *enc2;
    ar_arena dec, dec2;
    tr_Issue issue, issue2;
    vf_checker *vc;
    po_policy policy;  /* the demo's default rules */
    rd_reader *rd;
    int nimpls; /* the SIMD widths this CPU has (fzm.nimpls) */
    /* a valid generated message, for wrapping values into */
    uint8_t *base;
    size_t base_n;
} fz_state;

extern fz_state fz;

void fz_init(void);

extern const fz_harness fz_harnesses[];
extern const size_t fz_nharnesses;
#define FZ_NHARNESSES fz_nharnesses

/* The harness named name: fz_harnesses' or fzm_find's; NULL when none. */
fz_fn fz_find(const char *name);
/* Writes every name fz_find knows, each after a space. */
void fz_list(FILE *f);

/* Decodes [p, p+n) into *out, a reset first: the decoder's error. */
tr_error fz_decode_into(const uint8_t *p, size_t n, ar_arena *a, tr_Issue *out);

typedef struct {
    int kind; /* the kind's case, -1 for none */
    bool keep;
} fz_verdict;

/* judge --reader optics --verify level, as the readers do it (rd_message,
 * then the rules through the scanners). */
fz_verdict fz_judge_optics(vf_level level, tr_message m);

/* The harnesses (see their files). */
const char *fz_split(const uint8_t *d, size_t n);
const char *fz_gzip(const uint8_t *d, size_t n);
const char *fz_decode(const uint8_t *d, size_t n);
const char *fz_validate(const uint8_t *d, size_t n);
const char *fz_json(const uint8_t *d, size_t n);
const char *fz_policy(const uint8_t *d, size_t n);
const char *fz_differential(const uint8_t *d, size_t n);

#endif
