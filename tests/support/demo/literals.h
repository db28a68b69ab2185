/* literals.h: for the suites that spell details of the demo's schema by
 * hand (the optics and verify suites). A schema that adds a field to a case
 * of Detail, or to a record under one, would leave such a literal
 * incomplete: it is completed (complete.h) from a generated detail of the
 * same case, the template given here. With the demo's schema nothing is
 * added, byte for byte. Needs the generated model. */
#ifndef TRIAGE_TEST_LITERALS_H
#define TRIAGE_TEST_LITERALS_H

#include <stdbool.h>
#include <stddef.h>

#include "support/bytes.h"

/* A generated detail of case k (its JSON text, encoded) without an empty
 * list or map: the first seed that gives one, found once per case and kept
 * for the process. */
const char *lit_template(int k);

/* The detail text [d, d+n) completed into *out (emptied first): when it is
 * valid JSON, an object whose tag ("type", escapes of ASCII undone) names a
 * case, every member of that case's template whose key `known` does not
 * spell (as "key": in any JSON text: the suite's literals) is added,
 * recursively through the members both have. Returns whether out holds
 * the detail; false: d is no such object, use it as it is. */
bool lit_complete_detail(bb *out, const char *d, size_t n, const char *known);

/* The value text of member key of a detail of case k, completed the same
 * way from the template's member key into *out (emptied first); as it is
 * when the template has no such member. */
void lit_complete_member(bb *out, int k, const char *key, const char *value, const char *known);

#endif
