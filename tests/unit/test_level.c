/* test_level.c: one walk of an object for the first members of several
 * optics (runtime/level.h) reads what each optic's own scanner reads, on
 * any schema (built, like test_model, once and linked with each schema's
 * generated code; it names nothing of one schema).
 *
 * For every object optics start at (the message's root, and the value of
 * each raw base optic, sought), plans are made of its optics in several
 * random orders and subsets (so the keys, and the first bytes the walk
 * stops at, vary); each plan's optics are read from one walk in a random
 * order, each also sought when raw, and each must hit where its scanner
 * hits, with the same value, and miss where it misses. The messages:
 * generated at sizes 2..40 in both layouts; the same with every object key
 * written with an escape (\u00XX for its first character, so the walk's
 * slow path reads them); and one small message damaged at every byte with
 * the bytes that make keys, strings and brackets go wrong, and cut at every
 * length. Each at every SIMD width the CPU has. And the generated level
 * matchers themselves: each optic's table row points at its object's
 * matcher, which lists its key and tag where the row says and finds each
 * of its keys; a plan takes the optics of one matcher only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "level.h"
#include "optic.h"
#include "rng.h"
#include "rules.h"
#include "support/fixture.h"
#include "support/reach.h"
#include "support/simd.h"
#include "support/suite.h"

extern const op_schema tr_schema;

#define ARENA_BYTES (16u << 20)
#define BUF_BYTES (8u << 20)
#define SCRATCH_BYTES (64u << 10)

static const op_schema *S = &tr_schema;

typedef struct {
    ar_arena gen, a1, a2;
    uint8_t *enc, *esc, *tmp, *out1, *out2;
    void *value;
    _Alignas(16) uint8_t s1[SCRATCH_BYTES];
    _Alignas(16) uint8_t s2[SCRATCH_BYTES];
    long reads, hits;
} ctx;

static ctx *C;

static void setup(void)
{
    C = fx_zalloc(sizeof *C);
    fx_arena(&C->gen, ARENA_BYTES);
    fx_arena(&C->a1, ARENA_BYTES);
    fx_arena(&C->a2, ARENA_BYTES);
    C->enc = fx_alloc(BUF_BYTES);
    C->esc = fx_alloc(BUF_BYTES);
    C->tmp = fx_alloc(BUF_BYTES);
    C->out1 = fx_alloc(BUF_BYTES);
    C->out2 = fx_alloc(BUF_BYTES);
    C->value = fx_zalloc(S->types[S->root].size);
}

/* Whether two values optic o read are the same. */
static bool same(const op_optic *o, const op_value *x, const op_value *y)
{
    switch (o->kind) {
    case OP_BOOL: return x->b == y->b;
    case OP_I32:
    case OP_I64: return x->i == y->i;
    case OP_F64: return memcmp(&x->f, &y->f, sizeof x->f) == 0;
    case OP_STRING: return x->s.n == y->s.n && (x->s.n == 0 || memcmp(x->s.p, y->s.p, x->s.n) == 0);
    case OP_ENUM:
    case OP_TAG: return x->e == y->e;
    case OP_RAW:
        /* the same bytes of the message; or, for an absent list or map, an
         * empty one (each side's own "[]" or "{}") */
        return x->bytes.n == y->bytes.n &&
               (x->bytes.p == y->bytes.p ||
                (o->member.empty != NULL && x->bytes.n == 2 &&
                 memcmp(x->bytes.p, o->member.empty, 2) == 0 &&
                 memcmp(y->bytes.p, o->member.empty, 2) == 0));
    case OP_RECORD: {
        uint8_t *e1 = o->encode(C->out1, C->out1 + BUF_BYTES, x->ptr);
        uint8_t *e2 = o->encode(C->out2, C->out2 + BUF_BYTES, y->ptr);
        return e1 != NULL && e2 != NULL && e1 - C->out1 == e2 - C->out2 &&
               memcmp(C->out1, C->out2, (size_t)(e1 - C->out1)) == 0;
    }
    }
    return false;
}

/* The optics that start at object `src` (-1: the root; else raw base src)
 * and have a first member, into list; their count. */
static int members(int src, int *list)
{
    int n = 0;
    for (int i = 0; i < S->noptics; i++) {
        const op_optic *o = &S->optics[i];
        if (o->member.mode == OP_M_NONE)
            continue;
        if (src < 0 ? o->source_is_root : (!o->source_is_root && o->base == src))
            list[n++] = i;
    }
    return n;
}

/* Whether optic i (with a first member) can be in a plan: its key and tag
 * are among the first LV_LEVEL keys of its level's matcher and shorter
 * than 255 bytes (level.h); others are read by their own scanners. */
static bool plannable(int i)
{
    const op_member *m = &S->optics[i].member;
    return m->key_at < LV_LEVEL && m->tag_at < LV_LEVEL &&
           (m->mode != OP_M_FIELD || m->key.n <= 254) && m->tag.n <= 254;
}

/* Plans of a random subset of list, in a random order: each optic into
 * the first plan that takes it (one no plan can take, alone, left out).
 * Their count. */
static int make_plans(rg_rng *rg, const int *list, int n, lv_plan *plans, int cap, bool all)
{
    int order[RU_MAX_OPTICS];
    int m = 0;
    for (int k = 0; k < n; k++)
        if (all || rg_below(rg, 3) != 0)
            order[m++] = list[k];
    for (int k = m - 1; k > 0; k--) {
        int x = (int)rg_below(rg, (uint64_t)k + 1), t = order[k];
        order[k] = order[x];
        order[x] = t;
    }
    int np = 0;
    for (int k = 0; k < m; k++) {
        bool placed = false;
        for (int p = 0; p < np && !placed; p++)
            placed = lv_plan_add(&plans[p], order[k]);
        if (!placed && np < cap) {
            lv_plan_init(&plans[np], S);
            bool took = lv_plan_add(&plans[np], order[k]);
            REQUIREF(took == plannable(order[k]), "optic %s: an empty plan %s it",
                     S->optics[order[k]].name, took ? "took" : "refused");
            np += took;
        }
    }
    return np;
}

/* Every plan's optics read from one walk of the object at [p, end), in a
 * random order, against their scanners over the same bytes. */
/* Rounds of plans each message's objects are checked with: four (one of
 * every optic, three of random subsets), or two on damaged bytes. */
static int rounds = 4;

static void check_object(rg_rng *rg, const uint8_t *p, const uint8_t *end, const int *list,
                         int n, const char *what)
{
    lv_plan plans[16];
    for (int round = 0; round < rounds; round++) {
        int np = make_plans(rg, list, n, plans, 16, round == 0);
        for (int pi = 0; pi < np; pi++) {
            const lv_plan *pl = &plans[pi];
            lv_state st;
            lv_reset(&st, p, end);
            int order[LV_OPTICS];
            for (int j = 0; j < pl->n; j++)
                order[j] = j;
            for (int j = pl->n - 1; j > 0; j--) {
                int x = (int)rg_below(rg, (uint64_t)j + 1), t = order[j];
                order[j] = order[x];
                order[x] = t;
            }
            for (int k = 0; k < pl->n; k++) {
                int j = order[k];
                const op_optic *o = &S->optics[pl->optic[j]];
                for (int seek = 0; seek <= (o->kind == OP_RAW); seek++) {
                    op_value v1, v2;
                    memset(&v1, 0, sizeof v1);
                    memset(&v2, 0, sizeof v2);
                    ar_reset(&C->a1);
                    ar_reset(&C->a2);
                    bool h1 = seek ? o->seek(p, (size_t)(end - p), &v1)
                                   : o->scan(p, (size_t)(end - p), &v1, C->s1, &C->a1);
                    bool h2 = lv_read(pl, &st, j, seek, &v2, C->s2, &C->a2);
                    C->reads++;
                    REQUIREF(h1 == h2, "optic %s (%s)%s on %s: its scanner %s, the shared walk %s",
                             o->name, o->path, seek ? " sought" : "", what, h1 ? "hits" : "misses",
                             h2 ? "hits" : "misses");
                    if (h1) {
                        C->hits++;
                        REQUIREF(same(o, &v1, &v2),
                                 "optic %s (%s)%s on %s: the shared walk reads another value",
                                 o->name, o->path, seek ? " sought" : "", what);
                    }
                }
            }
        }
    }
}

/* Every object of message [p, p+n) optics start at, checked. */
static void check_message(rg_rng *rg, const uint8_t *p, size_t n, const char *what)
{
    int list[RU_MAX_OPTICS];
    int m = members(-1, list);
    if (m > 0)
        check_object(rg, p, p + n, list, m, what);
    for (int b = 0; b < S->noptics; b++) {
        const op_optic *o = &S->optics[b];
        if (!o->source_is_root || o->kind != OP_RAW || o->seek == NULL)
            continue;
        m = members(b, list);
        op_value v;
        if (m == 0 || !o->seek(p, n, &v))
            continue;
        char w[160];
        snprintf(w, sizeof w, "%s, inside %s", what, o->name);
        check_object(rg, v.bytes.p, p + n, list, m, w);
    }
}

/* Root value k at size, encoded (first: its first_field in front) into
 * C->enc; its length. */
static size_t make(int size, uint64_t k, bool first)
{
    const op_type *ty = &S->types[S->root];
    rg_rng rg;
    rg_seed(&rg, 0x6c6576656cull ^ (uint64_t)size << 16, k);
    ar_reset(&C->gen);
    memset(C->value, 0, ty->size);
    ty->random(&rg, &C->gen, size, C->value);
    uint8_t *w = first ? S->encode_first(C->enc, C->enc + BUF_BYTES, C->value, S->first_field)
                       : ty->encode(C->enc, C->enc + BUF_BYTES, C->value);
    REQUIREF(w != NULL, "a message at size %d does not fit", size);
    return (size_t)(w - C->enc);
}

/* [p, p+n) with every object key's first character (a letter, digit or
 * '_' after the key's opening quote, the key followed by '":') written
 * \u00XX, into C->esc; its length. */
static size_t escape_keys(const uint8_t *p, size_t n)
{
    uint8_t *w = C->esc;
    bool in = false;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = p[i];
        if (!in && b == '"') {
            size_t j = i + 1;
            while (j < n && p[j] != '"' && p[j] != '\\')
                j++;
            bool key = j + 1 < n && p[j] == '"' && p[j + 1] == ':' && j > i + 1;
            *w++ = '"';
            if (key) {
                w += sprintf((char *)w, "\\u%04x", p[i + 1]);
                memcpy(w, p + i + 2, j - i - 2);
                w += j - i - 2;
                *w++ = '"';
                i = j;
                continue;
            }
            in = true;
            continue;
        }
        if (in && b == '\\') {
            *w++ = b;
            *w++ = p[++i];
            continue;
        }
        if (in && b == '"')
            in = false;
        *w++ = b;
    }
    return (size_t)(w - C->esc);
}

START_TEST(shared_walks_read_what_the_scanners_read)
{
    if (!simd_use(_i))
        return;
    static const int sizes[] = {2, 3, 5, 7, 15, 40};
    rg_rng rg;
    rg_seed(&rg, 0x77616c6bu, 1);
    for (int layout = 0; layout < 2; layout++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (uint64_t k = 0; k < (sizes[s] > 7 ? 8u : 24u); k++) {
                size_t n = make(sizes[s], k, layout == 1);
                char what[96];
                snprintf(what, sizeof what, "message %llu at size %d (layout %d)",
                         (unsigned long long)k, sizes[s], layout);
                check_message(&rg, C->enc, n, what);
                size_t e = escape_keys(C->enc, n);
                snprintf(what, sizeof what, "message %llu at size %d (layout %d), keys escaped",
                         (unsigned long long)k, sizes[s], layout);
                check_message(&rg, C->esc, e, what);
            }
    /* a schema with optics to share a walk (that random messages reach:
     * support/reach.h) reads some of them: more messages while none hit
     * (an optic rare in random messages, a few lists deep) */
    int any = 0;
    for (int i = 0; i < S->noptics; i++)
        any += S->optics[i].member.mode != OP_M_NONE && op_from_message(S, i) &&
               rc_reaches(&S->optics[i]);
    for (uint64_t j = 0; any > 0 && C->hits == 0 && j < 3000; j++) {
        size_t n = make(2 + (int)(j % 39), 100 + j, j % 2 == 1);
        char what[96];
        snprintf(what, sizeof what, "message %llu at size %d", (unsigned long long)(100 + j),
                 2 + (int)(j % 39));
        check_message(&rg, C->enc, n, what);
    }
    fprintf(stderr, "test_level: %ld reads checked, %ld hits\n", C->reads, C->hits);
    REQUIRE(any == 0 || C->hits > 0);
}
END_TEST

/* Into C->tmp: [p, p+n) with a second tag member naming case c inserted
 * after the first member `"tag":"..."`; its length, or 0 when there is
 * none. */
static size_t second_tag(const uint8_t *p, size_t n, const op_member *m, int c)
{
    char pat[300];
    int pl = snprintf(pat, sizeof pat, "\"%.*s\":\"", (int)m->tag.n, m->tag.p);
    const uint8_t *q = NULL;
    for (size_t i = 0; i + (size_t)pl <= n && q == NULL; i++)
        if (memcmp(p + i, pat, (size_t)pl) == 0)
            q = p + i;
    if (q == NULL)
        return 0;
    const uint8_t *e = memchr(q + pl, '"', (size_t)(p + n - (q + pl)));
    if (e == NULL)
        return 0;
    size_t at = (size_t)(e + 1 - p);
    memcpy(C->tmp, p, at);
    int k = snprintf((char *)C->tmp + at, 600, ",%s%.*s\"", pat, (int)m->cases[c].n,
                     m->cases[c].p);
    memcpy(C->tmp + at + (size_t)k, p + at, n - at);
    return n + (size_t)k;
}

START_TEST(shared_walks_read_a_second_tag_as_the_scanners)
{
    if (!simd_use(_i))
        return;
    rg_rng rg;
    rg_seed(&rg, 0x74616773u, 3);
    long before = C->reads;
    for (int i = 0; i < S->noptics; i++) {
        const op_member *m = &S->optics[i].member;
        if (m->tag.p == NULL || m->tag.n > 200)
            continue;
        for (int layout = 0; layout < 2; layout++)
            for (uint64_t k = 0; k < 12; k++) {
                size_t n = make(3, 200 + k, layout == 1);
                for (int c = 0; c < m->ncases; c++) {
                    size_t t = second_tag(C->enc, n, m, c);
                    if (t == 0)
                        continue;
                    char what[160];
                    snprintf(what, sizeof what,
                             "message %llu (layout %d) with a second tag %.*s after the first",
                             (unsigned long long)k, layout, (int)m->cases[c].n, m->cases[c].p);
                    check_message(&rg, C->tmp, t, what);
                }
            }
    }
    fprintf(stderr, "test_level: %ld reads checked with a second tag\n", C->reads - before);
}
END_TEST

START_TEST(shared_walks_read_damaged_bytes_as_the_scanners)
{
    if (!simd_use(_i))
        return;
    bool widest = _i == SIMD_WIDTHS - 1 || !simd_use(_i + 1);
    REQUIRE(simd_use(_i));
    rounds = 2;
    static const uint8_t subst[] = {'"', '\\', '{', '}', '[', ']', ':', ',', ' ', 'u', 0x00,
                                    0x1f, 0xc3};
    rg_rng rg;
    rg_seed(&rg, 0x64616d67u, 2);
    for (int layout = 0; layout < 2; layout++) {
        size_t n = make(2, 100 + (uint64_t)layout, layout == 1);
        for (int esc = 0; esc < 2; esc++) {
            const uint8_t *src = C->enc;
            size_t len = n;
            if (esc) {
                len = escape_keys(C->enc, n);
                src = C->esc;
            }
            memcpy(C->tmp, src, len);
            char what[128];
            /* up to ~1200 positions evenly spread at the widest width the
             * CPU has, an eighth of them at the others */
            size_t step = (len / 1200 + 1) * (widest ? 1 : 8);
            for (size_t cut = 0; cut < len; cut += step) {
                if (!su_pick(cut, len))
                    continue;
                snprintf(what, sizeof what, "its first %zu bytes (layout %d%s)", cut, layout,
                         esc ? ", keys escaped" : "");
                check_message(&rg, C->tmp, cut, what);
            }
            for (size_t at = 0; at < len; at += step) {
                if (!su_pick(at, len))
                    continue;
                for (size_t s = 0; s < sizeof subst; s++) {
                    uint8_t keep = C->tmp[at];
                    if (keep == subst[s])
                        continue;
                    C->tmp[at] = subst[s];
                    snprintf(what, sizeof what, "byte %zu set to 0x%02x (layout %d%s)", at,
                             subst[s], layout, esc ? ", keys escaped" : "");
                    check_message(&rg, C->tmp, len, what);
                    C->tmp[at] = keep;
                }
            }
        }
    }
    fprintf(stderr, "test_level: %ld reads checked on damaged bytes, %ld hits\n", C->reads,
            C->hits);
}
END_TEST

static bool same_str(js_str a, js_str b) { return a.n == b.n && memcmp(a.p, b.p, a.n) == 0; }

/* The generated level matchers, for every optic with a first member: its
 * object's matcher lists its key and its union's tag where the table says;
 * the matcher finds each of its keys, spelled plainly or with spaces before
 * the ':', and no key in another string; a plan takes the optics of one
 * matcher only, and none whose key lies past the LV_LEVEL a plan maps. */
START_TEST(level_matchers_and_what_a_plan_takes)
{
    static op_optic copy[RU_MAX_OPTICS];
    ck_assert_int_le(S->noptics, RU_MAX_OPTICS);
    for (int i = 0; i < S->noptics; i++) {
        const op_member *m = &S->optics[i].member;
        const char *name = S->optics[i].name;
        if (m->mode == OP_M_NONE)
            continue;
        REQUIREF(m->level_key != NULL && m->level_keys != NULL && m->level_nkeys > 0,
                 "optic %s: no level matcher", name);
        if (m->mode == OP_M_FIELD)
            REQUIREF(m->key_at >= 0 && m->key_at < m->level_nkeys &&
                         same_str(m->level_keys[m->key_at], m->key),
                     "optic %s: its key is not at key_at in its level's keys", name);
        else
            REQUIREF(m->key_at == -1, "optic %s: key_at %d, it has no key", name, m->key_at);
        if (m->tag.p != NULL)
            REQUIREF(m->tag_at >= 0 && m->tag_at < m->level_nkeys &&
                         same_str(m->level_keys[m->tag_at], m->tag) && m->level_case != NULL,
                     "optic %s: its tag is not at tag_at in its level's keys", name);
        else
            REQUIREF(m->tag_at == -1, "optic %s: tag_at %d, it has no tag", name, m->tag_at);
        /* each of the level's keys, as a candidate string: found, with its value */
        for (int k = 0; k < m->level_nkeys; k++) {
            js_str key = m->level_keys[k];
            bool plain = true;
            for (size_t b = 0; b < key.n; b++)
                plain = plain && key.p[b] != '"' && key.p[b] != '\\' && (uint8_t)key.p[b] >= 0x20;
            if (!plain || key.n > 200)
                continue; /* spelled with escapes only: the slow path's (test above) */
            char buf[256];
            const uint8_t *val = NULL;
            for (int spaced = 0; spaced < 2; spaced++) {
                int len = snprintf(buf, sizeof buf, "\"%.*s\"%s:7", (int)key.n, key.p,
                                   spaced ? " \t" : "");
                const uint8_t *p = (const uint8_t *)buf;
                int x = m->level_key(p, p + len, &val);
                REQUIREF(x == k && val == p + len - 1,
                         "optic %s: level key %d (%.*s) matched as %d", name, k, (int)key.n,
                         key.p, x);
                /* the same bytes as a longer string, and cut before the ':' */
                len = snprintf(buf, sizeof buf, "\"%.*sx\":7", (int)key.n, key.p);
                x = m->level_key(p, p + len, &val);
                REQUIREF(x == -1 || (m->level_keys[x].n == key.n + 1 &&
                                     memcmp(m->level_keys[x].p, buf + 1, key.n + 1) == 0),
                         "optic %s: \"%.*sx\" matched as key %d", name, (int)key.n, key.p, x);
                len = snprintf(buf, sizeof buf, "\"%.*s\"", (int)key.n, key.p);
                x = m->level_key(p, p + len, &val);
                REQUIREF(x == -1, "optic %s: a key cut before its ':' matched as %d", name, x);
            }
        }
        /* a plan of this optic takes no optic of another matcher */
        lv_plan pl;
        lv_plan_init(&pl, S);
        bool took = lv_plan_add(&pl, i);
        REQUIREF(took == plannable(i), "optic %s: an empty plan %s it", name,
                 took ? "took" : "refused");
        if (!took)
            continue;
        for (int j = 0; j < S->noptics; j++) {
            const op_member *o = &S->optics[j].member;
            if (o->mode != OP_M_NONE && o->level_key != m->level_key) {
                lv_plan q = pl;
                REQUIREF(!lv_plan_add(&q, j), "a plan of %s took %s, of another object", name,
                         S->optics[j].name);
            }
        }
    }
    /* past LV_LEVEL, or without a matcher: read alone */
    if (S->noptics > 0) /* (optics is NULL for a schema with none) */
        memcpy(copy, S->optics, (size_t)S->noptics * sizeof copy[0]);
    op_schema s2 = *S;
    s2.optics = copy;
    for (int i = 0; i < S->noptics; i++) {
        if (copy[i].member.mode != OP_M_FIELD)
            continue;
        lv_plan pl;
        copy[i].member.key_at = LV_LEVEL;
        lv_plan_init(&pl, &s2);
        REQUIREF(!lv_plan_add(&pl, i), "optic %s: a plan took a key past LV_LEVEL",
                 copy[i].name);
        copy[i].member.key_at = S->optics[i].member.key_at;
        copy[i].member.level_key = NULL;
        lv_plan_init(&pl, &s2);
        REQUIREF(!lv_plan_add(&pl, i), "optic %s: a plan took it without a matcher",
                 copy[i].name);
        copy[i].member.level_key = S->optics[i].member.level_key;
        lv_plan_init(&pl, &s2);
        REQUIREF(lv_plan_add(&pl, i) == plannable(i), "optic %s: restored, a plan %s it",
                 copy[i].name, plannable(i) ? "refuses" : "takes");
    }
}
END_TEST

static Suite *level_suite(void)
{
    Suite *s = suite_create("level");
    TCase *tc = su_tcase(s, "shared walks", setup, fx_teardown, 600);
    /* each at every SIMD width the CPU has (the walks' blocks differ) */
    tcase_add_loop_test(tc, shared_walks_read_what_the_scanners_read, 0, SIMD_WIDTHS);
    tcase_add_loop_test(tc, shared_walks_read_a_second_tag_as_the_scanners, 0, SIMD_WIDTHS);
    tcase_add_loop_test(tc, shared_walks_read_damaged_bytes_as_the_scanners, 0, SIMD_WIDTHS);
    tcase_add_test(tc, level_matchers_and_what_a_plan_takes);
    return s;
}

int main(void)
{
    fprintf(stderr, "test_level: schema %s, %d optics\n", S->schema, S->noptics);
    return su_run(level_suite());
}
