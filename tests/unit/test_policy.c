/* test_policy.c: the policy over capabilities, and loading policy files. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "readers.h"

/* A reader answering from fixed values, counting the calls it gets. */
typedef struct {
    int kind, severity, tier, module, plan;
    bool has_votes;
    int64_t votes;
    int calls;
} fake;

static int f_kind(const void *s) { return ((fake *)(uintptr_t)s)->calls++, ((const fake *)s)->kind; }
static int f_sev(const void *s) { return ((fake *)(uintptr_t)s)->calls++, ((const fake *)s)->severity; }
static int f_tier(const void *s) { return ((fake *)(uintptr_t)s)->calls++, ((const fake *)s)->tier; }
static int f_module(const void *s) { return ((fake *)(uintptr_t)s)->calls++, ((const fake *)s)->module; }
static int f_plan(const void *s) { return ((fake *)(uintptr_t)s)->calls++, ((const fake *)s)->plan; }
static bool f_votes(const void *s, int64_t *v)
{
    fake *f = (fake *)(uintptr_t)s;
    f->calls++;
    *v = f->votes;
    return f->has_votes;
}

static bool judge(const po_policy *p, fake *f, int *kind)
{
    po_reader r = {f, f_kind, f_sev, f_tier, f_module, f_plan, f_votes};
    return po_judge(p, &r, kind);
}

static po_policy defaults(void)
{
    po_schema s = rd_schema();
    po_policy p;
    char err[256];
    ck_assert(po_default(&s, &p, err, sizeof err));
    return p;
}

START_TEST(default_rules)
{
    po_policy p = defaults();
    int kind;
    fake inc = {TR_DETAIL_INCIDENT, TR_SEVERITY_SEV1, TR_TIER_CRITICAL, -1, -1, false, 0, 0};
    ck_assert(judge(&p, &inc, &kind));
    ck_assert_int_eq(kind, TR_DETAIL_INCIDENT);
    inc.severity = TR_SEVERITY_SEV2;
    ck_assert(judge(&p, &inc, &kind));
    inc.severity = TR_SEVERITY_SEV3;
    inc.calls = 0;
    ck_assert(!judge(&p, &inc, &kind));
    ck_assert_int_eq(inc.calls, 2); /* kind, severity: tier is not needed */
    inc.severity = TR_SEVERITY_SEV1;
    inc.tier = TR_TIER_MAJOR;
    ck_assert(!judge(&p, &inc, &kind));
    inc.tier = -1; /* a miss */
    ck_assert(!judge(&p, &inc, &kind));

    fake bug = {TR_DETAIL_BUG, -1, -1, TR_MODULE_PAYMENTS, -1, false, 0, 0};
    ck_assert(judge(&p, &bug, &kind));
    bug.module = TR_MODULE_AUTH;
    ck_assert(!judge(&p, &bug, &kind));
    bug.module = -1;
    ck_assert(!judge(&p, &bug, &kind));

    fake req = {TR_DETAIL_REQUEST, -1, -1, -1, TR_PLAN_BUSINESS, true, 130, 0};
    ck_assert(judge(&p, &req, &kind));
    req.plan = TR_PLAN_ENTERPRISE;
    ck_assert(judge(&p, &req, &kind));
    req.votes = 129;
    ck_assert(!judge(&p, &req, &kind));
    req.votes = 200;
    req.plan = TR_PLAN_TEAM;
    ck_assert(!judge(&p, &req, &kind));
    req.plan = TR_PLAN_BUSINESS;
    req.has_votes = false;
    ck_assert(!judge(&p, &req, &kind));

    fake none = {-1, TR_SEVERITY_SEV1, TR_TIER_CRITICAL, TR_MODULE_PAYMENTS, TR_PLAN_BUSINESS, true, 200, 0};
    ck_assert(!judge(&p, &none, &kind));
    ck_assert_int_eq(kind, -1);
    ck_assert_int_eq(none.calls, 1);
}
END_TEST

static bool same(const po_policy *a, const po_policy *b)
{
    return a->bug == b->bug && a->incident == b->incident && a->request == b->request &&
           a->urgent == b->urgent && a->tiers == b->tiers && a->modules == b->modules &&
           a->plans == b->plans && a->min_votes == b->min_votes;
}

static bool parse(const char *text, po_policy *p, char *err, size_t errlen)
{
    po_schema s = rd_schema();
    return po_parse(text, strlen(text), "p.json", &s, p, err, errlen);
}

START_TEST(file_equal_to_default)
{
    po_policy a = defaults(), b;
    char err[256];
    ck_assert_msg(parse("{\"urgent\":[\"Sev1\",\"Sev2\"],\"tiers\":[\"Critical\"],\"modules\":[\"Payments\"],\n"
                        " \"plans\":[\"Business\",\"Enterprise\"],\"minVotes\":130}",
                        &b, err, sizeof err),
                  "%s", err);
    ck_assert(same(&a, &b));
    ck_assert(parse("  {}  \n", &b, err, sizeof err)); /* every key optional */
    ck_assert(same(&a, &b));
}
END_TEST

START_TEST(file_values)
{
    po_policy p;
    char err[256];
    ck_assert(parse("{\"urgent\":[\"Sev\\u0031\"]}", &p, err, sizeof err));
    ck_assert_uint_eq(p.urgent, 1u << TR_SEVERITY_SEV1);
    ck_assert_msg(parse("{\"urgent\":[\"Sev4\"],\"tiers\":[],\"modules\":[\"Ui\",\"Auth\"],\"minVotes\":0}",
                        &p, err, sizeof err),
                  "%s", err);
    ck_assert_uint_eq(p.urgent, 1u << TR_SEVERITY_SEV4);
    ck_assert_uint_eq(p.tiers, 0);
    ck_assert_uint_eq(p.modules, (1u << TR_MODULE_UI) | (1u << TR_MODULE_AUTH));
    ck_assert_int_eq(p.min_votes, 0);
    ck_assert_msg(parse("{\"minVotes\":2147483647}", &p, err, sizeof err), "%s", err);
    ck_assert_int_eq(p.min_votes, 2147483647);
}
END_TEST

/* Each bad file: the message names the file, and what is wrong. */
START_TEST(file_errors)
{
    /* a severity name the schema lacks: Sev5, or the first SevN after it
     * that is no case */
    int k = 5;
    char name[32], text[64], want[96];
    do
        snprintf(name, sizeof name, "Sev%d", k++);
    while (tr_Severity_from(name, strlen(name)) >= 0);
    snprintf(text, sizeof text, "{\"urgent\":[\"%s\"]}", name);
    snprintf(want, sizeof want, "p.json:1:12: 'urgent': unknown name '%s'", name);
    static const struct {
        const char *text, *want;
    } cases[] = {
        {NULL, NULL}, /* text, want */
        {"{\"urgent\":[\"sev1\"]}", "unknown name 'sev1'"},
        {"{\"tiers\":[\"Critical\"],\n \"colour\":1}", "p.json:2:2: unknown key 'colour'"},
        {"{\"minVotes\":\"130\"}", "'minVotes' must be an integer"},
        {"{\"minVotes\":1.5}", "'minVotes' must be an integer"},
        {"{\"minVotes\":-3}", "'minVotes' must be from 0 to 2147483647, not -3"},
        {"{\"minVotes\":2147483648}", "'minVotes' must be from 0 to 2147483647, not 2147483648"},
        {"{\"plans\":\"Business\"}", "'plans' must be an array of names"},
        {"{\"plans\":[1]}", "'plans' holds names in quotes"},
        {"{\"plans\":[],\"plans\":[]}", "key 'plans' appears twice"},
        {"[1]", "p.json: a policy file is one JSON object"},
        {"{\"plans\":[]} {}", "p.json:1:14: not valid JSON: bytes after the JSON value"},
        {"{\"plans\":[]} x", "p.json:1:14: not valid JSON"},
        {"{\"plans\":[", "p.json:1:11: not valid JSON: unexpected end of input"},
        {"", "p.json:1:1: not valid JSON"},
        /* what jsmn alone would let through */
        {"{\"urgent\"}", "p.json:1:10: not valid JSON"},
        {"{\"tiers\":}", "p.json:1:10: not valid JSON"},
        {"{\"urgent\":[\"Sev1\",]}", "not valid JSON"},
        {"{\"urgent\":[\"Sev1\" \"Sev2\"]}", "not valid JSON"},
        {"{\"minVotes\":0130}", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *t = i == 0 ? text : cases[i].text, *w = i == 0 ? want : cases[i].want;
        po_policy p;
        char err[256] = "";
        ck_assert_msg(!parse(t, &p, err, sizeof err), "accepted: %s", t);
        ck_assert_msg(strstr(err, w) != NULL, "%s: got '%s', want '%s'", t, err, w);
    }
}
END_TEST

START_TEST(load_file)
{
    char path[] = "/tmp/test_policy_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *text = "{\"modules\":[\"Search\"]}";
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    po_schema s = rd_schema();
    po_policy p;
    char err[512];
    ck_assert_msg(po_load(path, &s, &p, err, sizeof err), "%s", err);
    ck_assert_uint_eq(p.modules, 1u << TR_MODULE_SEARCH);
    unlink(path);
    ck_assert(!po_load(path, &s, &p, err, sizeof err));
    ck_assert_msg(strstr(err, path) != NULL && strstr(err, "cannot read") != NULL, "%s", err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, default_rules);
    tcase_add_test(tc, file_equal_to_default);
    tcase_add_test(tc, file_values);
    tcase_add_test(tc, file_errors);
    tcase_add_test(tc, load_file);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
