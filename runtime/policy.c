/* policy.c: the verdict, and loading a policy file with jsmn. */
#include "policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define JSMN_STATIC
#define JSMN_STRICT
#include <jsmn.h>

static bool in_set(uint64_t set, int v) { return v >= 0 && v < 64 && (set >> v & 1u); }

bool po_judge(const po_policy *p, const po_reader *r, int *kind)
{
    int k = r->kind(r->self);
    *kind = k;
    if (k < 0)
        return false;
    if (k == p->incident)
        return in_set(p->urgent, r->severity(r->self)) && in_set(p->tiers, r->tier(r->self));
    if (k == p->bug)
        return in_set(p->modules, r->module(r->self));
    if (k == p->request) {
        int64_t votes;
        return r->votes(r->self, &votes) && votes >= p->min_votes &&
               in_set(p->plans, r->plan(r->self));
    }
    return false;
}

static int find(const po_enum *e, const char *s, size_t n)
{
    for (int i = 0; i < e->count; i++)
        if (e->names[i].n == n && memcmp(e->names[i].p, s, n) == 0)
            return i;
    return -1;
}

static bool set_of(const po_enum *e, const char *const *names, size_t count, uint64_t *out)
{
    *out = 0;
    for (size_t i = 0; i < count; i++) {
        int v = find(e, names[i], strlen(names[i]));
        if (v < 0 || v >= 64)
            return false;
        *out |= 1ull << v;
    }
    return true;
}

bool po_default(const po_schema *s, po_policy *out, char *err, size_t errlen)
{
    static const char *const urgent[] = {"Sev1", "Sev2"}, *const tiers[] = {"Critical"},
                             *const modules[] = {"Payments"},
                             *const plans[] = {"Business", "Enterprise"};
    out->bug = find(&s->kind, "Bug", 3);
    out->incident = find(&s->kind, "Incident", 8);
    out->request = find(&s->kind, "Request", 7);
    out->min_votes = 130;
    if (out->bug < 0 || out->incident < 0 || out->request < 0 ||
        !set_of(&s->severity, urgent, 2, &out->urgent) || !set_of(&s->tier, tiers, 1, &out->tiers) ||
        !set_of(&s->module, modules, 1, &out->modules) || !set_of(&s->plan, plans, 2, &out->plans)) {
        snprintf(err, errlen, "the schema lacks a name the default policy uses");
        return false;
    }
    return true;
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

bool po_parse(const char *text, size_t n, const char *name, const po_schema *s, po_policy *out,
              char *err, size_t errlen)
{
    if (!po_default(s, out, err, errlen))
        return false;
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
    static const char *const keys[] = {"urgent", "tiers", "modules", "plans", "minVotes"};
    const po_enum *enums[] = {&s->severity, &s->tier, &s->module, &s->plan};
    uint64_t *sets[] = {&out->urgent, &out->tiers, &out->modules, &out->plans};
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
            if (*e != '\0' || errno != 0)
                FAIL_AT(v, "'minVotes' must be an integer, not '%s'", num);
            /* a vote count is an i32 of at least 0: outside that range no
             * Request could meet it, or every one would */
            if (mv < 0 || mv > INT32_MAX)
                FAIL_AT(v, "'minVotes' must be from 0 to %ld, not %s", (long)INT32_MAX, num);
            out->min_votes = mv;
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
            int c = find(enums[which], nm, nn);
            if (c < 0 || c >= 64)
                FAIL_AT(t, "'%s': unknown name '%.*s'", keys[which], t->end - t->start,
                        text + t->start);
            set |= 1ull << c;
        }
        *sets[which] = set;
        i += 2 + v->size;
    }
    return true;
}

bool po_load(const char *path, const po_schema *s, po_policy *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return false;
    }
    /* fopen takes a directory; reading it then fails with EISDIR */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        snprintf(err, errlen, "%s: cannot read: is a directory", path);
        return false;
    }
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf, f);
    bool too_big = n == sizeof buf && fgetc(f) != EOF;
    int failed = ferror(f) ? errno : 0;
    fclose(f);
    if (failed) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(failed));
        return false;
    }
    if (too_big) {
        snprintf(err, errlen, "%s: larger than %zu bytes: not a policy file", path, sizeof buf);
        return false;
    }
    return po_parse(buf, n, path, s, out, err, errlen);
}
