/* test_policy.c: what a command judges with (runtime/policy.h through
 * filter/reader.h), on the demo's schema:
 *
 *  - the built-in default (schema/default.rules, what rd_policy loads when
 *    given nothing) is docs/model.md's default rules: its verdicts equal
 *    those rules written out in C over the decoded Issue, by case names;
 *  - the JSON policy form means the rules it stands for: each JSON file
 *    judges every message as a hand-written rules text does (escaped keys
 *    too, and minVotes across its range);
 *  - the JSON form's errors, each exact, naming the file, line and column;
 *  - loading a JSON file (and a path that is a directory, named as one),
 *    --where, and rd_policy's choice.
 *
 * Messages: generated issues (three sizes, both layouts), and issues edited
 * to every value the policies read (every severity with every tier, every
 * module of the first stack frame, none, every plan with vote counts around
 * the thresholds), encoded in both layouts. Each is judged by the decode
 * reader and by the optics reader at every verify level, which must agree,
 * and the kind po_judge reports must be the message's. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frames.h"
#include "issues.h"
#include "jsonpolicy.h"
#include "policy.h"
#include "reader.h"
#include "tr_model.h"
#include "support/fixture.h"
#include "support/suite.h"

/* ---- the messages ---- */

static rd_reader *rd;
static ar_arena dec_arena;
static uint8_t *enc_buf;

static void setup(void)
{
    rd = rd_new();
    REQUIRE(rd != NULL);
    fx_arena(&dec_arena, RD_DECODE_ARENA);
    enc_buf = fx_alloc(ISS_MAX_MESSAGE);
}

static void teardown(void)
{
    rd_free(rd);
    rd = NULL;
    fx_teardown();
}

static bool named(js_str s, const char *name)
{
    return s.n == strlen(name) && memcmp(s.p, name, s.n) == 0;
}

typedef void (*msg_fn)(const tr_Issue *is, tr_message m, void *ctx);

/* Decodes m (which must decode) and hands it to fn with its bytes. */
static void decoded(tr_message m, msg_fn fn, void *ctx)
{
    tr_Issue is;
    ar_reset(&dec_arena);
    tr_error e = tr_decode_Issue(m.p, m.n, &dec_arena, &is);
    REQUIREF(e.code == TR_E_OK, "a message does not decode: %s at %zu", tr_error_name(e.code),
             e.offset);
    fn(&is, m, ctx);
}

/* v encoded in both layouts, each decoded and handed to fn. */
static void encoded(const tr_Issue *v, msg_fn fn, void *ctx)
{
    for (int first = 0; first < 2; first++) {
        uint8_t *end = tr_encode_Issue_first(enc_buf, enc_buf + ISS_MAX_MESSAGE, v,
                                             first ? tr_schema.first_field : -1);
        REQUIRE(end != NULL);
        decoded((tr_message){enc_buf, (size_t)(end - enc_buf)}, fn, ctx);
    }
}

/* A generated issue whose detail is of kind `kind` (by name), and for a
 * Bug with at least two stack frames. */
static const tr_Issue *base_issue(iss_gen *g, const char *kind)
{
    for (uint64_t i = 0; i < 1000; i++) {
        const tr_Issue *is = iss_gen_issue(g, 5, i);
        REQUIRE(is != NULL);
        if (named(tr_Detail_names[is->detail.kind], kind) &&
            (!named(tr_Detail_names[is->detail.kind], "Bug") ||
             is->detail.u.Bug.trace.frames.count >= 2))
            return is;
    }
    ck_abort_msg("no generated %s", kind);
    return NULL;
}

/* Around each minVotes the tests give (0, 7, 130, 2147483647). */
static const int32_t edited_votes[] = {0, 1, 6, 7, 8, 129, 130, 131, INT32_MAX - 1, INT32_MAX};

/* The edited issues: every combination of the values the policies read. */
static void each_edited(msg_fn fn, void *ctx)
{
    iss_gen *g = iss_gen_new(3);
    REQUIRE(g != NULL);
    tr_Issue v = *base_issue(g, "Incident");
    for (int s = 0; s < TR_SEVERITY_COUNT; s++)
        for (int t = 0; t < TR_TIER_COUNT; t++) {
            v.detail.u.Incident.severity = (tr_Severity)s;
            v.detail.u.Incident.impact.service.tier = (tr_Tier)t;
            encoded(&v, fn, ctx);
        }
    v = *base_issue(g, "Bug");
    tr_Frame frames[2] = {v.detail.u.Bug.trace.frames.items[0],
                          v.detail.u.Bug.trace.frames.items[1]};
    v.detail.u.Bug.trace.frames.items = frames;
    v.detail.u.Bug.trace.frames.count = 0; /* no first frame: module misses */
    encoded(&v, fn, ctx);
    v.detail.u.Bug.trace.frames.count = 1; /* one frame, of every module */
    for (int m0 = 0; m0 < TR_MODULE_COUNT; m0++) {
        frames[0].module = (tr_Module)m0;
        encoded(&v, fn, ctx);
    }
    v.detail.u.Bug.trace.frames.count = 2;
    for (int m0 = 0; m0 < TR_MODULE_COUNT; m0++)
        for (int m1 = 0; m1 < TR_MODULE_COUNT; m1++) { /* only the first frame counts */
            frames[0].module = (tr_Module)m0;
            frames[1].module = (tr_Module)m1;
            encoded(&v, fn, ctx);
        }
    v = *base_issue(g, "Request");
    for (int p = 0; p < TR_PLAN_COUNT; p++)
        for (size_t k = 0; k < sizeof edited_votes / sizeof *edited_votes; k++) {
            v.detail.u.Request.requester.contract.plan = (tr_Plan)p;
            v.detail.u.Request.votes.count = edited_votes[k];
            encoded(&v, fn, ctx);
        }
    iss_gen_free(g);
}

/* Generated issues at three sizes, in both layouts, then the edited ones. */
static void each_message(msg_fn fn, void *ctx)
{
    static const int sizes[] = {1, 5, 12};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        iss_gen *g = iss_gen_new(sizes[s]);
        REQUIRE(g != NULL);
        for (uint64_t i = 0; i < 150; i++)
            for (int first = 0; first < 2; first++) {
                size_t n;
                const uint8_t *f = iss_gen_frame(g, 21, i, first, &n);
                REQUIRE(f != NULL && n > FR_HEADER_LEN);
                decoded((tr_message){f + FR_HEADER_LEN, n - FR_HEADER_LEN}, fn, ctx);
            }
        iss_gen_free(g);
    }
    each_edited(fn, ctx);
}

/* ---- verdicts ---- */

/* pol's verdict on the message, by the decode reader and by the optics
 * reader at every verify level, which must all agree; and the kind each
 * reports is the message's (by name). */
static bool verdict(const po_policy *pol, const tr_Issue *is, tr_message m)
{
    const op_optic *ko = &tr_schema.optics[tr_schema.kind];
    js_str want_kind = tr_Detail_names[is->detail.kind];
    int kind = -1;
    rd_decoded(rd, is);
    bool keep = po_judge(pol, &rd->ru, &kind);
    REQUIREF(kind >= 0 && kind < ko->ncases && named(ko->cases[kind], want_kind.p),
             "decode reader: kind %d, want %s", kind, want_kind.p);
    static const vf_level levels[] = {VF_OFF, VF_JSON, VF_SCHEMA};
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
        REQUIREF(rd_message(rd, levels[l], m), "verify %s rejects a message",
                 vf_level_name(levels[l]));
        kind = -1;
        bool k = po_judge(pol, &rd->ru, &kind);
        REQUIREF(k == keep, "optics reader (verify %s) %s, decode reader %s",
                 vf_level_name(levels[l]), k ? "keep" : "drop", keep ? "keep" : "drop");
        REQUIREF(kind >= 0 && kind < ko->ncases && named(ko->cases[kind], want_kind.p),
                 "optics reader: kind %d, want %s", kind, want_kind.p);
    }
    return keep;
}

/* An urgent incident (the --where test's expression, and docs/model.md's
 * policy for incidents), written out. */
static bool urgent_incident(const tr_Issue *is)
{
    const tr_Detail *d = &is->detail;
    if (!named(tr_Detail_names[d->kind], "Incident"))
        return false;
    js_str sev = tr_Severity_names[d->u.Incident.severity];
    return (named(sev, "Sev1") || named(sev, "Sev2")) &&
           named(tr_Tier_names[d->u.Incident.impact.service.tier], "Critical");
}

/* the default rules (docs/model.md), written out over the decoded Issue. */
static bool model_md(const tr_Issue *is)
{
    const tr_Detail *d = &is->detail;
    js_str kind = tr_Detail_names[d->kind];
    if (named(kind, "Incident"))
        return urgent_incident(is);
    if (named(kind, "Bug")) {
        const tr_list_Frame *f = &d->u.Bug.trace.frames;
        return f->count > 0 && named(tr_Module_names[f->items[0].module], "Payments");
    }
    if (named(kind, "Request")) {
        js_str plan = tr_Plan_names[d->u.Request.requester.contract.plan];
        return (named(plan, "Business") || named(plan, "Enterprise")) &&
               d->u.Request.votes.count >= 130;
    }
    return false;
}

/* A policy held to an oracle (a C function, or another policy), counting
 * by kind what the oracle keeps. */
typedef struct {
    const po_policy *pol;
    bool (*fn)(const tr_Issue *);
    const po_policy *other;
    long seen[TR_DETAIL_COUNT], kept[TR_DETAIL_COUNT];
    long messages;
} same_ctx;

static void same_one(const tr_Issue *is, tr_message m, void *arg)
{
    same_ctx *c = arg;
    bool want = c->fn != NULL ? c->fn(is) : verdict(c->other, is, m);
    bool got = verdict(c->pol, is, m);
    REQUIREF(got == want, "message %ld (%s, %zu bytes): policy %s, oracle %s", c->messages,
             tr_Detail_names[is->detail.kind].p, m.n, got ? "keep" : "drop",
             want ? "keep" : "drop");
    c->seen[is->detail.kind]++;
    c->kept[is->detail.kind] += want;
    c->messages++;
}

static void same_verdicts(same_ctx *c) { each_message(same_one, c); }

/* Each kind is seen, and the oracle keeps some and drops some of kind k
 * (the comparison means something only if the verdicts vary). */
static void varied(const same_ctx *c, const char *kind)
{
    for (int k = 0; k < TR_DETAIL_COUNT; k++) {
        REQUIRE(c->seen[k] > 0);
        if (named(tr_Detail_names[k], kind))
            REQUIREF(c->kept[k] > 0 && c->kept[k] < c->seen[k], "%s: %ld kept of %ld", kind,
                     c->kept[k], c->seen[k]);
    }
}

/* ---- the default ---- */

START_TEST(default_is_model_md_policy)
{
    rd_choice none = {0};
    po_policy pol;
    char err[512] = "";
    REQUIREF(rd_policy(&none, &pol, err, sizeof err), "%s", err);
    same_ctx c = {.pol = &pol, .fn = model_md};
    same_verdicts(&c);
    varied(&c, "Incident");
    varied(&c, "Bug");
    varied(&c, "Request");
    /* the built-in text is schema/default.rules */
    po_policy file;
    REQUIREF(po_rules_file("schema/default.rules", &tr_schema, &file, err, sizeof err), "%s", err);
    same_ctx f = {.pol = &file, .other = &pol};
    same_verdicts(&f);
    po_free(&file);
    po_free(&pol);
}
END_TEST

static bool was_read(const char *optic)
{
    int i = op_find(&tr_schema, optic, strlen(optic));
    REQUIRE(i >= 0);
    return ru_subject_read(&rd->ru, i);
}

static void lazy_one(const tr_Issue *is, tr_message m, void *arg)
{
    const po_policy *pol = arg;
    const tr_Detail *d = &is->detail;
    if (!named(tr_Detail_names[d->kind], "Incident") ||
        !named(tr_Severity_names[d->u.Incident.severity], "Sev3"))
        return;
    int kind;
    REQUIRE(rd_message(rd, VF_OFF, m));
    REQUIRE(!po_judge(pol, &rd->ru, &kind));
    REQUIRE(was_read("kind") && was_read("severity"));
    REQUIRE(!was_read("tier") && !was_read("module") && !was_read("plan") && !was_read("votes"));
    rd_decoded(rd, is);
    REQUIRE(!po_judge(pol, &rd->ru, &kind));
    REQUIRE(was_read("kind") && was_read("severity") && !was_read("tier"));
}

/* The default reads what its verdict needs: a Sev3 incident's tier is not
 * read; a message with no detail has no kind and is dropped, having read
 * nothing past the kind. */
START_TEST(default_reads_lazily)
{
    rd_choice none = {0};
    po_policy pol;
    char err[512] = "";
    REQUIREF(rd_policy(&none, &pol, err, sizeof err), "%s", err);
    each_edited(lazy_one, &pol);

    iss_gen *g = iss_gen_new(3);
    REQUIRE(g != NULL);
    size_t n;
    const uint8_t *f = iss_gen_frame(g, 5, 0, false, &n);
    REQUIRE(f != NULL);
    uint8_t *m = malloc(n);
    memcpy(m, f + FR_HEADER_LEN, n - FR_HEADER_LEN);
    n -= FR_HEADER_LEN;
    uint8_t *key = memmem(m, n, "\"detail\":", 9);
    REQUIRE(key != NULL);
    key[6] = 'X'; /* "detaiX" */
    static const vf_level levels[] = {VF_OFF, VF_JSON};
    for (size_t l = 0; l < 2; l++) {
        REQUIRE(rd_message(rd, levels[l], (tr_message){m, n}));
        int kind = 7;
        REQUIRE(!po_judge(&pol, &rd->ru, &kind));
        REQUIRE(kind == -1);
        REQUIRE(!was_read("severity") && !was_read("tier") && !was_read("module") &&
                !was_read("plan") && !was_read("votes"));
    }
    /* the decoder wants a detail: the schema level rejects it */
    REQUIRE(!rd_message(rd, VF_SCHEMA, (tr_message){m, n}));
    free(m);
    iss_gen_free(g);
    po_free(&pol);
}
END_TEST

/* ---- the JSON form means its rules ---- */

static bool parse(const char *text, po_policy *p, char *err, size_t errlen)
{
    return jp_parse(text, strlen(text), "p.json", &tr_schema, p, err, errlen);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    REQUIREF(f != NULL, "cannot open %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* json (a JSON policy) judges every message as rules (a rules text) does;
 * kind: a kind whose verdicts must vary under it (NULL: none). Returns the
 * counts by kind. */
static same_ctx json_means(const char *json, const char *rules, const char *kind)
{
    po_policy j, r;
    char err[512] = "";
    REQUIREF(parse(json, &j, err, sizeof err), "%s: %s", json, err);
    REQUIREF(j.schema == &tr_schema && j.rules != NULL, "%s", json);
    REQUIREF(po_rules(rules, strlen(rules), "r.rules", &tr_schema, &r, err, sizeof err), "%s: %s",
             rules, err);
    same_ctx c = {.pol = &j, .other = &r};
    same_verdicts(&c);
    if (kind != NULL)
        varied(&c, kind);
    po_free(&j);
    po_free(&r);
    return c;
}

/* The default policy in JSON (docs/model.md), and the empty one (every key
 * defaults to it), mean schema/default.rules. */
START_TEST(json_default_means_default_rules)
{
    const char *rules = read_text("schema/default.rules");
    json_means("{\"urgent\":[\"Sev1\",\"Sev2\"],\"tiers\":[\"Critical\"],\"modules\":[\"Payments\"],\n"
               " \"plans\":[\"Business\",\"Enterprise\"],\"minVotes\":130}",
               rules, "Incident");
    json_means("  {}  \n", rules, "Request");
}
END_TEST

/* Each key replaces its part of the default, and only that. */
START_TEST(json_keys_mean_their_rules)
{
    static const char *const rest_inc = "keep kind == Incident && severity in [Sev1, Sev2] && tier == Critical\n";
    static const char *const rest_bug = "keep kind == Bug && module == Payments\n";
    static const char *const rest_req = "keep kind == Request && plan in [Business, Enterprise] && votes.count >= 130\n";
    char rules[1024];
    /* names compare unescaped */
    snprintf(rules, sizeof rules, "keep kind == Incident && severity == Sev1 && tier == Critical\n%s%s",
             rest_bug, rest_req);
    json_means("{\"urgent\":[\"Sev\\u0031\"]}", rules, "Incident");
    /* an empty set keeps none of its kind */
    snprintf(rules, sizeof rules,
             "keep kind == Bug && (module == Ui || module == Auth)\n"
             "keep kind == Request && plan in [Business, Enterprise] && votes.count >= 0\n");
    json_means("{\"urgent\":[\"Sev4\"],\"tiers\":[],\"modules\":[\"Ui\",\"Auth\"],\"minVotes\":0}",
               rules, "Bug");
    snprintf(rules, sizeof rules,
             "%s%skeep kind == Request && (plan == Business || plan == Enterprise) && "
             "votes.count == 2147483647\n",
             rest_inc, rest_bug);
    json_means("{\"minVotes\":2147483647}", rules, "Request");
    snprintf(rules, sizeof rules,
             "keep kind == Incident && severity in [Sev2, Sev3] && (!(tier == Critical) &&\n"
             "  tier in [Minor, Major])\n"
             "%skeep kind == Request && plan == Free && votes.count > 6\n",
             rest_bug);
    json_means("{\"plans\":[\"Free\"],\"modules\":[\"Payments\"],\"minVotes\":7,\n"
               " \"urgent\":[\"Sev3\",\"Sev2\",\"Sev3\"],\"tiers\":[\"Minor\",\"Major\"]}",
               rules, "Incident");
    /* a Bug without a first frame has no module: != is false on a miss */
    snprintf(rules, sizeof rules, "%s%s%s", rest_inc, rest_req,
             "keep kind == Bug && module != Payments && !(module == Ui) && has(module)\n");
    /* every module the schema has but those two */
    char modules[1024] = "{\"modules\":[";
    bool first = true;
    for (int c = 0; c < TR_MODULE_COUNT; c++)
        if (!named(tr_Module_names[c], "Payments") && !named(tr_Module_names[c], "Ui")) {
            size_t at = strlen(modules);
            snprintf(modules + at, sizeof modules - at, "%s\"%s\"", first ? "" : ",",
                     tr_Module_names[c].p);
            first = false;
        }
    strcat(modules, "]}");
    json_means(modules, rules, "Bug");
}
END_TEST

static int kind_index(const char *name) { return tr_Detail_from(name, strlen(name)); }

/* Keys compare unescaped: an escaped key is the key it spells,
 * and a repeat of it is seen. */
START_TEST(json_keys_compare_unescaped)
{
    /* urgent [Sev3], no tiers (no incident kept), minVotes 7 */
    same_ctx c = json_means("{\"\\u0075rgent\":[\"Sev3\"],\"min\\u0056otes\":7,\"\\u0074iers\":[]}",
                            "keep kind == Incident && severity == Sev3 && false\n"
                            "keep kind == Bug && module == Payments\n"
                            "keep kind == Request && plan in [Business, Enterprise] && votes.count >= 7\n",
                            NULL);
    ck_assert_int_eq(c.kept[kind_index("Incident")], 0);
    ck_assert_int_gt(c.kept[kind_index("Request")], 0);
    c = json_means("{\"\\u0075rgent\":[\"Sev3\"]}",
                   "keep kind == Incident && severity == Sev3 && tier == Critical\n"
                   "keep kind == Bug && module == Payments\n"
                   "keep kind == Request && plan in [Business, Enterprise] && votes.count >= 130\n",
                   NULL);
    ck_assert_int_gt(c.kept[kind_index("Incident")], 0);
    po_policy p;
    char err[256] = "";
    /* the same key twice, once escaped */
    ck_assert(!parse("{\"urgent\":[\"Sev1\"],\"\\u0075rgent\":[\"Sev2\"]}", &p, err, sizeof err));
    ck_assert_str_eq(err, "p.json:1:20: key 'urgent' appears twice");
    /* an unknown key is still unknown escaped; the message shows it as written */
    ck_assert(!parse("{\"\\u0075rgen\":[]}", &p, err, sizeof err));
    ck_assert_str_eq(err,
                     "p.json:1:2: unknown key '\\u0075rgen' (known: urgent, tiers, modules, plans, minVotes)");
    /* a long escaped key names nothing */
    ck_assert(!parse("{\"\\u0075\\u0075\\u0075\\u0075\\u0075\\u0075\\u0075\\u0075\\u0075\\u0075\\u0075\\u0075\":[]}",
                     &p, err, sizeof err));
    ck_assert_msg(strstr(err, "p.json:1:2: unknown key '\\u0075\\u0075") == err, "%s", err);
}
END_TEST

/* minVotes is from 0 to 2147483647 (-1 was taken once, and every
 * Request passed the votes rule). */
START_TEST(json_min_votes_range)
{
    po_policy p;
    char err[256] = "";
    static const struct {
        const char *text;
        int64_t want; /* -1: an error */
    } cases[] = {
        {"{\"minVotes\":0}", 0},
        {"{\"minVotes\":2147483647}", 2147483647},
        {"{\"minVotes\":-1}", -1},
        {"{\"minVotes\":-0}", 0},
        {"{\"minVotes\":-130}", -1},
        {"{\"minVotes\":2147483648}", -1},
        {"{\"minVotes\":-9223372036854775808}", -1},
        {"{\"minVotes\":99999999999999999999}", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].want >= 0) {
            char rules[512];
            snprintf(rules, sizeof rules,
                     "keep kind == Incident && severity in [Sev1, Sev2] && tier == Critical\n"
                     "keep kind == Bug && module == Payments\n"
                     "keep kind == Request && plan in [Business, Enterprise] && votes.count >= %lld\n",
                     (long long)cases[i].want);
            same_ctx c = json_means(cases[i].text, rules, NULL);
            ck_assert_int_gt(c.kept[kind_index("Request")], 0);
        } else {
            ck_assert_msg(!parse(cases[i].text, &p, err, sizeof err), "accepted %s", cases[i].text);
            ck_assert_msg(strstr(err, "p.json:1:13: 'minVotes' must be") == err, "%s", err);
        }
    }
    ck_assert(!parse("{\"minVotes\":-1}", &p, err, sizeof err));
    ck_assert_str_eq(err, "p.json:1:13: 'minVotes' must be from 0 to 2147483647, not -1");
    ck_assert(!parse("{\"minVotes\":-9223372036854775808}", &p, err, sizeof err));
    ck_assert_str_eq(err, "p.json:1:13: 'minVotes' must be from 0 to 2147483647, not -9223372036854775808");
}
END_TEST

/* ---- the JSON form's errors ---- */

/* "A, B, C": the cases of an enum. */
static const char *case_list(const js_str *names, int n)
{
    static char buf[512];
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", i ? ", " : "", names[i].p);
    return buf;
}

/* Each bad file: the message names the file, where, and what is wrong. */
START_TEST(json_errors)
{
    /* a severity name the schema lacks: Sev5, or the first SevN after it
     * that is no case */
    int k = 5;
    char sevn[32], sev_text[64], sev_want[256], sev1_want[256], gold_want[256], nul_want[256];
    do
        snprintf(sevn, sizeof sevn, "Sev%d", k++);
    while (tr_Severity_from(sevn, strlen(sevn)) >= 0);
    snprintf(sev_text, sizeof sev_text, "{\"urgent\":[\"%s\"]}", sevn);
    snprintf(sev_want, sizeof sev_want,
             "p.json:1:12: 'urgent': '%s' is not a case of Severity (cases: %s)", sevn,
             case_list(tr_Severity_names, TR_SEVERITY_COUNT));
    snprintf(sev1_want, sizeof sev1_want,
             "p.json:1:12: 'urgent': 'sev1' is not a case of Severity (cases: %s)",
             case_list(tr_Severity_names, TR_SEVERITY_COUNT));
    /* a name holding a control byte (a NUL) is written as JSON writes it */
    snprintf(nul_want, sizeof nul_want,
             "p.json:1:12: 'urgent': 'Sev1\\u0000\\u001f' is not a case of Severity (cases: %s)",
             case_list(tr_Severity_names, TR_SEVERITY_COUNT));
    snprintf(gold_want, sizeof gold_want,
             "p.json:2:3: 'plans': 'Gold' is not a case of Plan (cases: %s)",
             case_list(tr_Plan_names, TR_PLAN_COUNT));
    const struct {
        const char *text, *want;
    } cases[] = {
        {sev_text, sev_want},
        {"{\"urgent\":[\"sev1\"]}", sev1_want},
        {"{\"urgent\":[\"Sev1\\u0000\\u001f\"]}", nul_want},
        {"{\"plans\":[\"Business\",\n  \"Gold\"]}", gold_want},
        {"{\"tiers\":[\"Critical\"],\n \"colour\":1}",
         "p.json:2:2: unknown key 'colour' (known: urgent, tiers, modules, plans, minVotes)"},
        {"{\"minVotes\":\"130\"}", "p.json:1:13: 'minVotes' must be an integer"},
        {"{\"minVotes\":true}", "p.json:1:13: 'minVotes' must be an integer"},
        {"{\"minVotes\":1.5}", "p.json:1:13: 'minVotes' must be an integer, not '1.5'"},
        {"{\"minVotes\":1e3}", "p.json:1:13: 'minVotes' must be an integer, not '1e3'"},
        {"{\"minVotes\":-3}", "p.json:1:13: 'minVotes' must be from 0 to 2147483647, not -3"},
        {"{\"minVotes\":2147483648}",
         "p.json:1:13: 'minVotes' must be from 0 to 2147483647, not 2147483648"},
        {"{\"plans\":\"Business\"}", "p.json:1:10: 'plans' must be an array of names"},
        {"{\"modules\":{}}", "p.json:1:12: 'modules' must be an array of names"},
        {"{\"plans\":[1]}", "p.json:1:11: 'plans' holds names in quotes"},
        {"{\"plans\":[],\"plans\":[]}", "p.json:1:13: key 'plans' appears twice"},
        {"[1]", "p.json: a policy file is one JSON object"},
        {"\"x\"", "p.json: a policy file is one JSON object"},
        {"{\"plans\":[]} {}", "p.json:1:14: not valid JSON: bytes after the JSON value"},
        {"{\"plans\":[]} x", "p.json:1:14: not valid JSON: bytes after the JSON value"},
        {"{\"plans\":[", "p.json:1:11: not valid JSON: unexpected end of input"},
        {"", "p.json:1:1: not valid JSON: unexpected end of input"},
        /* what jsmn alone would let through */
        {"{\"urgent\"}", "p.json:1:10: not valid JSON: unexpected character"},
        {"{\"tiers\":}", "p.json:1:10: not valid JSON: unexpected character"},
        {"{\"urgent\":[\"Sev1\",]}", "p.json:1:19: not valid JSON: unexpected character"},
        {"{\"urgent\":[\"Sev1\" \"Sev2\"]}", "p.json:1:19: not valid JSON: unexpected character"},
        {"{\"minVotes\":0130}", "p.json:1:14: not valid JSON: malformed number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        po_policy p;
        char err[512] = "";
        ck_assert_msg(!parse(cases[i].text, &p, err, sizeof err), "accepted: %s", cases[i].text);
        ck_assert_msg(strcmp(err, cases[i].want) == 0, "%s:\n  got  '%s'\n  want '%s'",
                      cases[i].text, err, cases[i].want);
    }
}
END_TEST

/* ---- files, --where, the choice ---- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL);
    REQUIRE(fwrite(text, 1, strlen(text), f) == strlen(text));
    REQUIRE(fclose(f) == 0);
}

START_TEST(load_file)
{
    char path[] = "/tmp/test_policy_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_file(path, "{\"modules\":[\"Search\"]}");
    po_policy p, want, chosen;
    char err[512];
    ck_assert_msg(jp_load(path, &tr_schema, &p, err, sizeof err), "%s", err);
    const char *rules = "keep kind == Incident && severity in [Sev1, Sev2] && tier == Critical\n"
                        "keep kind == Bug && module == Search\n"
                        "keep kind == Request && plan in [Business, Enterprise] && votes.count >= 130\n";
    REQUIREF(po_rules(rules, strlen(rules), "r.rules", &tr_schema, &want, err, sizeof err), "%s",
             err);
    same_ctx c = {.pol = &p, .other = &want};
    same_verdicts(&c);
    varied(&c, "Bug");
    /* --policy FILE chooses the same */
    rd_choice ch = {.policy = path};
    ck_assert_msg(rd_policy(&ch, &chosen, err, sizeof err), "%s", err);
    same_ctx d = {.pol = &chosen, .other = &want};
    same_verdicts(&d);
    po_free(&chosen);
    po_free(&p);
    po_free(&want);

    unlink(path);
    ck_assert(!jp_load(path, &tr_schema, &p, err, sizeof err));
    char want_err[600];
    snprintf(want_err, sizeof want_err, "%s: cannot read: No such file or directory", path);
    ck_assert_str_eq(err, want_err);
    ck_assert(!rd_policy(&ch, &p, err, sizeof err));
    ck_assert_str_eq(err, want_err);
}
END_TEST

/* A policy path that is a directory is named as one. */
START_TEST(policy_path_is_a_directory)
{
    char dir[] = "/tmp/test_policy_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    po_policy p;
    char err[512] = "";
    ck_assert(!jp_load(dir, &tr_schema, &p, err, sizeof err));
    char want[600];
    snprintf(want, sizeof want, "%s: cannot read: is a directory", dir);
    ck_assert_str_eq(err, want);
    rmdir(dir);
    ck_assert(!jp_load(dir, &tr_schema, &p, err, sizeof err));
    snprintf(want, sizeof want, "%s: cannot read: No such file or directory", dir);
    ck_assert_str_eq(err, want);
}
END_TEST

/* --where EXPR is the one rule `keep EXPR`; a bad one is refused naming
 * --where and the column. */
START_TEST(where)
{
    const char *expr = "kind == Incident && severity in [Sev1, Sev2] && tier == Critical";
    po_policy p;
    char err[512] = "";
    REQUIREF(po_where(expr, "--where", &tr_schema, &p, err, sizeof err), "%s", err);
    REQUIRE(ru_count(p.rules) == 1 && ru_rule_keeps(p.rules, 0));
    same_ctx c = {.pol = &p, .fn = urgent_incident};
    same_verdicts(&c);
    varied(&c, "Incident");
    for (int k = 0; k < TR_DETAIL_COUNT; k++)
        REQUIRE(named(tr_Detail_names[k], "Incident") || c.kept[k] == 0);
    po_free(&p);
    rd_choice ch = {.where = expr};
    REQUIREF(rd_policy(&ch, &p, err, sizeof err), "%s", err);
    same_ctx d = {.pol = &p, .fn = urgent_incident};
    same_verdicts(&d);
    po_free(&p);

    char want[512];
    snprintf(want, sizeof want, "--where:1:33: '%s' is not a case of Severity (cases: %s)",
             "Sev9", case_list(tr_Severity_names, TR_SEVERITY_COUNT));
    REQUIRE(tr_Severity_from("Sev9", 4) < 0);
    ck_assert(!po_where("kind == Incident && severity == Sev9", "--where", &tr_schema, &p, err,
                        sizeof err));
    ck_assert_str_eq(err, want);
    ck_assert(!po_where("(kind == Bug", "--where", &tr_schema, &p, err, sizeof err));
    ck_assert_str_eq(err, "--where:1:13: expected '&&', '||' or ')', found the end");
    rd_choice bad = {.where = "votes.cnt >= 3"};
    ck_assert(!rd_policy(&bad, &p, err, sizeof err));
    ck_assert_str_eq(err, "--where:1:7: Votes has no field 'cnt' (fields: count)");
}
END_TEST

/* rd_policy: --rules FILE; at most one of the three. */
START_TEST(choice)
{
    char path[] = "/tmp/test_policy_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_file(path, "# only urgent incidents\n"
                     "drop tier != Critical\n"
                     "keep kind == Incident && severity in [Sev1, Sev2]\n");
    rd_choice ch = {.rules = path};
    po_policy p;
    char err[512] = "";
    REQUIREF(rd_policy(&ch, &p, err, sizeof err), "%s", err);
    same_ctx c = {.pol = &p, .fn = urgent_incident};
    same_verdicts(&c);
    varied(&c, "Incident");
    po_free(&p);
    write_file(path, "keep kind == Incident &&\n");
    ck_assert(!rd_policy(&ch, &p, err, sizeof err));
    char want[600];
    snprintf(want, sizeof want, "%s:1:25: expected an optic, a value, '!' or '(', found end of line",
             path);
    ck_assert_str_eq(err, want);
    unlink(path);

    static const rd_choice two[] = {
        {.rules = "a", .where = "b"}, {.rules = "a", .policy = "c"}, {.where = "b", .policy = "c"},
        {.rules = "a", .where = "b", .policy = "c"}};
    for (size_t i = 0; i < sizeof two / sizeof *two; i++) {
        ck_assert(!rd_policy(&two[i], &p, err, sizeof err));
        ck_assert_str_eq(err, "give at most one of --rules, --where and --policy");
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = su_tcase(s, "policy", setup, teardown, 120);
    tcase_add_test(tc, default_is_model_md_policy);
    tcase_add_test(tc, default_reads_lazily);
    tcase_add_test(tc, json_default_means_default_rules);
    tcase_add_test(tc, json_keys_mean_their_rules);
    tcase_add_test(tc, json_keys_compare_unescaped);
    tcase_add_test(tc, json_min_votes_range);
    tcase_add_test(tc, json_errors);
    tcase_add_test(tc, load_file);
    tcase_add_test(tc, policy_path_is_a_directory);
    tcase_add_test(tc, where);
    tcase_add_test(tc, choice);
    return su_run(s);
}
