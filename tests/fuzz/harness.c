/* harness.c: the demo schema's table of harnesses, and the state they share
 * (harness.h): two decoders' arenas and encoders' buffers, the verifier,
 * the default rules, a reader, and a valid generated message. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rules.h" /* tests/fuzz/rules.h: fzr_rules */

fz_state fz;

void fz_init(void)
{
    if (fz.ready)
        return;
    fzm_init(); /* js_init, sk_init, the SIMD widths */
    fz.nimpls = fzm.nimpls;
    fz.dec_mem = fz_region(FZ_DECODE_ARENA);
    fz.dec2_mem = fz_region(FZ_DECODE_ARENA);
    fz.enc = fz_region(FZ_ENCODE_CAP);
    fz.enc2 = fz_region(FZ_ENCODE_CAP);
    fz.vc = vf_new();
    if (fz.vc == NULL || fz.nimpls == 0)
        fz_die("out of memory");
    ar_init(&fz.dec, fz.dec_mem, FZ_DECODE_ARENA);
    ar_init(&fz.dec2, fz.dec2_mem, FZ_DECODE_ARENA);
    rd_choice none = {0};
    char err[1024];
    if (!rd_policy(&none, &fz.policy, err, sizeof err))
        fz_die(err);
    fz.rd = rd_new();
    if (fz.rd == NULL)
        fz_die("out of memory");
    iss_gen *g = iss_gen_new(2);
    size_t n = 0;
    const uint8_t *f = g != NULL ? iss_gen_frame(g, 1, 0, false, &n) : NULL;
    if (f == NULL || n <= FR_HEADER_LEN || (fz.base = malloc(n)) == NULL)
        fz_die("cannot generate the base message");
    fz.base_n = n - FR_HEADER_LEN;
    memcpy(fz.base, f + FR_HEADER_LEN, fz.base_n);
    iss_gen_free(g);
    fz_use_impl(fz.nimpls - 1);
    fz.ready = true;
}

tr_error fz_decode_into(const uint8_t *p, size_t n, ar_arena *a, tr_Issue *out)
{
    ar_reset(a);
    return tr_decode_Issue(p, n, a, out);
}

const fz_harness fz_harnesses[] = {
    {"split", fz_split},
    {"decode", fz_decode},
    {"validate", fz_validate},
    {"json", fz_json},
    {"policy", fz_policy},
    {"differential", fz_differential},
    {"model", fzm_model},
    {"rules", fzr_rules},
    {"scan_every", fzm_scan_every},
    {"gzip", fz_gzip},
};

const size_t fz_nharnesses = sizeof fz_harnesses / sizeof fz_harnesses[0];

fz_fn fz_find(const char *name)
{
    for (size_t i = 0; i < fz_nharnesses; i++)
        if (strcmp(fz_harnesses[i].name, name) == 0)
            return fz_harnesses[i].fn;
    return fzm_find(name);
}

void fz_list(FILE *f)
{
    for (size_t i = 0; i < fz_nharnesses; i++)
        fprintf(f, " %s", fz_harnesses[i].name);
    fzm_list_scans(f);
}
