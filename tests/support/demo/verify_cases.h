/* verify_cases.h: messages built around a generated Issue, and what every
 * verify level and reader must answer on them (docs/security.md), for the verify
 * suites (tests/unit/test_verify_*.c) and the regression replay.
 *
 * vc_init, once before the tests, generates an Issue and keeps its members
 * without the detail (vc_rest: "id":...,"revision":N). A test composes a
 * message from pieces (a member, a detail, the rest) in any order and
 * states what it must get (vc_expect): the JSON level's code and offset,
 * the schema level's (which must be the decoder's), and for an accepted
 * message the verdict of every reader at every level. Every message is
 * also put through docs/security.md's rule as a differential (vc_differential,
 * the fuzzers' own property): either verify=schema rejects it, or the
 * decoder accepts it and the optics read the values the decoder read.
 *
 * The fuzz harnesses (tests/fuzz/harness.h) are reached through here only:
 * this module is the one that includes them, so the suites share one
 * harness state. Needs the demo's schema and demo/. Not thread-safe. */
#ifndef TRIAGE_TEST_VERIFY_CASES_H
#define TRIAGE_TEST_VERIFY_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "reader.h"
#include "tr_model.h"
#include "verify.h"
#include "support/bytes.h"
#include "support/demo/details.h"

/* A piece of text that may hold NULs. */
typedef struct {
    const char *p;
    size_t n;
} vc_piece;

#define VC_P(lit) ((vc_piece){(lit), sizeof(lit) - 1})

static inline vc_piece vc_pz(const char *s) { return (vc_piece){s, strlen(s)}; }
static inline vc_piece vc_of(const bb *b) { return (vc_piece){(const char *)b->p, b->n}; }
static inline tr_message vc_msg(const bb *b) { return (tr_message){b->p, b->n}; }

/* The demo's literal details (one of each case: details.h), and the
 * detail members the default rules keep and drop. Completed for the schema
 * at hand by vc_complete_detail and vc_complete_member. */
#define D_KEEP "\"detail\":" INCIDENT("Sev1", "Critical")
#define D_DROP "\"detail\":" INCIDENT("Sev4", "Minor")

/* The kinds a verdict names (-1: none, dropped). */
enum { BUGK = TR_DETAIL_BUG, INC = TR_DETAIL_INCIDENT, REQ = TR_DETAIL_REQUEST, NONE = -1 };

/* A generated Issue's members without its detail, NUL-terminated. */
extern bb *vc_rest;

/* D_KEEP and D_DROP, completed. */
extern vc_piece vc_keep, vc_drop;

/* The harness state, the rest and the completed members; exits the
 * process when the generated message is not as expected. */
void vc_init(void);

/* The detail d (the value of "detail") completed into *out, or d itself
 * when it is not JSON or names no case. */
vc_piece vc_complete_detail(vc_piece d, bb *out);

/* A member "detail":VALUE (the key may be escaped) with its value
 * completed into *out; any other piece as it is. */
vc_piece vc_complete_member(vc_piece m, bb *out);

/* {m[0],m[1],...} in a new buffer; pos[i] (when pos is not NULL)
 * receives each member's offset. */
bb *vc_compose(const vc_piece *m, size_t k, size_t *pos);

/* The member of the rest named key, at the root's level: its start and
 * end (one past its value); false when there is none. */
bool vc_rest_member(const char *key, size_t *start, size_t *end);

/* The rest with the member named key removed (it must be there). */
bb *vc_rest_without(const char *key);

/* The six orders of member X, detail D and the rest R. */
extern const char vc_layouts[6][4];

/* ---- verdicts ---- */

typedef struct {
    int kind; /* -1: no kind read (dropped) */
    bool keep;
} vc_verdict;

#define VC_ANY ((size_t)-1) /* an offset not checked */

/* vf_check with the suites' checker. */
tr_error vc_check(vf_level level, tr_message m);

/* The decoder on m, into vc_issue(). */
tr_error vc_decode(tr_message m);
const tr_Issue *vc_issue(void);

/* judge --reader decode, and --reader optics --verify level. */
vc_verdict vc_judge_decode(tr_message m);
vc_verdict vc_judge_optics(vf_level level, tr_message m);

/* The differential property on m, under every SIMD width; the test fails
 * naming `name` when it does not hold. */
void vc_differential(const char *name, tr_message m);

/* What a message must get: the JSON level's code (and offset, unless
 * VC_ANY), the schema level's code (and offset), and when the schema level
 * accepts it, the verdict (kind, keep) of every reader at every level that
 * reads it. The differential holds too. */
void vc_expect(const char *name, tr_message m, tr_code jcode, size_t joff, tr_code scode, size_t soff,
               int kind, bool keep);
void vc_expect_ok(const char *name, tr_message m, int kind, bool keep);
void vc_expect_bad(const char *name, tr_message m, tr_code jcode, size_t joff, tr_code scode, size_t soff);

/* The readers' rules reader and the decoder's arena, as the verdicts use
 * them. */
rd_reader *vc_reader(void);
ar_arena *vc_arena(void);

/* A valid generated message (not vc_rest's), for wrapping values into. */
tr_message vc_base(void);

/* ---- the fuzz harnesses ---- */

size_t vc_nharnesses(void);
const char *vc_harness_name(size_t h);

/* Harness h on [p, p+n): NULL when its properties hold, else which failed. */
const char *vc_harness(size_t h, const uint8_t *p, size_t n);

/* A whole file in a new buffer; the test fails when it cannot be read. */
bb *vc_read_file(const char *path);

#endif
