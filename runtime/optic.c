/* optic.c: reading a schema's optics from whole messages, through the
 * tables the generator fills (optic.h). */
#include "optic.h"

#include <stdio.h>
#include <string.h>

bool op_from_message(const op_schema *s, int i)
{
    const op_optic *o = &s->optics[i];
    return o->source_is_root || o->base >= 0;
}

bool op_scan_message(const op_schema *s, int i, const uint8_t *p, size_t n, op_value *out,
                     void *scratch, ar_arena *a)
{
    const op_optic *o = &s->optics[i];
    if (o->source_is_root)
        return o->scan(p, n, out, scratch, a);
    if (o->base < 0)
        return false;
    /* the base sought: the optic reads into it from its start */
    const op_optic *b = &s->optics[o->base];
    op_value v;
    if (!(b->seek != NULL ? b->seek(p, n, &v) : b->scan(p, n, &v, NULL, a)))
        return false;
    return o->scan(v.bytes.p, v.bytes.n, out, scratch, a);
}

bool op_get_message(const op_schema *s, int i, const void *root, op_value *out)
{
    const op_optic *o = &s->optics[i];
    if (o->source_is_root)
        return o->get(root, out);
    if (o->base < 0)
        return false;
    op_value v;
    if (!s->optics[o->base].get(root, &v))
        return false;
    return o->get(v.ptr, out);
}

int op_find(const op_schema *s, const char *name, size_t n)
{
    for (int i = 0; i < s->noptics; i++)
        if (strlen(s->optics[i].name) == n && memcmp(s->optics[i].name, name, n) == 0)
            return i;
    return -1;
}

int op_find_type(const op_schema *s, const char *name)
{
    for (int i = 0; i < s->ntypes; i++)
        if (strcmp(s->types[i].name, name) == 0)
            return i;
    return -1;
}

int op_case(const js_str *cases, int ncases, const char *s, size_t n)
{
    for (int c = 0; c < ncases; c++)
        if (cases[c].n == n && memcmp(cases[c].p, s, n) == 0)
            return c;
    return -1;
}

void op_case_list(const js_str *cases, int ncases, char *buf, size_t cap)
{
    size_t at = 0;
    if (cap == 0)
        return;
    buf[0] = '\0';
    for (int c = 0; c < ncases; c++) {
        size_t need = (at ? 2 : 0) + cases[c].n;
        if (at + need + 4 >= cap) {
            snprintf(buf + at, cap - at, "%s...", at ? ", " : "");
            return;
        }
        at += (size_t)snprintf(buf + at, cap - at, "%s%.*s", at ? ", " : "", (int)cases[c].n,
                               cases[c].p);
    }
}
