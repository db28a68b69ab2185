/* optic.h: what the generator tells hand-written code about a schema.
 *
 * The generated tr_optics_table.c fills one op_schema (declared in
 * tr_optics.h as tr_schema): the root type, every declared type that can be
 * generated and encoded, and every optic, each with its bytes scanner and its
 * model getter behind one signature. Tests, fuzzers, tallies by kind and the
 * rule engine iterate these tables, so none of them names an optic, a type or
 * a case of one particular schema.
 *
 * Memory: the tables are static and read-only. A scanner's record focus is
 * written into scratch the caller provides (rec_size bytes, aligned for any
 * type) and its strings into the arena given; nothing else is allocated.
 */
#ifndef TR_OPTIC_H
#define TR_OPTIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "error.h"
#include "json.h"
#include "rng.h"

/* What an optic focuses, as a value a program can compare. */
typedef enum {
    OP_BOOL,
    OP_I32,
    OP_I64,
    OP_F64,
    OP_STRING,
    OP_ENUM,   /* a case of an enum: index into cases */
    OP_TAG,    /* a union's tag: index of the case it names */
    OP_RECORD, /* a record (or union), read in full */
    OP_RAW,    /* the bytes of a value (a raw optic) */
} op_kind;

/* One value an optic read. Which member is meaningful follows the optic's
 * kind: b; i (i32 and i64, widened); f; s (unescaped; points into the
 * message or the arena); e (enum and tag case index); bytes (OP_RAW from a
 * scanner); ptr (OP_RECORD from a scanner or a getter, OP_RAW from the model: the
 * decoded value, of the focus type's C struct). */
typedef struct {
    union {
        bool b;
        int64_t i;
        double f;
        js_str s;
        int e;
        struct {
            const uint8_t *p;
            size_t n;
        } bytes;
        const void *ptr;
    };
} op_value;

/* A declared record or union: what a test needs to make, write and read one. */
typedef struct {
    const char *name;  /* as the schema spells it */
    size_t size;       /* sizeof its C struct */
    void (*random)(rg_rng *rg, ar_arena *a, int size, void *out);
    uint8_t *(*encode)(uint8_t *w, uint8_t *wend, const void *v);
    /* Decodes one whole JSON text of this type (trailing whitespace only). */
    tr_error (*decode)(const uint8_t *p, size_t n, ar_arena *a, void *out);
} op_type;

/* A field of a record that rules cannot read as a value (a list, a map or
 * a union): the rules loader names it as what it is, not as no field. */
typedef struct {
    const char *name;
    const char *what; /* "list", "map" or "union" */
} op_unread;

/* A field of a record an optic focuses, for a rule's `.field` steps. */
typedef struct op_field {
    const char *name;
    op_kind kind;            /* never OP_RAW */
    const char *focus;       /* its type as the schema spells it */
    const js_str *cases;     /* OP_ENUM, OP_TAG: case names; else NULL */
    int ncases;
    /* From the record's C struct: false on a miss (an absent optional). */
    bool (*get)(const void *record, op_value *out);
    const struct op_field *fields; /* OP_RECORD: its own fields; else NULL */
    int nfields;
    const op_unread *unread; /* OP_RECORD: its fields rules cannot read; else NULL */
    int nunread;
} op_field;

/* An optic's first step into the object at its source, as its scanner takes
 * it: the member it looks for there (and the union tag it checks), so that
 * one walk of that object can find the members of several optics
 * (level.h), then each optic go on from its member with `from`. */
enum {
    OP_M_NONE,  /* not a member of an object (an index first): no shared walk */
    OP_M_FIELD, /* the member `key` (a field or a map's key); with tag set, of a
                 * union's object whose tag must name case `want` */
    OP_M_TAG,   /* the tag itself is the focus: its case */
    OP_M_CASE,  /* the object itself, when its tag names case `want` */
};

typedef struct {
    uint8_t mode;
    js_str key;      /* OP_M_FIELD: the member's key, unescaped */
    js_str tag;      /* the union's tag key (p NULL: the source is no union) */
    int want;        /* the case the tag must name (OP_M_FIELD with a tag, OP_M_CASE) */
    /* the union's case names, as its scanners match them, in schema order */
    const js_str *cases;
    int ncases;
    /* The matcher of the object's level (the generated tr_levels.c): every
     * key the optics starting in this object look for there, in one re2c
     * matcher. level_key(p, lim, &val), p at a '"': the index in
     * level_keys of the key the string starts, *val where its value starts;
     * -2 when it may be a key written with escapes (sk_key_slow decides);
     * -1 otherwise, *val at the string's second byte. key_at and tag_at:
     * this optic's key and its union's tag in level_keys (-1: none).
     * level_case(p, lim, &after): the case the union's tag names (the
     * string at p), -1 for none. */
    int (*level_key)(const uint8_t *p, const uint8_t *lim, const uint8_t **val);
    const js_str *level_keys;
    int level_nkeys;
    int key_at, tag_at;
    int (*level_case)(const uint8_t *p, const uint8_t *lim, const uint8_t **after);
    /* "[]" or "{}": the focus when the member is absent from an object that
     * closed (an absent list or map is an empty one); else NULL */
    const char *empty;
    /* From where the member's value starts (after whitespace; OP_M_CASE:
     * the object's '{') to the end of the bytes: the scanner's other steps,
     * then the focus, as scan has them. */
    bool (*from)(const uint8_t *p, const uint8_t *end, op_value *out, void *scratch,
                 ar_arena *a);
    /* OP_RAW: the same, the value's start only (as seek) */
    bool (*seek_from)(const uint8_t *p, const uint8_t *end, op_value *out);
} op_member;

typedef struct {
    const char *name;        /* the optic's name */
    const char *path;        /* its path as a comment would name it: "Event.Outage.level" */
    op_kind kind;
    const char *focus;       /* the focus type as the schema spells it ("i64", "Level", "Owner") */
    const js_str *cases;     /* OP_ENUM, OP_TAG: case names in schema order; else NULL */
    int ncases;
    int source;              /* index into op_schema.types of the type the optic starts at */
    /* -1 when the optic starts at the root (it reads a whole message); else
     * the index of a raw optic starting at the root whose focus is this
     * optic's source (scan that, then this), or -1 with source_is_root false
     * when the schema declares none (such an optic is read from values of
     * its source type only). */
    int base;
    bool source_is_root;
    size_t rec_size;         /* OP_RECORD: bytes of scratch scan fills; else 0 */
    /* The bytes scanner, over the bytes of one value of the source type:
     * true with *out set on a hit, false on a miss. */
    bool (*scan)(const uint8_t *p, size_t n, op_value *out, void *scratch, ar_arena *a);
    /* OP_RAW: the scanner without the search for the value's end: true
     * when the value is found, out->bytes running from its first byte to
     * the end of the bytes given. An optic based on this one reads into
     * the value from its start and needs no more. NULL for other kinds. */
    bool (*seek)(const uint8_t *p, size_t n, op_value *out);
    /* The model getter, over a decoded value of the source type. */
    bool (*get)(const void *source, op_value *out);
    /* OP_RECORD, OP_RAW: writes a focus value (ptr) as JSON, as the encoder
     * does inside a message; NULL for the other kinds. */
    uint8_t *(*encode)(uint8_t *w, uint8_t *wend, const void *v);
    /* OP_RECORD: the record's fields (scalars, enums, nested records; lists
     * and maps are left out); else NULL, 0. */
    const op_field *fields;
    int nfields;
    const op_unread *unread; /* OP_RECORD: the record's lists, maps and unions; else NULL */
    int nunread;
    op_member member;        /* its first step (mode OP_M_NONE: none to share) */
    int index_max;           /* the largest list index its path steps through (-1: none) */
    int containers;          /* the list items and map entries its path steps into */
} op_optic;

typedef struct {
    const char *schema;      /* the schema file the tables were generated from */
    int root;                /* index into types */
    const op_type *types;
    int ntypes;
    const op_optic *optics;
    int noptics;
    /* The root encoded with one field moved to the front (-1: none). */
    uint8_t *(*encode_first)(uint8_t *w, uint8_t *wend, const void *v, int first);
    tr_error (*validate)(const uint8_t *p, size_t n, ar_arena *a);
    /* The same verdict, also handing back the bytes of each raw optic on
     * one member of the root as the validator passes them: for optic i,
     * has[i] (false: absent or null) and views[i].bytes, meaningful when it
     * returns TR_E_OK; other entries are left alone. Arrays of noptics. */
    tr_error (*validate_views)(const uint8_t *p, size_t n, ar_arena *a, op_value *views,
                               bool *has);
    /* The optic whose cases name a message's kind (the tally's rows): the
     * first OP_TAG optic that a message can be read through (it starts at
     * the root, or has a base); -1 when there is none. */
    int kind;
    /* The root field a "first" layout moves to the front: the field the
     * kind's base optic reads (-1: none). */
    int first_field;
} op_schema;

/* Whether optic i can be read from a whole message (it starts at the root,
 * or through its base). */
bool op_from_message(const op_schema *s, int i);

/* Optic i read from a whole message's bytes: through its base when it has
 * one (the base sought, then the optic read into it from its start). false on a miss, or when the optic
 * cannot be read from a message. */
bool op_scan_message(const op_schema *s, int i, const uint8_t *p, size_t n, op_value *out,
                     void *scratch, ar_arena *a);

/* Optic i read from a decoded root (of the root type's C struct). */
bool op_get_message(const op_schema *s, int i, const void *root, op_value *out);

/* The optic named name (n bytes), or -1. */
int op_find(const op_schema *s, const char *name, size_t n);

/* The type named name, or -1. */
int op_find_type(const op_schema *s, const char *name);

/* The index of the case named s (n bytes) among an enum's or a union's
 * cases, or -1. */
int op_case(const js_str *cases, int ncases, const char *s, size_t n);

/* The cases as "A, B, C" into buf (NUL-terminated), ending in "..." when
 * they do not fit: for messages that list what exists. */
void op_case_list(const js_str *cases, int ncases, char *buf, size_t cap);

#endif
