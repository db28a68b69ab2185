/* verify.c: the verify levels. */
#include "verify.h"

#include <stdlib.h>
#include <string.h>

#include "jsonvalid.h"

/* Scratch for escaped keys and map keys: at most the message's size in
 * keys (16 bytes a view, a key at least 3 bytes on the wire), under 4 x the
 * 4 MiB frame limit. */
#define VF_ARENA (24u << 20)

struct vf_checker {
    ar_arena arena;
    uint8_t *mem;
};

bool vf_parse_level(const char *s, vf_level *out)
{
    static const char *const names[] = {"off", "json", "schema"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (vf_level)i;
            return true;
        }
    return false;
}

const char *vf_level_name(vf_level l)
{
    return l == VF_JSON ? "json" : l == VF_SCHEMA ? "schema" : "off";
}

vf_checker *vf_new(void)
{
    vf_checker *v = calloc(1, sizeof *v);
    if (v == NULL)
        return NULL;
    v->mem = ar_map(VF_ARENA);
    if (v->mem == NULL) {
        free(v);
        return NULL;
    }
    ar_init(&v->arena, v->mem, VF_ARENA);
    return v;
}

void vf_free(vf_checker *v)
{
    if (v == NULL)
        return;
    ar_unmap(v->mem, VF_ARENA);
    free(v);
}

tr_error vf_check(vf_checker *v, vf_level level, tr_message m)
{
    js_ctx c;
    js_ctx_init(&c, m.p, NULL);
    switch (level) {
    case VF_JSON:
        js_validate(&c, m.p, m.p + m.n);
        return c.err;
    case VF_SCHEMA:
        ar_reset(&v->arena);
        return tr_schema.validate(m.p, m.n, &v->arena);
    default:
        return c.err;
    }
}

bool vf_base(vf_checker *v, tr_message m, int optic, op_value *view, bool *hit)
{
    /* validate_views sets only the entries of raw optics on root members */
    op_value views[RU_MAX_OPTICS];
    bool has[RU_MAX_OPTICS];
    bool want = optic >= 0 && optic < tr_schema.noptics && optic < RU_MAX_OPTICS;
    if (want)
        has[optic] = false;
    ar_reset(&v->arena);
    *hit = false;
    if (tr_schema.validate_views(m.p, m.n, &v->arena, views, has).code != TR_E_OK)
        return false;
    if (want && has[optic]) {
        *hit = true;
        *view = views[optic];
    }
    return true;
}
