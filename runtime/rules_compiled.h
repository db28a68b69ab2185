/* rules_compiled.h: what the C written by ru_emit_c (rules.h) calls. Its
 * reads are ru_value's (rules.c: read_optic and fill) with the optic, its
 * base and their scanners known when the C is compiled, so they run in line
 * and call the scanners by name; they touch the subject's slots as
 * ru_value does, so the interpreter and the compiled rules share one cache
 * (ru_value after a compiled judge reads nothing again). Not for hand-written
 * code: ru_value is the way to read an optic. */
#ifndef TR_RULES_COMPILED_H
#define TR_RULES_COMPILED_H

#include <string.h>

#include "rules.h"

typedef bool (*ru_scan_fn)(const uint8_t *p, size_t n, op_value *out, void *scratch,
                           ar_arena *a);
typedef bool (*ru_seek_fn)(const uint8_t *p, size_t n, op_value *out);

/* Node `node` of r evaluated by the interpreter (a comparison the C leaves
 * to it). */
bool ru_eval_node(const ru_rules *r, ru_subject *subj, int node);

/* A .field step (r's step number `step`) from record value v, into tmp. */
const op_value *ru_step(const ru_rules *r, int step, const op_value *v, op_value *tmp);

/* ru_enter, in line, for rules that share no walk of the message's root
 * (their plan was empty when their C was written): the subject reads each
 * optic alone. false when ru_judge must judge instead (another schema, a
 * decoded model). */
static inline __attribute__((always_inline)) bool ru_c_enter_alone(const op_schema *schema,
                                                                   ru_subject *subj)
{
    subj->lv = NULL;
    return subj->schema == schema && !subj->model;
}

/* Caches slot sl's outcome, as the interpreter does. */
static inline __attribute__((always_inline)) const op_value *ru_c_done(ru_subject *subj,
                                                                       ru_slot *sl, bool hit)
{
    subj->reads++;
    sl->hit = hit;
    sl->seen = subj->gen;
    return hit ? &sl->val : NULL;
}

/* Scans slot sl's optic over n bytes at p. */
static inline __attribute__((always_inline)) const op_value *
ru_c_scan(ru_subject *subj, ru_slot *sl, ru_scan_fn scan, const uint8_t *p, size_t n)
{
    memset(&sl->val, 0, sizeof sl->val);
    return ru_c_done(subj, sl,
                     scan(p, n, &sl->val, sl->at ? subj->scratch + sl->at - 1 : NULL, subj->arena));
}

/* Optic i read from the walk of the message's root the rules' root optics
 * share (level.h; subj->lv set, subj->lvj[i] >= 0), into its slot; and raw
 * base b sought in it: where it starts, or NULL. */
const op_value *ru_shared_read(ru_subject *subj, int i);
const uint8_t *ru_shared_seek(ru_subject *subj, int b);

/* Optic i (RU_ROOT): its scanner over the whole message, or the shared
 * walk. */
static inline __attribute__((always_inline)) const op_value *ru_c_root(ru_subject *subj, int i,
                                                                       ru_scan_fn scan)
{
    ru_slot *sl = &subj->slot[i];
    if (sl->seen == subj->gen)
        return sl->hit ? &sl->val : NULL;
    if (subj->lv != NULL && subj->lvj[i] >= 0)
        return ru_shared_read(subj, i);
    return ru_c_scan(subj, sl, scan, subj->p, subj->n);
}

/* Optic i (RU_SEEK) through raw base b, sought once a message by seek, then
 * its scanner from where the base starts to the message's end. A base read
 * whole or seeded (a verify level's pass) is ru_value's case. */
static inline __attribute__((always_inline)) const op_value *
ru_c_seek(ru_subject *subj, int i, int b, ru_scan_fn scan, ru_seek_fn seek)
{
    ru_slot *sl = &subj->slot[i];
    uint32_t g = subj->gen;
    if (sl->seen == g)
        return sl->hit ? &sl->val : NULL;
    ru_slot *bs = &subj->slot[b];
    if (bs->seen == g)
        return ru_value(subj, i);
    if (bs->sought != g) {
        op_value v;
        if (subj->lv != NULL && subj->lvj[b] >= 0)
            bs->start = ru_shared_seek(subj, b);
        else
            bs->start = seek(subj->p, subj->n, &v) ? v.bytes.p : NULL;
        bs->sought = g;
        subj->reads++;
    }
    if (bs->start == NULL)
        return ru_c_done(subj, sl, false);
    return ru_c_scan(subj, sl, scan, bs->start, (size_t)(subj->p + subj->n - bs->start));
}

#endif
