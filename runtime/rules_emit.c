/* rules_emit.c: rules written out as C (rules.h: ru_emit_c).
 *
 * The C follows the interpreter (rules.c: first_holding, eval) step for
 * step, so the same rule decides and the same optics are read, in the same
 * order, into the same subject: each node of the compiled form becomes an
 * always-inline function (NAME_n_K for node K), each optic a read (NAME_o_I)
 * through rules_compiled.h with its scanner named, and the index a switch on
 * the guard's case whose arms try that case's candidates in order; only
 * the reads the nodes call are written. Every name written starts with
 * NAME, so the C of several rules files may be compiled as one file. What
 * it does not write out (comparisons of strings, doubles, two paths, 'in'
 * lists, sets past 64 cases) calls ru_eval_node on that node. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rules_impl.h"

typedef struct {
    FILE *f;
    const ru_rules *r;
    const char *px; /* the name: every function written is NAME_... */
    uint8_t *done;  /* NAME_n_K written */
    uint8_t *used;  /* NAME_o_I called */
} em;

static bool is_identifier(const char *s)
{
    if (s == NULL || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/* Text for a comment: printable ASCII, no comment end. */
static void comment_text(FILE *f, const char *s)
{
    for (; s != NULL && *s; s++)
        fputc(*s >= ' ' && *s <= '~' && !(*s == '*' && s[1] == '/') ? *s : '?', f);
}

/* Reads path p into `const op_value *v` (with `op_value t` for its steps). */
static void read_path(em *E, const ru_path *p)
{
    E->used[p->optic] = 1;
    fprintf(E->f, "    op_value t;\n    const op_value *v = %s_o_%d(s);\n", E->px, p->optic);
    for (int k = 0; k < p->nsteps; k++)
        fprintf(E->f, "    if (v != NULL)\n        v = ru_step(r, %d, v, &t);\n", p->step + k);
    if (p->nsteps == 0)
        fputs("    (void)t;\n", E->f);
}

static const char *const head =
    "static inline __attribute__((always_inline, unused)) bool %s_n_%d(const ru_rules *r, ru_subject *s)\n"
    "{\n    (void)r;\n    (void)s;\n";

/* The value a set test tries: a bool's 0 or 1, else the case. */
static const char *set_member(const ru_node *n) { return n->cls == RC_BOOL ? "b" : "e"; }

static void emit_node(em *E, int k);

/* n_K for each operand of an && or || first. */
static void emit_kids(em *E, const ru_node *n)
{
    for (int k = n->kid; k >= 0; k = E->r->nodes[k].next)
        emit_node(E, k);
}

/* `n_a(r, s) OP n_b(r, s) ...` over the chain from node k; empty when none. */
static void chain(em *E, int k, const char *op, const char *none)
{
    if (k < 0) {
        fputs(none, E->f);
        return;
    }
    for (bool first = true; k >= 0; k = E->r->nodes[k].next, first = false)
        fprintf(E->f, "%s%s_n_%d(r, s)", first ? "" : op, E->px, k);
}

static void emit_node(em *E, int k)
{
    if (E->done[k])
        return;
    E->done[k] = 1;
    const ru_node *n = &E->r->nodes[k];
    FILE *f = E->f;
    if (n->op == RN_AND || n->op == RN_OR || n->op == RN_NOT)
        emit_kids(E, n);
    fprintf(f, head, E->px, k);
    switch (n->op) {
    case RN_AND:
    case RN_OR:
        fputs("    return ", f);
        chain(E, n->kid, n->op == RN_AND ? " && " : " || ", n->op == RN_AND ? "true" : "false");
        fputs(";\n", f);
        break;
    case RN_NOT: fprintf(f, "    return !%s_n_%d(r, s);\n", E->px, n->kid); break;
    case RN_CONST: fprintf(f, "    return %s;\n", n->mask != 0 ? "true" : "false"); break;
    case RN_HAS:
        read_path(E, &n->a);
        fputs("    return v != NULL;\n", f);
        break;
    case RN_TRUTH:
        read_path(E, &n->a);
        fputs("    return v != NULL && v->b;\n", f);
        break;
    case RN_SET:
        if (n->nitems > 64) {
            fprintf(f, "    return ru_eval_node(r, s, %d);\n", k);
            break;
        }
        read_path(E, &n->a);
        fprintf(f,
                "    if (v == NULL)\n        return false;\n"
                "    unsigned x = (unsigned)v->%s;\n"
                "    return x < %du && (UINT64_C(0x%016" PRIx64 ") >> x & 1u);\n",
                set_member(n), n->nitems, E->r->words[n->items]);
        break;
    case RN_CMP: {
        /* outcomes (rules_impl.h): less, equal, greater */
        int lt = (n->mask & O_LT) != 0, eq = (n->mask & O_EQ) != 0, gt = (n->mask & O_GT) != 0;
        /* (a test of an enum, tag or bool against literals is an RN_SET) */
        if (!n->bpath && n->cls == RC_NUM && !n->af && !n->bf) {
            read_path(E, &n->a);
            fputs("    if (v == NULL)\n        return false;\n", f);
            if (n->k.i == INT64_MIN)
                fputs("    const int64_t k = INT64_MIN;\n", f);
            else
                fprintf(f, "    const int64_t k = INT64_C(%" PRId64 ");\n", n->k.i);
            fprintf(f, "    return v->i < k ? %d : v->i > k ? %d : %d;\n", lt, gt, eq);
        } else {
            fprintf(f, "    return ru_eval_node(r, s, %d);\n", k);
        }
        break;
    }
    default: fprintf(f, "    return ru_eval_node(r, s, %d);\n", k); break;
    }
    fputs("}\n\n", f);
}

/* rest_I: rule i once its leading test is known to hold (the index's
 * candidates), or whole. */
static void emit_rest(em *E, int i)
{
    const ru_rule *rule = &E->r->rules[i];
    if (rule->rest == RU_UNGUARDED)
        emit_node(E, rule->expr);
    else
        for (int k = rule->rest; k >= 0; k = E->r->nodes[k].next)
            emit_node(E, k);
    fprintf(E->f, "static inline __attribute__((always_inline, unused)) bool %s_rest_%d(const ru_rules *r, "
                  "ru_subject *s)\n{\n    (void)r;\n    (void)s;\n    return ",
            E->px, i);
    if (rule->rest == RU_UNGUARDED)
        fprintf(E->f, "%s_n_%d(r, s)", E->px, rule->expr);
    else
        chain(E, rule->rest, " && ", "true");
    fputs(";\n}\n\n", E->f);
}

/* The candidates of row bits, tried in order. */
static void emit_row(em *E, uint64_t bits)
{
    for (; bits != 0; bits &= bits - 1) {
        int i = __builtin_ctzll(bits);
        fprintf(E->f, "        if (%d < limit && %s_rest_%d(r, s))\n            return %d;\n", i, E->px, i, i);
    }
    fputs("        return -1;\n", E->f);
}

/* Statements the index's switch would write: the sum of its rows' bits
 * over distinct rows. */
static long index_size(const ru_rules *r)
{
    long size = 0;
    for (int x = 0; x < r->nrow; x++) {
        bool seen = false;
        for (int y = 0; y < x && !seen; y++)
            seen = r->rows[y] == r->rows[x];
        if (!seen)
            size += __builtin_popcountll(r->rows[x]);
    }
    return size;
}

static void emit_first(em *E)
{
    const ru_rules *r = E->r;
    FILE *f = E->f;
    if (r->nrow > 0) {
        for (int i = 0; i < r->nrules; i++)
            emit_rest(E, i);
    } else {
        for (int i = 0; i < r->nrules; i++)
            emit_node(E, r->rules[i].expr);
    }
    fprintf(f,
            "/* The first rule among [0, limit) that holds, or -1 (rules.c: first_holding). */\n"
            "static inline __attribute__((always_inline, unused)) int %s_first(const ru_rules *r, "
            "ru_subject *s, int limit)\n{\n    (void)r;\n    (void)s;\n    (void)limit;\n",
            E->px);
    if (r->nrow == 0) {
        for (int i = 0; i < r->nrules; i++)
            fprintf(f, "    if (%d < limit && %s_n_%d(r, s))\n        return %d;\n", i, E->px,
                    r->rules[i].expr, i);
        fputs("    return -1;\n}\n\n", f);
        return;
    }
    /* the index: the guard's path read once, its case's candidates tried */
    const ru_node *g = r->guard;
    fputs("    if (limit == 0)\n        return -1;\n", f);
    read_path(E, &g->a);
    fprintf(f,
            "    unsigned x = %du;\n"
            "    if (v != NULL && (unsigned)v->%s < x)\n        x = (unsigned)v->%s;\n"
            "    switch (x) {\n",
            r->nrow - 1, set_member(g), set_member(g));
    uint64_t miss = r->rows[r->nrow - 1];
    for (int x = 0; x < r->nrow - 1; x++) {
        bool seen = r->rows[x] == miss;
        for (int y = 0; y < x && !seen; y++)
            seen = r->rows[y] == r->rows[x];
        if (seen)
            continue;
        for (int y = x; y < r->nrow - 1; y++)
            if (r->rows[y] == r->rows[x])
                fprintf(f, "    case %d:\n", y);
        emit_row(E, r->rows[x]);
    }
    fputs("    default:\n", f);
    emit_row(E, miss);
    fputs("    }\n}\n\n", f);
}

bool ru_emit_c(const ru_rules *r, const char *name, const char *from, FILE *f)
{
    if (r == NULL || f == NULL || !is_identifier(name))
        return false;
    bool whole = r->nnodes <= RU_EMIT_NODES && index_size(r) <= RU_EMIT_NODES;
    /* the nodes first, into memory: they tell which optics are read */
    char *body = NULL;
    size_t nbody = 0;
    em E = {open_memstream(&body, &nbody), r, name, calloc((size_t)r->nnodes + 1, 1),
            calloc((size_t)r->schema->noptics + 1, 1)};
    bool ok = E.f != NULL && E.done != NULL && E.used != NULL;
    if (ok && whole)
        emit_first(&E);
    if (E.f != NULL)
        ok = fclose(E.f) == 0 && ok;
    free(E.done);
    if (!ok) {
        free(E.used);
        free(body);
        return false;
    }
    fputs("/* ", f);
    fputs(name, f);
    fputs(".c: the rules of ", f);
    comment_text(f, from);
    fputs(", for the schema ", f);
    comment_text(f, r->schema->schema);
    fputs(", written as C\n * by ru_emit_c (runtime/rules_emit.c). Do not edit: the build writes it"
          " again\n * when they change. */\n#include \"rules_compiled.h\"\n"
          "#include \"tr_optics_thunks.h\"\n\n",
          f);
    if (whole) {
        fputs("/* ---- each optic read as ru_value reads it, its scanner named */\n\n", f);
        for (int i = 0; i < r->schema->noptics; i++) {
            const op_optic *o = &r->schema->optics[i];
            int how = ru_how(r->schema, i);
            if (!E.used[i] || how == RU_NEVER)
                continue;
            const char *base = how == RU_SEEK ? r->schema->optics[o->base].name : NULL;
            fputs("/* optic ", f);
            comment_text(f, o->name);
            fprintf(f,
                    " */\nstatic inline __attribute__((always_inline, unused)) const op_value "
                    "*%s_o_%d(ru_subject *s)\n{\n",
                    name, i);
            if (how == RU_ROOT && is_identifier(o->name))
                fprintf(f, "    return ru_c_root(s, %d, tr_thunk_scan_%s);\n", i, o->name);
            else if (how == RU_SEEK && is_identifier(o->name) && is_identifier(base))
                fprintf(f, "    return ru_c_seek(s, %d, %d, tr_thunk_scan_%s, tr_thunk_seek_%s);\n",
                        i, o->base, o->name, base);
            else
                fprintf(f, "    return ru_value(s, %d);\n", i);
            fputs("}\n\n", f);
        }
        fputs("/* ---- the rules' nodes */\n\n", f);
        fwrite(body, 1, nbody, f);
    }
    free(E.used);
    free(body);
    /* which rules keep, and the two entries */
    if (whole && r->tried > 0) {
        fprintf(f, "static const bool %s_keeps[%d] = {", name, r->tried);
        for (int i = 0; i < r->tried; i++)
            fprintf(f, "%s%s", i == 0 ? "\n    " : i % 16 ? ", " : ",\n    ",
                    r->rules[i].keep ? "true" : "false");
        fputs("\n};\n\n", f);
    }
    /* rules sharing no walk of the root enter in line (ru_c_enter_alone) */
    const char *enter = r->lv.n == 0 ? "ru_c_enter_alone(&tr_schema, s)" : "ru_enter(r, s)";
    fprintf(f, "static bool %s_judge(const ru_rules *r, ru_subject *s)\n{\n", name);
    if (!whole)
        fputs("    return ru_judge(r, s);\n}\n\n", f);
    else if (r->tried == 0) /* as ru_judge: nothing tried, nothing read */
        fputs("    (void)r;\n    (void)s;\n    return false;\n}\n\n", f);
    else
        fprintf(f,
                "    if (!%s)\n        return ru_judge(r, s);\n"
                "    int i = %s_first(r, s, %d);\n    return i >= 0 && %s_keeps[i];\n}\n\n",
                enter, name, r->tried, name);
    fprintf(f, "static int %s_decide(const ru_rules *r, ru_subject *s)\n{\n", name);
    if (!whole)
        fputs("    return ru_decide(r, s);\n}\n\n", f);
    else
        fprintf(f,
                "    if (!%s)\n        return ru_decide(r, s);\n"
                "    return %s_first(r, s, %d);\n}\n\n",
                enter, name, r->nrules);
    fprintf(f,
            "const ru_compiled %s = {\n    .schema = &tr_schema,\n"
            "    .print = UINT64_C(0x%016" PRIx64 "),\n    .nrules = %d,\n"
            "    .judge = %s_judge,\n    .decide = %s_decide,\n};\n",
            name, r->print, r->nrules, name, name);
    return fflush(f) == 0 && !ferror(f);
}
