/* test_model.c: the properties every schema's generated code has, whatever
 * the schema. Everything is reached through the tables the generator emits
 * (tr_schema, runtime/optic.h): no type, field, optic or case is named here,
 * so the suite builds and runs unchanged on any schema the checker accepts
 * (make test runs it on schema/issue.schema and on every tests/models/).
 *
 *   - every type: random value -> encode -> decode -> encode gives the same
 *     bytes (the decoder keeps everything the encoder writes);
 *   - the root, in both layouts: the same, and the validator returns the
 *     decoder's verdict, code and offset, on the messages and on every
 *     prefix and many single-byte corruptions of some of them; the views it
 *     hands back are the scanners';
 *   - every optic: the scanner over the bytes and the getter over the decoded
 *     value agree, hit for hit, value for value, on values of its source
 *     type and (where the optic can be read from a message) on whole
 *     messages, at sizes 2..40, and on every corrupted message the decoder
 *     still accepts;
 *   - every optic a message can reach hits on some generated message (a
 *     scanner that always missed would agree with nothing to compare).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optic.h"
#include "support/fixture.h"
#include "support/reach.h"
#include "support/rng.h"
#include "support/suite.h"
#include "support/tree.h"

/* The schema's tables (runtime/optic.h), which the generated
 * tr_optics_table.c defines: the suite includes no generated header, so it
 * is compiled once and linked with the code generated for each schema. */
extern const op_schema tr_schema;

#define ARENA_BYTES (64u << 20)
#define BUF_BYTES (8u << 20)
#define SCRATCH_BYTES (64u << 10)

static const op_schema *S = &tr_schema;

typedef struct {
    ar_arena gen, dec, scan;
    uint8_t *enc, *re, *tmp;
    void *value, *decoded;      /* root-sized (or any type's) structs */
    _Alignas(16) uint8_t scratch[SCRATCH_BYTES];
} ctx;

static ctx *C;

static void setup(void)
{
    C = fx_zalloc(sizeof *C);
    fx_arena(&C->gen, ARENA_BYTES);
    fx_arena(&C->dec, ARENA_BYTES);
    fx_arena(&C->scan, ARENA_BYTES);
    C->enc = fx_alloc(BUF_BYTES);
    C->re = fx_alloc(BUF_BYTES);
    C->tmp = fx_alloc(BUF_BYTES);
    size_t most = 0;
    for (int t = 0; t < S->ntypes; t++)
        if (S->types[t].size > most)
            most = S->types[t].size;
    C->value = fx_zalloc(most + 16);
    C->decoded = fx_zalloc(most + 16);
    for (int i = 0; i < S->noptics; i++)
        REQUIREF(S->optics[i].rec_size <= SCRATCH_BYTES, "optic %s: record of %zu bytes",
                 S->optics[i].name, S->optics[i].rec_size);
}

/* ---- comparing what the two readers say */

/* Why a scanner's value and a getter's differ (NULL: they agree). Raw
 * bytes are compared with the getter's value re-encoded, which holds for
 * messages our encoder wrote (canonical: no whitespace, declared order
 * below the root); for other bytes the caller passes canonical false. */
static const char *differ(const op_optic *o, const op_value *scanned, const op_value *got,
                          bool canonical)
{
    switch (o->kind) {
    case OP_BOOL:
        return scanned->b == got->b ? NULL : "bool differs";
    case OP_I32:
    case OP_I64:
        return scanned->i == got->i ? NULL : "integer differs";
    case OP_F64:
        if (isnan(scanned->f) || isnan(got->f))
            return "NaN read";
        return memcmp(&scanned->f, &got->f, sizeof(double)) == 0 ? NULL : "f64 differs";
    case OP_STRING:
        return scanned->s.n == got->s.n && memcmp(scanned->s.p, got->s.p, got->s.n) == 0
                   ? NULL
                   : "string differs";
    case OP_ENUM:
    case OP_TAG:
        if (scanned->e < 0 || scanned->e >= o->ncases)
            return "case index out of range";
        return scanned->e == got->e ? NULL : "case differs";
    case OP_RECORD: {
        uint8_t *a = o->encode(C->re, C->re + BUF_BYTES / 2, scanned->ptr);
        uint8_t *b = o->encode(C->re + BUF_BYTES / 2, C->re + BUF_BYTES, got->ptr);
        if (a == NULL || b == NULL)
            return "record does not encode";
        size_t na = (size_t)(a - C->re), nb = (size_t)(b - (C->re + BUF_BYTES / 2));
        return na == nb && memcmp(C->re, C->re + BUF_BYTES / 2, na) == 0 ? NULL
                                                                          : "record differs";
    }
    case OP_RAW: {
        if (!canonical)
            return NULL;
        uint8_t *b = o->encode(C->re, C->re + BUF_BYTES, got->ptr);
        if (b == NULL)
            return "raw value does not encode";
        size_t nb = (size_t)(b - C->re);
        return scanned->bytes.n == nb && memcmp(scanned->bytes.p, C->re, nb) == 0
                   ? NULL
                   : "raw bytes differ from the value re-encoded";
    }
    }
    return "unknown optic kind";
}

/* Optic i over bytes and over their decoded value: they must agree.
 * message: the bytes are a whole message and v its decoded root (read
 * through the optic's base where it has one); else the bytes are one value
 * of the optic's source type and v that value decoded. Returns 1 on a hit. */
static int agree(int i, bool message, const uint8_t *p, size_t n, const void *v, bool canonical,
                 const char *where)
{
    const op_optic *o = &S->optics[i];
    op_value sv, gv;
    memset(&sv, 0, sizeof sv);
    memset(&gv, 0, sizeof gv);
    ar_reset(&C->scan);
    bool sh = message ? op_scan_message(S, i, p, n, &sv, C->scratch, &C->scan)
                      : o->scan(p, n, &sv, C->scratch, &C->scan);
    bool gh = message ? op_get_message(S, i, v, &gv) : o->get(v, &gv);
    REQUIREF(sh == gh, "optic %s (%s) on %s: scanner %s, getter %s", o->name, o->path, where,
             sh ? "hit" : "missed", gh ? "hit" : "missed");
    if (!sh)
        return 0;
    const char *why = differ(o, &sv, &gv, canonical);
    REQUIREF(why == NULL, "optic %s (%s) on %s: %s", o->name, o->path, where, why);
    return 1;
}

/* ---- making values */

/* Value k of type t at size: random, encoded into C->enc; its length. The
 * root may be encoded with its first_field in front (first). */
static size_t make(int t, int size, uint64_t k, bool first)
{
    const op_type *ty = &S->types[t];
    rg_rng rg;
    rg_seed(&rg, 0x6d6f64656cull ^ (uint64_t)t << 32 ^ (uint64_t)size << 16, k);
    ar_reset(&C->gen);
    memset(C->value, 0, ty->size);
    ty->random(&rg, &C->gen, size, C->value);
    uint8_t *w = first ? S->encode_first(C->enc, C->enc + BUF_BYTES, C->value, S->first_field)
                       : ty->encode(C->enc, C->enc + BUF_BYTES, C->value);
    REQUIREF(w != NULL, "%s at size %d does not fit %u bytes", ty->name, size, BUF_BYTES);
    return (size_t)(w - C->enc);
}

/* Decodes C->enc[0, n) as type t into C->decoded; the error. */
static tr_error decode(int t, const uint8_t *p, size_t n)
{
    ar_reset(&C->dec);
    memset(C->decoded, 0, S->types[t].size);
    return S->types[t].decode(p, n, &C->dec, C->decoded);
}

static bool same_error(tr_error a, tr_error b)
{
    return a.code == b.code && (a.code == TR_E_OK || a.offset == b.offset);
}

/* ---- the properties */

START_TEST(tables_are_consistent)
{
    REQUIRE(S->ntypes > 0);
    REQUIRE(S->root >= 0 && S->root < S->ntypes);
    REQUIRE(S->encode_first != NULL && S->validate != NULL && S->validate_views != NULL);
    REQUIRE(S->kind >= -1 && S->kind < S->noptics);
    if (S->kind >= 0) {
        REQUIRE(S->optics[S->kind].kind == OP_TAG);
        REQUIRE(op_from_message(S, S->kind));
    }
    for (int t = 0; t < S->ntypes; t++) {
        const op_type *ty = &S->types[t];
        REQUIRE(ty->name != NULL && ty->size > 0);
        REQUIRE(ty->random != NULL && ty->encode != NULL && ty->decode != NULL);
        REQUIREF(op_find_type(S, ty->name) == t, "type %s is listed twice", ty->name);
    }
    for (int i = 0; i < S->noptics; i++) {
        const op_optic *o = &S->optics[i];
        REQUIREF(op_find(S, o->name, strlen(o->name)) == i, "optic %s is listed twice", o->name);
        REQUIRE(o->scan != NULL && o->get != NULL && o->path != NULL && o->focus != NULL);
        REQUIRE(o->source >= 0 && o->source < S->ntypes);
        REQUIRE(o->source_is_root == (o->source == S->root));
        if (o->kind == OP_ENUM || o->kind == OP_TAG) {
            REQUIRE(o->cases != NULL && o->ncases > 0);
            for (int c = 0; c < o->ncases; c++)
                REQUIRE(o->cases[c].p != NULL && o->cases[c].n == strlen(o->cases[c].p));
        }
        REQUIRE((o->kind == OP_RECORD) == (o->rec_size > 0));
        REQUIRE((o->kind == OP_RECORD || o->kind == OP_RAW) == (o->encode != NULL));
        if (o->base >= 0) {
            REQUIRE(!o->source_is_root && o->base < S->noptics);
            const op_optic *b = &S->optics[o->base];
            REQUIREF(b->kind == OP_RAW && b->source_is_root &&
                         strcmp(b->focus, S->types[o->source].name) == 0,
                     "optic %s: its base %s is not a raw optic from the root onto %s", o->name,
                     b->name, S->types[o->source].name);
        }
    }
}
END_TEST

START_TEST(every_type_round_trips)
{
    for (int t = 0; t < S->ntypes; t++)
        for (int size = 2; size <= 40; size++)
            for (uint64_t k = 0; k < 3; k++) {
                size_t n = make(t, size, k, false);
                tr_error e = decode(t, C->enc, n);
                REQUIREF(e.code == TR_E_OK, "%s size %d #%llu: decode fails: %s at %zu",
                         S->types[t].name, size, (unsigned long long)k, tr_error_name(e.code),
                         e.offset);
                uint8_t *w = S->types[t].encode(C->tmp, C->tmp + BUF_BYTES, C->decoded);
                REQUIRE(w != NULL);
                REQUIREF((size_t)(w - C->tmp) == n && memcmp(C->tmp, C->enc, n) == 0,
                         "%s size %d #%llu: decode then encode gives other bytes",
                         S->types[t].name, size, (unsigned long long)k);
            }
}
END_TEST

/* The validator with views: the same verdict, and each view it hands back
 * (raw optics on one member of the root) is the scanner's. */
static void views_are_the_scanners(size_t n)
{
    static op_value views[1024];
    static bool has[1024];
    REQUIRE(S->noptics <= 1024);
    memset(has, 0, sizeof has);
    ar_reset(&C->scan);
    tr_error v = S->validate_views(C->enc, n, &C->scan, views, has);
    REQUIREF(v.code == TR_E_OK, "validate_views rejects a message: %s", tr_error_name(v.code));
    for (int i = 0; i < S->noptics; i++) {
        if (!has[i])
            continue;
        const op_optic *o = &S->optics[i];
        REQUIREF(o->kind == OP_RAW && o->source_is_root, "a view for optic %s", o->name);
        op_value sv;
        ar_reset(&C->scan);
        REQUIREF(o->scan(C->enc, n, &sv, C->scratch, &C->scan), "optic %s: a view, no scan",
                 o->name);
        /* the same bytes of the message; an absent list or map is "[]" or
         * "{}" for both, from wherever each keeps it */
        bool inside = views[i].bytes.p >= C->enc && views[i].bytes.p < C->enc + n;
        REQUIREF(sv.bytes.n == views[i].bytes.n &&
                     (inside ? sv.bytes.p == views[i].bytes.p
                             : memcmp(sv.bytes.p, views[i].bytes.p, sv.bytes.n) == 0),
                 "optic %s: the validator's view is not the scanner's", o->name);
    }
}

START_TEST(root_round_trips_and_validates_in_both_layouts)
{
    for (int layout = 0; layout < 2; layout++)
        for (int size = 2; size <= 40; size++)
            for (uint64_t k = 0; k < 4; k++) {
                size_t n = make(S->root, size, k, layout == 1);
                tr_error e = decode(S->root, C->enc, n);
                REQUIREF(e.code == TR_E_OK, "message size %d layout %d: %s at %zu", size,
                         layout, tr_error_name(e.code), e.offset);
                ar_reset(&C->scan);
                tr_error v = S->validate(C->enc, n, &C->scan);
                REQUIREF(v.code == TR_E_OK, "validator rejects a message: %s at %zu",
                         tr_error_name(v.code), v.offset);
                views_are_the_scanners(n);
                uint8_t *w = layout == 1
                                 ? S->encode_first(C->tmp, C->tmp + BUF_BYTES, C->decoded,
                                                   S->first_field)
                                 : S->types[S->root].encode(C->tmp, C->tmp + BUF_BYTES,
                                                            C->decoded);
                REQUIRE(w != NULL);
                REQUIREF((size_t)(w - C->tmp) == n && memcmp(C->tmp, C->enc, n) == 0,
                         "message size %d layout %d: decode then encode differs", size, layout);
            }
}
END_TEST

/* Each value or message is made and decoded once, then read through every
 * optic it is a source for (the optics read nothing but C->enc and
 * C->decoded).
 *
 * Each test also asks that every optic hit at least once, so that it is not
 * vacuous. A fixed set of values or messages comes first (the same on every
 * run); an optic rare in random values (a case of a union inside a case of
 * another, a map's "k5") may have no hit in it, and then more are made, up
 * to EXTRA, until every optic hit: a schema's rare optic is no failure, an
 * optic that never hits in all of them is. But for one random values may
 * not reach (support/reach.h): a note says so when it did not hit. */
#define EXTRA 3000

/* Message j of the smaller set two tests make (its size and seed): sizes 2
 * to 20 in steps of 3, six messages each (the first 42); then more, the
 * sizes 2 to 40 in turn. */
static void small_set(uint64_t j, int *size, uint64_t *k)
{
    *size = j < 42 ? 2 + 3 * (int)(j / 6) : 2 + (int)(j % 39);
    *k = j < 42 ? j % 6 : j;
}

/* Whether optic i must hit in random values. */
static bool must_hit(int i) { return rc_reaches(&S->optics[i]); }

/* Whether an optic that pred admits and must hit has no hit yet. */
static bool unhit(const int *hits, bool (*pred)(int i, int t), int t)
{
    for (int i = 0; i < S->noptics; i++)
        if (pred(i, t) && must_hit(i) && hits[i] == 0)
            return true;
    return false;
}

static bool of_source(int i, int t) { return S->optics[i].source == t; }
static bool of_message(int i, int t)
{
    (void)t;
    return op_from_message(S, i);
}

/* After made values or messages (base of them the fixed set), each optic
 * pred admits hit, or, one random values may not reach, gets a note. */
static void require_hits(const int *hits, bool (*pred)(int i, int t), int t, int made, int base,
                         const char *what)
{
    if (made > base)
        printf("test_model: %d %s made until every optic hit\n", made, what);
    for (int i = 0; i < S->noptics; i++) {
        const op_optic *o = &S->optics[i];
        if (!pred(i, t) || hits[i] > 0)
            continue;
        if (must_hit(i))
            REQUIREF(false, "optic %s (%s) never hit on %d %s", o->name, o->path, made, what);
        printf("test_model: %s: optic %s (%s), %d lists and maps deep, list item %d at "
               "most (-1: none), may not hit in random values, and did not\n",
               what, o->name, o->path, o->containers, o->index_max);
    }
}

START_TEST(every_optic_agrees_on_values_of_its_source)
{
    int *hits = calloc((size_t)S->noptics + 1, sizeof *hits);
    REQUIRE(hits != NULL);
    for (int t = 0; t < S->ntypes; t++) {
        bool source = false;
        for (int i = 0; i < S->noptics; i++)
            source |= of_source(i, t);
        if (!source)
            continue;
        /* sizes 2 to 40, six values each; then more, sizes in turn */
        int made = 0;
        for (uint64_t j = 0; j < 234 || (j < 234 + EXTRA && unhit(hits, of_source, t)); j++) {
            int size = j < 234 ? 2 + (int)(j / 6) : 2 + (int)(j % 39);
            size_t n = make(t, size, j < 234 ? j % 6 : j, false);
            tr_error e = decode(t, C->enc, n);
            REQUIRE(e.code == TR_E_OK);
            for (int i = 0; i < S->noptics; i++)
                if (of_source(i, t))
                    hits[i] += agree(i, false, C->enc, n, C->decoded, true, "a generated value");
            made++;
        }
        char what[300];
        snprintf(what, sizeof what, "generated %s values", S->types[t].name);
        require_hits(hits, of_source, t, made, 234, what);
    }
    free(hits);
}
END_TEST

START_TEST(every_optic_agrees_on_messages)
{
    int *hits = calloc((size_t)S->noptics + 1, sizeof *hits);
    REQUIRE(hits != NULL);
    /* both layouts, sizes 2 to 40, four messages each; then more */
    int made = 0;
    for (uint64_t j = 0; j < 312 || (j < 312 + EXTRA && unhit(hits, of_message, 0)); j++) {
        bool first = j < 312 ? j / 156 == 1 : j % 2 == 1;
        int size = j < 312 ? 2 + (int)(j % 156 / 4) : 2 + (int)(j / 2 % 39);
        size_t n = make(S->root, size, j < 312 ? j % 4 : j, first);
        REQUIRE(decode(S->root, C->enc, n).code == TR_E_OK);
        for (int i = 0; i < S->noptics; i++)
            if (op_from_message(S, i))
                hits[i] += agree(i, true, C->enc, n, C->decoded, true, "a message");
        made++;
    }
    require_hits(hits, of_message, 0, made, 312, "generated messages");
    free(hits);
}
END_TEST

/* Messages written again as another producer may write them (MODEL: any
 * JSON text carrying the model): every object's members in another order
 * (a union's tag among them, a map's entries too), whitespace of every kind
 * between every two tokens, and characters of keys and strings as \u
 * escapes. The decoder reads each, and every optic read from its bytes
 * gives what the getter gives on that decoding (a raw optic's bytes are the
 * message's own spelling: not compared). */
START_TEST(every_optic_agrees_on_rewritten_messages)
{
    int *hits = calloc((size_t)S->noptics + 1, sizeof *hits);
    REQUIRE(hits != NULL);
    /* sizes 2 to 20 in steps of 3, six messages each; then more */
    int made = 0;
    for (uint64_t j = 0; j < 42 || (j < 42 + EXTRA && unhit(hits, of_message, 0)); j++) {
        int size;
        uint64_t k;
        small_set(j, &size, &k);
        size_t n = make(S->root, size, k, k % 2 == 1);
        tj_reset();
        tj *root = tj_parse((const char *)C->enc, n);
        rng_state rng = rng_seed(k * 131 + (uint64_t)size);
        tj_shuffle(root, &rng);
        size_t m = tj_write(root, C->tmp, BUF_BYTES, k * 7 + (uint64_t)size, true, 200, 150);
        tr_error e = decode(S->root, C->tmp, m);
        REQUIREF(e.code == TR_E_OK, "size %d, message %llu rewritten: the decoder says %s at %zu",
                 size, (unsigned long long)k, tr_error_name(e.code), e.offset);
        for (int i = 0; i < S->noptics; i++)
            if (op_from_message(S, i))
                hits[i] += agree(i, true, C->tmp, m, C->decoded, false, "a rewritten message");
        made++;
    }
    require_hits(hits, of_message, 0, made, 42, "rewritten messages");
    free(hits);
}
END_TEST

/* MODEL: an optional field may be absent or null. Each member of the root
 * that an optic steps into first and a message leaves out is written there
 * as `"key":null`, one at a time and at a place that moves; where the
 * decoder takes it (the field is optional: a list, a map or a required
 * field refuses null), every optic read from the bytes gives what the
 * getter gives on that decoding, a miss among them. */
START_TEST(absent_members_written_as_null_read_as_absent)
{
    int taken = 0;
    for (int size = 2; size <= 20; size += 3)
        for (uint64_t k = 0; k < 8; k++) {
            size_t n = make(S->root, size, k, k % 2 == 1);
            for (int i = 0; i < S->noptics; i++) {
                /* a field of the root (a record): its key a name, as it is in JSON */
                const op_optic *o = &S->optics[i];
                const js_str *key = &o->member.key;
                if (!o->source_is_root || o->member.mode != OP_M_FIELD)
                    continue;
                tj_reset();
                tj *root = tj_parse((const char *)C->enc, n);
                char *raw = tj_strndup(key->p, key->n);
                if (tj_find(root, raw) >= 0)
                    continue;
                tj *null = tj_new(TJ_RAW);
                null->s = "null";
                null->n = 4;
                tj_insert(root, (size_t)(k + (uint64_t)i) % (root->count + 1), raw, key->n, null);
                size_t m = tj_write_compact(root, C->tmp, BUF_BYTES);
                if (decode(S->root, C->tmp, m).code != TR_E_OK)
                    continue;
                taken++;
                for (int j = 0; j < S->noptics; j++)
                    if (op_from_message(S, j))
                        agree(j, true, C->tmp, m, C->decoded, false, "a message with a null member");
            }
        }
    printf("test_model: %d messages with an absent optional member written as null\n", taken);
}
END_TEST

/* The compact JSON [m, m + n) (as the encoder writes it: no whitespace)
 * into out with junk after every scalar value (a string that is no key, a
 * number, true, false, null), or after every object or array but the whole
 * text (closers): "x", " x", "\tz" or "y" in turn, none of which can
 * continue a value or open one; its length. */
static size_t junk_after_values(const uint8_t *m, size_t n, uint8_t *out, size_t cap,
                                bool closers)
{
    static const char *const junk[] = {"x", " x", "\tz", "y"};
    size_t w = 0, turn = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        if (m[i] == '"') {
            while (j < n && m[j] != '"')
                j += m[j] == '\\' ? 2 : 1;
            j++;
        } else if (m[i] == '-' || (m[i] >= '0' && m[i] <= '9') || m[i] == 't' || m[i] == 'f' ||
                   m[i] == 'n') {
            while (j < n && m[j] != ',' && m[j] != '}' && m[j] != ']')
                j++;
        }
        REQUIRE(j <= n && w + (j - i) + 2 <= cap);
        memcpy(out + w, m + i, j - i);
        w += j - i;
        bool closer = m[i] == '}' || m[i] == ']';
        bool scalar = !closer && m[i] != '{' && m[i] != '[' && m[i] != ',' && m[i] != ':' &&
                      !(j < n && m[j] == ':');
        if (closers ? closer && j < n : scalar) {
            const char *x = junk[turn++ % 4];
            memcpy(out + w, x, strlen(x));
            w += strlen(x);
        }
        i = j;
    }
    return w;
}

/* A value followed by what cannot follow a JSON value is no value: on
 * messages with junk after every scalar, every optic whose focus is a
 * scalar, an enum or a union's tag misses, and with junk after every object
 * and array, every optic whose focus is a record read whole, where each hit
 * before; a raw optic's view is never followed by junk (the scanners do not
 * validate, but `12x` is not 12, nor `"Sev1"x` Sev1, nor `{"count":1}x` a
 * record). */
START_TEST(no_value_is_read_with_junk_after_it)
{
    int hits[2] = {0, 0}, wanted[2] = {0, 0};
    for (int closers = 0; closers < 2; closers++) {
        /* sizes 2 to 20 in steps of 3, six messages each; then more while
         * such optics are wanted and none hit */
        for (uint64_t j = 0; j < 42 || (j < 42 + EXTRA && wanted[closers] > 0 && hits[closers] == 0);
             j++) {
            int size;
            uint64_t k;
            small_set(j, &size, &k);
            size_t n = make(S->root, size, k, k % 2 == 1);
            size_t m = junk_after_values(C->enc, n, C->tmp, BUF_BYTES, closers);
            REQUIREF(decode(S->root, C->tmp, m).code != TR_E_OK || m == n,
                     "size %d, message %llu with junk: the decoder accepts it", size,
                     (unsigned long long)k);
            for (int i = 0; i < S->noptics; i++) {
                const op_optic *o = &S->optics[i];
                op_value v;
                if (op_from_message(S, i) && o->kind == OP_RAW) {
                    /* a raw view, when there is one, is never followed by junk */
                    ar_reset(&C->scan);
                    if (op_scan_message(S, i, C->tmp, m, &v, C->scratch, &C->scan))
                        REQUIREF(js_value_ends(v.bytes.p + v.bytes.n, C->tmp + m),
                                 "optic %s (%s), size %d, message %llu: a raw view "
                                 "followed by junk",
                                 o->name, o->path, size, (unsigned long long)k);
                    continue;
                }
                if (!op_from_message(S, i) || (o->kind == OP_RECORD) != (closers == 1))
                    continue;
                wanted[closers] += must_hit(i);
                ar_reset(&C->scan);
                if (!op_scan_message(S, i, C->enc, n, &v, C->scratch, &C->scan))
                    continue;
                hits[closers]++;
                ar_reset(&C->scan);
                REQUIREF(!op_scan_message(S, i, C->tmp, m, &v, C->scratch, &C->scan),
                         "optic %s (%s), junk after every %s, size %d, message %llu: read "
                         "a value with junk after it",
                         o->name, o->path, closers ? "object and array" : "scalar", size,
                         (unsigned long long)k);
            }
        }
    }
    /* not vacuous: where the schema has such optics, some hit */
    REQUIREF(wanted[0] == 0 || hits[0] > 0, "no scalar, enum or tag optic ever hit");
    REQUIREF(wanted[1] == 0 || hits[1] > 0, "no record optic ever hit");
}
END_TEST

/* Corruptions of one message: the validator says what the decoder says, and
 * where the decoder accepts, every optic agrees with it. */
static void corrupted(const uint8_t *orig, size_t n, const char *what)
{
    uint8_t *m = C->tmp;
    memcpy(m, orig, n);
    tr_error e = decode(S->root, m, n);
    ar_reset(&C->scan);
    tr_error v = S->validate(m, n, &C->scan);
    REQUIREF(same_error(e, v), "%s: decoder %s at %zu, validator %s at %zu", what,
             tr_error_name(e.code), e.offset, tr_error_name(v.code), v.offset);
    /* Canonical when re-encoding gives these bytes back. */
    bool canonical = false;
    if (e.code == TR_E_OK) {
        uint8_t *w = S->types[S->root].encode(C->re, C->re + BUF_BYTES, C->decoded);
        canonical = w != NULL && (size_t)(w - C->re) == n && memcmp(C->re, m, n) == 0;
    }
    /* Every optic runs (a scanner must stay inside the bytes, whatever they
     * hold: ASan watches); where the decoder accepts, they must agree. */
    for (int i = 0; i < S->noptics; i++) {
        if (!op_from_message(S, i))
            continue;
        if (e.code == TR_E_OK) {
            agree(i, true, m, n, C->decoded, canonical, what);
        } else {
            op_value sv;
            ar_reset(&C->scan);
            (void)op_scan_message(S, i, m, n, &sv, C->scratch, &C->scan);
        }
    }
}

START_TEST(corruptions_validate_like_the_decoder)
{
    static const uint8_t subst[] = {'"', '\\', '{', '}', '[', ']', ':', ',', ' ', '0', '9', '-',
                                    'e', '.', 'a', 'n', 't', 0x00, 0x1f, 0x7f, 0xc3, 0xff};
    uint8_t *orig = malloc(BUF_BYTES);
    REQUIRE(orig != NULL);
    for (int layout = 0; layout < 2; layout++) {
        size_t n = make(S->root, 2, (uint64_t)layout, layout == 1);
        memcpy(orig, C->enc, n);
        char what[96];
        for (size_t cut = 0; cut < n; cut++) {
            snprintf(what, sizeof what, "the first %zu bytes (layout %d)", cut, layout);
            corrupted(orig, cut, what);
        }
        /* Every byte replaced, at up to ~2500 positions evenly spread. */
        size_t step = n / 2500 + 1;
        for (size_t at = 0; at < n; at += step)
            for (size_t s = 0; s < sizeof subst; s++) {
                if (orig[at] == subst[s])
                    continue;
                uint8_t keep = orig[at];
                orig[at] = subst[s];
                snprintf(what, sizeof what, "byte %zu set to 0x%02x (layout %d)", at, subst[s],
                         layout);
                corrupted(orig, n, what);
                orig[at] = keep;
            }
    }
    free(orig);
}
END_TEST

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = su_tcase(s, "generated", setup, fx_teardown, 600);
    tcase_add_test(tc, tables_are_consistent);
    tcase_add_test(tc, every_type_round_trips);
    tcase_add_test(tc, root_round_trips_and_validates_in_both_layouts);
    tcase_add_test(tc, every_optic_agrees_on_values_of_its_source);
    tcase_add_test(tc, every_optic_agrees_on_messages);
    tcase_add_test(tc, every_optic_agrees_on_rewritten_messages);
    tcase_add_test(tc, absent_members_written_as_null_read_as_absent);
    tcase_add_test(tc, no_value_is_read_with_junk_after_it);
    tcase_add_test(tc, corruptions_validate_like_the_decoder);
    return s;
}

int main(void)
{
    fprintf(stderr, "test_model: schema %s, %d types, %d optics\n", S->schema, S->ntypes,
            S->noptics);
    return su_run(model_suite());
}
