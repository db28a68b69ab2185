/* policy.h: the demo's policy, written once against capabilities.
 *
 * The policy knows no scanner and no struct: it asks a po_reader for the
 * message's kind and, depending on it, a few leaves (severity, tier,
 * module, plan, votes). Each getter returns the index of an enum case (the
 * order of the schema's enum, via the name tables in po_schema) or -1 for a
 * miss (absent, or unreadable); kind -1 means no kind could be read. Whether
 * the leaves come from scanning the bytes or from a decoded model is the
 * reader's business. Getters are called lazily, only when the verdict needs
 * them.
 *
 * The policy file (JSON, parsed with jsmn; MODEL.md and CLI.md):
 *   {"urgent":["Sev1","Sev2"],"tiers":["Critical"],"modules":["Payments"],
 *    "plans":["Business","Enterprise"],"minVotes":130}
 * Every key is optional and defaults to that demo policy; unknown keys,
 * unknown case names, wrong types and duplicate keys are errors naming the
 * file and the key. Loading allocates nothing that outlives the call.
 */
#ifndef TR_POLICY_H
#define TR_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

/* Names of the enums the policy refers to, taken from the generated model. */
typedef struct {
    const js_str *names;
    int count;
} po_enum;

typedef struct {
    po_enum kind;     /* the union's cases: must include Bug, Incident, Request */
    po_enum severity;
    po_enum tier;
    po_enum module;
    po_enum plan;
} po_schema;

typedef struct {
    const void *self;
    int (*kind)(const void *self);
    int (*severity)(const void *self);
    int (*tier)(const void *self);
    int (*module)(const void *self);
    int (*plan)(const void *self);
    /* The votes record's count, or false on a miss. */
    bool (*votes)(const void *self, int64_t *count);
} po_reader;

typedef struct {
    int bug, incident, request; /* the kind indexes the rules are about */
    uint64_t urgent, tiers, modules, plans; /* bit i: case i is in the set */
    int64_t min_votes;
} po_policy;

/* The default policy (MODEL.md's), resolved against the schema's names.
 * Fails only when the schema lacks one of the names. */
__attribute__((warn_unused_result)) bool po_default(const po_schema *s, po_policy *out,
                                                    char *err, size_t errlen);

/* Loads a policy file; on failure writes "FILE: problem" into err. */
__attribute__((warn_unused_result)) bool po_load(const char *path, const po_schema *s,
                                                 po_policy *out, char *err, size_t errlen);

/* The same from text in memory; name is used in messages. */
__attribute__((warn_unused_result)) bool po_parse(const char *text, size_t n, const char *name,
                                                  const po_schema *s, po_policy *out, char *err,
                                                  size_t errlen);

/* The verdict: true to keep. *kind receives the kind read (-1: none). */
bool po_judge(const po_policy *p, const po_reader *r, int *kind);

#endif
