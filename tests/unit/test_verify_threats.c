/* test_verify_threats.c: the threats to a lazy reader (docs/security.md),
 * case by case: what each verify level (filter/verify.h) and each reader
 * answers on a message holding one threat.
 *
 * Each case states the JSON level's code and offset (js_validate), the
 * schema level's code and offset, which must also be the decoder's, and
 * for an accepted message the verdict of every reader at every level; on
 * every message built here docs/security.md's rule holds as a differential
 * too (verify_cases.h). The cases: members around the detail (comments,
 * trailing commas, quotes, numbers, escapes, surrogates, control bytes,
 * NULs, invalid UTF-8, duplicates, the root's fields with odd values,
 * unknown fields), each placed at both ends of a message and a duplicate
 * in both orders; details (every case, duplicates inside the focus,
 * escapes, tags, leaves of the wrong shape, not JSON inside the focus),
 * first and last; keys that differ from known ones only in case; and
 * rules of the whole message (BOM, UTF-16, trailing content, empty and
 * other JSON values, a required field missing). */
#include <stdio.h>
#include <string.h>

#include "support/bytes.h"
#include "support/demo/verify_cases.h"
#include "support/fixture.h"
#include "support/suite.h"

#define P(lit) VC_P(lit)

/* ---- members around the detail: both ends, both orders ---- */

typedef enum {
    AT_MARK,  /* the error is at the first `mark` inside the member */
    AT_DUP,   /* a duplicate of a key of the rest (`mark`): at the later one */
} where;

typedef struct {
    const char *name;
    vc_piece member;     /* one member (or several, comma-separated) */
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

static bb *rest_for(const char *drop)
{
    if (drop == NULL)
        return vc_rest;
    size_t n = strlen(drop);
    if (drop[n - 1] == '?') { /* leave it out if there */
        char key[64];
        size_t s0, e0;
        snprintf(key, sizeof key, "%.*s", (int)(n - 1), drop);
        return vc_rest_member(key, &s0, &e0) ? vc_rest_without(key) : vc_rest;
    }
    return vc_rest_without(drop);
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
    return VC_ANY;
}

static size_t find_in(vc_piece hay, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= hay.n; i++)
        if (memcmp(hay.p + i, needle, k) == 0)
            return i;
    return VC_ANY;
}

static void run_member_case(const member_case *c, vc_piece detail, int dkind, bool dkeep)
{
    static bb mbuf;
    vc_piece member = vc_complete_member(c->member, &mbuf);
    bb *r = rest_for(c->drop);
    for (int l = 0; l < 6; l++) {
        vc_piece parts[3];
        int xi = -1;
        for (int i = 0; i < 3; i++) {
            char w = vc_layouts[l][i];
            parts[i] = w == 'X' ? member : w == 'D' ? detail : vc_of(r);
            if (w == 'X')
                xi = i;
        }
        size_t pos[3];
        bb *m = vc_compose(parts, 3, pos);
        char name[160];
        snprintf(name, sizeof name, "%s [%s]", c->name, vc_layouts[l]);
        size_t off = VC_ANY;
        if (c->mark != NULL && c->at == AT_MARK) {
            size_t rel = strcmp(c->mark, "END") == 0   ? member.n
                         : strcmp(c->mark, "NUL") == 0 ? (size_t)((const char *)memchr(member.p, 0, member.n) - member.p)
                                                       : find_in(member, c->mark);
            REQUIREF(rel != VC_ANY, "%s: mark not in the member", c->name);
            off = pos[xi] + rel;
        } else if (c->at == AT_DUP) {
            size_t other = find_outside(m, c->mark, pos[xi], member.n);
            REQUIREF(other != VC_ANY, "%s: no original of the duplicate", c->name);
            off = other > pos[xi] ? other : pos[xi];
        }
        int kind = c->kind != 0 ? c->kind : dkind;
        bool keep = c->kind != 0 ? c->keep : dkeep;
        if (c->scode == TR_E_OK) {
            kind = dkind;
            keep = dkeep;
        }
        vc_expect(name, vc_msg(m), c->jcode, off, c->scode, off, kind, keep);
        if (c->offsafe) {
            /* Not verified, it may be a miss, never another reading. */
            vc_verdict v = vc_judge_optics(VF_OFF, vc_msg(m));
            REQUIREF(v.kind == -1 || (v.kind == dkind && v.keep == dkeep),
                     "%s: verify=off misread it as %d %d", name, v.kind, v.keep);
        }
    }
}

START_TEST(members_at_both_ends_in_both_orders)
{
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        run_member_case(&members[i], vc_keep, INC, true);
        run_member_case(&members[i], vc_drop, INC, false);
    }
}
END_TEST

/* ---- details: what the optics read, at both ends of the message ---- */

typedef struct {
    const char *name;
    vc_piece detail;     /* the value of "detail" */
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

static size_t find_last(vc_piece hay, const char *needle, size_t k)
{
    size_t at = VC_ANY;
    for (size_t i = 0; i + k <= hay.n; i++)
        if (memcmp(hay.p + i, needle, k) == 0)
            at = i;
    return at;
}

static void run_detail_case(const detail_case *c)
{
    {
        static bb dbuf;
        vc_piece det = vc_complete_detail(c->detail, &dbuf);
        bb *member = bb_new();
        bb_puts(member, "\"detail\":");
        size_t head = member->n;
        bb_put(member, det.p, det.n);
        for (int first = 0; first < 2; first++) {
            vc_piece parts[2] = {vc_of(member), vc_of(vc_rest)};
            if (!first) {
                parts[0] = vc_of(vc_rest);
                parts[1] = vc_of(member);
            }
            size_t pos[2];
            bb *m = vc_compose(parts, 2, pos);
            char name[160];
            snprintf(name, sizeof name, "%s [%s]", c->name, first ? "first" : "last");
            size_t off = VC_ANY;
            if (c->mark != NULL) {
                /* "\0" as a mark is one byte */
                size_t k = c->mark[0] == 0 ? 1 : strlen(c->mark);
                size_t rel = find_last(det, c->mark, k);
                REQUIREF(rel != VC_ANY, "%s: mark not in the detail", c->name);
                off = pos[first ? 0 : 1] + head + rel;
            }
            vc_expect(name, vc_msg(m), c->jcode, off, c->scode, off, c->kind, c->keep);
        }
    }
}

START_TEST(details_at_both_ends)
{
    for (size_t i = 0; i < sizeof details / sizeof details[0]; i++)
        run_detail_case(&details[i]);
}
END_TEST

/* Keys are case-sensitive (docs/model.md): a key that differs from a known one
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
        run_member_case(&case_members[i], vc_keep, INC, true);
        run_member_case(&case_members[i], vc_drop, INC, false);
    }
    for (size_t i = 0; i < sizeof case_details / sizeof case_details[0]; i++)
        run_detail_case(&case_details[i]);
}
END_TEST

/* ---- whole messages ---- */

START_TEST(whole_message_rules)
{
    size_t pos[2];
    vc_piece parts[2] = {vc_keep, vc_of(vc_rest)};
    bb *good = vc_compose(parts, 2, pos);
    tr_message g = vc_msg(good);
    vc_expect_ok("good", g, INC, true);

    /* byte-order mark, UTF-16 */
    bb *b = bb_new();
    bb_put(b, "\xEF\xBB\xBF", 3);
    bb_put(b, good->p, good->n);
    vc_expect_bad("BOM", vc_msg(b), TR_E_BOM, 0, TR_E_BOM, 0);
    b = bb_new();
    bb_put(b, "\xFF\xFE{\0}\0", 6);
    vc_expect_bad("UTF-16LE", vc_msg(b), TR_E_SYNTAX, 0, TR_E_SYNTAX, 0);
    b = bb_new();
    bb_put(b, "\xFE\xFF\0{\0}", 6);
    vc_expect_bad("UTF-16BE", vc_msg(b), TR_E_SYNTAX, 0, TR_E_SYNTAX, 0);

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
            vc_expect_ok(tails[i].name, vc_msg(b), INC, true);
        else
            vc_expect_bad(tails[i].name, vc_msg(b), tails[i].code, off, tails[i].code, off);
    }
    /* leading whitespace is fine, leading NUL is not */
    b = bb_new();
    bb_puts(b, " \n\t\r");
    bb_put(b, good->p, good->n);
    vc_expect_ok("leading whitespace", vc_msg(b), INC, true);
    b = bb_new();
    bb_put(b, "\0", 1);
    bb_put(b, good->p, good->n);
    vc_expect_bad("leading NUL", vc_msg(b), TR_E_SYNTAX, 0, TR_E_SYNTAX, 0);

    /* empty, whitespace only, other JSON values */
    vc_expect_bad("empty", (tr_message){good->p, 0}, TR_E_EOF, 0, TR_E_EOF, 0);
    b = bb_new();
    bb_puts(b, "  ");
    vc_expect_bad("only whitespace", vc_msg(b), TR_E_EOF, 2, TR_E_EOF, 2);
    static const char *const others[] = {"[]", "\"x\"", "1", "true"};
    for (size_t i = 0; i < 4; i++) {
        b = bb_new();
        bb_puts(b, others[i]);
        vc_expect_bad(others[i], vc_msg(b), TR_E_OK, 0, TR_E_TYPE, 0);
    }
    b = bb_new();
    bb_puts(b, "null");
    vc_expect_bad("null", vc_msg(b), TR_E_OK, 0, TR_E_NULL_REQUIRED, 0);
    b = bb_new();
    bb_puts(b, "{}");
    vc_expect_bad("{}", vc_msg(b), TR_E_OK, 0, TR_E_MISSING, 1);

    /* a required field missing: at the root's closing brace */
    vc_piece p2[2] = {vc_keep, {NULL, 0}};
    bb *r = vc_rest_without("id");
    p2[1] = vc_of(r);
    b = vc_compose(p2, 2, NULL);
    vc_expect_bad("missing id", vc_msg(b), TR_E_OK, 0, TR_E_MISSING, b->n - 1);
    vc_piece p1[1] = {vc_of(vc_rest)};
    b = vc_compose(p1, 1, NULL);
    vc_expect_bad("missing detail", vc_msg(b), TR_E_OK, 0, TR_E_MISSING, b->n - 1);
}
END_TEST

static Suite *threats_suite(void)
{
    Suite *s = suite_create("verify_threats");
    TCase *t = su_tcase(s, "threats", NULL, fx_teardown, 600);
    tcase_add_test(t, members_at_both_ends_in_both_orders);
    tcase_add_test(t, details_at_both_ends);
    tcase_add_test(t, case_variant_keys);
    tcase_add_test(t, whole_message_rules);
    return s;
}

int main(void)
{
    vc_init();
    return su_run(threats_suite());
}
