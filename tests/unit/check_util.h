/* check_util.h: what the Check suites share.
 *
 * REQUIRE and REQUIREF call into Check only on failure: ck_assert_* records
 * every passing assertion with a write to the parent process, which would
 * dominate the run time of the suites' hot loops. */
#ifndef TR_CHECK_UTIL_H
#define TR_CHECK_UTIL_H

#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(c)                                                            \
    do {                                                                      \
        if (!(c))                                                             \
            ck_abort_msg("%s:%d: failed: %s", __FILE__, __LINE__, #c);        \
    } while (0)

#define REQUIREF(c, ...)                                                      \
    do {                                                                      \
        if (!(c))                                                             \
            ck_abort_msg(__VA_ARGS__);                                        \
    } while (0)

/* JSONTestSuite's parsing files, third-party data read where it lies (never
 * copied into the project): the folder TR_CONFORMANCE names, else
 * ../shared/conformance/JSONTestSuite/test_parsing. Calls fn with the name
 * and bytes of each file named y_*, n_* or i_* (at most 1 MiB each) and
 * returns how many; -1 when the folder is absent, after a note on stderr
 * when `note` (the caller skips those cases). */
#define CU_CONFORMANCE_MAX (1u << 20)

__attribute__((unused)) static int cu_conformance(void (*fn)(const char *name, const uint8_t *p, size_t n, void *ctx),
                                                  void *ctx, int note)
{
    const char *dir = getenv("TR_CONFORMANCE");
    if (dir == NULL)
        dir = "../shared/conformance/JSONTestSuite/test_parsing";
    DIR *d = opendir(dir);
    if (d == NULL) {
        if (note)
            fprintf(stderr, "note: %s not found, JSONTestSuite cases skipped\n", dir);
        return -1;
    }
    uint8_t *buf = malloc(CU_CONFORMANCE_MAX);
    REQUIRE(buf != NULL);
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if ((name[0] != 'y' && name[0] != 'n' && name[0] != 'i') || name[1] != '_')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "rb");
        REQUIREF(f != NULL, "cannot open %s", path);
        size_t n = fread(buf, 1, CU_CONFORMANCE_MAX, f);
        REQUIREF(feof(f), "%s is larger than %u bytes", path, CU_CONFORMANCE_MAX);
        fclose(f);
        fn(name, buf, n, ctx);
        seen++;
    }
    closedir(d);
    free(buf);
    return seen;
}

/* ---- completing a literal JSON object from a generated one ----
 * Tests spell some values of the demo's schema by hand (a detail of each
 * case). A schema that adds a field to such a record would leave the
 * literal incomplete. cu_complete writes the literal with every member of a
 * generated value of the same type added whose key the tests never spell
 * (`known` holds the keys they do, as "key": in any JSON text), recursively
 * through the members both have, and each element of a list from the
 * generated list's first. Both texts must be valid JSON; keys compare after
 * \u escapes of ASCII. Returns how many members it added (0: out holds the
 * literal as it was). */

typedef struct {
    char *p;
    size_t n, cap;
} cu_buf;

__attribute__((unused)) static void cu_put(cu_buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->n + n + 1 > cap)
            cap *= 2;
        b->p = realloc(b->p, cap);
        REQUIRE(b->p != NULL);
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

__attribute__((unused)) static const char *cu_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* One past the JSON value at p (valid JSON). */
__attribute__((unused)) static const char *cu_value_end(const char *p, const char *e)
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

/* A key's text (between its quotes) with \u escapes of ASCII and \" \\ \/
 * undone into out; false for any other escape (no match then). */
__attribute__((unused)) static bool cu_key(const char *k, size_t kn, char *out, size_t cap, size_t *on)
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

typedef struct {
    const char *k, *v, *vend; /* k: the key's text between its quotes */
    size_t kn;
} cu_member;

/* The members of the object at p (valid JSON), at most max. */
__attribute__((unused)) static size_t cu_members(const char *p, const char *e, cu_member *m, size_t max)
{
    size_t n = 0;
    p = cu_ws(p + 1, e);
    while (p < e && *p == '"' && n < max) {
        const char *ks = p + 1, *q = ks;
        while (*q != '"')
            q += *q == '\\' ? 2 : 1;
        m[n].k = ks;
        m[n].kn = (size_t)(q - ks);
        p = cu_ws(cu_ws(q + 1, e) + 1, e); /* past ':' */
        m[n].v = p;
        m[n].vend = cu_value_end(p, e);
        p = cu_ws(m[n].vend, e);
        n++;
        if (p < e && *p == ',')
            p = cu_ws(p + 1, e);
    }
    return n;
}

__attribute__((unused)) static bool cu_same_key(const cu_member *a, const cu_member *b)
{
    char x[128], y[128];
    size_t xn, yn;
    return cu_key(a->k, a->kn, x, sizeof x, &xn) && cu_key(b->k, b->kn, y, sizeof y, &yn) && xn == yn &&
           memcmp(x, y, xn) == 0;
}

__attribute__((unused)) static bool cu_known(const cu_member *m, const char *known)
{
    char k[128], pat[140];
    size_t kn;
    if (!cu_key(m->k, m->kn, k, sizeof k, &kn) || kn + 4 > sizeof pat)
        return true;
    snprintf(pat, sizeof pat, "\"%.*s\":", (int)kn, k);
    return strstr(known, pat) != NULL;
}

#define CU_MAX_MEMBERS 256

__attribute__((unused)) static size_t cu_merge(cu_buf *o, const char *l, const char *le, const char *t,
                                               const char *te, const char *known)
{
    size_t added = 0;
    if (*l == '{' && *t == '{') {
        cu_member *lm = malloc(2 * CU_MAX_MEMBERS * sizeof *lm), *tm = lm + CU_MAX_MEMBERS;
        REQUIRE(lm != NULL);
        size_t ln = cu_members(l, le, lm, CU_MAX_MEMBERS), tn = cu_members(t, te, tm, CU_MAX_MEMBERS);
        cu_put(o, "{", 1);
        for (size_t i = 0; i < ln; i++) {
            if (i)
                cu_put(o, ",", 1);
            cu_put(o, lm[i].k - 1, (size_t)(lm[i].v - (lm[i].k - 1)));
            size_t j = 0;
            while (j < tn && !cu_same_key(&lm[i], &tm[j]))
                j++;
            if (j < tn)
                added += cu_merge(o, lm[i].v, lm[i].vend, tm[j].v, tm[j].vend, known);
            else
                cu_put(o, lm[i].v, (size_t)(lm[i].vend - lm[i].v));
        }
        size_t put = ln;
        for (size_t j = 0; j < tn; j++) {
            size_t i = 0;
            while (i < ln && !cu_same_key(&lm[i], &tm[j]))
                i++;
            if (i < ln || cu_known(&tm[j], known))
                continue;
            if (put++)
                cu_put(o, ",", 1);
            cu_put(o, tm[j].k - 1, (size_t)(tm[j].vend - (tm[j].k - 1)));
            added++;
        }
        cu_put(o, "}", 1);
        free(lm);
    } else if (*l == '[' && *t == '[' && *cu_ws(t + 1, te) != ']') {
        const char *t0 = cu_ws(t + 1, te), *t0e = cu_value_end(t0, te);
        const char *p = cu_ws(l + 1, le);
        cu_put(o, "[", 1);
        for (int k = 0; p < le && *p != ']'; k++) {
            if (k)
                cu_put(o, ",", 1);
            const char *pe = cu_value_end(p, le);
            added += cu_merge(o, p, pe, t0, t0e, known);
            p = cu_ws(pe, le);
            if (*p == ',')
                p = cu_ws(p + 1, le);
        }
        cu_put(o, "]", 1);
    } else {
        cu_put(o, l, (size_t)(le - l));
    }
    return added;
}

/* The literal [lit, lit+ln) completed from tmpl into *out (reset first). */
__attribute__((unused)) static size_t cu_complete(cu_buf *out, const char *lit, size_t ln, const char *tmpl,
                                                  const char *known)
{
    out->n = 0;
    const char *l = cu_ws(lit, lit + ln), *le = cu_value_end(l, lit + ln);
    size_t added = cu_merge(out, l, le, tmpl, tmpl + strlen(tmpl), known);
    if (added == 0) {
        out->n = 0;
        cu_put(out, lit, ln);
    }
    return added;
}

#endif
