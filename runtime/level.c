/* level.c: one walk of an object for the first members of several optics
 * (level.h). Keys and case names are matched by the object's generated
 * level matcher (gen/templates/levels.re.j2, made of the scanners' own
 * matchers.j2): what the scanners' re2c rules accept, it accepts, and the
 * same strings go to the same slow paths (sk_key_slow, ob_name). A key of
 * the level no optic of the plan looks for is passed over; a string the
 * matcher sends to the slow path that is none of the plan's keys is passed
 * over by sk_key_slow, as the optics' own matchers would pass it over. */
#include "level.h"

#include <string.h>

#include "object.h"

void lv_plan_init(lv_plan *pl, const op_schema *s)
{
    memset(pl, 0, sizeof *pl);
    pl->schema = s;
    pl->tag = -1;
}

int lv_plan_find(const lv_plan *pl, int i)
{
    for (int j = 0; j < pl->n; j++)
        if (pl->optic[j] == i)
            return j;
    return -1;
}

/* The first byte a key's string starts with: the closing quote for "". */
static uint8_t first_byte(js_str k) { return k.n > 0 ? (uint8_t)k.p[0] : '"'; }

/* The plan's index of the level matcher's key l (spelled k), added if it
 * is new; -1 when there is no room. */
static int key_index(lv_plan *pl, int l, js_str k)
{
    if (pl->lmap[l] != 0)
        return pl->lmap[l] - 1;
    if (pl->nkeys == LV_KEYS)
        return -1;
    int i = pl->nkeys++;
    pl->key[i] = k;
    size_t at = 0;
    while (at < k.n && !js_escaped_byte((uint8_t)k.p[at]))
        at++;
    pl->plain[i] = (uint8_t)(at < 255 ? at : 255);
    pl->lmap[l] = (uint8_t)(i + 1);
    return i;
}

bool lv_plan_add(lv_plan *pl, int i)
{
    const op_member *m = &pl->schema->optics[i].member;
    if (m->mode == OP_M_NONE || m->level_key == NULL || pl->n == LV_OPTICS ||
        lv_plan_find(pl, i) >= 0)
        return false;
    /* one object, one matcher: the plan's */
    if (pl->n > 0 && m->level_key != pl->level_key)
        return false;
    if (m->key_at >= LV_LEVEL || m->tag_at >= LV_LEVEL ||
        (m->mode == OP_M_FIELD && m->key_at < 0) || ((m->tag.p != NULL) != (m->tag_at >= 0)) ||
        (m->tag.p != NULL && m->level_case == NULL))
        return false;
    if ((m->mode == OP_M_FIELD && m->key.n > 254) || m->tag.n > 254)
        return false; /* plain[] holds lengths below 255 */
    /* the first bytes, at most four */
    uint8_t fb[6];
    int nf = 0;
    for (int k = 0; k < pl->firsts.n; k++)
        fb[nf++] = pl->firsts.b[k];
    /* its keys (the tag first) and where its matcher lists them: one matcher,
     * one object, so one tag, at the same place for every optic */
    js_str mine[2];
    int at[2], nmine = 0;
    if (m->tag.p != NULL) {
        at[nmine] = m->tag_at;
        mine[nmine++] = m->tag;
    }
    if (m->mode == OP_M_FIELD) {
        at[nmine] = m->key_at;
        mine[nmine++] = m->key;
    }
    for (int k = 0; k < nmine; k++) {
        uint8_t b = first_byte(mine[k]);
        bool seen = false;
        for (int x = 0; x < nf; x++)
            seen = seen || fb[x] == b;
        if (!seen)
            fb[nf++] = b;
    }
    if (nf > 4)
        return false;
    lv_plan save = *pl;
    uint16_t keys = 0;
    for (int k = 0; k < nmine; k++) {
        int x = key_index(pl, at[k], mine[k]);
        if (x < 0) {
            *pl = save;
            return false;
        }
        keys |= (uint16_t)(1u << x);
        if (k == 0 && m->tag.p != NULL) {
            pl->tag = x;
            pl->level_case = m->level_case;
        }
    }
    for (int k = 0; k < 4; k++)
        pl->firsts.b[k] = fb[k < nf ? k : nf - 1];
    pl->firsts.n = (uint8_t)nf;
    /* the walk may pass over what is none of them (skip.h): plans are the
     * root's, the object of most members a filter walks */
    sk_want_keys(&pl->firsts, pl->key, pl->nkeys);
    pl->level_key = m->level_key;
    pl->optic[pl->n] = i;
    pl->keys_of[pl->n] = keys;
    pl->want[pl->n] = m->want;
    uint16_t me = (uint16_t)(1u << pl->n);
    if (m->mode == OP_M_FIELD && m->tag.p != NULL) {
        pl->by_tag |= me;
        pl->tagged_by_key[__builtin_ctz(keys & ~(1u << pl->tag))] |= me;
    } else if (m->mode == OP_M_FIELD) {
        pl->untagged_by_key[__builtin_ctz(keys)] |= me;
    } else {
        pl->tag_modes |= me;
    }
    pl->n++;
    return true;
}

/* ---- matching: the level's generated matchers */

/* p at a '"' (a candidate): the plan's key it starts, with *val where its
 * value starts; -2 when it may be a key written with escapes; -1 for
 * anything else (a key of the level no optic of the plan looks for
 * included), *val where the walk may go on. */
static inline int match_key(const lv_plan *pl, const uint8_t *p, const uint8_t *lim,
                            const uint8_t **val)
{
    int x = pl->level_key(p, lim, val);
    if (x >= 0) /* *val past the ':' either way; a plan takes no key past LV_LEVEL */
        return x < LV_LEVEL ? pl->lmap[x] - 1 : -1;
    return x;
}

/* Whether a backslash after a string's first m bytes (those at s) would
 * send optic j's scanner to its slow path: they begin one of its keys'
 * plain parts. */
static bool slow_for(const lv_plan *pl, int j, const uint8_t *s, size_t m)
{
    for (int i = 0; i < pl->nkeys; i++)
        if ((pl->keys_of[j] >> i & 1) && pl->plain[i] >= m && memcmp(s, pl->key[i].p, m) == 0)
            return true;
    return false;
}

/* ---- the walk */

/* Key k found (its first occurrence): the optics this settles are marked
 * done: those of a field without a tag whose key it is, and once the tag
 * is found, those of the tag or a case (the tag is all they look for) and
 * the fields of a case whose key is found too. */
static inline void found_key(const lv_plan *pl, lv_state *st, int k)
{
    st->found |= (uint16_t)(1u << k);
    st->keyed |= pl->tagged_by_key[k];
    uint16_t d = pl->untagged_by_key[k];
    if (pl->tag >= 0 && (st->found >> pl->tag & 1))
        d |= pl->tag_modes | st->keyed;
    st->done |= d;
}

/* A tag's occurrence naming case c (-1: none): the optics of a case's field
 * still walking check every occurrence they meet, and stop at one that
 * names another case. */
static void tag_seen(const lv_plan *pl, lv_state *st, int c)
{
    for (uint16_t w = pl->by_tag & (uint16_t)~st->done; w != 0; w &= (uint16_t)(w - 1)) {
        int j = __builtin_ctz(w);
        if (c != pl->want[j]) {
            st->done |= (uint16_t)(1u << j);
            st->tag_bad |= (uint16_t)(1u << j);
        }
    }
}

/* Walks until optic j is settled or the object ends. */
static void walk(const lv_plan *pl, lv_state *st, int j)
{
    const uint8_t *end = st->end;
    if (!st->begun) {
        st->begun = true;
        st->closed = false;
        st->found = st->done = st->dead = st->tag_bad = st->keyed = 0;
        st->tagcase = -1;
        if (st->open >= end || *st->open != '{') {
            st->done = (uint16_t)((1u << pl->n) - 1);
            return;
        }
        sk_begin(&st->c, st->open, end);
    }
    while (!(st->done >> j & 1)) {
        const uint8_t *k = sk_next(&st->c, &pl->firsts), *val = NULL;
        if (k == NULL) {
            st->closed = st->c.closed != NULL;
            st->done = (uint16_t)((1u << pl->n) - 1);
            return;
        }
        int which = match_key(pl, k, end, &val);
        if (which == -2)
            which = sk_key_slow(k, end, pl->key, pl->nkeys, &val);
        if (which == -3) {
            /* a key that cannot be read: the optics whose scanners would
             * have read it stop there, with a miss (those with a key whose
             * plain part begins with the string's bytes before its first
             * backslash: their matchers' slow-path rules) */
            const uint8_t *bs = memchr(k + 1, '\\', (size_t)(end - (k + 1)));
            size_t pre = bs != NULL ? (size_t)(bs - (k + 1)) : 0;
            for (int x = 0; x < pl->n; x++)
                if (!(st->done >> x & 1) && slow_for(pl, x, k + 1, pre)) {
                    st->done |= (uint16_t)(1u << x);
                    st->dead |= (uint16_t)(1u << x);
                }
            sk_resume(&st->c, k + 1);
            continue;
        }
        if (which == -1) {
            sk_resume(&st->c, val);
            continue;
        }
        const uint8_t *next = val;
        if (which == pl->tag) {
            const uint8_t *after = NULL;
            int c = pl->level_case(val, end, &after);
            if (!(st->found >> which & 1))
                st->tagcase = c;
            tag_seen(pl, st, c);
            if (c >= 0)
                next = after;
        }
        if (!(st->found >> which & 1)) {
            st->pos[which] = val;
            found_key(pl, st, which);
        }
        sk_resume(&st->c, next);
    }
}

bool lv_read(const lv_plan *pl, lv_state *st, int j, bool seek, op_value *out, void *scratch,
             ar_arena *a)
{
    walk(pl, st, j);
    if ((st->dead | st->tag_bad) >> j & 1)
        return false;
    const op_member *m = &pl->schema->optics[pl->optic[j]].member;
    bool tag = pl->tag >= 0 && (st->found >> pl->tag & 1);
    if (m->mode == OP_M_TAG) {
        if (!tag || st->tagcase < 0)
            return false;
        out->e = st->tagcase;
        return true;
    }
    if (m->tag.p != NULL && (!tag || st->tagcase != m->want))
        return false;
    if (m->mode == OP_M_CASE)
        return seek ? m->seek_from(st->open, st->end, out)
                    : m->from(st->open, st->end, out, scratch, a);
    int key = __builtin_ctz(pl->keys_of[j] & ~(pl->tag >= 0 ? 1u << pl->tag : 0u));
    if (st->found >> key & 1)
        return seek ? m->seek_from(st->pos[key], st->end, out)
                    : m->from(st->pos[key], st->end, out, scratch, a);
    if (m->empty != NULL && st->closed) {
        /* an absent list or map in an object that closed: an empty one */
        out->bytes.p = (const uint8_t *)m->empty;
        out->bytes.n = 2;
        return true;
    }
    return false;
}
