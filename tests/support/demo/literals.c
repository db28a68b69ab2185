/* literals.c: the templates of literals.h, from the generated model. */
#include "literals.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "support/complete.h"
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

bool lit_complete_detail(bb *out, const char *d, size_t n, const char *known)
{
    js_ctx c;
    js_ctx_init(&c, (const uint8_t *)d, NULL);
    const uint8_t *e = js_validate(&c, (const uint8_t *)d, (const uint8_t *)d + n);
    const char *o = cp_ws(d, d + n);
    if (e != (const uint8_t *)d + n || o == d + n || *o != '{')
        return false;
    cp_member m[64];
    size_t k = cp_members(o, d + n, m, 64);
    for (size_t i = 0; i < k; i++) {
        char key[16], name[128];
        size_t kn, nn;
        if (!cp_key(m[i].k, m[i].kn, key, sizeof key, &kn) || kn != 4 || memcmp(key, "type", 4) != 0 ||
            *m[i].v != '"')
            continue;
        if (!cp_key(m[i].v + 1, (size_t)(m[i].vend - m[i].v - 2), name, sizeof name, &nn))
            return false;
        int kind = tr_Detail_from(name, nn);
        if (kind < 0)
            return false;
        cp_complete(out, d, n, lit_template(kind), known);
        return true;
    }
    return false;
}

void lit_complete_member(bb *out, int k, const char *key, const char *value, const char *known)
{
    const char *t = lit_template(k), *te = t + strlen(t);
    cp_member m[64];
    size_t nm = cp_members(t, te, m, 64);
    for (size_t i = 0; i < nm; i++) {
        char name[128];
        size_t nn;
        if (!cp_key(m[i].k, m[i].kn, name, sizeof name, &nn) || nn != strlen(key) || memcmp(name, key, nn) != 0)
            continue;
        bb tmpl = {0};
        bb_put(&tmpl, m[i].v, (size_t)(m[i].vend - m[i].v));
        cp_complete(out, value, strlen(value), (const char *)tmpl.p, known);
        free(tmpl.p);
        return;
    }
    out->n = 0;
    bb_put(out, value, strlen(value));
}
