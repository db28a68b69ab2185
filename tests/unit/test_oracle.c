/* test_oracle.c: the generated decoder against an independent reader.
 *
 * jsmn tokenizes the same bytes; a few lines of our own walk its tokens to
 * the paths the policy and the demo look at (unescaping strings ourselves),
 * and every value must agree with what tr_decode_Issue produced, and with
 * the generated optics read over the decoded model. Generated messages of
 * every size 2..40, in both layouts (declared order, detail first); under
 * TR_TEST_STRIDE=k (make test-san) one message in k (suite.h's su_pick). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSMN_STATIC
#include <jsmn.h>

#include "issues.h"
#include "tr_model.h"
#include "tr_optics.h"
#include "support/fixture.h"
#include "support/suite.h"

#define MESSAGES 2000
#define MAX_TOKENS (1u << 20)

/* ---- the oracle: paths over jsmn's tokens ---- */

typedef struct {
    const char *js;
    const jsmntok_t *t;
    int n;
} doc;

/* The index just past token i and everything under it (a key's size is 1:
 * its value). */
static int skip(const doc *d, int i)
{
    REQUIRE(i < d->n);
    int j = i + 1;
    for (int k = 0; k < d->t[i].size; k++)
        j = skip(d, j);
    return j;
}

static uint32_t hex4(const char *h)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = h[i];
        uint32_t x;
        if (c >= '0' && c <= '9')
            x = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            x = (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            x = (uint32_t)(c - 'A' + 10);
        else
            ck_abort_msg("bad hex digit in \\u escape");
        v = v << 4 | x;
    }
    return v;
}

/* Our own unescaping: a string token's bytes into out (UTF-8). */
static size_t tok_str(const doc *d, int i, char *out, size_t cap)
{
    REQUIRE(i >= 0 && i < d->n && d->t[i].type == JSMN_STRING);
    const char *s = d->js + d->t[i].start, *e = d->js + d->t[i].end;
    size_t n = 0;
    while (s < e) {
        REQUIRE(n + 4 < cap);
        if (*s != '\\') {
            out[n++] = *s++;
            continue;
        }
        char x = s[1];
        s += 2;
        switch (x) {
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case '"': case '\\': case '/': out[n++] = x; break;
        case 'u': {
            uint32_t cp = hex4(s);
            s += 4;
            if (cp >= 0xD800 && cp < 0xDC00) {
                REQUIRE(s[0] == '\\' && s[1] == 'u');
                uint32_t lo = hex4(s + 2);
                REQUIRE(lo >= 0xDC00 && lo < 0xE000);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s += 6;
            }
            if (cp < 0x80) {
                out[n++] = (char)cp;
            } else if (cp < 0x800) {
                out[n++] = (char)(0xC0 | cp >> 6);
                out[n++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                out[n++] = (char)(0xE0 | cp >> 12);
                out[n++] = (char)(0x80 | (cp >> 6 & 0x3F));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            } else {
                out[n++] = (char)(0xF0 | cp >> 18);
                out[n++] = (char)(0x80 | (cp >> 12 & 0x3F));
                out[n++] = (char)(0x80 | (cp >> 6 & 0x3F));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default:
            ck_abort_msg("bad escape \\%c", x);
        }
    }
    return n;
}

static bool tok_is(const doc *d, int i, const char *s, size_t n)
{
    char buf[4096];
    size_t m = tok_str(d, i, buf, sizeof buf);
    return m == n && memcmp(buf, s, n) == 0;
}

/* The value of member key of the object at obj, or -1 (also when obj is -1).
 * A key that occurs twice fails the test: our messages never have one. */
static int get(const doc *d, int obj, const char *key)
{
    if (obj < 0)
        return -1;
    REQUIRE(d->t[obj].type == JSMN_OBJECT);
    int j = obj + 1, found = -1;
    for (int k = 0; k < d->t[obj].size; k++) {
        REQUIRE(d->t[j].type == JSMN_STRING && d->t[j].size == 1);
        if (tok_is(d, j, key, strlen(key))) {
            REQUIRE(found < 0);
            found = j + 1;
        }
        j = skip(d, j);
    }
    return found;
}

/* Element i of the array at arr, or -1. */
static int elem(const doc *d, int arr, int i)
{
    if (arr < 0)
        return -1;
    REQUIRE(d->t[arr].type == JSMN_ARRAY);
    if (i >= d->t[arr].size)
        return -1;
    int j = arr + 1;
    for (int k = 0; k < i; k++)
        j = skip(d, j);
    return j;
}

static int64_t tok_i64(const doc *d, int i)
{
    REQUIRE(i >= 0 && d->t[i].type == JSMN_PRIMITIVE);
    char buf[32];
    int n = d->t[i].end - d->t[i].start;
    REQUIRE(n > 0 && n < (int)sizeof buf);
    memcpy(buf, d->js + d->t[i].start, (size_t)n);
    buf[n] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    REQUIRE(errno == 0 && *end == 0);
    return (int64_t)v;
}

/* A path of member names, separated by '.', from the object at i. */
static int path(const doc *d, int i, const char *p)
{
    char name[64];
    while (i >= 0 && *p) {
        size_t n = strcspn(p, ".");
        REQUIRE(n < sizeof name);
        memcpy(name, p, n);
        name[n] = 0;
        i = get(d, i, name);
        p += n + (p[n] == '.');
    }
    return i;
}

/* The token at i is a string naming the case names[v]. */
static void is_name(const doc *d, int i, const js_str *names, int count, int v, const char *what)
{
    REQUIREF(i >= 0, "%s: absent", what);
    REQUIREF(v >= 0 && v < count, "%s: value %d out of range", what, v);
    REQUIREF(tok_is(d, i, names[v].p, names[v].n), "%s: '%.*s' in the bytes, %.*s decoded", what,
             d->t[i].end - d->t[i].start, d->js + d->t[i].start, (int)names[v].n, names[v].p);
}

static int count_of(const doc *d, int i)
{
    return i < 0 ? 0 : d->t[i].size;
}

/* ---- one message: both readers, compared ---- */

static jsmntok_t *toks;
static uint8_t *armem, *armem2, *cutbuf, *encbuf, *encbuf2;
#define ARENA_CAP (16u << 20)

/* Required fields of the root, as the first message showed them (the same
 * for every message). */
static int n_required = -1;

/* Every member of the root (jsmn's view of the bytes) is a field of the
 * root, each once: without it, the decoder rejects the message as missing
 * that very field (a required one), or reads an issue that encodes
 * differently (an optional one that was present), or the same issue when
 * the member is an empty list or map (which may be absent), but then null
 * in its place is rejected, naming it (a list or map may not be null). An
 * unknown member, or a null optional, would pass none of these. Nothing
 * here counts or names the schema's fields: the decoder knows them. */
static void root_members_are_fields(const doc *d, const uint8_t *msg, size_t n, const char *label)
{
    ar_arena ar; /* its own: the caller's issue lives in armem */
    ar_init(&ar, armem2, ARENA_CAP);
    tr_Issue whole;
    REQUIRE(tr_decode_Issue(msg, n, &ar, &whole).code == TR_E_OK);
    uint8_t *w = tr_encode_Issue(encbuf2, encbuf2 + ISS_MAX_MESSAGE, &whole);
    REQUIRE(w != NULL);
    size_t wn = (size_t)(w - encbuf2);
    int required = 0;
    int j = 1;
    for (int k = 0; k < d->t[0].size; k++) {
        int next = skip(d, j);
        /* the member's bytes (our encoder's: no whitespace): from its key
         * to its value's end, with the comma before it (after it, for the
         * first) */
        const jsmntok_t *val = &d->t[j + 1];
        size_t from = (size_t)d->t[j].start - 1, to = (size_t)val->end + (val->type == JSMN_STRING);
        if (k == 0)
            to++;
        else
            from--;
        REQUIREF((k == 0 ? msg[to - 1] : msg[from]) == ',', "%s: member %d's bounds", label, k);
        memcpy(cutbuf, msg, from);
        memcpy(cutbuf + from, msg + to, n - to);
        size_t cn = n - (to - from);
        char key[256];
        size_t kn = tok_str(d, j, key, sizeof key - 1);
        key[kn] = 0;
        tr_Issue v;
        ar_init(&ar, armem2, ARENA_CAP);
        tr_error e = tr_decode_Issue(cutbuf, cn, &ar, &v);
        if (e.code == TR_E_MISSING) {
            REQUIREF(e.what != NULL && strcmp(e.what, key) == 0,
                     "%s: without member %s the decoder misses %s", label, key,
                     e.what ? e.what : "-");
            required++;
        } else {
            REQUIREF(e.code == TR_E_OK, "%s: without member %s: %s at %zu", label, key,
                     tr_error_name(e.code), e.offset);
            uint8_t *x = tr_encode_Issue(encbuf, encbuf + ISS_MAX_MESSAGE, &v);
            REQUIRE(x != NULL);
            if ((size_t)(x - encbuf) == wn && memcmp(encbuf, encbuf2, wn) == 0) {
                REQUIREF((val->type == JSMN_ARRAY || val->type == JSMN_OBJECT) && val->size == 0,
                         "%s: member %s is no field (the issue is the same without it)", label,
                         key);
                size_t vs = (size_t)val->start, ve = (size_t)val->end;
                memcpy(cutbuf, msg, vs);
                memcpy(cutbuf + vs, "null", 4);
                memcpy(cutbuf + vs + 4, msg + ve, n - ve);
                ar_init(&ar, armem2, ARENA_CAP);
                e = tr_decode_Issue(cutbuf, n - (ve - vs) + 4, &ar, &v);
                REQUIREF(e.code == TR_E_NULL_REQUIRED && e.what != NULL && strcmp(e.what, key) == 0,
                         "%s: empty member %s is no list or map field: null gives %s (%s)", label,
                         key, tr_error_name(e.code), e.what ? e.what : "-");
            }
        }
        j = next;
    }
    if (n_required < 0)
        n_required = required;
    REQUIREF(required == n_required, "%s: %d required fields, %d in the first message", label,
             required, n_required);
}

static void check_message(const uint8_t *msg, size_t n, const char *label)
{
    /* the decoder */
    ar_arena ar;
    ar_init(&ar, armem, ARENA_CAP);
    tr_Issue v;
    tr_error e = tr_decode_Issue(msg, n, &ar, &v);
    REQUIREF(e.code == TR_E_OK, "%s: decoder rejects: %s at %zu", label, tr_error_name(e.code),
             e.offset);

    /* the oracle */
    jsmn_parser jp;
    jsmn_init(&jp);
    int nt = jsmn_parse(&jp, (const char *)msg, n, toks, MAX_TOKENS);
    REQUIREF(nt > 0, "%s: jsmn fails: %d", label, nt);
    doc d = {(const char *)msg, toks, nt};
    REQUIRE(toks[0].type == JSMN_OBJECT && toks[0].start == 0 && (size_t)toks[0].end == n);
    REQUIRE(skip(&d, 0) == nt);

    /* the root's members: every field, less the absent optionals */
    root_members_are_fields(&d, msg, n, label);

    REQUIREF(tok_i64(&d, get(&d, 0, "id")) == v.id, "%s: id", label);
    REQUIREF(tok_i64(&d, get(&d, 0, "revision")) == v.revision, "%s: revision", label);
    int key = get(&d, 0, "key");
    REQUIREF(tok_is(&d, key, v.key.p, v.key.n), "%s: key", label);
    int title = get(&d, 0, "title");
    REQUIREF(tok_is(&d, title, v.title.p, v.title.n), "%s: title", label);
    is_name(&d, get(&d, 0, "status"), tr_Status_names, TR_STATUS_COUNT, (int)v.status, "status");
    REQUIREF(count_of(&d, get(&d, 0, "labels")) == (int)v.labels.count, "%s: labels", label);
    REQUIREF(count_of(&d, get(&d, 0, "tags")) == (int)v.tags.count, "%s: tags", label);
    if (v.tags.count > 0) {
        int tags = get(&d, 0, "tags");
        int last_key = tags + 1;
        for (size_t i = 1; i < v.tags.count; i++)
            last_key = skip(&d, last_key);
        const js_str *k = &v.tags.items[v.tags.count - 1].key;
        REQUIREF(tok_is(&d, last_key, k->p, k->n), "%s: last tag's key", label);
    }

    int det = get(&d, 0, "detail");
    REQUIRE(det >= 0);
    is_name(&d, get(&d, det, "type"), tr_Detail_names, TR_DETAIL_COUNT, (int)v.detail.kind,
            "detail.type");

    /* the optics over the decoded model */
    const tr_Detail *od;
    REQUIRE(tr_get_detail(&v, &od) && od == &v.detail);
    tr_Detail_kind ok;
    REQUIRE(tr_get_kind(od, &ok) && ok == v.detail.kind);
    tr_Severity sev, sev2;
    tr_Tier tier;
    tr_Module mod;
    tr_Plan plan;
    const tr_Votes *votes;
    bool hit_sev = tr_get_severity(od, &sev), hit_sev2 = tr_get_severityOf(&v, &sev2);
    bool hit_tier = tr_get_tier(od, &tier), hit_mod = tr_get_module(od, &mod);
    bool hit_plan = tr_get_plan(od, &plan), hit_votes = tr_get_votes(od, &votes);

    switch (v.detail.kind) {
    case TR_DETAIL_INCIDENT: {
        const tr_Detail_Incident *x = &v.detail.u.Incident;
        is_name(&d, get(&d, det, "severity"), tr_Severity_names, TR_SEVERITY_COUNT,
                (int)x->severity, "detail.severity");
        is_name(&d, path(&d, det, "impact.service.tier"), tr_Tier_names, TR_TIER_COUNT,
                (int)x->impact.service.tier, "detail.impact.service.tier");
        REQUIRE(hit_sev && sev == x->severity && hit_sev2 && sev2 == x->severity);
        REQUIRE(hit_tier && tier == x->impact.service.tier);
        REQUIRE(!hit_mod && !hit_plan && !hit_votes);
        REQUIRE(path(&d, det, "votes.count") < 0 && path(&d, det, "trace") < 0);
        break;
    }
    case TR_DETAIL_BUG: {
        const tr_Detail_Bug *x = &v.detail.u.Bug;
        int frames = path(&d, det, "trace.frames");
        REQUIREF(count_of(&d, frames) == (int)x->trace.frames.count, "%s: frames", label);
        int f0 = elem(&d, frames, 0);
        if (x->trace.frames.count > 0) {
            is_name(&d, get(&d, f0, "module"), tr_Module_names, TR_MODULE_COUNT,
                    (int)x->trace.frames.items[0].module, "detail.trace.frames[0].module");
            REQUIRE(tok_i64(&d, get(&d, f0, "line")) == x->trace.frames.items[0].line);
            REQUIRE(hit_mod && mod == x->trace.frames.items[0].module);
        } else {
            REQUIRE(f0 < 0 && !hit_mod);
        }
        REQUIRE(!hit_sev && !hit_sev2 && !hit_tier && !hit_plan && !hit_votes);
        REQUIRE(get(&d, det, "severity") < 0);
        break;
    }
    case TR_DETAIL_REQUEST: {
        const tr_Detail_Request *x = &v.detail.u.Request;
        REQUIREF(tok_i64(&d, path(&d, det, "votes.count")) == x->votes.count, "%s: votes", label);
        is_name(&d, path(&d, det, "requester.contract.plan"), tr_Plan_names, TR_PLAN_COUNT,
                (int)x->requester.contract.plan, "detail.requester.contract.plan");
        REQUIRE(hit_votes && votes == &x->votes && hit_plan && plan == x->requester.contract.plan);
        REQUIRE(!hit_sev && !hit_sev2 && !hit_tier && !hit_mod);
        REQUIRE(get(&d, det, "severity") < 0);
        break;
    }
    default:
        /* a case the schema has besides the demo's: a name of the tag's
         * (checked above), and the demo's optics, each through another
         * case, all miss */
        REQUIREF(v.detail.kind >= 0 && v.detail.kind < TR_DETAIL_COUNT, "%s: detail kind %d",
                 label, (int)v.detail.kind);
        REQUIRE(!hit_sev && !hit_sev2 && !hit_tier && !hit_mod && !hit_plan && !hit_votes);
        break;
    }
}

/* ---- the tests ---- */

static uint8_t *genbuf;

static void setup(void)
{
    toks = fx_alloc(MAX_TOKENS * sizeof *toks);
    armem = fx_alloc(ARENA_CAP);
    armem2 = fx_alloc(ARENA_CAP);
    genbuf = fx_alloc(ISS_MAX_MESSAGE);
    encbuf = fx_alloc(ISS_MAX_MESSAGE);
    encbuf2 = fx_alloc(ISS_MAX_MESSAGE);
    cutbuf = fx_alloc(ISS_MAX_MESSAGE);
    js_init();
}

static void run_generated(bool detail_first)
{
    static uint8_t genmem[16u << 20];
    ar_arena gen;
    ar_init(&gen, genmem, sizeof genmem);
    int kinds[TR_DETAIL_COUNT] = {0}, with_frames = 0, escaped = 0, checked = 0;
    for (int i = 0; i < MESSAGES; i++) {
        if (!su_pick((size_t)i, 0))
            continue;
        checked++;
        uint64_t seed = 1 + (uint64_t)i;
        int size = 2 + i % 39;
        rg_rng rg;
        rg_seed(&rg, seed, 0);
        ar_reset(&gen);
        tr_Issue v;
        tr_random_Issue(&rg, &gen, size, &v);
        uint8_t *w = tr_encode_Issue_first(genbuf, genbuf + ISS_MAX_MESSAGE, &v,
                                           detail_first ? TR_ISSUE_F_DETAIL : -1);
        REQUIRE(w != NULL);
        size_t n = (size_t)(w - genbuf);
        char label[64];
        snprintf(label, sizeof label, "seed %llu size %d%s", (unsigned long long)seed, size,
                 detail_first ? " detail first" : "");
        check_message(genbuf, n, label);
        kinds[v.detail.kind]++;
        with_frames += v.detail.kind == TR_DETAIL_BUG && v.detail.u.Bug.trace.frames.count > 0;
        escaped += memchr(genbuf, '\\', n) != NULL;
    }
    /* the run exercised every branch: each case the schema has (chosen
     * uniformly) over half its share, and Bugs with frames as often */
    for (int k = 0; k < TR_DETAIL_COUNT; k++)
        ck_assert_int_gt(kinds[k], checked / TR_DETAIL_COUNT / 2);
    ck_assert_int_gt(with_frames, checked / TR_DETAIL_COUNT / 2);
    ck_assert_int_gt(escaped, checked / 4);
}

START_TEST(oracle_declared_order) { run_generated(false); }
END_TEST

START_TEST(oracle_detail_first) { run_generated(true); }
END_TEST

/* The oracle itself reads escapes and nesting as intended. */
START_TEST(oracle_reads_hand_made)
{
    const char *js = "{\"a\":{\"b\\u0063\":[1,{\"x\":\"\\ud83d\\ude80\\n\"}]},\"k\":-0}";
    jsmn_parser jp;
    jsmn_init(&jp);
    int nt = jsmn_parse(&jp, js, strlen(js), toks, MAX_TOKENS);
    REQUIRE(nt > 0);
    doc d = {js, toks, nt};
    int bc = path(&d, 0, "a.bc");
    REQUIRE(count_of(&d, bc) == 2);
    REQUIRE(tok_i64(&d, elem(&d, bc, 0)) == 1);
    REQUIRE(tok_is(&d, get(&d, elem(&d, bc, 1), "x"), "\xf0\x9f\x9a\x80\n", 5));
    REQUIRE(tok_i64(&d, get(&d, 0, "k")) == 0);
    REQUIRE(get(&d, 0, "b") < 0 && path(&d, 0, "a.x") < 0 && elem(&d, bc, 2) < 0);
}
END_TEST

static Suite *oracle_suite(void)
{
    Suite *s = suite_create("oracle");
    TCase *t = su_tcase(s, "jsmn", setup, fx_teardown, 600);
    tcase_add_test(t, oracle_reads_hand_made);
    tcase_add_test(t, oracle_declared_order);
    tcase_add_test(t, oracle_detail_first);
    return s;
}

int main(void) { return su_run(oracle_suite()); }
