/* rules_impl.h: the compiled form of rules (rules.h), private to the
 * runtime's rules.c, which parses and interprets it, and rules_emit.c,
 * which writes it out as C (ru_emit_c). */
#ifndef TR_RULES_IMPL_H
#define TR_RULES_IMPL_H

#include "rules.h"

/* An optic, then fields of the record it focuses: steps[step .. step+nsteps). */
typedef struct {
    int optic;
    int step, nsteps;
} ru_path;

enum { RN_AND, RN_OR, RN_NOT, RN_CONST, RN_HAS, RN_TRUTH, RN_CMP, RN_SET, RN_IN };
enum { RC_NUM, RC_STR, RC_ENUM, RC_BOOL };
/* A comparison's outcome is one of these bits; a node holds the set of
 * outcomes for which it is true (== is O_EQ, != is O_LT | O_GT | O_UN). */
enum { O_LT = 1, O_EQ = 2, O_GT = 4, O_UN = 8 };

typedef struct {
    uint8_t op;
    uint8_t cls;
    uint8_t mask; /* RN_CMP: outcomes that hold; RN_IN: 1 for the != form; RN_CONST: value */
    bool af, bf;  /* RC_NUM: a, b is a double */
    int8_t kres;  /* RN_CMP: k a wide integer literal: the sign of it less k.f */
    bool bpath;   /* RN_CMP: b is a path, else the constant k */
    int kid;      /* RN_AND, RN_OR, RN_NOT: first operand; the others follow by next */
    int next;
    ru_path a, b;
    op_value k;
    int items, nitems; /* RN_SET: words[items ..], nitems bits; RN_IN: items[items ..] */
} ru_node;

typedef struct {
    op_value v; /* a string's p is set once the pool has its final place */
    bool f;     /* a number that is a double */
    int8_t res; /* a wide integer literal: the sign of it less v.f */
    size_t str; /* a string's offset in the pool */
} ru_item;

typedef struct {
    bool keep;
    int line;
    int expr;
    int rest; /* indexed: the conjuncts after its leading set test (-1: none), or RU_UNGUARDED */
} ru_rule;

#define RU_UNGUARDED (-2)  /* a rule the index cannot pass over: tried whole */
#define RU_INDEX_CASES 1024 /* cases of the indexed path (a table row each), at most */

struct ru_rules {
    const op_schema *schema;
    uint64_t print; /* ru_fingerprint */
    int nrules;
    int nnodes;
    int tried; /* ru_judge tries rules [0, tried): none after the last keep can keep */
    uint64_t used;
    const ru_rule *rules;
    const ru_node *nodes;
    const ru_item *items;
    const op_field *const *steps;
    const uint64_t *words;
    const char *pool;
    /* The index. When the first rule begins with a test of a path against a
     * set of cases (`kind == Outage && ...`, `kind in [..]`, `kind != ..`),
     * every rule that begins with a test of the same path is a candidate only
     * for the cases its test admits: the judge reads the path once (as the
     * first rule would), takes its case's row of rows[] (a bit per rule; the
     * row after the last case for a miss or a case past the sets) and tries
     * only the candidates, in order, each from the conjunct after its test.
     * The verdict and the optics read are those of trying every rule. No
     * index (nrow 0) when the first rule does not begin so, past 64 rules or
     * RU_INDEX_CASES cases. */
    int nrow;  /* cases + 1 */
    const ru_node *guard; /* the first rule's leading set test: its path and class */
    const uint64_t *rows;
    /* The optics the rules read from the message's root (root optics, and
     * the raw bases of the others) that share one walk of it: at least
     * two, else lv.n is 0 and each is read alone; lvj[i] is optic i's
     * place in lv (-1: alone). Last: what every judgement reads comes
     * first. */
    bool lv_off; /* ru_share_root_walk(r, false) */
    int8_t lvj[RU_MAX_OPTICS];
    lv_plan lv;
};

/* How a subject reads optic i of schema s from a message's bytes (RU_NEVER
 * .. RU_BASE): what ru_subject_init puts in its slot, and what the C that
 * ru_emit_c writes reads it by. */
int ru_how(const op_schema *s, int i);

#endif
