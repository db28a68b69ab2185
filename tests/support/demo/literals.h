/* literals.h: for the suites that spell details of the demo's schema by
 * hand (the optics and verify suites). A schema that adds a field to a case
 * of Detail, or to a record under one, would leave such a literal
 * incomplete: each suite completes it (complete.h) from a generated detail
 * of the same case, the template given here. Needs the generated model. */
#ifndef TR_TEST_LITERALS_H
#define TR_TEST_LITERALS_H

/* A generated detail of case k (its JSON text, encoded) without an empty
 * list or map: the first seed that gives one, found once per case and kept
 * for the process. */
const char *lit_template(int k);

#endif
