/* pipe.h: the filter's pipe. Bytes arrive in the read buffer (ringbuf.h); the
 * splitter cuts frames out of them in place (frames.h); one reader judges
 * each (optics: scan the detail's bytes; decode: the whole Issue; none: keep
 * everything, judge nothing); the tally counts them, and the judging
 * thread's CPU time per batch (not wall time: with three processes on two
 * cores the wall clock would count the others' turns); kept frames are
 * gathered (fw_sink, forward.h) and written with writev. No message is
 * copied or allocated: a kept frame goes out from where it was read.
 *
 * Two layers. pp_feed is the pipe over bytes already in memory, so the
 * benchmark runs exactly what the filter runs. pp_stream drives it between
 * two descriptors: it is the feed of the runtime's loop (fw_run,
 * forward.h). Threads: 1 by default; 2 adds a writer thread behind a
 * bounded queue, which overlaps judging with writes (small ones: the kept
 * frames go out with writev from where they were read).
 */
#ifndef TRIAGE_PIPE_H
#define TRIAGE_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#include "arena.h"
#include "forward.h"
#include "frames.h"
#include "gzip.h"
#include "policy.h"
#include "reader.h"
#include "ringbuf.h"
#include "tally.h"
#include "tr_model.h"
#include "verify.h"

#define PP_BATCH 256 /* frames split before a batch is judged (and timed) */

typedef struct pp_pipe pp_pipe;

struct pp_pipe {
    rd_type reader;
    po_policy policy;
    fr_splitter split;
    tl_tally tally;
    fw_sink sink;           /* the kept frames, gathered into iov */
    const rb_ring *ring;    /* if set: straddles are counted against it */
    uint64_t straddled;     /* frames that crossed the ring's end, read in place */
    /* --verify (optics only): a message failing vf_check is judged none.
     * The checker is the reader's, created with it. */
    vf_level verify;
    rd_reader *rd;          /* the reader (optics and decode) */
    /* --grpc-encoding gzip or deflate (pp_set_encoding): compressed frames
     * are inflated into gz's one reused buffer and the view judged; a kept
     * one is forwarded as it came. One that does not inflate is judged
     * none, dropped, counted in inflate_failed and reported once on warn
     * (if set) with its offset; the stream goes on. The relay inflates
     * nothing. GZ_IDENTITY: a compressed frame is a framing error. */
    gz_encoding enc;
    gz_inflater gz;
    FILE *warn;
    uint64_t inflated;         /* compressed messages inflated */
    uint64_t compressed_bytes; /* their bodies as they came */
    uint64_t inflated_bytes;   /* what they inflated to */
    uint64_t inflate_ns;       /* thread CPU time inflating them, apart from judging
                                  (each batch's split by the monotonic clock) */
    uint64_t inflate_failed;   /* compressed messages that did not inflate */
    tr_error inflate_err;      /* the last such failure (offset in its body) */
    size_t inflate_err_frame;  /* and the stream offset of its frame */
    struct iovec iov[FW_IOV];
    fr_frame batch[PP_BATCH];
    int kind[PP_BATCH];
    bool keep[PP_BATCH];
};

/* A pipe judging with reader against policy (copied). One allocation, plus
 * the decode arena for RD_DECODE; counted in tally.allocations. NULL with
 * err set when out of memory. */
pp_pipe *pp_new(rd_type reader, const po_policy *policy, char *err, size_t errlen);
void pp_free(pp_pipe *pp);

/* The optics' verify level (RD_OPTICS only; ignored by the other readers).
 * Creates the checker once (counted in tally.allocations); false when out
 * of memory. */
bool pp_set_verify(pp_pipe *pp, vf_level level) __attribute__((warn_unused_result));

/* Accept compressed frames in encoding e (grpc-encoding gzip or deflate;
 * identity changes nothing): the splitter allows flag 1, and the inflater
 * is created once (its allocations are counted). false when out of memory. */
bool pp_set_encoding(pp_pipe *pp, gz_encoding e) __attribute__((warn_unused_result));

typedef enum { PP_OK, PP_BAD_STREAM, PP_FLUSH_FAILED } pp_status;

/* Handles every whole frame in [p, end), which starts at stream offset off:
 * splits, judges, tallies, and gathers the kept ones into pp->sink, which
 * flushes when the gather is full. *used receives the bytes of the frames
 * handled (consume them once the gathered frames are written). PP_OK: the
 * rest of [p, end) is a valid prefix of a frame; PP_BAD_STREAM:
 * pp->split.err says what and where, and the frames before it are handled;
 * PP_FLUSH_FAILED: pp->sink.err. */
pp_status pp_feed(pp_pipe *pp, const uint8_t *p, const uint8_t *end, size_t off, size_t *used)
    __attribute__((warn_unused_result));

/* Filters in -> out until in ends or fails (fw_run, with this pipe as the
 * feed). The tally is in pp->tally. */
fw_outcome pp_stream(pp_pipe *pp, int in, int out, const fw_opts *o, fw_result *res);

#endif
