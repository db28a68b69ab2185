/* rng.c: deterministic leaves for the generated random generators. */
#include "rng.h"

#include <string.h>

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void rg_seed(rg_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ull) ^ 0x5851f42d4c957f2dull;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rg_next(rg_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t rg_below(rg_rng *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = rg_next(r);
    while (x >= limit);
    return x % n;
}

int64_t rg_range(rg_rng *r, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    if (span == UINT64_MAX)
        return (int64_t)rg_next(r);
    return (int64_t)((uint64_t)lo + rg_below(r, span + 1));
}

int64_t rg_i64(rg_rng *r) { return (int64_t)(rg_next(r) >> 23); }
int32_t rg_i32(rg_rng *r) { return (int32_t)rg_below(r, 10000); }
bool rg_bool(rg_rng *r) { return rg_next(r) >> 63; }
bool rg_present(rg_rng *r) { return rg_next(r) >> 63; }
int rg_choice(rg_rng *r, int n) { return (int)rg_below(r, (uint64_t)n); }
size_t rg_count(rg_rng *r, int size) { return size <= 0 ? 0 : (size_t)rg_below(r, (uint64_t)size + 1); }

double rg_f64(rg_rng *r)
{
    /* Half are prices and hours with two decimals, half use every bit: both
     * shapes occur in real data and exercise different number paths. */
    if (rg_bool(r))
        return (double)rg_below(r, 100000000) / 100.0;
    return (double)(rg_next(r) >> 11) * (1.0 / 9007199254740992.0) * 1e6;
}

static const char *const words[] = {
    "alpha",   "bravo",   "charlie", "delta",   "echo",    "foxtrot", "golf",    "hotel",
    "india",   "juliet",  "kilo",    "lima",    "mike",    "november", "oscar",  "papa",
    "quebec",  "romeo",   "sierra",  "tango",   "uniform", "victor",  "whiskey", "xray",
    "yankee",  "zulu",    "server",  "client",  "request", "timeout", "cache",   "queue",
    "deploy",  "rollback", "login",  "invoice", "payment", "search",  "index",   "shard",
    "replica", "latency", "error",   "retry",   "socket",  "buffer",  "thread",  "kernel",
    "billing", "storage", "network", "scheduler", "token", "session", "cluster", "node",
    "metrics", "alert",   "ticket",  "release", "branch",  "commit",  "review",  "merge",
};
#define NWORDS (sizeof words / sizeof words[0])

/* Things a writer must escape, or that are not ASCII. */
static const char *const specials[] = {
    "\"quoted\"", "back\\slash", "line\nbreak", "tab\there", "bell\x07", "nul\x01",
    "caf\xc3\xa9",          /* é: 2 bytes */
    "\342\202\25442",       /* €42: a 3-byte character, then digits */
    "\xf0\x9f\x9a\x80",     /* U+1F680: 4 bytes, a surrogate pair as \u */
    "\xe6\x97\xa5\xe6\x9c\xac", /* 日本 */
};
#define NSPECIALS (sizeof specials / sizeof specials[0])

js_str rg_string(rg_rng *r, ar_arena *a)
{
    char buf[160];
    size_t n = 0;
    int nwords = 1 + (int)rg_below(r, 7);
    int special = rg_below(r, 20) == 0 ? (int)rg_below(r, (uint64_t)nwords + 1) : -1;
    for (int i = 0; i <= nwords; i++) {
        const char *w = NULL;
        if (i == special)
            w = specials[rg_below(r, NSPECIALS)];
        else if (i < nwords)
            w = words[rg_below(r, NWORDS)];
        if (w == NULL)
            continue;
        size_t len = strlen(w);
        if (n > 0)
            buf[n++] = ' ';
        memcpy(buf + n, w, len);
        n += len;
    }
    char *dst = ar_alloc(a, n);
    if (dst == NULL)
        return (js_str){"", 0};
    memcpy(dst, buf, n);
    return (js_str){dst, n};
}

js_str rg_map_key(rg_rng *r, ar_arena *a, size_t i)
{
    const char *w = words[rg_below(r, NWORDS)];
    size_t len = strlen(w);
    char *dst = ar_alloc(a, len + 21);
    if (dst == NULL)
        return (js_str){"", 0};
    memcpy(dst, w, len);
    dst[len++] = '-';
    char digits[20];
    size_t nd = 0;
    do {
        digits[nd++] = (char)('0' + i % 10);
        i /= 10;
    } while (i > 0);
    while (nd > 0)
        dst[len++] = digits[--nd];
    return (js_str){dst, len};
}
