/* policy.h: what a command judges with, and the kind of each message.
 *
 * A po_policy is compiled rules (rules.h) for a schema's tables (optic.h).
 * They come from a rules text (a file, a --where expression, or the default
 * rules a program carries) or from a policy file in the older JSON form:
 *   {"urgent":["Sev1","Sev2"],"tiers":["Critical"],"modules":["Payments"],
 *    "plans":["Business","Enterprise"],"minVotes":130}
 * which means the rules
 *   keep kind == Incident && severity in [URGENT] && tier in [TIERS]
 *   keep kind == Bug && module in [MODULES]
 *   keep kind == Request && plan in [PLANS] && votes.count >= MINVOTES
 * (a key left out keeps the value above). The JSON form reads the optics
 * severity, tier, module, plan, votes and kind, so it serves a schema that
 * declares them; keys and names compare unescaped; unknown keys, names that
 * are not cases (listing the cases), wrong types, repeated keys and a
 * negative minVotes are errors naming the file, line and column.
 *
 * Errors go into err as one line naming the file (or --where). Loading
 * allocates the compiled rules, freed by po_free; judging allocates nothing.
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
} po_policy;

/* Rules from text (n bytes); name stands for the file in messages. */
__attribute__((warn_unused_result)) bool po_rules(const char *text, size_t n, const char *name,
                                                  const op_schema *s, po_policy *out, char *err,
                                                  size_t errlen);

/* Rules from a file. */
__attribute__((warn_unused_result)) bool po_rules_file(const char *path, const op_schema *s,
                                                       po_policy *out, char *err, size_t errlen);

/* The one rule `keep EXPR`. */
__attribute__((warn_unused_result)) bool po_where(const char *expr, const op_schema *s,
                                                  po_policy *out, char *err, size_t errlen);

/* A JSON policy file, as the rules it means. */
__attribute__((warn_unused_result)) bool po_load(const char *path, const op_schema *s,
                                                 po_policy *out, char *err, size_t errlen);

/* The same from text in memory; name is used in messages. */
__attribute__((warn_unused_result)) bool po_parse(const char *text, size_t n, const char *name,
                                                  const op_schema *s, po_policy *out, char *err,
                                                  size_t errlen);

void po_free(po_policy *p);

/* The kind of subj's current message: the case its schema's kind optic reads
 * (op_schema.kind), or -1 when it misses or the schema has none. */
static inline int po_kind(const po_policy *p, ru_subject *subj)
{
    op_value v;
    int k = p->schema->kind;
    return k >= 0 && ru_read(subj, k, &v) ? v.e : -1;
}

/* The verdict on subj's current message: true to keep. *kind: po_kind. */
static inline bool po_judge(const po_policy *p, ru_subject *subj, int *kind)
{
    *kind = po_kind(p, subj);
    return ru_judge(p->rules, subj);
}

#endif
