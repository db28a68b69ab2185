/* peers_jsmn.c: jsmn (Debian's libjsmn-dev, header-only) as a peer of our
 * readers (peers.h): tokenize the whole message into a token array made
 * once (sized for the largest message of the pool), walk the tokens to
 * detail and to the policy's leaves, judge.
 *
 * jsmn hands back raw tokens: keys and strings are compared as written,
 * without unescaping (the generated pool has no escapes in keys or enum
 * names), and it validates less than RFC 8259 asks (no UTF-8 or number
 * checks). That is jsmn as a user would use it. */
#define JSMN_STATIC /* policy.c has the exported copy; ours inlines */
#include <jsmn.h>
#include <stdlib.h>

#include "peers.h"

typedef struct {
    const pr_env *env;
    jsmntok_t *tok;
    unsigned cap;
} js_state;

/* The index of the token after token i and everything inside it. A key's
 * size is 1 (its value), an object's its number of keys, an array's its
 * number of elements. */
static int skip(const jsmntok_t *t, int n, int i)
{
    int pending = 1;
    while (pending > 0 && i < n) {
        pending += t[i].size - 1;
        i++;
    }
    return i;
}

/* The value of key in the object at token obj, or -1. */
static int member(const char *js, const jsmntok_t *t, int n, int obj, const char *key)
{
    if (obj < 0 || obj >= n || t[obj].type != JSMN_OBJECT)
        return -1;
    size_t klen = strlen(key);
    int k = obj + 1;
    for (int m = 0; m < t[obj].size && k + 1 < n; m++) {
        if (t[k].type == JSMN_STRING && (size_t)(t[k].end - t[k].start) == klen &&
            memcmp(js + t[k].start, key, klen) == 0)
            return k + 1;
        k = skip(t, n, k + 1);
    }
    return -1;
}

static int path(const char *js, const jsmntok_t *t, int n, int at, const char *const *keys)
{
    for (; *keys != NULL && at >= 0; keys++)
        at = member(js, t, n, at, *keys);
    return at;
}

static bool str_in(const char *js, const jsmntok_t *t, int i, const pr_names *set)
{
    return i >= 0 && t[i].type == JSMN_STRING &&
           pr_in(set, js + t[i].start, (size_t)(t[i].end - t[i].start));
}

/* An integer primitive (no fraction, no exponent). */
static bool integer(const char *js, const jsmntok_t *t, int i, int64_t *out)
{
    if (i < 0 || t[i].type != JSMN_PRIMITIVE)
        return false;
    const char *p = js + t[i].start, *end = js + t[i].end;
    bool neg = p < end && *p == '-';
    p += neg;
    if (p == end || end - p > 18)
        return false;
    int64_t v = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
    }
    *out = neg ? -v : v;
    return true;
}

static int js_verdict(void *p, size_t i)
{
    js_state *s = p;
    const pr_env *e = s->env;
    const pr_policy *P = e->policy;
    const char *js = (const char *)e->buf + e->off[i];
    jsmn_parser parser;
    jsmn_init(&parser);
    int n = jsmn_parse(&parser, js, e->len[i], s->tok, s->cap);
    if (n <= 0)
        return pr_verdict(-1, false);
    const jsmntok_t *t = s->tok;
    int d = member(js, t, n, 0, "detail");
    int ty = member(js, t, n, d, "type");
    if (ty < 0 || t[ty].type != JSMN_STRING)
        return pr_verdict(-1, false);
    int kind = pr_find(&P->kinds, js + t[ty].start, (size_t)(t[ty].end - t[ty].start));
    bool keep = false;
    if (kind < 0) {
    } else if (kind == P->incident) {
        static const char *const tier[] = {"impact", "service", "tier", NULL};
        keep = str_in(js, t, member(js, t, n, d, "severity"), &P->urgent) &&
               str_in(js, t, path(js, t, n, d, tier), &P->tiers);
    } else if (kind == P->bug) {
        static const char *const frames[] = {"trace", "frames", NULL};
        int f = path(js, t, n, d, frames);
        if (f >= 0 && t[f].type == JSMN_ARRAY && t[f].size > 0)
            keep = str_in(js, t, member(js, t, n, f + 1, "module"), &P->modules);
    } else if (kind == P->request) {
        static const char *const votes[] = {"votes", "count", NULL},
                                 *const plan[] = {"requester", "contract", "plan", NULL};
        int64_t v;
        keep = integer(js, t, path(js, t, n, d, votes), &v) && v >= P->min_votes &&
               str_in(js, t, path(js, t, n, d, plan), &P->plans);
    }
    return pr_verdict(kind, keep);
}

static void *js_make(const pr_env *env)
{
    js_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->env = env;
    /* a first pass without tokens counts them */
    for (size_t i = 0; i < env->count; i++) {
        jsmn_parser parser;
        jsmn_init(&parser);
        int n = jsmn_parse(&parser, (const char *)env->buf + env->off[i], env->len[i], NULL, 0);
        if (n > 0 && (unsigned)n > s->cap)
            s->cap = (unsigned)n;
    }
    s->tok = malloc((s->cap + 1) * sizeof *s->tok);
    if (s->tok == NULL) {
        free(s);
        return NULL;
    }
    return s;
}

static void js_done(void *p)
{
    js_state *s = p;
    free(s->tok);
    free(s);
}

const pr_peer pr_jsmn = {"jsmn", "jsmn 1.1: tokenize the whole message, walk the tokens, judge",
                         js_make, js_verdict, js_done, NULL};
