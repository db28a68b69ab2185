/* flood.h: Issues whose `tags` map is built to flood a hash table.
 *
 * ob_dup_key (runtime/object.c) used to hash a map's keys with unseeded
 * FNV-1a, masked to the table's low bits, and to probe linearly: keys that
 * agree in their hash's low bits then cost a probe for every earlier one,
 * quadratic time (11-12 s for 65 536 of them). That old hash lives here, and
 * only here, to build such keys: fl_message(..., true, ...) writes an Issue
 * whose map keys all share the low FL_BITS bits of their old FNV-1a hash
 * (so they also collide in every smaller power-of-two table, which covers
 * the old table size, 2n rounded up, for n up to 65 536), and
 * fl_message(..., false, ...) the same Issue with keys of the same length
 * and form whose last bytes are random. With the keyed hash both cost the
 * same; the reliability suite checks it, and the bench can time both.
 *
 * Header only (static functions), for tests/unit/test_reliability.c and
 * bench/triage.c. Needs the generated model and issues.h.
 */
#ifndef TRIAGE_FLOOD_H
#define TRIAGE_FLOOD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "issues.h"
#include "tr_model.h"

#define FL_BITS 17          /* the old table for 65 536 keys had 2^17 slots */
#define FL_PREFIX 9         /* 'k' and 8 characters of a counter */
#define FL_SUFFIX 3         /* chosen to land on the target hash */
#define FL_KEY (FL_PREFIX + FL_SUFFIX)

/* The old hash: FNV-1a, 64 bits, no seed. */
static inline uint64_t fl_old_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

static const char fl_alphabet[65] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

/* Writes n keys of FL_KEY bytes each, back to back, into keys (n * FL_KEY
 * bytes). colliding: all share the low FL_BITS bits of fl_old_hash. The
 * prefixes count up, so the keys are distinct. false when out of memory. */
static bool fl_keys(char *keys, size_t n, bool colliding, uint64_t seed)
{
    const uint64_t mask = (1ull << FL_BITS) - 1, prime = 0x100000001b3ull;
    /* For each state before the suffix, a suffix that takes it to the
     * target: run FNV-1a backwards from the target over every suffix
     * (a step h' = (h ^ b) * P is undone by h = (h' * P^-1) ^ b). */
    uint32_t *table = NULL;
    const uint64_t target = 0x5a5a5 & mask;
    if (colliding) {
        uint64_t inv = prime; /* Newton: inv = P^-1 mod 2^64 */
        for (int i = 0; i < 6; i++)
            inv *= 2 - prime * inv;
        table = calloc(mask + 1, sizeof *table);
        if (table == NULL)
            return false;
        for (uint32_t s = 0; s < 64u * 64u * 64u; s++) {
            const char suf[FL_SUFFIX] = {fl_alphabet[s >> 12], fl_alphabet[(s >> 6) & 63],
                                         fl_alphabet[s & 63]};
            uint64_t h = target;
            for (int i = FL_SUFFIX - 1; i >= 0; i--)
                h = ((h * inv) ^ (uint8_t)suf[i]) & mask;
            table[h] = s + 1;
        }
    }
    uint64_t rnd = seed * 0x9e3779b97f4a7c15ull + 1;
    size_t made = 0;
    for (uint64_t c = 0; made < n; c++) {
        char *k = keys + made * FL_KEY;
        k[0] = 'k';
        for (int i = 0; i < FL_PREFIX - 1; i++)
            k[1 + i] = fl_alphabet[(c >> (6 * (FL_PREFIX - 2 - i))) & 63];
        uint32_t s;
        if (colliding) {
            s = table[fl_old_hash(k, FL_PREFIX) & mask];
            if (s == 0)
                continue; /* no suffix reaches the target from here */
            s--;
        } else {
            rnd ^= rnd << 13; /* xorshift64 */
            rnd ^= rnd >> 7;
            rnd ^= rnd << 17;
            s = (uint32_t)(rnd >> 40) & 0x3ffff;
        }
        k[FL_PREFIX] = fl_alphabet[s >> 12];
        k[FL_PREFIX + 1] = fl_alphabet[(s >> 6) & 63];
        k[FL_PREFIX + 2] = fl_alphabet[s & 63];
        made++;
    }
    free(table);
    return true;
}

/* A frame (FR_HEADER_LEN bytes of header, then the JSON) holding generated Issue (seed, 0) of
 * size 3 whose tags map has n entries with the keys of fl_keys and the value
 * "v". Returns a malloc'd frame (*len bytes), NULL when out of memory or
 * over the frame limit. */
static uint8_t *fl_message(size_t n, bool colliding, uint64_t seed, size_t *len)
{
    iss_gen *g = iss_gen_new(3);
    char *keys = malloc(n * FL_KEY + 1);
    tr_entry_string *items = malloc((n + 1) * sizeof *items);
    uint8_t *frame = malloc(FR_HEADER_LEN + (size_t)ISS_MAX_MESSAGE);
    uint8_t *out = NULL;
    if (g != NULL && keys != NULL && items != NULL && frame != NULL &&
        fl_keys(keys, n, colliding, seed)) {
        tr_Issue is = *(const tr_Issue *)iss_gen_issue(g, seed, 0);
        for (size_t i = 0; i < n; i++) {
            items[i].key = (js_str){keys + i * FL_KEY, FL_KEY};
            items[i].value = (js_str){"v", 1};
        }
        is.tags.items = items;
        is.tags.count = n;
        uint8_t *msg = frame + FR_HEADER_LEN;
        uint8_t *w = tr_encode_Issue(msg, msg + ISS_MAX_MESSAGE, &is);
        if (w != NULL) {
            size_t m = (size_t)(w - msg);
            fr_put_header(frame, false, (uint32_t)m);
            *len = FR_HEADER_LEN + m;
            out = frame;
            frame = NULL;
        }
    }
    iss_gen_free(g);
    free(keys);
    free(items);
    free(frame);
    return out;
}

#endif
