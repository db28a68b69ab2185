/* pipe.h: the filter's pipe. Bytes arrive in the read buffer (ringbuf.h); the
 * splitter cuts frames out of them in place (frames.h); one reader judges
 * each (optics: scan the detail's bytes; decode: the whole Issue; none: keep
 * everything, judge nothing); the tally counts them, and the judging
 * thread's CPU time per batch (not wall time: with three processes on two
 * cores the wall clock would count the others' turns); kept frames are
 * gathered (fr_gather) and written with writev. No message is copied or
 * allocated: a kept frame goes out from where it was read.
 *
 * Two layers. pp_feed is the pipe over bytes already in memory, so the
 * benchmark runs exactly what the filter runs. pp_stream drives it between
 * two descriptors.
 *
 * Threads (pp_stream_opts.threads): 1, the default, reads, judges and
 * writes in one thread with blocking sockets. A full downstream blocks the
 * write, which stops the reads: backpressure without a queue, and buffering
 * is bounded by the ring (16 MiB) and the kernel's socket buffers, which
 * already overlap the steps (the upstream keeps sending into its socket
 * buffer while we judge; the downstream drains its buffer while we read).
 * 2 hands the gathered iovecs to a writer thread through a bounded queue of
 * PP_SLOTS batches; the ring is shared by protocol: only the reading thread
 * touches the rb_ring, and it consumes bytes only after the writer has
 * released them. It needs the mirrored ring (the flat one moves unread
 * bytes under the writer), so with a flat ring it runs as 1. Measured with
 * `run 200000 --threads 1|2` on 2 cores, where the three processes already
 * keep both cores busy: 2 was no faster for optics or the relay and a few
 * percent slower in the median; it only overlaps decode's judging with its
 * writes, which are small. So 1: fewer moving parts for the same figures.
 *
 * The downstream peer never sends: end of input or an error on the
 * downstream socket means it went away, and pp_stream says so at once
 * rather than when it next writes.
 */
#ifndef TR_PIPE_H
#define TR_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#include "arena.h"
#include "frames.h"
#include "gzip.h"
#include "net.h"
#include "policy.h"
#include "reader.h"
#include "ringbuf.h"
#include "tally.h"
#include "tr_model.h"
#include "verify.h"

#define PP_BATCH 256 /* frames split before a batch is judged (and timed) */
#define PP_IOV 1024  /* iovecs gathered before a write must go out */
#define PP_SLOTS 4   /* batches queued for the writer thread */

typedef struct pp_pipe pp_pipe;

/* Writes the gathered frames (and resets the gather); 0, or -1 with the
 * reason in the pipe's err. */
typedef int (*pp_flush_fn)(pp_pipe *pp, void *ctx);

struct pp_pipe {
    rd_type reader;
    po_policy policy;
    fr_splitter split;
    tl_tally tally;
    fr_gather gather;
    pp_flush_fn flush; /* NULL: gathered frames are dropped when full */
    void *flush_ctx;
    const rb_ring *ring;    /* if set: straddles are counted against it */
    uint64_t straddled;     /* frames that crossed the ring's end, read in place */
    char err[NET_ERR_LEN];  /* a flush failure */
    /* --verify (optics only): a message failing vf_check is judged none.
     * The checker is the reader's, created with it. */
    vf_level verify;
    rd_reader *rd;          /* the reader (optics and decode) */
    /* --grpc-encoding gzip (pp_set_gzip): compressed frames are inflated
     * into gz's one reused buffer and the view judged; a kept one is
     * forwarded as it came. One that does not inflate is judged none,
     * dropped, counted in inflate_failed and reported once on warn (if
     * set) with its offset; the stream goes on. The relay inflates
     * nothing. */
    bool gzip;
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
    struct iovec iov[PP_IOV];
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

/* Accept compressed frames as gzip (grpc-encoding gzip): the splitter
 * allows flag 1, and the inflater is created once (its allocations are
 * counted). false when out of memory. */
bool pp_set_gzip(pp_pipe *pp) __attribute__((warn_unused_result));

typedef enum { PP_OK, PP_BAD_STREAM, PP_FLUSH_FAILED } pp_status;

/* Handles every whole frame in [p, end), which starts at stream offset off:
 * splits, judges, tallies, and gathers the kept ones, calling flush when the
 * gather is full. *used receives the bytes of the frames handled (consume
 * them once the gathered frames are written). PP_OK: the rest of [p, end) is
 * a valid prefix of a frame; PP_BAD_STREAM: pp->split.err says what and
 * where, and the frames before it are handled; PP_FLUSH_FAILED: pp->err. */
pp_status pp_feed(pp_pipe *pp, const uint8_t *p, const uint8_t *end, size_t off, size_t *used)
    __attribute__((warn_unused_result));

typedef struct {
    size_t ring_cap;   /* 0: RB_DEFAULT_CAP */
    rb_mode ring_mode; /* RB_AUTO */
    int threads;       /* 1 or 2 (see above) */
    int linger_ms;     /* after the last write, wait this long for the
                          downstream to close its end (it has read
                          everything); 0: do not wait */
    /* Called about every 200 ms with the tally so far, if set. */
    void (*progress)(void *ctx, const tl_tally *t);
    void *progress_ctx;
} pp_stream_opts;

typedef enum {
    PP_DONE,          /* the input ended between frames; all written */
    PP_UPSTREAM_BAD,  /* a framing error: res->err (code, stream offset) */
    PP_UPSTREAM_IO,   /* reading failed: res->msg, at stream offset res->err.offset */
    PP_DOWNSTREAM_IO, /* writing failed or the downstream went away: res->msg */
    PP_SETUP,         /* no ring, no thread: res->msg */
} pp_outcome;

typedef struct {
    pp_outcome outcome;
    tr_error err;
    char msg[NET_ERR_LEN + 64];
    double seconds;  /* from the call to the end of the linger */
    bool mirrored;   /* the ring was mirrored */
    int threads;     /* threads used */
    uint64_t reads;  /* reads that returned bytes */
    uint64_t writes; /* gather writes (each net_writev_all of a batch) */
} pp_result;

/* Filters in -> out until in ends or fails. In every outcome but
 * PP_DOWNSTREAM_IO, every whole kept frame before the end (or the error) has
 * been written and out is shut down for writing. Does not close in or out.
 * The tally is in pp->tally. */
pp_outcome pp_stream(pp_pipe *pp, int in, int out, const pp_stream_opts *o, pp_result *res);

/* The outcome as one line for a person ("input ends inside a frame
 * (FRAME_TRUNCATED) at byte 1234", ...), into buf. */
const char *pp_describe(const pp_result *res, char *buf, size_t n);

/* Nanoseconds on the monotonic clock. */
uint64_t pp_now_ns(void);

#endif
