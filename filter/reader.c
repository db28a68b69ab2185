/* reader.c: rules through the optics reader or the decode reader. */
#include "reader.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpolicy.h"
#include "jsonvalid.h"

/* schema/default.rules, built in (scripts/embed.py), and written as C
 * (triage-rulesc). */
extern const char tr_default_rules[], tr_default_rules_path[];
extern const size_t tr_default_rules_len;
extern const ru_compiled tr_default_compiled;

/* The optics reader's arena: scanners unescape strings into it, so it holds
 * the largest message (untouched pages cost nothing). */
#define RD_SCAN_ARENA (5u << 20)

static const char *const type_names[] = {"optics", "decode", "none"};

bool rd_type_parse(const char *s, rd_type *out)
{
    for (int t = 0; t < 3; t++)
        if (strcmp(s, type_names[t]) == 0) {
            *out = (rd_type)t;
            return true;
        }
    return false;
}

const char *rd_type_name(rd_type t)
{
    return (unsigned)t < 3 ? type_names[t] : "?";
}

static atomic_bool defaults_replaced;

bool rd_defaults_replaced(void) { return atomic_load(&defaults_replaced); }

/* The default rules, built in. They are written for a schema's optics: with
 * a schema they do not fit (the file of another schema, one whose optics
 * were renamed), every message is kept instead (the rule `keep true`) and
 * the program says so on stderr, once, with why they do not fit, so that a
 * new schema builds and runs before its rules are written. */
static bool default_rules(po_policy *out, char *err, size_t errlen)
{
    if (po_rules(tr_default_rules, tr_default_rules_len, tr_default_rules_path, &tr_schema, out,
                 err, errlen))
        return true;
    if (!atomic_exchange(&defaults_replaced, true)) /* said once */
        fprintf(stderr,
                "warning: the default rules do not fit the schema %s: %s\n"
                "warning: every message is kept (keep true) until they do: write rules over "
                "this schema's optics into %s and build again, or give --rules FILE or "
                "--where EXPR\n",
                tr_schema.schema, err, tr_default_rules_path);
    return po_where("true", "the default rules", &tr_schema, out, err, errlen);
}

bool rd_policy(const rd_choice *c, po_policy *out, char *err, size_t errlen)
{
    int given = (c->rules != NULL) + (c->where != NULL) + (c->policy != NULL);
    if (given > 1) {
        tr_say(err, errlen, "give at most one of --rules, --where and --policy");
        return false;
    }
    bool ok;
    if (c->rules != NULL)
        ok = po_rules_file(c->rules, &tr_schema, out, err, errlen);
    else if (c->where != NULL)
        ok = po_where(c->where, "--where", &tr_schema, out, err, errlen);
    else if (c->policy != NULL)
        ok = jp_load(c->policy, &tr_schema, out, err, errlen);
    else
        ok = default_rules(out, err, errlen);
    /* the default rules run as C, given or not (a file of the same text) */
    if (ok && !c->interpret)
        (void)po_compiled(out, &tr_default_compiled);
    return ok;
}

int rd_kinds(const char **names, int max)
{
    int k = tr_schema.kind;
    if (k < 0)
        return 0;
    const op_optic *o = &tr_schema.optics[k];
    int n = o->ncases < max ? o->ncases : max;
    for (int i = 0; i < n; i++)
        names[i] = o->cases[i].p;
    return n;
}

/* The kind's base, when it is a raw optic on one member of the root
 * ("Root.member"): the one-pass checks find that member. */
static int kind_base(void)
{
    int k = tr_schema.kind;
    return k >= 0 ? tr_schema.optics[k].base : -1;
}

rd_reader *rd_new(void)
{
    rd_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->mem = ar_map(RD_SCAN_ARENA);
    r->vc = vf_new();
    if (r->mem == NULL || r->vc == NULL) {
        rd_free(r);
        return NULL;
    }
    ar_init(&r->arena, r->mem, RD_SCAN_ARENA);
    if (!ru_subject_init(&r->ru, &tr_schema, &r->arena)) {
        rd_free(r);
        return NULL;
    }
    int b = kind_base();
    if (b >= 0) {
        const char *path = tr_schema.optics[b].path, *dot = strchr(path, '.');
        if (dot != NULL && strpbrk(dot + 1, ".[") == NULL) {
            r->key = dot + 1;
            r->key_n = strlen(dot + 1);
        }
    }
    return r;
}

void rd_free(rd_reader *r)
{
    if (r == NULL)
        return;
    vf_free(r->vc);
    ar_unmap(r->mem, RD_SCAN_ARENA);
    ar_unmap(r->dec_mem, RD_DECODE_ARENA);
    free(r->root);
    free(r);
}

bool rd_message_check(rd_reader *r, vf_level level, tr_message m)
{
    int b = kind_base();
    op_value v;
    bool hit = false;
    if (level == VF_JSON) {
        /* the check and the search for the base in one pass; when it does
         * not prove the message valid, the reference validator decides (it
         * alone judges a scalar text), and the scanners read as usual */
        jv_find f = {{r->key, r->key_n}, NULL, NULL};
        if (!jv_valid(m.p, m.p + m.n, r->key != NULL ? &f : NULL))
            return vf_check(r->vc, VF_JSON, m).code == TR_E_OK;
        if (r->key == NULL)
            return true;
        /* a null is a miss, as the raw scanners have it (an optional
         * field's null is its absence) */
        hit = f.val != NULL && *f.val != 'n';
        if (hit)
            v.bytes.p = f.val, v.bytes.n = (size_t)(f.end - f.val);
    } else {
        /* the validator hands back the base's bytes as it passes them */
        if (!vf_base(r->vc, m, b, &v, &hit))
            return false;
        if (b < 0)
            return true;
    }
    ru_subject_seed(&r->ru, b, hit, &v);
    return true;
}

bool rd_decoding(rd_reader *r)
{
    if (r->root != NULL)
        return true;
    r->dec_mem = ar_map(RD_DECODE_ARENA);
    r->root = calloc(1, tr_schema.types[tr_schema.root].size);
    if (r->dec_mem == NULL || r->root == NULL) {
        ar_unmap(r->dec_mem, RD_DECODE_ARENA);
        free(r->root);
        r->dec_mem = NULL;
        r->root = NULL;
        return false;
    }
    ar_init(&r->dec, r->dec_mem, RD_DECODE_ARENA);
    return true;
}

bool rd_decode(rd_reader *r, tr_message m)
{
    ar_reset(&r->dec);
    if (tr_schema.types[tr_schema.root].decode(m.p, m.n, &r->dec, r->root).code != TR_E_OK)
        return false;
    ru_subject_model(&r->ru, r->root);
    return true;
}

void rd_decoded(rd_reader *r, const void *root)
{
    ru_subject_model(&r->ru, root);
}
