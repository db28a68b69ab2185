/* complete.h: completing a literal JSON object from a generated one.
 *
 * Tests spell some values of the demo's schema by hand (a detail of each
 * case). A schema that adds a field to such a record would leave the
 * literal incomplete. cp_complete writes the literal with every member of a
 * generated value of the same type added whose key the tests never spell
 * (`known` holds the keys they do, as "key": in any JSON text), recursively
 * through the members both have, and each element of a list from the
 * generated list's first. Both texts must be valid JSON; keys compare after
 * \u escapes of ASCII. With the demo's schema nothing is added.
 *
 * The helpers below it read valid JSON text without a parser, for tests
 * that take such literals apart. */
#ifndef TRIAGE_TEST_COMPLETE_H
#define TRIAGE_TEST_COMPLETE_H

#include <stdbool.h>
#include <stddef.h>

#include "bytes.h"

/* The literal [lit, lit+ln) completed from tmpl (NUL-terminated) into *out
 * (emptied first); returns how many members it added (0: out holds the
 * literal as it was). */
size_t cp_complete(bb *out, const char *lit, size_t ln, const char *tmpl, const char *known);

/* Past JSON whitespace. */
const char *cp_ws(const char *p, const char *e);

/* One past the JSON value at p (valid JSON). */
const char *cp_value_end(const char *p, const char *e);

/* A key's text (between its quotes) with \u escapes of ASCII and \" \\ \/
 * undone into out (*on bytes); false for any other escape, or no room. */
bool cp_key(const char *k, size_t kn, char *out, size_t cap, size_t *on);

typedef struct {
    const char *k, *v, *vend; /* k: the key's text between its quotes */
    size_t kn;
} cp_member;

/* The members of the object at p (valid JSON), at most max. */
size_t cp_members(const char *p, const char *e, cp_member *m, size_t max);

#endif
