/* issues.h: generated Issues as frames, for gen, upstream, tests and benches.
 *
 * An iss_gen owns its memory (one arena, one frame buffer, allocated at
 * creation); a returned frame is a view into it, valid until the next call. */
#ifndef TRIAGE_ISSUES_H
#define TRIAGE_ISSUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gzip.h"
#include "tr_optics.h"

/* gRPC's default message limit, which our frames respect. */
#define ISS_MAX_MESSAGE (4u << 20)

typedef struct iss_gen iss_gen;

iss_gen *iss_gen_new(int size);
void iss_gen_free(iss_gen *g);

/* Message i of the run seeded with seed (its own random stream): a root of
 * the schema (tr_schema's root type; a tr_Issue for the demo's). */
const void *iss_gen_issue(iss_gen *g, uint64_t seed, uint64_t i);

/* The same message encoded as one frame (5-byte header + JSON), the kind's
 * member (detail, in the demo's schema: tr_schema.first_field) moved to the
 * front when detail_first; NULL when it would exceed ISS_MAX_MESSAGE.
 * When iss_compressed(seed, i, ratio) for the ratio set by iss_gen_compress,
 * the JSON is compressed in its encoding and the frame's flag is 1. */
const uint8_t *iss_gen_frame(iss_gen *g, uint64_t seed, uint64_t i, bool detail_first, size_t *n);

/* From now on compress a share ratio in [0, 1] of the frames (0: none, the
 * default; 1: all) with e (gzip or deflate; identity compresses none).
 * false: out of memory (g is unchanged). */
bool iss_gen_compress(iss_gen *g, gz_encoding e, double ratio) __attribute__((warn_unused_result));

/* Whether message i of the run seeded with seed is compressed at this ratio:
 * a draw from its own random stream, so any message can be regenerated
 * alone, and the choice does not change the issue's bytes. */
bool iss_compressed(uint64_t seed, uint64_t i, double ratio);

#endif
