/* test_rules.c: the rule language (runtime/rules.h) over the synthetic
 * schema of tests/fuzz/rules.h, so the engine is tested without the
 * generator: every operator on every kind, missing values, exact integer
 * and double comparison, string escapes, laziness and the per-message
 * cache, the two readers, every load error's exact text, the limits, and
 * schema/default.rules (and the JSON policy form's defaults) against a
 * demo-like schema and the default rules (docs/model.md) written out in C. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonpolicy.h"
#include "policy.h"
#include "rules.h"

#include "../fuzz/rules.h"
#include "support/suite.h"

static char err[2048];
static uint8_t arena_mem[1 << 16];
static ar_arena arena;
static ru_subject rd;

static void setup(void)
{
    fzr_init();
    ar_init(&arena, arena_mem, sizeof arena_mem);
    REQUIRE(ru_subject_init(&rd, &fzr_schema, &arena));
}

static ru_rules *load(const char *text)
{
    ru_rules *r = ru_parse(text, strlen(text), "t.rules", &fzr_schema, err, sizeof err);
    REQUIREF(r != NULL, "'%s' did not load: %s", text, err);
    return r;
}

static void refused(const char *text, size_t n, const char *want, int line)
{
    ru_rules *r = ru_parse(text, n, "t.rules", &fzr_schema, err, sizeof err);
    REQUIREF(r == NULL, "line %d: '%s' loaded", line, text);
    REQUIREF(strcmp(err, want) == 0, "line %d: '%s'\n  gave: %s\n  want: %s", line, text, err, want);
}
#define REFUSED(text, want) refused(text, strlen(text), want, __LINE__)

/* The same for --where's expression. */
static void where_refused(const char *expr, const char *want, int line)
{
    ru_rules *r = ru_where(expr, "--where", &fzr_schema, err, sizeof err);
    REQUIREF(r == NULL, "line %d: '%s' loaded", line, expr);
    REQUIREF(strcmp(err, want) == 0, "line %d: '%s'\n  gave: %s\n  want: %s", line, expr, err, want);
}
#define WHERE_REFUSED(expr, want) where_refused(expr, want, __LINE__)

/* The verdict on m from both readers, which must agree. */
static bool judge(const ru_rules *r, const fzr_msg *m)
{
    ru_subject_bytes(&rd, (const uint8_t *)m, sizeof *m);
    bool b = ru_judge(r, &rd);
    ru_subject_model(&rd, m);
    bool g = ru_judge(r, &rd);
    REQUIREF(b == g, "bytes say %d, model says %d", b, g);
    return b;
}

/* The rule that decides m, read from its bytes (-1: none). */
static int decide(const ru_rules *r, const fzr_msg *m)
{
    ru_subject_bytes(&rd, (const uint8_t *)m, sizeof *m);
    return ru_decide(r, &rd);
}

/* One expression as `keep EXPR`, judged on m. */
static bool holds(const char *expr, const fzr_msg *m)
{
    char text[512];
    snprintf(text, sizeof text, "keep %s", expr);
    ru_rules *r = load(text);
    bool v = judge(r, m);
    ru_free(r);
    return v;
}

#define HOLDS(m, e) REQUIREF(holds(e, m), "%s:%d: '%s' does not hold", __FILE__, __LINE__, e)
#define FAILS(m, e) REQUIREF(!holds(e, m), "%s:%d: '%s' holds", __FILE__, __LINE__, e)

/* Everything present, with known values. */
static fzr_msg full(void)
{
    fzr_msg m;
    memset(&m, 0, sizeof m);
    m.kind = 1; /* B */
    m.sev = 1;  /* Mid */
    m.has_big = true;
    m.big = 42;
    m.has_ratio = true;
    m.ratio = 2.5;
    m.has_name = true;
    m.name_raw = (js_str)FZR_S("a\\\"b");
    m.name = (js_str){"a\"b", 3};
    m.has_flag = true;
    m.flag = true;
    m.has_small = true;
    m.small = 7;
    m.has_rec = true;
    m.rec = (fzr_rec){5, 1.5, {"abc", 3}, true, 2, false, 0, {3, true, {"w", 1}}};
    m.has_rec2 = true;
    m.rec2 = (fzr_rec){6, -1.0, {"", 0}, false, 0, true, 9, {4, false, {NULL, 0}}};
    m.has_sub = true;
    m.sub = (fzr_sub){true, 100, 0};
    m.many = 70;
    return m;
}

/* Nothing present. */
static fzr_msg empty(void)
{
    fzr_msg m;
    memset(&m, 0, sizeof m);
    m.kind = m.sev = m.many = -1;
    m.sub.lvl = -1;
    return m;
}

/* ===================================================== operators ===== */

START_TEST(enums_and_tags)
{
    fzr_msg m = full();
    HOLDS(&m, "kind == B");
    FAILS(&m, "kind == A");
    HOLDS(&m, "kind != A");
    FAILS(&m, "kind != B");
    HOLDS(&m, "B == kind");
    HOLDS(&m, "A != kind");
    HOLDS(&m, "kind in [A, B]");
    FAILS(&m, "kind in [A, C]");
    FAILS(&m, "kind in []");
    HOLDS(&m, "sev == Mid");
    HOLDS(&m, "sev in [Mid, Mid]");
    FAILS(&m, "sev in [Low, High]");
    HOLDS(&m, "rec.lvl == High");
    HOLDS(&m, "deeplvl == Low");
    FAILS(&m, "rec.lvl == sev");
    HOLDS(&m, "rec.lvl != sev");
    HOLDS(&m, "deeplvl != sev");
    m.sev = 0;
    HOLDS(&m, "deeplvl == sev");
    /* past 64 cases: the set spans words */
    HOLDS(&m, "many == C70");
    HOLDS(&m, "many in [C0, C64, C70]");
    FAILS(&m, "many in [C63, C65, C99]");
    HOLDS(&m, "many != C99");
    m.many = 99;
    HOLDS(&m, "many in [C99]");
    m.many = 0;
    HOLDS(&m, "many == C0 && many != C64");
    /* a case as the message spells it: a JSON string, unescaped */
    m = full();
    HOLDS(&m, "kind == \"B\"");
    HOLDS(&m, "\"A\" != kind");
    HOLDS(&m, "sev == \"M\\u0069d\"");
    HOLDS(&m, "sev in [Low, \"Mid\"]");
    FAILS(&m, "sev in [\"Low\", \"High\"]");
    FAILS(&m, "kind != \"B\"");
}
END_TEST

START_TEST(numbers)
{
    fzr_msg m = full();
    HOLDS(&m, "big == 42");
    FAILS(&m, "big != 42");
    HOLDS(&m, "big < 43");
    FAILS(&m, "big < 42");
    HOLDS(&m, "big <= 42");
    FAILS(&m, "big > 42");
    HOLDS(&m, "big >= 42");
    HOLDS(&m, "43 > big");
    HOLDS(&m, "42 >= big");
    FAILS(&m, "41 >= big");
    HOLDS(&m, "big in [1, 42]");
    FAILS(&m, "big in [1, 2]");
    HOLDS(&m, "big in [42.0]");
    HOLDS(&m, "big == 42.0");
    HOLDS(&m, "big == 4.2e1");
    HOLDS(&m, "big < 42.5");
    HOLDS(&m, "big > 41.5");
    HOLDS(&m, "ratio == 2.5");
    HOLDS(&m, "ratio > 2");
    HOLDS(&m, "ratio < 3");
    HOLDS(&m, "ratio in [1, 2.5]");
    HOLDS(&m, "ratio == 25e-1");
    FAILS(&m, "ratio > big");
    HOLDS(&m, "ratio < big");
    HOLDS(&m, "small == 7");
    HOLDS(&m, "small >= 7.0");
    HOLDS(&m, "small < big");
    HOLDS(&m, "rec.n == 5 && rec.x == 1.5 && rec.inner.depth == 3");
    HOLDS(&m, "rec.n < rec2.n");
    HOLDS(&m, "rec2.x == -1");
    HOLDS(&m, "deep == 100 && deep > big");
    HOLDS(&m, "-1 < 0");
    HOLDS(&m, "2.0 == 2");
    FAILS(&m, "1 > 2");
    m.big = -3;
    HOLDS(&m, "big == -3");
    HOLDS(&m, "big < -2.5");
    HOLDS(&m, "big > -3.5");
    m.big = 0;
    HOLDS(&m, "big == -0");
    HOLDS(&m, "big == -0.0");
}
END_TEST

START_TEST(integers_against_doubles_exactly)
{
    fzr_msg m = full();
    m.big = 9007199254740993; /* 2^53 + 1: no double has it */
    FAILS(&m, "big == 9007199254740992.0");
    HOLDS(&m, "big != 9007199254740992.0");
    HOLDS(&m, "big > 9007199254740992.0");
    FAILS(&m, "big <= 9007199254740992.0");
    HOLDS(&m, "big == 9007199254740993");
    FAILS(&m, "big == 9007199254740992");
    FAILS(&m, "big in [9007199254740992.0]");
    HOLDS(&m, "big in [9007199254740993]");
    m.ratio = 9007199254740992.0;
    HOLDS(&m, "big > ratio");
    HOLDS(&m, "ratio < big");
    FAILS(&m, "big == ratio");
    m.big = 9007199254740992;
    HOLDS(&m, "big == ratio");
    m.big = INT64_MAX;
    HOLDS(&m, "big == 9223372036854775807");
    HOLDS(&m, "big < 9223372036854775808.0");
    HOLDS(&m, "big < 9223372036854775808");
    FAILS(&m, "big == 9223372036854775808");
    HOLDS(&m, "big != 9223372036854775808");
    FAILS(&m, "big >= 9.3e18");
    HOLDS(&m, "big > 9.2e18");
    m.ratio = 9223372036854775808.0;
    HOLDS(&m, "big < ratio");
    m.big = INT64_MIN;
    HOLDS(&m, "big == -9223372036854775808");
    HOLDS(&m, "big == -9223372036854775808.0");
    HOLDS(&m, "big > -9223372036854775809");
    FAILS(&m, "big == -9223372036854775809");
    FAILS(&m, "big in [-9223372036854775809]");
    HOLDS(&m, "big > -1e300 && big < 1e300");
    /* integers past i64 against doubles, exactly: 2^64 is a double,
     * 2^64 + 1 and 2^64 - 1 are not (both round to 2^64) */
    m.ratio = 18446744073709551616.0;
    HOLDS(&m, "ratio == 18446744073709551616");
    FAILS(&m, "ratio == 18446744073709551617");
    HOLDS(&m, "ratio != 18446744073709551617");
    HOLDS(&m, "ratio < 18446744073709551617");
    FAILS(&m, "ratio >= 18446744073709551617");
    HOLDS(&m, "ratio > 18446744073709551615");
    FAILS(&m, "ratio <= 18446744073709551615");
    FAILS(&m, "ratio in [18446744073709551615, 18446744073709551617]");
    HOLDS(&m, "ratio in [18446744073709551615, 18446744073709551616]");
    HOLDS(&m, "18446744073709551617 > ratio");
    m.ratio = -18446744073709551616.0;
    HOLDS(&m, "ratio > -18446744073709551617");
    HOLDS(&m, "ratio < -18446744073709551615");
    FAILS(&m, "ratio == -18446744073709551617");
    /* and two such literals against each other */
    HOLDS(&m, "18446744073709551617 > 18446744073709551616");
    HOLDS(&m, "18446744073709551617 != 18446744073709551616");
    HOLDS(&m, "-18446744073709551617 < -18446744073709551616");
    HOLDS(&m, "-18446744073709551617 < 18446744073709551616");
    HOLDS(&m, "100000000000000000000000 == 100000000000000000000000");
    HOLDS(&m, "18446744073709551617 > 1.8446744073709552e19");
    HOLDS(&m, "1.8446744073709552e19 < 18446744073709551617");
    /* doubles as doubles */
    m.ratio = 0.1;
    HOLDS(&m, "ratio == 0.1");
    FAILS(&m, "ratio == 0.10000000000000001e0 && ratio != 0.1");
}
END_TEST

START_TEST(strings_and_escapes)
{
    fzr_msg m = full(); /* name is a"b, escaped on the bytes side */
    HOLDS(&m, "name == \"a\\\"b\"");
    HOLDS(&m, "name == \"a\\u0022b\"");
    HOLDS(&m, "name == \"\\u0061\\\"\\u0062\"");
    FAILS(&m, "name == \"a\\\\\\\"b\"");
    HOLDS(&m, "name != \"ab\"");
    FAILS(&m, "name != \"a\\\"b\"");
    HOLDS(&m, "name in [\"x\", \"a\\\"b\"]");
    FAILS(&m, "name in [\"x\", \"a\"]");
    HOLDS(&m, "\"a\\\"b\" == name");
    HOLDS(&m, "rec.s == \"abc\" && rec.inner.word == \"w\"");
    HOLDS(&m, "rec2.s == \"\"");
    FAILS(&m, "rec.s == name");
    HOLDS(&m, "\"x\" == \"\\u0078\"");
    m.name_raw = (js_str)FZR_S("\\u00e9t\\u00e9");
    m.name = (js_str){"\xc3\xa9t\xc3\xa9", 5};
    HOLDS(&m, "name == \"\xc3\xa9t\xc3\xa9\"");
    HOLDS(&m, "name == \"\\u00e9t\\u00E9\"");
    FAILS(&m, "name == \"et\\u00e9\"");
    m.name_raw = (js_str){"\\ud83d\\ude00", 12};
    m.name = (js_str){"\xf0\x9f\x98\x80", 4};
    HOLDS(&m, "name == \"\xf0\x9f\x98\x80\"");
    HOLDS(&m, "name == \"\\uD83D\\uDE00\"");
    m.name_raw = (js_str){"tab\\there\\n", 11};
    m.name = (js_str){"tab\there\n", 9};
    HOLDS(&m, "name == \"tab\\there\\n\"");
    HOLDS(&m, "name == \"tab\\u0009here\\u000a\"");
}
END_TEST

START_TEST(bools_and_logic)
{
    fzr_msg m = full();
    HOLDS(&m, "flag");
    FAILS(&m, "!flag");
    HOLDS(&m, "!!flag");
    FAILS(&m, "!(flag)");
    HOLDS(&m, "flag == true");
    HOLDS(&m, "flag != false");
    HOLDS(&m, "true == flag");
    FAILS(&m, "flag in [false]");
    HOLDS(&m, "flag in [false, true]");
    HOLDS(&m, "rec.on && !rec2.on");
    HOLDS(&m, "flag == rec.on");
    FAILS(&m, "flag == rec2.on");
    HOLDS(&m, "true");
    FAILS(&m, "false");
    HOLDS(&m, "!false");
    /* && binds tighter than || */
    HOLDS(&m, "kind == A || kind == B && sev == Mid");
    FAILS(&m, "(kind == A || kind == B) && sev == Low");
    HOLDS(&m, "kind == A && sev == Low || flag");
    FAILS(&m, "kind == A && (sev == Low || flag)");
    /* ! negates the comparison after it */
    HOLDS(&m, "!kind == A");
    FAILS(&m, "!kind == B");
    HOLDS(&m, "!(kind == A) && !(sev == Low)");
    HOLDS(&m, "((((flag))))");
    HOLDS(&m, "has(big) && has(rec) && has(rec.inner) && has(rec.inner.word) && has(sub)");
    HOLDS(&m, "has (deep) && has(deeplvl)");
    FAILS(&m, "has(rec.opt)");
}
END_TEST

START_TEST(missing_values)
{
    fzr_msg m = empty();
    const char *never[] = {
        "kind == A", "kind != A", "kind in [A, B, C]", "sev != Mid", "big == 3", "big != 3",
        "big < 0 || big >= 0", "big in [1]", "ratio != 1.5", "name != \"x\"",
        "name in [\"\"]", "flag", "flag == false", "flag != true", "small != 0", "has(big)",
        "has(rec)", "rec.n != 5", "rec.inner.word != \"w\"", "has(sub)", "deep != 1",
        "deeplvl != Low", "many != C1", "big == big", "big != big", "big == ratio",
        "has(rec.inner)",
    };
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        FAILS(&m, never[i]);
    const char *always[] = {
        "!(big == 3)", "!(big != 3)", "!flag", "!(kind in [A, B, C])", "!has(big)",
        "!has(rec.n)", "!(deep == 1) && !(deep != 1)",
    };
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        HOLDS(&m, always[i]);
    /* a field missing in a record that is there */
    m = full();
    FAILS(&m, "rec.opt == 0");
    FAILS(&m, "rec.opt != 0");
    FAILS(&m, "rec.opt < 0 || rec.opt >= 0");
    HOLDS(&m, "rec2.opt == 9");
    FAILS(&m, "rec2.inner.word != \"x\"");
    HOLDS(&m, "has(rec2.inner) && !has(rec2.inner.word)");
    /* the base is there, the value in it is not */
    m.sub.has_v = false;
    FAILS(&m, "deep != 1");
    HOLDS(&m, "has(sub) && !has(deep) && deeplvl == Low");
    /* the base is missing: everything through it misses */
    m.has_sub = false;
    FAILS(&m, "deeplvl == Low");
    FAILS(&m, "deeplvl != Low");
}
END_TEST

START_TEST(rules_in_order)
{
    fzr_msg m = full();
    ru_rules *r = load("# comment\n\n   # another\ndrop kind == B && flag\nkeep kind == B\n");
    REQUIRE(ru_count(r) == 2);
    REQUIRE(!ru_rule_keeps(r, 0) && ru_rule_keeps(r, 1));
    REQUIRE(ru_rule_line(r, 0) == 4 && ru_rule_line(r, 1) == 5);
    REQUIRE(!judge(r, &m));
    REQUIRE(decide(r, &m) == 0);
    m.flag = false;
    REQUIRE(judge(r, &m));
    REQUIRE(decide(r, &m) == 1);
    m.kind = 0;
    REQUIRE(!judge(r, &m)); /* none holds: drop */
    REQUIRE(decide(r, &m) == -1);
    ru_free(r);

    /* an expression goes on while a bracket is open; comments inside */
    r = load("keep (kind == A   # the first\n   || kind == B) && sev in [\n  Low,\n  Mid # here\n]\n"
             "drop true");
    REQUIRE(ru_count(r) == 2);
    REQUIRE(ru_rule_line(r, 1) == 6);
    m = full();
    REQUIRE(judge(r, &m));
    ru_free(r);

    /* CRLF line ends, no final newline, tabs */
    r = load("keep\tkind == A\r\nkeep kind == B\r\n\r\nkeep false");
    REQUIRE(ru_count(r) == 3);
    REQUIRE(judge(r, &m));
    ru_free(r);

    /* nothing, comments, blank lines: no rules, every message dropped */
    const char *nothing[] = {"", "\n\n", "# only a comment", "  \t\r\n# x\n"};
    for (size_t i = 0; i < sizeof nothing / sizeof nothing[0]; i++) {
        r = load(nothing[i]);
        REQUIRE(ru_count(r) == 0);
        REQUIRE(!judge(r, &m));
        REQUIRE(decide(r, &m) == -1);
        ru_free(r);
    }
    r = ru_parse(NULL, 0, "t.rules", &fzr_schema, err, sizeof err);
    REQUIRE(r != NULL && ru_count(r) == 0);
    ru_free(r);

    /* what the rules read */
    r = load("keep deep == 1 || rec.n == 2\ndrop many == C1");
    REQUIRE(ru_optics_used(r) ==
            ((1ull << FZR_DEEP) | (1ull << FZR_SUB) | (1ull << FZR_REC) | (1ull << FZR_MANY)));
    ru_free(r);
}
END_TEST

START_TEST(where_is_one_keep_rule)
{
    fzr_msg m = full();
    ru_rules *r = ru_where("kind == B &&\nflag", "--where", &fzr_schema, err, sizeof err);
    REQUIREF(r != NULL, "%s", err);
    REQUIRE(ru_count(r) == 1 && ru_rule_keeps(r, 0));
    REQUIRE(judge(r, &m));
    ru_free(r);
    WHERE_REFUSED("kind == Bee", "--where:1:9: 'Bee' is not a case of Kind (cases: A, B, C)");
    WHERE_REFUSED("", "--where:1:1: expected an optic, a value, '!' or '(', found the end");
    WHERE_REFUSED("flag\n  keep", "--where:2:3: expected '&&', '||' or the end, found 'keep'");
    WHERE_REFUSED("(flag", "--where:1:6: expected '&&', '||' or ')', found the end");
}
END_TEST

/* ===================================================== laziness ===== */

static void scan_once(const ru_rules *r, const fzr_msg *m)
{
    fzr_count_reset();
    ru_subject_bytes(&rd, (const uint8_t *)m, sizeof *m);
    (void)ru_judge(r, &rd);
}

START_TEST(lazy_and_read_at_most_once)
{
    fzr_msg m = full();
    ru_rules *r = load("keep kind == A && big == 1\n"
                       "keep kind == B && sev == Mid\n"
                       "keep kind == C && ratio > 0\n");
    scan_once(r, &m);
    REQUIRE(fzr_scans[FZR_KIND] == 1 && fzr_scans[FZR_SEV] == 1);
    REQUIRE(fzr_scans[FZR_BIG] == 0 && fzr_scans[FZR_RATIO] == 0);
    REQUIRE(rd.reads == 2);
    /* the same from the model */
    fzr_count_reset();
    ru_subject_model(&rd, &m);
    REQUIRE(ru_judge(r, &rd));
    REQUIRE(fzr_gets[FZR_KIND] == 1 && fzr_gets[FZR_SEV] == 1 && fzr_gets[FZR_BIG] == 0);
    REQUIRE(fzr_scans[FZR_KIND] == 0);
    ru_free(r);

    /* || stops at the first that holds */
    r = load("keep flag || big == 1 || sev == Low");
    scan_once(r, &m);
    REQUIRE(fzr_scans[FZR_FLAG] == 1 && fzr_scans[FZR_BIG] == 0 && fzr_scans[FZR_SEV] == 0);
    ru_free(r);

    /* one optic named many times is read once */
    r = load("keep big == 1 || big == 2 || big in [3, 4] || has(big) && big > 100\n"
             "keep big == 42 && !(big != 42)");
    scan_once(r, &m);
    REQUIRE(fzr_scans[FZR_BIG] == 1);
    REQUIRE(rd.reads == 1);
    ru_free(r);

    /* a miss is cached too */
    fzr_msg e = empty();
    r = load("keep big == 1 || big != 1 || has(big) || big < 0");
    scan_once(r, &e);
    REQUIRE(fzr_scans[FZR_BIG] == 1);
    ru_free(r);

    /* a record is read once for all its fields */
    r = load("keep rec.n == 5 && rec.x == 1.5 && rec.inner.depth == 3 && rec.inner.word == \"w\"");
    scan_once(r, &m);
    REQUIRE(fzr_scans[FZR_REC] == 1);
    ru_free(r);

    /* two record optics have their own scratch: rec is read first, rec2
     * after, then rec's fields again from the cache */
    r = load("keep rec.n == 5 && rec2.n == 6 && rec.n == 5 && rec.s == \"abc\"");
    scan_once(r, &m);
    REQUIRE(fzr_scans[FZR_REC] == 1 && fzr_scans[FZR_REC2] == 1);
    ru_subject_bytes(&rd, (const uint8_t *)&m, sizeof m);
    REQUIRE(ru_judge(r, &rd));
    ru_free(r);

    /* the base is scanned once for every optic through it */
    r = load("keep deep == 1 || deeplvl == Mid || has(sub) && deep == 2");
    scan_once(r, &m);
    REQUIRE(fzr_scans[FZR_SUB] == 1 && fzr_scans[FZR_DEEP] == 1 && fzr_scans[FZR_DEEPLVL] == 1);
    REQUIRE(rd.reads == 3);
    fzr_count_reset();
    ru_subject_model(&rd, &m);
    (void)ru_judge(r, &rd);
    REQUIRE(fzr_gets[FZR_SUB] == 1 && fzr_gets[FZR_DEEP] == 1 && fzr_gets[FZR_DEEPLVL] == 1);
    /* a missing base: the optics through it are not scanned */
    m.has_sub = false;
    scan_once(r, &m);
    REQUIRE(fzr_scans[FZR_SUB] == 1 && fzr_scans[FZR_DEEP] == 0 && fzr_scans[FZR_DEEPLVL] == 0);
    m = full();
    ru_free(r);

    /* drop rules after the last keep cannot change the verdict: ru_judge
     * leaves them, ru_decide tries them */
    r = load("keep kind == A\ndrop big == 1\ndrop sev == Low");
    scan_once(r, &m);
    REQUIRE(fzr_scans[FZR_KIND] == 1 && fzr_scans[FZR_BIG] == 0 && fzr_scans[FZR_SEV] == 0);
    fzr_count_reset();
    REQUIRE(decide(r, &m) == -1);
    REQUIRE(fzr_scans[FZR_BIG] == 1 && fzr_scans[FZR_SEV] == 1);
    ru_free(r);

    /* a constant rule reads nothing */
    r = load("keep true");
    scan_once(r, &m);
    REQUIRE(rd.reads == 0);
    ru_free(r);
}
END_TEST

/* The same rules with every expression written `true && (EXPR)`: the
 * meaning and the reads are the same, and no rule begins with a set test,
 * so the rules get no index and each is tried in turn. */
static ru_rules *load_unindexed(const char *text)
{
    char out[8192];
    size_t o = 0;
    for (const char *l = text; *l != '\0';) {
        const char *nl = strchr(l, '\n');
        size_t n = nl != NULL ? (size_t)(nl - l) : strlen(l);
        REQUIRE(n > 5 && (strncmp(l, "keep ", 5) == 0 || strncmp(l, "drop ", 5) == 0));
        int w = snprintf(out + o, sizeof out - o, "%.5strue && (%.*s)\n", l, (int)(n - 5), l + 5);
        REQUIRE(w > 0 && (size_t)w < sizeof out - o);
        o += (size_t)w;
        l += n + (nl != NULL);
    }
    return load(out);
}

/* What one judging of m gave and read. */
typedef struct {
    int decided;
    bool kept;
    uint64_t reads;
    unsigned scans[FZR_NOPTICS], gets[FZR_NOPTICS];
} outcome;

static outcome judged_by(const ru_rules *r, const fzr_msg *m, bool model)
{
    outcome o;
    fzr_count_reset();
    if (model)
        ru_subject_model(&rd, m);
    else
        ru_subject_bytes(&rd, (const uint8_t *)m, sizeof *m);
    o.kept = ru_judge(r, &rd);
    o.reads = rd.reads;
    memcpy(o.scans, fzr_scans, sizeof o.scans);
    memcpy(o.gets, fzr_gets, sizeof o.gets);
    /* ru_decide on a fresh read of the same message (ru_judge may stop at a keep sooner) */
    if (model)
        ru_subject_model(&rd, m);
    else
        ru_subject_bytes(&rd, (const uint8_t *)m, sizeof *m);
    o.decided = ru_decide(r, &rd);
    REQUIREF(ru_decide_in_turn(r, &rd) == o.decided, "ru_decide_in_turn says rule %d, ru_decide %d",
             ru_decide_in_turn(r, &rd), o.decided);
    return o;
}

/* Rules whose expressions begin with a test of one path against a set of
 * cases (`kind == A && ...`) are tried only for the cases that test admits
 * (the index): every verdict, the rule that decides and every optic read
 * must be those of trying each rule in turn, whatever the path's value
 * (each case, absent), with rules that begin otherwise in between. */
START_TEST(index_gives_the_verdict_of_each_rule_tried)
{
    static const char *const sets[] = {
        "keep kind == A && big == 1\nkeep kind == B && sev == Mid\nkeep kind == C && flag",
        "keep kind in [A, B] && sev != Low\ndrop kind == B\nkeep sev == High\n"
        "keep kind != A && big > 1\nkeep kind == C",
        "drop kind == A\nkeep kind == A || flag\nkeep kind == B && big == 42 && sev in [Mid, High]",
        "keep flag == true && sev == Mid\nkeep flag == false && big == 42\nkeep flag != true",
        "keep many in [C0, C70] && kind == B\nkeep many == C99\nkeep many != C70 && sev == Low\n"
        "drop many in [C64, C65]\nkeep has(big)",
        "keep sev == Low\nkeep sev == Mid && kind == A\nkeep sev in [High] && (big == 1 || flag)\n"
        "drop sev == Mid\nkeep !(kind == C)",
        "keep deeplvl == Mid && deep == 1\nkeep deeplvl == High\nkeep kind == C && deeplvl != Low",
        "keep kind == A && big == 1\ndrop kind == B\nkeep kind == C && sev == Mid\ndrop true",
        "drop kind == A && big == 1\ndrop kind == B", /* ru_judge has nothing to try */
    };
    static char many[2][8192];
    /* 64 rules (the most an index covers) and 65 (no index) */
    for (int k = 0; k < 2; k++) {
        size_t o = 0;
        for (int i = 0; i < 64 + k; i++)
            o += (size_t)snprintf(many[k] + o, sizeof many[k] - o, "%s kind == %s && big == %d\n",
                                  i % 3 == 1 ? "drop" : "keep", (const char *[]){"A", "B", "C"}[i % 3],
                                  i % 5);
        many[k][o - 1] = '\0';
    }
    static const int kinds[] = {-1, 0, 1, 2}, sevs[] = {-1, 0, 1, 2}, manys[] = {-1, 0, 64, 70, 99};
    static const int64_t bigs[] = {-1, 1, 4, 42};
    int nsets = (int)(sizeof sets / sizeof *sets) + 2, differed = 0;
    for (int t = 0; t < nsets; t++) {
        const char *text = t < nsets - 2 ? sets[t] : many[t - (nsets - 2)];
        ru_rules *a = load(text), *b = load_unindexed(text);
        int decisions[66] = {0};
        for (int ki = 0; ki < 4; ki++)
            for (int si = 0; si < 4; si++)
                for (int fi = 0; fi < 3; fi++)
                    for (int bi = 0; bi < 4; bi++)
                        for (int mi = 0; mi < 5; mi++) {
                            fzr_msg m = full();
                            m.kind = kinds[ki];
                            m.sev = sevs[si];
                            m.has_flag = fi > 0;
                            m.flag = fi == 2;
                            m.has_big = bigs[bi] >= 0;
                            m.big = bigs[bi];
                            m.many = manys[mi];
                            m.sub.lvl = sevs[(ki + si) % 4];
                            m.sub.v = bigs[bi] == 1;
                            for (int model = 0; model < 2; model++) {
                                outcome x = judged_by(a, &m, model), y = judged_by(b, &m, model);
                                REQUIREF(x.decided == y.decided && x.kept == y.kept &&
                                             x.reads == y.reads,
                                         "rules %d, %s, kind %d sev %d flag %d big %lld many %d: "
                                         "rule %d (kept %d, %llu reads), tried in turn rule %d "
                                         "(kept %d, %llu reads)",
                                         t, model ? "model" : "bytes", m.kind, m.sev, fi,
                                         (long long)m.big, m.many, x.decided, x.kept,
                                         (unsigned long long)x.reads, y.decided, y.kept,
                                         (unsigned long long)y.reads);
                                REQUIREF(memcmp(x.scans, y.scans, sizeof x.scans) == 0 &&
                                             memcmp(x.gets, y.gets, sizeof x.gets) == 0,
                                         "rules %d: other optics read than tried in turn", t);
                                decisions[x.decided + 1]++;
                            }
                        }
        /* the messages make the rules decide several ways */
        int ways = 0;
        for (int i = 0; i < 66; i++)
            ways += decisions[i] > 0;
        REQUIREF(ways >= 3, "rules %d: only %d outcomes", t, ways);
        differed += ways;
        ru_free(a);
        ru_free(b);
    }
    REQUIRE(differed > 3 * nsets);
}
END_TEST

START_TEST(cache_is_per_message)
{
    ru_rules *r = load("keep big == 42 && name == \"a\\\"b\" && rec.n == 5");
    fzr_msg a = full(), b = full();
    b.big = 41;
    REQUIRE(judge(r, &a));
    REQUIRE(!judge(r, &b));
    REQUIRE(judge(r, &a));
    /* the generation counter wraps: nothing of the old messages is seen */
    ru_subject_bytes(&rd, (const uint8_t *)&a, sizeof a);
    REQUIRE(ru_judge(r, &rd));
    rd.gen = UINT32_MAX;
    ru_subject_bytes(&rd, (const uint8_t *)&b, sizeof b);
    REQUIRE(rd.gen == 1);
    REQUIRE(!ru_judge(r, &rd));
    ru_subject_bytes(&rd, (const uint8_t *)&a, sizeof a);
    REQUIRE(ru_judge(r, &rd));
    /* ru_read through the same cache */
    fzr_count_reset();
    ru_subject_bytes(&rd, (const uint8_t *)&a, sizeof a);
    op_value v;
    REQUIRE(ru_read(&rd, FZR_BIG, &v) && v.i == 42);
    REQUIRE(ru_judge(r, &rd));
    REQUIRE(ru_read(&rd, FZR_DEEP, &v) && v.i == 100);
    REQUIRE(fzr_scans[FZR_BIG] == 1 && fzr_scans[FZR_SUB] == 1);
    REQUIRE(!ru_read(&rd, FZR_ORPHAN, &v)); /* cannot be read from a message */
    REQUIRE(!ru_read(&rd, -1, &v) && !ru_read(&rd, FZR_NOPTICS, &v));
    REQUIRE(fzr_scans[FZR_ORPHAN] == 0);
    /* a reader of another schema judges nothing */
    op_schema other = fzr_schema;
    ru_subject od;
    REQUIRE(ru_subject_init(&od, &other, &arena));
    ru_subject_bytes(&od, (const uint8_t *)&a, sizeof a);
    REQUIRE(!ru_judge(r, &od) && ru_decide(r, &od) == -1 && od.reads == 0);
    ru_free(r);
}
END_TEST

/* A C oracle for one rules file, over the struct. */
static bool name_is(const fzr_msg *m, const char *s)
{
    return m->name.n == strlen(s) && memcmp(m->name.p, s, m->name.n) == 0;
}

static bool oracle(const fzr_msg *m)
{
    if (m->kind == 0 && m->sev >= 0 && m->sev <= 1)
        return true;
    if (m->has_big && m->big >= 130 && m->has_name && !name_is(m, "abc"))
        return true;
    if (m->has_rec && m->rec.has_opt && (double)m->rec.opt > -2.5 && m->has_ratio && m->ratio < 0)
        return false;
    if (m->has_sub && m->sub.has_v && m->has_small && m->sub.v != m->small)
        return true;
    return m->has_flag && !m->flag;
}

START_TEST(readers_agree_with_each_other_and_an_oracle)
{
    ru_rules *r = load("keep kind == A && sev in [Low, Mid]\n"
                       "keep big >= 130 && name != \"abc\"\n"
                       "drop rec.opt > -2.5 && ratio < 0\n"
                       "keep deep != small\n"
                       "keep !flag && has(flag)\n");
    const char *others[] = {
        ("keep many in [C1, C2, C70] || rec.inner.word == \"abc\" && !(rec.lvl == High)\n"
         "drop has(rec2) && rec2.x >= ratio\nkeep deeplvl != sev || big < ratio"),
        "keep name in [\"\", \"a\\\"b\", \"\\u00e9t\\u00e9\", \"\\ud83d\\ude00\"]",
        "drop !has(kind)\nkeep kind != C && (flag || rec.on == flag) && small <= big",
    };
    ru_rules *more[3];
    for (int i = 0; i < 3; i++)
        more[i] = load(others[i]);
    int kept = 0;
    for (uint64_t seed = 1; seed <= 20000; seed++) {
        fzr_msg m;
        fzr_random(seed, &m);
        bool v = judge(r, &m);
        REQUIREF(v == oracle(&m), "seed %llu: rules say %d", (unsigned long long)seed, v);
        kept += v;
        for (int i = 0; i < 3; i++)
            (void)judge(more[i], &m);
    }
    REQUIRE(kept > 2000 && kept < 18000); /* both verdicts are exercised */
    for (int i = 0; i < 3; i++)
        ru_free(more[i]);
    ru_free(r);
}
END_TEST

/* ===================================================== errors ===== */

#define OPTICS "(optics: kind, sev, big, ratio, name, flag, small, rec, rec2, sub, deep, deeplvl, many)"

START_TEST(load_errors)
{
    /* structure */
    REFUSED("kep kind == A", "t.rules:1:1: expected 'keep' or 'drop', found 'kep'");
    REFUSED("\n  (kind == A)", "t.rules:2:3: expected 'keep' or 'drop', found '('");
    REFUSED("keep", "t.rules:1:5: expected an optic, a value, '!' or '(', found end of file");
    REFUSED("keep\nkeep flag", "t.rules:1:5: expected an optic, a value, '!' or '(', found end of line");
    REFUSED("keep flag &&\n big == 1",
            "t.rules:1:13: expected an optic, a value, '!' or '(', found end of line");
    REFUSED("keep flag big", "t.rules:1:11: expected '&&', '||' or end of line, found 'big'");
    REFUSED("keep flag)", "t.rules:1:10: expected '&&', '||' or end of line, found ')'");
    REFUSED("keep (flag", "t.rules:1:11: expected '&&', '||' or ')', found end of file");
    REFUSED("keep (flag\n\n", "t.rules:3:1: expected '&&', '||' or ')', found end of file");
    REFUSED("keep (flag]", "t.rules:1:11: expected '&&', '||' or ')', found ']'");
    REFUSED("keep big == 1 == 2", "t.rules:1:15: expected '&&', '||' or end of line, found '=='");
    REFUSED("keep big ==", "t.rules:1:12: expected an optic or a value after '==', found end of file");
    REFUSED("keep big >= && flag", "t.rules:1:13: expected an optic or a value after '>=', found '&&'");
    REFUSED("keep big = 1", "t.rules:1:10: expected '==', found '='");
    REFUSED("keep flag & flag", "t.rules:1:11: expected '&&', '||' or end of line, found '&'");
    REFUSED("keep flag | flag", "t.rules:1:11: expected '&&', '||' or end of line, found '|'");
    REFUSED("keep @", "t.rules:1:6: expected an optic, a value, '!' or '(', found '@'");
    REFUSED("keep \xc3\xa9", "t.rules:1:6: expected an optic, a value, '!' or '(', found '\xc3\xa9' (U+00E9)");
    REFUSED("keep flag\x01", "t.rules:1:10: expected '&&', '||' or end of line, found U+0001");
    REFUSED("keep flag ;", "t.rules:1:11: expected '&&', '||' or end of line, found ';'");
    /* in lists */
    REFUSED("keep sev in Low", "t.rules:1:13: expected '[' after 'in', found 'Low'");
    REFUSED("keep sev in [Low", "t.rules:1:17: expected ',' or ']', found end of file");
    REFUSED("keep sev in [Low Mid]", "t.rules:1:18: expected ',' or ']', found 'Mid'");
    REFUSED("keep sev in [Low,]", "t.rules:1:18: expected a case of Sev, found ']'");
    REFUSED("keep sev in [Low, 3]", "t.rules:1:19: expected a case of Sev, found the number 3");
    REFUSED("keep sev in [Low, \"Urgent\"]",
            "t.rules:1:19: '\"Urgent\"' is not a case of Sev (cases: Low, Mid, High)");
    REFUSED("keep sev in [Low, \"low\"]", "t.rules:1:19: '\"low\"' is not a case of Sev (cases: Low, Mid, High)");
    REFUSED("keep sev in [Low, Urgent]",
            "t.rules:1:19: 'Urgent' is not a case of Sev (cases: Low, Mid, High)");
    REFUSED("keep big in [1, Low]", "t.rules:1:17: expected a number, found 'Low'");
    REFUSED("keep big in [1, \"2\"]", "t.rules:1:17: expected a number, found the string \"2\"");
    REFUSED("keep name in [\"a\", 1]", "t.rules:1:20: expected a string, found the number 1");
    REFUSED("keep flag in [true, 1]", "t.rules:1:21: expected true or false, found the number 1");
    REFUSED("keep Low in [Low]", "t.rules:1:6: unknown optic 'Low' " OPTICS);
    REFUSED("keep 3 in [3]", "t.rules:1:6: expected an optic before 'in', found the number 3");
    REFUSED("keep rec in [1]",
            "t.rules:1:6: expected a value, found rec, a record (Rec): compare one of its fields "
            "(n, x, s, on, lvl, opt, inner) or test has(rec)");
    /* names */
    REFUSED("keep sevv == Low", "t.rules:1:6: unknown optic 'sevv' " OPTICS);
    REFUSED("keep sevv", "t.rules:1:6: unknown optic 'sevv' " OPTICS);
    REFUSED("keep has(sevv)", "t.rules:1:10: unknown optic 'sevv' " OPTICS);
    REFUSED("keep votes.count >= 130", "t.rules:1:6: unknown optic 'votes' " OPTICS);
    REFUSED("keep Low == High", "t.rules:1:6: unknown optic 'Low' " OPTICS);
    REFUSED("keep 1 == High", "t.rules:1:11: unknown optic 'High' " OPTICS);
    REFUSED("keep sev == Urgent", "t.rules:1:13: 'Urgent' is not a case of Sev (cases: Low, Mid, High)");
    REFUSED("keep Urgent != sev", "t.rules:1:6: 'Urgent' is not a case of Sev (cases: Low, Mid, High)");
    REFUSED("keep kind == D", "t.rules:1:14: 'D' is not a case of Kind (cases: A, B, C)");
    REFUSED("keep many == C100",
            "t.rules:1:14: 'C100' is not a case of Many (cases: C0, C1, C2, C3, C4, C5, C6, C7, "
            "C8, C9, C10, C11, C12, C13, C14, C15, C16, C17, C18, C19, C20, C21, C22, C23, C24, "
            "C25, C26, C27, C28, C29, C30, C31, C32, C33, C34, C35, C36, C37, C38, C39, C40, C41, "
            "C42, C43, C44, C45, C46, C47, C48, C49, C50, C51, C52, C53, C54, C55, C56, C57, C58, "
            "C59, C60, C61, C62, C63, C64, C65, C66, C67, C68, C69, C70, C71, C72, C73, C74, C75, "
            "C76, C77, C78, C79, C80, C81, C82, C83, C84, C85, C86, C87, C88, C89, C90, C91, C92, "
            "C93, C94, C95, C96, C97, C98, C99)");
    REFUSED("keep orphan == 1",
            "t.rules:1:6: optic 'orphan' reads values of Sub and cannot be read from a message (no "
            "raw optic from the root reaches Sub)");
    /* fields */
    REFUSED("keep rec.m == 1", "t.rules:1:10: Rec has no field 'm' (fields: n, x, s, on, lvl, opt, inner)");
    REFUSED("keep rec.inner.deep == 1", "t.rules:1:16: Inner has no field 'deep' (fields: depth, word)");
    /* a list, map or union field is named as what it is, not as missing */
    REFUSED("keep rec.tags == 1", "t.rules:1:10: expected a value, found Rec.tags, a list: rules "
                                  "read no list, map or union (fields they read: n, x, s, on, lvl, "
                                  "opt, inner)");
    REFUSED("keep has(rec.shape)", "t.rules:1:14: expected a value, found Rec.shape, a union: rules "
                                   "read no list, map or union (fields they read: n, x, s, on, lvl, "
                                   "opt, inner)");
    REFUSED("keep rec.n.m == 1", "t.rules:1:12: rec.n (i64) is not a record: it has no field 'm'");
    REFUSED("keep big.m == 1", "t.rules:1:10: big (i64) is not a record: it has no field 'm'");
    REFUSED("keep rec. == 1", "t.rules:1:11: expected a field name after '.', found '=='");
    REFUSED("keep rec.3 == 1", "t.rules:1:10: expected a field name after '.', found the number 3");
    /* types */
    REFUSED("keep sev == 1",
            "t.rules:1:13: expected a case of Sev (to compare with sev), found the number 1");
    REFUSED("keep 2 != sev", "t.rules:1:6: expected a case of Sev (to compare with sev), found the number 2");
    REFUSED("keep sev == \"Urgent\"",
            "t.rules:1:13: '\"Urgent\"' is not a case of Sev (cases: Low, Mid, High)");
    REFUSED("keep \"Hig\\u0068er\" != sev",
            "t.rules:1:6: '\"Hig\\u0068er\"' is not a case of Sev (cases: Low, Mid, High)");
    REFUSED("keep sev == kind", "t.rules:1:13: expected a case of Sev (to compare with sev), found kind (Kind)");
    REFUSED("keep sev == many", "t.rules:1:13: expected a case of Sev (to compare with sev), found many (Many)");
    REFUSED("keep sev < High", "t.rules:1:6: expected a number on each side of '<', found sev (Sev)");
    REFUSED("keep big < High", "t.rules:1:12: expected a number on each side of '<', found 'High'");
    REFUSED("keep name >= \"a\"", "t.rules:1:6: expected a number on each side of '>=', found name (string)");
    REFUSED("keep flag > false", "t.rules:1:6: expected a number on each side of '>', found flag (bool)");
    REFUSED("keep \"a\" <= \"b\"", "t.rules:1:6: expected a number on each side of '<=', found the string \"a\"");
    REFUSED("keep big > name", "t.rules:1:12: expected a number on each side of '>', found name (string)");
    REFUSED("keep big == \"42\"",
            "t.rules:1:13: expected a number (to compare with big), found the string \"42\"");
    REFUSED("keep big == Low", "t.rules:1:13: expected a number (to compare with big), found 'Low'");
    REFUSED("keep big == flag", "t.rules:1:13: expected a number (to compare with big), found flag (bool)");
    REFUSED("keep name == 1", "t.rules:1:14: expected a string (to compare with name), found the number 1");
    REFUSED("keep flag == 1", "t.rules:1:14: expected true or false (to compare with flag), found the number 1");
    REFUSED("keep 1 == \"1\"", "t.rules:1:11: expected a number (to compare with 1), found the string \"1\"");
    REFUSED("keep true == 1", "t.rules:1:14: expected true or false (to compare with true), found the number 1");
    /* records, raw values, non-conditions */
    REFUSED("keep rec == 1",
            "t.rules:1:6: expected a value, found rec, a record (Rec): compare one of its fields "
            "(n, x, s, on, lvl, opt, inner) or test has(rec)");
    REFUSED("keep rec.inner != rec2.inner",
            "t.rules:1:6: expected a value, found rec.inner, a record (Inner): compare one of its "
            "fields (depth, word) or test has(rec.inner)");
    REFUSED("keep 1 == rec",
            "t.rules:1:11: expected a value, found rec, a record (Rec): compare one of its fields "
            "(n, x, s, on, lvl, opt, inner) or test has(rec)");
    REFUSED("keep rec",
            "t.rules:1:6: expected a value, found rec, a record (Rec): compare one of its fields "
            "(n, x, s, on, lvl, opt, inner) or test has(rec)");
    REFUSED("keep sub == 1", "t.rules:1:6: expected a value, found sub, raw JSON (Sub): only has(sub) applies to it");
    REFUSED("keep sub.x == 1",
            "t.rules:1:10: sub is raw JSON (Sub): '.x' reads a field of an optic declared without raw");
    REFUSED("keep sub", "t.rules:1:6: expected a value, found sub, raw JSON (Sub): only has(sub) applies to it");
    REFUSED("keep big", "t.rules:1:6: expected a condition, found big (i64): compare it, or test has(big)");
    REFUSED("keep rec.lvl", "t.rules:1:6: expected a condition, found rec.lvl (Sev): compare it, or test has(rec.lvl)");
    REFUSED("keep 1", "t.rules:1:6: expected a condition, found the number 1");
    REFUSED("keep \"x\"", "t.rules:1:6: expected a condition, found the string \"x\"");
    /* has() */
    REFUSED("keep has(1)", "t.rules:1:10: expected an optic in has(), found the number 1");
    REFUSED("keep has(Low)", "t.rules:1:10: unknown optic 'Low' " OPTICS);
    REFUSED("keep has()", "t.rules:1:10: expected an optic, found ')'");
    REFUSED("keep has(big", "t.rules:1:13: expected ')' to close has(, found end of file");
    REFUSED("keep has(big == 1)", "t.rules:1:14: expected ')' to close has(, found '=='");
    REFUSED("keep has", "t.rules:1:6: unknown optic 'has' " OPTICS);
    /* literals */
    REFUSED("keep big == 01", "t.rules:1:13: malformed number '01' (numbers are written as in JSON)");
    REFUSED("keep big == 1.", "t.rules:1:13: malformed number '1.' (numbers are written as in JSON)");
    REFUSED("keep big == -", "t.rules:1:13: malformed number '-' (numbers are written as in JSON)");
    REFUSED("keep big == +1", "t.rules:1:13: expected an optic or a value after '==', found '+'");
    REFUSED("keep big == 1x", "t.rules:1:13: malformed number '1x' (numbers are written as in JSON)");
    REFUSED("keep big == .5", "t.rules:1:13: expected an optic or a value after '==', found '.'");
    REFUSED("keep big == 0x10", "t.rules:1:13: malformed number '0x10' (numbers are written as in JSON)");
    REFUSED("keep big == -big", "t.rules:1:13: malformed number '-big' (numbers are written as in JSON)");
    REFUSED("keep ratio == 1e400", "t.rules:1:15: number out of range: 1e400");
    REFUSED("keep name == \"a", "t.rules:1:16: expected '\"' to close the string, found end of file");
    REFUSED("keep name == \"a\nkeep flag", "t.rules:1:16: expected '\"' to close the string, found end of line");
    REFUSED("keep name == \"a\\x\"", "t.rules:1:16: invalid string: invalid escape sequence");
    REFUSED("keep name == \"\\ud800\"", "t.rules:1:15: invalid string: lone or broken surrogate in \\u escape");
    REFUSED("keep name == \"\\u12\"", "t.rules:1:15: invalid string: invalid escape sequence");
    REFUSED("keep name == \"a\tb\"", "t.rules:1:16: invalid string: raw control character in string");
    /* the place counts characters, not bytes */
    REFUSED("keep name == \"\xc3\xa9\xc3\xa9\" && sevv == Low", "t.rules:1:22: unknown optic 'sevv' " OPTICS);
}
END_TEST

START_TEST(encoding_and_limits)
{
    /* not UTF-8 */
    REFUSED("keep name == \"\xff\"", "t.rules:1:15: invalid UTF-8 (byte 0xFF)");
    REFUSED("# \xc0\xaf\nkeep flag", "t.rules:1:3: invalid UTF-8 (byte 0xC0)");
    REFUSED("keep flag\n# \xed\xa0\x80", "t.rules:2:3: invalid UTF-8 (byte 0xED)");
    REFUSED("keep flag # \xf4\x90\x80\x80", "t.rules:1:13: invalid UTF-8 (byte 0xF4)");
    REFUSED("keep flag # \xe2\x82", "t.rules:1:13: invalid UTF-8 (byte 0xE2)");
    REFUSED("keep flag # \x80", "t.rules:1:13: invalid UTF-8 (byte 0x80)");
    /* a NUL is a character like any other: not a token */
    refused("keep flag\0", 10, "t.rules:1:10: expected '&&', '||' or end of line, found U+0000", __LINE__);

    /* the length */
    size_t big = 10u << 20;
    char *t = malloc(big + 1);
    REQUIRE(t != NULL);
    for (size_t i = 0; i < big; i += 10)
        memcpy(t + i, "keep true\n", 10);
    t[big] = '\0';
    refused(t, big, "t.rules:104858:7: the text goes on past 1048576 bytes, the limit for rules", __LINE__);
    /* the same from a file */
    char path[] = "/tmp/test_rules_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, t, big) == (ssize_t)big);
    close(fd);
    ru_rules *r = ru_load(path, &fzr_schema, err, sizeof err);
    REQUIRE(r == NULL);
    char want[256];
    snprintf(want, sizeof want, "%s:104858:7: the text goes on past 1048576 bytes, the limit for rules", path);
    ck_assert_str_eq(err, want);
    unlink(path);
    /* exactly the limit is fine */
    memset(t, '#', RU_MAX_BYTES);
    r = ru_parse(t, RU_MAX_BYTES, "t.rules", &fzr_schema, err, sizeof err);
    REQUIREF(r != NULL, "%s", err);
    REQUIRE(ru_count(r) == 0);
    ru_free(r);

    /* lines */
    memset(t, '\n', RU_MAX_LINES);
    r = ru_parse(t, RU_MAX_LINES, "t.rules", &fzr_schema, err, sizeof err);
    REQUIREF(r != NULL, "%s", err);
    ru_free(r);
    t[RU_MAX_LINES] = 'x';
    refused(t, RU_MAX_LINES + 1, "t.rules:65537:1: more than 65536 lines, the limit for rules", __LINE__);
    /* a long expression over many lines (inside parentheses) */
    size_t n = (size_t)snprintf(t, big, "keep (");
    for (int i = 0; i < 50000; i++)
        n += (size_t)snprintf(t + n, big - n, "big == %d ||\n", i + 1000);
    n += (size_t)snprintf(t + n, big - n, "flag)\n");
    r = ru_parse(t, n, "t.rules", &fzr_schema, err, sizeof err);
    REQUIREF(r != NULL, "%s", err);
    fzr_msg m = full();
    REQUIRE(judge(r, &m));
    m.flag = false;
    REQUIRE(!judge(r, &m));
    ru_free(r);

    /* nesting: 100000 parentheses stop at the limit; as many '!' are fine */
    n = (size_t)snprintf(t, big, "keep ");
    for (int i = 0; i < 100000; i++)
        t[n++] = '(';
    n += (size_t)snprintf(t + n, big - n, "flag");
    for (int i = 0; i < 100000; i++)
        t[n++] = ')';
    refused(t, n, "t.rules:1:70: more than 64 parentheses nested", __LINE__);
    n = (size_t)snprintf(t, big, "keep ");
    for (int i = 0; i < RU_MAX_DEPTH; i++)
        t[n++] = '(';
    n += (size_t)snprintf(t + n, big - n, "flag");
    for (int i = 0; i < RU_MAX_DEPTH; i++)
        t[n++] = ')';
    r = ru_parse(t, n, "t.rules", &fzr_schema, err, sizeof err);
    REQUIREF(r != NULL, "%s", err);
    m = full();
    REQUIRE(judge(r, &m));
    ru_free(r);
    n = (size_t)snprintf(t, big, "keep ");
    for (int i = 0; i < 100000; i++)
        t[n++] = '!';
    n += (size_t)snprintf(t + n, big - n, "!flag");
    r = ru_parse(t, n, "t.rules", &fzr_schema, err, sizeof err);
    REQUIREF(r != NULL, "%s", err);
    REQUIRE(!judge(r, &m)); /* 100001 negations */
    ru_free(r);

    /* list length */
    n = (size_t)snprintf(t, big, "keep big in [");
    for (int i = 0; i < RU_MAX_LIST; i++)
        n += (size_t)snprintf(t + n, big - n, "%s%d", i ? ", " : "", i);
    size_t at = n;
    n += (size_t)snprintf(t + n, big - n, "]");
    r = ru_parse(t, n, "t.rules", &fzr_schema, err, sizeof err);
    REQUIREF(r != NULL, "%s", err);
    m.big = RU_MAX_LIST - 1;
    REQUIRE(judge(r, &m));
    ru_free(r);
    n = at + (size_t)snprintf(t + at, big - at, ", 999]");
    refused(t, n, "t.rules:1:1184: more than 256 items in one list", __LINE__);

    /* many rules */
    n = 0;
    for (int i = 0; i < 50000; i++)
        n += (size_t)snprintf(t + n, big - n, "drop big == %d\n", i);
    n += (size_t)snprintf(t + n, big - n, "keep true\n");
    r = ru_parse(t, n, "t.rules", &fzr_schema, err, sizeof err);
    REQUIREF(r != NULL, "%s", err);
    REQUIRE(ru_count(r) == 50001);
    m.big = 50000;
    REQUIRE(judge(r, &m));
    m.big = 49999;
    REQUIRE(!judge(r, &m));
    ru_free(r);
    free(t);

    /* files */
    r = ru_load("/nonexistent/x.rules", &fzr_schema, err, sizeof err);
    REQUIRE(r == NULL);
    ck_assert_str_eq(err, "/nonexistent/x.rules: cannot read: No such file or directory");
    r = ru_load("/tmp", &fzr_schema, err, sizeof err);
    REQUIRE(r == NULL);
    ck_assert_str_eq(err, "/tmp: cannot read: is a directory");
    /* a short error buffer is cut, never overrun */
    char small[16];
    r = ru_parse("keep sevv", 9, "t.rules", &fzr_schema, small, sizeof small);
    REQUIRE(r == NULL);
    ck_assert_str_eq(small, "t.rules:1:6: un");
    r = ru_parse("keep sevv", 9, "t.rules", &fzr_schema, NULL, 0);
    REQUIRE(r == NULL);
}
END_TEST

START_TEST(schema_limits)
{
    /* a schema whose records need more scratch than a reader has */
    op_optic optics[2];
    memcpy(optics, &fzr_optics[FZR_REC], sizeof optics[0]);
    memcpy(optics + 1, &fzr_optics[FZR_REC], sizeof optics[0]);
    optics[0].rec_size = RU_SCRATCH - 8;
    op_schema s = fzr_schema;
    s.optics = optics;
    s.noptics = 2;
    ru_rules *r = ru_parse("keep has(rec)", 13, "t.rules", &s, err, sizeof err);
    REQUIRE(r == NULL);
    ck_assert_str_eq(err, "t.rules: the schema's record optics need more than 8192 bytes of scratch to be read");
    ru_subject big;
    REQUIRE(!ru_subject_init(&big, &s, &arena));
    s.noptics = 1;
    r = ru_parse("keep has(rec)", 13, "t.rules", &s, err, sizeof err);
    REQUIREF(r != NULL, "%s", err);
    ru_free(r);
    s.noptics = RU_MAX_OPTICS + 1;
    r = ru_parse("", 0, "t.rules", &s, err, sizeof err);
    REQUIRE(r == NULL);
    ck_assert_str_eq(err, "t.rules: the schema declares 257 optics, more than rules can read (256)");
}
END_TEST

/* ===================================================== printing ===== */

static const char *fmt(int optic, op_value v, bool model)
{
    static char buf[256];
    size_t n = ru_format(&fzr_optics[optic], &v, model, buf, sizeof buf);
    REQUIRE(n == strlen(buf));
    return buf;
}

START_TEST(format_values)
{
    op_value v;
    v.e = 2;
    ck_assert_str_eq(fmt(FZR_KIND, v, false), "C");
    v.e = 1;
    ck_assert_str_eq(fmt(FZR_SEV, v, false), "Mid");
    v.e = 99;
    ck_assert_str_eq(fmt(FZR_MANY, v, true), "C99");
    v.i = INT64_MIN;
    ck_assert_str_eq(fmt(FZR_BIG, v, false), "-9223372036854775808");
    v.i = -7;
    ck_assert_str_eq(fmt(FZR_SMALL, v, false), "-7");
    v.f = 2.5;
    ck_assert_str_eq(fmt(FZR_RATIO, v, false), "2.5");
    v.f = 0.1;
    ck_assert_str_eq(fmt(FZR_RATIO, v, false), "0.1");
    v.f = 1e300;
    ck_assert_str_eq(fmt(FZR_RATIO, v, false), "1e+300");
    v.s = (js_str){"a\"b\\\n\x01\xc3\xa9", 8};
    ck_assert_str_eq(fmt(FZR_NAME, v, false), "\"a\\\"b\\\\\\n\\u0001\xc3\xa9\"");
    v.s = (js_str){NULL, 0};
    ck_assert_str_eq(fmt(FZR_NAME, v, false), "\"\"");
    v.b = true;
    ck_assert_str_eq(fmt(FZR_FLAG, v, false), "true");
    v.b = false;
    ck_assert_str_eq(fmt(FZR_FLAG, v, true), "false");
    fzr_msg m = full();
    v.ptr = &m.rec;
    ck_assert_str_eq(fmt(FZR_REC, v, false), "{\"n\":5}");
    v.ptr = &m.sub;
    ck_assert_str_eq(fmt(FZR_SUB, v, true), "{\"v\":100}");
    /* a raw value's bytes on one line: no whitespace between tokens */
    const char *raw = "{ \"v\" :\n\t1 }";
    v.bytes.p = (const uint8_t *)raw;
    v.bytes.n = strlen(raw);
    ck_assert_str_eq(fmt(FZR_SUB, v, false), "{\"v\":1}");

    /* from a reader */
    ru_subject_bytes(&rd, (const uint8_t *)&m, sizeof m);
    REQUIRE(ru_read(&rd, FZR_NAME, &v));
    char buf[64];
    REQUIRE(ru_format(&fzr_optics[FZR_NAME], &v, ru_subject_is_model(&rd), buf, sizeof buf) == 6);
    ck_assert_str_eq(buf, "\"a\\\"b\"");
    ru_subject_model(&rd, &m);
    REQUIRE(ru_read(&rd, FZR_SUB, &v));
    REQUIRE(ru_format(&fzr_optics[FZR_SUB], &v, ru_subject_is_model(&rd), buf, sizeof buf) == 9);
    ck_assert_str_eq(buf, "{\"v\":100}");

    /* what does not fit, or has no text */
    v.s = (js_str){"abcdef", 6};
    REQUIRE(ru_format(&fzr_optics[FZR_NAME], &v, false, buf, 8) == 0 && buf[0] == '\0');
    REQUIRE(ru_format(&fzr_optics[FZR_NAME], &v, false, buf, 9) == 8);
    REQUIRE(ru_format(&fzr_optics[FZR_NAME], &v, false, buf, 0) == 0);
    v.e = 3;
    REQUIRE(ru_format(&fzr_optics[FZR_SEV], &v, false, buf, sizeof buf) == 0);
    v.e = -1;
    REQUIRE(ru_format(&fzr_optics[FZR_KIND], &v, false, buf, sizeof buf) == 0);
    v.f = NAN;
    REQUIRE(ru_format(&fzr_optics[FZR_RATIO], &v, false, buf, sizeof buf) == 0);
    v.ptr = &m.rec;
    REQUIRE(ru_format(&fzr_optics[FZR_REC], &v, false, buf, 5) == 0);
}
END_TEST

/* ===================================================== fuzz property ===== */

/* The fuzz property on hand-picked inputs, every prefix of them and every
 * single-byte change (a smoke run that needs no libFuzzer). */
START_TEST(fuzz_property_smoke)
{
    const char *seeds[] = {
        "keep kind == A && sev in [Low, Mid] && rec.inner.word != \"w\"\n",
        "drop !(big >= 9007199254740993 || ratio < -2.5e3)\nkeep has(deep) && deeplvl == High # x\n",
        "keep (name == \"\\u00e9\\\"\" ||\n  many in [C1, C99]) && flag\n",
        "keep rec.lvl != sev && rec2.opt <= small\n",
    };
    const char bytes[] = "\n\"\\()[],.!&|=<>#-0e9aZ_\xc3\xff";
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        const char *seed = seeds[s];
        size_t n = strlen(seed);
        for (size_t k = 0; k <= n; k++) {
            const char *why = fzr_rules((const uint8_t *)seed, k);
            REQUIREF(why == NULL, "prefix %zu of seed %zu: %s", k, s, why);
        }
        char *c = malloc(n);
        REQUIRE(c != NULL);
        for (size_t i = 0; i < n; i++) {
            for (size_t b = 0; b < sizeof bytes - 1; b++) {
                memcpy(c, seed, n);
                c[i] = bytes[b];
                const char *why = fzr_rules((const uint8_t *)c, n);
                REQUIREF(why == NULL, "seed %zu, byte %zu = 0x%02x: %s", s, i, (unsigned char)bytes[b], why);
            }
        }
        free(c);
    }
}
END_TEST

/* ===================================================== the default rules ===== */

/* A demo-like schema: the optics schema/default.rules names, over a struct. */
typedef struct {
    int kind, severity, tier, module, plan; /* -1: absent */
    bool has_votes;
    int32_t votes;
} dm_msg;

typedef struct {
    int32_t count;
} dm_votes;

#define DM_ENUM(field)                                                                        \
    static bool dm_scan_##field(const uint8_t *p, size_t n, op_value *out, void *scratch,     \
                                ar_arena *a)                                                  \
    {                                                                                         \
        (void)n, (void)scratch, (void)a;                                                      \
        const dm_msg *m = (const dm_msg *)(const void *)p;                                    \
        out->e = m->field;                                                                    \
        return m->field >= 0;                                                                 \
    }                                                                                         \
    static bool dm_get_##field(const void *root, op_value *out)                               \
    {                                                                                         \
        const dm_msg *m = root;                                                               \
        out->e = m->field;                                                                    \
        return m->field >= 0;                                                                 \
    }
DM_ENUM(kind)
DM_ENUM(severity)
DM_ENUM(tier)
DM_ENUM(module)
DM_ENUM(plan)

static bool dm_scan_votes(const uint8_t *p, size_t n, op_value *out, void *scratch, ar_arena *a)
{
    (void)n, (void)a;
    const dm_msg *m = (const dm_msg *)(const void *)p;
    ((dm_votes *)scratch)->count = m->votes;
    out->ptr = scratch;
    return m->has_votes;
}

static bool dm_get_votes(const void *root, op_value *out)
{
    static _Thread_local dm_votes v; /* the model's Votes, as a struct of its own */
    const dm_msg *m = root;
    v.count = m->votes;
    out->ptr = &v;
    return m->has_votes;
}

static bool dm_count(const void *r, op_value *o)
{
    o->i = ((const dm_votes *)r)->count;
    return true;
}

static const js_str dm_kinds[] = {FZR_S("Bug"), FZR_S("Incident"), FZR_S("Request")};
static const js_str dm_sevs[] = {FZR_S("Sev1"), FZR_S("Sev2"), FZR_S("Sev3"), FZR_S("Sev4")};
static const js_str dm_tiers[] = {FZR_S("Critical"), FZR_S("Major"), FZR_S("Minor")};
static const js_str dm_modules[] = {FZR_S("Auth"),    FZR_S("Billing"), FZR_S("Search"),
                                    FZR_S("Storage"), FZR_S("Network"), FZR_S("Ui"),
                                    FZR_S("Payments"), FZR_S("Scheduler")};
static const js_str dm_plans[] = {FZR_S("Free"), FZR_S("Team"), FZR_S("Business"), FZR_S("Enterprise")};
#define DM_N(a) ((int)(sizeof(a) / sizeof(a)[0]))
static const op_field dm_votes_fields[] = {{"count", OP_I32, "i32", NULL, 0, dm_count, NULL, 0, NULL, 0}};
static const op_type dm_types[] = {{"Issue", sizeof(dm_msg), NULL, NULL, NULL}};

#define DM_OPTIC(nm, kind, focus, cases, n, rec, fields, nfields)                             \
    {#nm, "Issue." #nm, kind, focus, cases, n, 0, -1, true, rec, dm_scan_##nm, NULL,         \
     dm_get_##nm,                                                                             \
     NULL, fields, nfields, NULL, 0, {.mode = OP_M_NONE}, -1, 0}
static const op_optic dm_optics[] = {
    DM_OPTIC(kind, OP_TAG, "Detail", dm_kinds, DM_N(dm_kinds), 0, NULL, 0),
    DM_OPTIC(severity, OP_ENUM, "Severity", dm_sevs, DM_N(dm_sevs), 0, NULL, 0),
    DM_OPTIC(tier, OP_ENUM, "Tier", dm_tiers, DM_N(dm_tiers), 0, NULL, 0),
    DM_OPTIC(module, OP_ENUM, "Module", dm_modules, DM_N(dm_modules), 0, NULL, 0),
    DM_OPTIC(plan, OP_ENUM, "Plan", dm_plans, DM_N(dm_plans), 0, NULL, 0),
    DM_OPTIC(votes, OP_RECORD, "Votes", NULL, 0, sizeof(dm_votes), dm_votes_fields, 1),
};
static const op_schema dm_schema = {
    .schema = "demo-like",
    .root = 0,
    .types = dm_types,
    .ntypes = 1,
    .optics = dm_optics,
    .noptics = DM_N(dm_optics),
    .kind = 0,
    .first_field = -1,
};

/* Whether case i of names (n cases; -1: absent) is called want. */
static bool dm_is_(const js_str *names, int n, int i, const char *want)
{
    return i >= 0 && i < n && names[i].n == strlen(want) && memcmp(names[i].p, want, names[i].n) == 0;
}
#define dm_is(names, i, want) dm_is_(names, DM_N(names), i, want)

/* the default rules (docs/model.md) written out in C, by case names: the oracle. */
static bool dm_demo_policy(const dm_msg *m)
{
    if (dm_is(dm_kinds, m->kind, "Incident"))
        return (dm_is(dm_sevs, m->severity, "Sev1") || dm_is(dm_sevs, m->severity, "Sev2")) &&
               dm_is(dm_tiers, m->tier, "Critical");
    if (dm_is(dm_kinds, m->kind, "Bug"))
        return dm_is(dm_modules, m->module, "Payments");
    if (dm_is(dm_kinds, m->kind, "Request"))
        return (dm_is(dm_plans, m->plan, "Business") ||
                dm_is(dm_plans, m->plan, "Enterprise")) &&
               m->has_votes && m->votes >= 130;
    return false;
}

/* schema/default.rules, the JSON policy form with every key left out, and
 * the default policy in JSON (docs/model.md), each against the oracle on
 * every combination of the values it reads (absent ones too), through both
 * readers; po_judge's kind is the message's. */
START_TEST(default_rules_mean_the_default_policy)
{
    po_policy pols[3];
    REQUIREF(po_rules_file("schema/default.rules", &dm_schema, &pols[0], err, sizeof err), "%s",
             err);
    REQUIRE(ru_count(pols[0].rules) == 3);
    REQUIREF(jp_parse("{}", 2, "empty.json", &dm_schema, &pols[1], err, sizeof err), "%s", err);
    static const char model_md[] =
        "{\"urgent\":[\"Sev1\",\"Sev2\"],\"tiers\":[\"Critical\"],\"modules\":[\"Payments\"],\n"
        " \"plans\":[\"Business\",\"Enterprise\"],\"minVotes\":130}\n";
    REQUIREF(jp_parse(model_md, strlen(model_md), "model.json", &dm_schema, &pols[2], err,
                      sizeof err),
             "%s", err);
    ru_subject d;
    REQUIRE(ru_subject_init(&d, &dm_schema, &arena));
    static const int32_t votes[] = {0, 129, 130, 131, INT32_MAX};
    int kept = 0, seen = 0;
    for (int k = -1; k < DM_N(dm_kinds); k++)
        for (int s = -1; s < DM_N(dm_sevs); s++)
            for (int t = -1; t < DM_N(dm_tiers); t++)
                for (int mo = -1; mo < DM_N(dm_modules); mo++)
                    for (int p = -1; p < DM_N(dm_plans); p++)
                        for (int v = -1; v < DM_N(votes); v++) {
                            dm_msg m = {k, s, t, mo, p, v >= 0, v >= 0 ? votes[v] : 0};
                            bool want = dm_demo_policy(&m);
                            for (int q = 0; q < DM_N(pols); q++)
                                for (int model = 0; model < 2; model++) {
                                    if (model)
                                        ru_subject_model(&d, &m);
                                    else
                                        ru_subject_bytes(&d, (const uint8_t *)&m, sizeof m);
                                    int kind = -2;
                                    bool got = po_judge(&pols[q], &d, &kind);
                                    REQUIREF(got == want && kind == k,
                                             "policy %d, %s: kind %d sev %d tier %d module %d "
                                             "plan %d votes %d: %d (kind %d)",
                                             q, model ? "model" : "bytes", k, s, t, mo, p, v,
                                             got, kind);
                                }
                            kept += want;
                            seen++;
                        }
    REQUIRE(kept > 0 && kept < seen);
    for (int q = 0; q < DM_N(pols); q++)
        po_free(&pols[q]);
}
END_TEST

static Suite *rules_suite(void)
{
    Suite *s = suite_create("rules");
    TCase *t = su_tcase(s, "rules", setup, NULL, 120);
    tcase_add_test(t, enums_and_tags);
    tcase_add_test(t, numbers);
    tcase_add_test(t, integers_against_doubles_exactly);
    tcase_add_test(t, strings_and_escapes);
    tcase_add_test(t, bools_and_logic);
    tcase_add_test(t, missing_values);
    tcase_add_test(t, rules_in_order);
    tcase_add_test(t, where_is_one_keep_rule);
    tcase_add_test(t, lazy_and_read_at_most_once);
    tcase_add_test(t, index_gives_the_verdict_of_each_rule_tried);
    tcase_add_test(t, cache_is_per_message);
    tcase_add_test(t, readers_agree_with_each_other_and_an_oracle);
    tcase_add_test(t, load_errors);
    tcase_add_test(t, encoding_and_limits);
    tcase_add_test(t, schema_limits);
    tcase_add_test(t, format_values);
    tcase_add_test(t, fuzz_property_smoke);
    tcase_add_test(t, default_rules_mean_the_default_policy);
    return s;
}

int main(void) { return su_run(rules_suite()); }
