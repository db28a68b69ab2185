/* test_rules_model.c: the rule engine (runtime/rules.h) against a direct
 * evaluation, on whatever schema the tables describe (the rules' property
 * test). Like test_model.c it reaches the schema only through tr_schema, so
 * it builds and runs unchanged on schema/issue.schema and on every
 * schema in tests/models (make model-check).
 *
 *   - random rules: 1-4 keep/drop rules whose expressions (depth <= 4) use
 *     every optic a message can reach and, for record optics, their .field
 *     paths (nested), with == != < <= > >= in [..] has() ! && || and
 *     parentheses; literals are the cases of the operand's type, values read
 *     from generated messages (strings JSON-escaped in several ways, numbers
 *     as JSON, f64 with %.17g and its neighbours), and edge numbers; the
 *     text is laid out with random spaces, comments, CRLF and line breaks
 *     inside open brackets. A third of the sets begin most rules with a
 *     test of one enum, tag or bool path (`kind == A && ...`, as rules by
 *     kind are written: the form the engine indexes). Every such text must
 *     load.
 *   - the verdict on each generated message (types[root].random + encode,
 *     and encode_first with first_field, sizes 2..40) through the bytes
 *     reader at each verify level (off; json: js_validate first; schema:
 *     tr_schema.validate first; schema with the raw optics' views seeded
 *     from validate_views, as the demo does) and through the model reader
 *     (the decoded root) equals a direct evaluation of the rules' syntax
 *     tree over the decoded root, written here independently of ru_judge
 *     (values read with op_get_message and the op_field getters; numbers
 *     compared exactly as long doubles); ru_decide names the same rule.
 *     Messages the validators reject are dropped at their level. Each
 *     validator runs once a message (validate_views must give validate's
 *     verdict), and every rule set is judged with its verdict and views.
 *   - type-incorrect rules (ordering on non-numbers, wrong literal types,
 *     records or raw values used as values, unknown optics, fields and
 *     cases, malformed literals, ...) fail to load with NAME:LINE:COL at
 *     the offending rule's line, the column inside the bad part.
 *
 * Built with RM_COMPILED (test_rules_model_c), it checks rules written as C
 * instead (rules.h: ru_emit_c): `test_rules_model --write-rules DIR N`
 * writes the first N rule sets above (the default seed) as DIR/set_I.rules,
 * the build writes each as C with triage-rulesc and links them in
 * (tr_rulesets), and on every message, at each level that reads bytes and on
 * the model, each set's C must decide and judge as the interpreter does,
 * having read the same optics (the subject's count and each optic's slot).
 *
 * A failure prints the rules text, the message's index and bytes, and what
 * each side said. RULES_MODEL_SEED, RULES_MODEL_SETS and RULES_MODEL_MSGS
 * in the environment change the seed, the number of rule sets (300) and
 * the messages judged per set (100); RULES_MODEL_PRINT prints every rules
 * text.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "optic.h"
#include "rules.h"
#include "skip.h"
#include "support/bytes.h"
#include "support/fixture.h"
#include "support/suite.h"

/* The schema's tables (runtime/optic.h), which the generated
 * tr_optics_table.c defines: the suite includes no generated header, so it
 * is compiled once and linked with the code generated for each schema. */
extern const op_schema tr_schema;

static const op_schema *S = &tr_schema;

#define BUF_BYTES (8u << 20)
#define GEN_ARENA (64u << 20)
#define VAL_ARENA (16u << 20)
#define NAME "gen.rules"

static unsigned long env_or(const char *name, unsigned long dflt)
{
    const char *v = getenv(name);
    return v != NULL && *v ? strtoul(v, NULL, 0) : dflt;
}

/* ================================================= the messages ===== */

typedef struct {
    uint8_t *p;
    size_t n;
    void *root;      /* decoded (NULL: the decoder rejects it) */
    void *dec_mem;   /* the arena it was decoded into */
    int size, layout;
    bool js_ok, schema_ok;
    op_value *views; /* validate_views's, one per optic (bytes.p &UNSET: not set) */
    bool *has;
    const char *what;
} msg;

#define MAX_MSGS 512

typedef struct {
    msg valid[MAX_MSGS];
    int nvalid;
    msg invalid[64];
    int ninvalid;
    size_t largest;
    uint8_t *gen_mem, *enc;
    ar_arena gen, val, rd_arena, rd2_arena;
    void *value;
    ru_subject rd;
    ru_subject rd2; /* the rules as C judge here (RM_COMPILED) */
} ctx;

static ctx *C;

static const uint8_t UNSET = 0;

/* Decodes p[0, n) into a block of its own (the message keeps it). */
static void decode_into(msg *m)
{
    const op_type *ty = &S->types[S->root];
    ar_arena a;
    ar_reset(&C->gen);
    void *tmp = calloc(1, ty->size + 16);
    REQUIRE(tmp != NULL);
    ar_init(&a, C->gen_mem, GEN_ARENA);
    tr_error e = ty->decode(m->p, m->n, &a, tmp);
    free(tmp);
    m->root = NULL;
    if (e.code != TR_E_OK)
        return;
    size_t need = a.high + 64;
    m->dec_mem = fx_alloc(need);
    m->root = fx_zalloc(ty->size + 16);
    ar_init(&a, m->dec_mem, need);
    e = ty->decode(m->p, m->n, &a, m->root);
    REQUIREF(e.code == TR_E_OK, "second decode fails: %s", tr_error_name(e.code));
}

static void judge_validity(msg *m)
{
    js_ctx c;
    js_ctx_init(&c, m->p, NULL);
    js_validate(&c, m->p, m->p + m->n);
    m->js_ok = c.err.code == TR_E_OK;
    ar_reset(&C->val);
    m->schema_ok = S->validate(m->p, m->n, &C->val).code == TR_E_OK;
    /* the validator with views, once a message (every rule set judges it
     * with them): the same verdict; the views are into the message's bytes.
     * validate_views sets the entries of the raw optics on root members
     * only: the others keep the mark */
    int k = S->noptics < RU_MAX_OPTICS ? S->noptics : RU_MAX_OPTICS;
    m->views = fx_alloc(((size_t)k + 1) * sizeof *m->views);
    m->has = fx_zalloc((size_t)k + 1);
    for (int i = 0; i < k; i++) {
        m->views[i].bytes.p = &UNSET;
        m->views[i].bytes.n = 0;
    }
    ar_reset(&C->val);
    bool views_ok = S->validate_views(m->p, m->n, &C->val, m->views, m->has).code == TR_E_OK;
    REQUIREF(views_ok == m->schema_ok, "%s: validate_views %s, validate %s", m->what,
             views_ok ? "accepts" : "rejects", m->schema_ok ? "accepts" : "rejects");
}

static void add_msg(msg *m, const uint8_t *p, size_t n, const char *what)
{
    m->p = fx_alloc(n + 1);
    memcpy(m->p, p, n);
    m->n = n;
    m->what = what;
    if (n > C->largest)
        C->largest = n;
    judge_validity(m);
    decode_into(m);
}

static void setup(void)
{
    sk_init(); /* the scanners' widest walk, as the demo's (JS_SIMD narrows it) */
    C = fx_zalloc(sizeof *C);
    C->gen_mem = fx_alloc(GEN_ARENA);
    C->enc = fx_alloc(BUF_BYTES);
    size_t most = 0;
    for (int t = 0; t < S->ntypes; t++)
        if (S->types[t].size > most)
            most = S->types[t].size;
    C->value = fx_zalloc(most + 16);
    ar_init(&C->gen, C->gen_mem, GEN_ARENA);
    fx_arena(&C->val, VAL_ARENA);

    const op_type *ty = &S->types[S->root];
    for (int layout = 0; layout < 2; layout++)
        for (int size = 2; size <= 40; size++)
            for (uint64_t k = 0; k < 3; k++) {
                rg_rng rg;
                rg_seed(&rg, 0x72756c65736dull ^ (uint64_t)size << 16 ^ (uint64_t)layout << 8, k);
                ar_init(&C->gen, C->gen_mem, GEN_ARENA);
                memset(C->value, 0, ty->size);
                ty->random(&rg, &C->gen, size, C->value);
                uint8_t *w = layout ? S->encode_first(C->enc, C->enc + BUF_BYTES, C->value,
                                                      S->first_field)
                                    : ty->encode(C->enc, C->enc + BUF_BYTES, C->value);
                REQUIREF(w != NULL, "message at size %d does not fit", size);
                REQUIRE(C->nvalid < MAX_MSGS);
                msg *m = &C->valid[C->nvalid++];
                m->size = size;
                m->layout = layout;
                add_msg(m, C->enc, (size_t)(w - C->enc), "generated");
                REQUIREF(m->root != NULL && m->js_ok && m->schema_ok,
                         "generated message %d does not validate or decode", C->nvalid - 1);
            }

    /* Messages the validators reject (or some accept): each level must drop
     * what its validator rejects. */
    static const char *texts[] = {"{}", "[]", "null", "1", "\"x\"", " ", "", "{\"a\":1}",
                                  "{} x", "{\"\":}"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        add_msg(&C->invalid[C->ninvalid++], (const uint8_t *)texts[i], strlen(texts[i]),
                "a fixed text");
    rg_rng rg;
    rg_seed(&rg, 0x696e76616c6964ull, 0);
    for (int i = 0; i < 24; i++) {
        const msg *v = &C->valid[rg_below(&rg, (uint64_t)C->nvalid)];
        size_t cut = (size_t)rg_below(&rg, v->n);
        add_msg(&C->invalid[C->ninvalid++], v->p, cut, "a truncated message");
    }
    for (int i = 0; i < 8; i++) {
        const msg *v = &C->valid[rg_below(&rg, (uint64_t)C->nvalid)];
        memcpy(C->enc, v->p, v->n);
        size_t at = (size_t)rg_below(&rg, v->n);
        static const uint8_t junk[] = {'"', '}', ']', ',', 'x', 0x00, 0xff, '0'};
        C->enc[at] = junk[rg_below(&rg, sizeof junk)];
        add_msg(&C->invalid[C->ninvalid++], C->enc, v->n, "a corrupted message");
    }
    for (int t = 0; t < S->ntypes && C->ninvalid < 60; t++) {
        if (t == S->root)
            continue;
        rg_rng r2;
        rg_seed(&r2, 0x6f74686572ull, (uint64_t)t);
        ar_init(&C->gen, C->gen_mem, GEN_ARENA);
        memset(C->value, 0, S->types[t].size);
        S->types[t].random(&r2, &C->gen, 4, C->value);
        uint8_t *w = S->types[t].encode(C->enc, C->enc + BUF_BYTES, C->value);
        REQUIRE(w != NULL);
        add_msg(&C->invalid[C->ninvalid++], C->enc, (size_t)(w - C->enc), "another type");
    }

    size_t rd_bytes = 4 * C->largest + (1u << 20);
    fx_arena(&C->rd_arena, rd_bytes);
    fx_arena(&C->rd2_arena, rd_bytes);
    REQUIRE(ru_subject_init(&C->rd, S, &C->rd_arena));
    REQUIRE(ru_subject_init(&C->rd2, S, &C->rd2_arena));
}

/* ================================================= the paths ===== */

#define MAX_STEPS 6
#define MAX_PATHS 2048
#define MAX_SAMPLES 24

typedef struct {
    int optic, nsteps;
    const op_field *steps[MAX_STEPS];
    op_kind kind;
    const char *focus;
    const js_str *cases;
    int ncases;
    char text[256];
    int nsamples;
    op_value samples[MAX_SAMPLES];
    int hits;
} path_t;

static path_t *P;
static int npaths;

static void add_path(int optic, const op_field *const *steps, int nsteps, op_kind kind,
                     const char *focus, const js_str *cases, int ncases, const op_field *fields,
                     int nfields, const char *text)
{
    if (npaths >= MAX_PATHS)
        return;
    path_t *p = &P[npaths++];
    memset(p, 0, sizeof *p);
    p->optic = optic;
    p->nsteps = nsteps;
    for (int i = 0; i < nsteps; i++)
        p->steps[i] = steps[i];
    p->kind = kind;
    p->focus = focus;
    p->cases = cases;
    p->ncases = ncases;
    snprintf(p->text, sizeof p->text, "%s", text);
    if (kind != OP_RECORD || nsteps >= MAX_STEPS)
        return;
    const op_field *more[MAX_STEPS];
    for (int i = 0; i < nsteps; i++)
        more[i] = steps[i];
    for (int f = 0; f < nfields; f++) {
        const op_field *fd = &fields[f];
        char t[256];
        if ((size_t)snprintf(t, sizeof t, "%s.%s", text, fd->name) >= sizeof t)
            continue;
        more[nsteps] = fd;
        add_path(optic, more, nsteps + 1, fd->kind, fd->focus, fd->cases, fd->ncases, fd->fields,
                 fd->nfields, t);
    }
}

static bool read_path(const path_t *p, const void *root, op_value *out)
{
    memset(out, 0, sizeof *out);
    if (!op_get_message(S, p->optic, root, out))
        return false;
    for (int s = 0; s < p->nsteps; s++) {
        op_value v;
        memset(&v, 0, sizeof v);
        if (!p->steps[s]->get(out->ptr, &v))
            return false;
        *out = v;
    }
    return true;
}

static bool is_value(op_kind k) { return k != OP_RECORD && k != OP_RAW; }

static bool same_value(op_kind k, const op_value *a, const op_value *b)
{
    switch (k) {
    case OP_BOOL: return a->b == b->b;
    case OP_I32:
    case OP_I64: return a->i == b->i;
    case OP_F64: return memcmp(&a->f, &b->f, sizeof(double)) == 0;
    case OP_STRING: return a->s.n == b->s.n && (a->s.n == 0 || memcmp(a->s.p, b->s.p, a->s.n) == 0);
    default: return a->e == b->e;
    }
}

/* Every path from every optic a message can reach, and values of each
 * read from the messages (they stay in the pool's decoded roots). */
static void build_paths(void)
{
    P = calloc(MAX_PATHS, sizeof *P);
    REQUIRE(P != NULL);
    npaths = 0;
    for (int i = 0; i < S->noptics; i++) {
        const op_optic *o = &S->optics[i];
        if (!op_from_message(S, i) || strcmp(o->name, "true") == 0 || strcmp(o->name, "false") == 0)
            continue;
        add_path(i, NULL, 0, o->kind, o->focus, o->cases, o->ncases, o->fields, o->nfields, o->name);
    }
    for (int m = 0; m < C->nvalid; m++)
        for (int i = 0; i < npaths; i++) {
            path_t *p = &P[i];
            op_value v;
            if (!read_path(p, C->valid[m].root, &v))
                continue;
            p->hits++;
            if (!is_value(p->kind) || p->nsamples == MAX_SAMPLES)
                continue;
            bool seen = false;
            for (int k = 0; k < p->nsamples && !seen; k++)
                seen = same_value(p->kind, &p->samples[k], &v);
            if (!seen)
                p->samples[p->nsamples++] = v;
        }
}

/* ================================================= literals ===== */

enum { LC_NUM, LC_STR, LC_ENUM, LC_BOOL };
enum { LN_INT, LN_DBL, LN_WIDE };

typedef struct {
    int cls;
    int nk;           /* LC_NUM: integer, double or an integer past i64 */
    int64_t i;
    double f;
    long double w;
    char num[64];     /* LC_NUM: its text */
    const char *s;    /* LC_STR: bytes (valid UTF-8) */
    size_t n;
    int e;            /* LC_ENUM: case index, of cases */
    const js_str *cases;
    bool b;
} lit;

static int cls_of_kind(op_kind k)
{
    switch (k) {
    case OP_BOOL: return LC_BOOL;
    case OP_I32:
    case OP_I64:
    case OP_F64: return LC_NUM;
    case OP_STRING: return LC_STR;
    case OP_ENUM:
    case OP_TAG: return LC_ENUM;
    default: return -1;
    }
}

/* A number literal from its JSON text, valued independently of the engine:
 * integer syntax is an integer (past i64: a long double, exact for the
 * magnitudes used), anything else a double. */
static lit num_lit(const char *text)
{
    lit l;
    memset(&l, 0, sizeof l);
    l.cls = LC_NUM;
    snprintf(l.num, sizeof l.num, "%s", text);
    const char *q = text + (*text == '-');
    bool integer = *q != '\0';
    for (; *q; q++)
        integer = integer && *q >= '0' && *q <= '9';
    if (integer) {
        errno = 0;
        long long v = strtoll(text, NULL, 10);
        if (errno == ERANGE) {
            l.nk = LN_WIDE;
            l.w = strtold(text, NULL);
        } else {
            l.nk = LN_INT;
            l.i = v;
        }
    } else {
        l.nk = LN_DBL;
        l.f = strtod(text, NULL);
    }
    return l;
}

static long double num_of_lit(const lit *l)
{
    return l->nk == LN_INT ? (long double)l->i : l->nk == LN_DBL ? (long double)l->f : l->w;
}

static lit str_lit(const char *s, size_t n) { return (lit){.cls = LC_STR, .s = s, .n = n}; }

static lit bool_lit(bool b) { return (lit){.cls = LC_BOOL, .b = b}; }

static lit enum_lit(const path_t *p, int e) { return (lit){.cls = LC_ENUM, .e = e, .cases = p->cases}; }

/* Decodes one UTF-8 character; 0 when invalid. */
static size_t utf8(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0];
    size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (len == 0 || len > n)
        return 0;
    unsigned v = len == 1 ? c : c & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3Fu);
    }
    if ((len == 3 && (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF))) || (len == 4 && (v < 0x10000 || v > 0x10FFFF)))
        return 0;
    *cp = v;
    return len;
}

static bool valid_utf8(const char *s, size_t n)
{
    unsigned cp;
    for (size_t i = 0; i < n;) {
        size_t l = utf8((const unsigned char *)s + i, n - i, &cp);
        if (l == 0)
            return false;
        i += l;
    }
    return true;
}

static const struct {
    const char *s;
    size_t n;
} FIXED_STRS[] = {
    {"", 0}, {"a", 1}, {"x\"y", 3}, {"back\\slash", 10}, {"tab\there\n", 9},
    {"caf\xc3\xa9", 5}, {"\xf0\x9f\x98\x80", 4}, {"# not a comment", 15}, {"nul\0byte", 8},
    {"keep", 4}, {"Incident", 8}, {"a/b", 3},
};

static const char *FIXED_NUMS[] = {
    "0", "-0", "-0.0", "1", "-1", "2", "10", "200", "9999", "10000", "0.5", "0.1", "1e6", "1E2",
    "1e-7", "999999.99", "2199023255552", "2199023255551.5", "9007199254740993",
    "9223372036854775807", "-9223372036854775808", "9223372036854775808",
    "-9223372036854775809", "18446744073709551616", "1e19", "-1e19", "1e300", "-1e300",
    "2147483647", "2147483648", "-2147483649",
};
#define NFIXED_NUMS (sizeof FIXED_NUMS / sizeof *FIXED_NUMS)

/* A number literal near a value read from a message, or a fixed one. */
static lit gen_num(rg_rng *rg, const path_t *p, bool allow_wide)
{
    char t[64];
    if (p != NULL && p->nsamples > 0 && rg_below(rg, 100) < 75) {
        const op_value *v = &p->samples[rg_below(rg, (uint64_t)p->nsamples)];
        if (p->kind == OP_F64) {
            double d = v->f;
            switch (rg_below(rg, 6)) {
            case 0: case 1: case 2: snprintf(t, sizeof t, "%.17g", d); break;
            case 3: snprintf(t, sizeof t, "%.17g", nextafter(d, INFINITY)); break;
            case 4: snprintf(t, sizeof t, "%.17g", nextafter(d, -INFINITY)); break;
            default: snprintf(t, sizeof t, "%.0f", floor(d)); break;
            }
        } else {
            long long i = (long long)v->i;
            switch (rg_below(rg, 7)) {
            case 0: case 1: case 2: snprintf(t, sizeof t, "%lld", i); break;
            case 3: snprintf(t, sizeof t, "%lld", i + 1); break;
            case 4: snprintf(t, sizeof t, "%lld", i - 1); break;
            case 5: snprintf(t, sizeof t, "%lld.%s", i, rg_below(rg, 2) ? "5" : "0"); break;
            default: snprintf(t, sizeof t, "%llde0", i); break;
            }
        }
        return num_lit(t);
    }
    for (;;) {
        lit l = num_lit(FIXED_NUMS[rg_below(rg, NFIXED_NUMS)]);
        if (l.nk != LN_WIDE || allow_wide)
            return l;
    }
}

static lit gen_str(rg_rng *rg, const path_t *p)
{
    if (p != NULL && p->nsamples > 0 && rg_below(rg, 100) < 70) {
        const op_value *v = &p->samples[rg_below(rg, (uint64_t)p->nsamples)];
        size_t n = v->s.n;
        if (n > 0 && rg_below(rg, 5) == 0)
            n--; /* a prefix: not equal */
        if (valid_utf8(v->s.p, n) && n < 4000)
            return str_lit(v->s.p, n);
    }
    size_t k = rg_below(rg, sizeof FIXED_STRS / sizeof *FIXED_STRS);
    return str_lit(FIXED_STRS[k].s, FIXED_STRS[k].n);
}

/* Whether case c of path p's enum can be written as a bare word outside an
 * 'in' list: any word can (true and false too), but the name of an optic
 * that reads the same enum (a comparison of two paths) or that no raw
 * optic of the root reaches (rules that name it do not load). */
static bool word_ok(const path_t *p, const js_str *c)
{
    int o = op_find(S, c->p, c->n);
    if (o < 0)
        return true;
    const op_optic *x = &S->optics[o];
    bool same = (x->kind == OP_ENUM || x->kind == OP_TAG) && strcmp(x->focus, p->focus) == 0;
    return op_from_message(S, o) && !same;
}

static lit gen_enum(rg_rng *rg, const path_t *p)
{
    if (p->nsamples > 0 && rg_below(rg, 2) == 0)
        return enum_lit(p, p->samples[rg_below(rg, (uint64_t)p->nsamples)].e);
    return enum_lit(p, (int)rg_below(rg, (uint64_t)p->ncases));
}

/* A literal that fits path p. */
static lit gen_lit(rg_rng *rg, const path_t *p, bool allow_wide)
{
    switch (cls_of_kind(p->kind)) {
    case LC_NUM: return gen_num(rg, p, allow_wide);
    case LC_STR: return gen_str(rg, p);
    case LC_ENUM: return gen_enum(rg, p);
    default:
        if (p->nsamples > 0 && rg_below(rg, 2) == 0)
            return bool_lit(p->samples[rg_below(rg, (uint64_t)p->nsamples)].b);
        return bool_lit(rg_below(rg, 2));
    }
}

/* ================================================= expressions ===== */

enum { N_AND, N_OR, N_NOT, N_HAS, N_TRUTH, N_CONST, N_CMP, N_IN };
enum { C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE };
static const char *CMP_TEXT[] = {"==", "!=", "<", "<=", ">", ">="};

typedef struct {
    bool path;
    int p;
    lit l;
} opd;

#define MAX_KIDS 3
#define MAX_ITEMS 6

typedef struct node {
    int op;
    int nkids;
    struct node *kids[MAX_KIDS];
    int p;
    bool cval;
    int cmp;
    opd a, b;
    int nitems;
    lit items[MAX_ITEMS];
    bool paren; /* printed in redundant parentheses */
} node;

#define MAX_NODES 512
static node *pool;
static int npool;

static node *new_node(int op)
{
    REQUIRE(npool < MAX_NODES);
    node *n = &pool[npool++];
    memset(n, 0, sizeof *n);
    n->op = op;
    return n;
}

typedef struct {
    int *value; /* indexes of value paths */
    int nvalue;
    int *all;   /* every path (has() takes records and raw values too) */
    int nall;
    int *bools;
    int nbools;
    int *used;  /* per path: how often rules used it */
} catalog;

static catalog K;

static void build_catalog(void)
{
    K.value = calloc((size_t)npaths + 1, sizeof(int));
    K.all = calloc((size_t)npaths + 1, sizeof(int));
    K.bools = calloc((size_t)npaths + 1, sizeof(int));
    K.used = calloc((size_t)npaths + 1, sizeof(int));
    REQUIRE(K.value && K.all && K.bools && K.used);
    K.nvalue = K.nall = K.nbools = 0;
    for (int i = 0; i < npaths; i++) {
        K.all[K.nall++] = i;
        if (is_value(P[i].kind))
            K.value[K.nvalue++] = i;
        if (P[i].kind == OP_BOOL)
            K.bools[K.nbools++] = i;
    }
}

/* Another value path that compares with p (-1: none). */
static int partner(rg_rng *rg, int p)
{
    int cls = cls_of_kind(P[p].kind), got = -1, seen = 0;
    for (int k = 0; k < K.nvalue; k++) {
        const path_t *q = &P[K.value[k]];
        if (cls_of_kind(q->kind) != cls)
            continue;
        if (cls == LC_ENUM && (strcmp(q->focus, P[p].focus) != 0 || q->ncases != P[p].ncases))
            continue;
        if (rg_below(rg, (uint64_t)++seen) == 0)
            got = K.value[k];
    }
    return got;
}

static node *gen_cmp_literals(rg_rng *rg)
{
    node *n = new_node(N_CMP);
    switch (rg_below(rg, 3)) {
    case 0:
        n->cmp = (int)rg_below(rg, 6);
        n->a.l = gen_num(rg, NULL, false);
        n->b.l = gen_num(rg, NULL, false);
        break;
    case 1:
        n->cmp = (int)rg_below(rg, 2);
        n->a.l = gen_str(rg, NULL);
        n->b.l = rg_below(rg, 3) == 0 ? n->a.l : gen_str(rg, NULL);
        break;
    default:
        n->cmp = (int)rg_below(rg, 2);
        n->a.l = bool_lit(rg_below(rg, 2));
        n->b.l = bool_lit(rg_below(rg, 2));
        break;
    }
    return n;
}

static node *gen_test(rg_rng *rg, int p, unsigned r);

static node *gen_primary(rg_rng *rg)
{
    unsigned r = (unsigned)rg_below(rg, 100);
    if (K.nall == 0 || r < 4) {
        if (rg_below(rg, 2) == 0) {
            node *n = new_node(N_CONST);
            n->cval = rg_below(rg, 2);
            return n;
        }
        return gen_cmp_literals(rg);
    }
    if (r < 16) {
        node *n = new_node(N_HAS);
        n->p = K.all[rg_below(rg, (uint64_t)K.nall)];
        K.used[n->p]++;
        return n;
    }
    if (K.nvalue == 0)
        return gen_cmp_literals(rg);
    if (r < 22 && K.nbools > 0) {
        node *n = new_node(N_TRUTH);
        n->p = K.bools[rg_below(rg, (uint64_t)K.nbools)];
        K.used[n->p]++;
        return n;
    }
    return gen_test(rg, K.value[rg_below(rg, (uint64_t)K.nvalue)], r);
}

/* A comparison of value path p (r in [22, 100): below 40 an 'in' list). */
static node *gen_test(rg_rng *rg, int p, unsigned r)
{
    K.used[p]++;
    int cls = cls_of_kind(P[p].kind);
    if (r < 40) {
        node *n = new_node(N_IN);
        n->p = p;
        n->nitems = (int)rg_below(rg, MAX_ITEMS + 1);
        for (int i = 0; i < n->nitems; i++)
            n->items[i] = gen_lit(rg, &P[p], true);
        return n;
    }
    node *n = new_node(N_CMP);
    n->cmp = cls == LC_NUM ? (int)rg_below(rg, 6) : (int)rg_below(rg, 2);
    n->a.path = true;
    n->a.p = p;
    int q = rg_below(rg, 100) < 22 ? partner(rg, p) : -1;
    if (q >= 0) {
        n->b.path = true;
        n->b.p = q;
        K.used[q]++;
    } else {
        n->b.l = gen_lit(rg, &P[p], true);
        if (cls == LC_ENUM && !word_ok(&P[p], &P[p].cases[n->b.l.e])) {
            /* the case's name reads as something else: an 'in' list */
            n->op = N_IN;
            n->p = p;
            n->nitems = 1;
            n->items[0] = n->b.l;
            return n;
        }
    }
    if (rg_below(rg, 3) == 0) { /* the literal (or the other path) first */
        opd t = n->a;
        n->a = n->b;
        n->b = t;
        static const int mirrored[] = {C_EQ, C_NE, C_GT, C_GE, C_LT, C_LE};
        n->cmp = mirrored[n->cmp]; /* printed mirrored: the same meaning */
    }
    return n;
}

static node *gen_expr(rg_rng *rg, int depth)
{
    unsigned r = (unsigned)rg_below(rg, 100);
    node *n;
    if (depth >= 4 || r < 35) {
        n = gen_primary(rg);
    } else if (r < 85) {
        n = new_node(r < 62 ? N_AND : N_OR);
        n->nkids = 2 + (int)rg_below(rg, MAX_KIDS - 1);
        for (int i = 0; i < n->nkids; i++)
            n->kids[i] = gen_expr(rg, depth + 1);
    } else {
        n = new_node(N_NOT);
        n->nkids = 1;
        n->kids[0] = gen_expr(rg, depth + 1);
    }
    n->paren = rg_below(rg, 10) == 0;
    return n;
}

/* What both properties start from: the paths (and values read from the
 * messages), their catalog, and the node pool; and its release. */
static void build_all(void)
{
    build_paths();
    build_catalog();
    pool = calloc(MAX_NODES, sizeof *pool);
    REQUIRE(pool != NULL);
}

static void free_all(void)
{
    free(pool);
    free(P);
    free(K.value);
    free(K.all);
    free(K.bools);
    free(K.used);
}

/* ================================================= the direct evaluation ===== */

typedef struct {
    int cls;
    long double num;
    const char *s;
    size_t n;
    int e;
    bool b;
} val;

static bool opd_value(const opd *o, const void *root, val *out)
{
    memset(out, 0, sizeof *out);
    if (!o->path) {
        out->cls = o->l.cls;
        switch (o->l.cls) {
        case LC_NUM: out->num = num_of_lit(&o->l); break;
        case LC_STR: out->s = o->l.s, out->n = o->l.n; break;
        case LC_ENUM: out->e = o->l.e; break;
        default: out->b = o->l.b; break;
        }
        return true;
    }
    const path_t *p = &P[o->p];
    op_value v;
    if (!read_path(p, root, &v))
        return false;
    out->cls = cls_of_kind(p->kind);
    switch (p->kind) {
    case OP_BOOL: out->b = v.b; break;
    case OP_I32:
    case OP_I64: out->num = (long double)v.i; break;
    case OP_F64: out->num = (long double)v.f; break;
    case OP_STRING: out->s = v.s.p, out->n = v.s.n; break;
    default: out->e = v.e; break;
    }
    return true;
}

static bool equal(const val *a, const val *b)
{
    switch (a->cls) {
    case LC_NUM: return a->num == b->num;
    case LC_STR: return a->n == b->n && (a->n == 0 || memcmp(a->s, b->s, a->n) == 0);
    case LC_ENUM: return a->e == b->e;
    default: return a->b == b->b;
    }
}

static bool ev(const node *n, const void *root)
{
    val a, b;
    switch (n->op) {
    case N_AND:
        for (int i = 0; i < n->nkids; i++)
            if (!ev(n->kids[i], root))
                return false;
        return true;
    case N_OR:
        for (int i = 0; i < n->nkids; i++)
            if (ev(n->kids[i], root))
                return true;
        return false;
    case N_NOT: return !ev(n->kids[0], root);
    case N_CONST: return n->cval;
    case N_HAS: {
        op_value v;
        return read_path(&P[n->p], root, &v);
    }
    case N_TRUTH: {
        op_value v;
        return read_path(&P[n->p], root, &v) && v.b;
    }
    case N_IN: {
        opd o = {true, n->p, {0}};
        if (!opd_value(&o, root, &a))
            return false;
        for (int i = 0; i < n->nitems; i++) {
            opd li = {false, 0, n->items[i]};
            opd_value(&li, root, &b);
            if (equal(&a, &b))
                return true;
        }
        return false;
    }
    default: /* N_CMP: a missing side makes every comparison false */
        if (!opd_value(&n->a, root, &a) || !opd_value(&n->b, root, &b))
            return false;
        switch (n->cmp) {
        case C_EQ: return equal(&a, &b);
        case C_NE: return !equal(&a, &b);
        case C_LT: return a.num < b.num;
        case C_LE: return a.num <= b.num;
        case C_GT: return a.num > b.num;
        default: return a.num >= b.num;
        }
    }
}

typedef struct {
    bool keep;
    node *e;
    int line;
} rule;

#define MAX_RULES 5

static int direct_decide(const rule *rs, int nrules, const void *root)
{
    for (int i = 0; i < nrules; i++)
        if (ev(rs[i].e, root))
            return i;
    return -1;
}

/* ================================================= printing ===== */

enum { K_NONE, K_WORD, K_NUM, K_STR, K_OPEN, K_CLOSE, K_OP, K_HASPAREN };

typedef struct {
    bb out; /* the text so far */
    int open;
    int prev;
    bool no_nl;
    rg_rng *rg;
} printer;

static void puts_(printer *w, const char *s) { bb_put(&w->out, s, strlen(s)); }

/* What goes between the previous token and one of kind next. */
static void sep(printer *w, int next)
{
    if (w->prev == K_NONE)
        return;
    bool need = (w->prev == K_WORD || w->prev == K_NUM) && (next == K_WORD || next == K_NUM);
    unsigned r = (unsigned)rg_below(w->rg, 100);
    if (next == K_HASPAREN) { /* has and its '(': spaces or tabs only */
        if (r < 20)
            puts_(w, r < 10 ? " " : "\t");
        return;
    }
    if (w->open > 0 && !w->no_nl && r < 7) {
        static const char *breaks[] = {"\n", "\r\n", " # a comment ) ] \" ( [\n", "\n\n  ",
                                       "\t#\n\t"};
        puts_(w, breaks[rg_below(w->rg, sizeof breaks / sizeof *breaks)]);
        return;
    }
    if (need || r < 45) {
        static const char *spaces[] = {" ", " ", " ", "  ", "\t", " \t "};
        puts_(w, spaces[rg_below(w->rg, sizeof spaces / sizeof *spaces)]);
    }
}

static void tok(printer *w, int kind, const char *s)
{
    sep(w, kind);
    puts_(w, s);
    if (strcmp(s, "(") == 0 || strcmp(s, "[") == 0)
        w->open++;
    else if (strcmp(s, ")") == 0 || strcmp(s, "]") == 0)
        w->open--;
    w->prev = kind == K_HASPAREN ? K_OPEN : kind;
}

/* A string literal, JSON-escaped: minimally, every character as \u, or a
 * mix (and '/' sometimes as \/). */
static void print_str(printer *w, const char *s, size_t n)
{
    bb t = {0};
    bb_put(&t, "\"", 1);
    int mode = (int)rg_below(w->rg, 4);
    char b[16];
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t l = utf8((const unsigned char *)s + i, n - i, &cp);
        REQUIRE(l > 0);
        bool esc = mode == 1 || (mode == 2 && rg_below(w->rg, 2));
        const char *x = NULL;
        switch (cp) {
        case '"': x = "\\\""; break;
        case '\\': x = "\\\\"; break;
        case '\n': x = "\\n"; break;
        case '\t': x = "\\t"; break;
        case '\r': x = "\\r"; break;
        case '\b': x = "\\b"; break;
        case '\f': x = "\\f"; break;
        case '/': x = mode == 3 ? "\\/" : NULL; break;
        default: break;
        }
        if (cp < 0x20 || esc || (x != NULL && mode == 3)) {
            if (x != NULL && !esc) {
                bb_put(&t, x, strlen(x));
            } else if (cp >= 0x10000) {
                unsigned v = cp - 0x10000;
                snprintf(b, sizeof b, "\\u%04X\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
                bb_put(&t, b, strlen(b));
            } else {
                snprintf(b, sizeof b, rg_below(w->rg, 2) ? "\\u%04x" : "\\u%04X", cp);
                bb_put(&t, b, strlen(b));
            }
        } else if (x != NULL && (cp == '"' || cp == '\\')) {
            bb_put(&t, x, strlen(x));
        } else {
            bb_put(&t, s + i, l);
        }
        i += l;
    }
    bb_put(&t, "\"", 1);
    tok(w, K_STR, (const char *)t.p);
    free(t.p);
}

static void print_lit(printer *w, const lit *l)
{
    switch (l->cls) {
    case LC_NUM: tok(w, K_NUM, l->num); break;
    case LC_STR: print_str(w, l->s, l->n); break;
    case LC_ENUM:
        /* a case by its bare name, or one time in four as the message
         * spells it (a JSON string, which print_str escapes at random) */
        if (rg_below(w->rg, 4) == 0) {
            print_str(w, l->cases[l->e].p, l->cases[l->e].n);
        } else {
            bb t = {0}; /* the whole name, however long */
            bb_put(&t, l->cases[l->e].p, l->cases[l->e].n);
            tok(w, K_WORD, (const char *)t.p);
            free(t.p);
        }
        break;
    default: tok(w, K_WORD, l->b ? "true" : "false"); break;
    }
}

static void print_opd(printer *w, const opd *o)
{
    if (o->path)
        tok(w, K_WORD, P[o->p].text);
    else
        print_lit(w, &o->l);
}

/* in: 0 anywhere an OR may stand, 1 inside an AND, 2 after '!'. */
static void print_node(printer *w, const node *n, int in)
{
    bool compound = n->op == N_AND || n->op == N_OR;
    bool paren = n->paren || (compound && (in == 2 || (in == 1 && n->op == N_OR)));
    if (paren)
        tok(w, K_OPEN, "(");
    switch (n->op) {
    case N_AND:
    case N_OR:
        for (int i = 0; i < n->nkids; i++) {
            if (i > 0)
                tok(w, K_OP, n->op == N_AND ? "&&" : "||");
            print_node(w, n->kids[i], n->op == N_AND ? 1 : 0);
        }
        break;
    case N_NOT:
        tok(w, K_OP, "!");
        print_node(w, n->kids[0], 2);
        break;
    case N_CONST: tok(w, K_WORD, n->cval ? "true" : "false"); break;
    case N_HAS:
        tok(w, K_WORD, "has");
        tok(w, K_HASPAREN, "(");
        tok(w, K_WORD, P[n->p].text);
        tok(w, K_CLOSE, ")");
        break;
    case N_TRUTH: tok(w, K_WORD, P[n->p].text); break;
    case N_IN:
        tok(w, K_WORD, P[n->p].text);
        tok(w, K_WORD, "in");
        tok(w, K_OPEN, "[");
        for (int i = 0; i < n->nitems; i++) {
            if (i > 0)
                tok(w, K_OP, ",");
            print_lit(w, &n->items[i]);
        }
        tok(w, K_CLOSE, "]");
        break;
    default:
        print_opd(w, &n->a);
        tok(w, K_OP, CMP_TEXT[n->cmp]);
        print_opd(w, &n->b);
        break;
    }
    if (paren)
        tok(w, K_CLOSE, ")");
}

/* Line and column (characters) of byte offset at, 1-based. */
static void line_col(const char *t, size_t at, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < at; i++) {
        if (t[i] == '\n')
            l++, c = 1;
        else if (((unsigned char)t[i] & 0xC0) != 0x80)
            c++;
    }
    *line = l;
    *col = c;
}

static int lines_before(const char *t, size_t at)
{
    int l, c;
    line_col(t, at, &l, &c);
    return l;
}

static void between_rules(printer *w)
{
    static const char *fill[] = {"", "", "", "\n", "# a comment line: keep x == \"\n",
                                 "   \t\n", "\r\n", "  # indented comment\n"};
    puts_(w, fill[rg_below(w->rg, sizeof fill / sizeof *fill)]);
}

static void end_rule(printer *w, bool last)
{
    static const char *ends[] = {"\n", "\n", "\r\n", "  \n", " # trailing ( [ comment\n"};
    if (last && rg_below(w->rg, 3) == 0)
        return; /* no newline at the end of the text */
    puts_(w, ends[rg_below(w->rg, sizeof ends / sizeof *ends)]);
}

/* ================================================= the property ===== */

enum { LV_OFF, LV_JSON, LV_SCHEMA, LV_VIEWS, LV_MODEL, NLEVELS };
static const char *LEVEL[] = {"bytes, verify off", "bytes, verify json", "bytes, verify schema",
                              "bytes, verify schema with the views seeded", "model"};

/* A raw optic onto a list or a map. validate_views says has false for such
 * a member when it is absent, while the raw optic (scanner and getter
 * alike) reads it as the empty "[]" or "{}" (model.h): that false is not a
 * miss, so it is not seeded. */
static bool container(const op_optic *o)
{
    return strncmp(o->focus, "list<", 5) == 0 || strncmp(o->focus, "map<", 4) == 0;
}

/* Whether a level drops m unread: the verify levels by their validator's
 * verdict (judged once a message, judge_validity), the model when the
 * decoder rejects it. */
static bool level_drops(const msg *m, int level)
{
    return (level == LV_JSON && !m->js_ok) ||
           ((level == LV_SCHEMA || level == LV_VIEWS) && !m->schema_ok) ||
           (level == LV_MODEL && m->root == NULL);
}

/* The raw optics' views of m, seeded into rd as validate_views gave them. */
static void seed_views(ru_subject *rd, const msg *m)
{
    for (int i = 0; i < S->noptics && i < RU_MAX_OPTICS; i++) {
        if (m->has[i])
            ru_subject_seed(rd, i, true, &m->views[i]);
        else if (m->views[i].bytes.p != &UNSET && !container(&S->optics[i]))
            ru_subject_seed(rd, i, false, &m->views[i]);
    }
}

/* The engine's verdict on m at a level that reads it. */
static int engine(const ru_rules *r, const msg *m, int level, bool decide)
{
    ru_subject *rd = &C->rd;
    if (level == LV_MODEL) {
        ru_subject_model(rd, m->root);
    } else {
        ru_subject_bytes(rd, m->p, m->n);
        if (level == LV_VIEWS) /* as the demo hands the kind's base to the rules */
            seed_views(rd, m);
    }
    return decide ? ru_decide(r, rd) : ru_judge(r, rd);
}

typedef struct {
    rule rules[MAX_RULES];
    int nrules;
    int lead; /* the path most rules test first, or -1 */
    printer w;
} ruleset;

static void report(const ruleset *rs, int set, const msg *m, int index, bool valid,
                   const char *what)
{
    fprintf(stderr, "\n==== rule set #%d, %s message #%d (%s, %zu bytes, size %d, layout %d): %s\n",
            set, valid ? "generated" : "invalid", index, m->what, m->n, m->size, m->layout, what);
    fprintf(stderr, "---- rules:\n%s\n---- per rule, directly:", (const char *)rs->w.out.p);
    if (m->root != NULL)
        for (int i = 0; i < rs->nrules; i++)
            fprintf(stderr, " [%d line %d %s: %s]", i, rs->rules[i].line,
                    rs->rules[i].keep ? "keep" : "drop", ev(rs->rules[i].e, m->root) ? "holds" : "fails");
    fprintf(stderr, "\n---- message (first 4000 bytes):\n%.*s\n", (int)(m->n < 4000 ? m->n : 4000),
            (const char *)m->p);
}

static void check_set(const ruleset *rs, const ru_rules *r, int set, const msg *m, int index,
                      bool valid, long *verdicts)
{
    int want_rule = -1;
    bool want = false;
    if (m->root != NULL) {
        want_rule = direct_decide(rs->rules, rs->nrules, m->root);
        want = want_rule >= 0 && rs->rules[want_rule].keep;
        verdicts[want]++;
    }
    for (int level = 0; level < NLEVELS; level++) {
        if (level_drops(m, level))
            continue;
        int got = engine(r, m, level, false);
        char what[256];
        if (m->root == NULL)
            continue; /* judged for memory safety alone: nothing to compare */
        if ((got != 0) != want) {
            snprintf(what, sizeof what, "%s says %s, the direct evaluation %s (rule %d)",
                     LEVEL[level], got ? "keep" : "drop", want ? "keep" : "drop", want_rule);
            report(rs, set, m, index, valid, what);
            ck_abort_msg("rule set #%d, message #%d: %s", set, index, what);
        }
    }
    if (m->root != NULL) {
        int d = engine(r, m, LV_MODEL, true);
        if (d != want_rule) {
            char what[256];
            snprintf(what, sizeof what, "ru_decide on the model says rule %d, the direct evaluation rule %d",
                     d, want_rule);
            report(rs, set, m, index, valid, what);
            ck_abort_msg("rule set #%d, message #%d: %s", set, index, what);
        }
    }
}

/* A third of the rule sets test one enum, tag or bool path first in most
 * rules (`kind == A && ...`, as rules by kind are written), the form the
 * engine indexes (rules.c: a rule is tried only for the cases its leading
 * test admits); -1 for the others, or when the schema has no such path. */
static int lead_path(rg_rng *rg)
{
    int got = -1, seen = 0;
    if (rg_below(rg, 3) != 0)
        return -1;
    for (int k = 0; k < K.nvalue; k++) {
        int c = cls_of_kind(P[K.value[k]].kind);
        if ((c == LC_ENUM || c == LC_BOOL) && rg_below(rg, (uint64_t)++seen) == 0)
            got = K.value[k];
    }
    return got;
}

/* A rule's expression led by a test of path lead: the test alone, or the
 * first of 2-3 conjuncts. */
static node *gen_led(rg_rng *rg, int lead)
{
    node *t = gen_test(rg, lead, 22 + (unsigned)rg_below(rg, 78));
    if (rg_below(rg, 5) == 0)
        return t;
    node *n = new_node(N_AND);
    n->nkids = 2 + (int)rg_below(rg, MAX_KIDS - 1);
    n->kids[0] = t;
    for (int i = 1; i < n->nkids; i++)
        n->kids[i] = gen_expr(rg, 2);
    n->paren = rg_below(rg, 10) == 0;
    return n;
}

static void gen_ruleset(ruleset *rs, rg_rng *rg)
{
    npool = 0;
    free(rs->w.out.p);
    memset(&rs->w, 0, sizeof rs->w);
    rs->w.rg = rg;
    bb_put(&rs->w.out, "", 0);
    rs->nrules = 1 + (int)rg_below(rg, 4);
    rs->lead = lead_path(rg);
    between_rules(&rs->w);
    for (int i = 0; i < rs->nrules; i++) {
        rule *ru = &rs->rules[i];
        ru->keep = rg_below(rg, 3) != 0;
        ru->e = rs->lead >= 0 && rg_below(rg, 5) != 0 ? gen_led(rg, rs->lead) : gen_expr(rg, 1);
        rs->w.prev = K_NONE;
        rs->w.open = 0;
        if (rg_below(rg, 4) == 0)
            puts_(&rs->w, rg_below(rg, 2) ? "  " : "\t");
        ru->line = lines_before((const char *)rs->w.out.p, rs->w.out.n);
        tok(&rs->w, K_WORD, ru->keep ? "keep" : "drop");
        print_node(&rs->w, ru->e, 0);
        REQUIRE(rs->w.open == 0);
        end_rule(&rs->w, i == rs->nrules - 1);
        if (i < rs->nrules - 1) {
            if (rs->w.out.p[rs->w.out.n - 1] != '\n')
                puts_(&rs->w, "\n");
            between_rules(&rs->w);
        }
    }
}

#ifdef RM_COMPILED
/* The first tr_nrulesets rule sets at the default seed, written as C. */
extern const ru_compiled *const tr_rulesets[];
extern const int tr_nrulesets;

/* The subject's optics read, as a string of 0 and 1. */
static void read_mask(const ru_subject *rd, char *out)
{
    for (int i = 0; i < S->noptics && i < RU_MAX_OPTICS; i++)
        out[i] = ru_subject_read(rd, i) ? '1' : '0';
    out[S->noptics < RU_MAX_OPTICS ? S->noptics : RU_MAX_OPTICS] = '\0';
}

/* Set c (the C of rules r) against the interpreter on m at a level. */
static void compiled_same(const ruleset *rs, const ru_rules *r, const ru_compiled *c, int set,
                          const msg *m, int index, bool valid, int level)
{
    for (int decide = 0; decide < 2; decide++) {
        int want = engine(r, m, level, decide);
        ru_subject *a = &C->rd, *b = &C->rd2;
        if (level == LV_MODEL)
            ru_subject_model(b, m->root);
        else
            ru_subject_bytes(b, m->p, m->n);
        if (level == LV_VIEWS)
            seed_views(b, m);
        int got = decide ? c->decide(r, b) : c->judge(r, b);
        char ma[RU_MAX_OPTICS + 1], mb[RU_MAX_OPTICS + 1];
        read_mask(a, ma);
        read_mask(b, mb);
        if (got != want || a->reads != b->reads || strcmp(ma, mb) != 0) {
            char what[1024];
            snprintf(what, sizeof what,
                     "%s, %s: the interpreter says %d having read %llu optics (%s), the C %d "
                     "having read %llu (%s)",
                     LEVEL[level], decide ? "decide" : "judge", want,
                     (unsigned long long)a->reads, ma, got, (unsigned long long)b->reads, mb);
            report(rs, set, m, index, valid, what);
            ck_abort_msg("rule set #%d, message #%d: %s", set, index, what);
        }
    }
}

START_TEST(rules_as_c_decide_as_interpreted)
{
    build_all();
    char err[1024];
    ruleset rs;
    memset(&rs, 0, sizeof rs);
    long judged = 0;
    for (int set = 0; set < tr_nrulesets; set++) {
        rg_rng rg;
        rg_seed(&rg, 0x69737375653132ul, (uint64_t)set); /* the default seed, as written */
        gen_ruleset(&rs, &rg);
        ru_rules *r = ru_parse((const char *)rs.w.out.p, rs.w.out.n, NAME, S, err, sizeof err);
        REQUIREF(r != NULL, "rule set #%d does not load: %s", set, err);
        REQUIREF(ru_compiled_fits(tr_rulesets[set], r),
                 "rule set #%d: its C was written from other rules", set);
        for (int k = 0; k < C->nvalid + C->ninvalid; k++) {
            bool valid = k < C->nvalid;
            const msg *m = valid ? &C->valid[k] : &C->invalid[k - C->nvalid];
            static const int levels[] = {LV_OFF, LV_VIEWS, LV_MODEL};
            for (int l = 0; l < 3; l++)
                if (!level_drops(m, levels[l]) && (levels[l] != LV_VIEWS || m->schema_ok)) {
                    compiled_same(&rs, r, tr_rulesets[set], set, m, k, valid, levels[l]);
                    judged++;
                }
        }
        ru_free(r);
    }
    fprintf(stderr, "test_rules_model_c: %d rule sets as C, %ld judgements each way\n",
            tr_nrulesets, judged);
    REQUIRE(judged > 0);
    free(rs.w.out.p);
    free_all();
}
END_TEST
#endif

/* The first n rule sets at the default seed, each as dir/set_I.rules (for
 * the build to write as C: RM_COMPILED). */
static int write_rules(const char *dir, int n)
{
    setup();
    build_all();
    ruleset rs;
    memset(&rs, 0, sizeof rs);
    for (int set = 0; set < n; set++) {
        rg_rng rg;
        rg_seed(&rg, 0x69737375653132ul, (uint64_t)set);
        gen_ruleset(&rs, &rg);
        char path[4096];
        snprintf(path, sizeof path, "%s/set_%d.rules", dir, set);
        FILE *f = fopen(path, "wb");
        if (f == NULL || fwrite(rs.w.out.p, 1, rs.w.out.n, f) != rs.w.out.n || fclose(f) != 0) {
            perror(path);
            return 1;
        }
    }
    free(rs.w.out.p);
    free_all();
    fx_teardown();
    return 0;
}

START_TEST(random_rules_agree_with_a_direct_evaluation)
{
    build_all();
    unsigned long seed = env_or("RULES_MODEL_SEED", 0x69737375653132ul);
    int nsets = (int)env_or("RULES_MODEL_SETS", 300);
    int nmsgs = (int)env_or("RULES_MODEL_MSGS", 100);
    long verdicts[2] = {0, 0};
    long judged = 0;
    int led = 0;
    ruleset rs;
    memset(&rs, 0, sizeof rs);
    char err[1024];
    for (int set = 0; set < nsets; set++) {
        rg_rng rg;
        rg_seed(&rg, seed, (uint64_t)set);
        gen_ruleset(&rs, &rg);
        led += rs.lead >= 0;
        if (getenv("RULES_MODEL_PRINT") != NULL)
            fprintf(stderr, "==== rule set #%d\n%s\n", set, (const char *)rs.w.out.p);
        ru_rules *r = ru_parse((const char *)rs.w.out.p, rs.w.out.n, NAME, S, err, sizeof err);
        if (r == NULL)
            fprintf(stderr, "\n==== rule set #%d does not load: %s\n---- rules:\n%s\n", set, err,
                    (const char *)rs.w.out.p);
        REQUIREF(r != NULL, "rule set #%d does not load: %s", set, err);
        REQUIREF(ru_count(r) == rs.nrules, "rule set #%d: %d rules loaded, %d written", set,
                 ru_count(r), rs.nrules);
        for (int i = 0; i < rs.nrules; i++) {
            REQUIREF(ru_rule_keeps(r, i) == rs.rules[i].keep, "rule set #%d rule %d: keep differs", set, i);
            REQUIREF(ru_rule_line(r, i) == rs.rules[i].line, "rule set #%d rule %d: line %d, written at %d\n%s",
                     set, i, ru_rule_line(r, i), rs.rules[i].line, (const char *)rs.w.out.p);
        }
        for (int j = 0; j < nmsgs; j++) {
            int k = (int)rg_below(&rg, (uint64_t)C->nvalid);
            check_set(&rs, r, set, &C->valid[k], k, true, verdicts);
            judged++;
        }
        for (int j = 0; j < 4; j++) {
            int k = (int)rg_below(&rg, (uint64_t)C->ninvalid);
            check_set(&rs, r, set, &C->invalid[k], k, false, verdicts);
        }
        ru_free(r);
    }
    int unused = 0, value_paths = 0;
    for (int i = 0; i < npaths; i++) {
        value_paths += is_value(P[i].kind);
        if (K.used[i] == 0) {
            unused++;
            fprintf(stderr, "note: path %s was used by no rule\n", P[i].text);
        }
    }
    fprintf(stderr,
            "test_rules_model: %d rule sets (%d led by one path), %ld generated messages judged "
            "at %d levels each; %d paths (%d values, %d never used), %ld kept, %ld dropped\n",
            nsets, led, judged, NLEVELS, npaths, value_paths, unused, verdicts[1], verdicts[0]);
    if (nsets >= 100) {
        REQUIREF(unused == 0, "%d paths were used by no rule", unused);
        REQUIREF(verdicts[0] > 0 && verdicts[1] > 0, "every verdict was the same");
    }
    free(rs.w.out.p);
    free_all();
}
END_TEST

/* ================================================= rules that must not load ===== */

/* A path for which ok holds, picked at random; -1 when none. */
static int pick_path(rg_rng *rg, bool (*ok)(const path_t *))
{
    int got = -1, seen = 0;
    for (int i = 0; i < npaths; i++)
        if (ok(&P[i]) && rg_below(rg, (uint64_t)++seen) == 0)
            got = i;
    return got;
}

static bool is_num(const path_t *p) { return cls_of_kind(p->kind) == LC_NUM; }
static bool is_str(const path_t *p) { return p->kind == OP_STRING; }
static bool is_bool(const path_t *p) { return p->kind == OP_BOOL; }
static bool is_enum(const path_t *p) { return cls_of_kind(p->kind) == LC_ENUM; }
static bool is_nonnum_value(const path_t *p) { return is_value(p->kind) && !is_num(p); }
static bool is_nonbool_value(const path_t *p) { return is_value(p->kind) && p->kind != OP_BOOL; }
static bool is_record(const path_t *p) { return p->kind == OP_RECORD; }
static bool is_raw(const path_t *p) { return p->kind == OP_RAW; }
static bool is_scalar(const path_t *p) { return is_value(p->kind); }

/* A bad primary: its text, or false when the schema has nothing it needs. */

/* Whether word is one of path x's cases (an enum's or a union's tag's). */
static bool names_case(const path_t *x, const char *word)
{
    size_t n = strlen(word);
    for (int c = 0; x->cases != NULL && c < x->ncases; c++)
        if (x->cases[c].n == n && memcmp(x->cases[c].p, word, n) == 0)
            return true;
    return false;
}

static bool gen_bad(rg_rng *rg, char *out, size_t cap, int kind)
{
    int p;
    char b[300];
    switch (kind) {
    case 0: /* ordering on a value that is no number */
        if ((p = pick_path(rg, is_nonnum_value)) < 0)
            return false;
        if (P[p].kind == OP_STRING)
            snprintf(b, sizeof b, "\"a\"");
        else if (P[p].kind == OP_BOOL)
            snprintf(b, sizeof b, "true");
        else
            snprintf(b, sizeof b, "%.*s", (int)P[p].cases[0].n, P[p].cases[0].p);
        if (rg_below(rg, 2))
            snprintf(out, cap, "%s %s %s", P[p].text, CMP_TEXT[2 + rg_below(rg, 4)], b);
        else
            snprintf(out, cap, "%s %s %s", b, CMP_TEXT[2 + rg_below(rg, 4)], P[p].text);
        return true;
    case 1: /* a name that is not a case */
        if ((p = pick_path(rg, is_enum)) < 0)
            return false;
        snprintf(out, cap, "%s %s Zz_not_a_case", P[p].text, CMP_TEXT[rg_below(rg, 2)]);
        return true;
    case 2: { /* a literal of another type */
        if ((p = pick_path(rg, is_scalar)) < 0)
            return false;
        const char *wrong;
        switch (cls_of_kind(P[p].kind)) {
        case LC_NUM: wrong = rg_below(rg, 2) ? "\"1\"" : "true"; break;
        case LC_STR: wrong = rg_below(rg, 2) ? "1" : "false"; break;
        case LC_BOOL: wrong = rg_below(rg, 2) ? "1" : "\"true\""; break;
        default: /* a string that names no case (one that does is the case) */
            wrong = rg_below(rg, 2) ? "\"Zz_not_a_case\"" : "0";
            break;
        }
        snprintf(out, cap, "%s %s %s", P[p].text, CMP_TEXT[rg_below(rg, 2)], wrong);
        return true;
    }
    case 3: { /* two paths of different types */
        if ((p = pick_path(rg, is_scalar)) < 0)
            return false;
        int q = -1, seen = 0;
        for (int i = 0; i < npaths; i++) {
            /* (a path that is one bare word naming a case of the other's
             * enum is that case: `a == b` with b a case of a's type is a
             * rule that loads) */
            if (!is_scalar(&P[i]) || names_case(&P[p], P[i].text) || names_case(&P[i], P[p].text))
                continue;
            int a = cls_of_kind(P[p].kind), c = cls_of_kind(P[i].kind);
            bool differ = a != c || (a == LC_ENUM && (strcmp(P[p].focus, P[i].focus) != 0 ||
                                                      P[p].ncases != P[i].ncases));
            if (differ && rg_below(rg, (uint64_t)++seen) == 0)
                q = i;
        }
        if (q < 0)
            return false;
        snprintf(out, cap, "%s %s %s", P[p].text, CMP_TEXT[rg_below(rg, 2)], P[q].text);
        return true;
    }
    case 4: /* a record or a raw value used as a value */
        if ((p = pick_path(rg, rg_below(rg, 2) ? is_record : is_raw)) < 0 &&
            (p = pick_path(rg, is_record)) < 0 && (p = pick_path(rg, is_raw)) < 0)
            return false;
        switch (rg_below(rg, 3)) {
        case 0: snprintf(out, cap, "%s == 1", P[p].text); break;
        case 1: snprintf(out, cap, "%s", P[p].text); break;
        default: snprintf(out, cap, "%s in [1]", P[p].text); break;
        }
        return true;
    case 5: /* a field the record lacks, or a field of a non-record */
        if ((p = pick_path(rg, rg_below(rg, 2) ? is_record : is_scalar)) < 0)
            return false;
        snprintf(out, cap, "%s.zz_no_field == 1", P[p].text);
        return true;
    case 6: /* an optic the schema lacks */
        switch (rg_below(rg, 3)) {
        case 0: snprintf(out, cap, "zz_no_optic == 1"); break;
        case 1: snprintf(out, cap, "has(zz_no_optic)"); break;
        default: snprintf(out, cap, "zz_no_optic.field != \"x\""); break;
        }
        return true;
    case 7: /* a value alone where a condition is needed */
        if (rg_below(rg, 3) == 0 || (p = pick_path(rg, is_nonbool_value)) < 0)
            snprintf(out, cap, "%s", rg_below(rg, 2) ? "5" : "\"s\"");
        else
            snprintf(out, cap, "%s", P[p].text);
        return true;
    case 8: /* an item of another type in a list */
        if ((p = pick_path(rg, is_scalar)) < 0)
            return false;
        switch (cls_of_kind(P[p].kind)) {
        case LC_NUM: snprintf(out, cap, "%s in [1, \"2\"]", P[p].text); break;
        case LC_STR: snprintf(out, cap, "%s in [\"a\", 2]", P[p].text); break;
        case LC_BOOL: snprintf(out, cap, "%s in [true, 0]", P[p].text); break;
        default:
            snprintf(out, cap, "%s in [%.*s, %s]", P[p].text, (int)P[p].cases[0].n,
                     P[p].cases[0].p, rg_below(rg, 2) ? "Zz_not_a_case" : "\"Zz_not_a_case\"");
            break;
        }
        return true;
    case 9: { /* an optic no message reaches */
        for (int i = 0; i < S->noptics; i++)
            if (!op_from_message(S, i)) {
                snprintf(out, cap, "has(%s)", S->optics[i].name);
                return true;
            }
        return false;
    }
    case 10: { /* malformed literals and operators */
        static const char *texts[] = {"01 == 1", "1. == 1", "1e == 1", "--1 == 1", "-x == 1",
                                      "1 == 0x10", "\"\\q\" == \"a\"", "\"\\ud800\" == \"a\"",
                                      "1 = 1", "has(1)", "5 in [5]", "\"a\" < \"b\"",
                                      "true < false", "1 == \"1\"", "1 == true", "@"};
        snprintf(out, cap, "%s", texts[rg_below(rg, sizeof texts / sizeof *texts)]);
        return true;
    }
    default: /* a path with a single '=' or 'in' without a list */
        if ((p = pick_path(rg, is_num)) < 0 && (p = pick_path(rg, is_str)) < 0 &&
            (p = pick_path(rg, is_bool)) < 0)
            return false;
        if (rg_below(rg, 2))
            snprintf(out, cap, "%s = %s", P[p].text, is_num(&P[p]) ? "1" : is_str(&P[p]) ? "\"a\"" : "true");
        else
            snprintf(out, cap, "%s in %s", P[p].text, is_num(&P[p]) ? "1" : is_str(&P[p]) ? "\"a\"" : "true");
        return true;
    }
}

/* A bare word that names both a case of the enum on the other side and an
 * optic of another type (or true or false) is that case: for every enum
 * path and every such case of it, `P == CASE` and `CASE != P` load, and
 * the optic of that name is not among the optics the rules read (unless
 * the path reads it itself). Schemas with no such names check nothing. */
START_TEST(case_words_that_name_optics_are_cases)
{
    build_all();
    char err[1024], expr[600];
    int tried = 0;
    for (int p = 0; p < npaths; p++) {
        if (P[p].kind != OP_ENUM && P[p].kind != OP_TAG)
            continue;
        for (int c = 0; c < P[p].ncases; c++) {
            const js_str *w = &P[p].cases[c];
            int o = op_find(S, w->p, w->n);
            bool literal = (w->n == 4 && memcmp(w->p, "true", 4) == 0) ||
                           (w->n == 5 && memcmp(w->p, "false", 5) == 0);
            if ((o < 0 && !literal) || (o >= 0 && !word_ok(&P[p], w)))
                continue;
            for (int form = 0; form < 2; form++) {
                if (form)
                    snprintf(expr, sizeof expr, "%.*s != %s", (int)w->n, w->p, P[p].text);
                else
                    snprintf(expr, sizeof expr, "%s == %.*s", P[p].text, (int)w->n, w->p);
                ru_rules *r = ru_where(expr, "--where", S, err, sizeof err);
                REQUIREF(r != NULL, "%s: %s", expr, err);
                if (o >= 0 && o != P[p].optic && o < 63 &&
                    S->optics[P[p].optic].base != o)
                    REQUIREF(!(ru_optics_used(r) >> o & 1), "%s: optic %s counted as read",
                             expr, S->optics[o].name);
                ru_free(r);
                tried++;
            }
        }
    }
    printf("test_rules_model: %d comparisons with case words that name optics or literals\n",
           tried);
}
END_TEST

START_TEST(type_incorrect_rules_fail_to_load)
{
    build_all();
    unsigned long seed = env_or("RULES_MODEL_SEED", 0x69737375653132ul) ^ 0xbad;
    int nsets = (int)env_or("RULES_MODEL_SETS", 300);
    int kinds_seen[12] = {0};
    char err[2048];
    for (int set = 0; set < nsets; set++) {
        rg_rng rg;
        rg_seed(&rg, seed, (uint64_t)set);
        npool = 0;
        char bad[1200];
        int kind;
        do
            kind = (int)rg_below(&rg, 12);
        while (!gen_bad(&rg, bad, sizeof bad, kind));
        kinds_seen[kind]++;
        printer w = {0};
        w.rg = &rg;
        bb_put(&w.out, "", 0);
        int nrules = 1 + (int)rg_below(&rg, 3), at = (int)rg_below(&rg, (uint64_t)nrules);
        size_t bad_at = 0, bad_end = 0;
        for (int i = 0; i < nrules; i++) {
            between_rules(&w);
            w.prev = K_NONE;
            w.open = 0;
            w.no_nl = false;
            tok(&w, K_WORD, rg_below(&rg, 2) ? "keep" : "drop");
            if (i != at) {
                print_node(&w, gen_expr(&rg, 2), 0);
            } else {
                /* the bad part alone, or beside good ones */
                w.no_nl = true;
                unsigned form = (unsigned)rg_below(&rg, 4);
                if (form == 1) {
                    print_node(&w, gen_primary(&rg), 1);
                    tok(&w, K_OP, "&&");
                } else if (form == 2) {
                    tok(&w, K_OPEN, "(");
                    print_node(&w, gen_primary(&rg), 0);
                    tok(&w, K_OP, "||");
                } else if (form == 3) {
                    tok(&w, K_OP, "!");
                    tok(&w, K_OPEN, "(");
                }
                puts_(&w, " ");
                bad_at = w.out.n;
                puts_(&w, bad);
                bad_end = w.out.n;
                w.prev = K_CLOSE;
                if (form >= 2)
                    tok(&w, K_CLOSE, ")");
                w.open = 0;
            }
            end_rule(&w, i == nrules - 1);
            if (i < nrules - 1 && w.out.p[w.out.n - 1] != '\n')
                puts_(&w, "\n");
        }
        int line, c0, c1, l1;
        line_col((const char *)w.out.p, bad_at, &line, &c0);
        line_col((const char *)w.out.p, bad_end, &l1, &c1);
        ru_rules *r = ru_parse((const char *)w.out.p, w.out.n, NAME, S, err, sizeof err);
        if (r != NULL)
            fprintf(stderr, "\n==== bad rule set #%d loaded:\n%s\n", set, (const char *)w.out.p);
        REQUIREF(r == NULL, "bad rule set #%d (kind %d) loaded: %s", set, kind, bad);
        int el = 0, ec = 0, used = 0;
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%s:", NAME);
        bool form = strncmp(err, prefix, strlen(prefix)) == 0 &&
                    sscanf(err + strlen(prefix), "%d:%d: %n", &el, &ec, &used) == 2 && used > 0 &&
                    err[strlen(prefix) + (size_t)used] != '\0';
        if (!form || el != line || ec < c0 || ec > c1)
            fprintf(stderr, "\n==== bad rule set #%d (kind %d): %s\nwant line %d, column %d..%d\n%s\n",
                    set, kind, err, line, c0, c1, (const char *)w.out.p);
        REQUIREF(form, "bad rule set #%d: the error does not start with %s:LINE:COL: %s", set,
                 NAME, err);
        REQUIREF(el == line && ec >= c0 && ec <= c1,
                 "bad rule set #%d: error at %d:%d, the bad part '%s' is at line %d columns %d..%d: %s",
                 set, el, ec, bad, line, c0, c1, err);
        free(w.out.p);
    }
    for (int k = 0; k < 12; k++)
        if (kinds_seen[k] == 0 && nsets >= 100)
            fprintf(stderr, "note: no bad rule of kind %d (the schema has nothing it needs)\n", k);
    free_all();
}
END_TEST

static Suite *rules_model_suite(void)
{
    Suite *s = suite_create("rules_model");
    TCase *tc = su_tcase(s, "generated", setup, fx_teardown, 600);
#ifdef RM_COMPILED
    tcase_add_test(tc, rules_as_c_decide_as_interpreted);
    (void)random_rules_agree_with_a_direct_evaluation; /* test_rules_model's */
    (void)type_incorrect_rules_fail_to_load;
    (void)case_words_that_name_optics_are_cases;
#else
    tcase_add_test(tc, random_rules_agree_with_a_direct_evaluation);
    tcase_add_test(tc, type_incorrect_rules_fail_to_load);
    tcase_add_test(tc, case_words_that_name_optics_are_cases);
#endif
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--write-rules") == 0)
        return write_rules(argv[2], atoi(argv[3]));
    fprintf(stderr, "test_rules_model: schema %s, %d types, %d optics\n", S->schema, S->ntypes,
            S->noptics);
    return su_run(rules_model_suite());
}
