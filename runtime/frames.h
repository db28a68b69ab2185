/* frames.h: split a byte stream into gRPC Length-Prefixed-Messages, and join
 * kept ones again for writev, without copying either way.
 *
 * A frame is 1 byte compressed-flag (0 or 1), a 4-byte big-endian length,
 * then that many bytes of message. A stream is frames back to back.
 *
 * Splitting is incremental, like picohttpparser: the caller hands fr_next the
 * bytes received and not yet consumed, [p, end), with the stream offset of p;
 * fr_next reads only those bytes and answers
 *   FR_FRAME      a whole frame starts at p: *out holds views into [p, end);
 *                 the caller consumes fr_frame_size(out) bytes and calls again;
 *   FR_NEED_MORE  the bytes so far are a valid prefix of a frame (or none);
 *                 call again with the same p once more bytes have arrived;
 *   FR_ERROR      the stream is bad; s->err holds the code and offset.
 * The splitter owns no memory and copies nothing: the views point into the
 * caller's buffer and are valid as long as those bytes are.
 *
 * What is validated, each as soon as the bytes that show it have arrived:
 * the flag byte (TR_E_FRAME_FLAG unless 0 or 1; TR_E_COMPRESSED for 1 unless
 * allow_compressed), and the length (TR_E_FRAME_SIZE over max_len, from the
 * 5 header bytes alone, before any of the body is buffered). At end of input,
 * fr_finish reports TR_E_FRAME_TRUNCATED if the stream stopped inside a frame.
 *
 * Error offsets are stream offsets of the byte where the problem shows:
 * the flag byte for FLAG and COMPRESSED, the first length byte (frame + 1)
 * for FRAME_SIZE, and the end of input (the first missing byte) for
 * FRAME_TRUNCATED. s->err_frame holds the offset of the frame's header in
 * every case. Errors are sticky: the first one wins and every later call
 * returns it again.
 *
 * Joining: kept frames are views into the read buffer whose header and body
 * are already adjacent, so they go to writev as they are. fr_gather_add
 * appends a frame to a caller-owned iovec array, extending the last iovec
 * when the frame starts where the previous one ended, so a run of kept
 * frames goes out as one piece.
 */
#ifndef TR_FRAMES_H
#define TR_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "error.h"
#include "view.h"

#define FR_HEADER_LEN 5u
/* gRPC's default maximum receive message size. */
#define FR_DEFAULT_MAX_LEN 4194304u

typedef enum {
    FR_ERROR = -1,
    FR_NEED_MORE = 0,
    FR_FRAME = 1,
} fr_status;

typedef struct {
    uint32_t max_len;      /* longest body accepted (FR_DEFAULT_MAX_LEN) */
    bool allow_compressed; /* an encoding was negotiated: flag 1 is fine */
    tr_error err;          /* the first error, or TR_E_OK */
    size_t err_frame;      /* stream offset of the frame the error is in */
} fr_splitter;

typedef struct {
    const uint8_t *head; /* the 5 header bytes; the body follows directly */
    tr_message msg;          /* the body: head + 5, length from the header */
    size_t offset;       /* stream offset of head */
    bool compressed;     /* the flag byte was 1 */
} fr_frame;

/* Defaults: max_len 4 MiB, compressed frames refused, no error. */
void fr_init(fr_splitter *s);

/* The next frame at p (see the contract above). off is the stream offset of
 * p. p may equal end (nothing received yet): FR_NEED_MORE. */
fr_status fr_next(fr_splitter *s, const uint8_t *p, const uint8_t *end,
                  size_t off, fr_frame *out)
    __attribute__((warn_unused_result));

/* End of input: [p, end) is what fr_next left unconsumed (it answered
 * FR_NEED_MORE for it), off its stream offset. Returns TR_E_OK when the
 * stream ended between frames, else records and returns
 * TR_E_FRAME_TRUNCATED (or the error already recorded). */
tr_code fr_finish(fr_splitter *s, const uint8_t *p, const uint8_t *end,
                  size_t off) __attribute__((warn_unused_result));

/* Writes a frame header for a body of len bytes. */
void fr_put_header(uint8_t out[FR_HEADER_LEN], bool compressed, uint32_t len);

/* The body length a frame header gives (its bytes 1-4, big-endian). */
static inline uint32_t fr_len(const uint8_t hdr[FR_HEADER_LEN])
{
    return (uint32_t)hdr[1] << 24 | (uint32_t)hdr[2] << 16 | (uint32_t)hdr[3] << 8 | hdr[4];
}

/* Header and body: the bytes to consume after FR_FRAME. */
static inline size_t fr_frame_size(const fr_frame *f)
{
    return FR_HEADER_LEN + f->msg.n;
}

/* One past the frame's last byte. */
static inline const uint8_t *fr_frame_end(const fr_frame *f)
{
    return f->msg.p + f->msg.n;
}

/* An iovec list for writev, built from kept frames; the array is the
 * caller's, and its entries point into the read buffer. */
typedef struct {
    struct iovec *iov;
    size_t cap;    /* entries in iov */
    size_t n;      /* entries in use */
    size_t frames; /* frames added */
    size_t bytes;  /* bytes covered by iov[0 .. n) */
} fr_gather;

void fr_gather_init(fr_gather *g, struct iovec *iov, size_t cap);

/* Forgets the frames added (after they were written). */
static inline void fr_gather_reset(fr_gather *g)
{
    g->n = 0;
    g->frames = 0;
    g->bytes = 0;
}

/* Adds f: extends the last iovec when f->head is where it ends, else takes a
 * new entry. Returns false, adding nothing, when a new entry is needed and
 * all cap are in use (write out what is there, reset, add again). */
bool fr_gather_add(fr_gather *g, const fr_frame *f)
    __attribute__((warn_unused_result));

/* Joins n frames into iov, which must have room for n entries (the most a
 * join can need). Returns the number of iovecs used: one per run of frames
 * where each starts where the one before it ends. */
size_t fr_join(const fr_frame *frames, size_t n, struct iovec *iov)
    __attribute__((warn_unused_result));

#endif
