/* fuzz_rules.c: the rule language's harness, over the synthetic schema of
 * rules.h (defined here too). It checks:
 *
 *   rules   the input as a rules file, and as a --where expression: loading
 *           never crashes; a refusal names the file and a line:col inside
 *           the input; rules that load judge every fixed message the same
 *           way twice, on its bytes and on its model, read each optic at
 *           most once, and ru_decide agrees with ru_judge and with the
 *           rules tried in turn (ru_decide_in_turn: no index); and
 *           ru_emit_c writes them out as C without a fault (the C itself is
 *           compiled and checked by test_rules_compiled and
 *           test_rules_model_c, at build time).
 *
 * It needs the runtime alone: tests/unit/test_rules.c links it too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

/* ============================================== the synthetic schema ===== */

unsigned fzr_scans[FZR_NOPTICS], fzr_gets[FZR_NOPTICS];

void fzr_count_reset(void)
{
    memset(fzr_scans, 0, sizeof fzr_scans);
    memset(fzr_gets, 0, sizeof fzr_gets);
}

#define FZR_MSG(p) ((const fzr_msg *)(const void *)(p))
#define FZR_SUB(p) ((const fzr_sub *)(const void *)(p))
#define FZR_REC_OF(p) ((const fzr_rec *)(p))

/* The scanners (over the struct's bytes) and getters (over the struct). */
#define FZR_SCALAR(name, IDX, present, set)                                                   \
    static bool fzr_scan_##name(const uint8_t *p, size_t n, op_value *out, void *scratch,     \
                                ar_arena *a)                                                  \
    {                                                                                         \
        (void)n, (void)scratch, (void)a;                                                      \
        fzr_scans[IDX]++;                                                                     \
        const fzr_msg *m = FZR_MSG(p);                                                        \
        if (!(present))                                                                       \
            return false;                                                                     \
        set;                                                                                  \
        return true;                                                                          \
    }                                                                                         \
    static bool fzr_get_##name(const void *root, op_value *out)                               \
    {                                                                                         \
        fzr_gets[IDX]++;                                                                      \
        const fzr_msg *m = root;                                                              \
        if (!(present))                                                                       \
            return false;                                                                     \
        set;                                                                                  \
        return true;                                                                          \
    }

FZR_SCALAR(kind, FZR_KIND, m->kind >= 0, out->e = m->kind)
FZR_SCALAR(sev, FZR_SEV, m->sev >= 0, out->e = m->sev)
FZR_SCALAR(big, FZR_BIG, m->has_big, out->i = m->big)
FZR_SCALAR(ratio, FZR_RATIO, m->has_ratio, out->f = m->ratio)
FZR_SCALAR(flag, FZR_FLAG, m->has_flag, out->b = m->flag)
FZR_SCALAR(small, FZR_SMALL, m->has_small, out->i = m->small)
FZR_SCALAR(many, FZR_MANY, m->many >= 0, out->e = m->many)

/* The scanner unescapes into the arena, as a generated one does. */
static bool fzr_scan_name(const uint8_t *p, size_t n, op_value *out, void *scratch, ar_arena *a)
{
    (void)n, (void)scratch;
    fzr_scans[FZR_NAME]++;
    const fzr_msg *m = FZR_MSG(p);
    if (!m->has_name)
        return false;
    if (memchr(m->name_raw.p, '\\', m->name_raw.n) == NULL) {
        out->s = m->name_raw;
        return true;
    }
    uint8_t *dst = ar_alloc(a, m->name_raw.n);
    if (dst == NULL)
        return false;
    out->s.p = (const char *)dst;
    out->s.n = js_unescape((const uint8_t *)m->name_raw.p, m->name_raw.n, dst);
    return true;
}

static bool fzr_get_name(const void *root, op_value *out)
{
    fzr_gets[FZR_NAME]++;
    const fzr_msg *m = root;
    if (!m->has_name)
        return false;
    out->s = m->name;
    return true;
}

/* Records: the scanner copies into the scratch it is given. */
#define FZR_RECORD(name, IDX, member)                                                         \
    static bool fzr_scan_##name(const uint8_t *p, size_t n, op_value *out, void *scratch,     \
                                ar_arena *a)                                                  \
    {                                                                                         \
        (void)n, (void)a;                                                                     \
        fzr_scans[IDX]++;                                                                     \
        const fzr_msg *m = FZR_MSG(p);                                                        \
        if (!m->has_##member)                                                                 \
            return false;                                                                     \
        memcpy(scratch, &m->member, sizeof(fzr_rec));                                         \
        out->ptr = scratch;                                                                   \
        return true;                                                                          \
    }                                                                                         \
    static bool fzr_get_##name(const void *root, op_value *out)                               \
    {                                                                                         \
        fzr_gets[IDX]++;                                                                      \
        const fzr_msg *m = root;                                                              \
        if (!m->has_##member)                                                                 \
            return false;                                                                     \
        out->ptr = &m->member;                                                                \
        return true;                                                                          \
    }

FZR_RECORD(rec, FZR_REC, rec)
FZR_RECORD(rec2, FZR_REC2, rec2)

/* The raw optic: a view of the sub-struct's bytes, or the sub-struct. */
static bool fzr_scan_sub(const uint8_t *p, size_t n, op_value *out, void *scratch, ar_arena *a)
{
    (void)n, (void)scratch, (void)a;
    fzr_scans[FZR_SUB]++;
    const fzr_msg *m = FZR_MSG(p);
    if (!m->has_sub)
        return false;
    out->bytes.p = (const uint8_t *)&m->sub;
    out->bytes.n = sizeof m->sub;
    return true;
}

static bool fzr_get_sub(const void *root, op_value *out)
{
    fzr_gets[FZR_SUB]++;
    const fzr_msg *m = root;
    if (!m->has_sub)
        return false;
    out->ptr = &m->sub;
    return true;
}

/* Optics over the sub-struct (the source type Sub). */
#define FZR_OVER_SUB(name, IDX, present, set)                                                 \
    static bool fzr_scan_##name(const uint8_t *p, size_t n, op_value *out, void *scratch,     \
                                ar_arena *a)                                                  \
    {                                                                                         \
        (void)scratch, (void)a;                                                               \
        fzr_scans[IDX]++;                                                                     \
        if (n != sizeof(fzr_sub))                                                             \
            return false;                                                                     \
        const fzr_sub *s = FZR_SUB(p);                                                        \
        if (!(present))                                                                       \
            return false;                                                                     \
        set;                                                                                  \
        return true;                                                                          \
    }                                                                                         \
    static bool fzr_get_##name(const void *src, op_value *out)                                \
    {                                                                                         \
        fzr_gets[IDX]++;                                                                      \
        const fzr_sub *s = src;                                                               \
        if (!(present))                                                                       \
            return false;                                                                     \
        set;                                                                                  \
        return true;                                                                          \
    }

FZR_OVER_SUB(deep, FZR_DEEP, s->has_v, out->i = s->v)
FZR_OVER_SUB(deeplvl, FZR_DEEPLVL, s->lvl >= 0, out->e = s->lvl)
FZR_OVER_SUB(orphan, FZR_ORPHAN, s->has_v, out->i = s->v)

/* Record fields. */
static bool fzr_f_n(const void *r, op_value *o) { o->i = FZR_REC_OF(r)->n; return true; }
static bool fzr_f_x(const void *r, op_value *o) { o->f = FZR_REC_OF(r)->x; return true; }
static bool fzr_f_s(const void *r, op_value *o) { o->s = FZR_REC_OF(r)->s; return true; }
static bool fzr_f_on(const void *r, op_value *o) { o->b = FZR_REC_OF(r)->on; return true; }
static bool fzr_f_lvl(const void *r, op_value *o) { o->e = FZR_REC_OF(r)->lvl; return true; }
static bool fzr_f_opt(const void *r, op_value *o)
{
    if (!FZR_REC_OF(r)->has_opt)
        return false;
    o->i = FZR_REC_OF(r)->opt;
    return true;
}
static bool fzr_f_inner(const void *r, op_value *o) { o->ptr = &FZR_REC_OF(r)->inner; return true; }
static bool fzr_f_depth(const void *r, op_value *o) { o->i = ((const fzr_inner *)r)->depth; return true; }
static bool fzr_f_word(const void *r, op_value *o)
{
    const fzr_inner *in = r;
    if (!in->has_word)
        return false;
    o->s = in->word;
    return true;
}

/* Encoders for ru_format: {"n":N} for a record, {"v":N} for Sub. */
static uint8_t *fzr_put_obj(uint8_t *w, uint8_t *wend, const char *key, int64_t v)
{
    w = js_put_raw(w, wend, "{\"", 2);
    w = js_put_raw(w, wend, key, strlen(key));
    w = js_put_raw(w, wend, "\":", 2);
    w = js_put_i64(w, wend, v);
    return js_put_raw(w, wend, "}", 1);
}
static uint8_t *fzr_enc_rec(uint8_t *w, uint8_t *wend, const void *v)
{
    return fzr_put_obj(w, wend, "n", FZR_REC_OF(v)->n);
}
static uint8_t *fzr_enc_sub(uint8_t *w, uint8_t *wend, const void *v)
{
    return fzr_put_obj(w, wend, "v", FZR_SUB(v)->has_v ? FZR_SUB(v)->v : -1);
}

static const js_str fzr_kind_cases[] = {FZR_S("A"), FZR_S("B"), FZR_S("C")};
static const js_str fzr_sev_cases[] = {FZR_S("Low"), FZR_S("Mid"), FZR_S("High")};
static js_str fzr_many_cases[FZR_MANY_CASES]; /* C0 .. C99, filled by fzr_init */
static char fzr_many_names[FZR_MANY_CASES][4];

static const op_field fzr_inner_fields[] = {
    {"depth", OP_I32, "i32", NULL, 0, fzr_f_depth, NULL, 0, NULL, 0},
    {"word", OP_STRING, "string", NULL, 0, fzr_f_word, NULL, 0, NULL, 0},
};
/* Rec's fields that rules cannot read (none of them is in Rec's C struct:
 * the loader only names them) */
static const op_unread fzr_rec_unread[] = {{"tags", "list"}, {"shape", "union"}};
static const op_field fzr_rec_fields[] = {
    {"n", OP_I64, "i64", NULL, 0, fzr_f_n, NULL, 0, NULL, 0},
    {"x", OP_F64, "f64", NULL, 0, fzr_f_x, NULL, 0, NULL, 0},
    {"s", OP_STRING, "string", NULL, 0, fzr_f_s, NULL, 0, NULL, 0},
    {"on", OP_BOOL, "bool", NULL, 0, fzr_f_on, NULL, 0, NULL, 0},
    {"lvl", OP_ENUM, "Sev", fzr_sev_cases, 3, fzr_f_lvl, NULL, 0, NULL, 0},
    {"opt", OP_I64, "i64", NULL, 0, fzr_f_opt, NULL, 0, NULL, 0},
    {"inner", OP_RECORD, "Inner", NULL, 0, fzr_f_inner, fzr_inner_fields, 2, NULL, 0},
};

static const op_type fzr_types[] = {
    {"Msg", sizeof(fzr_msg), NULL, NULL, NULL},
    {"Rec", sizeof(fzr_rec), NULL, NULL, NULL},
    {"Inner", sizeof(fzr_inner), NULL, NULL, NULL},
    {"Sub", sizeof(fzr_sub), NULL, NULL, NULL},
};

#define FZR_OPTIC(nm, path, kind, focus, cases, ncases, source, base, root, rec, enc, fields,  \
                  nfields)                                                                    \
    {#nm, path, kind, focus, cases, ncases, source, base, root, rec, fzr_scan_##nm, NULL,     \
     fzr_get_##nm, enc, fields, nfields, (nfields) ? fzr_rec_unread : NULL, (nfields) ? 2 : 0,  \
     {.mode = OP_M_NONE}, -1, 0}

const op_optic fzr_optics[FZR_NOPTICS] = {
    FZR_OPTIC(kind, "Msg.kind", OP_TAG, "Kind", fzr_kind_cases, 3, 0, -1, true, 0, NULL, NULL, 0),
    FZR_OPTIC(sev, "Msg.sev", OP_ENUM, "Sev", fzr_sev_cases, 3, 0, -1, true, 0, NULL, NULL, 0),
    FZR_OPTIC(big, "Msg.big", OP_I64, "i64", NULL, 0, 0, -1, true, 0, NULL, NULL, 0),
    FZR_OPTIC(ratio, "Msg.ratio", OP_F64, "f64", NULL, 0, 0, -1, true, 0, NULL, NULL, 0),
    FZR_OPTIC(name, "Msg.name", OP_STRING, "string", NULL, 0, 0, -1, true, 0, NULL, NULL, 0),
    FZR_OPTIC(flag, "Msg.flag", OP_BOOL, "bool", NULL, 0, 0, -1, true, 0, NULL, NULL, 0),
    FZR_OPTIC(small, "Msg.small", OP_I32, "i32", NULL, 0, 0, -1, true, 0, NULL, NULL, 0),
    FZR_OPTIC(rec, "Msg.rec", OP_RECORD, "Rec", NULL, 0, 0, -1, true, sizeof(fzr_rec),
              fzr_enc_rec, fzr_rec_fields, 7),
    FZR_OPTIC(rec2, "Msg.rec2", OP_RECORD, "Rec", NULL, 0, 0, -1, true, sizeof(fzr_rec),
              fzr_enc_rec, fzr_rec_fields, 7),
    FZR_OPTIC(sub, "Msg.sub", OP_RAW, "Sub", NULL, 0, 0, -1, true, 0, fzr_enc_sub, NULL, 0),
    FZR_OPTIC(deep, "Sub.v", OP_I64, "i64", NULL, 0, 3, FZR_SUB, false, 0, NULL, NULL, 0),
    FZR_OPTIC(deeplvl, "Sub.lvl", OP_ENUM, "Sev", fzr_sev_cases, 3, 3, FZR_SUB, false, 0, NULL,
              NULL, 0),
    FZR_OPTIC(orphan, "Sub.v", OP_I64, "i64", NULL, 0, 3, -1, false, 0, NULL, NULL, 0),
    FZR_OPTIC(many, "Msg.many", OP_ENUM, "Many", fzr_many_cases, FZR_MANY_CASES, 0, -1, true, 0,
              NULL, NULL, 0),
};

/* Designated: op_schema grows (a new member must not shift the others). */
const op_schema fzr_schema = {
    .schema = "synthetic",
    .root = 0,
    .types = fzr_types,
    .ntypes = 4,
    .optics = fzr_optics,
    .noptics = FZR_NOPTICS,
    .kind = FZR_KIND,
    .first_field = -1,
};

void fzr_init(void)
{
    for (int i = 0; i < FZR_MANY_CASES; i++) {
        int n = snprintf(fzr_many_names[i], sizeof fzr_many_names[i], "C%d", i);
        fzr_many_cases[i].p = fzr_many_names[i];
        fzr_many_cases[i].n = (size_t)n;
    }
}

/* ---- messages ---- */

/* Names as their JSON contents, and the same unescaped. */
static const js_str fzr_names_raw[] = {
    FZR_S(""), FZR_S("abc"), FZR_S("a\\\"b"), FZR_S("\\u00e9t\\u00e9"), FZR_S("\xc3\xa9t\xc3\xa9"),
    FZR_S("tab\\there"), FZR_S("\\ud83d\\ude00"),
};
static const js_str fzr_names[] = {
    FZR_S(""), FZR_S("abc"), FZR_S("a\"b"), FZR_S("\xc3\xa9t\xc3\xa9"), FZR_S("\xc3\xa9t\xc3\xa9"),
    FZR_S("tab\there"), FZR_S("\xf0\x9f\x98\x80"),
};
#define FZR_NNAMES ((int)(sizeof fzr_names / sizeof fzr_names[0]))

static uint64_t fzr_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int fzr_pick(uint64_t *s, int n) { return (int)(fzr_next(s) % (uint64_t)n); }

static int64_t fzr_int(uint64_t *s)
{
    static const int64_t edges[] = {0, 1, -1, 130, 129, 9007199254740992, 9007199254740993,
                                    INT64_MAX, INT64_MIN, 42};
    return fzr_pick(s, 3) ? edges[fzr_pick(s, 10)] : (int64_t)(fzr_next(s) % 400) - 200;
}

static double fzr_double(uint64_t *s)
{
    static const double edges[] = {0.0, -0.0, 0.5, 130.0, 129.5, 9007199254740992.0, 1e300, -2.5,
                                   9223372036854775808.0, 42.0};
    return fzr_pick(s, 3) ? edges[fzr_pick(s, 10)] : (double)((int)(fzr_next(s) % 400) - 200) / 4;
}

static void fzr_random_rec(uint64_t *s, fzr_rec *r)
{
    memset(r, 0, sizeof *r);
    r->n = fzr_int(s);
    r->x = fzr_double(s);
    r->s = fzr_names[fzr_pick(s, FZR_NNAMES)];
    r->on = fzr_pick(s, 2);
    r->lvl = fzr_pick(s, 3);
    r->has_opt = fzr_pick(s, 2);
    r->opt = fzr_int(s);
    r->inner.depth = (int32_t)fzr_int(s);
    r->inner.has_word = fzr_pick(s, 2);
    r->inner.word = fzr_names[fzr_pick(s, FZR_NNAMES)];
}

void fzr_random(uint64_t seed, fzr_msg *m)
{
    uint64_t s = seed;
    memset(m, 0, sizeof *m);
    m->kind = fzr_pick(&s, 5) ? fzr_pick(&s, 3) : -1;
    m->sev = fzr_pick(&s, 5) ? fzr_pick(&s, 3) : -1;
    m->has_big = fzr_pick(&s, 5);
    m->big = fzr_int(&s);
    m->has_ratio = fzr_pick(&s, 5);
    m->ratio = fzr_double(&s);
    m->has_name = fzr_pick(&s, 5);
    int nm = fzr_pick(&s, FZR_NNAMES);
    m->name_raw = fzr_names_raw[nm];
    m->name = fzr_names[nm];
    m->has_flag = fzr_pick(&s, 5);
    m->flag = fzr_pick(&s, 2);
    m->has_small = fzr_pick(&s, 5);
    m->small = (int32_t)fzr_int(&s);
    m->has_rec = fzr_pick(&s, 5);
    fzr_random_rec(&s, &m->rec);
    m->has_rec2 = fzr_pick(&s, 5);
    fzr_random_rec(&s, &m->rec2);
    m->has_sub = fzr_pick(&s, 5);
    m->sub.has_v = fzr_pick(&s, 4);
    m->sub.v = fzr_int(&s);
    m->sub.lvl = fzr_pick(&s, 4) ? fzr_pick(&s, 3) : -1;
    m->many = fzr_pick(&s, 5) ? fzr_pick(&s, FZR_MANY_CASES) : -1;
}

/* ===================================================== the property ===== */

#define FZR_MESSAGES 16

typedef struct {
    bool ready;
    fzr_msg msgs[FZR_MESSAGES];
    uint8_t arena_mem[4096];
    ar_arena arena;
    ru_subject rd;
} fzr_state;

static fzr_state fzr;

/* Whether err is "NAME:LINE:COL: text" with LINE:COL a place in t (n
 * bytes): a line that exists, a column at most one past its end. */
static bool fzr_placed(const char *err, const char *name, const char *t, size_t n)
{
    size_t nl = strlen(name);
    if (strncmp(err, name, nl) != 0 || err[nl] != ':')
        return false;
    char *e;
    long line = strtol(err + nl + 1, &e, 10);
    if (*e != ':' || line < 1)
        return false;
    long col = strtol(e + 1, &e, 10);
    if (e[0] != ':' || e[1] != ' ' || e[2] == '\0' || col < 1)
        return false;
    long l = 1, c = 1;
    for (size_t i = 0; i < n; i++) {
        if (l == line && c == col)
            return true;
        if (t[i] == '\n') {
            if (l == line)
                return false;
            l++;
            c = 1;
        } else if (((unsigned char)t[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    return l == line && c == col;
}

/* Judges every fixed message with r: twice on its bytes, once on its model. */
static const char *fzr_judge_all(const ru_rules *r)
{
    for (int i = 0; i < FZR_MESSAGES; i++) {
        const fzr_msg *m = &fzr.msgs[i];
        fzr_count_reset();
        ru_subject_bytes(&fzr.rd, (const uint8_t *)m, sizeof *m);
        bool v1 = ru_judge(r, &fzr.rd);
        for (int o = 0; o < FZR_NOPTICS; o++)
            if (fzr_scans[o] > 1)
                return "rules: an optic was scanned twice for one message";
        int d = ru_decide(r, &fzr.rd); /* from the cache: no more scans */
        for (int o = 0; o < FZR_NOPTICS; o++)
            if (fzr_scans[o] > 1)
                return "rules: an optic was scanned twice for one message";
        if (v1 != (d >= 0 && ru_rule_keeps(r, d)))
            return "rules: ru_decide's rule says otherwise than ru_judge";
        if (ru_decide_in_turn(r, &fzr.rd) != d)
            return "rules: the rules tried in turn decide otherwise than through the index";
        ru_subject_bytes(&fzr.rd, (const uint8_t *)m, sizeof *m);
        if (ru_judge(r, &fzr.rd) != v1)
            return "rules: the same message judged twice gives two verdicts";
        ru_subject_model(&fzr.rd, m);
        if (ru_judge(r, &fzr.rd) != v1)
            return "rules: the model reader's verdict differs from the bytes reader's";
        for (int o = 0; o < FZR_NOPTICS; o++)
            if (fzr_gets[o] > 1)
                return "rules: an optic was got twice for one message";
    }
    return NULL;
}

/* Rules that loaded, written as C: it must succeed and define the set. */
static const char *fzr_emit(const ru_rules *r)
{
    char *c = NULL;
    size_t cn = 0;
    FILE *f = open_memstream(&c, &cn);
    if (f == NULL)
        abort();
    bool ok = ru_emit_c(r, "fz", "fuzz.rules", f);
    ok = fclose(f) == 0 && ok;
    const char *why = NULL;
    if (!ok)
        why = "rules: ru_emit_c failed on rules that loaded";
    else if (strstr(c, "const ru_compiled fz = {") == NULL)
        why = "rules: ru_emit_c wrote no ru_compiled";
    free(c);
    return why;
}

const char *fzr_rules(const uint8_t *d, size_t n)
{
    if (!fzr.ready) {
        fzr_init();
        for (int i = 0; i < FZR_MESSAGES; i++)
            fzr_random((uint64_t)i * 7919u + 1u, &fzr.msgs[i]);
        ar_init(&fzr.arena, fzr.arena_mem, sizeof fzr.arena_mem);
        if (!ru_subject_init(&fzr.rd, &fzr_schema, &fzr.arena))
            return "rules: the synthetic schema does not fit a reader";
        fzr.ready = true;
    }
    const char *why = NULL;
    /* an exactly sized copy (a read past the end is ASan's), and one
     * NUL-terminated for --where (which stops at the first NUL) */
    char *exact = malloc(n ? n : 1), *t = malloc(n + 1);
    if (exact == NULL || t == NULL)
        abort();
    if (n) {
        memcpy(exact, d, n);
        memcpy(t, d, n);
    }
    t[n] = '\0';
    char err[1024];
    err[0] = '\0';
    ru_rules *r = ru_parse(exact, n, "fuzz.rules", &fzr_schema, err, sizeof err);
    if (r == NULL) {
        if (n <= RU_MAX_BYTES && !fzr_placed(err, "fuzz.rules", t, n))
            why = "rules: a refusal without a place inside the input";
    } else {
        if (err[0] != '\0')
            why = "rules: an error message for rules that loaded";
        else
            why = fzr_judge_all(r);
        if (why == NULL)
            why = fzr_emit(r);
        ru_free(r);
    }
    if (why == NULL) {
        size_t len = strlen(t);
        r = ru_where(t, "--where", &fzr_schema, err, sizeof err);
        if (r == NULL) {
            if (!fzr_placed(err, "--where", t, len))
                why = "rules: a --where refusal without a place inside the input";
        } else {
            if (ru_count(r) != 1 || !ru_rule_keeps(r, 0))
                why = "rules: --where is not one keep rule";
            else
                why = fzr_judge_all(r);
            ru_free(r);
        }
    }
    free(exact);
    free(t);
    return why;
}
