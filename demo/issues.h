/* issues.h: generated Issues as frames, for gen, upstream, tests and benches.
 *
 * An iss_gen owns its memory (one arena, one frame buffer, allocated at
 * creation); a returned frame is a view into it, valid until the next call. */
#ifndef TR_ISSUES_H
#define TR_ISSUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tr_model.h"

/* gRPC's default message limit, which our frames respect. */
#define ISS_MAX_MESSAGE (4u << 20)

typedef struct iss_gen iss_gen;

iss_gen *iss_gen_new(int size);
void iss_gen_free(iss_gen *g);

/* Issue i of the run seeded with seed (its own random stream). */
const tr_Issue *iss_gen_issue(iss_gen *g, uint64_t seed, uint64_t i);

/* The same issue encoded as one frame (5-byte header + JSON), detail moved to
 * the front when detail_first; NULL when it would exceed ISS_MAX_MESSAGE. */
const uint8_t *iss_gen_frame(iss_gen *g, uint64_t seed, uint64_t i, bool detail_first, size_t *n);

#endif
