/* policy.c: loading compiled rules (rules.h) as a policy. */
#include "policy.h"

bool po_rules(const char *text, size_t n, const char *name, const op_schema *s, po_policy *out,
              char *err, size_t errlen)
{
    out->schema = s;
    out->compiled = NULL;
    out->rules = ru_parse(text, n, name, s, err, errlen);
    return out->rules != NULL;
}

bool po_rules_file(const char *path, const op_schema *s, po_policy *out, char *err,
                   size_t errlen)
{
    out->schema = s;
    out->compiled = NULL;
    out->rules = ru_load(path, s, err, errlen);
    return out->rules != NULL;
}

bool po_where(const char *expr, const char *name, const op_schema *s, po_policy *out, char *err,
              size_t errlen)
{
    out->schema = s;
    out->compiled = NULL;
    out->rules = ru_where(expr, name, s, err, errlen);
    return out->rules != NULL;
}

void po_free(po_policy *p)
{
    ru_free(p->rules);
    p->rules = NULL;
    p->compiled = NULL;
}

bool po_compiled(po_policy *p, const ru_compiled *c)
{
    p->compiled = ru_compiled_fits(c, p->rules) ? c : NULL;
    return p->compiled != NULL;
}
