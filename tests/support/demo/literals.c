/* literals.c: the templates of literals.h, from the generated model. */
#include "literals.h"

#include <stdint.h>
#include <string.h>

#include "support/suite.h"
#include "tr_model.h"

const char *lit_template(int k)
{
    static char *text[TR_DETAIL_COUNT];
    REQUIREF(k >= 0 && k < TR_DETAIL_COUNT, "no case %d", k);
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
        REQUIREF(text[k] != NULL, "no generated detail of case %d", k);
    }
    return text[k];
}
