/* test_verify.c: the verify levels (filter/verify.h) against THREATS.md.
 *
 * THREATS.md's rule, checked as a differential on every message built here:
 * either vf_check(VF_SCHEMA) rejects the message, or the decoder accepts it
 * and the optics (verify off, json and schema alike) read the values the
 * decoder read (fz_differential from tests/fuzz/harness.h, the fuzzers'
 * own property). On top of that each case states what it expects:
 *   - the JSON level's code and offset (js_validate), the schema level's
 *     code and offset, which must also be the decoder's;
 *   - for an accepted message, the verdict of every reader at every level.
 * Each class is placed at both ends of a message (near the start, near the
 * end), and a class made of two things (a duplicate) in both orders.
 *
 * Then the differential classes of issue 6 one by one (truncation at every
 * byte, NUL bytes, invalid UTF-8, the depth bomb), JSONTestSuite, the limits
 * docs/security.md states (each at the limit and one past it), and the replay of
 * tests/regression/ through every fuzz harness. */
#include "check_util.h"
#include "literals.h"
#include "reader.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../fuzz/harness.h"

/* ---- byte buffers, freed at teardown ---- */

typedef struct bb {
    uint8_t *p;
    size_t n, cap;
    struct bb *next;
} bb;

static bb *live;

static bb *bb_new(void)
{
    bb *b = calloc(1, sizeof *b);
    REQUIRE(b != NULL);
    b->cap = 256;
    b->p = malloc(b->cap);
    REQUIRE(b->p != NULL);
    b->next = live;
    live = b;
    return b;
}

static void bb_put(bb *b, const void *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        while (b->n + n + 1 > b->cap)
            b->cap *= 2;
        b->p = realloc(b->p, b->cap);
        REQUIRE(b->p != NULL);
    }
    if (n)
        memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void bb_puts(bb *b, const char *s) { bb_put(b, s, strlen(s)); }

static void bb_rep(bb *b, const char *s, size_t times)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < times; i++)
        bb_put(b, s, n);
}

static void free_all(void)
{
    while (live != NULL) {
        bb *b = live;
        live = b->next;
        free(b->p);
        free(b);
    }
}

static tr_message M(const bb *b) { return (tr_message){b->p, b->n}; }

/* ---- the message parts ---- */

/* A piece of text that may hold NULs. */
typedef struct {
    const char *p;
    size_t n;
} piece;

#define P(lit) ((piece){(lit), sizeof(lit) - 1})

static piece PZ(const char *s) { return (piece){s, strlen(s)}; }

/* A generated Issue's members without its detail ("id":...,"revision":N). */
static bb *rest;

#define INCIDENT(sev, tier)                                                          \
    "{\"type\":\"Incident\",\"severity\":\"" sev "\",\"startedAt\":1,\"mitigated\":false,"  \
    "\"impact\":{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\",\"tier\":\"" tier \
    "\",\"region\":\"r\"}}}"
#define BUG(mod)                                                                     \
    "{\"type\":\"Bug\",\"component\":\"c\",\"build\":\"b\",\"reproducible\":true,"        \
    "\"trace\":{\"exception\":\"e\",\"message\":\"m\",\"frames\":[{\"module\":\"" mod      \
    "\",\"function\":\"f\",\"file\":\"x.c\",\"line\":3}]}}"
#define REQUEST(votes, plan)                                                         \
    "{\"type\":\"Request\",\"product\":\"p\",\"votes\":{\"count\":" votes "},"            \
    "\"quarter\":\"q\",\"requester\":{\"name\":\"n\",\"contract\":{\"plan\":\"" plan      \
    "\",\"seats\":2,\"renewsAt\":3}}}"

#define D_KEEP "\"detail\":" INCIDENT("Sev1", "Critical")
#define D_DROP "\"detail\":" INCIDENT("Sev4", "Minor")

enum { BUGK = TR_DETAIL_BUG, INC = TR_DETAIL_INCIDENT, REQ = TR_DETAIL_REQUEST, NONE = -1 };

/* ---- the literal details, completed for the schema at hand ----
 * The literals spell the demo's fields of Bug, Incident and Request. A
 * schema that adds fields to those cases (or to the records under them)
 * would leave them incomplete: a detail that is valid JSON and whose tag
 * names a case is completed (check_util.h's cu_complete) with the members
 * of a generated detail of that case (literals.h's lit_template) whose keys
 * no literal spells. With the
 * demo's schema nothing changes, byte for byte. */

#define LITERAL_KEYS INCIDENT("Sev1", "Critical") BUG("Payments") REQUEST("1", "Free")

/* The detail d completed into *out, or d itself (not JSON, or no case). */
static piece complete_detail(piece d, cu_buf *out)
{
    js_ctx c;
    js_ctx_init(&c, (const uint8_t *)d.p, NULL);
    const uint8_t *e = js_validate(&c, (const uint8_t *)d.p, (const uint8_t *)d.p + d.n);
    const char *o = cu_ws(d.p, d.p + d.n);
    if (e != (const uint8_t *)d.p + d.n || o == d.p + d.n || *o != '{')
        return d;
    cu_member m[64];
    size_t k = cu_members(o, d.p + d.n, m, 64);
    for (size_t i = 0; i < k; i++) {
        char key[16], name[128];
        size_t kn, nn;
        if (!cu_key(m[i].k, m[i].kn, key, sizeof key, &kn) || kn != 4 || memcmp(key, "type", 4) != 0 ||
            *m[i].v != '"')
            continue;
        if (!cu_key(m[i].v + 1, (size_t)(m[i].vend - m[i].v - 2), name, sizeof name, &nn))
            return d;
        int kind = tr_Detail_from(name, nn);
        if (kind < 0)
            return d;
        cu_complete(out, d.p, d.n, lit_template(kind), LITERAL_KEYS);
        return (piece){out->p, out->n};
    }
    return d;
}

/* A member "detail":VALUE (the key may be escaped) with its value
 * completed into *out; any other piece as it is. */
static piece complete_member(piece m, cu_buf *out)
{
    const char *e = m.p + m.n, *p = cu_ws(m.p, e);
    if (p == e || *p != '"')
        return m;
    const char *q = p + 1;
    while (q < e && *q != '"')
        q += *q == '\\' ? 2 : 1;
    char key[16];
    size_t kn;
    if (q >= e || !cu_key(p + 1, (size_t)(q - p - 1), key, sizeof key, &kn) || kn != 6 ||
        memcmp(key, "detail", 6) != 0)
        return m;
    const char *v = cu_ws(q + 1, e);
    if (v == e || *v != ':')
        return m;
    v = cu_ws(v + 1, e);
    static cu_buf val;
    piece d = complete_detail((piece){v, (size_t)(e - v)}, &val);
    if (d.p == v)
        return m;
    out->n = 0;
    cu_put(out, m.p, (size_t)(v - m.p));
    cu_put(out, d.p, d.n);
    return (piece){out->p, out->n};
}

/* D_KEEP and D_DROP completed (in main, before the tests). */
static piece pkeep, pdrop;

/* {m[0],m[1],...}; pos[i] receives each member's offset. */
static bb *compose(const piece *m, size_t k, size_t *pos)
{
    bb *b = bb_new();
    bb_put(b, "{", 1);
    for (size_t i = 0; i < k; i++) {
        if (i)
            bb_put(b, ",", 1);
        if (pos != NULL)
            pos[i] = b->n;
        bb_put(b, m[i].p, m[i].n);
    }
    bb_put(b, "}", 1);
    return b;
}

/* The member of the rest named key, at the root's level: its start and
 * end (one past its value); false when there is none. */
static bool rest_member(const char *key, size_t *start, size_t *end)
{
    /* rest is NUL-terminated: the NUL ends the last member's number */
    const uint8_t *p = rest->p, *e = rest->p + rest->n;
    size_t kn = strlen(key);
    while (p < e) {
        const uint8_t *ks = p, *ke = sk_string_end(p, e);
        REQUIRE(*p == '"' && ke != NULL && ke < e && *ke == ':');
        const uint8_t *ve = sk_value_end(ke + 1, e + 1);
        REQUIRE(ve != NULL);
        if ((size_t)(ke - ks) == kn + 2 && memcmp(ks + 1, key, kn) == 0) {
            *start = (size_t)(ks - rest->p);
            *end = (size_t)(ve - rest->p);
            return true;
        }
        p = ve < e ? ve + 1 : ve; /* past the ',' */
    }
    return false;
}

/* rest with the member named key removed (it must be there). */
static bb *rest_without(const char *key)
{
    size_t s, end;
    REQUIREF(rest_member(key, &s, &end), "no member %s in the generated message", key);
    bb *b = bb_new();
    if (s == 0) { /* first member: drop its following comma */
        REQUIRE(rest->p[end] == ',');
        bb_put(b, rest->p + end + 1, rest->n - end - 1);
    } else { /* drop its preceding comma */
        bb_put(b, rest->p, s - 1);
        bb_put(b, rest->p + end, rest->n - end);
    }
    return b;
}

/* ---- verdicts ---- */

typedef fz_verdict verdict;

static tr_error decode(tr_message m)
{
    ar_reset(&fz.dec);
    return tr_decode_Issue(m.p, m.n, &fz.dec, &fz.issue);
}

static verdict judge_decode(tr_message m)
{
    verdict v = {-1, false};
    if (decode(m).code == TR_E_OK) {
        rd_decoded(fz.rd, &fz.issue);
        v.keep = po_judge(&fz.policy, &fz.rd->ru, &v.kind);
    }
    return v;
}

/* judge --reader optics --verify level, as the readers do it. */
static verdict judge_optics(vf_level level, tr_message m) { return fz_judge_optics(level, m); }

/* The differential property on m, under every SIMD width. */
static void differential(const char *name, tr_message m)
{
    const char *why = fz_differential(m.p, m.n);
    REQUIREF(why == NULL, "%s: %s", name, why);
}

#define ANY ((size_t)-1)

static void expect(const char *name, tr_message m, tr_code jcode, size_t joff, tr_code scode,
                   size_t soff, int kind, bool keep);

static void expect_ok(const char *name, tr_message m, int kind, bool keep)
{
    expect(name, m, TR_E_OK, 0, TR_E_OK, 0, kind, keep);
}

static void expect_bad(const char *name, tr_message m, tr_code jcode, size_t joff, tr_code scode,
                       size_t soff)
{
    expect(name, m, jcode, joff, scode, soff, -1, false);
}

/* What a message must get: the JSON level's code (and offset, unless ANY),
 * the schema level's code (and offset), and when accepted, the verdict. */
static void expect(const char *name, tr_message m, tr_code jcode, size_t joff, tr_code scode,
                   size_t soff, int kind, bool keep)
{
    tr_error j = vf_check(fz.vc, VF_JSON, m);
    REQUIREF(j.code == jcode && (jcode == TR_E_OK || joff == ANY || j.offset == joff),
             "%s: json level: got %s at %zu, want %s at %zu", name, tr_error_name(j.code), j.offset,
             tr_error_name(jcode), joff);
    tr_error s = vf_check(fz.vc, VF_SCHEMA, m);
    tr_error d = decode(m);
    REQUIREF(s.code == d.code && (s.code == TR_E_OK || s.offset == d.offset),
             "%s: schema level %s at %zu, decoder %s at %zu", name, tr_error_name(s.code), s.offset,
             tr_error_name(d.code), d.offset);
    REQUIREF(s.code == scode && (scode == TR_E_OK || soff == ANY || s.offset == soff),
             "%s: schema level: got %s at %zu, want %s at %zu", name, tr_error_name(s.code),
             s.offset, tr_error_name(scode), soff);
    if (jcode != TR_E_OK)
        REQUIREF(scode != TR_E_OK, "%s: the table says not JSON but an Issue", name);
    differential(name, m);
    verdict want = scode == TR_E_OK ? (verdict){kind, keep} : (verdict){-1, false};
    verdict got[4] = {judge_decode(m), judge_optics(VF_SCHEMA, m), judge_optics(VF_JSON, m),
                      judge_optics(VF_OFF, m)};
    static const char *const who[] = {"decode", "optics schema", "optics json", "optics off"};
    for (int i = 0; i < 4; i++) {
        if (i == 2 && scode != TR_E_OK && jcode == TR_E_OK)
            continue; /* JSON but no Issue: verify=json may read it */
        if (i == 3 && scode != TR_E_OK)
            continue; /* verify=off trusts what it does not read */
        REQUIREF(got[i].kind == want.kind && got[i].keep == want.keep,
                 "%s: %s says %d %s, want %d %s", name, who[i], got[i].kind,
                 got[i].keep ? "keep" : "drop", want.kind, want.keep ? "keep" : "drop");
    }
}

/* The detail (the kind's base) the verify levels hand the rules: at json
 * the one-pass validator finds it (jsonvalid.h), at schema the validator
 * records it (validate_views); both are the scanner's view, at every size
 * and in both layouts. */
START_TEST(verify_levels_find_the_scanners_detail)
{
    static const int sizes[] = {1, 2, 7, 15, 40};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        iss_gen *g = iss_gen_new(sizes[k]);
        REQUIRE(g != NULL);
        for (uint64_t i = 0; i < 80; i++) {
            size_t n;
            const uint8_t *f = iss_gen_frame(g, 21 + k, i, i % 2 == 1, &n);
            REQUIRE(f != NULL);
            tr_message m = {f + FR_HEADER_LEN, n - FR_HEADER_LEN};
            tr_view_Detail want;
            REQUIRE(tr_scan_detail(m, &want));
            int base = tr_schema.optics[tr_schema.kind].base;
            REQUIRE(base >= 0);
            for (int lv = VF_OFF; lv <= VF_SCHEMA; lv++) {
                op_value got;
                REQUIREF(rd_message(fz.rd, (vf_level)lv, m) && ru_read(&fz.rd->ru, base, &got),
                         "size %d message %llu: no detail at %s", sizes[k],
                         (unsigned long long)i, vf_level_name((vf_level)lv));
                REQUIREF(got.bytes.p == want.p && got.bytes.n == want.n,
                         "size %d message %llu: another detail at %s", sizes[k],
                         (unsigned long long)i, vf_level_name((vf_level)lv));
            }
            tr_Issue_views views;
            ar_reset(&fz.dec);
            ck_assert_int_eq(tr_validate_Issue_views(m.p, m.n, &fz.dec, &views).code, TR_E_OK);
            REQUIRE(views.has_detail && views.detail.p == want.p && views.detail.n == want.n);
        }
        iss_gen_free(g);
    }
}
END_TEST

/* ================================================================ */
/* members around the detail: both ends, both orders */

typedef enum {
    AT_MARK,  /* the error is at the first `mark` inside the member */
    AT_DUP,   /* a duplicate of a key of the rest (`mark`): at the later one */
} where;

typedef struct {
    const char *name;
    piece member;     /* one member (or several, comma-separated) */
    const char *drop; /* a member of the rest to leave out, or NULL */
    tr_code jcode;    /* the JSON level's answer */
    tr_code scode;    /* the schema level's (and the decoder's) */
    where at;
    const char *mark; /* NULL: offset not checked */
    int kind;         /* verdict when accepted (default: D_KEEP's) */
    bool keep;
    bool offsafe;     /* rejected, yet verify=off must not misread it */
} member_case;

#define J(code) TR_E_##code, TR_E_##code /* a JSON error: both levels */
#define S(code) TR_E_OK, TR_E_##code     /* JSON, but no Issue */
#define OK TR_E_OK, TR_E_OK

static const member_case members[] = {
    /* comments, trailing commas, single quotes, NaN, Infinity */
    {"comment", P("\"zz\":1/*c*/"), NULL, J(SYNTAX), AT_MARK, "/*", 0, 0, true},
    {"line comment", P("\"zz\":1//c\n"), NULL, J(SYNTAX), AT_MARK, "//", 0, 0, true},
    {"trailing comma in array", P("\"zz\":[1,]"), NULL, J(SYNTAX), AT_MARK, "]", 0, 0, true},
    {"trailing comma in object", P("\"zz\":{\"a\":1,}"), NULL, J(SYNTAX), AT_MARK, "}", 0, 0, true},
    {"single quotes", P("\"zz\":'a'"), NULL, J(SYNTAX), AT_MARK, "'", 0, 0, true},
    {"single-quoted key", P("'zz':1"), NULL, J(SYNTAX), AT_MARK, "'", 0, 0, true},
    {"unquoted key", P("zz:1"), NULL, J(SYNTAX), AT_MARK, "zz", 0, 0, true},
    {"NaN", P("\"zz\":NaN"), NULL, J(SYNTAX), AT_MARK, "NaN", 0, 0, true},
    {"Infinity", P("\"zz\":-Infinity"), NULL, J(NUMBER), AT_MARK, "Infinity", 0, 0, true},
    {"leading zero", P("\"zz\":012"), NULL, J(NUMBER), AT_MARK, "12", 0, 0, true},
    {"plus sign", P("\"zz\":+1"), NULL, J(SYNTAX), AT_MARK, "+", 0, 0, true},
    {"bare fraction", P("\"zz\":1."), NULL, J(NUMBER), AT_MARK, "END", 0, 0, true},
    {"missing colon", P("\"zz\" 1"), NULL, J(SYNTAX), AT_MARK, "1", 0, 0, true},
    {"bad literal", P("\"zz\":tru"), NULL, J(SYNTAX), AT_MARK, "END", 0, 0, true},
    {"junk [1,}", P("\"junk\":[1,}"), NULL, J(SYNTAX), AT_MARK, "}", 0, 0, true},
    /* strings: escapes, surrogates, control bytes, NUL, UTF-8 */
    {"unknown escape", P("\"zz\":\"a\\x\""), NULL, J(ESCAPE), AT_MARK, "\\x", 0, 0, true},
    {"lone surrogate in a value", P("\"zz\":\"Sev1\\ud800\""), NULL, J(SURROGATE), AT_MARK, "\\ud800", 0, 0, true},
    {"lone low surrogate", P("\"zz\":\"\\udc00\""), NULL, J(SURROGATE), AT_MARK, "\\udc00", 0, 0, true},
    {"lone surrogate in a key", P("\"a\\ud800\":1"), NULL, J(SURROGATE), AT_MARK, "\\ud800", 0, 0, true},
    {"raw control byte", P("\"zz\":\"Sev1\x01\""), NULL, J(CTRL), AT_MARK, "\x01", 0, 0, true},
    {"raw newline in a string", P("\"zz\":\"a\nb\""), NULL, J(CTRL), AT_MARK, "\n", 0, 0, true},
    {"NUL in a value", P("\"zz\":\"Sev1\0\""), NULL, J(CTRL), AT_MARK, "NUL", 0, 0, true},
    {"NUL in a key", P("\"z\0z\":1"), NULL, J(CTRL), AT_MARK, "NUL", 0, 0, true},
    {"NUL between tokens", P("\"zz\":\0 1"), NULL, J(SYNTAX), AT_MARK, "NUL", 0, 0, true},
    {"0xff in a value", P("\"zz\":\"\xff\""), NULL, J(UTF8), AT_MARK, "\xff", 0, 0, true},
    {"0xff in a key", P("\"\xff\":1"), NULL, J(UTF8), AT_MARK, "\xff", 0, 0, true},
    {"overlong '/'", P("\"zz\":\"\xc0\xaf\""), NULL, J(UTF8), AT_MARK, "\xc0", 0, 0, true},
    {"overlong 3 bytes in a key", P("\"\xe0\x80\xaf\":1"), NULL, J(UTF8), AT_MARK, "\xe0", 0, 0, true},
    {"encoded surrogate", P("\"zz\":\"\xed\xa0\x80\""), NULL, J(UTF8), AT_MARK, "\xed", 0, 0, true},
    {"above U+10FFFF", P("\"zz\":\"\xf4\x90\x80\x80\""), NULL, J(UTF8), AT_MARK, "\xf4", 0, 0, true},
    {"cut sequence", P("\"zz\":\"\xe2\x82\""), NULL, J(UTF8), AT_MARK, "\xe2", 0, 0, true},
    {"stray continuation", P("\"zz\":\"a\x80\""), NULL, J(UTF8), AT_MARK, "\x80", 0, 0, true},
    /* JSON that is no Issue: duplicates, in both orders by the layouts */
    {"duplicate detail", P(D_DROP), NULL, S(DUPLICATE), AT_DUP, "\"detail\":", 0, 0, false},
    {"duplicate detail, escaped", P("\"\\u0064etail\":" INCIDENT("Sev4", "Minor")), NULL,
     S(DUPLICATE), AT_DUP, "\"detail\":", 0, 0, false},
    {"duplicate id", P("\"id\":7"), NULL, S(DUPLICATE), AT_DUP, "\"id\":", 0, 0, false},
    {"duplicate revision, escaped", P("\"revisio\\u006e\":7"), NULL, S(DUPLICATE), AT_DUP,
     "\"revision\":", 0, 0, false},
    /* the root's own fields moved to either end, with odd values */
    {"integer 1e0", P("\"revision\":1e0"), "revision", S(NOT_INTEGER), AT_MARK, "1e0", 0, 0, false},
    {"integer 1.0", P("\"revision\":1.0"), "revision", S(NOT_INTEGER), AT_MARK, "1.0", 0, 0, false},
    {"integer 96 digits", P("\"revision\":12345678901234567890123456789012345678901234567890"
                            "1234567890123456789012345678901234567890123456"),
     "revision", S(RANGE), AT_MARK, "1234", 0, 0, false},
    {"integer 2^63", P("\"revision\":9223372036854775808"), "revision", S(RANGE), AT_MARK, "9223", 0, 0, false},
    {"integer -0", P("\"revision\":-0"), "revision", OK, AT_MARK, NULL, INC, true, false},
    {"integer as string", P("\"revision\":\"200\""), "revision", S(TYPE), AT_MARK, "\"200\"", 0, 0, false},
    {"integer null", P("\"revision\":null"), "revision", S(NULL_REQUIRED), AT_MARK, "null", 0, 0, false},
    {"integer true", P("\"revision\":true"), "revision", S(TYPE), AT_MARK, "true", 0, 0, false},
    {"i32 2^31", P("\"storyPoints\":2147483648"), "storyPoints", S(RANGE), AT_MARK, "2147", 0, 0, false},
    {"i32 -2^31", P("\"storyPoints\":-2147483648"), "storyPoints", OK, AT_MARK, NULL, INC, true, false},
    {"f64 1e400", P("\"score\":1e400"), "score", S(RANGE), AT_MARK, "1e400", 0, 0, false},
    {"f64 -0 and exponent", P("\"score\":-0.0E+0"), "score", OK, AT_MARK, NULL, INC, true, false},
    {"f64 as string", P("\"score\":\"1\""), "score", S(TYPE), AT_MARK, "\"1\"", 0, 0, false},
    {"enum unknown", P("\"status\":\"Opened\""), "status", S(ENUM), AT_MARK, "\"Opened\"", 0, 0, false},
    {"enum case variant", P("\"status\":\"open\""), "status", S(ENUM), AT_MARK, "\"open\"", 0, 0, false},
    {"enum escaped", P("\"status\":\"Ope\\u006e\""), "status", OK, AT_MARK, NULL, INC, true, false},
    {"enum as number", P("\"status\":1"), "status", S(TYPE), AT_MARK, "1", 0, 0, false},
    {"required record null", P("\"team\":null"), "team", S(NULL_REQUIRED), AT_MARK, "null", 0, 0, false},
    {"list as object", P("\"labels\":{}"), "labels", S(TYPE), AT_MARK, "{", 0, 0, false},
    {"list null", P("\"labels\":null"), "labels", S(NULL_REQUIRED), AT_MARK, "null", 0, 0, false},
    {"map duplicate key", P("\"tags\":{\"a\":\"1\",\"a\":\"2\"}"), "tags", S(DUPLICATE_KEY), AT_MARK,
     "\"a\":\"2", 0, 0, false},
    {"map duplicate key, escaped", P("\"tags\":{\"a\":\"1\",\"\\u0061\":\"2\"}"), "tags",
     S(DUPLICATE_KEY), AT_MARK, "{", 0, 0, false},
    {"map value null", P("\"tags\":{\"a\":null}"), "tags", S(NULL_REQUIRED), AT_MARK, "null", 0, 0, false},
    {"map keys differ in case", P("\"tags\":{\"a\":\"1\",\"A\":\"2\"}"), "tags", OK, AT_MARK, NULL, INC, true, false},
    /* accepted: what a reader must take as it is */
    {"unknown field", P("\"zz\":1"), NULL, OK, AT_MARK, NULL, INC, true, false},
    {"unknown field twice", P("\"zz\":1,\"zz\":[2]"), NULL, OK, AT_MARK, NULL, INC, true, false},
    {"unknown null", P("\"zz\":null"), NULL, OK, AT_MARK, NULL, INC, true, false},
    {"unknown 96 digits", P("\"zz\":123456789012345678901234567890123456789012345678"
                            "901234567890123456789012345678901234567890123456"),
     NULL, OK, AT_MARK, NULL, INC, true, false},
    {"unknown 1e400", P("\"zz\":1e400"), NULL, OK, AT_MARK, NULL, INC, true, false},
    {"unknown escaped key", P("\"\\u007a\":1"), NULL, OK, AT_MARK, NULL, INC, true, false},
    {"surrogate pair", P("\"zz\":\"\\ud83d\\ude80 \xf0\x9f\x9a\x80\""), NULL, OK, AT_MARK, NULL, INC, true, false},
    {"whitespace", P(" \"zz\" :\t[ 1 ,\r\n{ } ] "), NULL, OK, AT_MARK, NULL, INC, true, false},
    {"case variant Detail", P("\"Detail\":" BUG("Payments")), NULL, OK, AT_MARK, NULL, INC, true, false},
    {"detail inside a string", P("\"zz\":\"\\\",\\\"detail\\\":" "{\\\"type\\\":\\\"Bug\\\"}\""), NULL, OK,
     AT_MARK, NULL, INC, true, false},
    {"detail one level down", P("\"zz\":{\"detail\":" BUG("Payments") "}"), NULL, OK, AT_MARK, NULL,
     INC, true, false},
    {"detail in an array", P("\"zz\":[{\"detail\":" BUG("Payments") "}]"), NULL, OK, AT_MARK, NULL,
     INC, true, false},
    {"optional null", P("\"dueAt\":null"), "dueAt?", OK, AT_MARK, NULL, INC, true, false},
    {"optional given", P("\"dueAt\":5"), "dueAt?", OK, AT_MARK, NULL, INC, true, false},
};

/* The six layouts of member X, detail D and the rest R. */
static const char layouts[6][4] = {"XDR", "DXR", "RXD", "RDX", "XRD", "DRX"};

static bb *rest_for(const char *drop)
{
    if (drop == NULL)
        return rest;
    size_t n = strlen(drop);
    if (drop[n - 1] == '?') { /* leave it out if there */
        char key[64];
        size_t s0, e0;
        snprintf(key, sizeof key, "%.*s", (int)(n - 1), drop);
        return rest_member(key, &s0, &e0) ? rest_without(key) : rest;
    }
    return rest_without(drop);
}

/* The first occurrence of needle in [p, p+n) outside [skip, skip+sn). */
static size_t find_outside(const bb *m, const char *needle, size_t skip, size_t sn)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= m->n; i++) {
        if (i >= skip && i < skip + sn)
            continue;
        if (memcmp(m->p + i, needle, k) == 0)
            return i;
    }
    return ANY;
}

static size_t find_in(piece hay, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= hay.n; i++)
        if (memcmp(hay.p + i, needle, k) == 0)
            return i;
    return ANY;
}

static void run_member_case(const member_case *c, piece detail, int dkind, bool dkeep)
{
    static cu_buf mbuf;
    piece member = complete_member(c->member, &mbuf);
    bb *r = rest_for(c->drop);
    for (int l = 0; l < 6; l++) {
        piece parts[3];
        int xi = -1;
        for (int i = 0; i < 3; i++) {
            char w = layouts[l][i];
            parts[i] = w == 'X' ? member : w == 'D' ? detail : (piece){(char *)r->p, r->n};
            if (w == 'X')
                xi = i;
        }
        size_t pos[3];
        bb *m = compose(parts, 3, pos);
        char name[160];
        snprintf(name, sizeof name, "%s [%s]", c->name, layouts[l]);
        size_t off = ANY;
        if (c->mark != NULL && c->at == AT_MARK) {
            size_t rel = strcmp(c->mark, "END") == 0   ? member.n
                         : strcmp(c->mark, "NUL") == 0 ? (size_t)((const char *)memchr(member.p, 0, member.n) - member.p)
                                                       : find_in(member, c->mark);
            REQUIREF(rel != ANY, "%s: mark not in the member", c->name);
            off = pos[xi] + rel;
        } else if (c->at == AT_DUP) {
            size_t other = find_outside(m, c->mark, pos[xi], member.n);
            REQUIREF(other != ANY, "%s: no original of the duplicate", c->name);
            off = other > pos[xi] ? other : pos[xi];
        }
        int kind = c->kind != 0 ? c->kind : dkind;
        bool keep = c->kind != 0 ? c->keep : dkeep;
        if (c->scode == TR_E_OK) {
            kind = dkind;
            keep = dkeep;
        }
        expect(name, M(m), c->jcode, off, c->scode, off, kind, keep);
        if (c->offsafe) {
            /* Not verified, it may be a miss, never another reading. */
            verdict v = judge_optics(VF_OFF, M(m));
            REQUIREF(v.kind == -1 || (v.kind == dkind && v.keep == dkeep),
                     "%s: verify=off misread it as %d %d", name, v.kind, v.keep);
        }
    }
}

START_TEST(members_at_both_ends_in_both_orders)
{
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        run_member_case(&members[i], pkeep, INC, true);
        run_member_case(&members[i], pdrop, INC, false);
    }
}
END_TEST

/* ================================================================ */
/* details: what the optics read, at both ends of the message */

typedef struct {
    const char *name;
    piece detail;     /* the value of "detail" */
    tr_code jcode, scode;
    const char *mark; /* error at the last occurrence of mark in the detail */
    int kind;
    bool keep;
} detail_case;

static const detail_case details[] = {
    {"incident keep", P(INCIDENT("Sev1", "Critical")), OK, NULL, INC, true},
    {"incident sev2", P(INCIDENT("Sev2", "Critical")), OK, NULL, INC, true},
    {"incident minor", P(INCIDENT("Sev1", "Minor")), OK, NULL, INC, false},
    {"incident sev3", P(INCIDENT("Sev3", "Critical")), OK, NULL, INC, false},
    {"bug keep", P(BUG("Payments")), OK, NULL, BUGK, true},
    {"bug drop", P(BUG("Ui")), OK, NULL, BUGK, false},
    {"request keep", P(REQUEST("130", "Business")), OK, NULL, REQ, true},
    {"request 129", P(REQUEST("129", "Enterprise")), OK, NULL, REQ, false},
    {"request free", P(REQUEST("500", "Free")), OK, NULL, REQ, false},
    /* duplicates inside the focus, both orders */
    {"type Bug then Incident", P("{\"type\":\"Bug\",\"type\":\"Incident\",\"severity\":\"Sev1\"}"),
     S(DUPLICATE), "\"type\"", 0, 0},
    {"type Incident then Bug", P("{\"type\":\"Incident\",\"severity\":\"Sev1\",\"type\":\"Bug\"}"),
     S(DUPLICATE), "\"type\"", 0, 0},
    {"type twice, escaped", P("{\"type\":\"Bug\",\"typ\\u0065\":\"Incident\"}"), S(DUPLICATE),
     "\"typ\\u0065\"", 0, 0},
    {"severity Sev4 then Sev1",
     P("{\"type\":\"Incident\",\"severity\":\"Sev4\",\"severity\":\"Sev1\",\"startedAt\":1}"),
     S(DUPLICATE), "\"severity\"", 0, 0},
    {"severity Sev1 then Sev4",
     P("{\"type\":\"Incident\",\"severity\":\"Sev1\",\"startedAt\":1,\"severity\":\"Sev4\"}"),
     S(DUPLICATE), "\"severity\"", 0, 0},
    {"tier twice", P("{\"type\":\"Incident\",\"severity\":\"Sev1\",\"startedAt\":1,\"mitigated\":false,"
                     "\"impact\":{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\","
                     "\"tier\":\"Minor\",\"tier\":\"Critical\",\"region\":\"r\"}}}"),
     S(DUPLICATE), "\"tier\"", 0, 0},
    {"tier twice, other order",
     P("{\"type\":\"Incident\",\"severity\":\"Sev1\",\"startedAt\":1,\"mitigated\":false,"
       "\"impact\":{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\","
       "\"tier\":\"Critical\",\"region\":\"r\",\"tier\":\"Minor\"}}}"),
     S(DUPLICATE), "\"tier\"", 0, 0},
    {"module twice", P("{\"type\":\"Bug\",\"component\":\"c\",\"build\":\"b\",\"reproducible\":true,"
                       "\"trace\":{\"exception\":\"e\",\"message\":\"m\",\"frames\":[{\"module\":\"Ui\","
                       "\"module\":\"Payments\",\"function\":\"f\",\"file\":\"x.c\",\"line\":3}]}}"),
     S(DUPLICATE), "\"module\"", 0, 0},
    {"votes count twice", P("{\"type\":\"Request\",\"votes\":{\"count\":1,\"count\":500}}"),
     S(DUPLICATE), "\"count\"", 0, 0},
    {"votes twice", P("{\"type\":\"Request\",\"votes\":{\"count\":500},\"votes\":{\"count\":1}}"),
     S(DUPLICATE), "\"votes\"", 0, 0},
    {"plan twice", P("{\"type\":\"Request\",\"product\":\"p\",\"votes\":{\"count\":200},"
                     "\"quarter\":\"q\",\"requester\":{\"name\":\"n\",\"contract\":{\"plan\":\"Free\","
                     "\"plan\":\"Business\",\"seats\":2,\"renewsAt\":3}}}"),
     S(DUPLICATE), "\"plan\"", 0, 0},
    {"trace twice", P("{\"type\":\"Bug\",\"trace\":{\"exception\":\"e\",\"message\":\"m\",\"frames\":[]},"
                      "\"trace\":{\"exception\":\"e\",\"message\":\"m\",\"frames\":[]}}"),
     S(DUPLICATE), "\"trace\"", 0, 0},
    /* escaped keys and values read as their unescaped forms */
    {"escaped type key", P("{\"typ\\u0065\":\"Incident\",\"severity\":\"Sev1\",\"startedAt\":1,"
                           "\"mitigated\":false,\"impact\":{\"users\":1,\"errorRate\":0.5,\"service\":"
                           "{\"name\":\"s\",\"tier\":\"Critical\",\"region\":\"r\"}}}"),
     OK, NULL, INC, true},
    {"escaped leaf keys and values",
     P("{\"type\":\"Incid\\u0065nt\",\"\\u0073everity\":\"Sev\\u0031\",\"startedAt\":1,"
       "\"mitigated\":false,\"impact\":{\"users\":1,\"errorRate\":0.5,\"\\u0073ervice\":"
       "{\"name\":\"s\",\"ti\\u0065r\":\"Crit\\u0069cal\",\"region\":\"r\"}}}"),
     OK, NULL, INC, true},
    {"escaped module", P("{\"type\":\"Bug\",\"component\":\"c\",\"build\":\"b\",\"reproducible\":true,"
                         "\"trace\":{\"exception\":\"e\",\"message\":\"m\",\"fr\\u0061mes\":[{\"m\\u006fdule\":"
                         "\"P\\u0061yments\",\"function\":\"f\",\"file\":\"x.c\",\"line\":3}]}}"),
     OK, NULL, BUGK, true},
    {"escaped votes and plan",
     P("{\"type\":\"Request\",\"product\":\"p\",\"v\\u006ftes\":{\"c\\u006funt\":130},"
       "\"quarter\":\"q\",\"requester\":{\"name\":\"n\",\"contract\":{\"pl\\u0061n\":\"Busin\\u0065ss\","
       "\"seats\":2,\"renewsAt\":3}}}"),
     OK, NULL, REQ, true},
    {"type last", P("{\"severity\":\"Sev2\",\"startedAt\":1,\"mitigated\":false,\"impact\":"
                    "{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\",\"tier\":\"Critical\","
                    "\"region\":\"r\"}},\"type\":\"Incident\"}"),
     OK, NULL, INC, true},
    {"other case's fields", P("{\"type\":\"Bug\",\"severity\":\"Sev1\",\"votes\":{\"count\":999},"
                              "\"component\":\"c\",\"build\":\"b\",\"reproducible\":true,\"trace\":"
                              "{\"exception\":\"e\",\"message\":\"m\",\"frames\":[{\"module\":\"Ui\","
                              "\"function\":\"f\",\"file\":\"x.c\",\"line\":3}]}}"),
     OK, NULL, BUGK, false},
    {"case variant Type", P("{\"Type\":\"Bug\",\"type\":\"Incident\",\"severity\":\"Sev1\",\"startedAt\":1,"
                            "\"mitigated\":false,\"impact\":{\"users\":1,\"errorRate\":0.5,\"service\":"
                            "{\"name\":\"s\",\"tier\":\"Critical\",\"region\":\"r\"}}}"),
     OK, NULL, INC, true},
    {"second frame Payments", P("{\"type\":\"Bug\",\"component\":\"c\",\"build\":\"b\",\"reproducible\":true,"
                                "\"trace\":{\"exception\":\"e\",\"message\":\"m\",\"frames\":[{\"module\":\"Ui\","
                                "\"function\":\"f\",\"file\":\"x.c\",\"line\":3},{\"module\":\"Payments\","
                                "\"function\":\"f\",\"file\":\"x.c\",\"line\":3}]}}"),
     OK, NULL, BUGK, false},
    {"no frames", P("{\"type\":\"Bug\",\"component\":\"c\",\"build\":\"b\",\"reproducible\":true,"
                    "\"trace\":{\"exception\":\"e\",\"message\":\"m\",\"frames\":[]}}"),
     OK, NULL, BUGK, false},
    {"votes -0", P(REQUEST("-0", "Business")), OK, NULL, REQ, false},
    /* the tag */
    {"unknown tag", P("{\"type\":\"Outage\",\"severity\":\"Sev1\"}"), S(TAG), "\"Outage\"", 0, 0},
    {"tag case variant", P("{\"type\":\"incident\",\"severity\":\"Sev1\"}"), S(TAG), "\"incident\"", 0, 0},
    {"tag null", P("{\"type\":null}"), S(NULL_REQUIRED), "null", 0, 0},
    {"tag a number", P("{\"type\":1}"), S(TYPE), "1", 0, 0},
    {"no tag", P("{\"severity\":\"Sev1\"}"), S(NO_TAG), "{", 0, 0},
    {"only Type", P("{\"Type\":\"Incident\"}"), S(NO_TAG), "{", 0, 0},
    {"empty detail", P("{}"), S(NO_TAG), "{", 0, 0},
    /* leaves of the wrong shape */
    {"severity null", P("{\"type\":\"Incident\",\"severity\":null}"), S(NULL_REQUIRED), "null", 0, 0},
    /* (a name no schema can declare: case names are identifiers) */
    {"severity unknown", P("{\"type\":\"Incident\",\"severity\":\"Sev 5\"}"), S(ENUM), "\"Sev 5\"", 0, 0},
    {"severity a number", P("{\"type\":\"Incident\",\"severity\":12345}"), S(TYPE), "12345", 0, 0},
    {"votes as string", P(REQUEST("\"200\"", "Business")), S(TYPE), "\"200\"", 0, 0},
    {"votes 1e2", P(REQUEST("1e2", "Business")), S(NOT_INTEGER), "1e2", 0, 0},
    {"votes 200.0", P(REQUEST("200.0", "Business")), S(NOT_INTEGER), "200.0", 0, 0},
    {"votes 2^31", P(REQUEST("2147483648", "Business")), S(RANGE), "2147483648", 0, 0},
    {"votes null", P(REQUEST("null", "Business")), S(NULL_REQUIRED), "null", 0, 0},
    {"missing severity", P("{\"type\":\"Incident\",\"startedAt\":1,\"mitigated\":false,\"impact\":"
                           "{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\",\"tier\":\"Critical\","
                           "\"region\":\"r\"}}}"),
     S(MISSING), "}", 0, 0},
    {"detail an array", P("[]"), S(TYPE), "[", 0, 0},
    {"detail null", P("null"), S(NULL_REQUIRED), "null", 0, 0},
    {"detail a string", P("\"Incident\""), S(TYPE), "\"Incident\"", 0, 0},
    /* not JSON inside the focus */
    {"junk in the detail", P("{\"type\":\"Incident\",\"junk\":[1,},\"severity\":\"Sev1\"}"), J(SYNTAX),
     "},\"severity", 0, 0},
    {"lone surrogate in severity", P("{\"type\":\"Incident\",\"severity\":\"Sev1\\ud800\"}"),
     J(SURROGATE), "\\ud800", 0, 0},
    {"NUL in severity", P("{\"type\":\"Incident\",\"severity\":\"Sev1\0\"}"), J(CTRL), "\0", 0, 0},
    {"0xff in a detail key", P("{\"type\":\"Incident\",\"sev\xff\":\"Sev1\"}"), J(UTF8), "\xff", 0, 0},
    {"0xff in the tag", P("{\"type\":\"Inc\xff\"}"), J(UTF8), "\xff", 0, 0},
};

static size_t find_last(piece hay, const char *needle, size_t k)
{
    size_t at = ANY;
    for (size_t i = 0; i + k <= hay.n; i++)
        if (memcmp(hay.p + i, needle, k) == 0)
            at = i;
    return at;
}

static void run_detail_case(const detail_case *c)
{
    {
        static cu_buf dbuf;
        piece det = complete_detail(c->detail, &dbuf);
        bb *member = bb_new();
        bb_puts(member, "\"detail\":");
        size_t head = member->n;
        bb_put(member, det.p, det.n);
        for (int first = 0; first < 2; first++) {
            piece parts[2] = {{(char *)member->p, member->n}, {(char *)rest->p, rest->n}};
            if (!first) {
                parts[0] = (piece){(char *)rest->p, rest->n};
                parts[1] = (piece){(char *)member->p, member->n};
            }
            size_t pos[2];
            bb *m = compose(parts, 2, pos);
            char name[160];
            snprintf(name, sizeof name, "%s [%s]", c->name, first ? "first" : "last");
            size_t off = ANY;
            if (c->mark != NULL) {
                /* "\0" as a mark is one byte */
                size_t k = c->mark[0] == 0 ? 1 : strlen(c->mark);
                size_t rel = find_last(det, c->mark, k);
                REQUIREF(rel != ANY, "%s: mark not in the detail", c->name);
                off = pos[first ? 0 : 1] + head + rel;
            }
            expect(name, M(m), c->jcode, off, c->scode, off, c->kind, c->keep);
        }
    }
}

START_TEST(details_at_both_ends)
{
    for (size_t i = 0; i < sizeof details / sizeof details[0]; i++)
        run_detail_case(&details[i]);
}
END_TEST

/* Keys are case-sensitive (MODEL.md): a key that differs from a known one
 * only in case is an unknown field, for every reader, at every level. Each
 * variant comes first, where a reader that matched it would take it. */
static const member_case case_members[] = {
    {"case variant dETAIL", P("\"dETAIL\":" BUG("Payments")), NULL, OK, AT_MARK, NULL, INC, true, false},
    {"case variant DETAIL", P("\"DETAIL\":" BUG("Payments")), NULL, OK, AT_MARK, NULL, INC, true, false},
    {"case variant detaiL", P("\"detaiL\":" BUG("Payments")), NULL, OK, AT_MARK, NULL, INC, true, false},
};

static const detail_case case_details[] = {
    {"case variant tYPE", P("{\"tYPE\":\"Bug\",\"type\":\"Incident\",\"severity\":\"Sev1\",\"startedAt\":1,"
                            "\"mitigated\":false,\"impact\":{\"users\":1,\"errorRate\":0.5,\"service\":"
                            "{\"name\":\"s\",\"tier\":\"Critical\",\"region\":\"r\"}}}"),
     OK, NULL, INC, true},
    {"case variant sEVERITY", P("{\"type\":\"Incident\",\"sEVERITY\":\"Sev1\",\"severity\":\"Sev4\",\"startedAt\":1,"
                                "\"mitigated\":false,\"impact\":{\"users\":1,\"errorRate\":0.5,\"service\":"
                                "{\"name\":\"s\",\"tier\":\"Critical\",\"region\":\"r\"}}}"),
     OK, NULL, INC, false},
    {"case variant tIER", P("{\"type\":\"Incident\",\"severity\":\"Sev1\",\"startedAt\":1,\"mitigated\":false,"
                            "\"impact\":{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\","
                            "\"tIER\":\"Critical\",\"tier\":\"Minor\",\"region\":\"r\"}}}"),
     OK, NULL, INC, false},
    {"case variant fRAMES", P("{\"type\":\"Bug\",\"component\":\"c\",\"build\":\"b\",\"reproducible\":true,"
                              "\"trace\":{\"exception\":\"e\",\"message\":\"m\",\"fRAMES\":[{\"module\":\"Payments\"}],"
                              "\"frames\":[{\"module\":\"Ui\",\"function\":\"f\",\"file\":\"x.c\",\"line\":3}]}}"),
     OK, NULL, BUGK, false},
    {"case variant cOUNT", P(REQUEST("1,\"cOUNT\":500", "Business")), OK, NULL, REQ, false},
    {"case variant cOUNT first", P("{\"type\":\"Request\",\"product\":\"p\",\"votes\":{\"cOUNT\":500,\"count\":1},"
                                   "\"quarter\":\"q\",\"requester\":{\"name\":\"n\",\"contract\":{\"plan\":\"Business\","
                                   "\"seats\":2,\"renewsAt\":3}}}"),
     OK, NULL, REQ, false},
    {"case variant pLAN", P("{\"type\":\"Request\",\"product\":\"p\",\"votes\":{\"count\":200},"
                            "\"quarter\":\"q\",\"requester\":{\"name\":\"n\",\"contract\":{\"pLAN\":\"Business\","
                            "\"plan\":\"Free\",\"seats\":2,\"renewsAt\":3}}}"),
     OK, NULL, REQ, false},
    {"severity case variant value", P("{\"type\":\"Incident\",\"severity\":\"sEV1\"}"), S(ENUM), "\"sEV1\"", 0, 0},
};

START_TEST(case_variant_keys)
{
    for (size_t i = 0; i < sizeof case_members / sizeof case_members[0]; i++) {
        run_member_case(&case_members[i], pkeep, INC, true);
        run_member_case(&case_members[i], pdrop, INC, false);
    }
    for (size_t i = 0; i < sizeof case_details / sizeof case_details[0]; i++)
        run_detail_case(&case_details[i]);
}
END_TEST

/* ================================================================ */
/* whole messages */

START_TEST(whole_message_rules)
{
    size_t pos[2];
    piece parts[2] = {pkeep, {(char *)rest->p, rest->n}};
    bb *good = compose(parts, 2, pos);
    tr_message g = M(good);
    expect_ok("good", g, INC, true);

    /* byte-order mark, UTF-16 */
    bb *b = bb_new();
    bb_put(b, "\xEF\xBB\xBF", 3);
    bb_put(b, good->p, good->n);
    expect_bad("BOM", M(b), TR_E_BOM, 0, TR_E_BOM, 0);
    b = bb_new();
    bb_put(b, "\xFF\xFE{\0}\0", 6);
    expect_bad("UTF-16LE", M(b), TR_E_SYNTAX, 0, TR_E_SYNTAX, 0);
    b = bb_new();
    bb_put(b, "\xFE\xFF\0{\0}", 6);
    expect_bad("UTF-16BE", M(b), TR_E_SYNTAX, 0, TR_E_SYNTAX, 0);

    /* trailing content */
    static const struct {
        const char *name, *tail;
        size_t n;
        tr_code code;
    } tails[] = {
        {"second object", " {}", 3, TR_E_TRAILING},
        {"second message", NULL, 0, TR_E_TRAILING},
        {"x", "x", 1, TR_E_TRAILING},
        {"NUL", "\0", 1, TR_E_TRAILING},
        {"comma", ",", 1, TR_E_TRAILING},
        {"whitespace", " \t\r\n", 4, TR_E_OK},
        {"form feed", "\f", 1, TR_E_TRAILING},
        {"non-breaking space", "\xc2\xa0", 2, TR_E_TRAILING},
    };
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        b = bb_new();
        bb_put(b, good->p, good->n);
        size_t at = b->n;
        if (tails[i].tail == NULL)
            bb_put(b, good->p, good->n);
        else
            bb_put(b, tails[i].tail, tails[i].n);
        size_t off = at + (tails[i].tail != NULL && tails[i].tail[0] == ' ');
        if (tails[i].code == TR_E_OK)
            expect_ok(tails[i].name, M(b), INC, true);
        else
            expect_bad(tails[i].name, M(b), tails[i].code, off, tails[i].code, off);
    }
    /* leading whitespace is fine, leading NUL is not */
    b = bb_new();
    bb_puts(b, " \n\t\r");
    bb_put(b, good->p, good->n);
    expect_ok("leading whitespace", M(b), INC, true);
    b = bb_new();
    bb_put(b, "\0", 1);
    bb_put(b, good->p, good->n);
    expect_bad("leading NUL", M(b), TR_E_SYNTAX, 0, TR_E_SYNTAX, 0);

    /* empty, whitespace only, other JSON values */
    expect_bad("empty", (tr_message){good->p, 0}, TR_E_EOF, 0, TR_E_EOF, 0);
    b = bb_new();
    bb_puts(b, "  ");
    expect_bad("only whitespace", M(b), TR_E_EOF, 2, TR_E_EOF, 2);
    static const char *const others[] = {"[]", "\"x\"", "1", "true"};
    for (size_t i = 0; i < 4; i++) {
        b = bb_new();
        bb_puts(b, others[i]);
        expect_bad(others[i], M(b), TR_E_OK, 0, TR_E_TYPE, 0);
    }
    b = bb_new();
    bb_puts(b, "null");
    expect_bad("null", M(b), TR_E_OK, 0, TR_E_NULL_REQUIRED, 0);
    b = bb_new();
    bb_puts(b, "{}");
    expect_bad("{}", M(b), TR_E_OK, 0, TR_E_MISSING, 1);

    /* a required field missing: at the root's closing brace */
    piece p2[2] = {pkeep, {(char *)0, 0}};
    bb *r = rest_without("id");
    p2[1] = (piece){(char *)r->p, r->n};
    b = compose(p2, 2, NULL);
    expect_bad("missing id", M(b), TR_E_OK, 0, TR_E_MISSING, b->n - 1);
    piece p1[1] = {{(char *)rest->p, rest->n}};
    b = compose(p1, 1, NULL);
    expect_bad("missing detail", M(b), TR_E_OK, 0, TR_E_MISSING, b->n - 1);
}
END_TEST

/* ================================================================ */
/* the differential classes of issue 6 */

/* Truncation at every byte: every proper prefix is rejected at both levels,
 * and the optics agree with decode on each (a miss or a rejection, never a
 * shorter value: the votes count 1300 cut to 130 would keep). */
START_TEST(truncation_at_every_byte)
{
    static const char *const ds[] = {D_KEEP, "\"detail\":" REQUEST("1300", "Business"),
                                     "\"detail\":" BUG("Payments")};
    for (size_t d = 0; d < 3; d++) {
        for (int first = 0; first < 2; first++) {
            static cu_buf dsbuf;
            piece dp = complete_member(PZ(ds[d]), &dsbuf);
            piece parts[2] = {dp, {(char *)rest->p, rest->n}};
            if (!first) {
                parts[0] = parts[1];
                parts[1] = dp;
            }
            bb *m = compose(parts, 2, NULL);
            verdict full = judge_decode(M(m));
            REQUIRE(full.kind >= 0 && full.keep);
            for (size_t k = 0; k < m->n; k++) {
                tr_message t = {m->p, k};
                REQUIREF(vf_check(fz.vc, VF_JSON, t).code != TR_E_OK, "json accepts prefix %zu", k);
                REQUIREF(vf_check(fz.vc, VF_SCHEMA, t).code != TR_E_OK, "schema accepts prefix %zu", k);
                differential("prefix", t);
                /* verify=off on a prefix: a miss or the whole message's verdict */
                verdict v = judge_optics(VF_OFF, t);
                REQUIREF(v.kind == -1 || v.kind == full.kind, "prefix %zu: kind %d", k, v.kind);
                if (d == 1 && v.kind == REQ) {
                    tr_view_Detail dv;
                    tr_Votes votes;
                    uint64_t mem[64];
                    ar_arena a;
                    ar_init(&a, mem, sizeof mem);
                    if (tr_scan_detail(t, &dv) && tr_scan_votes(dv, &votes, &a))
                        REQUIREF(votes.count == 1300, "prefix %zu: votes read as %d", k, votes.count);
                }
            }
        }
    }
}
END_TEST

/* NUL anywhere: in a key, a value, between tokens, before, after. */
START_TEST(nul_bytes)
{
    size_t pos[2];
    piece parts[2] = {pkeep, {(char *)rest->p, rest->n}};
    bb *good = compose(parts, 2, pos);
    /* every position of a NUL replacing a byte, and of one inserted */
    for (size_t i = 0; i <= good->n; i++) {
        bb *b = bb_new();
        bb_put(b, good->p, i);
        bb_put(b, "\0", 1);
        bb_put(b, good->p + i, good->n - i);
        tr_error j = vf_check(fz.vc, VF_JSON, M(b));
        REQUIREF(j.code != TR_E_OK && j.offset <= i, "NUL inserted at %zu: json %s at %zu", i,
                 tr_error_name(j.code), j.offset);
        REQUIREF(vf_check(fz.vc, VF_SCHEMA, M(b)).code != TR_E_OK, "NUL at %zu accepted", i);
        differential("NUL inserted", M(b));
        if (i < good->n) {
            b = bb_new();
            bb_put(b, good->p, good->n);
            b->p[i] = 0;
            REQUIREF(vf_check(fz.vc, VF_JSON, M(b)).code != TR_E_OK, "NUL replacing %zu", i);
            differential("NUL replacing", M(b));
        }
    }
}
END_TEST

/* Invalid UTF-8 in a key and in a value, in every string of the detail
 * (the focus) and the first member, each byte sequence at each string. */
START_TEST(invalid_utf8_in_keys_and_values)
{
    static const char *const bad[] = {"\xff", "\xfe", "\x80", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf",
                                      "\xed\xa0\x80", "\xed\xbf\xbf", "\xf0\x80\x80\xaf",
                                      "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xe2\x82", "\xc3"};
    size_t pos[2];
    piece parts[2] = {pkeep, {(char *)rest->p, rest->n}};
    bb *good = compose(parts, 2, pos);
    size_t checked = 0;
    /* After each opening quote in the first 400 bytes (detail and the
     * first fields): keys and values alike. */
    for (size_t i = 0; i < good->n && i < 400; i++) {
        if (good->p[i] != '"' || (i > 0 && good->p[i - 1] == '\\'))
            continue;
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            bb *b = bb_new();
            bb_put(b, good->p, i + 1);
            bb_puts(b, bad[k]);
            bb_put(b, good->p + i + 1, good->n - i - 1);
            tr_error j = vf_check(fz.vc, VF_JSON, M(b));
            /* an opening quote: the bad byte is inside a string. A closing
             * quote: it lands between tokens, a syntax error right there. */
            REQUIREF((j.code == TR_E_UTF8 || j.code == TR_E_SYNTAX) && j.offset == i + 1,
                     "bad UTF-8 after byte %zu: %s at %zu", i, tr_error_name(j.code), j.offset);
            differential("invalid UTF-8", M(b));
            checked++;
        }
    }
    REQUIRE(checked > 100);
}
END_TEST

/* 100 000 nested arrays inside an unknown field, at either end, closed or
 * not, and inside the detail: TR_E_DEPTH at the bracket past the limit, at
 * both levels, without a stack overflow (the readers do not recurse on it). */
START_TEST(depth_bomb)
{
    enum { DEEP = 100000 };
    for (int closed = 0; closed < 2; closed++) {
        bb *bomb = bb_new();
        bb_puts(bomb, "\"zz\":");
        size_t open = bomb->n;
        bb_rep(bomb, "[", DEEP);
        if (closed)
            bb_rep(bomb, "]", DEEP);
        for (int l = 0; l < 6; l++) {
            piece parts[3];
            int xi = 0;
            for (int i = 0; i < 3; i++) {
                char w = layouts[l][i];
                parts[i] = w == 'X' ? (piece){(char *)bomb->p, bomb->n} : w == 'D' ? pkeep
                                                                                   : (piece){(char *)rest->p, rest->n};
                if (w == 'X')
                    xi = i;
            }
            size_t pos[3];
            bb *m = compose(parts, 3, pos);
            /* The root is depth 1: the 256th '[' is depth 257. */
            size_t at = pos[xi] + open + (JS_MAX_DEPTH - 1);
            char name[64];
            snprintf(name, sizeof name, "depth bomb %s [%s]", closed ? "closed" : "open", layouts[l]);
            expect_bad(name, M(m), TR_E_DEPTH, at, TR_E_DEPTH, at);
        }
        /* inside the detail, as an unknown field of the Incident */
        bb *d = bb_new();
        bb_puts(d, "\"detail\":{\"type\":\"Incident\",\"zz\":");
        size_t dopen = d->n;
        bb_rep(d, "[", DEEP);
        if (closed)
            bb_rep(d, "]", DEEP);
        bb_puts(d, ",\"severity\":\"Sev1\"}");
        piece parts[2] = {{(char *)d->p, d->n}, {(char *)rest->p, rest->n}};
        size_t pos[2];
        bb *m = compose(parts, 2, pos);
        /* root 1, detail 2: the 255th '[' is depth 257 */
        size_t at = pos[0] + dopen + (JS_MAX_DEPTH - 2);
        expect_bad("depth bomb in the detail", M(m), TR_E_DEPTH, at, TR_E_DEPTH, at);
        /* the optics alone, verify=off: a walk that gives up, no crash */
        tr_view_Detail dv;
        if (tr_scan_detail(M(m), &dv)) {
            tr_Severity s;
            (void)tr_scan_severity(dv, &s);
        }
    }
}
END_TEST

/* ================================================================ */
/* JSONTestSuite */

static bb *read_whole(const char *path)
{
    FILE *f = fopen(path, "rb");
    REQUIREF(f != NULL, "cannot open %s", path);
    bb *b = bb_new();
    char tmp[65536];
    size_t r;
    while ((r = fread(tmp, 1, sizeof tmp, f)) > 0)
        bb_put(b, tmp, r);
    fclose(f);
    return b;
}

typedef struct {
    int y, n, i;
    char disagree[4096];
} suite_seen;

static void suite_case(const char *name, const uint8_t *p, size_t len, void *ctx)
{
    suite_seen *seen = ctx;
    tr_message f = {p, len};
    char kind = name[0];
    tr_error j = vf_check(fz.vc, VF_JSON, f);
    if (kind == 'y') {
        REQUIREF(j.code == TR_E_OK, "%s: rejected (%s at %zu)", name, tr_error_name(j.code), j.offset);
        seen->y++;
    } else if (kind == 'n') {
        REQUIREF(j.code != TR_E_OK, "%s: accepted", name);
        REQUIREF(j.offset <= len, "%s: offset past the end", name);
        seen->n++;
    } else {
        /* The decoder's JSON layer: the file's value as an unknown field
         * ("zz":<file>,) right after the opening brace of a valid message. */
        bb *w = bb_new();
        bb_puts(w, "{\"zz\":");
        bb_put(w, p, len);
        bb_puts(w, ",");
        bb_put(w, fz.base + 1, fz.base_n - 1);
        tr_error de = decode(M(w));
        bool dec_ok = de.code == TR_E_OK;
        /* And the same error at the same byte, 6 bytes on ("{\"zz\":"),
         * but for two that differ for a reason: a BOM is only a BOM at
         * the start of a text, and a value one level down hits the
         * depth limit one bracket sooner. */
        bool same_err = dec_ok || j.code == TR_E_OK ||
                        (j.code == TR_E_BOM && de.code == TR_E_SYNTAX && de.offset == 6) ||
                        (j.code == TR_E_DEPTH && de.code == TR_E_DEPTH && de.offset == j.offset + 5) ||
                        (j.code == de.code && de.offset == j.offset + 6);
        if (dec_ok != (j.code == TR_E_OK) || !same_err) {
            size_t l = strlen(seen->disagree);
            snprintf(seen->disagree + l, sizeof seen->disagree - l, " %s (json %s at %zu, decoder %s at %zu)",
                     name, j.code == TR_E_OK ? "ok" : tr_error_name(j.code), j.offset,
                     dec_ok ? "ok" : tr_error_name(de.code), de.offset);
        }
        differential(name, M(w));
        seen->i++;
    }
}

START_TEST(json_test_suite)
{
    suite_seen seen = {0, 0, 0, ""};
    if (cu_conformance(suite_case, &seen, 1) < 0)
        return;
    REQUIREF(seen.disagree[0] == 0, "i_ files answered differently:%s", seen.disagree);
    ck_assert_int_gt(seen.y, 0);
    ck_assert_int_gt(seen.n, 0);
    ck_assert_int_gt(seen.i, 0);
}
END_TEST

/* ================================================================ */
/* the limits docs/security.md states: at the limit, and one past it */

/* RD_DECODE_ARENA in filter/reader.h (judge and the filter): 64 MiB, 16 x the frame limit. The message
 * that needs the most arena per byte is a list of empty strings (3 bytes on
 * the wire, a 16-byte view plus its 16-byte scratch copy while the list is
 * collected); at 4 MiB it fits, and the decoder needs exactly what its
 * high-water mark says: one byte less is TR_E_ARENA. */
#define DECODE_ARENA_STATED (64u << 20)
/* VF_ARENA in filter/verify.c: the validator's scratch (escaped keys, map
 * keys and their hash tables). */
#define VF_ARENA_STATED (24u << 20)

/* A define in a source file, as docs/security.md states it. */
static void stated(const char *path, const char *define)
{
    bb *src = read_whole(path);
    REQUIREF(strstr((const char *)src->p, define) != NULL,
             "%s no longer has '%s': update docs/security.md and this test", path, define);
}

START_TEST(limit_frame_size)
{
    ck_assert_uint_eq(FR_DEFAULT_MAX_LEN, 4u << 20);
    uint8_t h[FR_HEADER_LEN];
    fr_splitter s;
    fr_frame f;
    /* at the limit: the splitter waits for the body */
    fr_init(&s);
    fr_put_header(h, false, FR_DEFAULT_MAX_LEN);
    ck_assert_int_eq(fr_next(&s, h, h + FR_HEADER_LEN, 0, &f), FR_NEED_MORE);
    /* one past: rejected from the 5 header bytes, before any body */
    fr_init(&s);
    fr_put_header(h, false, FR_DEFAULT_MAX_LEN + 1);
    ck_assert_int_eq(fr_next(&s, h, h + FR_HEADER_LEN, 0, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_FRAME_SIZE);
    ck_assert_uint_eq(s.err.offset, 1);
    /* the largest length a header can hold */
    fr_init(&s);
    fr_put_header(h, false, UINT32_MAX);
    ck_assert_int_eq(fr_next(&s, h, h + FR_HEADER_LEN, 0, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_FRAME_SIZE);
}
END_TEST

/* A message of exactly n bytes: the detail, the rest, and one unknown field
 * "zz" whose string value (or key) pads it out. */
static bb *padded(size_t n, bool in_key)
{
    bb *b = bb_new();
    bb_puts(b, "{");
    bb_put(b, pkeep.p, pkeep.n);
    bb_puts(b, ",");
    bb_put(b, rest->p, rest->n);
    bb_puts(b, in_key ? ",\"" : ",\"zz\":\"");
    size_t tail = in_key ? strlen("\":1}") : strlen("\"}");
    REQUIRE(b->n + tail <= n);
    size_t fill = n - b->n - tail;
    size_t at = b->n;
    bb_rep(b, "a", 0);
    if (b->cap < n + 1) {
        b->p = realloc(b->p, n + 1);
        REQUIRE(b->p != NULL);
        b->cap = n + 1;
    }
    memset(b->p + at, 'a', fill);
    b->n += fill;
    bb_puts(b, in_key ? "\":1}" : "\"}");
    REQUIRE(b->n == n);
    return b;
}

/* One frame holding m: the splitter's answer. */
static fr_status frame_it(const bb *m, fr_splitter *s, fr_frame *f)
{
    bb *fb = bb_new();
    uint8_t h[FR_HEADER_LEN];
    fr_put_header(h, false, (uint32_t)m->n);
    bb_put(fb, h, FR_HEADER_LEN);
    bb_put(fb, m->p, m->n);
    fr_init(s);
    return fr_next(s, fb->p, fb->p + fb->n, 0, f);
}

START_TEST(limit_string_and_key_length)
{
    for (int in_key = 0; in_key < 2; in_key++) {
        fr_splitter s;
        fr_frame f;
        bb *m = padded(FR_DEFAULT_MAX_LEN, in_key);
        ck_assert_int_eq(frame_it(m, &s, &f), FR_FRAME);
        expect_ok(in_key ? "4 MiB key" : "4 MiB string", M(m), INC, true);
        bb *m1 = padded(FR_DEFAULT_MAX_LEN + 1, in_key);
        ck_assert_int_eq(frame_it(m1, &s, &f), FR_ERROR);
        ck_assert_int_eq(s.err.code, TR_E_FRAME_SIZE);
    }
}
END_TEST

START_TEST(limit_depth)
{
    ck_assert_int_eq(JS_MAX_DEPTH, 256);
    for (int extra = 0; extra < 2; extra++) {
        /* js_validate alone: JS_MAX_DEPTH arrays, then one more */
        bb *a = bb_new();
        bb_rep(a, "[", JS_MAX_DEPTH + extra);
        bb_rep(a, "]", JS_MAX_DEPTH + extra);
        js_ctx c;
        js_ctx_init(&c, a->p, NULL);
        const uint8_t *r = js_validate(&c, a->p, a->p + a->n);
        if (!extra) {
            ck_assert_ptr_eq(r, a->p + a->n);
        } else {
            ck_assert_ptr_null(r);
            ck_assert_int_eq(c.err.code, TR_E_DEPTH);
            ck_assert_uint_eq(c.err.offset, JS_MAX_DEPTH);
        }
        /* in a message, whose object is depth 1 */
        bb *x = bb_new();
        bb_puts(x, "\"zz\":");
        size_t open = x->n;
        bb_rep(x, "[", JS_MAX_DEPTH - 1 + extra);
        bb_rep(x, "]", JS_MAX_DEPTH - 1 + extra);
        piece parts[3] = {{(char *)x->p, x->n}, pkeep, {(char *)rest->p, rest->n}};
        size_t pos[3];
        bb *m = compose(parts, 3, pos);
        size_t at = pos[0] + open + JS_MAX_DEPTH - 1;
        if (!extra)
            expect_ok("depth at the limit", M(m), INC, true);
        else
            expect_bad("depth one past", M(m), TR_E_DEPTH, at, TR_E_DEPTH, at);
        /* objects count the same as arrays */
        bb *o = bb_new();
        bb_puts(o, "\"zz\":");
        for (int i = 0; i < JS_MAX_DEPTH - 1 + extra; i++)
            bb_puts(o, "{\"a\":");
        bb_puts(o, "1");
        bb_rep(o, "}", JS_MAX_DEPTH - 1 + extra);
        parts[0] = (piece){(char *)o->p, o->n};
        m = compose(parts, 3, pos);
        at = pos[0] + open + (JS_MAX_DEPTH - 1) * 5;
        if (!extra)
            expect_ok("object depth at the limit", M(m), INC, true);
        else
            expect_bad("object depth one past", M(m), TR_E_DEPTH, at, TR_E_DEPTH, at);
    }
}
END_TEST

/* JS_MAX_NUMBER_LEN bounds the number tokens that are converted through
 * strtod (f64 fields): 1024 bytes accepted, 1025 TR_E_TOO_LONG. Integer
 * fields never get that far (20 digits are TR_E_RANGE), and a number in an
 * unknown field is validated in one pass and never converted: its length is
 * bounded by the frame alone. */
START_TEST(limit_number_length)
{
    ck_assert_int_eq(JS_MAX_NUMBER_LEN, 1024);
    for (int extra = 0; extra < 2; extra++) {
        size_t len = JS_MAX_NUMBER_LEN + extra;
        bb *x = bb_new();
        bb_puts(x, "\"score\":");
        size_t at = x->n;
        bb_puts(x, "0.");
        bb_rep(x, "0", len - 3);
        bb_puts(x, "5");
        REQUIRE(x->n - at == len);
        bb *r = rest_without("score");
        piece parts[3] = {pkeep, {(char *)r->p, r->n}, {(char *)x->p, x->n}};
        size_t pos[3];
        bb *m = compose(parts, 3, pos);
        char name[64];
        snprintf(name, sizeof name, "f64 number of %zu bytes", len);
        if (!extra)
            expect_ok(name, M(m), INC, true);
        else
            expect_bad(name, M(m), TR_E_OK, 0, TR_E_TOO_LONG, pos[2] + at);
    }
    /* unknown fields: 1025 bytes and 1 MiB of digits, fine at both levels */
    static const size_t lens[] = {JS_MAX_NUMBER_LEN + 1, 1u << 20};
    for (int i = 0; i < 2; i++) {
        bb *x = bb_new();
        bb_puts(x, "\"zz\":-1");
        bb_rep(x, "0", lens[i] - 3);
        bb_puts(x, ".5e-7");
        piece parts[3] = {pkeep, {(char *)rest->p, rest->n}, {(char *)x->p, x->n}};
        expect_ok("long number in an unknown field", M(compose(parts, 3, NULL)), INC, true);
    }
}
END_TEST

/* The tags map, filled with distinct keys up to the frame limit: accepted in
 * linear time (a quadratic duplicate check would take hours here), and a
 * repeat of the first key at the very end found. */
static bb *big_map(size_t n, bool escaped, bool dup_last, size_t *dup_at)
{
    bb *r = rest_without("tags");
    bb *b = bb_new();
    bb_puts(b, "{");
    bb_put(b, pkeep.p, pkeep.n);
    bb_puts(b, ",");
    bb_put(b, r->p, r->n);
    bb_puts(b, ",\"tags\":{");
    size_t first_entry = b->n;
    char key[64];
    size_t entry_len = escaped ? strlen("\"\\u006b00000000\":\"\",") : strlen("\"k00000000\":\"\",");
    size_t reserve = entry_len + 2; /* the duplicate, and "}}" */
    for (unsigned i = 0; b->n + entry_len + reserve <= n; i++) {
        snprintf(key, sizeof key, escaped ? "\"\\u006b%08u\":\"\"," : "\"k%08u\":\"\",", i);
        bb_puts(b, key);
    }
    if (dup_last) {
        *dup_at = b->n;
        bb_put(b, b->p + first_entry, entry_len - 1);
    } else {
        b->n--; /* the last comma */
    }
    bb_puts(b, "}}");
    while (b->n < n) { /* pad with whitespace, inside the message */
        bb_puts(b, " ");
    }
    return b;
}

START_TEST(limit_map_entries)
{
    for (int escaped = 0; escaped < 2; escaped++) {
        size_t dup_at;
        clock_t t0 = clock();
        bb *m = big_map(FR_DEFAULT_MAX_LEN, escaped, false, &dup_at);
        fr_splitter s;
        fr_frame f;
        ck_assert_int_eq(frame_it(m, &s, &f), FR_FRAME);
        expect_ok(escaped ? "4 MiB map, escaped keys" : "4 MiB map", M(m), INC, true);
        ck_assert_uint_gt(fz.issue.tags.count, 200000);
        /* the arenas it needs, under the stated sizes */
        ar_arena a;
        ar_init(&a, fz.dec_mem, DECODE_ARENA_STATED);
        ck_assert_int_eq(tr_decode_Issue(m->p, m->n, &a, &fz.issue).code, TR_E_OK);
        size_t dec_high = a.high;
        ar_init(&a, fz.dec2_mem, VF_ARENA_STATED);
        ck_assert_int_eq(tr_validate_Issue(m->p, m->n, &a).code, TR_E_OK);
        fprintf(stderr, "note: 4 MiB map (%zu entries%s): decode arena %zu bytes, validator %zu\n",
                fz.issue.tags.count, escaped ? ", escaped keys" : "", dec_high, a.high);
        ck_assert_uint_le(dec_high, DECODE_ARENA_STATED);
        ck_assert_uint_le(a.high, VF_ARENA_STATED);
        bb *d = big_map(FR_DEFAULT_MAX_LEN, escaped, true, &dup_at);
        /* A repeated plain key is reported at that key; an escaped one
         * (unescaped into the arena) at the map's opening brace. */
        size_t want = escaped ? (size_t)(strstr((const char *)d->p, "\"tags\":{") - (const char *)d->p) + 7
                              : dup_at;
        expect_bad("4 MiB map, last key repeats the first", M(d), TR_E_OK, 0, TR_E_DUPLICATE_KEY, want);
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        REQUIREF(secs < 60, "map checks took %.1f s: not linear", secs);
    }
}
END_TEST

START_TEST(limit_decode_arena)
{
    /* the values docs/security.md states are the ones the commands use */
    ck_assert_uint_eq(RD_DECODE_ARENA, DECODE_ARENA_STATED); /* judge's and the filter's */
    stated("filter/verify.c", "#define VF_ARENA (24u << 20)");
    /* The lists that cost the most arena per byte on the wire: i64s of one
     * digit (2 bytes each, 8 in the list and 8 on the scratch stack while
     * it is collected) and empty strings (3 bytes, 16 + 16). */
    static const struct {
        const char *field, *item;
    } fills[] = {{"subtaskIds", "0"}, {"labels", "\"\""}};
    uint8_t *mem = malloc(DECODE_ARENA_STATED);
    REQUIRE(mem != NULL);
    for (int i = 0; i < 2; i++) {
        bb *r = rest_without(fills[i].field);
        bb *m = bb_new();
        bb_puts(m, "{");
        bb_put(m, pkeep.p, pkeep.n);
        bb_puts(m, ",");
        bb_put(m, r->p, r->n);
        bb_puts(m, ",\"");
        bb_puts(m, fills[i].field);
        bb_puts(m, "\":[");
        bb_puts(m, fills[i].item);
        size_t step = strlen(fills[i].item) + 1;
        while (m->n + step + 2 <= FR_DEFAULT_MAX_LEN) {
            bb_puts(m, ",");
            bb_puts(m, fills[i].item);
        }
        bb_puts(m, "]}");
        while (m->n < FR_DEFAULT_MAX_LEN)
            bb_puts(m, " ");
        ck_assert_uint_eq(m->n, FR_DEFAULT_MAX_LEN);

        ar_arena a;
        ar_init(&a, mem, DECODE_ARENA_STATED);
        tr_Issue v;
        tr_error e = tr_decode_Issue(m->p, m->n, &a, &v);
        ck_assert_int_eq(e.code, TR_E_OK);
        size_t high = a.high;
        fprintf(stderr, "note: 4 MiB message, %s of %s: decode arena %zu bytes\n", fills[i].field,
                fills[i].item, high);
        ck_assert_uint_le(high, DECODE_ARENA_STATED);
        /* 8 bytes of slack for alignment, then one byte short */
        ar_init(&a, mem, high + 8);
        ck_assert_int_eq(tr_decode_Issue(m->p, m->n, &a, &v).code, TR_E_OK);
        ar_init(&a, mem, high - 1);
        e = tr_decode_Issue(m->p, m->n, &a, &v);
        ck_assert_int_eq(e.code, TR_E_ARENA);
        /* the validator builds nothing: it passes with its own scratch */
        ck_assert_int_eq(vf_check(fz.vc, VF_SCHEMA, M(m)).code, TR_E_OK);
        /* and a rejection for want of arena is a rejection like any other */
        ck_assert_int_eq(vf_check(fz.vc, VF_JSON, M(m)).code, TR_E_OK);
    }
    free(mem);
}
END_TEST

START_TEST(limit_compressed_frames)
{
    static const uint8_t fr[] = {1, 0, 0, 0, 2, '{', '}'};
    fr_splitter s;
    fr_frame f;
    fr_init(&s);
    ck_assert_int_eq(fr_next(&s, fr, fr + sizeof fr, 0, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_COMPRESSED);
    ck_assert_uint_eq(s.err.offset, 0);
    /* refused from the flag byte alone */
    fr_init(&s);
    ck_assert_int_eq(fr_next(&s, fr, fr + 1, 0, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_COMPRESSED);
    fr_init(&s);
    s.allow_compressed = true;
    ck_assert_int_eq(fr_next(&s, fr, fr + sizeof fr, 0, &f), FR_FRAME);
    ck_assert(f.compressed);
    static const uint8_t bad[] = {2, 0, 0, 0, 0};
    fr_init(&s);
    s.allow_compressed = true;
    ck_assert_int_eq(fr_next(&s, bad, bad + sizeof bad, 0, &f), FR_ERROR);
    ck_assert_int_eq(s.err.code, TR_E_FRAME_FLAG);
}
END_TEST

/* ================================================================ */
/* the regression inputs, through every fuzz harness */

static const char *regression_dir(void)
{
    const char *dir = getenv("TR_REGRESSION");
    return dir != NULL ? dir : "tests/regression";
}

START_TEST(regression_replay)
{
    const char *dir = regression_dir();
    DIR *d = opendir(dir);
    REQUIREF(d != NULL, "cannot open %s (run from the repository root)", dir);
    int files = 0;
    char failed[4096] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t nl = strlen(e->d_name);
        if (e->d_name[0] == '.' || (nl > 3 && strcmp(e->d_name + nl - 3, ".md") == 0))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        bb *f = read_whole(path);
        for (size_t h = 0; h < FZ_NHARNESSES; h++) {
            const char *why = fz_harnesses[h].fn(f->p, f->n);
            if (why != NULL) {
                size_t l = strlen(failed);
                snprintf(failed + l, sizeof failed - l, "\n  %s through %s: %s", e->d_name,
                         fz_harnesses[h].name, why);
            }
        }
        files++;
    }
    closedir(d);
    REQUIREF(failed[0] == 0, "regression inputs fail:%s", failed);
    ck_assert_int_gt(files, 0);
}
END_TEST

/* The generated seeds hold too: both layouts, several sizes. */
START_TEST(generated_messages_pass_every_harness)
{
    iss_gen *g = iss_gen_new(3);
    REQUIRE(g != NULL);
    for (uint64_t i = 0; i < 60; i++) {
        size_t n;
        const uint8_t *f = iss_gen_frame(g, 7, i, i % 2 == 1, &n);
        REQUIRE(f != NULL);
        tr_message m = {f + FR_HEADER_LEN, n - FR_HEADER_LEN};
        ck_assert_int_eq(vf_check(fz.vc, VF_JSON, m).code, TR_E_OK);
        ck_assert_int_eq(vf_check(fz.vc, VF_SCHEMA, m).code, TR_E_OK);
        for (size_t h = 0; h < FZ_NHARNESSES; h++) {
            const char *why = fz_harnesses[h].fn(m.p, m.n);
            REQUIREF(why == NULL, "message %llu through %s: %s", (unsigned long long)i,
                     fz_harnesses[h].name, why);
        }
    }
    iss_gen_free(g);
}
END_TEST

/* ================================================================ */

static Suite *verify_suite(void)
{
    Suite *s = suite_create("verify");
    TCase *t = tcase_create("threats");
    tcase_set_timeout(t, 600);
    tcase_add_checked_fixture(t, NULL, free_all);
    tcase_add_test(t, members_at_both_ends_in_both_orders);
    tcase_add_test(t, details_at_both_ends);
    tcase_add_test(t, case_variant_keys);
    tcase_add_test(t, whole_message_rules);
    suite_add_tcase(s, t);

    t = tcase_create("differential");
    tcase_set_timeout(t, 600);
    tcase_add_checked_fixture(t, NULL, free_all);
    tcase_add_test(t, truncation_at_every_byte);
    tcase_add_test(t, nul_bytes);
    tcase_add_test(t, invalid_utf8_in_keys_and_values);
    tcase_add_test(t, depth_bomb);
    tcase_add_test(t, json_test_suite);
    suite_add_tcase(s, t);

    t = tcase_create("limits");
    tcase_set_timeout(t, 600);
    tcase_add_checked_fixture(t, NULL, free_all);
    tcase_add_test(t, limit_frame_size);
    tcase_add_test(t, limit_string_and_key_length);
    tcase_add_test(t, limit_depth);
    tcase_add_test(t, limit_number_length);
    tcase_add_test(t, limit_map_entries);
    tcase_add_test(t, limit_decode_arena);
    tcase_add_test(t, limit_compressed_frames);
    suite_add_tcase(s, t);

    t = tcase_create("regression");
    tcase_set_timeout(t, 600);
    tcase_add_checked_fixture(t, NULL, free_all);
    tcase_add_test(t, regression_replay);
    tcase_add_test(t, generated_messages_pass_every_harness);
    tcase_add_test(t, verify_levels_find_the_scanners_detail);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    fz_init();
    /* the rest of a generated Issue, detail taken out */
    iss_gen *g = iss_gen_new(2);
    size_t n;
    const uint8_t *f = iss_gen_frame(g, 1, 3, true, &n);
    tr_message m = {f + FR_HEADER_LEN, n - FR_HEADER_LEN};
    tr_view_Detail dv;
    if (!tr_scan_detail(m, &dv) || dv.p[dv.n] != ',') {
        fprintf(stderr, "test_verify: the generated message has no detail first\n");
        return EXIT_FAILURE;
    }
    const uint8_t *r = dv.p + dv.n + 1;
    rest = calloc(1, sizeof *rest);
    rest->cap = n + 1;
    rest->p = malloc(rest->cap);
    memcpy(rest->p, r, (size_t)(m.p + m.n - 1 - r));
    rest->n = (size_t)(m.p + m.n - 1 - r);
    rest->p[rest->n] = 0;
    iss_gen_free(g);
    static cu_buf kb, db;
    pkeep = complete_member(P(D_KEEP), &kb);
    pdrop = complete_member(P(D_DROP), &db);

    SRunner *sr = srunner_create(verify_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    free(rest->p);
    free(rest);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
