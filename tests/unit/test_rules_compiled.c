/* test_rules_compiled.c: rules written as C (rules.h: ru_emit_c), which the
 * build does with triage-rulesc for schema/default.rules (the filter's
 * default, tr_default_compiled) and for the files of tests/rules plus one
 * past what ru_emit_c writes out (Makefile: TEST_RULES), against the same
 * rules interpreted:
 *
 *  - each compiled set fits the rules loaded from its file and no others
 *    (another file, the same text as --where, another schema), and
 *    rd_policy judges the default rules through theirs unless told not to;
 *  - on every message (generated at sizes 2, 7, 15 and 40 in both layouts,
 *    cut short, with bytes changed, with the detail's key renamed), read
 *    plain and with the detail seeded as a verify level seeds it (found,
 *    and missing), the compiled decide and judge give the interpreter's
 *    rule and verdict, having read the same optics (the subject's read
 *    count and each optic's slot: read or not, hit or miss, its value);
 *  - on a decoded message, and with a subject of another schema, they
 *    answer as ru_decide and ru_judge do;
 *  - ru_emit_c writes the same text every time, and writes a set past its
 *    limit as calls to the interpreter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "issues.h"
#include "policy.h"
#include "reader.h"
#include "tr_model.h"
#include "tr_optics.h"
#include "support/fixture.h"
#include "support/rng.h"
#include "support/suite.h"

extern const ru_compiled tr_default_compiled;
extern const struct {
    const char *path;
    const ru_compiled *c;
} tr_rules_list[];
extern const int tr_rules_count;

/* One set to check: its rules loaded from the file, and its C. */
typedef struct {
    const char *path;
    ru_rules *r;
    const ru_compiled *c;
} set;

#define MAX_SETS 16
static set sets[MAX_SETS];
static int nsets;
static ar_arena arena_a, arena_b, dec_arena;
static ru_subject *subj_a, *subj_b;

static void setup(void)
{
    char err[512];
    nsets = 0;
    REQUIRE(tr_rules_count + 1 <= MAX_SETS);
    /* the default rules, as the filter has them */
    extern const char tr_default_rules[], tr_default_rules_path[];
    extern const size_t tr_default_rules_len;
    sets[nsets].path = tr_default_rules_path;
    sets[nsets].r = ru_parse(tr_default_rules, tr_default_rules_len, tr_default_rules_path,
                             &tr_schema, err, sizeof err);
    REQUIREF(sets[nsets].r != NULL, "%s", err);
    sets[nsets++].c = &tr_default_compiled;
    for (int i = 0; i < tr_rules_count; i++, nsets++) {
        sets[nsets].path = tr_rules_list[i].path;
        sets[nsets].r = ru_load(tr_rules_list[i].path, &tr_schema, err, sizeof err);
        REQUIREF(sets[nsets].r != NULL, "%s", err);
        sets[nsets].c = tr_rules_list[i].c;
    }
    fx_arena(&arena_a, 1u << 20);
    fx_arena(&arena_b, 1u << 20);
    fx_arena(&dec_arena, RD_DECODE_ARENA);
    subj_a = fx_alloc(sizeof *subj_a);
    subj_b = fx_alloc(sizeof *subj_b);
    REQUIRE(ru_subject_init(subj_a, &tr_schema, &arena_a));
    REQUIRE(ru_subject_init(subj_b, &tr_schema, &arena_b));
}

static void teardown(void)
{
    for (int i = 0; i < nsets; i++)
        ru_free(sets[i].r);
    nsets = 0;
    fx_teardown();
}

/* ---- which rules a compiled set fits ---- */

START_TEST(each_fits_its_own_rules_only)
{
    for (int i = 0; i < nsets; i++)
        for (int j = 0; j < nsets; j++)
            REQUIREF(ru_compiled_fits(sets[i].c, sets[j].r) == (i == j),
                     "the C of %s %s the rules of %s", sets[i].path,
                     i == j ? "does not fit" : "fits", sets[j].path);
    /* the same text as one --where expression is other rules */
    char err[512];
    ru_rules *w = ru_where("kind == Bug", "--where", &tr_schema, err, sizeof err);
    REQUIREF(w != NULL, "%s", err);
    for (int i = 0; i < nsets; i++)
        REQUIRE(!ru_compiled_fits(sets[i].c, w));
    ru_free(w);
    /* the same text for another schema */
    op_schema other = tr_schema;
    ru_rules *o = ru_parse("keep kind == Bug\n", 17, "x", &other, err, sizeof err);
    ru_rules *t = ru_parse("keep kind == Bug\n", 17, "x", &tr_schema, err, sizeof err);
    REQUIRE(o != NULL && t != NULL);
    REQUIRE(ru_fingerprint(o) == ru_fingerprint(t));
    ru_compiled c = {&tr_schema, ru_fingerprint(t), 1, tr_default_compiled.judge,
                     tr_default_compiled.decide};
    REQUIRE(ru_compiled_fits(&c, t) && !ru_compiled_fits(&c, o));
    c.judge = NULL; /* a build whose rules did not load writes no entries */
    REQUIRE(!ru_compiled_fits(&c, t));
    REQUIRE(!ru_compiled_fits(NULL, t));
    ru_free(o);
    ru_free(t);
}
END_TEST

/* Rules reading two optics from the message's root read them in one walk
 * of it (level.h): plain.rules (has(detail), severityOf, and the optics
 * through detail, which is sought), which the other tests here judge as C
 * and interpreted alike; not the default rules, whose one root optic is
 * the detail sought. The verdicts through the shared walk are the same as
 * through the optics' own scanners: rules that read the same values with
 * severity (through detail) for severityOf decide alike on every message,
 * whole, cut short, and with a byte changed. */
START_TEST(root_optics_share_one_walk)
{
    int plain = -1;
    for (int i = 0; i < nsets; i++)
        if (strstr(sets[i].path, "plain.rules") != NULL)
            plain = i;
    REQUIRE(plain >= 0);
    REQUIRE(ru_root_walk(sets[0].r) == 0); /* the default rules */
    REQUIRE(ru_root_walk(sets[plain].r) == 2);
    char err[512];
    static const char shared[] = "keep kind == Incident && severityOf in [Sev1, Sev2]\n"
                                 "keep has(detail) && severityOf == Sev3\n";
    static const char alone[] = "keep kind == Incident && severity in [Sev1, Sev2]\n"
                                "keep has(detail) && severity == Sev3\n";
    ru_rules *a = ru_parse(shared, strlen(shared), "shared", &tr_schema, err, sizeof err);
    ru_rules *b = ru_parse(alone, strlen(alone), "alone", &tr_schema, err, sizeof err);
    REQUIREF(a != NULL && b != NULL, "%s", err);
    REQUIRE(ru_root_walk(a) == 2 && ru_root_walk(b) == 0);
    long kept = 0, seen = 0;
    iss_gen *g = iss_gen_new(7);
    REQUIRE(g != NULL);
    uint8_t *e = fx_alloc(1u << 20);
    for (int layout = 0; layout < 2; layout++)
        for (uint64_t k = 0; k < 24; k++) {
            size_t fn;
            const uint8_t *f = iss_gen_frame(g, 91, k, layout, &fn);
            REQUIRE(f != NULL && fn > FR_HEADER_LEN && fn - FR_HEADER_LEN <= (1u << 20));
            size_t n = fn - FR_HEADER_LEN;
            for (size_t cut = n; cut + 64 > n && cut > 0; cut = cut > 7 ? cut - 7 : 0)
                for (int flip = -1; flip < 3; flip++) {
                    memcpy(e, f + FR_HEADER_LEN, cut);
                    size_t at = flip < 0 ? 0 : (size_t)(k * 131 + (uint64_t)flip * 977) % cut;
                    if (flip >= 0)
                        e[at] = (uint8_t)"\"{}\\"[flip];
                    ru_subject_bytes(subj_a, e, cut);
                    int da = ru_decide(a, subj_a);
                    ru_subject_bytes(subj_b, e, cut);
                    int db = ru_decide(b, subj_b);
                    REQUIREF(da == db, "message %d (layout %d) cut at %zu, byte %zu changed: "
                             "decided by rule %d through the shared walk, %d without",
                             (int)k, layout, cut, at, da, db);
                    kept += da >= 0;
                    seen++;
                }
        }
    iss_gen_free(g);
    REQUIRE(kept > 0 && kept < seen);
    ru_free(a);
    ru_free(b);
}
END_TEST

START_TEST(the_filter_judges_the_default_rules_as_c)
{
    char err[512];
    po_policy p;
    rd_choice none = {0};
    REQUIREF(rd_policy(&none, &p, err, sizeof err), "%s", err);
    REQUIRE(p.compiled == &tr_default_compiled);
    po_free(&p);
    rd_choice file = {.rules = "schema/default.rules"}; /* the same text, given */
    REQUIREF(rd_policy(&file, &p, err, sizeof err), "%s", err);
    REQUIRE(p.compiled == &tr_default_compiled);
    po_free(&p);
    rd_choice interp = {.interpret = true};
    REQUIREF(rd_policy(&interp, &p, err, sizeof err), "%s", err);
    REQUIRE(p.compiled == NULL);
    po_free(&p);
    rd_choice where = {.where = "kind == Bug"};
    REQUIREF(rd_policy(&where, &p, err, sizeof err), "%s", err);
    REQUIRE(p.compiled == NULL);
    po_free(&p);
}
END_TEST

/* ---- the same decisions, the same reads ---- */

static long checked;

/* The two subjects read the same optics, to the same outcome and value. */
static void same_reads(const set *s, const char *what, size_t len)
{
    REQUIREF(subj_a->reads == subj_b->reads,
             "%s, %s (%zu bytes): the interpreter read %llu optics, the C %llu", s->path, what,
             len, (unsigned long long)subj_a->reads, (unsigned long long)subj_b->reads);
    for (int i = 0; i < tr_schema.noptics; i++) {
        bool ra = ru_subject_read(subj_a, i), rb = ru_subject_read(subj_b, i);
        REQUIREF(ra == rb, "%s, %s (%zu bytes): optic %s read by %s only", s->path, what, len,
                 tr_schema.optics[i].name, ra ? "the interpreter" : "the C");
        if (!ra)
            continue;
        const op_value *va = ru_value(subj_a, i), *vb = ru_value(subj_b, i);
        REQUIREF((va == NULL) == (vb == NULL), "%s, %s: optic %s hit by one only", s->path, what,
                 tr_schema.optics[i].name);
        if (va == NULL)
            continue;
        char ta[4096], tb[4096];
        size_t na = ru_format(&tr_schema.optics[i], va, false, ta, sizeof ta);
        size_t nb = ru_format(&tr_schema.optics[i], vb, false, tb, sizeof tb);
        REQUIREF(na == nb && memcmp(ta, tb, na) == 0, "%s, %s: optic %s is %.*s and %.*s",
                 s->path, what, tr_schema.optics[i].name, (int)na, ta, (int)nb, tb);
    }
}

/* How the detail is given: read from the message, or seeded as a verify
 * level's pass seeds it (its bytes, or a miss). */
enum { PLAIN, SEEDED, SEEDED_MISS };

static void next(const uint8_t *p, size_t n, int how)
{
    ru_subject_bytes(subj_a, p, n);
    ru_subject_bytes(subj_b, p, n);
    if (how == PLAIN)
        return;
    int b = tr_schema.optics[tr_schema.kind].base;
    op_value v;
    memset(&v, 0, sizeof v);
    bool hit = how == SEEDED && tr_schema.optics[b].scan(p, n, &v, NULL, NULL);
    ru_subject_seed(subj_a, b, hit, &v);
    ru_subject_seed(subj_b, b, hit, &v);
}

static void judge_both(const uint8_t *p, size_t n, const char *what)
{
    for (int i = 0; i < nsets; i++) {
        const set *s = &sets[i];
        for (int how = PLAIN; how <= SEEDED_MISS; how++) {
            next(p, n, how);
            int da = ru_decide(s->r, subj_a), db = s->c->decide(s->r, subj_b);
            REQUIREF(da == db, "%s, %s (%zu bytes, seeded %d): the interpreter decides by rule "
                     "%d, the C by %d", s->path, what, n, how, da, db);
            REQUIRE(da == ru_decide_in_turn(s->r, subj_a));
            same_reads(s, what, n);
            next(p, n, how);
            bool ja = ru_judge(s->r, subj_a), jb = s->c->judge(s->r, subj_b);
            REQUIREF(ja == jb, "%s, %s (%zu bytes): the interpreter %s, the C %s", s->path, what,
                     n, ja ? "keeps" : "drops", jb ? "keeps" : "drops");
            same_reads(s, what, n);
            checked++;
        }
    }
}

/* The message, and versions of it cut short, with bytes changed, and with
 * the detail's key renamed. */
static void each_version(const uint8_t *m, size_t n, rng_state *rg)
{
    judge_both(m, n, "generated");
    uint8_t *e = malloc(n + 1);
    REQUIRE(e != NULL);
    for (int k = 0; k < 4; k++) {
        size_t cut = (size_t)rng_below(rg, n);
        memcpy(e, m, cut);
        judge_both(e, cut, "cut short");
    }
    for (int k = 0; k < 6; k++) {
        memcpy(e, m, n);
        for (int j = 0; j < 1 + k; j++)
            e[rng_below(rg, n)] = (uint8_t)"\"{}[],:\\ 0aZ"[rng_below(rg, 13)];
        judge_both(e, n, "bytes changed");
    }
    memcpy(e, m, n);
    uint8_t *key = memmem(e, n, "\"detail\"", 8);
    if (key != NULL) {
        key[6] = 'X';
        judge_both(e, n, "detail renamed");
    }
    free(e);
}

START_TEST(decides_as_interpreted)
{
    static const int sizes[] = {2, 7, 15, 40};
    rng_state rg = rng_seed(1203);
    checked = 0;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        iss_gen *g = iss_gen_new(sizes[z]);
        REQUIRE(g != NULL);
        int count = sizes[z] >= 40 ? 12 : 40;
        for (int i = 0; i < count; i++)
            for (int first = 0; first < 2; first++) {
                if (!su_pick((size_t)i, (size_t)sizes[z]))
                    continue;
                size_t n;
                const uint8_t *f = iss_gen_frame(g, 77, (uint64_t)i, first, &n);
                REQUIRE(f != NULL && n > FR_HEADER_LEN);
                each_version(f + FR_HEADER_LEN, n - FR_HEADER_LEN, &rg);
            }
        iss_gen_free(g);
    }
    REQUIRE(checked > 0);
}
END_TEST

START_TEST(models_and_other_schemas_as_interpreted)
{
    iss_gen *g = iss_gen_new(5);
    REQUIRE(g != NULL);
    op_schema other = tr_schema;
    ru_subject *alien = fx_alloc(sizeof *alien);
    REQUIRE(ru_subject_init(alien, &other, &arena_b));
    for (uint64_t i = 0; i < 60; i++) {
        const void *is = iss_gen_issue(g, 5, i);
        REQUIRE(is != NULL);
        size_t n;
        const uint8_t *f = iss_gen_frame(g, 5, i, false, &n);
        REQUIRE(f != NULL);
        for (int k = 0; k < nsets; k++) {
            const set *s = &sets[k];
            ru_subject_model(subj_a, is);
            ru_subject_model(subj_b, is);
            REQUIRE(ru_decide(s->r, subj_a) == s->c->decide(s->r, subj_b));
            ru_subject_model(subj_a, is);
            ru_subject_model(subj_b, is);
            REQUIRE(ru_judge(s->r, subj_a) == s->c->judge(s->r, subj_b));
            ru_subject_bytes(alien, f + FR_HEADER_LEN, n - FR_HEADER_LEN);
            REQUIRE(s->c->decide(s->r, alien) == -1);
            REQUIRE(!s->c->judge(s->r, alien));
            REQUIRE(alien->reads == 0);
        }
    }
    iss_gen_free(g);
}
END_TEST

/* ---- the text written ---- */

static char *emit(const ru_rules *r, const char *name, size_t *n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, n);
    REQUIRE(f != NULL);
    REQUIRE(ru_emit_c(r, name, "test", f));
    REQUIRE(fclose(f) == 0);
    return buf;
}

START_TEST(writes_the_same_text_and_limits_what_it_writes_out)
{
    for (int i = 0; i < nsets; i++) {
        size_t n1, n2;
        char *a = emit(sets[i].r, "x", &n1), *b = emit(sets[i].r, "x", &n2);
        REQUIREF(n1 == n2 && memcmp(a, b, n1) == 0, "%s: two texts", sets[i].path);
        bool large = strstr(sets[i].path, "large.rules") != NULL;
        /* past RU_EMIT_NODES: the entries call the interpreter */
        REQUIREF((strstr(a, "return ru_judge(r, s);\n}") != NULL &&
                  strstr(a, "first(") == NULL) == large,
                 "%s: written %s", sets[i].path, large ? "out" : "as calls");
        free(a);
        free(b);
    }
    REQUIRE(!ru_emit_c(sets[0].r, "not a name", "x", stdout));
    REQUIRE(!ru_emit_c(sets[0].r, "9x", "x", stdout));
    REQUIRE(!ru_emit_c(NULL, "x", "x", stdout));
}
END_TEST

static Suite *rules_compiled_suite(void)
{
    Suite *s = suite_create("rules_compiled");
    TCase *tc = su_tcase(s, "fit", setup, teardown, 30);
    tcase_add_test(tc, each_fits_its_own_rules_only);
    tcase_add_test(tc, root_optics_share_one_walk);
    tcase_add_test(tc, the_filter_judges_the_default_rules_as_c);
    tc = su_tcase(s, "same", setup, teardown, 300);
    tcase_add_test(tc, decides_as_interpreted);
    tcase_add_test(tc, models_and_other_schemas_as_interpreted);
    tc = su_tcase(s, "text", setup, teardown, 60);
    tcase_add_test(tc, writes_the_same_text_and_limits_what_it_writes_out);
    return s;
}

int main(void) { return su_run(rules_compiled_suite()); }
