/* jsonpolicy.h: a policy file in the older JSON form, as the rules it means.
 *
 *   {"urgent":["Sev1","Sev2"],"tiers":["Critical"],"modules":["Payments"],
 *    "plans":["Business","Enterprise"],"minVotes":130}
 *
 * means the rules
 *
 *   keep kind == Incident && severity in [URGENT] && tier in [TIERS]
 *   keep kind == Bug && module in [MODULES]
 *   keep kind == Request && plan in [PLANS] && votes.count >= MINVOTES
 *
 * (a key left out keeps the value above: the demo's policy). The JSON form
 * reads the optics severity, tier, module, plan, votes and kind, so it
 * serves a schema that declares them (the demo's); keys and names compare
 * unescaped; unknown keys, names that are not cases (listing the cases),
 * wrong types, repeated keys and a negative minVotes are errors naming the
 * file, line and column, in err as one line. The rules are compiled as
 * po_rules compiles them (policy.h), freed by po_free.
 */
#ifndef TRIAGE_JSONPOLICY_H
#define TRIAGE_JSONPOLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

/* A JSON policy file, as the rules it means. */
__attribute__((warn_unused_result)) bool jp_load(const char *path, const op_schema *s,
                                                 po_policy *out, char *err, size_t errlen);

/* The same from text in memory; name is used in messages. */
__attribute__((warn_unused_result)) bool jp_parse(const char *text, size_t n, const char *name,
                                                  const op_schema *s, po_policy *out, char *err,
                                                  size_t errlen);

#endif
