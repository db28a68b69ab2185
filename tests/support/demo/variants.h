/* variants.h: an Issue message re-written another way that carries the
 * same values, for the optics suites (through tree.h).
 *
 * Each variant keeps what the decoder reads and changes how it is written:
 * pretty-printed, members shuffled (the union tag not first, or last),
 * keys and values \u-escaped, unknown members inserted before and inside
 * the detail and along every optic's path (names sharing a prefix with
 * wanted keys, case variants, strings equal to key names, nested objects
 * and arrays holding the wanted keys, each with a decoy value a careless
 * reader would keep), optional fields as null and empty lists left out,
 * nasty strings (escaped quotes, backslashes, brackets, UTF-8, surrogate
 * pairs) in every free-text field, the detail first; and combinations.
 * Needs the demo's schema (its keys name the demo's optics). */
#ifndef TRIAGE_TEST_VARIANTS_H
#define TRIAGE_TEST_VARIANTS_H

#include <stddef.h>
#include <stdint.h>

#include "support/rng.h"
#include "support/tree.h"

enum {
    V_PRETTY,
    V_SHUFFLE,
    V_TYPE_LAST,
    V_ESC_KEYS,
    V_ESC_VALS,
    V_UNKNOWN,
    V_NULLS,
    V_FIRST,
    V_NASTY,
    V_ALL,
    V_ALL2,
    V_LIGHT, /* a few look-alikes only (a smaller message, for the quadratic tests) */
    V_COUNT
};
extern const char *const vr_names[V_COUNT];

/* Variant v of the message [m, m+n) (a compact encoding, which must
 * decode) into [out, out+cap); returns its length. The same (m, v, seed)
 * give the same bytes. */
size_t vr_make(const uint8_t *m, size_t n, int v, uint64_t seed, uint8_t *out, size_t cap);

/* A decoy value for the wanted key key (one a careless reader would keep). */
const char *vr_decoy_of(const char *key);

/* Moves the detail's tag in root: how 1 last, 2 anywhere but first (rng
 * draws where; NULL for 1). */
void vr_place_tag(tj *root, int how, rng_state *rng);

/* Moves root's detail first. */
void vr_detail_first(tj *root);

#endif
