/* rules.c: the rule language (rules.h): a lexer and a recursive-descent
 * parser bounded by RU_MAX_DEPTH that resolve every name at load, and an
 * evaluator over a per-message cache of optic reads. */
#include "rules.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "rules_compiled.h"
#include "rules_impl.h"

/* ===================================================== the schema ===== */

/* Optic i can be read from a message: from the root, or through a base
 * that is a raw optic read from the root (what op_scan_message assumes). */
static bool readable(const op_schema *s, int i)
{
    const op_optic *o = &s->optics[i];
    if (o->source_is_root)
        return true;
    return o->base >= 0 && o->base < s->noptics && s->optics[o->base].source_is_root &&
           s->optics[o->base].kind == OP_RAW;
}

/* Places each record optic's scratch (1 + offset; 0 for the others). */
static bool scratch_plan(const op_schema *s, uint16_t *at, size_t *total)
{
    size_t used = 0;
    for (int i = 0; i < s->noptics; i++) {
        at[i] = 0;
        const op_optic *o = &s->optics[i];
        if (o->kind != OP_RECORD || o->rec_size == 0)
            continue;
        size_t off = (used + 15u) & ~(size_t)15u;
        if (o->rec_size > RU_SCRATCH || off > RU_SCRATCH - o->rec_size) {
            *total = off + o->rec_size;
            return false;
        }
        at[i] = (uint16_t)(off + 1);
        used = off + o->rec_size;
    }
    *total = used;
    return true;
}

static bool schema_fits(const op_schema *s, const char *name, char *err, size_t errlen)
{
    if (s->noptics > RU_MAX_OPTICS) {
        tr_say(err, errlen, "%s: the schema declares %d optics, more than rules can read (%d)",
               name, s->noptics, RU_MAX_OPTICS);
        return false;
    }
    uint16_t at[RU_MAX_OPTICS];
    size_t total;
    if (!scratch_plan(s, at, &total)) {
        tr_say(err, errlen,
               "%s: the schema's record optics need more than %d bytes of scratch to be read",
               name, RU_SCRATCH);
        return false;
    }
    return true;
}

/* ===================================================== the parser ===== */

enum {
    T_EOF,
    T_NL,
    T_IDENT,
    T_NUM,
    T_STR,
    T_LP,
    T_RP,
    T_LB,
    T_RB,
    T_COMMA,
    T_DOT,
    T_NOT,
    T_AND,
    T_OR,
    T_EQ,
    T_NE,
    T_LT,
    T_LE,
    T_GT,
    T_GE,
    T_BAD, /* a character that starts no token */
    T_ERR, /* the lexer failed (the error is recorded) */
};

typedef struct {
    int type;
    size_t at, end;
    int line;
} tok;

/* An operand as parsed, before it becomes part of a node. */
enum { X_PATH, X_WORD, X_NUM, X_STR, X_BOOL };

typedef struct {
    int what;
    size_t at, end; /* its text */
    ru_path path;   /* X_PATH: what it reads, and the type it ends at */
    op_kind kind;
    const char *type;
    const js_str *cases;
    int ncases;
    const op_field *fields;
    int nfields;
    const op_unread *unread;
    int nunread;
    op_value k; /* a literal; a string's bytes are pool[str ..] */
    bool f;
    int wide;   /* an integer past i64's range: its sign (k.f is it rounded) */
    int res;    /* and the sign of it less k.f, so that it compares exactly */
    size_t str;
} operand;

typedef struct {
    const char *t;
    size_t n;
    const char *name;
    const op_schema *s;
    char *err;
    size_t errlen;
    bool failed;
    bool where; /* ru_where: one expression, newlines are spaces */
    size_t pos;
    int line;   /* of pos */
    int open;   /* '(' and '[' open: newlines are spaces */
    tok look;
    bool have;
    ru_node *nodes;
    int nnodes, cnodes;
    ru_item *items;
    int nitems, citems;
    const op_field **steps;
    int nsteps, csteps;
    uint64_t *words;
    int nwords, cwords;
    ru_rule *rules;
    int nrules, crules;
    char *pool;
    size_t npool;
    uint32_t uses[RU_MAX_OPTICS]; /* how many operands read each optic (itself or as a base) */
} ps;

/* Byte offset -> line and column (characters), 1-based. */
static void position(const ps *P, size_t at, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < at && i < P->n; i++) {
        unsigned char b = (unsigned char)P->t[i];
        if (b == '\n') {
            l++;
            c = 1;
        } else if ((b & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

__attribute__((format(printf, 3, 4))) static int fail(ps *P, size_t at, const char *fmt, ...)
{
    if (P->failed)
        return -1;
    P->failed = true;
    if (P->err == NULL || P->errlen == 0)
        return -1;
    int line, col;
    position(P, at, &line, &col);
    int w = snprintf(P->err, P->errlen, "%s:%d:%d: ", P->name, line, col);
    if (w >= 0 && (size_t)w < P->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(P->err + w, P->errlen - (size_t)w, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Growing the parser's arrays; false (and the error) when memory runs out. */
static bool grow(ps *P, void **arr, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return true;
    int c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *p = realloc(*arr, (size_t)c * elem);
    if (p == NULL) {
        fail(P, P->pos, "out of memory");
        return false;
    }
    *arr = p;
    *cap = c;
    return true;
}

static int new_node(ps *P, int op)
{
    if (!grow(P, (void **)&P->nodes, &P->cnodes, P->nnodes + 1, sizeof(ru_node)))
        return -1;
    ru_node *n = &P->nodes[P->nnodes];
    memset(n, 0, sizeof *n);
    n->op = (uint8_t)op;
    n->kid = -1;
    n->next = -1;
    return P->nnodes++;
}

/* ---- text pieces for messages ---- */

/* At most max bytes of s (n bytes), cut at a character boundary, with an
 * ellipsis when cut. */
static void clip(const char *s, size_t n, size_t max, char *out, size_t cap)
{
    const char *more = "";
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
        more = "...";
    }
    snprintf(out, cap, "%.*s%s", (int)n, s, more);
}

/* The code point starting at s (valid UTF-8, at most n bytes). */
static unsigned code_point(const unsigned char *s, size_t n, size_t *len)
{
    unsigned c = s[0];
    size_t l = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (l > n)
        l = n;
    if (l > 1)
        c &= 0x3Fu >> (l - 1);
    for (size_t i = 1; i < l; i++)
        c = c << 6 | (s[i] & 0x3Fu);
    *len = l;
    return c;
}

static const char *end_text(const ps *P) { return P->where ? "the end" : "end of file"; }

/* What a token is, for "found ...". */
static const char *found_tok(const ps *P, const tok *k, char *buf, size_t cap)
{
    char piece[64];
    const char *s = P->t + k->at;
    size_t n = k->end - k->at;
    switch (k->type) {
    case T_EOF:
        return end_text(P);
    case T_NL:
        return "end of line";
    case T_NUM:
        clip(s, n, 40, piece, sizeof piece);
        snprintf(buf, cap, "the number %s", piece);
        return buf;
    case T_STR:
        clip(s, n, 40, piece, sizeof piece);
        snprintf(buf, cap, "the string %s", piece);
        return buf;
    case T_BAD: {
        size_t len;
        unsigned c = code_point((const unsigned char *)s, n, &len);
        if (c < 0x20 || c == 0x7F)
            snprintf(buf, cap, "U+%04X", c);
        else if (c < 0x80)
            snprintf(buf, cap, "'%c'", (char)c);
        else
            snprintf(buf, cap, "'%.*s' (U+%04X)", (int)len, s, c);
        return buf;
    }
    default:
        clip(s, n, 40, piece, sizeof piece);
        snprintf(buf, cap, "'%s'", piece);
        return buf;
    }
}

/* ---- the lexer ---- */

static bool is_alpha(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }

static tok lex(ps *P)
{
    const char *t = P->t;
    size_t n = P->n;
    for (;;) {
        while (P->pos < n && (t[P->pos] == ' ' || t[P->pos] == '\t' || t[P->pos] == '\r'))
            P->pos++;
        if (P->pos < n && t[P->pos] == '#') {
            const char *nl = memchr(t + P->pos, '\n', n - P->pos);
            P->pos = nl != NULL ? (size_t)(nl - t) : n;
        }
        if (P->pos < n && t[P->pos] == '\n' && (P->open > 0 || P->where)) {
            P->pos++;
            P->line++;
            continue;
        }
        break;
    }
    tok k = {T_EOF, P->pos, P->pos, P->line};
    if (P->pos >= n)
        return k;
    size_t p = P->pos;
    unsigned char c = (unsigned char)t[p];
    if (c == '\n') {
        k.type = T_NL;
        k.end = p + 1;
        P->pos = p + 1;
        P->line++;
        return k;
    }
    if (is_alpha(c)) {
        size_t q = p + 1;
        while (q < n && (is_alpha((unsigned char)t[q]) || is_digit((unsigned char)t[q])))
            q++;
        k.type = T_IDENT;
        k.end = P->pos = q;
        return k;
    }
    if (is_digit(c) || c == '-') {
        /* the longest run that could be meant as a number; parse_number
         * then holds it to JSON's grammar */
        size_t q = p + 1;
        while (q < n && (is_alpha((unsigned char)t[q]) || is_digit((unsigned char)t[q]) ||
                         t[q] == '.' || t[q] == '+' || t[q] == '-'))
            q++;
        k.type = T_NUM;
        k.end = P->pos = q;
        return k;
    }
    if (c == '"') {
        js_ctx ctx;
        js_ctx_init(&ctx, (const uint8_t *)t, NULL);
        bool esc;
        const uint8_t *q = js_string_raw(&ctx, (const uint8_t *)t + p, (const uint8_t *)t + n, &esc);
        if (q == NULL) {
            size_t off = ctx.err.offset;
            if (off >= n)
                fail(P, n, "expected '\"' to close the string, found %s", end_text(P));
            else if (t[off] == '\n')
                fail(P, off, "expected '\"' to close the string, found end of line");
            else
                fail(P, off, "invalid string: %s", tr_error_text(ctx.err.code));
            k.type = T_ERR;
            return k;
        }
        k.type = T_STR;
        k.end = P->pos = (size_t)(q - (const uint8_t *)t);
        return k;
    }
    static const struct {
        char a, b;
        int type;
    } two[] = {{'&', '&', T_AND}, {'|', '|', T_OR}, {'=', '=', T_EQ},
               {'!', '=', T_NE},  {'<', '=', T_LE}, {'>', '=', T_GE}};
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
        if (c == two[i].a && p + 1 < n && t[p + 1] == two[i].b) {
            k.type = two[i].type;
            k.end = P->pos = p + 2;
            return k;
        }
    int one;
    switch (c) {
    case '(': one = T_LP; break;
    case ')': one = T_RP; break;
    case '[': one = T_LB; break;
    case ']': one = T_RB; break;
    case ',': one = T_COMMA; break;
    case '.': one = T_DOT; break;
    case '!': one = T_NOT; break;
    case '<': one = T_LT; break;
    case '>': one = T_GT; break;
    default: {
        size_t len;
        code_point((const unsigned char *)t + p, n - p, &len);
        k.type = T_BAD;
        k.end = P->pos = p + len;
        return k;
    }
    }
    k.type = one;
    k.end = P->pos = p + 1;
    return k;
}

static tok peek(ps *P)
{
    if (!P->have) {
        P->look = lex(P);
        P->have = true;
    }
    return P->look;
}

static tok take(ps *P)
{
    tok k = peek(P);
    P->have = false;
    return k;
}

static bool is_word(const ps *P, const tok *k, const char *w)
{
    size_t n = strlen(w);
    return k->type == T_IDENT && k->end - k->at == n && memcmp(P->t + k->at, w, n) == 0;
}

/* ---- names ---- */

static const char *path_label(const ps *P, const operand *x, char *buf, size_t cap)
{
    if (x->what != X_PATH) {
        clip(P->t + x->at, x->end - x->at, 40, buf, cap);
        return buf;
    }
    size_t w = (size_t)snprintf(buf, cap, "%s", P->s->optics[x->path.optic].name);
    for (int i = 0; i < x->path.nsteps && w < cap; i++)
        w += (size_t)snprintf(buf + w, cap - w, ".%s", P->steps[x->path.step + i]->name);
    return buf;
}

/* What an operand is, for "found ...". */
static const char *found_x(const ps *P, const operand *x, char *buf, size_t cap)
{
    char piece[160];
    switch (x->what) {
    case X_PATH:
        snprintf(buf, cap, "%s (%s)", path_label(P, x, piece, sizeof piece), x->type);
        return buf;
    case X_WORD:
        clip(P->t + x->at, x->end - x->at, 40, piece, sizeof piece);
        snprintf(buf, cap, "'%s'", piece);
        return buf;
    case X_NUM:
        clip(P->t + x->at, x->end - x->at, 40, piece, sizeof piece);
        snprintf(buf, cap, "the number %s", piece);
        return buf;
    case X_STR:
        clip(P->t + x->at, x->end - x->at, 40, piece, sizeof piece);
        snprintf(buf, cap, "the string %s", piece);
        return buf;
    default:
        return x->k.b ? "true" : "false";
    }
}

static int cls_of_kind(op_kind k)
{
    switch (k) {
    case OP_BOOL: return RC_BOOL;
    case OP_I32:
    case OP_I64:
    case OP_F64: return RC_NUM;
    case OP_STRING: return RC_STR;
    case OP_ENUM:
    case OP_TAG: return RC_ENUM;
    default: return -1;
    }
}

static int cls_of(const operand *x)
{
    switch (x->what) {
    case X_PATH: return cls_of_kind(x->kind);
    case X_NUM: return RC_NUM;
    case X_STR: return RC_STR;
    case X_BOOL: return RC_BOOL;
    default: return -1;
    }
}

/* What a value compared with x must be, for "expected ...". */
static const char *expect_x(const operand *x, char *buf, size_t cap)
{
    switch (cls_of(x)) {
    case RC_NUM: return "a number";
    case RC_STR: return "a string";
    case RC_BOOL: return "true or false";
    default: snprintf(buf, cap, "a case of %s", x->type); return buf;
    }
}

/* Joins names into buf as "a, b, c", ending in "..." when they do not fit. */
typedef struct {
    char *buf;
    size_t cap, n;
    bool full;
} joiner;

static void join(joiner *j, const char *s, size_t n)
{
    if (j->full)
        return;
    size_t need = (j->n ? 2 : 0) + n;
    if (j->n + need + 4 >= j->cap) {
        snprintf(j->buf + j->n, j->cap - j->n, "%s...", j->n ? ", " : "");
        j->full = true;
        return;
    }
    j->n += (size_t)snprintf(j->buf + j->n, j->cap - j->n, "%s%.*s", j->n ? ", " : "", (int)n, s);
}

static int unknown_optic(ps *P, const operand *x)
{
    char list[512], word[64];
    joiner j = {list, sizeof list, 0, false};
    list[0] = '\0';
    for (int i = 0; i < P->s->noptics; i++)
        if (readable(P->s, i))
            join(&j, P->s->optics[i].name, strlen(P->s->optics[i].name));
    clip(P->t + x->at, x->end - x->at, 40, word, sizeof word);
    return fail(P, x->at, "unknown optic '%s' (optics: %s)", word, list);
}

static int case_of(const operand *typed, const char *s, size_t n)
{
    return op_case(typed->cases, typed->ncases, s, n);
}

static int not_a_case(ps *P, const operand *typed, size_t at, size_t end)
{
    char list[512], word[64];
    op_case_list(typed->cases, typed->ncases, list, sizeof list);
    clip(P->t + at, end - at, 40, word, sizeof word);
    /* a union's tag is spelled Union.tag, or Union["tag"] for one that is
     * no name: its cases are the union's (a union's name is a name) */
    int tn = typed->kind == OP_TAG ? (int)strcspn(typed->type, ".[") : (int)strlen(typed->type);
    return fail(P, at, "'%s' is not a case of %.*s (cases: %s)", word, tn, typed->type, list);
}

/* A record or raw path where a value is needed. */
static int check_value(ps *P, const operand *x)
{
    if (x->what != X_PATH || (x->kind != OP_RECORD && x->kind != OP_RAW))
        return 0;
    char label[160];
    path_label(P, x, label, sizeof label);
    if (x->kind == OP_RAW)
        return fail(P, x->at, "expected a value, found %s, raw JSON (%s): only has(%s) applies to it",
                    label, x->type, label);
    char list[512];
    joiner j = {list, sizeof list, 0, false};
    list[0] = '\0';
    for (int f = 0; f < x->nfields; f++)
        join(&j, x->fields[f].name, strlen(x->fields[f].name));
    return fail(P, x->at,
                "expected a value, found %s, a record (%s): compare one of its fields (%s) or "
                "test has(%s)",
                label, x->type, list, label);
}

/* ---- operands ---- */

/* An operand reads optic (by = 1), or one parsed as a path turned out to be
 * a case's name (by = -1, taking back what was counted): the optic, and its
 * base when it has one. */
static void mark_used(ps *P, int optic, int by)
{
    const op_optic *o = &P->s->optics[optic];
    P->uses[optic] += (uint32_t)by;
    if (!o->source_is_root)
        P->uses[o->base] += (uint32_t)by;
}

/* The optics the rules read, as ru_optics_used gives them: bit i for
 * optic i, bit 63 for the 63rd and after. */
static uint64_t used_bits(const ps *P)
{
    uint64_t u = 0;
    for (int i = 0; i < P->s->noptics; i++)
        if (P->uses[i] > 0)
            u |= 1ull << (i < 63 ? i : 63);
    return u;
}

/* |a| against |b|, two integers in decimal without leading zeros or sign:
 * -1, 0 or 1. */
static int cmp_digits(const char *a, size_t an, const char *b, size_t bn)
{
    if (an != bn)
        return an < bn ? -1 : 1;
    int c = memcmp(a, b, an);
    return (c > 0) - (c < 0);
}

/* An integer literal past i64's range, [p, e), against d, the double it
 * rounds to: the sign of the literal less d. Doubles that large are
 * integers, and printf writes them exactly. */
static int wide_residue(const uint8_t *p, const uint8_t *e, double d)
{
    bool neg = *p == '-';
    if (neg)
        p++;
    char buf[400];
    int n = snprintf(buf, sizeof buf, "%.0f", d < 0 ? -d : d);
    if (n <= 0 || (size_t)n >= sizeof buf)
        return 0; /* not reached: |d| < 2^1024 has at most 309 digits */
    int c = cmp_digits((const char *)p, (size_t)(e - p), buf, (size_t)n);
    return neg ? -c : c;
}

static int parse_number(ps *P, const tok *k, operand *x)
{
    const uint8_t *p = (const uint8_t *)P->t + k->at, *e = (const uint8_t *)P->t + k->end;
    char piece[64];
    js_ctx c;
    js_ctx_init(&c, (const uint8_t *)P->t, NULL);
    if (js_number_raw(&c, p, e) != e) {
        clip((const char *)p, (size_t)(e - p), 40, piece, sizeof piece);
        return fail(P, k->at, "malformed number '%s' (numbers are written as in JSON)", piece);
    }
    js_ctx_init(&c, (const uint8_t *)P->t, NULL);
    if (js_i64(&c, p, e, &x->k.i) == e) {
        x->f = false;
        return 0;
    }
    bool integer = c.err.code == TR_E_RANGE;
    js_ctx_init(&c, (const uint8_t *)P->t, NULL);
    if (js_f64(&c, p, e, &x->k.f) == e) {
        x->f = true;
        x->wide = integer ? (*p == '-' ? -1 : 1) : 0;
        x->res = integer ? wide_residue(p, e, x->k.f) : 0;
        return 0;
    }
    clip((const char *)p, (size_t)(e - p), 40, piece, sizeof piece);
    if (c.err.code == TR_E_TOO_LONG)
        return fail(P, k->at, "number longer than %d characters", JS_MAX_NUMBER_LEN);
    return fail(P, k->at, "number out of range: %s", piece);
}

/* A string token's value, unescaped into the pool (it was validated). */
static void parse_string(ps *P, const tok *k, operand *x)
{
    size_t raw = k->end - k->at - 2;
    size_t len = js_unescape((const uint8_t *)P->t + k->at + 1, raw, (uint8_t *)P->pool + P->npool);
    x->str = P->npool;
    x->k.s.p = P->pool + P->npool;
    x->k.s.n = len;
    P->npool += len;
}

/* An optic and its .field steps (k is the optic's name). */
static int parse_path(ps *P, const tok *k, int optic, operand *x)
{
    const op_optic *o = &P->s->optics[optic];
    x->what = X_PATH;
    x->path.optic = optic;
    x->path.step = P->nsteps;
    x->path.nsteps = 0;
    x->kind = o->kind;
    x->type = o->focus;
    x->cases = o->cases;
    x->ncases = o->ncases;
    x->fields = o->fields;
    x->nfields = o->nfields;
    x->unread = o->unread;
    x->nunread = o->nunread;
    if (!readable(P->s, optic)) {
        char word[64];
        clip(P->t + k->at, k->end - k->at, 40, word, sizeof word);
        return fail(P, k->at,
                    "optic '%s' reads values of %s and cannot be read from a message "
                    "(no raw optic from the root reaches %s)",
                    word, P->s->types[o->source].name, P->s->types[o->source].name);
    }
    mark_used(P, optic, 1);
    while (peek(P).type == T_DOT) {
        take(P);
        tok f = take(P);
        char buf[160], label[160];
        if (f.type == T_ERR)
            return -1;
        if (f.type != T_IDENT)
            return fail(P, f.at, "expected a field name after '.', found %s",
                        found_tok(P, &f, buf, sizeof buf));
        const char *fname = P->t + f.at;
        size_t fn = f.end - f.at;
        if (x->kind != OP_RECORD) {
            char word[64];
            clip(fname, fn, 40, word, sizeof word);
            path_label(P, x, label, sizeof label);
            /* a record read raw is its bytes: no field is read from them */
            if (x->kind == OP_RAW)
                return fail(P, f.at,
                            "%s is raw JSON (%s): '.%s' reads a field of an optic declared "
                            "without raw",
                            label, x->type, word);
            return fail(P, f.at, "%s (%s) is not a record: it has no field '%s'", label, x->type,
                        word);
        }
        const op_field *hit = NULL;
        for (int i = 0; i < x->nfields; i++)
            if (strlen(x->fields[i].name) == fn && memcmp(x->fields[i].name, fname, fn) == 0)
                hit = &x->fields[i];
        if (hit == NULL) {
            char list[512], word[64];
            joiner j = {list, sizeof list, 0, false};
            list[0] = '\0';
            for (int i = 0; i < x->nfields; i++)
                join(&j, x->fields[i].name, strlen(x->fields[i].name));
            clip(fname, fn, 40, word, sizeof word);
            const char *nofields = x->nfields ? list : "none that rules can read";
            for (int i = 0; i < x->nunread; i++)
                if (strlen(x->unread[i].name) == fn && memcmp(x->unread[i].name, fname, fn) == 0)
                    return fail(P, f.at,
                                "expected a value, found %s.%s, a %s: rules read no list, map "
                                "or union (fields they read: %s)",
                                x->type, word, x->unread[i].what, nofields);
            return fail(P, f.at, "%s has no field '%s' (fields: %s)", x->type, word, nofields);
        }
        if (!grow(P, (void **)&P->steps, &P->csteps, P->nsteps + 1, sizeof *P->steps))
            return -1;
        P->steps[P->nsteps++] = hit;
        x->path.nsteps++;
        x->kind = hit->kind;
        x->type = hit->focus;
        x->cases = hit->cases;
        x->ncases = hit->ncases;
        x->fields = hit->fields;
        x->nfields = hit->nfields;
        x->unread = hit->unread;
        x->nunread = hit->nunread;
        x->end = f.end;
    }
    return 0;
}

/* One operand: a path, a bare word, or a literal. ctx says what was
 * expected, for the message when none is there. */
static int parse_operand(ps *P, operand *x, const char *ctx)
{
    memset(x, 0, sizeof *x);
    tok k = take(P);
    x->at = k.at;
    x->end = k.end;
    char buf[160];
    switch (k.type) {
    case T_ERR:
        return -1;
    case T_NUM:
        x->what = X_NUM;
        return parse_number(P, &k, x);
    case T_STR:
        x->what = X_STR;
        parse_string(P, &k, x);
        return 0;
    case T_IDENT: {
        if (is_word(P, &k, "true") || is_word(P, &k, "false")) {
            x->what = X_BOOL;
            x->k.b = is_word(P, &k, "true");
            return 0;
        }
        int optic = op_find(P->s, P->t + k.at, k.end - k.at);
        if (optic >= 0)
            return parse_path(P, &k, optic, x);
        x->what = X_WORD;
        if (peek(P).type == T_DOT)
            return unknown_optic(P, x);
        return 0;
    }
    default:
        return fail(P, k.at, "expected %s, found %s", ctx, found_tok(P, &k, buf, sizeof buf));
    }
}

/* ---- conditions ---- */

static int outcome_mask(int type)
{
    switch (type) {
    case T_EQ: return O_EQ;
    case T_NE: return O_LT | O_GT | O_UN;
    case T_LT: return O_LT;
    case T_LE: return O_LT | O_EQ;
    case T_GT: return O_GT;
    default: return O_GT | O_EQ;
    }
}

/* The mask of the same comparison with its sides swapped. */
static int mirror(int m) { return (m & ~(O_LT | O_GT)) | (m & O_LT ? O_GT : 0) | (m & O_GT ? O_LT : 0); }

static unsigned cmp_ff(double a, double b)
{
    return a < b ? O_LT : a > b ? O_GT : a == b ? O_EQ : O_UN;
}

/* An integer against a double, exactly: no rounding of a. */
static unsigned cmp_if(int64_t a, double b)
{
    if (b != b)
        return O_UN;
    if (b >= 9223372036854775808.0)
        return O_LT;
    if (b < -9223372036854775808.0)
        return O_GT;
    int64_t t = (int64_t)b; /* b truncated: exact, it is in range */
    if (a != t)
        return a < t ? O_LT : O_GT;
    double frac = b - (double)t; /* exact too */
    return frac > 0 ? O_LT : frac < 0 ? O_GT : O_EQ;
}

/* a against b; bres: when b is a wide integer literal, the sign of it
 * less b->f (else 0), so that a double equal to b->f is told from it. */
static unsigned cmp_num(const op_value *a, bool af, const op_value *b, bool bf, int bres)
{
    if (!af && !bf)
        return a->i < b->i ? O_LT : a->i > b->i ? O_GT : O_EQ;
    if (af && bf) {
        unsigned r = cmp_ff(a->f, b->f);
        return r == O_EQ && bres != 0 ? (bres > 0 ? O_LT : O_GT) : r;
    }
    if (!af)
        return cmp_if(a->i, b->f);
    return (unsigned)mirror((int)cmp_if(b->i, a->f));
}

static bool is_double(const operand *x)
{
    return x->what == X_PATH ? x->kind == OP_F64 : x->f;
}

/* A number literal as compared with an integer optic: an integer past
 * i64's range becomes a double past every i64 (2^63, or the double below
 * -2^63), so that the comparison stays exact. */
static void exact_for_ints(operand *lit, const operand *typed)
{
    if (lit->wide != 0 && typed->what == X_PATH && typed->kind != OP_F64) {
        lit->k.f = lit->wide > 0 ? 0x1p63 : -0x1.0000000000001p63;
        lit->res = 0;
    }
}

/* Two number literals, exactly (an outcome bit). */
static unsigned cmp_literals(const ps *P, const operand *a, const operand *b)
{
    if (a->wide != 0 && b->wide != 0) {
        if (a->wide != b->wide)
            return a->wide < b->wide ? O_LT : O_GT;
        const char *x = P->t + a->at + (a->wide < 0), *y = P->t + b->at + (b->wide < 0);
        int c = cmp_digits(x, (size_t)(P->t + a->end - x), y, (size_t)(P->t + b->end - y));
        c = a->wide < 0 ? -c : c;
        return c < 0 ? O_LT : c > 0 ? O_GT : O_EQ;
    }
    if (a->wide != 0)
        return (unsigned)mirror((int)cmp_num(&b->k, b->f, &a->k, a->f, a->res));
    return cmp_num(&a->k, a->f, &b->k, b->f, b->res);
}

/* A set of cases (or of bools: bit 1 true) as bits in words. */
static int new_set(ps *P, int bits)
{
    int nw = (bits + 63) / 64;
    if (!grow(P, (void **)&P->words, &P->cwords, P->nwords + nw + 1, sizeof *P->words))
        return -1;
    memset(P->words + P->nwords, 0, (size_t)(nw + 1) * sizeof *P->words);
    int at = P->nwords;
    P->nwords += nw + 1;
    return at;
}

static void set_bit(ps *P, int at, int bit) { P->words[at + bit / 64] |= 1ull << (bit % 64); }

static int set_node(ps *P, const operand *x, int bits, int words, bool negate)
{
    if (negate)
        for (int b = 0; b < bits; b++)
            P->words[words + b / 64] ^= 1ull << (b % 64);
    int n = new_node(P, RN_SET);
    if (n < 0)
        return -1;
    P->nodes[n].cls = (uint8_t)cls_of(x);
    P->nodes[n].a = x->path;
    P->nodes[n].items = words;
    P->nodes[n].nitems = bits;
    return n;
}

static int add_item(ps *P, const operand *x)
{
    if (!grow(P, (void **)&P->items, &P->citems, P->nitems + 1, sizeof *P->items))
        return -1;
    ru_item *it = &P->items[P->nitems];
    it->v = x->k;
    it->f = x->f;
    it->res = (int8_t)x->res;
    it->str = x->str;
    return P->nitems++;
}

static int const_node(ps *P, bool v)
{
    int n = new_node(P, RN_CONST);
    if (n >= 0)
        P->nodes[n].mask = v;
    return n;
}

static const char *op_text(int type)
{
    switch (type) {
    case T_EQ: return "==";
    case T_NE: return "!=";
    case T_LT: return "<";
    case T_LE: return "<=";
    case T_GT: return ">";
    default: return ">=";
    }
}

/* Whether w, a bare word the parser took for true or false or for an
 * optic's name alone, names a case of the enum e (a path) and cannot be
 * compared with it as what it was taken for (an enum is no bool; an optic
 * of another type). */
static bool case_word(ps *P, const operand *e, const operand *w)
{
    if (e->what != X_PATH || cls_of(e) != RC_ENUM)
        return false;
    bool word = w->what == X_BOOL ||
                (w->what == X_PATH && w->path.nsteps == 0 &&
                 (cls_of(w) != RC_ENUM || strcmp(e->type, w->type) != 0));
    return word && case_of(e, P->t + w->at, w->end - w->at) >= 0;
}

static int compile_cmp(ps *P, operand *L, int op, operand *R)
{
    char b1[200], b2[200], b3[200];
    if (L->what == X_WORD && R->what != X_PATH)
        return unknown_optic(P, L);
    if (R->what == X_WORD && L->what != X_PATH)
        return unknown_optic(P, R);
    /* an enum's case spelled as true, false or an optic's name, alone on
     * one side, against that enum: the case */
    operand *W = case_word(P, L, R) ? R : case_word(P, R, L) ? L : NULL;
    if (W != NULL) {
        if (W->what == X_PATH)
            mark_used(P, W->path.optic, -1);
        W->what = X_WORD;
    }
    if (check_value(P, L) < 0 || check_value(P, R) < 0)
        return -1;
    if (op != T_EQ && op != T_NE) {
        const operand *sides[2] = {L, R};
        for (int i = 0; i < 2; i++)
            if (cls_of(sides[i]) != RC_NUM)
                return fail(P, sides[i]->at, "expected a number on each side of '%s', found %s",
                            op_text(op), found_x(P, sides[i], b1, sizeof b1));
    }
    /* the typed side sets what the other must be */
    operand *T = L->what == X_PATH || R->what != X_PATH ? L : R;
    operand *O = T == L ? R : L;
    int mask = outcome_mask(op);
    if (T == R)
        mask = mirror(mask);
    int cls = cls_of(T);
    /* a case by its bare name, or as the message spells it: a JSON string
     * (unescaped) against an enum or a union's tag */
    if (O->what == X_WORD || (cls == RC_ENUM && O->what == X_STR)) {
        if (cls != RC_ENUM)
            return fail(P, O->at, "expected %s (to compare with %s), found %s",
                        expect_x(T, b1, sizeof b1), path_label(P, T, b2, sizeof b2),
                        found_x(P, O, b3, sizeof b3));
        int c = O->what == X_WORD ? case_of(T, P->t + O->at, O->end - O->at)
                                  : case_of(T, P->pool + O->str, O->k.s.n);
        if (c < 0)
            return not_a_case(P, T, O->at, O->end);
        int w = new_set(P, T->ncases);
        if (w < 0)
            return -1;
        set_bit(P, w, c);
        return set_node(P, T, T->ncases, w, op == T_NE);
    }
    if (cls_of(O) != cls || (cls == RC_ENUM && (strcmp(T->type, O->type) != 0 || T->ncases != O->ncases)))
        return fail(P, O->at, "expected %s (to compare with %s), found %s",
                    expect_x(T, b1, sizeof b1), path_label(P, T, b2, sizeof b2),
                    found_x(P, O, b3, sizeof b3));
    if (T->what != X_PATH) {
        /* two literals: the answer is known now */
        unsigned out;
        if (cls == RC_NUM)
            out = cmp_literals(P, T, O);
        else if (cls == RC_STR)
            out = T->k.s.n == O->k.s.n && memcmp(P->pool + T->str, P->pool + O->str, T->k.s.n) == 0
                      ? O_EQ
                      : O_LT;
        else
            out = T->k.b == O->k.b ? O_EQ : O_LT;
        return const_node(P, (out & (unsigned)mask) != 0);
    }
    if (O->what != X_PATH) {
        if (cls == RC_BOOL) {
            int w = new_set(P, 2);
            if (w < 0)
                return -1;
            set_bit(P, w, O->k.b);
            return set_node(P, T, 2, w, op == T_NE);
        }
        if (cls == RC_STR) {
            int it = add_item(P, O);
            int n = it < 0 ? -1 : new_node(P, RN_IN);
            if (n < 0)
                return -1;
            P->nodes[n].cls = RC_STR;
            P->nodes[n].a = T->path;
            P->nodes[n].items = it;
            P->nodes[n].nitems = 1;
            P->nodes[n].mask = op == T_NE;
            return n;
        }
    }
    if (O->what != X_PATH)
        exact_for_ints(O, T);
    int n = new_node(P, RN_CMP);
    if (n < 0)
        return -1;
    ru_node *nd = &P->nodes[n];
    nd->cls = (uint8_t)cls;
    nd->mask = (uint8_t)mask;
    nd->a = T->path;
    nd->af = is_double(T);
    nd->bf = is_double(O);
    nd->bpath = O->what == X_PATH;
    if (nd->bpath) {
        nd->b = O->path;
    } else {
        nd->k = O->k;
        nd->kres = (int8_t)O->res;
    }
    return n;
}

/* X in [ ... ] (the 'in' taken). */
static int compile_in(ps *P, operand *L)
{
    char b1[200], b2[200];
    if (L->what == X_WORD)
        return unknown_optic(P, L);
    if (L->what != X_PATH)
        return fail(P, L->at, "expected an optic before 'in', found %s", found_x(P, L, b1, sizeof b1));
    if (check_value(P, L) < 0)
        return -1;
    tok lb = take(P);
    if (lb.type == T_ERR)
        return -1;
    if (lb.type != T_LB)
        return fail(P, lb.at, "expected '[' after 'in', found %s", found_tok(P, &lb, b1, sizeof b1));
    P->open++;
    int cls = cls_of(L);
    int words = -1, first = P->nitems, count = 0;
    if (cls == RC_ENUM || cls == RC_BOOL) {
        words = new_set(P, cls == RC_BOOL ? 2 : L->ncases);
        if (words < 0)
            return -1;
    }
    const char *want = expect_x(L, b2, sizeof b2);
    if (peek(P).type == T_RB) {
        take(P);
    } else {
        for (;;) {
            tok k = peek(P);
            if (k.type == T_ERR)
                return -1;
            if (count == RU_MAX_LIST)
                return fail(P, k.at, "more than %d items in one list", RU_MAX_LIST);
            if (cls == RC_ENUM) {
                /* a case by its bare name, or as a JSON string */
                int c;
                if (k.type == T_STR) {
                    operand x;
                    if (parse_operand(P, &x, want) < 0)
                        return -1;
                    c = case_of(L, P->pool + x.str, x.k.s.n);
                } else {
                    take(P);
                    if (k.type != T_IDENT)
                        return fail(P, k.at, "expected %s, found %s", want,
                                    found_tok(P, &k, b1, sizeof b1));
                    c = case_of(L, P->t + k.at, k.end - k.at);
                }
                if (c < 0)
                    return not_a_case(P, L, k.at, k.end);
                set_bit(P, words, c);
            } else {
                operand x;
                if (k.type != T_NUM && k.type != T_STR && !is_word(P, &k, "true") &&
                    !is_word(P, &k, "false")) {
                    take(P);
                    return fail(P, k.at, "expected %s, found %s", want, found_tok(P, &k, b1, sizeof b1));
                }
                if (parse_operand(P, &x, want) < 0)
                    return -1;
                if (cls_of(&x) != cls)
                    return fail(P, x.at, "expected %s, found %s", want, found_x(P, &x, b1, sizeof b1));
                exact_for_ints(&x, L);
                if (cls == RC_BOOL)
                    set_bit(P, words, x.k.b);
                else if (add_item(P, &x) < 0)
                    return -1;
            }
            count++;
            tok s = take(P);
            if (s.type == T_ERR)
                return -1;
            if (s.type == T_RB)
                break;
            if (s.type != T_COMMA)
                return fail(P, s.at, "expected ',' or ']', found %s", found_tok(P, &s, b1, sizeof b1));
        }
    }
    P->open--;
    if (words >= 0)
        return set_node(P, L, cls == RC_BOOL ? 2 : L->ncases, words, false);
    int n = new_node(P, RN_IN);
    if (n < 0)
        return -1;
    P->nodes[n].cls = (uint8_t)cls;
    P->nodes[n].a = L->path;
    P->nodes[n].af = is_double(L);
    P->nodes[n].items = first;
    P->nodes[n].nitems = P->nitems - first;
    return n;
}

static int parse_or(ps *P, int depth);

/* has(PATH) (the 'has' taken). */
static int parse_has(ps *P)
{
    char b1[200];
    take(P); /* the '(' has_call saw */
    P->open++;
    operand x;
    if (parse_operand(P, &x, "an optic") < 0)
        return -1;
    if (x.what == X_WORD)
        return unknown_optic(P, &x);
    if (x.what != X_PATH)
        return fail(P, x.at, "expected an optic in has(), found %s", found_x(P, &x, b1, sizeof b1));
    tok rp = take(P);
    if (rp.type == T_ERR)
        return -1;
    if (rp.type != T_RP)
        return fail(P, rp.at, "expected ')' to close has(, found %s", found_tok(P, &rp, b1, sizeof b1));
    P->open--;
    int n = new_node(P, RN_HAS);
    if (n >= 0)
        P->nodes[n].a = x.path;
    return n;
}

/* has( is the function when '(' follows the word, spaces between or not. */
static bool has_call(ps *P, const tok *k)
{
    if (!is_word(P, k, "has"))
        return false;
    size_t p = k->end;
    while (p < P->n && (P->t[p] == ' ' || P->t[p] == '\t'))
        p++;
    return p < P->n && P->t[p] == '(';
}

static int parse_primary(ps *P, int depth)
{
    char b1[200], b2[200];
    tok k = peek(P);
    if (k.type == T_ERR)
        return -1;
    if (k.type == T_LP) {
        if (depth >= RU_MAX_DEPTH)
            return fail(P, k.at, "more than %d parentheses nested", RU_MAX_DEPTH);
        take(P);
        P->open++;
        int e = parse_or(P, depth + 1);
        if (e < 0)
            return -1;
        tok rp = take(P);
        if (rp.type == T_ERR)
            return -1;
        if (rp.type != T_RP)
            return fail(P, rp.at, "expected '&&', '||' or ')', found %s", found_tok(P, &rp, b1, sizeof b1));
        P->open--;
        return e;
    }
    if (has_call(P, &k)) {
        take(P);
        return parse_has(P);
    }
    operand L;
    if (parse_operand(P, &L, "an optic, a value, '!' or '('") < 0)
        return -1;
    tok op = peek(P);
    if (op.type == T_ERR)
        return -1;
    if (op.type >= T_EQ && op.type <= T_GE) {
        take(P);
        operand R;
        snprintf(b2, sizeof b2, "an optic or a value after '%s'", op_text(op.type));
        if (parse_operand(P, &R, b2) < 0)
            return -1;
        return compile_cmp(P, &L, op.type, &R);
    }
    if (is_word(P, &op, "in")) {
        take(P);
        return compile_in(P, &L);
    }
    if (op.type == T_BAD && P->t[op.at] == '=')
        return fail(P, op.at, "expected '==', found '='");
    /* an operand alone: a condition when it is a bool */
    if (L.what == X_WORD)
        return unknown_optic(P, &L);
    if (L.what == X_BOOL)
        return const_node(P, L.k.b);
    if (L.what == X_PATH && L.kind == OP_BOOL) {
        int n = new_node(P, RN_TRUTH);
        if (n >= 0)
            P->nodes[n].a = L.path;
        return n;
    }
    if (check_value(P, &L) < 0)
        return -1;
    if (L.what == X_PATH)
        return fail(P, L.at, "expected a condition, found %s: compare it, or test has(%s)",
                    found_x(P, &L, b1, sizeof b1), path_label(P, &L, b2, sizeof b2));
    return fail(P, L.at, "expected a condition, found %s", found_x(P, &L, b1, sizeof b1));
}

static int parse_unary(ps *P, int depth)
{
    bool neg = false;
    while (peek(P).type == T_NOT) {
        take(P);
        neg = !neg;
    }
    int e = parse_primary(P, depth);
    if (e < 0 || !neg)
        return e;
    int n = new_node(P, RN_NOT);
    if (n >= 0)
        P->nodes[n].kid = e;
    return n;
}

/* AND or OR: operands chained by next, iteratively (no recursion on length). */
static int parse_chain(ps *P, int depth, int op)
{
    int sep = op == RN_AND ? T_AND : T_OR;
    int first = op == RN_AND ? parse_unary(P, depth) : parse_chain(P, depth, RN_AND);
    if (first < 0 || peek(P).type != sep)
        return first;
    int n = new_node(P, op);
    if (n < 0)
        return -1;
    P->nodes[n].kid = first;
    int last = first;
    while (peek(P).type == sep) {
        take(P);
        int k = op == RN_AND ? parse_unary(P, depth) : parse_chain(P, depth, RN_AND);
        if (k < 0)
            return -1;
        P->nodes[last].next = k;
        last = k;
    }
    return n;
}

static int parse_or(ps *P, int depth) { return parse_chain(P, depth, RN_OR); }

/* The text's bytes: UTF-8, and not too many lines. */
static bool check_text(ps *P)
{
    const unsigned char *t = (const unsigned char *)P->t;
    size_t n = P->n;
    if (n > RU_MAX_BYTES) {
        fail(P, RU_MAX_BYTES, "the text goes on past %u bytes, the limit for rules", RU_MAX_BYTES);
        return false;
    }
    int lines = 1;
    size_t i = 0;
    while (i < n) {
        unsigned c = t[i];
        if (c < 0x80) {
            if (c == '\n' && i + 1 < n && ++lines > RU_MAX_LINES) {
                fail(P, i + 1, "more than %d lines, the limit for rules", RU_MAX_LINES);
                return false;
            }
            i++;
            continue;
        }
        size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        bool ok = len != 0 && i + len <= n;
        for (size_t j = 1; ok && j < len; j++)
            ok = (t[i + j] & 0xC0) == 0x80;
        if (ok && len == 3)
            ok = !(c == 0xE0 && t[i + 1] < 0xA0) && !(c == 0xED && t[i + 1] >= 0xA0);
        if (ok && len == 4)
            ok = !(c == 0xF0 && t[i + 1] < 0x90) && !(c == 0xF4 && t[i + 1] >= 0x90);
        if (!ok) {
            fail(P, i, "invalid UTF-8 (byte 0x%02X)", c);
            return false;
        }
        i += len;
    }
    return true;
}

static bool parse_rules(ps *P)
{
    char b1[200];
    for (;;) {
        tok k = take(P);
        if (k.type == T_ERR)
            return false;
        if (!P->where && k.type == T_NL)
            continue;
        if (!P->where && k.type == T_EOF)
            return true;
        bool keep = true;
        if (!P->where) {
            if (!is_word(P, &k, "keep") && !is_word(P, &k, "drop")) {
                fail(P, k.at, "expected 'keep' or 'drop', found %s", found_tok(P, &k, b1, sizeof b1));
                return false;
            }
            keep = is_word(P, &k, "keep");
        } else {
            P->have = true; /* the expression starts at k */
            P->look = k;
        }
        int e = parse_or(P, 0);
        if (e < 0)
            return false;
        tok end = take(P);
        if (end.type == T_ERR)
            return false;
        if (end.type != T_NL && end.type != T_EOF) {
            fail(P, end.at, "expected '&&', '||' or %s, found %s",
                 P->where ? "the end" : "end of line", found_tok(P, &end, b1, sizeof b1));
            return false;
        }
        if (!grow(P, (void **)&P->rules, &P->crules, P->nrules + 1, sizeof *P->rules))
            return false;
        P->rules[P->nrules++] = (ru_rule){keep, k.line, e, RU_UNGUARDED};
        if (end.type == T_EOF)
            return true;
    }
}

static size_t align16(size_t n) { return (n + 15u) & ~(size_t)15u; }

/* The set test rule i's expression begins with (the expression itself, or
 * the first operand of its &&), *rest the conjuncts after it; or -1. */
static int leading_set(const ps *P, int i, int *rest)
{
    const ru_node *n = &P->nodes[P->rules[i].expr];
    if (n->op == RN_SET) {
        *rest = -1;
        return P->rules[i].expr;
    }
    if (n->op == RN_AND && n->kid >= 0 && P->nodes[n->kid].op == RN_SET) {
        *rest = P->nodes[n->kid].next;
        return n->kid;
    }
    return -1;
}

static bool same_path(const ps *P, const ru_path *a, const ru_path *b)
{
    if (a->optic != b->optic || a->nsteps != b->nsteps)
        return false;
    for (int s = 0; s < a->nsteps; s++)
        if (P->steps[a->step + s] != P->steps[b->step + s])
            return false;
    return true;
}

/* The index's rows (ru_rules): 0 when the rules get none. */
static int index_rows(const ps *P)
{
    int rest;
    int g = P->nrules > 0 && P->nrules <= 64 ? leading_set(P, 0, &rest) : -1;
    if (g < 0 || P->nodes[g].nitems > RU_INDEX_CASES)
        return 0;
    return P->nodes[g].nitems + 1;
}

/* Fills the index's rows and each rule's rest (nrow > 0); returns the
 * first rule's leading set test. */
static int build_index(const ps *P, ru_rule *rules, int nrow, uint64_t *rows)
{
    int rest, guard = leading_set(P, 0, &rest);
    const ru_node *g0 = &P->nodes[guard];
    memset(rows, 0, (size_t)nrow * sizeof *rows);
    for (int i = 0; i < P->nrules; i++) {
        int g = leading_set(P, i, &rest);
        if (g >= 0 && same_path(P, &P->nodes[g].a, &g0->a)) {
            const ru_node *n = &P->nodes[g];
            rules[i].rest = rest;
            for (int x = 0; x < nrow - 1 && x < n->nitems; x++)
                if (P->words[n->items + x / 64] >> (x % 64) & 1u)
                    rows[x] |= 1ull << i;
        } else {
            rules[i].rest = RU_UNGUARDED;
            for (int x = 0; x < nrow; x++)
                rows[x] |= 1ull << i;
        }
    }
    return guard;
}

/* The optics the rules read from the message's root, in one walk of it
 * (level.h) when there are at least two: the root optics they read and the
 * raw bases of the others, those with a first member, in schema order,
 * each into the plan when it fits (four first bytes at most). An object
 * below the root (a base's value) is walked again for each optic: it is
 * small, and its members near its start, where a walk for several keys
 * stops at more strings than it saves (the demo's detail: 71 ns a message
 * by the optics' own scanners, 122-124 by one walk; docs/rules.md). */
static void share_root_walk(const ps *P, ru_rules *r)
{
    lv_plan_init(&r->lv, P->s);
    r->lv_off = false;
    memset(r->lvj, -1, sizeof r->lvj);
    for (int i = 0; i < P->s->noptics; i++) {
        const op_optic *o = &P->s->optics[i];
        if (P->uses[i] > 0 && o->source_is_root && readable(P->s, i) &&
            o->member.mode != OP_M_NONE)
            (void)lv_plan_add(&r->lv, i);
    }
    if (r->lv.n < 2) {
        lv_plan_init(&r->lv, P->s);
        return;
    }
    for (int j = 0; j < r->lv.n; j++)
        r->lvj[r->lv.optic[j]] = (int8_t)j;
}

/* The parser's arrays, moved into one block. */
static ru_rules *compact(ps *P)
{
    size_t o_rules = align16(sizeof(ru_rules));
    size_t o_nodes = o_rules + align16((size_t)P->nrules * sizeof(ru_rule));
    size_t o_items = o_nodes + align16((size_t)P->nnodes * sizeof(ru_node));
    size_t o_steps = o_items + align16((size_t)P->nitems * sizeof(ru_item));
    size_t o_words = o_steps + align16((size_t)P->nsteps * sizeof(op_field *));
    int nrow = index_rows(P);
    size_t o_rows = o_words + align16((size_t)P->nwords * sizeof(uint64_t));
    size_t o_pool = o_rows + align16((size_t)nrow * sizeof(uint64_t));
    size_t total = o_pool + P->npool + 1;
    char *b = malloc(total);
    if (b == NULL) {
        fail(P, 0, "out of memory");
        return NULL;
    }
    ru_rules *r = (ru_rules *)(void *)b;
    ru_rule *rules = (ru_rule *)(void *)(b + o_rules);
    ru_node *nodes = (ru_node *)(void *)(b + o_nodes);
    ru_item *items = (ru_item *)(void *)(b + o_items);
    const op_field **steps = (const op_field **)(void *)(b + o_steps);
    uint64_t *words = (uint64_t *)(void *)(b + o_words);
    uint64_t *rows = (uint64_t *)(void *)(b + o_rows);
    char *pool = b + o_pool;
    if (P->nrules)
        memcpy(rules, P->rules, (size_t)P->nrules * sizeof *rules);
    if (P->nnodes)
        memcpy(nodes, P->nodes, (size_t)P->nnodes * sizeof *nodes);
    if (P->nitems)
        memcpy(items, P->items, (size_t)P->nitems * sizeof *items);
    if (P->nsteps)
        memcpy(steps, P->steps, (size_t)P->nsteps * sizeof *steps);
    if (P->nwords)
        memcpy(words, P->words, (size_t)P->nwords * sizeof *words);
    if (P->npool)
        memcpy(pool, P->pool, P->npool);
    pool[P->npool] = '\0';
    for (int i = 0; i < P->nnodes; i++)
        if (nodes[i].op == RN_IN && nodes[i].cls == RC_STR)
            for (int j = 0; j < nodes[i].nitems; j++)
                items[nodes[i].items + j].v.s.p = pool + items[nodes[i].items + j].str;
    r->schema = P->s;
    r->nrules = P->nrules;
    r->nnodes = P->nnodes;
    r->tried = 0;
    for (int i = 0; i < P->nrules; i++)
        if (rules[i].keep)
            r->tried = i + 1;
    r->used = used_bits(P);
    r->rules = rules;
    r->nodes = nodes;
    r->items = items;
    r->steps = steps;
    r->words = words;
    r->pool = pool;
    r->nrow = nrow;
    r->rows = rows;
    r->guard = nrow > 0 ? &nodes[build_index(P, rules, nrow, rows)] : NULL;
    share_root_walk(P, r);
    return r;
}

/* FNV-1a over the text, and whether it is one --where expression. */
static uint64_t fingerprint(const char *text, size_t n, bool where)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)where;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
    return h;
}

static ru_rules *parse(const char *text, size_t n, const char *name, const op_schema *s,
                       bool where, char *err, size_t errlen)
{
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    if (!schema_fits(s, name, err, errlen))
        return NULL;
    ps P;
    memset(&P, 0, sizeof P);
    P.t = text;
    P.n = n;
    P.name = name;
    P.s = s;
    P.err = err;
    P.errlen = errlen;
    P.where = where;
    P.line = 1;
    ru_rules *r = NULL;
    if (check_text(&P)) {
        P.pool = malloc(n + 1); /* unescaped strings are never longer than the text */
        if (P.pool == NULL)
            fail(&P, 0, "out of memory");
        else if (parse_rules(&P))
            r = compact(&P);
    }
    if (r != NULL)
        r->print = fingerprint(text, n, where);
    free(P.pool);
    free(P.nodes);
    free(P.items);
    free(P.steps);
    free(P.words);
    free(P.rules);
    return r;
}

ru_rules *ru_parse(const char *text, size_t n, const char *name, const op_schema *s, char *err,
                   size_t errlen)
{
    return parse(text, n, name, s, false, err, errlen);
}

ru_rules *ru_where(const char *expr, const char *name, const op_schema *s, char *err,
                   size_t errlen)
{
    return parse(expr, strlen(expr), name, s, true, err, errlen);
}

char *ru_read_file(const char *path, size_t limit, size_t *n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        tr_say(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    /* fopen takes a directory; reading it then fails with EISDIR */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        tr_say(err, errlen, "%s: cannot read: is a directory", path);
        return NULL;
    }
    /* one byte past the limit, so that the caller sees a longer file */
    size_t cap = limit + 1;
    char *buf = malloc(cap);
    if (buf == NULL) {
        fclose(f);
        tr_say(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    *n = 0;
    while (*n < cap) {
        size_t got = fread(buf + *n, 1, cap - *n, f);
        if (got == 0)
            break;
        *n += got;
    }
    int failed = ferror(f) ? errno : 0;
    fclose(f);
    if (failed) {
        free(buf);
        tr_say(err, errlen, "%s: cannot read: %s", path, strerror(failed));
        return NULL;
    }
    return buf;
}

ru_rules *ru_load(const char *path, const op_schema *s, char *err, size_t errlen)
{
    size_t n;
    char *buf = ru_read_file(path, RU_MAX_BYTES, &n, err, errlen);
    if (buf == NULL)
        return NULL;
    ru_rules *r = ru_parse(buf, n, path, s, err, errlen);
    free(buf);
    return r;
}

void ru_free(ru_rules *r) { free(r); }

int ru_count(const ru_rules *r) { return r->nrules; }

bool ru_rule_keeps(const ru_rules *r, int i) { return r->rules[i].keep; }

int ru_rule_line(const ru_rules *r, int i) { return r->rules[i].line; }

uint64_t ru_optics_used(const ru_rules *r) { return r->used; }

uint64_t ru_fingerprint(const ru_rules *r) { return r->print; }

const op_schema *ru_rules_schema(const ru_rules *r) { return r->schema; }

bool ru_compiled_fits(const ru_compiled *c, const ru_rules *r)
{
    return c != NULL && c->judge != NULL && c->decide != NULL && r != NULL &&
           c->schema == r->schema && c->print == r->print && c->nrules == r->nrules;
}

/* ==================================================== the subject ===== */

int ru_how(const op_schema *s, int i)
{
    const op_optic *o = &s->optics[i];
    if (!readable(s, i))
        return RU_NEVER;
    if (o->source_is_root)
        return RU_ROOT;
    return s->optics[o->base].seek != NULL ? RU_SEEK : RU_BASE;
}

bool ru_subject_init(ru_subject *subj, const op_schema *s, ar_arena *a)
{
    memset(subj, 0, offsetof(ru_subject, scratch));
    subj->schema = s;
    subj->arena = a;
    uint16_t at[RU_MAX_OPTICS];
    size_t total;
    if (s->noptics > RU_MAX_OPTICS || !scratch_plan(s, at, &total))
        return false;
    for (int i = 0; i < s->noptics; i++) {
        const op_optic *o = &s->optics[i];
        ru_slot *sl = &subj->slot[i];
        sl->at = at[i];
        sl->scan = o->scan;
        sl->base = o->base;
        sl->how = (uint8_t)ru_how(s, i);
    }
    return true;
}

void ru_subject_wrap(ru_subject *subj)
{
    for (int i = 0; i < RU_MAX_OPTICS; i++)
        subj->slot[i].seen = subj->slot[i].sought = 0;
    subj->lv_gen = 0;
    subj->gen = 1;
}

/* As ru_subject_bytes (rules.h), for a decoded root; the arena is left as
 * it is (a caller may have decoded the root into it). */
void ru_subject_model(ru_subject *subj, const void *root)
{
    ru_subject_next(subj, true, NULL, 0, root);
}

/* A read hands back the cached value itself, never a copy: a scanner has
 * just written part of it (an enum's 4 bytes, say), and a whole-value copy
 * right after would have to wait for those stores (a load wider than the
 * store it reads from is not forwarded); the field the rule reads is. */
static const op_value *fill(ru_subject *subj, int i);

/* The walk of the message's root the rules' root optics share (level.h),
 * begun for this message when it is first needed. */
static lv_state *root_walk(ru_subject *subj)
{
    if (subj->lv_gen != subj->gen) {
        const uint8_t *end = subj->n != 0 ? subj->p + subj->n : subj->p;
        lv_reset(&subj->lvs, js_ws(subj->p, end), end);
        subj->lv_gen = subj->gen;
    }
    return &subj->lvs;
}

const op_value *ru_shared_read(ru_subject *subj, int i)
{
    ru_slot *s = &subj->slot[i];
    memset(&s->val, 0, sizeof s->val);
    return ru_c_done(subj, s,
                     lv_read(subj->lv, root_walk(subj), subj->lvj[i], false, &s->val,
                             s->at ? subj->scratch + s->at - 1 : NULL, subj->arena));
}

const uint8_t *ru_shared_seek(ru_subject *subj, int b)
{
    op_value v;
    return lv_read(subj->lv, root_walk(subj), subj->lvj[b], true, &v, NULL, NULL) ? v.bytes.p
                                                                                   : NULL;
}

/* Caching an outcome and scanning into a slot: rules_compiled.h's
 * ru_c_done and ru_c_scan, which the rules written as C call too. */
static inline const op_value *filled(ru_subject *subj, ru_slot *s, bool hit)
{
    return ru_c_done(subj, s, hit);
}

static inline const op_value *scan_into(ru_subject *subj, ru_slot *s, const uint8_t *p, size_t n)
{
    return ru_c_scan(subj, s, s->scan, p, n);
}

/* Optic s read from where its raw base b starts (sought), to the
 * message's end: a miss when the base is absent. */
static inline const op_value *from_start(ru_subject *subj, ru_slot *s, const ru_slot *b)
{
    if (b->start == NULL)
        return filled(subj, s, false);
    return scan_into(subj, s, b->start, (size_t)(subj->p + subj->n - b->start));
}

/* Optic i's value in the current message, or NULL for a miss. In line: the
 * cache, and the usual read, through a raw base already sought; the rest in
 * fill. */
static inline const op_value *read_optic(ru_subject *subj, int i)
{
    ru_slot *s = &subj->slot[i];
    uint32_t g = subj->gen;
    if (s->seen == g)
        return s->hit ? &s->val : NULL;
    if (s->how == RU_SEEK) {
        const ru_slot *b = &subj->slot[s->base];
        if (b->sought == g && b->seen != g && !subj->model)
            return from_start(subj, s, b);
    }
    return fill(subj, i);
}

/* Reads optic i (readable) into the cache: from the decoded root (its
 * getter, on its base's value when it has one); from the message's bytes at
 * the root, or through a raw base (sought once a message, its end never
 * looked for), or through a base read whole or seeded. */
static __attribute__((noinline)) const op_value *fill(ru_subject *subj, int i)
{
    const op_optic *o = &subj->schema->optics[i];
    ru_slot *s = &subj->slot[i];
    if (subj->model) {
        memset(&s->val, 0, sizeof s->val);
        if (o->source_is_root)
            return filled(subj, s, o->get(subj->root, &s->val));
        const op_value *b = read_optic(subj, o->base);
        return filled(subj, s, b != NULL && o->get(b->ptr, &s->val));
    }
    if (s->how == RU_ROOT)
        return subj->lv != NULL && subj->lvj[i] >= 0 ? ru_shared_read(subj, i)
                                                      : scan_into(subj, s, subj->p, subj->n);
    ru_slot *b = &subj->slot[s->base];
    if (s->how == RU_SEEK && b->seen != subj->gen) {
        if (b->sought != subj->gen) {
            op_value v;
            if (subj->lv != NULL && subj->lvj[s->base] >= 0)
                b->start = ru_shared_seek(subj, s->base);
            else
                b->start =
                    subj->schema->optics[s->base].seek(subj->p, subj->n, &v) ? v.bytes.p : NULL;
            b->sought = subj->gen;
            subj->reads++;
        }
        return from_start(subj, s, b);
    }
    /* through a base read whole (or seeded): its bytes exactly */
    const op_value *bv = read_optic(subj, s->base);
    return bv != NULL ? scan_into(subj, s, bv->bytes.p, bv->bytes.n) : filled(subj, s, false);
}

const op_value *ru_value(ru_subject *subj, int optic)
{
    if (optic < 0 || optic >= subj->schema->noptics || subj->slot[optic].how == RU_NEVER)
        return NULL;
    return read_optic(subj, optic);
}

bool ru_read(ru_subject *subj, int optic, op_value *out)
{
    const op_value *v = ru_value(subj, optic);
    if (v != NULL)
        *out = *v;
    return v != NULL;
}

/* A path's value (its optic's, then each .field step's, into tmp), or NULL. */
static inline __attribute__((always_inline)) const op_value *
read_path(const ru_rules *r, ru_subject *subj, const ru_path *p, op_value *tmp)
{
    const op_value *v = read_optic(subj, p->optic);
    for (int s = 0; s < p->nsteps && v != NULL; s++)
        v = r->steps[p->step + s]->get(v->ptr, tmp) ? tmp : NULL; /* ptr read before tmp is written */
    return v;
}

/* The bit a value stands for in set node n's cases (bools: 1 for true). */
static inline unsigned set_bit_of(const ru_node *n, const op_value *v)
{
    return n->cls == RC_BOOL ? (unsigned)v->b : (unsigned)v->e;
}

/* An enum, tag or bool in a set of cases: the commonest node, tested in
 * line by the && and || loops, without a call and a switch each. */
static inline bool eval_set(const ru_rules *r, ru_subject *subj, const ru_node *n)
{
    op_value t;
    const op_value *a = read_path(r, subj, &n->a, &t);
    if (a == NULL)
        return false;
    unsigned x = set_bit_of(n, a);
    return x < (unsigned)n->nitems && (r->words[n->items + (int)(x / 64)] >> (x % 64) & 1u);
}

static bool eval(const ru_rules *r, ru_subject *subj, int i);

static inline bool eval_kid(const ru_rules *r, ru_subject *subj, int k)
{
    const ru_node *n = &r->nodes[k];
    return n->op == RN_SET ? eval_set(r, subj, n) : eval(r, subj, k);
}

static bool eval(const ru_rules *r, ru_subject *subj, int i)
{
    const ru_node *n = &r->nodes[i];
    op_value ta, tb;
    const op_value *a, *b;
    switch (n->op) {
    case RN_AND:
        for (int k = n->kid; k >= 0; k = r->nodes[k].next)
            if (!eval_kid(r, subj, k))
                return false;
        return true;
    case RN_OR:
        for (int k = n->kid; k >= 0; k = r->nodes[k].next)
            if (eval_kid(r, subj, k))
                return true;
        return false;
    case RN_NOT:
        return !eval_kid(r, subj, n->kid);
    case RN_CONST:
        return n->mask != 0;
    case RN_HAS:
        return read_path(r, subj, &n->a, &ta) != NULL;
    case RN_TRUTH:
        a = read_path(r, subj, &n->a, &ta);
        return a != NULL && a->b;
    case RN_SET:
        return eval_set(r, subj, n);
    case RN_IN: {
        if ((a = read_path(r, subj, &n->a, &ta)) == NULL)
            return false;
        bool found = false;
        for (int k = 0; k < n->nitems && !found; k++) {
            const ru_item *it = &r->items[n->items + k];
            if (n->cls == RC_STR)
                found = a->s.n == it->v.s.n &&
                        (a->s.n == 0 || memcmp(a->s.p, it->v.s.p, a->s.n) == 0);
            else
                found = cmp_num(a, n->af, &it->v, it->f, it->res) == O_EQ;
        }
        return found != (n->mask != 0);
    }
    default: { /* RN_CMP */
        if ((a = read_path(r, subj, &n->a, &ta)) == NULL)
            return false;
        if (n->bpath) {
            if ((b = read_path(r, subj, &n->b, &tb)) == NULL)
                return false;
        } else {
            b = &n->k;
        }
        unsigned out;
        switch (n->cls) {
        case RC_NUM: out = cmp_num(a, n->af, b, n->bf, n->bpath ? 0 : n->kres); break;
        case RC_STR:
            out = a->s.n == b->s.n && (a->s.n == 0 || memcmp(a->s.p, b->s.p, a->s.n) == 0) ? O_EQ
                                                                                         : O_LT;
            break;
        case RC_ENUM: out = a->e == b->e ? O_EQ : O_LT; break;
        default: out = a->b == b->b ? O_EQ : O_LT; break;
        }
        return (out & n->mask) != 0;
    }
    }
}

const op_value *ru_step(const ru_rules *r, int step, const op_value *v, op_value *tmp)
{
    return r->steps[step]->get(v->ptr, tmp) ? tmp : NULL;
}

bool ru_eval_node(const ru_rules *r, ru_subject *subj, int node)
{
    return eval_kid(r, subj, node);
}

/* The index's candidates for the current message (nrow > 0): the row of
 * the case the guard's path reads. */
static inline uint64_t candidates(const ru_rules *r, ru_subject *subj)
{
    const ru_node *g = r->guard;
    op_value t;
    const op_value *v = read_path(r, subj, &g->a, &t);
    unsigned x = (unsigned)r->nrow - 1;
    if (v != NULL) {
        unsigned c = set_bit_of(g, v);
        if (c < x)
            x = c;
    }
    return r->rows[x];
}

/* A candidate of the index holds: its leading test is known to. */
static inline bool holds_rest(const ru_rules *r, ru_subject *subj, const ru_rule *rule)
{
    if (rule->rest == RU_UNGUARDED)
        return eval_kid(r, subj, rule->expr);
    for (int k = rule->rest; k >= 0; k = r->nodes[k].next)
        if (!eval_kid(r, subj, k))
            return false;
    return true;
}

/* The first rule among [0, limit) that holds, or -1; through the index
 * when the rules have one and indexed is set. */
static inline int first_holding(const ru_rules *r, ru_subject *subj, int limit, bool indexed)
{
    if (indexed && r->nrow > 0) {
        if (limit == 0) /* nothing to try: read nothing */
            return -1;
        /* an index has at most 64 rules */
        uint64_t bits = limit >= 64 ? ~0ull : (1ull << limit) - 1;
        for (uint64_t c = candidates(r, subj) & bits; c != 0; c &= c - 1) {
            int i = __builtin_ctzll(c);
            if (holds_rest(r, subj, &r->rules[i]))
                return i;
        }
        return -1;
    }
    for (int i = 0; i < limit; i++)
        if (eval_kid(r, subj, r->rules[i].expr))
            return i;
    return -1;
}

int ru_root_walk(const ru_rules *r) { return r->lv_off ? 0 : r->lv.n; }

void ru_share_root_walk(ru_rules *r, bool on) { r->lv_off = !on; }

bool ru_enter(const ru_rules *r, ru_subject *subj)
{
    if (subj->schema != r->schema)
        return false; /* its optic indexes mean nothing here */
    subj->lv = r->lv.n > 0 && !r->lv_off && !subj->model ? &r->lv : NULL;
    subj->lvj = r->lvj;
    return !subj->model;
}

int ru_decide(const ru_rules *r, ru_subject *subj)
{
    if (subj->schema != r->schema)
        return -1;
    (void)ru_enter(r, subj);
    return first_holding(r, subj, r->nrules, true);
}

int ru_decide_in_turn(const ru_rules *r, ru_subject *subj)
{
    if (subj->schema != r->schema)
        return -1;
    (void)ru_enter(r, subj);
    return first_holding(r, subj, r->nrules, false);
}

bool ru_judge(const ru_rules *r, ru_subject *subj)
{
    if (subj->schema != r->schema) /* its optic indexes mean nothing here */
        return false;
    (void)ru_enter(r, subj);
    int i = first_holding(r, subj, r->tried, true);
    return i >= 0 && r->rules[i].keep;
}

/* ===================================================== printing ===== */

size_t ru_format(const op_optic *o, const op_value *v, bool from_model, char *buf, size_t n)
{
    if (n == 0)
        return 0;
    uint8_t *w = (uint8_t *)buf, *wend = w + n - 1; /* room for the NUL */
    switch (o->kind) {
    case OP_BOOL:
        w = js_put_raw(w, wend, v->b ? "true" : "false", v->b ? 4 : 5);
        break;
    case OP_I32:
    case OP_I64:
        w = js_put_i64(w, wend, v->i);
        break;
    case OP_F64:
        w = js_put_f64(w, wend, v->f);
        break;
    case OP_STRING:
        w = js_put_string(w, wend, v->s.p, v->s.n);
        break;
    case OP_ENUM:
    case OP_TAG:
        w = v->e >= 0 && v->e < o->ncases ? js_put_raw(w, wend, o->cases[v->e].p, o->cases[v->e].n)
                                          : NULL;
        break;
    case OP_RECORD:
        w = o->encode != NULL ? o->encode(w, wend, v->ptr) : NULL;
        break;
    case OP_RAW:
        if (from_model)
            w = o->encode != NULL ? o->encode(w, wend, v->ptr) : NULL;
        else
            w = js_put_compact(w, wend, v->bytes.p, v->bytes.n);
        break;
    }
    if (w == NULL) {
        buf[0] = '\0';
        return 0;
    }
    *w = '\0';
    return (size_t)(w - (uint8_t *)buf);
}
