/* rules.h (tests/fuzz): the synthetic schema the rule language is fuzzed
 * over (fuzz_rules.c), and that tests/unit/test_rules.c judges its own
 * messages with. It names no generated code, so it builds before and
 * without the generator's tables.
 *
 * A message (fzr_msg) whose "bytes" are the struct itself, so a scanner
 * and a getter read the same fields by different routes (a scanner writes
 * records into the reader's scratch and unescapes strings into its arena;
 * a base optic hands its dependents a view). Every kind of optic is there:
 * a union tag, enums (one with 100 cases), i64, f64, string, bool, i32, two
 * records (fields of every kind, an optional, a nested record), a raw optic
 * from the root with two optics through it, and an optic that cannot be
 * read from a message. Each scan and get is counted, per optic, in
 * fzr_scans and fzr_gets.
 *
 * fzr_init must be called first (fzr_rules does); nothing is thread-safe.
 * This file is named like runtime/rules.h: it includes that one by path.
 */
#ifndef TRIAGE_FUZZ_RULES_H
#define TRIAGE_FUZZ_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../runtime/rules.h"
#include "json.h"
#include "optic.h"

/* ===================================================== the messages ===== */

typedef struct {
    int32_t depth;
    bool has_word;
    js_str word;
} fzr_inner;

typedef struct {
    int64_t n;
    double x;
    js_str s;
    bool on;
    int lvl;
    bool has_opt;
    int64_t opt;
    fzr_inner inner;
} fzr_rec;

typedef struct {
    bool has_v;
    int64_t v;
    int lvl; /* -1: absent */
} fzr_sub;

typedef struct {
    int kind; /* -1: absent (for enums and tags alike) */
    int sev;
    bool has_big;
    int64_t big;
    bool has_ratio;
    double ratio;
    bool has_name;
    js_str name_raw; /* what the scanner reads: JSON string contents, escapes and all */
    js_str name;     /* what the getter reads: the same unescaped */
    bool has_flag;
    bool flag;
    bool has_small;
    int32_t small;
    bool has_rec;
    fzr_rec rec;
    bool has_rec2;
    fzr_rec rec2;
    bool has_sub;
    fzr_sub sub;
    int many;
} fzr_msg;

enum {
    FZR_KIND,
    FZR_SEV,
    FZR_BIG,
    FZR_RATIO,
    FZR_NAME,
    FZR_FLAG,
    FZR_SMALL,
    FZR_REC,
    FZR_REC2,
    FZR_SUB,
    FZR_DEEP,
    FZR_DEEPLVL,
    FZR_ORPHAN,
    FZR_MANY,
    FZR_NOPTICS
};

#define FZR_MANY_CASES 100

/* How often each optic was scanned and got since fzr_count_reset. */
extern unsigned fzr_scans[FZR_NOPTICS], fzr_gets[FZR_NOPTICS];
void fzr_count_reset(void);

/* A js_str of a string literal. */
#define FZR_S(lit) {lit, sizeof lit - 1}

extern const op_optic fzr_optics[FZR_NOPTICS];
extern const op_schema fzr_schema;

/* Fills the 100 case names of Msg.many. */
void fzr_init(void);

/* A message from a seed; each optic misses now and then. */
void fzr_random(uint64_t seed, fzr_msg *m);

/* The rules harness (fuzz_rules.c says what it checks). */
const char *fzr_rules(const uint8_t *d, size_t n);

#endif
