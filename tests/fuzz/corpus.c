/* corpus.c: writes the fuzzers' seed corpora (build/fuzz/seeds at fuzz time;
 * nothing here is committed but the code).
 *
 *   triage-demo gen ... | mkcorpus OUTDIR
 *
 * reads the generator's frames from stdin and writes one file per seed into
 *   OUTDIR/message  each message body, plus handmade docs/security.md cases built
 *                   on the first message (duplicates in both orders and at
 *                   both ends, escaped keys and values, junk outside the
 *                   judged path, trailing bytes, BOM, NUL, invalid UTF-8,
 *                   odd numbers, a depth bomb, truncations)
 *   OUTDIR/detail   each message's detail bytes, and handmade details
 *   OUTDIR/split    runs of frames, with fz_split's two option bytes in front
 *   OUTDIR/policy   policy files: docs/model.md's, variants, and broken ones
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frames.h"
#include "support/demo/details.h"
#include "tr_optics.h"

static const char *outdir;
static unsigned counter;

static void die(const char *what)
{
    fprintf(stderr, "mkcorpus: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void put(const char *sub, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", outdir, sub);
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        die(path);
    if (name != NULL)
        snprintf(path, sizeof path, "%s/%s/%s", outdir, sub, name);
    else
        snprintf(path, sizeof path, "%s/%s/gen-%05u", outdir, sub, counter++);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0)
        die(path);
}

/* ---- a growable byte string */

typedef struct {
    char *p;
    size_t n, cap;
} str;

static void sput(str *s, const void *p, size_t n)
{
    if (s->n + n + 1 > s->cap) {
        s->cap = (s->n + n + 1) * 2;
        s->p = realloc(s->p, s->cap);
        if (s->p == NULL)
            die("realloc");
    }
    memcpy(s->p + s->n, p, n);
    s->n += n;
    s->p[s->n] = 0;
}

static void sputs(str *s, const char *z) { sput(s, z, strlen(z)); }

/* base with [at, at+cut) replaced by ins */
static str splice(const char *base, size_t bn, size_t at, size_t cut, const char *ins, size_t in)
{
    str s = {0};
    sput(&s, base, at);
    sput(&s, ins, in);
    sput(&s, base + at + cut, bn - at - cut);
    return s;
}

static void put_str(const char *sub, const char *name, str s)
{
    put(sub, name, s.p, s.n);
    free(s.p);
}

/* ---- handmade cases */

static const struct {
    const char *name, *text;
} details[] = {
    {"incident-keep", INCIDENT("Sev1", "Critical")},
    {"incident-drop", INCIDENT("Sev4", "Minor")},
    {"bug-keep", BUG("Payments")},
    {"bug-drop", BUG("Ui")},
    {"request-keep", REQUEST("200", "Enterprise")},
    {"request-drop", REQUEST("3", "Free")},
    {"dup-type", "{\"type\":\"Bug\",\"type\":\"Incident\",\"severity\":\"Sev1\"}"},
    {"dup-leaf", "{\"type\":\"Incident\",\"severity\":\"Sev4\",\"severity\":\"Sev1\"}"},
    {"escaped-key", "{\"typ\\u0065\":\"Incident\",\"\\u0073everity\":\"Sev\\u0031\"}"},
    {"lone-surrogate", "{\"type\":\"Incident\",\"severity\":\"Sev1\\ud800\"}"},
    {"type-last", "{\"severity\":\"Sev2\",\"impact\":{\"service\":{\"tier\":\"Critical\"}},\"type\":\"Incident\"}"},
    {"votes-escaped", "{\"type\":\"Request\",\"votes\":{\"c\\u006funt\":130}}"},
    {"unknown-tag", "{\"type\":\"Outage\",\"severity\":\"Sev1\"}"},
    {"case-variant", "{\"Type\":\"Incident\",\"type\":\"Bug\"}"},
};

static void handmade(const uint8_t *m, size_t n)
{
    const char *b = (const char *)m;
    tr_view_Detail dv;
    if (!tr_scan_detail((tr_message){m, n}, &dv)) {
        fprintf(stderr, "mkcorpus: the first message has no detail\n");
        exit(1);
    }
    size_t d0 = (size_t)(dv.p - m), dn = dv.n;
    for (size_t i = 0; i < sizeof details / sizeof details[0]; i++) {
        put("detail", details[i].name, details[i].text, strlen(details[i].text));
        char name[128];
        snprintf(name, sizeof name, "with-%s", details[i].name);
        put_str("message", name, splice(b, n, d0, dn, details[i].text, strlen(details[i].text)));
    }
    const char *keep = INCIDENT("Sev1", "Critical"), *drop = INCIDENT("Sev4", "Minor");
    /* Duplicate detail: both orders, at both ends. */
    str s = {0};
    sputs(&s, ",\"detail\":");
    sputs(&s, keep);
    put_str("message", "dup-detail-late-keep-last", splice(b, n, n - 1, 0, s.p, s.n));
    str t = {0};
    sputs(&t, "\"detail\":");
    sputs(&t, keep);
    sputs(&t, ",");
    put_str("message", "dup-detail-early-keep-first", splice(b, n, 1, 0, t.p, t.n));
    free(s.p);
    free(t.p);
    str u = splice(b, n, d0, dn, drop, strlen(drop));
    s = (str){0};
    sputs(&s, "\"detail\":");
    sputs(&s, keep);
    sputs(&s, ",");
    put_str("message", "dup-detail-early-drop-later", splice(u.p, u.n, 1, 0, s.p, s.n));
    free(s.p);
    free(u.p);
    /* Escaped key for the detail itself, and its case variant. */
    const char *dk = strstr(b, "\"detail\":");
    if (dk != NULL) {
        size_t at = (size_t)(dk - b);
        put_str("message", "escaped-detail-key", splice(b, n, at, 9, "\"\\u0064etail\":", 14));
        put_str("message", "case-variant-detail", splice(b, n, at, 9, "\"Detail\":", 9));
    }
    /* Junk outside the judged path, at both ends. */
    put_str("message", "junk-first", splice(b, n, 1, 0, "\"junk\":[1,},", 12));
    put_str("message", "junk-last", splice(b, n, n - 1, 0, ",\"junk\":[1,}", 12));
    put_str("message", "comment", splice(b, n, n - 1, 0, "/*c*/", 5));
    put_str("message", "trailing-comma", splice(b, n, n - 1, 0, ",", 1));
    put_str("message", "trailing-object", splice(b, n, n, 0, " {}", 3));
    put_str("message", "trailing-x", splice(b, n, n, 0, "x", 1));
    put_str("message", "bom", splice(b, n, 0, 0, "\xEF\xBB\xBF", 3));
    put_str("message", "nul-in-value", splice(b, n, n - 1, 0, ",\"zz\":\"a\0b\"", 11));
    put_str("message", "utf8-in-key", splice(b, n, 1, 0, "\"\xff\":1,", 6));
    put_str("message", "utf8-overlong", splice(b, n, 1, 0, "\"zz\":\"\xc0\xaf\",", 10));
    put_str("message", "big-number", splice(b, n, 1, 0, "\"zz\":123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456,", 103));
    put_str("message", "nan", splice(b, n, 1, 0, "\"zz\":NaN,", 9));
    const char *rev = strstr(b, "\"revision\":");
    if (rev != NULL) {
        size_t at = (size_t)(rev - b) + 11, e = at;
        while (e < n && ((b[e] >= '0' && b[e] <= '9') || b[e] == '-'))
            e++;
        put_str("message", "int-exponent", splice(b, n, at, e - at, "1e0", 3));
        put_str("message", "int-minus-zero", splice(b, n, at, e - at, "-0", 2));
        put_str("message", "int-as-string", splice(b, n, at, e - at, "\"200\"", 5));
        put_str("message", "int-null", splice(b, n, at, e - at, "null", 4));
        put_str("message", "int-cut", splice(b, n, at + 1, n - at - 1, "", 0));
    }
    str bomb = {0};
    sputs(&bomb, "\"zz\":");
    for (int i = 0; i < 300; i++)
        sputs(&bomb, "[");
    for (int i = 0; i < 300; i++)
        sputs(&bomb, "]");
    sputs(&bomb, ",");
    put_str("message", "depth-300", splice(b, n, 1, 0, bomb.p, bomb.n));
    free(bomb.p);
    put_str("message", "truncated-half", splice(b, n, n / 2, n - n / 2, "", 0));
}

static const char *const policies[] = {
    ("{\"urgent\":[\"Sev1\",\"Sev2\"],\"tiers\":[\"Critical\"],\"modules\":[\"Payments\"],"
     "\"plans\":[\"Business\",\"Enterprise\"],\"minVotes\":130}"),
    "{}",
    " { \"minVotes\" : -5 } \n",
    "{\"urgent\":[],\"tiers\":[\"Critical\",\"Major\",\"Minor\"]}",
    "{\"modules\":[\"Auth\",\"Billing\",\"Search\",\"Storage\",\"Network\",\"Ui\",\"Payments\",\"Scheduler\"]}",
    "{\"urgent\":[\"Sev5\"]}",
    "{\"unknown\":1}",
    "{\"minVotes\":1.5}",
    "{\"minVotes\":\"130\"}",
    "{\"urgent\":[\"Sev1\"],\"urgent\":[\"Sev2\"]}",
    "[]",
    "{\"plans\":[\"Free\"]} x",
    "{\"urgent\":[\"Sev\\u0031\"]}",
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: triage-demo gen ... | mkcorpus OUTDIR\n");
        return 2;
    }
    outdir = argv[1];
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST)
        die(outdir);
    size_t cap = 1 << 20, n = 0;
    uint8_t *in = malloc(cap);
    if (in == NULL)
        die("malloc");
    for (size_t r; (r = fread(in + n, 1, cap - n, stdin)) > 0;) {
        n += r;
        if (n == cap && (in = realloc(in, cap *= 2)) == NULL)
            die("realloc");
    }
    fr_splitter sp;
    fr_init(&sp);
    size_t at = 0, count = 0, run_start = 0;
    fr_frame f;
    while (fr_next(&sp, in + at, in + n, at, &f) == FR_FRAME) {
        if (count == 0)
            handmade(f.msg.p, f.msg.n);
        put("message", NULL, f.msg.p, f.msg.n);
        tr_view_Detail dv;
        if (tr_scan_detail(f.msg, &dv))
            put("detail", NULL, dv.p, dv.n);
        at += fr_frame_size(&f);
        count++;
        /* Runs of up to three frames for the splitter, with its options in
         * front: 0 (defaults) or, every fourth run, a small length limit. */
        if (count % 3 == 0) {
            str s = {0};
            uint8_t opt[2] = {(uint8_t)(count % 12 == 0 ? 6 : 0), (uint8_t)count};
            sput(&s, opt, 2);
            sput(&s, in + run_start, at - run_start);
            put_str("split", NULL, s);
            run_start = at;
        }
    }
    if (sp.err.code != TR_E_OK || at != n || count == 0) {
        fprintf(stderr, "mkcorpus: stdin is not whole frames\n");
        return 1;
    }
    /* Handmade streams: a compressed frame allowed and refused, a bad flag,
     * an oversize header, a truncated frame. */
    static const uint8_t s1[] = {1, 0, 1, 0, 0, 0, 2, '{', '}'};
    static const uint8_t s2[] = {0, 0, 1, 0, 0, 0, 2, '{', '}'};
    static const uint8_t s3[] = {0, 0, 2, 0, 0, 0, 0};
    static const uint8_t s4[] = {0, 0, 0, 0x00, 0x40, 0x00, 0x01, '{'};
    static const uint8_t s5[] = {0, 0, 0, 0, 0, 0, 9, '{', '"'};
    put("split", "compressed-allowed", s1, sizeof s1);
    put("split", "compressed-refused", s2, sizeof s2);
    put("split", "bad-flag", s3, sizeof s3);
    put("split", "oversize", s4, sizeof s4);
    put("split", "truncated", s5, sizeof s5);
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "policy-%02zu", i);
        put("policy", name, policies[i], strlen(policies[i]));
    }
    free(in);
    fprintf(stderr, "mkcorpus: %zu messages into %s\n", count, outdir);
    return 0;
}
