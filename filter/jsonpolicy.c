/* jsonpolicy.c: a policy file in the JSON form (read with jsmn), turned
 * into the rules it means. */
#include "jsonpolicy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSMN_STATIC
#define JSMN_STRICT
#include <jsmn.h>

#include "json.h"

/* The cases of the optic the JSON form reads for a key. */
typedef struct {
    const js_str *names;
    int count;
    const char *type; /* for messages */
} jp_enum;

static int find(const jp_enum *e, const char *s, size_t n)
{
    return op_case(e->names, e->count, s, n);
}

/* The JSON form reads these optics: each key's names are cases of one. */
static const char *const json_keys[] = {"urgent", "tiers", "modules", "plans", "minVotes"};
static const char *const json_optics[] = {"severity", "tier", "module", "plan", "votes"};

/* The JSON form's defaults: the demo's policy (docs/model.md). */
static const char *const default_names[4][2] = {
    {"Sev1", "Sev2"}, {"Critical", NULL}, {"Payments", NULL}, {"Business", "Enterprise"}};

static bool optic_enum(const op_schema *s, const char *optic, jp_enum *e, const char *name,
                       char *err, size_t errlen)
{
    int i = op_find(s, optic, strlen(optic));
    if (i < 0 || (s->optics[i].kind != OP_ENUM && s->optics[i].kind != OP_TAG)) {
        tr_say(err, errlen,
               "%s: a JSON policy file reads the optic '%s' (an enum), which the schema %s "
               "does not declare; write rules instead (--rules)",
               name, optic, s->schema);
        return false;
    }
    *e = (jp_enum){s->optics[i].cases, s->optics[i].ncases, s->optics[i].focus};
    return true;
}

/* "'X' is not a case of T (cases: A, B, ...)" after prefix. X is the
 * name as decoded, written as a JSON string's inside (a control byte, a NUL
 * among them, as \u00XX: js_put_string), cut after 80 bytes. */
static void not_a_case(char *err, size_t errlen, const char *prefix, const char *x, size_t xn,
                       const jp_enum *e)
{
    char list[512];
    uint8_t name[6 * 80 + 2];
    size_t n = xn;
    if (n > 80) /* cut where a character begins */
        for (n = 80; n > 0 && ((unsigned char)x[n] & 0xC0) == 0x80;)
            n--;
    /* room for 6 bytes a byte and the quotes: never NULL */
    const uint8_t *w = js_put_string(name, name + sizeof name, x, n);
    op_case_list(e->names, e->count, list, sizeof list);
    tr_say(err, errlen, "%s'%.*s%s' is not a case of %s (cases: %s)", prefix,
           (int)(w - name) - 2, (const char *)name + 1, n < xn ? "..." : "", e->type, list);
}

/* The rules the JSON form means: sets (bit c: case c of the key's optic)
 * and the least votes, as text for ru_parse. */
static bool json_rules(const jp_enum *enums, const uint64_t sets[4], int64_t min_votes,
                       char *out, size_t cap)
{
    static const char *const head[] = {"keep kind == Incident && severity in [",
                                       "] && tier in [", "]\nkeep kind == Bug && module in [",
                                       "]\nkeep kind == Request && plan in ["};
    size_t at = 0;
    for (int k = 0; k < 4; k++) {
        int w = snprintf(out + at, cap - at, "%s", head[k]);
        if (w < 0 || (size_t)w >= cap - at)
            return false;
        at += (size_t)w;
        bool first = true;
        for (int c = 0; c < enums[k].count && c < 64; c++)
            if (sets[k] >> c & 1u) {
                w = snprintf(out + at, cap - at, "%s%s", first ? "" : ", ", enums[k].names[c].p);
                if (w < 0 || (size_t)w >= cap - at)
                    return false;
                at += (size_t)w;
                first = false;
            }
    }
    int w = snprintf(out + at, cap - at, "] && votes.count >= %lld\n", (long long)min_votes);
    return w >= 0 && (size_t)w < cap - at;
}

/* Byte offset -> 1-based line and column, for messages. */
static void where(const char *text, int off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (int i = 0; i < off; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

#define FAIL_AT(tok, ...)                                                                 \
    do {                                                                                  \
        int line_, col_;                                                                  \
        /* a string token starts after its quote: point at the quote */                 \
        where(text, (tok)->start - ((tok)->type == JSMN_STRING), &line_, &col_);           \
        int w_ = snprintf(err, errlen, "%s:%d:%d: ", name, line_, col_);                  \
        if (w_ >= 0 && (size_t)w_ < errlen)                                               \
            snprintf(err + w_, errlen - (size_t)w_, __VA_ARGS__);                         \
        return false;                                                                     \
    } while (0)

/* A string token's bytes unescaped into buf (when it has escapes and its raw
 * form fits: every escape decodes to fewer bytes than it takes, so the result
 * fits too), else its raw bytes; the text was validated, so escapes are well
 * formed. A raw form over cap bytes with escapes names nothing we know: the
 * longest name is far shorter than cap / 6. */
static const char *unescaped(const char *text, const jsmntok_t *t, char *buf, size_t cap,
                             size_t *n)
{
    const char *s = text + t->start;
    size_t raw = (size_t)(t->end - t->start);
    *n = raw;
    if (memchr(s, '\\', raw) == NULL || raw > cap)
        return s;
    *n = js_unescape((const uint8_t *)s, raw, (uint8_t *)buf);
    return buf;
}

bool jp_parse(const char *text, size_t n, const char *name, const op_schema *s, po_policy *out,
              char *err, size_t errlen)
{
    out->rules = NULL;
    out->schema = s;
    jp_enum enums[4];
    uint64_t sets_v[4] = {0, 0, 0, 0};
    int64_t min_votes = 130;
    for (int k = 0; k < 4; k++) {
        if (!optic_enum(s, json_optics[k], &enums[k], name, err, errlen))
            return false;
        for (int j = 0; j < 2 && default_names[k][j] != NULL; j++) {
            const char *d = default_names[k][j];
            int c = find(&enums[k], d, strlen(d));
            if (c < 0 || c >= 64) {
                char prefix[256];
                snprintf(prefix, sizeof prefix, "%s: the JSON form's default for '%s': ", name,
                         json_keys[k]);
                not_a_case(err, errlen, prefix, d, strlen(d), &enums[k]);
                return false;
            }
            sets_v[k] |= 1ull << c;
        }
    }
    /* jsmn tolerates what JSON does not (missing or extra commas, leading
     * zeros): the text must first be one strict RFC 8259 JSON text. */
    js_ctx ctx;
    js_ctx_init(&ctx, (const uint8_t *)text, NULL);
    if (js_validate(&ctx, (const uint8_t *)text, (const uint8_t *)text + n) == NULL) {
        int line, col;
        where(text, (int)ctx.err.offset, &line, &col);
        snprintf(err, errlen, "%s:%d:%d: not valid JSON: %s", name, line, col,
                 tr_error_text(ctx.err.code));
        return false;
    }
    enum { MAX_TOKENS = 512 };
    jsmntok_t toks[MAX_TOKENS];
    jsmn_parser parser;
    jsmn_init(&parser);
    int nt = jsmn_parse(&parser, text, n, toks, MAX_TOKENS);
    /* the text is JSON: jsmn's strict mode just cannot take a bare value */
    if (nt == JSMN_ERROR_PART && n > 0 && memchr(text, '{', n) == NULL) {
        snprintf(err, errlen, "%s: a policy file is one JSON object", name);
        return false;
    }
    if (nt < 0) {
        snprintf(err, errlen, "%s: %s", name,
                 nt == JSMN_ERROR_NOMEM ? "too many values for a policy file"
                 : nt == JSMN_ERROR_PART ? "the JSON ends too early"
                                         : "not valid JSON");
        return false;
    }
    if (nt == 0 || toks[0].type != JSMN_OBJECT) {
        snprintf(err, errlen, "%s: a policy file is one JSON object", name);
        return false;
    }
    /* jsmn accepts a few things JSON does not (and trailing text): check the
     * rest is whitespace, and the tokens with our own strict rules below. */
    for (size_t i = (size_t)toks[0].end; i < n; i++)
        if (!strchr(" \t\r\n", text[i])) {
            snprintf(err, errlen, "%s: text after the policy object", name);
            return false;
        }
    const char *const *keys = json_keys;
    uint64_t *sets[] = {&sets_v[0], &sets_v[1], &sets_v[2], &sets_v[3]};
    unsigned seen = 0;
    int i = 1;
    for (int m = 0; m < toks[0].size; m++) {
        /* jsmn's tokens are trusted for nothing: every index is checked */
        if (i + 1 >= nt || toks[i].type != JSMN_STRING || toks[i].size != 1) {
            snprintf(err, errlen, "%s: each key needs a value", name);
            return false;
        }
        const jsmntok_t *k = &toks[i];
        /* keys compare unescaped, as names do ("\u0075rgent" is urgent) */
        char key_buf[64];
        size_t kn;
        const char *key = unescaped(text, k, key_buf, sizeof key_buf, &kn);
        int which = -1;
        for (int j = 0; j < 5; j++)
            if (kn == strlen(keys[j]) && memcmp(key, keys[j], kn) == 0)
                which = j;
        if (which < 0)
            FAIL_AT(k, "unknown key '%.*s' (known: urgent, tiers, modules, plans, minVotes)",
                    k->end - k->start, text + k->start);
        if (seen & (1u << which))
            FAIL_AT(k, "key '%s' appears twice", keys[which]);
        seen |= 1u << which;
        const jsmntok_t *v = &toks[i + 1];
        if (which == 4) {
            char num[32];
            int len = v->end - v->start;
            if (v->type != JSMN_PRIMITIVE || len <= 0 || len >= (int)sizeof num ||
                !(text[v->start] == '-' || (text[v->start] >= '0' && text[v->start] <= '9')))
                FAIL_AT(v, "'minVotes' must be an integer");
            memcpy(num, text + v->start, (size_t)len);
            num[len] = '\0';
            char *e;
            errno = 0;
            long long mv = strtoll(num, &e, 10);
            if (*e != '\0')
                FAIL_AT(v, "'minVotes' must be an integer, not '%s'", num);
            if (errno != 0) /* an integer past long long: out of range too */
                FAIL_AT(v, "'minVotes' must be from 0 to %ld, not %s", (long)INT32_MAX, num);
            /* a vote count is an i32 of at least 0: outside that range no
             * Request could meet it, or every one would */
            if (mv < 0 || mv > INT32_MAX)
                FAIL_AT(v, "'minVotes' must be from 0 to %ld, not %s", (long)INT32_MAX, num);
            min_votes = mv;
            i += 2;
            continue;
        }
        if (v->type != JSMN_ARRAY)
            FAIL_AT(v, "'%s' must be an array of names", keys[which]);
        if (v->size < 0 || i + 2 + v->size > nt)
            FAIL_AT(v, "'%s': the array ends too early", keys[which]);
        uint64_t set = 0;
        for (int e = 0; e < v->size; e++) {
            const jsmntok_t *t = &toks[i + 2 + e];
            if (t->type != JSMN_STRING)
                FAIL_AT(t, "'%s' holds names in quotes", keys[which]);
            /* names are compared unescaped ("Sev\u0031" is Sev1); the text
             * was validated above, so the escapes are well formed */
            char name_buf[64];
            size_t nn;
            const char *nm = unescaped(text, t, name_buf, sizeof name_buf, &nn);
            int c = find(&enums[which], nm, nn);
            if (c < 0 || c >= 64) {
                int line_, col_;
                where(text, t->start - 1, &line_, &col_);
                char prefix[512];
                snprintf(prefix, sizeof prefix, "%s:%d:%d: '%s': ", name, line_, col_,
                         keys[which]);
                not_a_case(err, errlen, prefix, nm, nn, &enums[which]);
                return false;
            }
            set |= 1ull << c;
        }
        *sets[which] = set;
        i += 2 + v->size;
    }
    /* What it means, in the rule language: the same rules as the default
     * with these sets and threshold. */
    char rules[8192], rname[512];
    if (!json_rules(enums, sets_v, min_votes, rules, sizeof rules)) {
        tr_say(err, errlen, "%s: too many names for a policy file", name);
        return false;
    }
    snprintf(rname, sizeof rname, "%s (as rules)", name);
    return po_rules(rules, strlen(rules), rname, s, out, err, errlen);
}

/* A policy file is small; a larger one is something else. */
#define JP_MAX_FILE 16384

bool jp_load(const char *path, const op_schema *s, po_policy *out, char *err, size_t errlen)
{
    size_t n;
    char *buf = ru_read_file(path, JP_MAX_FILE, &n, err, errlen);
    if (buf == NULL)
        return false;
    bool ok = false;
    if (n > JP_MAX_FILE)
        snprintf(err, errlen, "%s: larger than %d bytes: not a policy file", path, JP_MAX_FILE);
    else
        ok = jp_parse(buf, n, path, s, out, err, errlen);
    free(buf);
    return ok;
}
