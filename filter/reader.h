/* reader.h: judging messages with rules (policy.h): a reader is the way a
 * message is read to be judged (`--reader optics|decode|none`).
 *
 * The optics reader judges a message's bytes: the rules read the optics
 * they need through the scanners (ru_subject_bytes, rules.h), after the
 * verify level's check; at json and schema that check's one pass hands over the
 * bytes of the kind's base (the detail, in the demo's schema), so no scanner
 * walks to it again. The decode reader judges a decoded root through the
 * model getters. Both read the schema only through its tables (tr_schema).
 * None judges nothing: every message is kept.
 *
 * An rd_reader owns its memory (the rules' subject and an arena for escaped
 * strings, allocated once); nothing is allocated per message. */
#ifndef TRIAGE_READER_H
#define TRIAGE_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "rules.h"
#include "tr_optics.h"
#include "verify.h"
#include "view.h"

/* The arena a full decode of one message needs at most: lists of small
 * values become arrays of 8- or 16-byte items (a 4 MiB message of empty
 * strings needs about 22 MiB, test_verify_limits shows), so 16 x the 4 MiB frame
 * limit; pages never touched cost nothing. */
#define RD_DECODE_ARENA (64u << 20)

typedef enum { RD_OPTICS, RD_DECODE, RD_NONE } rd_type;

/* "optics", "decode", "none" */
bool rd_type_parse(const char *s, rd_type *out);
const char *rd_type_name(rd_type t);

/* What a command judges with: at most one of the three (NULL: not given);
 * none means the default rules the program carries (schema/default.rules,
 * built in). */
typedef struct {
    const char *rules;  /* --rules FILE */
    const char *where;  /* --where EXPR */
    const char *policy; /* --policy FILE (JSON) */
    bool interpret;     /* the interpreter even for rules the program has as C
                         * (the default rules: for benchmarks and tests) */
} rd_choice;

/* Loads c's choice for tr_schema; false with err set ("FILE:LINE:COL: ...",
 * or more than one given). Rules of the default rules' text (given or not)
 * judge through their C (tr_default_compiled, po_compiled) unless
 * c->interpret. */
__attribute__((warn_unused_result)) bool rd_policy(const rd_choice *c, po_policy *out, char *err,
                                                   size_t errlen);

/* Whether rd_policy, given no rules, found that the built-in default rules
 * do not fit tr_schema (written for another schema) and loaded `keep true`
 * instead, saying so on stderr (once a process). */
bool rd_defaults_replaced(void);

/* The tally's rows: the names of the cases of the schema's kind optic
 * (op_schema.kind), at most max of them; how many (0: the schema has none). */
int rd_kinds(const char **names, int max);

typedef struct {
    ru_subject ru;
    ar_arena arena;
    uint8_t *mem;
    vf_checker *vc;
    const char *key; /* the root member the one-pass check finds (NULL: none) */
    size_t key_n;
    /* the decode reader's (rd_decoding): the decoded root and its arena */
    ar_arena dec;
    uint8_t *dec_mem;
    void *root;
} rd_reader;

/* What rd_new allocates, and what rd_decoding adds, for the pipe's count
 * of allocations. */
#define RD_ALLOCS 4
#define RD_DECODE_ALLOCS 2

rd_reader *rd_new(void);
void rd_free(rd_reader *r);

/* rd_message's check at a level other than VF_OFF, out of line: m is
 * already the reader's message. */
bool rd_message_check(rd_reader *r, vf_level level, tr_message m);

/* m becomes the reader's message, checked at level: false when the level
 * rejects it (then it is judged none and dropped). In line: at VF_OFF it
 * checks nothing. */
static inline bool rd_message(rd_reader *r, vf_level level, tr_message m)
{
    ru_subject_bytes(&r->ru, m.p, m.n);
    return level == VF_OFF || rd_message_check(r, level, m);
}

/* Makes r a decode reader too: a root of the schema's root type and an
 * arena of RD_DECODE_ARENA, allocated once. false: out of memory. */
__attribute__((warn_unused_result)) bool rd_decoding(rd_reader *r);

/* m, decoded whole (tr_schema's root), becomes the reader's message: false
 * when the decoder rejects it. Needs rd_decoding. */
bool rd_decode(rd_reader *r, tr_message m);

/* A root someone else decoded becomes the reader's message. */
void rd_decoded(rd_reader *r, const void *root);

#endif
