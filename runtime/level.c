/* level.c: one walk of an object for the first members of several optics
 * (level.h). The key and case-name matching here is the generated
 * scanners' (gen/templates/scan.re.j2), written once for any keys: what
 * their re2c rules accept, this accepts, and the same strings go to the
 * same slow paths (sk_key_slow, ob_name). */
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

static bool needs_escape(uint8_t b) { return b == '"' || b == '\\' || b < 0x20; }

/* The first byte a key's string starts with: the closing quote for "". */
static uint8_t first_byte(js_str k) { return k.n > 0 ? (uint8_t)k.p[0] : '"'; }

/* Index of key k in the plan, added if it is new; -1 when there is no
 * room. */
static int key_index(lv_plan *pl, js_str k)
{
    for (int i = 0; i < pl->nkeys; i++)
        if (pl->key[i].n == k.n && memcmp(pl->key[i].p, k.p, k.n) == 0)
            return i;
    if (pl->nkeys == LV_KEYS)
        return -1;
    int i = pl->nkeys++;
    pl->key[i] = k;
    size_t at = 0;
    while (at < k.n && !needs_escape((uint8_t)k.p[at]))
        at++;
    pl->plain[i] = (uint8_t)(at < 255 ? at : 255);
    if (k.n > pl->longest)
        pl->longest = k.n;
    pl->whole[i] = at == k.n;
    return i;
}

bool lv_plan_add(lv_plan *pl, int i)
{
    const op_member *m = &pl->schema->optics[i].member;
    if (m->mode == OP_M_NONE || pl->n == LV_OPTICS || lv_plan_find(pl, i) >= 0)
        return false;
    if ((m->mode == OP_M_FIELD && m->key.n > 254) || m->tag.n > 254)
        return false; /* plain[] holds lengths below 255 */
    /* one tag, the plan's (the optics share their source object) */
    if (m->tag.p != NULL && pl->tag >= 0 &&
        (pl->key[pl->tag].n != m->tag.n || memcmp(pl->key[pl->tag].p, m->tag.p, m->tag.n) != 0))
        return false;
    /* the first bytes, at most four */
    uint8_t fb[6];
    int nf = 0;
    for (int k = 0; k < pl->firsts.n; k++)
        fb[nf++] = pl->firsts.b[k];
    js_str mine[2];
    int nmine = 0;
    if (m->tag.p != NULL)
        mine[nmine++] = m->tag;
    if (m->mode == OP_M_FIELD)
        mine[nmine++] = m->key;
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
        int x = key_index(pl, mine[k]);
        if (x < 0) {
            *pl = save;
            return false;
        }
        keys |= (uint16_t)(1u << x);
        if (k == 0 && m->tag.p != NULL) {
            pl->tag = x;
            pl->names = m;
        }
    }
    for (int k = 0; k < 4; k++)
        pl->firsts.b[k] = fb[k < nf ? k : nf - 1];
    pl->firsts.n = (uint8_t)nf;
    pl->optic[pl->n] = i;
    pl->keys_of[pl->n] = keys;
    pl->mode[pl->n] = m->mode;
    pl->tagged[pl->n] = m->tag.p != NULL;
    pl->want[pl->n] = m->want;
    if (m->mode == OP_M_FIELD && m->tag.p != NULL)
        pl->by_tag |= (uint16_t)(1u << pl->n);
    pl->n++;
    return true;
}

/* ---- matching, as the scanners' key_L and name_U do */

/* The length of the common prefix of a and b, at most n bytes. */
static inline size_t common(const uint8_t *a, const char *b, size_t n)
{
    size_t i = 0;
    while (i < n && a[i] == (uint8_t)b[i])
        i++;
    return i;
}

/* p at a '"' (a candidate): the key it starts, with *val where its value
 * starts; -2 when it may be a key written with escapes (*pre bytes, those
 * before its first backslash, begin some key's plain part); -1 for anything
 * else, *val at its second byte. The key rules of a scanner match a string
 * whose bytes are a key's, then whitespace and ':'; its slow-path rules a
 * string whose first backslash comes right after the first bytes of a
 * key's plain part (those before any byte JSON must escape); the two never
 * both apply. Only keys that begin as the string does can do either. */
static int match_key(const lv_plan *pl, const uint8_t *p, const uint8_t *lim,
                     const uint8_t **val, size_t *pre)
{
    const uint8_t *s = p + 1;
    size_t room = (size_t)(lim - s); /* bytes from the string's first on */
    *val = p + 1;
    if (room == 0)
        return -1;
    if (s[0] == '\\') {
        *pre = 0; /* the empty prefix begins every key */
        return pl->nkeys > 0 ? -2 : -1;
    }
    for (int i = 0; i < pl->nkeys; i++) {
        const js_str *k = &pl->key[i];
        if (k->n > 0 && s[0] != (uint8_t)k->p[0])
            continue;
        size_t n = k->n, c = common(s, k->p, pl->plain[i] < room ? pl->plain[i] : room);
        if (c < room && s[c] == '\\') {
            *pre = c;
            return -2;
        }
        if (pl->whole[i] && c == n && n < room && s[n] == '"') {
            const uint8_t *q = js_ws(s + n + 1, lim);
            if (q < lim && *q == ':') {
                *val = js_ws(q + 1, lim);
                return i;
            }
            return -1;
        }
    }
    return -1;
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

/* The union's case named by the string at p, *after past it; -1 when it
 * names none (or is no string, or is cut short). */
static int match_name(const op_member *u, const uint8_t *p, const uint8_t *lim,
                      const uint8_t **after)
{
    if (p >= lim || *p != '"')
        return -1;
    const uint8_t *q = p + 1;
    while (q < lim && *q != '"' && *q != '\\' && *q != 0)
        q++;
    if (q < lim && *q == '"') {
        size_t n = (size_t)(q - (p + 1));
        for (int c = 0; c < u->ncases; c++)
            if (u->cases[c].n == n && memcmp(u->cases[c].p, p + 1, n) == 0) {
                *after = q + 1;
                return c;
            }
        return -1;
    }
    if (q >= lim || *q != '\\')
        return -1;
    js_ctx ctx;
    js_ctx_init(&ctx, p, NULL);
    int v = -1;
    *after = ob_name(&ctx, p, lim, u->name_from, u->longest, TR_E_ENUM, &v);
    return *after != NULL ? v : -1;
}

/* ---- the walk */

/* Settles the optics that what was found so far decides. */
static void settle(const lv_plan *pl, lv_state *st)
{
    bool tag = pl->tag >= 0 && (st->found >> pl->tag & 1);
    for (int j = 0; j < pl->n; j++) {
        if (st->done >> j & 1)
            continue;
        bool settled;
        if (pl->mode[j] != OP_M_FIELD)
            settled = tag; /* OP_M_TAG, OP_M_CASE: the tag is all they look for */
        else if (!pl->tagged[j])
            settled = (st->found & pl->keys_of[j]) != 0;
        else
            settled = tag && (st->found & pl->keys_of[j]) == pl->keys_of[j];
        if (settled)
            st->done |= (uint16_t)(1u << j);
    }
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
        st->ended = st->closed = false;
        st->found = st->done = st->dead = st->tag_bad = 0;
        st->tagcase = -1;
        if (st->open >= end || *st->open != '{') {
            st->ended = true;
            st->done = (uint16_t)((1u << pl->n) - 1);
            return;
        }
        sk_begin(&st->c, st->open, end);
    }
    while (!(st->done >> j & 1)) {
        const uint8_t *k = sk_next(&st->c, &pl->firsts), *val = NULL;
        if (k == NULL) {
            st->ended = true;
            st->closed = st->c.closed != NULL;
            st->done = (uint16_t)((1u << pl->n) - 1);
            return;
        }
        size_t pre = 0;
        int which = match_key(pl, k, end, &val, &pre);
        if (which == -2)
            which = sk_key_slow(k, end, pl->key, pl->nkeys, &val);
        if (which == -3) {
            /* a key that cannot be read: the optics whose scanners would
             * have read it stop there, with a miss */
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
            int c = match_name(pl->names, val, end, &after);
            if (!(st->found >> which & 1))
                st->tagcase = c;
            tag_seen(pl, st, c);
            if (c >= 0)
                next = after;
        }
        if (!(st->found >> which & 1)) {
            st->found |= (uint16_t)(1u << which);
            st->pos[which] = val;
        }
        settle(pl, st);
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
