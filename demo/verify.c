/* verify.c: the verify levels. */
#include "verify.h"

#include <stdlib.h>
#include <string.h>

#include "valid.h"

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
    v->mem = malloc(VF_ARENA);
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
    free(v->mem);
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
        return tr_validate_Issue(m.p, m.n, &v->arena);
    default:
        return c.err;
    }
}

bool vf_detail(vf_checker *v, vf_level level, tr_message m, tr_view_Detail *out)
{
    switch (level) {
    case VF_JSON: {
        /* the check and the scan in one pass; when it does not prove the
         * message valid, the reference validator decides (it alone judges
         * a scalar text), then the scanner reads */
        jv_find f = {{"detail", 6}, NULL, NULL};
        if (!jv_valid(m.p, m.p + m.n, &f))
            return vf_check(v, VF_JSON, m).code == TR_E_OK && tr_scan_detail(m, out);
        out->p = f.val;
        out->n = f.val != NULL ? (size_t)(f.end - f.val) : 0;
        return f.val != NULL;
    }
    case VF_SCHEMA: {
        /* the validator hands back the detail's bytes: no walk of its own */
        tr_Issue_views views;
        ar_reset(&v->arena);
        if (tr_validate_Issue_views(m.p, m.n, &v->arena, &views).code != TR_E_OK || !views.has_detail)
            return false;
        *out = views.detail;
        return true;
    }
    default:
        return tr_scan_detail(m, out);
    }
}
