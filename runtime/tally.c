/* tally.c: counting, the frame digest (XXH64, folded), and the report. */
#include "tally.h"

#include <string.h>

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static inline uint64_t rotl(uint64_t x, int r) { return x << r | x >> (64 - r); }

/* Little-endian loads at any alignment (memcpy compiles to one load). */
static inline uint64_t le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint32_t le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

static inline uint64_t round64(uint64_t acc, uint64_t in)
{
    acc += in * P2;
    acc = rotl(acc, 31);
    return acc * P1;
}

static inline uint64_t merge64(uint64_t acc, uint64_t v)
{
    acc ^= round64(0, v);
    return acc * P1 + P4;
}

uint64_t tl_xxh64(const void *data, size_t n, uint64_t seed)
{
    const uint8_t *p = data, *end = p + n;
    uint64_t h;
    if (n >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        const uint8_t *limit = end - 32;
        do {
            v1 = round64(v1, le64(p));
            v2 = round64(v2, le64(p + 8));
            v3 = round64(v3, le64(p + 16));
            v4 = round64(v4, le64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        h = merge64(h, v1);
        h = merge64(h, v2);
        h = merge64(h, v3);
        h = merge64(h, v4);
    } else {
        h = seed + P5;
    }
    h += (uint64_t)n;
    while (end - p >= 8) {
        h ^= round64(0, le64(p));
        h = rotl(h, 27) * P1 + P4;
        p += 8;
    }
    if (end - p >= 4) {
        h ^= (uint64_t)le32(p) * P1;
        h = rotl(h, 23) * P2 + P3;
        p += 4;
    }
    while (p < end) {
        h ^= (uint64_t)*p * P5;
        h = rotl(h, 11) * P1;
        p++;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

void tl_digest_init(tl_digest *d)
{
    d->h = P5;
    d->frames = 0;
    d->bytes = 0;
}

void tl_digest_add(tl_digest *d, const uint8_t *frame, size_t n)
{
    /* XXH64's own step for an 8-byte lane: order-sensitive. */
    d->h ^= round64(0, tl_xxh64(frame, n, 0));
    d->h = rotl(d->h, 27) * P1 + P4;
    d->frames++;
    d->bytes += n;
}

void tl_init(tl_tally *t, int kinds, const char *const *names)
{
    memset(t, 0, sizeof *t);
    if (kinds < 0)
        kinds = 0;
    if (kinds > TL_MAX_KINDS)
        kinds = TL_MAX_KINDS;
    t->kinds = kinds;
    for (int k = 0; k < kinds; k++)
        t->names[k] = names[k];
    tl_digest_init(&t->forwarded);
}

uint64_t tl_kept(const tl_tally *t)
{
    uint64_t n = 0;
    for (int k = 0; k <= t->kinds; k++)
        n += t->kept[k];
    return n;
}

bool tl_same_rows(const tl_tally *a, const tl_tally *b)
{
    if (a->kinds != b->kinds)
        return false;
    for (int k = 0; k <= a->kinds; k++) {
        if (a->seen[k] != b->seen[k] || a->kept[k] != b->kept[k])
            return false;
        if (k < a->kinds && strcmp(a->names[k], b->names[k]) != 0)
            return false;
    }
    return true;
}

static const char *row_name(const tl_tally *t, int k)
{
    return k < t->kinds ? t->names[k] : "none";
}

int tl_kind_width(const char *const *names, int n, int pad)
{
    size_t w = 10;
    for (int k = 0; k < n; k++)
        if (strlen(names[k]) + (size_t)pad > w)
            w = strlen(names[k]) + (size_t)pad;
    return w < 64 ? (int)w : 64;
}

static double per_s(double x, double seconds) { return seconds > 0 ? x / seconds : 0; }

static double judge_us(const tl_tally *t)
{
    return t->judged > 0 ? (double)t->judge_ns / (double)t->judged / 1e3 : 0;
}

void tl_print(FILE *f, const char *label, const tl_tally *t, double seconds)
{
    double mb = (double)t->bytes / 1e6;
    double rate = per_s((double)t->messages, seconds);
    fprintf(f, "%s: %llu messages, %.1f MB in %.2f s:\n", label,
            (unsigned long long)t->messages, mb, seconds);
    if (rate >= 1e4)
        fprintf(f, "  %.0f k messages/s, %.0f MB/s\n", rate / 1e3, per_s(mb, seconds));
    else
        fprintf(f, "  %.0f messages/s, %.0f MB/s\n", rate, per_s(mb, seconds));
    fprintf(f, "  judging them took %.1f µs per message; the rest is sockets and framing\n",
            judge_us(t));
    int w = tl_kind_width(t->names, t->kinds, 2);
    fprintf(f, "  %-*s%10s%10s\n", w, "kind", "seen", "kept");
    for (int k = 0; k <= t->kinds; k++)
        fprintf(f, "  %-*s%10llu%10llu\n", w, row_name(t, k), (unsigned long long)t->seen[k],
                (unsigned long long)t->kept[k]);
}

void tl_print_json(FILE *f, const tl_tally *t, double seconds)
{
    double mb = (double)t->bytes / 1e6;
    fprintf(f,
            "\"messages\":%llu,\"bytes\":%llu,\"seconds\":%.3f,\"msgs_per_s\":%.0f,"
            "\"mb_per_s\":%.1f,\"judge_ns_per_msg\":%.0f,\"kinds\":{",
            (unsigned long long)t->messages, (unsigned long long)t->bytes, seconds,
            per_s((double)t->messages, seconds), per_s(mb, seconds), judge_us(t) * 1e3);
    for (int k = 0; k <= t->kinds; k++)
        fprintf(f, "%s\"%s\":{\"seen\":%llu,\"kept\":%llu}", k > 0 ? "," : "", row_name(t, k),
                (unsigned long long)t->seen[k], (unsigned long long)t->kept[k]);
    fprintf(f,
            "},\"kept\":%llu,\"kept_bytes\":%llu,\"digest\":\"%016llx\",\"bytes_copied\":%llu,"
            "\"allocations\":%llu,\"judged\":%llu,\"judge_ns\":%llu",
            (unsigned long long)tl_kept(t), (unsigned long long)t->forwarded.bytes,
            (unsigned long long)t->forwarded.h, (unsigned long long)t->bytes_copied,
            (unsigned long long)t->allocations, (unsigned long long)t->judged,
            (unsigned long long)t->judge_ns);
}
