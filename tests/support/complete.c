/* complete.c: literal completion (complete.h). */
#include "complete.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"

const char *cp_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

const char *cp_value_end(const char *p, const char *e)
{
    int depth = 0;
    do {
        if (*p == '"') {
            for (p++; *p != '"'; p++)
                if (*p == '\\')
                    p++;
            p++;
        } else if (*p == '{' || *p == '[') {
            depth++;
            p++;
        } else if (*p == '}' || *p == ']') {
            depth--;
            p++;
        } else if (depth > 0) {
            p++;
        } else {
            while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
                   *p != '\n' && *p != '\r')
                p++;
        }
    } while (depth > 0 && p < e);
    return p;
}

bool cp_key(const char *k, size_t kn, char *out, size_t cap, size_t *on)
{
    size_t n = 0;
    for (size_t i = 0; i < kn; i++) {
        if (n + 1 >= cap)
            return false;
        if (k[i] != '\\') {
            out[n++] = k[i];
        } else if (i + 1 < kn && (k[i + 1] == '"' || k[i + 1] == '\\' || k[i + 1] == '/')) {
            out[n++] = k[++i];
        } else if (i + 5 < kn && k[i + 1] == 'u') {
            unsigned u = 0;
            for (int j = 2; j < 6; j++) {
                char c = k[i + j];
                u = u << 4 | (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
            }
            if (u == 0 || u >= 0x80)
                return false;
            out[n++] = (char)u;
            i += 5;
        } else {
            return false;
        }
    }
    *on = n;
    return true;
}

size_t cp_members(const char *p, const char *e, cp_member *m, size_t max)
{
    size_t n = 0;
    p = cp_ws(p + 1, e);
    while (p < e && *p == '"' && n < max) {
        const char *ks = p + 1, *q = ks;
        while (*q != '"')
            q += *q == '\\' ? 2 : 1;
        m[n].k = ks;
        m[n].kn = (size_t)(q - ks);
        p = cp_ws(cp_ws(q + 1, e) + 1, e); /* past ':' */
        m[n].v = p;
        m[n].vend = cp_value_end(p, e);
        p = cp_ws(m[n].vend, e);
        n++;
        if (p < e && *p == ',')
            p = cp_ws(p + 1, e);
    }
    return n;
}

static bool same_key(const cp_member *a, const cp_member *b)
{
    char x[128], y[128];
    size_t xn, yn;
    return cp_key(a->k, a->kn, x, sizeof x, &xn) && cp_key(b->k, b->kn, y, sizeof y, &yn) && xn == yn &&
           memcmp(x, y, xn) == 0;
}

/* Whether the tests spell m's key (an unreadable key counts as spelt: it
 * is never added). */
static bool known_key(const cp_member *m, const char *known)
{
    char k[128], pat[140];
    size_t kn;
    if (!cp_key(m->k, m->kn, k, sizeof k, &kn) || kn + 4 > sizeof pat)
        return true;
    snprintf(pat, sizeof pat, "\"%.*s\":", (int)kn, k);
    return strstr(known, pat) != NULL;
}

#define MAX_MEMBERS 256

static size_t merge(bb *o, const char *l, const char *le, const char *t, const char *te, const char *known)
{
    size_t added = 0;
    if (*l == '{' && *t == '{') {
        cp_member *lm = malloc(2 * MAX_MEMBERS * sizeof *lm), *tm = lm + MAX_MEMBERS;
        REQUIRE(lm != NULL);
        size_t ln = cp_members(l, le, lm, MAX_MEMBERS), tn = cp_members(t, te, tm, MAX_MEMBERS);
        bb_put(o, "{", 1);
        for (size_t i = 0; i < ln; i++) {
            if (i)
                bb_put(o, ",", 1);
            bb_put(o, lm[i].k - 1, (size_t)(lm[i].v - (lm[i].k - 1)));
            size_t j = 0;
            while (j < tn && !same_key(&lm[i], &tm[j]))
                j++;
            if (j < tn)
                added += merge(o, lm[i].v, lm[i].vend, tm[j].v, tm[j].vend, known);
            else
                bb_put(o, lm[i].v, (size_t)(lm[i].vend - lm[i].v));
        }
        size_t put = ln;
        for (size_t j = 0; j < tn; j++) {
            size_t i = 0;
            while (i < ln && !same_key(&lm[i], &tm[j]))
                i++;
            if (i < ln || known_key(&tm[j], known))
                continue;
            if (put++)
                bb_put(o, ",", 1);
            bb_put(o, tm[j].k - 1, (size_t)(tm[j].vend - (tm[j].k - 1)));
            added++;
        }
        bb_put(o, "}", 1);
        free(lm);
    } else if (*l == '[' && *t == '[' && *cp_ws(t + 1, te) != ']') {
        const char *t0 = cp_ws(t + 1, te), *t0e = cp_value_end(t0, te);
        const char *p = cp_ws(l + 1, le);
        bb_put(o, "[", 1);
        for (int k = 0; p < le && *p != ']'; k++) {
            if (k)
                bb_put(o, ",", 1);
            const char *pe = cp_value_end(p, le);
            added += merge(o, p, pe, t0, t0e, known);
            p = cp_ws(pe, le);
            if (*p == ',')
                p = cp_ws(p + 1, le);
        }
        bb_put(o, "]", 1);
    } else {
        bb_put(o, l, (size_t)(le - l));
    }
    return added;
}

size_t cp_complete(bb *out, const char *lit, size_t ln, const char *tmpl, const char *known)
{
    out->n = 0;
    const char *l = cp_ws(lit, lit + ln), *le = cp_value_end(l, lit + ln);
    size_t added = merge(out, l, le, tmpl, tmpl + strlen(tmpl), known);
    if (added == 0) {
        out->n = 0;
        bb_put(out, lit, ln);
    }
    return added;
}
