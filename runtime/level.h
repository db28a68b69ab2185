/* level.h: one walk of an object for the first members of several optics.
 *
 * Each optic's scanner walks the object at its source looking for its own
 * first member (op_member: a field's key, and a union's tag). When several
 * optics start at the same object (the message's root, or the value of the
 * same raw base), reading each with its own scanner walks the bytes in
 * front of their members once per optic. A plan (lv_plan) gathers such
 * optics; a walk (lv_read over an lv_state, one per object and message)
 * looks for all their keys at once, records where each key's value starts,
 * and stops as soon as the optic asked for is settled; asking for another
 * resumes it where it stopped, so the bytes in front of a member are walked
 * once whatever the order the optics are asked in. Each optic then goes on
 * from its member with its scanner's other steps (op_member.from).
 *
 * An optic read so gives exactly what its own scanner gives on the same
 * bytes, at every verify level (the walk reads what the scanners read and
 * trusts what they trust): the first occurrence of a key wins; a union's
 * tag must name the optic's case at each occurrence the optic's scanner
 * would see; a key with escapes goes through the same slow path; a key
 * that cannot be read (a bad escape) stops exactly the optics whose
 * scanners would have read it. tests/unit/test_level.c checks it against
 * every optic's scanner, on every schema, on generated and damaged bytes.
 *
 * The keys are matched by the object's generated level matcher
 * (op_member.level_key, tr_levels.c: one re2c matcher per type optics
 * start in, for every key their first steps look for there, built from the
 * scanners' own matcher templates); the walk keeps, per optic, what found
 * keys settle it, as bit masks.
 *
 * A plan takes optics of one object (one level matcher) whose keys begin
 * with at most four distinct bytes (the walk's candidates, skip.h);
 * lv_plan_add refuses the others, which then go in another plan or are
 * read alone. No allocation.
 */
#ifndef TR_LEVEL_H
#define TR_LEVEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "optic.h"
#include "skip.h"

#define LV_KEYS 16   /* distinct keys one walk looks for (a tag included) */
#define LV_OPTICS 16 /* optics one plan serves */
#define LV_LEVEL 64  /* keys of a level's matcher a plan can use (an optic's beyond: alone) */

typedef struct {
    const op_schema *schema;
    int n;                       /* optics in the plan */
    int optic[LV_OPTICS];        /* their indices in the schema */
    uint16_t keys_of[LV_OPTICS]; /* each one's keys: bits into key[] */
    int want[LV_OPTICS];         /* the case its tag must name */
    uint16_t by_tag;             /* the optics of a case's field (they check every tag they meet) */
    uint16_t tag_modes;          /* the optics of a tag or a case (OP_M_TAG, OP_M_CASE) */
    uint16_t untagged_by_key[LV_KEYS]; /* for each key, the fields without a tag it settles */
    uint16_t tagged_by_key[LV_KEYS];   /* for each key, the case fields it is the key of */
    int nkeys;
    js_str key[LV_KEYS];
    uint8_t plain[LV_KEYS];      /* bytes of each key before the first one JSON must escape */
    int tag;                     /* the tag's index in key[], or -1 */
    /* the level's generated matchers (op_member.level_key, and level_case
     * for a union's tag), and for each of the matcher's keys the plan's key
     * + 1 (0: no optic of the plan looks for it) */
    int (*level_key)(const uint8_t *p, const uint8_t *lim, const uint8_t **val);
    int (*level_case)(const uint8_t *p, const uint8_t *lim, const uint8_t **after);
    uint8_t lmap[LV_LEVEL];
    sk_firsts firsts;
} lv_plan;

/* A walk of one object in one message. lv_reset before each message. */
typedef struct {
    bool begun, closed;        /* closed: the walk ended at the object's closer */
    const uint8_t *open;       /* the object's '{' */
    const uint8_t *end;
    sk_cursor c;
    uint16_t found;              /* keys found */
    uint16_t done;               /* optics whose outcome the walk has settled */
    uint16_t dead;               /* of those, the ones a key that cannot be read stopped */
    uint16_t tag_bad;            /* of those, the ones a tag of another case stopped */
    uint16_t keyed;              /* the case fields whose key is found */
    int tagcase;                 /* the tag's first occurrence's case (-1: none it names) */
    const uint8_t *pos[LV_KEYS]; /* where each found key's value starts */
} lv_state;

/* An empty plan for optics of schema s. */
void lv_plan_init(lv_plan *pl, const op_schema *s);

/* Adds optic i (op_member mode not OP_M_NONE, with a level matcher: from
 * the same source object as the plan's others, the caller's to know, and
 * the same matcher, checked); false when it does not fit (another matcher,
 * a fifth first byte, more keys or optics than the bounds), the plan
 * unchanged. */
bool lv_plan_add(lv_plan *pl, int i);

/* The plan's index of optic i, or -1. */
int lv_plan_find(const lv_plan *pl, int i);

/* A new walk, of the object whose bytes (after whitespace) start at p. */
static inline void lv_reset(lv_state *st, const uint8_t *p, const uint8_t *end)
{
    st->begun = false;
    st->open = p;
    st->end = end;
}

/* Plan optic j (0 .. n-1) read from the walk, walking as far as it needs:
 * as op_optic.scan would read it from the object's bytes (out, scratch and
 * a as scan takes them), or with seek (a raw optic) as op_optic.seek, the
 * view running to the end of the bytes. */
bool lv_read(const lv_plan *pl, lv_state *st, int j, bool seek, op_value *out, void *scratch,
             ar_arena *a);

#endif
