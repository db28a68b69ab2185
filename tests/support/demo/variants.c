/* variants.c: re-writing a message (variants.h). */
#include "variants.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "support/demo/optics.h"
#include "support/suite.h"
#include "tr_model.h"

const char *const vr_names[V_COUNT] = {
    "pretty", "shuffled", "type-last", "escaped-keys", "escaped-values", "unknown-fields",
    "nulls",  "first",    "nasty-strings", "all", "all-first", "light"};

/* Each wanted key, with a decoy value of its type (one a careless reader
 * would keep: Sev1, Critical, Payments, Enterprise, 200 votes). */
static const struct {
    const char *key, *decoy;
} wanted[] = {
    {"detail", "{\"type\":\"Incident\",\"severity\":\"Sev1\",\"impact\":{\"service\":{\"tier\":\"Critical\"}}}"},
    {"type", "\"Incident\""},
    {"severity", "\"Sev1\""},
    {"impact", "{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\",\"tier\":\"Critical\",\"region\":\"r\"}}"},
    {"service", "{\"tier\":\"Critical\"}"},
    {"tier", "\"Critical\""},
    {"trace", "{\"frames\":[{\"module\":\"Payments\"}]}"},
    {"frames", "[{\"module\":\"Payments\"}]"},
    {"module", "\"Payments\""},
    {"requester", "{\"contract\":{\"plan\":\"Enterprise\"}}"},
    {"contract", "{\"plan\":\"Enterprise\"}"},
    {"plan", "\"Enterprise\""},
    {"votes", "{\"count\":200}"},
    {"count", "200"},
};

const char *vr_decoy_of(const char *key)
{
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (strcmp(wanted[i].key, key) == 0)
            return wanted[i].decoy;
    ck_abort_msg("no decoy for %s", key);
    return NULL;
}

/* A JSON text as the raw content of a string (quotes and backslashes escaped). */
static const char *as_string_raw(const char *json)
{
    size_t n = strlen(json);
    char *d = tj_alloc(2 * n + 1), *w = d;
    for (size_t i = 0; i < n; i++) {
        if (json[i] == '"' || json[i] == '\\')
            *w++ = '\\';
        *w++ = json[i];
    }
    *w = 0;
    return d;
}

/* Unknown members around wanted key K in object o, at random places (the
 * first at the front, so before the real member). */
static void add_decoys(tj *o, const char *K, rng_state *rng)
{
    const char *dj = vr_decoy_of(K);
    char k[96], v[512];
    size_t kl = strlen(K);
    int added = 0;
#define AT() (added++ == 0 ? 0 : (size_t)rng_below(rng, o->count + 1))
    snprintf(k, sizeof k, "%sX", K); /* same start, longer */
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%ss", K);
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%.*s", (int)(kl - 1), K); /* a proper prefix */
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%c%s", K[0] - 32, K + 1); /* another case */
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%.*s\\u00%02X", (int)(kl - 1), K, K[kl - 1] - 32); /* escaped, other case */
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%s\\u0000", K); /* escaped, longer */
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "%s ", K);
    tj_insert_key(o, AT(), k, tj_parse0(dj));
    snprintf(k, sizeof k, "z_%s", K); /* a string value equal to the key */
    tj_insert_key(o, AT(), k, tj_str(K));
    snprintf(k, sizeof k, "%.1s", K); /* key: K's first letter; value: K */
    if (tj_find(o, k) < 0)
        tj_insert_key(o, AT(), k, tj_str(K));
    snprintf(k, sizeof k, "n_%s", K); /* K inside a nested object */
    snprintf(v, sizeof v, "{\"%s\":%s,\"x\":{\"%s\":%s}}", K, dj, K, dj);
    tj_insert_key(o, AT(), k, tj_parse0(v));
    snprintf(k, sizeof k, "a_%s", K); /* K inside arrays */
    snprintf(v, sizeof v, "[\"%s\",{\"%s\":%s},[[%s]],\"%s\"]", K, K, dj, dj, K);
    tj_insert_key(o, AT(), k, tj_parse0(v));
    snprintf(k, sizeof k, "s_%s", K); /* K and its decoy inside a string */
    snprintf(v, sizeof v, "\"%s\":%s", K, dj);
    tj_insert_key(o, AT(), k, tj_str(as_string_raw(v)));
#undef AT
}

/* The fields whose strings name an enum's case or a union's case: learnt
 * from the decoder, which names the field when it rejects a value as no
 * case (TR_E_ENUM, TR_E_TAG), so no schema's enum fields are listed here.
 * Their values (and the strings of a list or map under them) stay as they
 * are; vr_make learns one and tries again when a nasty string lands
 * on one. */
#define MAX_ENUM_KEYS 64
static char enum_keys[MAX_ENUM_KEYS][64];
static int n_enum_keys;

static bool is_enum_key(const char *k, size_t kn)
{
    for (int i = 0; i < n_enum_keys; i++)
        if (strlen(enum_keys[i]) == kn && memcmp(enum_keys[i], k, kn) == 0)
            return true;
    return false;
}

/* false when it is known already (or there is no room). */
static bool learn_enum_key(const char *k)
{
    if (k == NULL || strlen(k) >= sizeof enum_keys[0] || n_enum_keys == MAX_ENUM_KEYS ||
        is_enum_key(k, strlen(k)))
        return false;
    snprintf(enum_keys[n_enum_keys++], sizeof enum_keys[0], "%s", k);
    return true;
}

/* Raw string contents that trip a careless skipper. */
static const char *const nasty[] = {
    "\\\"detail\\\":{\\\"type\\\":\\\"Incident\\\",\\\"severity\\\":\\\"Sev1\\\"}",
    "\\\\",
    "\\\\\\\\\\\"",
    "}}]]}",
    "{{[[{",
    "\\\\\\\"",
    "d\\\\",
    "t\\\"",
    "\\u0064etail",
    "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80 caf\xc3\xa9",
    "\\ud83d\\ude00\\uD83D\\uDE00",
    "\\b\\f\\n\\r\\t\\/\\u0000\\u001f",
    "detail",
    "type",
    "severity",
    "",
    "{\\\"detail\\\":[\\\"\\\\\\\\\\\"]}",
};

static const char *nasty_pick(rng_state *rng)
{
    size_t i = (size_t)rng_below(rng, sizeof nasty / sizeof nasty[0] + 1);
    if (i == sizeof nasty / sizeof nasty[0]) {
        /* a long string with quotes and backslashes at varied offsets */
        char *d = tj_alloc(400);
        size_t n = 0, len = 40 + (size_t)rng_below(rng, 200);
        while (n < len) {
            switch (rng_below(rng, 8)) {
            case 0: d[n++] = '\\'; d[n++] = '"'; break;
            case 1: d[n++] = '\\'; d[n++] = '\\'; break;
            case 2: d[n++] = "{}[]"[rng_below(rng, 4)]; break;
            default: d[n++] = "detail type"[rng_below(rng, 11)]; break;
            }
        }
        d[n] = 0;
        return d;
    }
    return nasty[i];
}

/* Replaces free-text string values (not enum values, not keys) at random.
 * The random choices do not depend on which keys are known to be enums, so
 * learning one more changes only the values under it. in_enum: v is the
 * value of an enum field (a list or map of cases). */
static void put_nasty(tj *v, rng_state *rng, bool in_enum)
{
    for (size_t i = 0; i < v->count; i++) {
        tj *c = v->items[i];
        bool enum_key = v->t == TJ_OBJ && is_enum_key(v->keys[i], v->klen[i]);
        if (c->t == TJ_STR) {
            if (rng_below(rng, 3) == 0) {
                const char *s = nasty_pick(rng);
                if (!in_enum && !enum_key)
                    v->items[i] = tj_str(s);
            }
        } else if (c->t == TJ_OBJ || c->t == TJ_ARR) {
            put_nasty(c, rng, enum_key);
        }
    }
}

/* Empty lists and maps left out, at every level. */
static void drop_empty(tj *v)
{
    for (size_t i = 0; i < v->count;) {
        tj *c = v->items[i];
        if (v->t == TJ_OBJ && (c->t == TJ_ARR || c->t == TJ_OBJ) && c->count == 0) {
            tj_remove(v, i);
            continue;
        }
        if (c->t == TJ_OBJ || c->t == TJ_ARR)
            drop_empty(c);
        i++;
    }
}

/* Optional fields absent in the message written as null; empty lists and maps left out. */
static void nulls(tj *root, rng_state *rng)
{
    static const char *const opt[] = {"resolution", "dueAt", "resolvedAt", "parentId"};
    drop_empty(root);
    for (size_t i = 0; i < 4; i++)
        if (tj_find(root, opt[i]) < 0)
            tj_insert_key(root, (size_t)rng_below(rng, root->count + 1), opt[i], tj_parse0("null"));
}

/* The objects along the optics' paths, for decoys and tag placement. */
typedef struct {
    tj *root, *detail, *path[8];
    const char *pkey[8];
    int npath;
} paths;

static void find_paths(tj *root, paths *ps)
{
    memset(ps, 0, sizeof *ps);
    ps->root = root;
    ps->detail = tj_get(root, "detail");
    REQUIRE(ps->detail != NULL);
    tj *d = ps->detail, *x;
#define ADD(obj, key)                                                                   \
    do {                                                                                \
        if ((obj) != NULL && (obj)->t == TJ_OBJ) {                                      \
            ps->path[ps->npath] = (obj);                                                \
            ps->pkey[ps->npath++] = (key);                                              \
        }                                                                               \
    } while (0)
    if ((x = tj_get(d, "impact")) != NULL) {
        ADD(x, "service");
        ADD(tj_get(x, "service"), "tier");
    }
    if ((x = tj_get(d, "trace")) != NULL) {
        ADD(x, "frames");
        tj *f = tj_get(x, "frames");
        if (f != NULL && f->t == TJ_ARR && f->count > 0)
            ADD(f->items[0], "module");
    }
    if ((x = tj_get(d, "requester")) != NULL) {
        ADD(x, "contract");
        ADD(tj_get(x, "contract"), "plan");
    }
    ADD(tj_get(d, "votes"), "count");
#undef ADD
}

static void decoys(tj *root, rng_state *rng)
{
    paths ps;
    find_paths(root, &ps);
    tj *d = ps.detail;
    const char *kind = d->items[tj_find(d, "type")]->s;
    /* inside detail: the tag's look-alikes, every case's wanted keys (a
     * foreign case's are unknown fields here), and severityScore */
    static const char *const dkeys[] = {"type", "severity", "impact", "trace", "votes", "requester"};
    for (size_t i = 0; i < 6; i++)
        add_decoys(d, dkeys[i], rng);
    if (strncmp(kind, "Incident", 8) != 0) {
        tj_insert_key(d, 0, "severity", tj_parse0("\"Sev1\""));
        tj_insert_key(d, (size_t)rng_below(rng, d->count + 1), "impact", tj_parse0(vr_decoy_of("impact")));
    }
    if (strncmp(kind, "Bug", 3) != 0)
        tj_insert_key(d, (size_t)rng_below(rng, d->count + 1), "trace", tj_parse0(vr_decoy_of("trace")));
    if (strncmp(kind, "Request", 7) != 0) {
        tj_insert_key(d, (size_t)rng_below(rng, d->count + 1), "votes", tj_parse0("{\"count\":200}"));
        tj_insert_key(d, (size_t)rng_below(rng, d->count + 1), "requester",
                      tj_parse0("{\"name\":\"n\",\"contract\":{\"plan\":\"Enterprise\",\"seats\":1,\"renewsAt\":2}}"));
    }
    tj_insert_key(d, (size_t)rng_below(rng, d->count + 1), "severityScore", tj_parse0("1.5"));
    tj_insert_key(d, (size_t)rng_below(rng, d->count + 1), "detail", tj_parse0(vr_decoy_of("detail")));
    for (int i = 0; i < ps.npath; i++)
        add_decoys(ps.path[i], ps.pkey[i], rng);
    /* at the root, before detail: look-alikes of detail; severityScore is a real field there */
    add_decoys(root, "detail", rng);
    long at = tj_find(root, "detail");
    tj_insert_key(root, (size_t)rng_below(rng, (uint64_t)at + 1), "Detail", tj_parse0(vr_decoy_of("detail")));
    tj_insert_key(root, 0, "x", tj_str("detail"));
    /* and nested under other records: Person, Team, Org are objects too */
    tj *rep = tj_get(root, "reporter");
    if (rep != NULL) {
        tj_insert_key(rep, 0, "detail", tj_parse0(vr_decoy_of("detail")));
        tj *team = tj_get(rep, "team");
        if (team != NULL)
            tj_insert_key(team, team->count, "detail", tj_parse0(vr_decoy_of("detail")));
    }
}

/* A few look-alikes only (a smaller message, for the quadratic tests). */
static void light_decoys(tj *root)
{
    tj *d = tj_get(root, "detail");
    tj_insert_key(d, 0, "typeX", tj_str("Bug"));
    tj_insert_key(d, 1, "x", tj_str("type"));
    tj_insert_key(d, 2, "severityScore", tj_parse0("1.5"));
    tj_insert_key(d, 3, "n", tj_parse0("{\"type\":\"Request\",\"severity\":\"Sev1\",\"votes\":{\"count\":200}}"));
    long i = tj_find(root, "detail");
    tj_insert_key(root, (size_t)i, "detailX", tj_parse0(vr_decoy_of("detail")));
    tj_insert_key(root, (size_t)i, "x", tj_str("detail"));
    tj_insert_key(root, (size_t)i, "s", tj_str("\\\"detail\\\":{\\\\"));
}

/* Moves detail's tag: 1 last, 2 anywhere but first. */
void vr_place_tag(tj *root, int how, rng_state *rng)
{
    tj *d = tj_get(root, "detail");
    long t = tj_find(d, "type");
    REQUIRE(t >= 0);
    if (d->count < 2)
        return;
    size_t to = how == 1 ? d->count - 1 : 1 + (size_t)rng_below(rng, d->count - 1);
    tj_move(d, (size_t)t, to);
}

void vr_detail_first(tj *root)
{
    long i = tj_find(root, "detail");
    REQUIRE(i >= 0);
    tj_move(root, (size_t)i, 0);
}

/* Variant v of the message [m, m+n) (a compact encoding), once. */
static size_t make_variant_once(const uint8_t *m, size_t n, int v, uint64_t seed, uint8_t *out,
                                size_t cap)
{
    rng_state rng = {seed * 0x9E3779B97F4A7C15ull + (uint64_t)v * 7919u + 1};
    tj_reset();
    tj *root = tj_parse((const char *)m, n);
    bool pretty = false;
    int ek = 0, ev = 0;
    switch (v) {
    case V_PRETTY:
        pretty = true;
        break;
    case V_SHUFFLE:
        tj_shuffle(root, &rng);
        vr_place_tag(root, 2, &rng);
        break;
    case V_TYPE_LAST:
        vr_place_tag(root, 1, &rng);
        break;
    case V_ESC_KEYS:
        ek = 350;
        break;
    case V_ESC_VALS:
        ev = 350;
        break;
    case V_UNKNOWN:
        decoys(root, &rng);
        break;
    case V_NULLS:
        nulls(root, &rng);
        break;
    case V_FIRST:
        vr_detail_first(root);
        break;
    case V_NASTY:
        put_nasty(root, &rng, false);
        break;
    case V_LIGHT:
        nulls(root, &rng);
        light_decoys(root);
        tj_shuffle(root, &rng);
        vr_place_tag(root, 1, &rng);
        if (rng_below(&rng, 2))
            vr_detail_first(root);
        pretty = true;
        ek = 200;
        ev = 200;
        break;
    case V_ALL:
    case V_ALL2:
        put_nasty(root, &rng, false);
        nulls(root, &rng);
        decoys(root, &rng);
        tj_shuffle(root, &rng);
        vr_place_tag(root, rng_below(&rng, 2) ? 1 : 2, &rng);
        if (v == V_ALL2)
            vr_detail_first(root);
        pretty = true;
        ek = 200;
        ev = 200;
        break;
    default:
        ck_abort();
    }
    return tj_write(root, out, cap, rng.s, pretty, ek, ev);
}

/* Variant v of the message [m, m+n): when a nasty string replaced an enum
 * value (the decoder names the field), that field is learnt and the
 * variant made again, from the same seed. */
size_t vr_make(const uint8_t *m, size_t n, int v, uint64_t seed, uint8_t *out, size_t cap)
{
    for (;;) {
        size_t vn = make_variant_once(m, n, v, seed, out, cap);
        if (v != V_NASTY && v != V_ALL && v != V_ALL2)
            return vn;
        tr_Issue is;
        ar_reset(&oc_arena);
        tr_error e = tr_decode_Issue(out, vn, &oc_arena, &is);
        if ((e.code != TR_E_ENUM && e.code != TR_E_TAG) || !learn_enum_key(e.what))
            return vn;
    }
}
