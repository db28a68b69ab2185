/* literals.h: for the suites that spell details of the demo's schema by hand
 * (test_optics.c, test_verify.c). A schema that adds a field to a case of
 * Detail, or to a record under one, would leave such a literal incomplete:
 * each suite completes it from a generated detail of the same case, the
 * template given here.
 *
 * Header only (static functions), calling Check only on failure. Needs the
 * generated model (tr_model.h). */
#ifndef TR_LITERALS_H
#define TR_LITERALS_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "tr_model.h"

/* A generated detail of case k (its JSON text, encoded) without an empty
 * list or map: the first seed that gives one, found once per case. */
__attribute__((unused)) static const char *lit_template(int k)
{
    static char *text[TR_DETAIL_COUNT];
    if (text[k] == NULL) {
        static uint8_t mem[1 << 20], out[1 << 16];
        for (uint64_t seed = 1; seed < 100000 && text[k] == NULL; seed++) {
            rg_rng rg;
            rg_seed(&rg, seed, 7);
            ar_arena a;
            ar_init(&a, mem, sizeof mem);
            tr_Detail d;
            tr_random_Detail(&rg, &a, 2, &d);
            if ((int)d.kind != k)
                continue;
            uint8_t *w = tr_encode_Detail(out, out + sizeof out, &d);
            if (w == NULL || memmem(out, (size_t)(w - out), "[]", 2) != NULL ||
                memmem(out, (size_t)(w - out), "{}", 2) != NULL)
                continue;
            text[k] = strndup((const char *)out, (size_t)(w - out));
        }
        if (text[k] == NULL)
            ck_abort_msg("no generated detail of case %d", k);
    }
    return text[k];
}

#endif
