/* policy.h: what a program judges with, and the kind of each message.
 *
 * A po_policy is compiled rules (rules.h) for a schema's tables (optic.h),
 * from a rules text: in memory, a file, or one expression (the rule `keep
 * EXPR`).
 *
 * Errors go into err as one line naming the file (or what stands for it).
 * Loading allocates the compiled rules, freed by po_free; judging allocates
 * nothing.
 */
#ifndef TR_POLICY_H
#define TR_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "optic.h"
#include "rules.h"

typedef struct {
    ru_rules *rules;
    const op_schema *schema;
    const ru_compiled *compiled; /* the rules as C, when they fit (po_compiled), else NULL */
} po_policy;

/* Rules from text (n bytes); name stands for the file in messages. */
__attribute__((warn_unused_result)) bool po_rules(const char *text, size_t n, const char *name,
                                                  const op_schema *s, po_policy *out, char *err,
                                                  size_t errlen);

/* Rules from a file. */
__attribute__((warn_unused_result)) bool po_rules_file(const char *path, const op_schema *s,
                                                       po_policy *out, char *err, size_t errlen);

/* The one rule `keep EXPR`; name stands for it in messages. */
__attribute__((warn_unused_result)) bool po_where(const char *expr, const char *name,
                                                  const op_schema *s, po_policy *out, char *err,
                                                  size_t errlen);

void po_free(po_policy *p);

/* Judges with c, the same rules written as C (rules.h: ru_emit_c), when c
 * was written from p's rules (ru_compiled_fits): the same verdicts, faster.
 * Returns whether it does. */
bool po_compiled(po_policy *p, const ru_compiled *c);

/* The kind of subj's current message: the case its schema's kind optic reads
 * (op_schema.kind), or -1 when it misses or the schema has none. */
static inline int po_kind(const po_policy *p, ru_subject *subj)
{
    int k = p->schema->kind;
    const op_value *v = k >= 0 ? ru_value_cached(subj, k) : NULL; /* most often read already */
    return v != NULL ? v->e : -1;
}

/* The verdict on subj's current message: true to keep. *kind: po_kind. */
static inline bool po_judge(const po_policy *p, ru_subject *subj, int *kind)
{
    /* the rules first: the kind is then most often read already */
    bool keep = p->compiled != NULL ? p->compiled->judge(p->rules, subj) : ru_judge(p->rules, subj);
    *kind = po_kind(p, subj);
    return keep;
}

#endif
