/* tally.h: what a filter saw and kept, what judging cost, and a digest of
 * the frames it forwarded, and the report of them.
 *
 * Rows: one per kind (0 .. kinds-1, named by the caller), then the `none`
 * row for a message whose kind could not be read (or was not asked for: a
 * filter that judges nothing). Each row counts messages seen and kept.
 *
 * The digest names a sequence of frames: each frame is hashed whole with
 * XXH64 and the hashes are folded in order, so it does not depend on how the
 * bytes arrived (pieces, reads), only on which frames, in which order. Two
 * ends that saw the same frames in the same order have the same digest;
 * order matters. It is not a cryptographic hash. Frames rather than bytes,
 * so that each is hashed in one pass over contiguous memory (a frame is
 * contiguous in the read buffer) at memory speed; a byte-wise hash such as
 * FNV-1a would cost a filter that judges nothing more than its sockets do.
 *
 * Memory: everything is in the struct; nothing allocates. Not thread-safe.
 */
#ifndef TR_TALLY_H
#define TR_TALLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The most kinds a tally has rows for (the none row is extra); a union
 * with more cases counts the rest as none. */
#define TL_MAX_KINDS 256

/* XXH64 of n bytes (the reference algorithm, any alignment). */
uint64_t tl_xxh64(const void *p, size_t n, uint64_t seed);

typedef struct {
    uint64_t h;      /* the fold so far */
    uint64_t frames; /* frames folded in */
    uint64_t bytes;  /* their bytes, headers included */
} tl_digest;

void tl_digest_init(tl_digest *d);

/* Folds in one whole frame (header and body). */
void tl_digest_add(tl_digest *d, const uint8_t *frame, size_t n);

typedef struct {
    int kinds;                         /* rows 0 .. kinds-1, then none */
    const char *names[TL_MAX_KINDS];   /* static strings, the caller's */
    uint64_t seen[TL_MAX_KINDS + 1];
    uint64_t kept[TL_MAX_KINDS + 1];
    uint64_t messages, bytes;          /* every frame seen, headers included */
    uint64_t judged, judge_ns;         /* messages judged, time spent on them */
    uint64_t bytes_copied;             /* moved inside the read buffer */
    uint64_t allocations;              /* made by the pipe, setup included */
    tl_digest forwarded;               /* the kept frames, in order */
} tl_tally;

/* kinds rows named names[0 .. kinds-1]; kinds is clamped to TL_MAX_KINDS. */
void tl_init(tl_tally *t, int kinds, const char *const *names);

/* The width of a table's kind column holding the heading "kind", names[0 ..
 * n-1] and "none", each followed by pad spaces: at least 10, at most 64 (a
 * longer name overflows its column). */
int tl_kind_width(const char *const *names, int n, int pad);

/* One message of kind (-1 or out of range: the none row) and frame_bytes
 * bytes, kept or not. The digest is the caller's to feed (it has the
 * bytes). */
static inline void tl_count(tl_tally *t, int kind, bool keep, size_t frame_bytes)
{
    int row = kind >= 0 && kind < t->kinds ? kind : t->kinds;
    t->seen[row]++;
    t->kept[row] += keep;
    t->messages++;
    t->bytes += frame_bytes;
}

/* n messages judged in ns nanoseconds. */
static inline void tl_judge_time(tl_tally *t, uint64_t n, uint64_t ns)
{
    t->judged += n;
    t->judge_ns += ns;
}

/* Messages kept, over every row. */
uint64_t tl_kept(const tl_tally *t);

/* Same rows with the same names and counts. */
bool tl_same_rows(const tl_tally *a, const tl_tally *b);

/* The report, label first (what judged the messages):
 *
 *   optics: 200000 messages, 813.3 MB in 2.21 s:
 *     91 k messages/s, 368 MB/s
 *     judging them took 7.1 µs per message; the rest is sockets and framing
 *     kind            seen      kept
 *     Outage         66199      8205
 *     ...
 *     none               0         0
 *
 * MB are 10^6 bytes. seconds is the wall time of the whole stream. */
void tl_print(FILE *f, const char *label, const tl_tally *t, double seconds);

/* The same as JSON members, without braces, for the caller to wrap:
 *   "messages":N,"bytes":N,"seconds":S,"msgs_per_s":N,"mb_per_s":X,
 *   "judge_ns_per_msg":N,"kinds":{"Outage":{"seen":N,"kept":N},...,"none":{...}},
 *   "kept":N,"kept_bytes":N,"digest":"16 hex digits","bytes_copied":N,
 *   "allocations":N,"judged":N,"judge_ns":N */
void tl_print_json(FILE *f, const tl_tally *t, double seconds);

#endif
