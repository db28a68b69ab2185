/* forward.h: forwarding frames from one descriptor to another, the caller
 * choosing which. Bytes arrive in the read buffer (ringbuf.h); the caller's
 * feed cuts whole frames out of them in place and adds those to forward to
 * a sink (fw_sink_add), which gathers them (fr_gather); the loop writes them
 * with writev, then lets the buffer reuse their bytes. No frame is copied
 * or allocated: a forwarded frame goes out from where it was read.
 *
 * Threads (fw_opts.threads): 1 reads, feeds and writes in one thread with
 * blocking sockets. A full downstream blocks the write, which stops the
 * reads: backpressure without a queue, and buffering is bounded by the ring
 * (16 MiB) and the kernel's socket buffers, which already overlap the steps
 * (the upstream keeps sending into its socket buffer while the feed runs;
 * the downstream drains its buffer while we read). 2 hands the gathered
 * iovecs to a writer thread through a bounded queue of FW_SLOTS batches;
 * the ring is shared by protocol: only the reading thread touches the
 * rb_ring, and it consumes bytes only after the writer has released them.
 * It needs the mirrored ring (the flat one moves unread bytes under the
 * writer), so with a flat ring it runs as 1.
 *
 * The downstream peer never sends: end of input or an error on the
 * downstream socket means it went away, and fw_run says so at once rather
 * than when it next writes.
 *
 * Memory: the loop allocates the ring, and with two threads the queue,
 * once per call (both counted in the feeder's tally.allocations); nothing
 * per frame.
 */
#ifndef TR_FORWARD_H
#define TR_FORWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "error.h"
#include "frames.h"
#include "net.h"
#include "ringbuf.h"
#include "tally.h"

#define FW_IOV 1024 /* iovecs gathered before a write must go out */
#define FW_SLOTS 4  /* batches queued for the writer thread */

typedef enum { FW_OK, FW_BAD_STREAM, FW_FLUSH_FAILED } fw_status;

/* Where a feed gathers the frames to forward. flush writes them and
 * empties the gather (0, or -1 with the reason in err); fw_run sets it
 * while it runs. Without one, a full gather is emptied unwritten (a feed
 * over bytes in memory, run alone). */
typedef struct fw_sink fw_sink;
struct fw_sink {
    fr_gather gather;
    int (*flush)(fw_sink *s, void *ctx);
    void *flush_ctx;
    char err[NET_ERR_LEN];
};

/* An empty sink gathering into iov[0 .. cap), without a flush. */
void fw_sink_init(fw_sink *s, struct iovec *iov, size_t cap);

/* Gathers f, flushing the gather first when it is full: FW_OK, or
 * FW_FLUSH_FAILED (s->err). */
fw_status fw_sink_add(fw_sink *s, const fr_frame *f) __attribute__((warn_unused_result));

/* What the loop drives: the caller's feed and the parts of it the loop
 * touches. */
typedef struct {
    void *ctx;
    /* Handles every whole frame in [p, end), which starts at stream offset
     * off, adding those to forward to sink. *used receives the bytes of the
     * frames handled (consumed once the gathered frames are written). FW_OK:
     * the rest of [p, end) is a valid prefix of a frame; FW_BAD_STREAM:
     * split->err says what and where, and the frames before it are handled;
     * FW_FLUSH_FAILED: sink->err. */
    fw_status (*feed)(void *ctx, const uint8_t *p, const uint8_t *end, size_t off, size_t *used);
    fw_sink *sink;
    /* The feed's splitter: its max_len is lowered so that a whole frame
     * fits the ring with room to read the next piece, and at the end of
     * input fr_finish checks that it ended between frames. */
    fr_splitter *split;
    /* The loop's allocations and the ring's bytes_copied are added to it;
     * progress is called with it. */
    tl_tally *tally;
    /* Points at the ring while the loop runs, NULL after it (for a feed
     * that counts frames straddling the ring's end). */
    const rb_ring **ring;
} fw_feeder;

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
} fw_opts;

typedef enum {
    FW_DONE,          /* the input ended between frames; all written */
    FW_UPSTREAM_BAD,  /* a framing error: res->err (code, stream offset) */
    FW_UPSTREAM_IO,   /* reading failed: res->msg, at stream offset res->err.offset */
    FW_DOWNSTREAM_IO, /* writing failed or the downstream went away: res->msg */
    FW_SETUP,         /* no ring, no thread: res->msg */
} fw_outcome;

typedef struct {
    fw_outcome outcome;
    tr_error err;
    char msg[NET_ERR_LEN + 64];
    double seconds;  /* from the call to the end of the linger */
    bool mirrored;   /* the ring was mirrored */
    int threads;     /* threads used */
    uint64_t reads;  /* reads that returned bytes */
    uint64_t writes; /* gather writes (each net_writev_all of a batch) */
} fw_result;

/* Forwards in -> out what the feed gathers until in ends or fails. In every
 * outcome but FW_DOWNSTREAM_IO, every whole frame gathered before the end
 * (or the error) has been written and out is shut down for writing. Does
 * not close in or out. */
fw_outcome fw_run(const fw_feeder *fe, int in, int out, const fw_opts *o, fw_result *res);

/* The outcome as one line for a person ("input ends inside a frame
 * (FRAME_TRUNCATED) at byte 1234", ...), into buf. */
const char *fw_describe(const fw_result *res, char *buf, size_t n);

#endif
