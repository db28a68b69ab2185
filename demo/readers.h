/* readers.h: the policy's capabilities (policy.h) over the two readers.
 *
 * The model reader answers from a decoded Detail through the generated model
 * optics (tr_get_*). The optics reader (added with the scanners) answers from
 * a detail's bytes. Both hand the policy the same thing: case indexes. */
#ifndef TR_READERS_H
#define TR_READERS_H

#include "policy.h"
#include "tr_optics.h"

/* The arena a full decode of one message needs at most: lists of small
 * values become arrays of 8- or 16-byte items (a 4 MiB message of empty
 * strings needs about 22 MiB, test_verify shows), so 16 x the 4 MiB frame
 * limit; pages never touched cost nothing. */
#define RD_DECODE_ARENA (64u << 20)

/* The enum name tables the policy resolves its names against. */
po_schema rd_schema(void);

/* A reader over a decoded detail; valid while d is. */
po_reader rd_model(const tr_Detail *d);

/* A reader over a detail's bytes, through the scanners. The state holds the
 * view and a small arena for the one record focus (votes); it lives with
 * the caller (on its stack, say), so nothing is allocated per message. */
typedef struct {
    tr_view_Detail detail;
    ar_arena arena;
    uint64_t mem[64];
} rd_bytes;

po_reader rd_optics(rd_bytes *st, tr_view_Detail detail);

#endif
