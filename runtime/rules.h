/* rules.h: keep/drop rules over a schema's optics, judged on a message's
 * bytes or on its decoded model.
 *
 * The language (one rule a line; '#' starts a comment outside strings):
 *
 *   keep kind == Outage && level in [High, Urgent] && region == Eu
 *   drop has(owner) && !(owner.age >= 10 || team == Core)
 *
 * Rules are tried in order; the first whose expression holds decides; when
 * none holds the message is dropped (so an empty file drops everything). An
 * expression goes on over the next lines while a '(' or '[' is open.
 *   EXPR     := AND ('||' AND)*        AND := UNARY ('&&' UNARY)*
 *   UNARY    := '!'* PRIMARY           ('!' negates the comparison after it:
 *                                       !kind == Alert is !(kind == Alert))
 *   PRIMARY  := '(' EXPR ')' | 'has' '(' PATH ')' | X (OP X)? | X 'in' '[' LIT,* ']'
 *   X        := PATH | LIT             PATH := optic ('.' field)*
 *   LIT      := a bare word (a case of the enum or union on the other side),
 *               a JSON string, a JSON number, true, false
 *   OP       := == != < <= > >=
 * An identifier is an optic when the schema declares one by that name (the
 * items of an 'in' list are always literals); true, false, in, and has
 * before '(' are words of the language. A bool alone is a condition.
 *
 * Meaning. A PATH misses when its optic misses (absent field, another union
 * case, index past the end, null optional, missing key) or a field on the
 * way is absent: then every comparison with it is false, != included, and
 * has() is false ('!' turns false into true as usual). Numbers compare by
 * value: i32 and i64 exactly as integers, f64 as doubles, an integer with a
 * double exactly (no rounding of the integer). Ordering applies to numbers
 * only; strings (unescaped), enums, union tags and bools take ==, != and in.
 *
 * Loading checks everything against the op_schema and reports the first
 * problem as "NAME:LINE:COL: what was expected, what was found" (COL counts
 * characters): syntax, unknown optics (listing the known ones), names that
 * are not cases (listing the cases), fields a record lacks (listing its
 * fields), mismatched types, ordering on a non-number, a record or raw value
 * used as a value, optics that cannot be read from a message, invalid UTF-8,
 * malformed strings and numbers, and the limits below. The parser's
 * recursion is bounded by RU_MAX_DEPTH, so no input nests it deeply.
 *
 * Memory. ru_parse and ru_load allocate one block (the compiled rules),
 * freed by ru_free; loading allocates nothing else that outlives the call.
 * Rules are immutable once loaded, so threads may share them. They keep
 * pointers into the op_schema, which must outlive them (it is static).
 * Judging allocates nothing: an ru_subject, the message being judged
 * (about 20 KiB; on the caller's stack or reused), holds a cache of the optics read for the current message,
 * the scratch record optics are scanned into, and the caller's arena, which
 * ru_subject_bytes resets per message and scanners unescape strings into
 * (give it at least the largest message's size, or an escaped string may
 * miss). Values read stay valid until the next message is set.
 */
#ifndef TR_RULES_H
#define TR_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "arena.h"
#include "level.h"
#include "optic.h"

/* Limits on a rules text; each is an error naming the place it is passed. */
#define RU_MAX_BYTES (1u << 20) /* a rules text's length */
#define RU_MAX_LINES 65536      /* its lines */
#define RU_MAX_DEPTH 64         /* '(' nesting in one expression */
#define RU_MAX_LIST 256         /* items of one 'in' list */
/* Limits on the schema (rules for a schema past them fail to load). */
#define RU_MAX_OPTICS 256       /* optics a schema declares */
#define RU_SCRATCH 8192         /* its record optics' rec_size, summed (16-aligned) */

typedef struct ru_rules ru_rules;

/* Compiles rules from text (n bytes, no terminator needed) for schema s;
 * name stands for the file in messages. NULL on failure, with the message
 * in err (when errlen > 0). */
__attribute__((warn_unused_result)) ru_rules *ru_parse(const char *text, size_t n,
                                                       const char *name, const op_schema *s,
                                                       char *err, size_t errlen);

/* The same from a file ("PATH: cannot read: ..." when it cannot be read). */
__attribute__((warn_unused_result)) ru_rules *ru_load(const char *path, const op_schema *s,
                                                      char *err, size_t errlen);

/* One rule `keep EXPR` from a NUL-terminated expression; name stands for it
 * in messages, and columns count from EXPR's first character. Newlines in
 * EXPR are spaces. */
__attribute__((warn_unused_result)) ru_rules *ru_where(const char *expr, const char *name,
                                                       const op_schema *s, char *err,
                                                       size_t errlen);

void ru_free(ru_rules *r);

/* A loader's file read whole: a malloc'd buffer of *n bytes, at most limit
 * + 1 (so a longer file shows as one past the limit); NULL with "PATH:
 * cannot read: REASON" in err (a directory is named as such). */
char *ru_read_file(const char *path, size_t limit, size_t *n, char *err, size_t errlen);

/* How many rules; rule i keeps (true) or drops, and its line (1-based). */
int ru_count(const ru_rules *r);
bool ru_rule_keeps(const ru_rules *r, int i);
int ru_rule_line(const ru_rules *r, int i);

/* The optics the rules read (bit i: optic i), bases included; bit 63 stands
 * for every optic from 63 on. For a caller that wants to know what a
 * verdict costs. */
uint64_t ru_optics_used(const ru_rules *r);

/* How a subject reads an optic from a message's bytes (ru_slot.how). */
enum {
    RU_NEVER, /* it cannot be read from a message */
    RU_ROOT,  /* its scanner over the whole message */
    RU_SEEK,  /* through a raw base sought once (op_optic.seek), from where it starts */
    RU_BASE,  /* through a base read whole */
};

/* One optic in a subject: its value for the current message, and what
 * reading it takes (copied from the schema when the subject is bound). */
typedef struct {
    uint32_t seen;   /* val holds this message's value (hit) or a miss when seen == gen */
    uint32_t sought; /* a raw base sought, not read: start is where it begins
                      * (NULL: a miss) when sought == gen */
    bool hit;
    uint8_t how;     /* RU_NEVER .. RU_BASE */
    uint16_t at;     /* a record optic: 1 + its offset into scratch; else 0 */
    int32_t base;    /* RU_SEEK, RU_BASE: the optic it reads through */
    bool (*scan)(const uint8_t *p, size_t n, op_value *out, void *scratch, ar_arena *a);
    const uint8_t *start;
    op_value val;
} ru_slot;

/* The message being judged: its bytes or its decoded root, and its optics,
 * each read at most once. Private fields: set up with ru_subject_init, then
 * one ru_subject_bytes or ru_subject_model per message. Reading an optic
 * touches its own slot (and its base's) and nothing else of the subject. */
typedef struct {
    const op_schema *schema;
    ar_arena *arena;
    const uint8_t *p; /* the message's bytes, or */
    size_t n;
    const void *root; /* or its decoded root */
    bool model;       /* which of the two */
    uint32_t gen;     /* the current message's number (slots compare with it) */
    uint64_t reads;   /* optics read for this message, bases included */
    ru_slot slot[RU_MAX_OPTICS];
    /* The rules being judged by: the optics they read from the message's
     * root that share one walk of it (level.h; lv NULL: none), each one's
     * place in the plan (lvj[i], -1: read alone), and that walk. */
    const lv_plan *lv;
    const int8_t *lvj;
    uint32_t lv_gen; /* the message lvs walks (0: none yet) */
    lv_state lvs;
    _Alignas(16) unsigned char scratch[RU_SCRATCH];
} ru_subject;

/* Binds a subject to a schema and an arena (for messages given as bytes;
 * NULL is fine when they are given as decoded roots). false when the schema is past the limits above
 * (never for a schema some rules loaded against). */
__attribute__((warn_unused_result)) bool ru_subject_init(ru_subject *subj, const op_schema *s,
                                                        ar_arena *a);

/* ru_subject_next's rare case, out of line: the message number wrapped,
 * every slot is forgotten. */
void ru_subject_wrap(ru_subject *subj);

/* The subject's next message, of either kind (ru_subject_bytes,
 * ru_subject_model): a new number, nothing read yet. */
static inline void ru_subject_next(ru_subject *subj, bool model, const uint8_t *p, size_t n,
                                   const void *root)
{
    if (__builtin_expect(++subj->gen == 0, 0))
        ru_subject_wrap(subj);
    subj->lv = NULL;
    subj->reads = 0;
    subj->model = model;
    subj->p = p;
    subj->n = n;
    subj->root = root;
}

/* The next message: n bytes at p (one whole message, read by
 * op_scan_message's rules: through its base when an optic has one, the base
 * sought once for all optics sharing it), which must stay put while it is
 * judged; resets the arena. In line: it runs once a message, before every
 * read (as do rd_message at --verify off and po_kind's look at the cache). */
static inline void ru_subject_bytes(ru_subject *subj, const uint8_t *p, size_t n)
{
    ru_subject_next(subj, false, p, n, NULL);
    if (subj->arena != NULL)
        ar_reset(subj->arena);
}

/* The next message: a decoded root (of the root type's C struct). */
void ru_subject_model(ru_subject *subj, const void *root);

/* Tells the subject what optic i of the current message is, found by
 * someone else's pass over it (a validator that hands back a view): hit
 * false for a miss. It then does not read it itself. */
static inline void ru_subject_seed(ru_subject *subj, int optic, bool hit, const op_value *v)
{
    if (optic < 0 || optic >= RU_MAX_OPTICS)
        return;
    ru_slot *s = &subj->slot[optic];
    s->seen = subj->gen;
    s->hit = hit;
    if (hit)
        s->val = *v;
}

/* Optic i of the current message, through the cache: the cached value
 * itself (valid until the next message), or NULL on a miss or when i cannot
 * be read from a message. Read the field you need from it: a copy of the
 * whole value right after a scanner stored part of it waits for those
 * stores. */
const op_value *ru_value(ru_subject *subj, int optic);

/* ru_value, its cache looked at in line first (optic one of the schema's):
 * for a reader that most often asks again for what the rules read. */
static inline const op_value *ru_value_cached(ru_subject *subj, int optic)
{
    const ru_slot *sl = &subj->slot[optic];
    return sl->seen == subj->gen ? (sl->hit ? &sl->val : NULL) : ru_value(subj, optic);
}

/* The same, copied into *out: false on a miss. */
bool ru_read(ru_subject *subj, int optic, op_value *out);

/* The verdict on the current message: keep (true) or drop. Optics are read
 * lazily, in the order the expressions need them, and && and || stop
 * early. A subject bound to another schema than r's judges nothing (drop;
 * ru_decide: -1). */
bool ru_judge(const ru_rules *r, ru_subject *subj);

/* The rule that decides the current message, or -1 when none holds. */
int ru_decide(const ru_rules *r, ru_subject *subj);

/* The same, every rule tried in turn: without the index by which ru_judge
 * and ru_decide pass over the rules whose leading test fails (docs/rules.md);
 * for tests, which check that the index changes nothing. */
int ru_decide_in_turn(const ru_rules *r, ru_subject *subj);

/* ---- rules compiled to C.
 *
 * ru_emit_c writes rules r out as C: a judge and a decide that give what
 * ru_judge and ru_decide give on a message's bytes (the same rule decides,
 * reading the same optics in the same order into the same subject), with
 * each optic's scanner called by name (the generated tr_optics_thunks.h)
 * and the rules' constants in line; comparisons it does not write out
 * (strings, doubles, 'in' lists, two paths) it hands to the interpreter,
 * node by node, and a decoded model to ru_judge. The C defines
 * `const ru_compiled NAME`; a program that links it uses it for rules
 * loaded from the same text against the same schema (ru_compiled_fits),
 * and the interpreter for any other. triage-rulesc is the program that
 * runs it at build time (the Makefile compiles schema/default.rules so). */
typedef struct {
    const op_schema *schema; /* the schema the rules were loaded against */
    uint64_t print;          /* their ru_fingerprint */
    int nrules;
    bool (*judge)(const ru_rules *r, ru_subject *subj);
    int (*decide)(const ru_rules *r, ru_subject *subj);
} ru_compiled;

/* A hash of the text rules were loaded from (and of whether it was one
 * --where expression): rules with equal fingerprints loaded against one
 * schema are the same rules. */
uint64_t ru_fingerprint(const ru_rules *r);

/* The schema rules were loaded against. */
const op_schema *ru_rules_schema(const ru_rules *r);

/* How many of the optics r reads from the message's root share one walk
 * of it (level.h): 0 when fewer than two could, or when turned off. */
int ru_root_walk(const ru_rules *r);

/* Turns that shared walk off (each optic then walks the root itself) or on
 * again (the default): the verdicts and the optics read are the same
 * either way, only the time differs (docs/rules.md). */
void ru_share_root_walk(ru_rules *r, bool on);

/* Begins a judgement of subj by r (the C written by ru_emit_c calls it):
 * the walk of the message's root the rules' root optics share (none when
 * they read fewer than two). True when the subject is a message's bytes of
 * r's schema (what the C reads); false for a decoded model or a subject of
 * another schema. ru_judge and ru_decide call it. */
bool ru_enter(const ru_rules *r, ru_subject *subj);

/* Whether compiled rules c were written from rules r (c may be NULL). */
bool ru_compiled_fits(const ru_compiled *c, const ru_rules *r);

/* Writes r as C defining `const ru_compiled NAME` (NAME a C identifier;
 * from names the source is written from) to f. Rules past what it writes
 * out (RU_EMIT_NODES nodes) are written as calls to the interpreter. false
 * when NAME is not an identifier or f fails. */
#define RU_EMIT_NODES 4096
bool ru_emit_c(const ru_rules *r, const char *name, const char *from, FILE *f);

/* Writes optic o's value v as text into buf (NUL-terminated): an enum or a
 * tag as its case name, a string JSON-escaped in quotes, numbers as JSON,
 * true/false, a record as JSON (o->encode), a raw value as its bytes on
 * one line (from a message given as bytes: js_put_compact, the whitespace
 * between tokens left out) or encoded (from the model: from_model true),
 * so that the text never holds a tab or a line break. Returns
 * the length written, or 0 when buf is too small or the value has no
 * text (a case index out of range, a non-finite double, no encoder). */
size_t ru_format(const op_optic *o, const op_value *v, bool from_model, char *buf, size_t n);

/* Whether the subject's current message is a decoded model (for ru_format). */
static inline bool ru_subject_is_model(const ru_subject *subj) { return subj->model; }

/* Whether optic i of the current message has been read (or seeded), hit or
 * miss: for a test of what a verdict reads. */
static inline bool ru_subject_read(const ru_subject *subj, int optic)
{
    return optic >= 0 && optic < RU_MAX_OPTICS && subj->slot[optic].seen == subj->gen;
}

#endif
