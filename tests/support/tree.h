/* tree.h: a small JSON tree and re-writer, for tests that take messages
 * apart and write them again another way (the optics suites' variants).
 *
 * The tree is built from trusted text (our encoder's output, or literals in
 * the tests), so the parser checks little. A string keeps its raw bytes
 * (between the quotes, escapes as written); a number or literal keeps its
 * token. The writer re-emits a tree with optional whitespace between every
 * pair of tokens (the four JSON whitespace bytes, chosen at random) and
 * optional \u escapes of characters in keys and in string values (letters,
 * digits, spaces; non-ASCII characters as \uXXXX or a surrogate pair).
 *
 * Everything lives in one bump arena of 64 MiB, kept for the process and
 * reset per message (tj_reset); a full arena fails the test. */
#ifndef TRIAGE_TEST_TREE_H
#define TRIAGE_TEST_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/rng.h"

enum { TJ_OBJ, TJ_ARR, TJ_STR, TJ_RAW };

typedef struct tj tj;
struct tj {
    int t;
    const char *s; /* TJ_STR: raw bytes between the quotes; TJ_RAW: the token */
    size_t n;
    size_t count, cap;
    tj **items;        /* members' values, or elements */
    const char **keys; /* TJ_OBJ: raw bytes of each key, between its quotes */
    size_t *klen;
};

/* ---- the arena */

void tj_reset(void);
void *tj_alloc(size_t n);
char *tj_strndup(const char *s, size_t n);

/* ---- values and containers */

tj *tj_new(int t);
tj *tj_str(const char *raw); /* a string of raw (escapes as written) */
void tj_insert(tj *o, size_t at, const char *kraw, size_t kn, tj *val);
void tj_insert_key(tj *o, size_t at, const char *kraw, tj *val);
void tj_push(tj *a, tj *val);
void tj_remove(tj *o, size_t i);

/* Moves member from to index to (indexes of the result). */
void tj_move(tj *o, size_t from, size_t to);

/* The members of every object in v, at every level, in an order drawn
 * from rng (arrays keep theirs). */
void tj_shuffle(tj *v, rng_state *rng);

/* The first member whose raw key is exactly k, or -1 (also when o is no
 * object); its value, or NULL. */
long tj_find(const tj *o, const char *k);
tj *tj_get(const tj *o, const char *k);

/* ---- reading and writing */

/* Parses text (copied into the arena, so the tree does not point at it). */
tj *tj_parse(const char *text, size_t n);
tj *tj_parse0(const char *text);

/* Writes v as a whole JSON text into [buf, buf+cap); returns its length.
 * seed draws the whitespace (when pretty) and the escapes (esc_keys and
 * esc_vals: the chance per mille to \u-escape each character of a key or a
 * string value). */
size_t tj_write(const tj *v, uint8_t *buf, size_t cap, uint64_t seed, bool pretty, int esc_keys,
                int esc_vals);
size_t tj_write_compact(const tj *v, uint8_t *buf, size_t cap);

#endif
